//! Reference mechanisms from the papers, written with [`mechanism!`](macro@crate::mechanism) and
//! shared by the examples, tests and benchmarks.

mod double_pendulum;
mod singular_mass_spring;
mod spring_pendulum;

pub use double_pendulum::DoublePendulum;
/// Kinon–Betsch–Livens §6.1: two masses, two nonlinear springs, redundant coordinates
/// `(x1, q2, x2)` and a mass matrix that is singular everywhere (eq. 38–41).
pub use singular_mass_spring::SingularMassSpring;
/// Kinon–Betsch–Livens §6.2: the nonlinear spring pendulum in spherical coordinates
/// `(r, θ, φ)`, with a configuration-dependent mass matrix and a cyclic azimuth (eq. 42–46).
pub use spring_pendulum::SpringPendulum;
