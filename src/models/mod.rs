//! Reference mechanisms from the papers, written with [`mechanism!`](macro@crate::mechanism) and
//! shared by the examples, tests and benchmarks.

mod chain10;
mod damped_double_pendulum;
mod dna;
mod double_pendulum;
mod families;
mod nonholonomic_particle;
mod pendulum;
mod planar_oscillator;
mod rigid_body;
mod robot_arm;
mod robots;
mod rolling_sphere;
mod singular_mass_spring;
mod spring_pendulum;
mod squeezer;
mod varied_chain;
mod water;

/// Tao–Owhadi §4.2's chain of 10 pendula unrolled on the fixed-size tier (20 coordinates,
/// 10 rods, `g = 1`, `L² = 5`), for the generated solves of penalized and stiff Z&Ss and SPOOK:
/// the peer benchmark's model against CasADi.
pub use chain10::Chain10;
pub use damped_double_pendulum::DampedDoublePendulum;
/// Tao–Owhadi §4.4's DNA Morse chain of `N` base pairs (eq. 31, periodic ends), written with
/// families for the sparse tier, with the paper's seeded initial state.
pub use dna::DnaChain;
pub use double_pendulum::DoublePendulum;
/// Tao–Owhadi §4.2's chain of pendula and Lacoursière §6's ladder, written with families for
/// the sparse tier: sizes are arguments of `new`.
pub use families::{Ladder, PendulumChain};
/// Cuell §3.1: the free particle in `R³` with the non-integrable constraint `ż = y ẋ`.
pub use nonholonomic_particle::NonholonomicParticle;
pub use pendulum::Pendulum;
/// Cuell §4.1 and §5.1: the planar harmonic oscillator, free and with `x ẋ + y ẏ = 0` as a
/// velocity constraint.
pub use planar_oscillator::{OscillatorOnCircle, PlanarOscillator};
/// Rigid bodies with a unit quaternion as coordinates (the torque-free body and the heavy top
/// about a fixed point, issue 14's checks) or with the rotation matrix (the heavy top for
/// RATTLE, SHAKE and SPOOK), with the conversions between the coordinates, the body angular
/// velocity `Ω` and the rotation matrix.
pub use rigid_body::{
    body_angular_velocity, matrix_angular_velocity, matrix_state, quaternion_state,
    rotation_matrix, FreeBody, HeavyTop, HeavyTopMatrix,
};
/// Ascher–Chin–Petzold–Reich (1995) §6, Example 2: the two-link planar robot arm (`M`, `f` of
/// §6, index-3 system eq. 1.1) with its free end on the parabola `y2 = x2² − β` (Case I,
/// Table 6.1) or at the prescribed height `y2 = sin²(ωt)` (Case II, Tables 6.2–6.3).
pub use robot_arm::{RobotArmParabola, RobotArmSine};
/// Robots imported from their URDF files (`robots/`): the UR5 in maximal and joint
/// coordinates, the Panda in joint coordinates, a planar four-bar closed in the macro in both.
pub use robots::{FourBar, FourBarMaximal, PandaJoints, Ur5, Ur5Joints};
/// Cuell (2005) §7: Routh's sphere and the uniform ball rolling on a plane, a unit quaternion
/// with the rolling constraint through the contact point as nonholonomic rows.
pub use rolling_sphere::RollingSphere;
/// Kinon–Betsch–Livens §6.1: two masses, two nonlinear springs, redundant coordinates
/// `(x1, q2, x2)` and a mass matrix that is singular everywhere (eq. 38–41).
pub use singular_mass_spring::SingularMassSpring;
/// Kinon–Betsch–Livens §6.2: the nonlinear spring pendulum in spherical coordinates
/// `(r, θ, φ)`, with a configuration-dependent mass matrix and a cyclic azimuth (eq. 42–46).
pub use spring_pendulum::SpringPendulum;
/// Ascher–Chin–Petzold–Reich (1995) §6, Example 3 (Table 6.4): Andrews' seven-body squeezing
/// mechanism with Hairer–Wanner's data (*Solving ODEs II* §VII.7, eq. 7.4–7.11), 7 angles and
/// 6 loop-closure constraints, driven by a torque and loaded by a spring.
pub use squeezer::Squeezer;
/// A chain of `N` pendula with a mass and a rod length per link, written with families and
/// parameter families for the sparse tier, with the potential's and the rods' Hessians for the
/// linearization (`derivatives: [hessians]`).
pub use varied_chain::VariedPendulumChain;
/// Tao–Owhadi §4.3: a cluster of `N` rigid TIP3P water molecules (AKMA units), Coulomb and
/// O–O Lennard-Jones pair interactions as one pair-sum kernel, rigid geometry as a row family.
pub use water::WaterCluster;
