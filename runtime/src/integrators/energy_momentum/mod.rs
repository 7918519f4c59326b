//! Energy-momentum methods: the Livens principle with Gonzalez discrete gradients.
//!
//! [`Livens`] is the energy-consistent scheme of Kinon, Betsch and Livens (eq. 30): a
//! velocity–momentum formulation that never inverts the mass matrix, so it handles
//! configuration-dependent and singular mass matrices, with holonomic constraints enforced
//! exactly at every step.

mod livens;

pub use livens::{Livens, DEFAULT_MAX_ITERATIONS, DEFAULT_TOLERANCE};
