//! The integration tests of the compile pipeline, one test binary (`--test dsl`) with a module
//! per concern:
//!
//! - [`expand`]: expansions of small models, asserted by what they contain or the errors they
//!   give;
//! - [`snapshots`]: `insta` snapshots of the pretty-printed expansions of the library's models,
//!   so that a change to generated code shows up in review;
//! - [`robustness`]: property tests that the expansion never panics and always is Rust.
//!
//! The models they share (the unrolled chain, the library's family models) are in [`models`].

mod expand;
mod models;
mod robustness;
mod snapshots;
