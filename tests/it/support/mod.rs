//! The support module of the root package's tests: the shared harness
//! (`mechanism-test-support`, which also exports `ten_steps!`) and the water cluster's starting
//! clusters.
#![allow(dead_code)]

/// The `langevin_oscillator` example's sampling runs, which `langevin_examples` and `save_every`
/// run as the example does (from the examples' harness, `mechanism-examples`).
pub use mechanism_examples::sampling;
pub mod water_clusters;

pub use mechanism_test_support::*;
