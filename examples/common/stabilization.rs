//! The command-line choices shared by the examples of Ascher et al. (1995) (`robot_arm`,
//! `squeezer`): which explicit Runge–Kutta method integrates the index-1 ODE, and which
//! stabilization (Baumgarte or one of the post-stabilizations S-*) keeps it on the constraints;
//! and the recorder of an adaptive (DOPRI5) run, which stops at a time rather than after a
//! number of steps.

use std::error::Error;

use clap::ValueEnum;
use mechanism::runtime::integrators::stabilized::{Baumgarte, Dopri5, PostStabilization};
use mechanism::runtime::{
    observers, AppliedForces, Configuration, HolonomicKinematics, InertiaGradient, Potential,
    State, StepError,
};

use super::{Failure, Sample, Trajectory};

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

/// Records a DOPRI5 run to exactly `t_end`, one sample per accepted step, with the columns
/// `names` from `extra` and the step taken, `h`. The common harness steps a fixed number of
/// times; an adaptive run stops at a time instead.
pub fn adaptive<Model, const N: usize, const M: usize>(
    dopri: &mut Dopri5<N, M>,
    model: &Model,
    initial: State<N>,
    t_end: f64,
    names: &[&str],
    extra: impl Fn(&State<N>) -> Vec<f64>,
) -> Result<Trajectory<N>, Box<dyn Error>>
where
    Model: InertiaGradient<N>
        + Potential<N>
        + HolonomicKinematics<N, M>
        + AppliedForces<N>
        + Configuration<N>,
{
    if !(t_end.is_finite() && t_end >= 0.0) {
        return Err(format!("--t-end must be a non-negative number, got {t_end}").into());
    }
    let sample = |state: &State<N>, h: f64| {
        let mut values = extra(state);
        values.push(h);
        Sample {
            state: *state,
            energy: observers::energy(model, state),
            position_residual: observers::position_residual(model, state),
            velocity_residual: observers::velocity_residual(model, state),
            extra: values,
        }
    };
    let mut trajectory = Trajectory {
        coordinates: Model::COORDINATES,
        extra: names
            .iter()
            .map(|s| s.to_string())
            .chain(["h".to_string()])
            .collect(),
        samples: vec![sample(&initial, 0.0)],
        failure: None,
    };
    let mut state = initial;
    let mut step = 0;
    while state.t < t_end {
        match dopri.step_toward(model, &mut state, t_end) {
            Ok(taken) => trajectory.samples.push(sample(&state, taken.h)),
            Err(error) => {
                trajectory.failure = Some(Failure {
                    step,
                    t: state.t,
                    error,
                });
                break;
            }
        }
        step += 1;
    }
    let stats = dopri.statistics();
    println!(
        "DOPRI5: {} accepted, {} rejected steps (NSTEP = {}), {} evaluations",
        stats.accepted,
        stats.rejected,
        stats.steps(),
        stats.evaluations
    );
    Ok(trajectory)
}
