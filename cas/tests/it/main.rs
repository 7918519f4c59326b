//! The integration tests of `mechanism-cas`, one binary (`cargo test -p mechanism-cas --test it`):
//! one module per topic, shared generators in [`support`].

mod support;

mod diff;
mod emit;
mod functions;
mod simplify;
mod store;
