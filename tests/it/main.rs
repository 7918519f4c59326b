//! The integration tests of `mechanism`, one binary (`cargo test --test it`; the trybuild
//! cases are the package `ui-tests`): one module per subject, the shared harness and test models in
//! [`support`]. The modules that need an optional feature are compiled only with it.

mod support;

mod compiled_integrators;
mod cuell_models;
mod discrete_gradients;
#[cfg(feature = "ensembles")]
mod dna;
#[cfg(feature = "ensembles")]
mod ensemble;
mod families;
mod finite_differences;
mod generated_solves;
mod generated_vs_hand;
mod generated_vs_interpreter;
mod harness;
mod identification;
mod langevin_examples;
mod linearization;
mod livens_models;
mod multipliers;
mod no_alloc;
#[cfg(feature = "parquet")]
mod parquet;
#[cfg(feature = "pictures")]
mod pictures;
mod rigid_body;
mod rigid_clusters;
mod robot_arm;
mod rolling_sphere;
#[cfg(all(feature = "pictures", feature = "parquet"))]
mod save_every;
mod spook_models;
mod squeezer;
mod stability;
mod steady_motion;
mod step_jacobians;
mod step_robustness;
mod urdf;
mod warning_free;
mod water;
mod water_cutoff;

/// Counts the heap allocations of each thread, for the tests that a step does not allocate
/// (per thread, so that tests running in parallel do not disturb each other's counts).
#[global_allocator]
static GLOBAL: support::CountingAllocator = support::CountingAllocator;
