//! Hand-written reference models: the oracle that generated models are compared against, and
//! the hand-written steppers of the benchmarks; and the [`fit`] that turns a table of errors
//! into an observed order.
//!
//! Every derivative here is derived on paper and written out plainly, so that a bug in the
//! symbolic pipeline cannot hide in both sides of a comparison.

pub mod dna_chain;
pub mod double_pendulum;
pub mod elliptic;
pub mod fit;
pub mod hanging_chain;
pub mod harmonic;
pub mod held_ladder;
pub mod magnetized_body;
pub mod nonholonomic_particle;
pub mod ode;
pub mod pendulum_chain;
pub mod planar_oscillator;
pub mod released_pendulum;
pub mod robot_arm;
pub mod rolling_sphere;
pub mod spherical_pendulum;
pub mod spook_ladder;
pub mod water_pairs;

#[cfg(test)]
mod sparse_derivatives;

pub use double_pendulum::DoublePendulum;
pub use hanging_chain::HangingChain;
pub use harmonic::HarmonicOscillator;
pub use held_ladder::HeldLadder;
pub use magnetized_body::MagnetizedBody;
pub use nonholonomic_particle::NonholonomicParticle;
pub use pendulum_chain::PendulumChain;
pub use planar_oscillator::{OscillatorOnCircle, PlanarOscillator};
pub use released_pendulum::{BobSensitivity, ReleasedPendulum};
pub use robot_arm::RobotArm;
pub use spherical_pendulum::SphericalSpringPendulum;
pub use spook_ladder::SpookLadder;
