//! The integration tests of `mechanism-runtime`, one binary
//! (`cargo test -p mechanism-runtime --test it`): one module per integrator family or
//! subsystem, the shared harness and test models in [`support`].

mod support;

mod discrete_gradient;
mod errors;
mod langevin;
mod linearization_sparse;
mod livens;
mod magnetized_body;
mod newmark;
mod nonholonomic_variational;
mod projection;
mod simulation;
mod simulation_events;
mod sparse_langevin;
mod sparse_projection;
mod sparse_spook;
mod sparse_stabilized;
mod sparse_zhang_skeel;
mod spook;
mod stabilized;
mod statistics;
mod zhang_skeel;

/// Counts the heap allocations of each thread, for the tests that a step does not allocate
/// (per thread, so that tests running in parallel do not disturb each other's counts).
#[global_allocator]
static GLOBAL: support::CountingAllocator = support::CountingAllocator;
