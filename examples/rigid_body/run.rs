//! What `free_body` and `heavy_top` share: a rigid body as a unit quaternion `(w, x, y, z)`
//! (`mechanism::models::{FreeBody, HeavyTop}`), the methods that step it, and the columns
//! `omega.*` (body frame), `R.*` (world from body, row by row) and the world angular momentum
//! `L.*`.
//!
//! The methods are those the models are compiled for: Livens/Gonzalez, and the index-1
//! Runge–Kutta methods with a stabilization (RK4 at a fixed step, DOPRI5 with error control).
//! RATTLE, SHAKE and SPOOK assume a constant mass matrix, and a quaternion's is not; the macro
//! refuses them for these models.

use std::error::Error;

use crate::common::stabilization::Stabilization;
use crate::common::{self, Column, RunOptions, Trajectory};
use clap::ValueEnum;
use mechanism::models::{body_angular_velocity, rotation_matrix};
use mechanism::runtime::integrators::stabilized::{DOPRI5, RK4};
use mechanism::runtime::{
    AppliedForces, Configuration, Dopri5, Holonomic, HolonomicKinematics, Inertia, InertiaGradient,
    Integrator, Livens, Potential, StabilizedRk, State,
};

/// Which integrator steps the body.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Method {
    /// The Livens/Gonzalez energy-consistent scheme (Kinon–Betsch eq. 30), fixed step.
    Livens,
    /// Classical RK4 on the index-1 formulation with `--stabilization`, fixed step.
    Rk4,
    /// Dormand–Prince 5(4) with error control (`--rtol`, `--atol`) and `--stabilization`.
    Dopri5,
}

/// The command line shared by the rigid-body examples.
#[derive(Debug, clap::Args)]
pub struct Options {
    /// Integrator.
    #[arg(long, value_enum, default_value_t = Method::Dopri5)]
    pub method: Method,
    #[command(flatten)]
    pub run: RunOptions,
    /// Stabilization of RK4 and DOPRI5 on the constraint |q|² = 1.
    #[arg(long, value_enum, default_value_t = Stabilization::BothTwice)]
    pub stabilization: Stabilization,
    /// Baumgarte's α1 (with --stabilization baumgarte).
    #[arg(long, default_value_t = 10.0)]
    pub alpha1: f64,
    /// Baumgarte's α0 (with --stabilization baumgarte).
    #[arg(long, default_value_t = 25.0)]
    pub alpha0: f64,
    /// Relative tolerance of DOPRI5.
    #[arg(long, default_value_t = 1e-9)]
    pub rtol: f64,
    /// Absolute tolerance of DOPRI5 [default: rtol / 10].
    #[arg(long)]
    pub atol: Option<f64>,
}

impl Options {
    /// Returns a title naming the method and its step or tolerances.
    pub fn label(&self, h: f64) -> String {
        let stabilization = self
            .stabilization
            .to_possible_value()
            .map_or_else(String::new, |v| v.get_name().to_string());
        match self.method {
            Method::Livens => format!("Livens, h = {h}"),
            Method::Rk4 => format!("RK4, h = {h}, {stabilization}"),
            Method::Dopri5 => format!(
                "DOPRI5, rtol = {:.1e}, atol = {:.1e}, {stabilization}",
                self.rtol,
                self.atol()
            ),
        }
    }

    fn atol(&self) -> f64 {
        self.atol.unwrap_or(0.1 * self.rtol)
    }
}

/// The model capabilities the methods need.
pub trait Body:
    InertiaGradient<4>
    + Potential<4>
    + HolonomicKinematics<4, 1>
    + AppliedForces<4>
    + Configuration<4>
    + Holonomic<4, 1>
    + Inertia<4>
    + Sync
{
    /// Returns the principal moments of inertia `(I₁, I₂, I₃)`.
    fn moments(&self) -> [f64; 3];
}

impl Body for mechanism::models::FreeBody {
    fn moments(&self) -> [f64; 3] {
        [self.i1, self.i2, self.i3]
    }
}

impl Body for mechanism::models::HeavyTop {
    fn moments(&self) -> [f64; 3] {
        [self.i1, self.i2, self.i3]
    }
}

/// Returns the world angular momentum `L = R I Ω` of `state`.
pub fn angular_momentum<B: Body>(body: &B, state: &State<4>) -> [f64; 3] {
    let omega = body_angular_velocity(state.q.as_slice(), state.v.as_slice());
    let r = rotation_matrix(state.q.as_slice());
    let i = body.moments();
    [0, 1, 2].map(|row| (0..3).map(|k| r[row][k] * i[k] * omega[k]).sum())
}

/// The columns after the CSV contract's: `omega.x`, `omega.y`, `omega.z` (body frame),
/// `R.xx`, …, `R.zz` (world from body, row by row), `L.x`, `L.y`, `L.z` (world angular
/// momentum), `q.norm` (`|q|`).
fn columns<'a, I, B: Body>(body: &'a B) -> Vec<Column<'a, I, 4>> {
    let mut columns = Vec::new();
    for (k, axis) in ["x", "y", "z"].into_iter().enumerate() {
        columns.push(Column::new(
            format!("omega.{axis}"),
            move |_: &I, s: &State<4>| body_angular_velocity(s.q.as_slice(), s.v.as_slice())[k],
        ));
    }
    for (row, r) in ["x", "y", "z"].into_iter().enumerate() {
        for (col, c) in ["x", "y", "z"].into_iter().enumerate() {
            columns.push(Column::new(
                format!("R.{r}{c}"),
                move |_: &I, s: &State<4>| rotation_matrix(s.q.as_slice())[row][col],
            ));
        }
    }
    for (k, axis) in ["x", "y", "z"].into_iter().enumerate() {
        columns.push(Column::new(
            format!("L.{axis}"),
            move |_: &I, s: &State<4>| angular_momentum(body, s)[k],
        ));
    }
    columns.push(Column::new("q.norm", |_: &I, s: &State<4>| s.q.norm()));
    columns
}

/// Runs the method of `options` on `body` from `initial` to `t_end` (fixed-step methods at
/// step `h`), writing the CSV contract's columns, then [`columns`]; `energy.generalized` for
/// Livens, `h` for DOPRI5.
pub fn simulate<B: Body>(
    options: &Options,
    body: &B,
    initial: State<4>,
    h: f64,
    t_end: f64,
) -> Result<Trajectory, Box<dyn Error>>
where
    Livens<4, 1>: Integrator<B, 4>,
    StabilizedRk<4, 1, 4>: Integrator<B, 4>,
{
    let (baumgarte, post) = options
        .stabilization
        .parts(options.alpha1, options.alpha0)?;
    match options.method {
        Method::Livens => {
            let plan = options.run.plan(h, t_end)?;
            let mut extra = vec![Column::new(
                "energy.generalized",
                |i: &Livens<4, 1>, s: &State<4>| i.generalized_energy(body, s),
            )];
            extra.extend(columns(body));
            common::simulate(Livens::new(h)?, body, body, initial, &plan, extra)
        }
        Method::Rk4 => {
            let plan = options.run.plan(h, t_end)?;
            let rk4 = StabilizedRk::<4, 1, 4>::new(RK4, h)?
                .with_baumgarte(baumgarte)
                .with_post_stabilization(post);
            common::simulate(rk4, body, body, initial, &plan, columns(body))
        }
        Method::Dopri5 => {
            let mut dopri = Dopri5::<4, 1>::new(DOPRI5, options.rtol, options.atol())?
                .with_baumgarte(baumgarte)
                .with_post_stabilization(post);
            if let Some(h) = options.run.h {
                dopri = dopri.with_initial_step(h)?;
            }
            common::simulate_adaptive(
                dopri,
                body,
                initial,
                t_end,
                columns(body),
                options.run.schedule()?,
            )
        }
    }
}

/// Prints `max_k |x_k − x_0|` of each of the columns `names` that `trajectory` has.
pub fn print_drifts(trajectory: &Trajectory, names: &[&str]) {
    for name in names {
        if let Some(values) = trajectory.column(name) {
            let drift = common::max_deviation(&values);
            println!("  max |{name} - {name}(0)| = {drift:.3e}");
        }
    }
}
