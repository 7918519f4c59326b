//! `mechanism!` bodies as token streams for the tests and the timing example of the compile
//! pipeline (`mechanism-dsl`), behind the feature `dsl-models`: the unrolled chain written out
//! for any `n`, and the library's family models read from their source file as data.

pub mod chain;
pub mod families;
