//! The command-line choices shared by the examples of Ascher et al. (1995) (`robot_arm`,
//! `squeezer`): which explicit Runge–Kutta method integrates the index-1 ODE, and which
//! stabilization (Baumgarte or one of the post-stabilizations S-*) keeps it on the constraints.
//! An adaptive (DOPRI5) run goes through the driver with [`super::simulate_adaptive`].

use clap::ValueEnum;
use mechanism::runtime::integrators::stabilized::{Baumgarte, PostStabilization};
use mechanism::runtime::StepError;

/// Which Runge–Kutta method integrates the index-1 ODE.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Method {
    /// Heun's method (order 2, fixed step): the RK2 that reproduces Ascher et al.'s Tables
    /// 6.1–6.2.
    Rk2,
    /// Classical RK4 (fixed step).
    Rk4,
    /// Dormand–Prince 5(4) with error control: the paper's automatic code (Tables 6.3–6.4).
    Dopri5,
}

/// The stabilizations of Ascher et al. §6.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Stabilization {
    /// Plain index reduction, Baum(0,0).
    None,
    /// Baumgarte's `g̈ + α1 ġ + α0 g = 0` (eq. 2.1), with --alpha1, --alpha0.
    Baumgarte,
    /// S-full: eq. 5.4 with `F = Hᵀ (H Hᵀ)⁻¹`.
    #[value(name = "s-full")]
    Full,
    /// S-both: eq. 5.4 with `F` of eq. 5.6 on both levels.
    #[value(name = "s-both")]
    Both,
    /// S-both²: the double stabilization step of §5 (the paper's recommendation).
    #[value(name = "s-both2")]
    BothTwice,
    /// S-vel: the velocity level only.
    #[value(name = "s-vel")]
    Velocity,
    /// S-pos: the position level only.
    #[value(name = "s-pos")]
    Position,
}

impl Stabilization {
    /// Returns the Baumgarte term and the post-stabilization of this choice.
    pub fn parts(
        self,
        alpha1: f64,
        alpha0: f64,
    ) -> Result<(Baumgarte, PostStabilization), StepError> {
        Ok(match self {
            Stabilization::None => (Baumgarte::NONE, PostStabilization::None),
            Stabilization::Baumgarte => (Baumgarte::new(alpha1, alpha0)?, PostStabilization::None),
            Stabilization::Full => (Baumgarte::NONE, PostStabilization::Full),
            Stabilization::Both => (Baumgarte::NONE, PostStabilization::Both),
            Stabilization::BothTwice => (Baumgarte::NONE, PostStabilization::BothTwice),
            Stabilization::Velocity => (Baumgarte::NONE, PostStabilization::Velocity),
            Stabilization::Position => (Baumgarte::NONE, PostStabilization::Position),
        })
    }
}
