//! The support module of the runtime's tests: the shared harness (`mechanism-test-support`)
//! and the test models of this package.
#![allow(dead_code)]

pub mod as_fixed;
pub mod spring;

pub use mechanism_test_support::*;
