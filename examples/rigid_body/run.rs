//! What `free_body` and `heavy_top` share: a rigid body as a unit quaternion `(w, x, y, z)`
//! (`mechanism::models::{FreeBody, HeavyTop}`) or as its rotation matrix
//! (`mechanism::models::HeavyTopMatrix`), the methods that step it, and the columns `omega.*`
//! (body frame), `R.*` (world from body, row by row) and the world angular momentum `L.*`.
//!
//! The methods are those the models are compiled for: Livens/Gonzalez and the index-1
//! Runge–Kutta methods with a stabilization (RK4 at a fixed step, DOPRI5 with error control)
//! for both forms; RATTLE, SHAKE and SPOOK for the matrix form only. They assume a constant
//! mass matrix, which the matrix form has and a quaternion's has not; the macro refuses them
//! for the quaternion models.

// Each example uses part of it.
#![allow(dead_code)]

use std::error::Error;
use std::path::Path;

use crate::common::stabilization::Stabilization;
use crate::common::{self, Column, RunOptions, Trajectory};
use clap::ValueEnum;
use mechanism::models::{
    body_angular_velocity, matrix_angular_velocity, rotation_matrix, HeavyTopMatrix,
};
use mechanism::runtime::integrators::stabilized::{DOPRI5, RK4};
use mechanism::runtime::{
    AppliedForces, Configuration, Dopri5, Holonomic, HolonomicKinematics, Inertia, InertiaGradient,
    Integrator, Livens, Potential, Rattle, Shake, Spook, StabilizedRk, State,
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
    /// RATTLE, Newton on the multipliers to 1e-13 (rotation-matrix form only).
    Rattle,
    /// SHAKE, Newton on the multipliers to 1e-13; v holds Ṙ_{k+½} (rotation-matrix form only).
    Shake,
    /// SPOOK (Lacoursière 2007, ε = 1e-8, τ = 2h; rotation-matrix form only).
    Spook,
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
            Method::Rattle => format!("RATTLE, h = {h}"),
            Method::Shake => format!("SHAKE, h = {h}"),
            Method::Spook => format!("SPOOK, h = {h}"),
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

/// A rigid body with `N` coordinates and `M` constraint rows, with the model capabilities the
/// methods need and the conversions of its coordinates.
pub trait Body<const N: usize, const M: usize>:
    mechanism::runtime::checkpoint::ModelIdentity
    + InertiaGradient<N>
    + Potential<N>
    + HolonomicKinematics<N, M>
    + AppliedForces<N>
    + Configuration<N>
    + Holonomic<N, M>
    + Inertia<N>
{
    /// Returns the principal moments of inertia `(I₁, I₂, I₃)`.
    fn moments(&self) -> [f64; 3];
    /// Returns the rotation matrix (world from body) of the coordinates `q`.
    fn rotation(&self, q: &[f64]) -> [[f64; 3]; 3];
    /// Returns the body angular velocity at `(q, v)`.
    fn omega(&self, q: &[f64], v: &[f64]) -> [f64; 3];
}

/// Implements [`Body`] for a quaternion model.
macro_rules! quaternion_body {
    ($model:ty) => {
        impl Body<4, 1> for $model {
            fn moments(&self) -> [f64; 3] {
                [self.i1, self.i2, self.i3]
            }
            fn rotation(&self, q: &[f64]) -> [[f64; 3]; 3] {
                rotation_matrix(q)
            }
            fn omega(&self, q: &[f64], v: &[f64]) -> [f64; 3] {
                body_angular_velocity(q, v)
            }
        }
    };
}
quaternion_body!(mechanism::models::FreeBody);
quaternion_body!(mechanism::models::HeavyTop);

impl Body<9, 6> for HeavyTopMatrix {
    fn moments(&self) -> [f64; 3] {
        [self.i1, self.i2, self.i3]
    }
    fn rotation(&self, q: &[f64]) -> [[f64; 3]; 3] {
        [0, 1, 2].map(|i| [q[3 * i], q[3 * i + 1], q[3 * i + 2]])
    }
    fn omega(&self, q: &[f64], v: &[f64]) -> [f64; 3] {
        matrix_angular_velocity(q, v)
    }
}

/// Returns the world angular momentum `L = R I Ω` of `state`.
pub fn angular_momentum<B: Body<N, M>, const N: usize, const M: usize>(
    body: &B,
    state: &State<N>,
) -> [f64; 3] {
    let omega = body.omega(state.q.as_slice(), state.v.as_slice());
    let r = body.rotation(state.q.as_slice());
    let i = body.moments();
    [0, 1, 2].map(|row| (0..3).map(|k| r[row][k] * i[k] * omega[k]).sum())
}

/// The columns after the CSV contract's: `omega.x`, `omega.y`, `omega.z` (body frame),
/// `R.xx`, …, `R.zz` (world from body, row by row), `L.x`, `L.y`, `L.z` (world angular
/// momentum), and for a quaternion `q.norm` (`|q|`).
fn columns<'a, I, B, const N: usize, const M: usize>(body: &'a B) -> Vec<Column<'a, I, N>>
where
    B: Body<N, M>,
{
    let mut columns = Vec::new();
    for (k, axis) in ["x", "y", "z"].into_iter().enumerate() {
        columns.push(Column::new(
            format!("omega.{axis}"),
            move |_: &I, s: &State<N>| body.omega(s.q.as_slice(), s.v.as_slice())[k],
        ));
    }
    for (row, r) in ["x", "y", "z"].into_iter().enumerate() {
        for (col, c) in ["x", "y", "z"].into_iter().enumerate() {
            columns.push(Column::new(
                format!("R.{r}{c}"),
                move |_: &I, s: &State<N>| body.rotation(s.q.as_slice())[row][col],
            ));
        }
    }
    for (k, axis) in ["x", "y", "z"].into_iter().enumerate() {
        columns.push(Column::new(
            format!("L.{axis}"),
            move |_: &I, s: &State<N>| angular_momentum(body, s)[k],
        ));
    }
    if N == 4 {
        columns.push(Column::new("q.norm", |_: &I, s: &State<N>| s.q.norm()));
    }
    columns
}

/// Runs the method of `options` (Livens, RK4 or DOPRI5) on `body` from `initial` to `t_end`
/// (fixed-step methods at step `h`), streaming the rows to `out` while it goes (the CSV
/// contract's columns, then [`columns`];
/// `energy.generalized` for Livens, `h` for DOPRI5). RATTLE, SHAKE and SPOOK are
/// [`simulate_projected`]'s.
pub fn simulate<B, const N: usize, const M: usize>(
    options: &Options,
    body: &B,
    initial: State<N>,
    (h, t_end): (f64, f64),
    out: &Path,
) -> Result<Trajectory, Box<dyn Error>>
where
    B: Body<N, M>,
    Livens<N, M>: Integrator<B, N>,
    StabilizedRk<N, M, 4>: Integrator<B, N>,
{
    let (baumgarte, post) = options
        .stabilization
        .parts(options.alpha1, options.alpha0)?;
    match options.method {
        Method::Livens => {
            let plan = options.run.plan(h, t_end)?.stream_to(out.to_path_buf());
            let mut extra = vec![Column::new(
                "energy.generalized",
                |i: &Livens<N, M>, s: &State<N>| i.generalized_energy(body, s),
            )];
            extra.extend(columns(body));
            common::simulate(Livens::new(h)?, body, body, initial, &plan, extra)
        }
        Method::Rk4 => {
            let plan = options.run.plan(h, t_end)?.stream_to(out.to_path_buf());
            let rk4 = StabilizedRk::<N, M, 4>::new(RK4, h)?
                .with_baumgarte(baumgarte)
                .with_post_stabilization(post);
            common::simulate(rk4, body, body, initial, &plan, columns(body))
        }
        Method::Dopri5 => {
            let mut dopri = Dopri5::<N, M>::new(DOPRI5, options.rtol, options.atol())?
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
                &options.run.adaptive_plan()?.stream_to(out.to_path_buf()),
            )
        }
        Method::Rattle | Method::Shake | Method::Spook => Err(format!(
            "--method {:?} needs a constant mass matrix, which the quaternion form lacks; \
             use --method livens, rk4 or dopri5 (heavy_top also takes --coordinates matrix)",
            options.method
        )
        .to_lowercase()
        .into()),
    }
}

/// Runs RATTLE, SHAKE or SPOOK (`options.method`) on the rotation-matrix top, or
/// [`simulate`] for the other methods, streaming the rows to `out`.
pub fn simulate_projected(
    options: &Options,
    top: &HeavyTopMatrix,
    initial: State<9>,
    (h, t_end): (f64, f64),
    out: &Path,
) -> Result<Trajectory, Box<dyn Error>> {
    let plan = options.run.plan(h, t_end)?.stream_to(out.to_path_buf());
    match options.method {
        Method::Rattle => {
            let rattle = Rattle::<9, 6>::new(h)?.with_tolerance(1e-13)?;
            common::simulate(rattle, top, top, initial, &plan, columns(top))
        }
        Method::Shake => {
            let mut shake = Shake::<9, 6>::new(h)?.with_tolerance(1e-13)?;
            let mut start = initial;
            shake.stagger_velocity(top, &mut start)?;
            common::simulate(shake, top, top, start, &plan, columns(top))
        }
        Method::Spook => common::simulate(Spook::new(h)?, top, top, initial, &plan, columns(top)),
        _ => simulate(options, top, initial, (h, t_end), out),
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
