//! Model bodies shared by the tests: the unrolled chain, written out for any `n`, and the
//! library's model files read as data.

pub mod chain;
pub mod families;
