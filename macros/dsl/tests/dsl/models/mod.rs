//! Model bodies shared by the tests: the unrolled chain, written out for any `n`, and the
//! library's model files read as data. They live in `mechanism-test-support`
//! (`bodies`, feature `dsl-models`), which `examples/chains.rs` uses too.

pub use mechanism_test_support::bodies::{chain, families};
