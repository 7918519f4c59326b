//! The integrators the double pendulum runs (`--method`), shared by the `double_pendulum` and
//! `sweep` examples: which model each steps (the hard constraints or the penalized
//! `V + ½ω²|g|²`), its default step and the columns it adds.

// Each example uses part of it.
#![allow(dead_code)]

use std::error::Error;

use crate::common::{self, Column, Plan, Trajectory};
use clap::ValueEnum;
use mechanism::models::DoublePendulum;
use mechanism::runtime::{
    observers, Holonomic, Livens, Newmark, NewmarkOneIteration, Penalized, PushForwardNewmark,
    Rattle, SVector, Shake, Spook, State, SymplecticEuler, Verlet, ZhangSkeel,
    ZhangSkeelSimplified, ZhangSkeelStiff,
};

/// Which integrator to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Method {
    /// SPOOK (Lacoursière 2007, eq. 27–29) on the hard constraints.
    Spook,
    /// Full Zhang–Skeel (Tao–Owhadi eq. 3) on the penalized model.
    Zs,
    /// Simplified Zhang–Skeel (Tao–Owhadi eq. 18) on the penalized model.
    Zss,
    /// Simplified Zhang–Skeel for stiff systems (Tao–Owhadi eq. 19) on the penalized model.
    ZssStiff,
    /// Newmark, γ = ½, Newton solved to convergence (Tao–Owhadi eq. 12), penalized.
    Newmark,
    /// Newmark with one Newton iteration per step (Tao–Owhadi Fig. 1, row 5), penalized.
    #[value(name = "newmark-1")]
    NewmarkOne,
    /// Push-forward Newmark (Tao–Owhadi eq. 14), penalized; q holds x = q + βh²M⁻¹∇V.
    PfNewmark,
    /// Livens/Gonzalez energy-consistent scheme (Kinon–Betsch eq. 30) on the hard constraints.
    Livens,
    /// SHAKE on the hard constraints; v holds the staggered velocity v_{k+½}.
    Shake,
    /// RATTLE on the hard constraints.
    Rattle,
    /// Symplectic ("variational") Euler on the penalized model.
    SymplecticEuler,
    /// Velocity Verlet on the penalized model.
    Verlet,
}

impl Method {
    /// Returns whether the method runs the penalized model rather than the hard constraints.
    pub fn is_penalized(self) -> bool {
        !matches!(
            self,
            Method::Spook | Method::Livens | Method::Shake | Method::Rattle
        )
    }

    /// Returns the default step: SPOOK's 1/60, the explicit methods' `0.1/ω` (their stability
    /// limit on the penalty, as in Tao–Owhadi Fig. 1 row 3), the others' `0.1` (rows 2, 4–6).
    pub fn default_h(self, omega: f64) -> f64 {
        match self {
            Method::Spook => 1.0 / 60.0,
            Method::SymplecticEuler | Method::Verlet => 0.1 / omega,
            _ => 0.1,
        }
    }

    /// Returns a short name for titles.
    pub fn label(self) -> &'static str {
        match self {
            Method::Spook => "SPOOK",
            Method::Zs => "Z&S",
            Method::Zss => "Z&Ss",
            Method::ZssStiff => "stiff Z&Ss",
            Method::Newmark => "Newmark",
            Method::NewmarkOne => "Newmark (1 iteration)",
            Method::PfNewmark => "push-forward Newmark",
            Method::Livens => "Livens",
            Method::Shake => "SHAKE",
            Method::Rattle => "RATTLE",
            Method::SymplecticEuler => "symplectic Euler",
            Method::Verlet => "Verlet",
        }
    }
}

/// Runs `method` as `plan` says from Tao–Owhadi's initial state.
pub fn simulate(
    method: Method,
    model: &DoublePendulum,
    omega: f64,
    beta: f64,
    plan: &Plan,
) -> Result<Trajectory, Box<dyn Error>> {
    let h = plan.h;
    let initial = DoublePendulum::initial_state();
    let penalized = Penalized::new(*model, omega);
    match method {
        Method::Spook => {
            let columns = multiplier_columns(|i: &Spook<4, 2>| *i.multipliers());
            common::simulate(Spook::new(h)?, model, model, initial, plan, columns)
        }
        Method::Livens => {
            let mut columns = vec![Column::new(
                "energy.generalized",
                |i: &Livens<4, 2>, s: &State<4>| i.generalized_energy(model, s),
            )];
            columns.extend(multiplier_columns(|i: &Livens<4, 2>| *i.multipliers()));
            common::simulate(Livens::new(h)?, model, model, initial, plan, columns)
        }
        Method::Shake => {
            let mut shake = Shake::<4, 2>::new(h)?;
            let mut start = initial;
            shake.stagger_velocity(model, &mut start)?;
            let columns = multiplier_columns(|i: &Shake<4, 2>| *i.multipliers());
            common::simulate(shake, model, model, start, plan, columns)
        }
        Method::Rattle => {
            let columns = multiplier_columns(|i: &Rattle<4, 2>| *i.multipliers());
            common::simulate(Rattle::new(h)?, model, model, initial, plan, columns)
        }
        Method::Zs => common::simulate(
            ZhangSkeel::new(h)?.with_beta(beta)?,
            &penalized,
            model,
            initial,
            plan,
            penalty_columns(&penalized),
        ),
        Method::Zss => common::simulate(
            ZhangSkeelSimplified::new(h)?.with_beta(beta)?,
            &penalized,
            model,
            initial,
            plan,
            penalty_columns(&penalized),
        ),
        Method::ZssStiff => common::simulate(
            ZhangSkeelStiff::new(h)?.with_beta(beta)?,
            &penalized,
            model,
            initial,
            plan,
            penalty_columns(&penalized),
        ),
        Method::Newmark => common::simulate(
            Newmark::new(h)?.with_beta(beta)?,
            &penalized,
            model,
            initial,
            plan,
            penalty_columns(&penalized),
        ),
        Method::NewmarkOne => common::simulate(
            NewmarkOneIteration::new(h)?.with_beta(beta)?,
            &penalized,
            model,
            initial,
            plan,
            penalty_columns(&penalized),
        ),
        Method::PfNewmark => common::simulate(
            PushForwardNewmark::new(h)?.with_beta(beta)?,
            &penalized,
            model,
            initial,
            plan,
            penalty_columns(&penalized),
        ),
        Method::SymplecticEuler => common::simulate(
            SymplecticEuler::new(h)?,
            &penalized,
            model,
            initial,
            plan,
            penalty_columns(&penalized),
        ),
        Method::Verlet => common::simulate(
            Verlet::new(h)?,
            &penalized,
            model,
            initial,
            plan,
            penalty_columns(&penalized),
        ),
    }
}

/// The column of a penalty method: the energy `T + V + ½ω²|g|²` it conserves.
fn penalty_columns<I>(penalized: &Penalized<DoublePendulum>) -> Vec<Column<'_, I, 4>> {
    vec![Column::new(
        "energy.penalized",
        move |_: &I, s: &State<4>| observers::energy(penalized, s),
    )]
}

/// The columns `lambda.<row>` of a constrained method, one per constraint row.
fn multiplier_columns<I: 'static>(
    multipliers: fn(&I) -> SVector<f64, 2>,
) -> Vec<Column<'static, I, 4>> {
    let rows = <DoublePendulum as Holonomic<4, 2>>::CONSTRAINTS;
    (0..rows.len())
        .map(|k| {
            Column::new(format!("lambda.{}", rows[k]), move |i: &I, _: &State<4>| {
                multipliers(i)[k]
            })
        })
        .collect()
}
