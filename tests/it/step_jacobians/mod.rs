//! Exact step Jacobians (`DifferentiableStep`, and `DifferentiableInParameters` for the
//! model's parameters) against central differences of the step itself.
//!
//! The bound. For a smooth step map `Φ`, the central difference with step `d` is
//! `D_d = J + (d²/6) Φ‴ + O(d⁴)`, plus the step's rounding `δ` divided by `d`. So
//! `D_{2d} − D_d = (3d²/6) Φ‴ + O(d⁴)` is three times `D_d`'s truncation error, and every
//! entry must satisfy `|J − D_d| ≤ |D_{2d} − D_d| + 2δ/d` with `δ = 16 κ ε (1 + |Φ|∞)`, the
//! rounding of a step whose linear solve has the condition number `κ` (each test states its
//! estimate). A missing term of the Jacobian (a force Jacobian times `h`, a multiplier times a
//! row Hessian) is `≳ 1e-3` here, far above the bounds, which are `≲ 1e-5`.

mod adjoint;
mod explicit;
mod heavy_top;
mod lagrange_d_alembert;
mod langevin;
mod linearly_implicit;
mod rattle;
mod runge_kutta;
mod sensitivity;
mod sparse;
mod spook;

use mechanism::runtime::{
    DifferentiableInParameters, DifferentiableStep, ParameterJacobian, Parameters, SVector, State,
    StepJacobian,
};

/// The step of `integrator` (a fresh clone for every evaluation) from `(t, x)`, `x = (q, v)`.
fn step_map<I, Model, const N: usize>(integrator: &I, model: &Model, t: f64, x: &[f64]) -> Vec<f64>
where
    I: DifferentiableStep<Model, N> + Clone,
{
    let mut state = State::<N>::new(
        t,
        std::array::from_fn(|i| x[i]),
        std::array::from_fn(|i| x[N + i]),
    );
    integrator
        .clone()
        .step(model, &mut state)
        .expect("the step from a perturbed state");
    state.q.iter().chain(state.v.iter()).copied().collect()
}

/// Checks the Jacobian of one step of `integrator` from `state` against central differences
/// with step `d` (the bound of the module docs, with `conditioning` the estimate of `κ`);
/// returns the largest entry of the Jacobian and the largest error relative to the bound.
pub(super) fn check_step_jacobian<I, Model, const N: usize>(
    label: &str,
    integrator: &I,
    model: &Model,
    state: &State<N>,
    (d, conditioning): (f64, f64),
) -> (f64, f64)
where
    I: DifferentiableStep<Model, N> + Clone,
{
    let mut jacobian = StepJacobian::<N>::default();
    let mut stepped = *state;
    integrator
        .clone()
        .step_with_jacobian(model, &mut stepped, &mut jacobian)
        .expect("step with Jacobian");
    let mut plain = *state;
    integrator
        .clone()
        .step(model, &mut plain)
        .expect("plain step");
    assert_eq!(
        (stepped.q, stepped.v),
        (plain.q, plain.v),
        "{label}: step_with_jacobian must take the step `step` takes"
    );

    let x: Vec<f64> = state.q.iter().chain(state.v.iter()).copied().collect();
    let map = |x: &[f64]| step_map::<I, Model, N>(integrator, model, state.t, x);
    let entry = |row: usize, column: usize| {
        let block = match (row < N, column < N) {
            (true, true) => &jacobian.q_q,
            (true, false) => &jacobian.q_v,
            (false, true) => &jacobian.v_q,
            (false, false) => &jacobian.v_v,
        };
        block[(row % N, column % N)]
    };
    compare(label, (&map, "x"), &x, entry, (d, conditioning))
}

/// Checks the parameter Jacobian of one step of `integrator` from `state` against central
/// differences in the parameters with step `d` (as [`check_step_jacobian`]), and that the
/// state Jacobian it writes beside it is `step_with_jacobian`'s. Returns the largest entry and
/// the largest error relative to the bound.
pub(super) fn check_parameter_jacobian<I, Model, const N: usize, const P: usize>(
    label: &str,
    integrator: &I,
    model: &Model,
    state: &State<N>,
    (d, conditioning): (f64, f64),
) -> (f64, f64)
where
    I: DifferentiableInParameters<Model, N, P> + Clone,
    Model: Parameters<P> + Clone,
{
    let (mut jacobian, mut parameters) = (
        StepJacobian::<N>::default(),
        ParameterJacobian::<N, P>::default(),
    );
    let mut stepped = *state;
    integrator
        .clone()
        .step_with_jacobians(model, &mut stepped, &mut jacobian, &mut parameters)
        .expect("step with Jacobians");
    let (mut alone, mut plain) = (StepJacobian::<N>::default(), *state);
    integrator
        .clone()
        .step_with_jacobian(model, &mut plain, &mut alone)
        .expect("step with the state Jacobian");
    assert_eq!(
        (stepped.q, stepped.v, jacobian),
        (plain.q, plain.v, alone),
        "{label}: step_with_jacobians must take the step and write the state Jacobian that \
         step_with_jacobian does"
    );

    let p: Vec<f64> = model.parameter_values().iter().copied().collect();
    let x: Vec<f64> = state.q.iter().chain(state.v.iter()).copied().collect();
    let map = |p: &[f64]| {
        let mut changed = model.clone();
        changed.set_parameter_values(&SVector::<f64, P>::from_column_slice(p));
        step_map::<I, Model, N>(integrator, &changed, state.t, &x)
    };
    let entry = |row: usize, column: usize| {
        let block = if row < N {
            &parameters.q_p
        } else {
            &parameters.v_p
        };
        block[(row % N, column)]
    };
    compare(label, (&map, "p"), &p, entry, (d, conditioning))
}

/// A step as a function of the vector it is differentiated in.
type StepMap<'a> = &'a dyn Fn(&[f64]) -> Vec<f64>;

/// Compares `exact(row, column)` with the central differences of `map` at `x` (named `wrt` in
/// the messages) column by column, under the bound of the module docs; returns the largest
/// exact entry and the largest error relative to its bound.
pub(super) fn compare(
    label: &str,
    (map, wrt): (StepMap, &str),
    x: &[f64],
    exact: impl Fn(usize, usize) -> f64,
    (d, conditioning): (f64, f64),
) -> (f64, f64) {
    let scale = 1.0 + map(x).iter().fold(0.0f64, |m, y| m.max(y.abs()));
    let rounding = 2.0 * 16.0 * conditioning * f64::EPSILON * scale / d;
    let fine = mechanism_test_support::central_differences(map, x, d);
    let coarse = mechanism_test_support::central_differences(map, x, 2.0 * d);
    let (mut largest, mut worst) = (0.0f64, 0.0f64);
    for (column, (fine, coarse)) in fine.iter().zip(&coarse).enumerate() {
        for (row, (fine, coarse)) in fine.iter().zip(coarse).enumerate() {
            let exact = exact(row, column);
            let bound = (coarse - fine).abs() + rounding;
            let error = (exact - fine).abs();
            assert!(
                error <= bound,
                "{label}: ∂x'_{row}/∂{wrt}_{column} = {exact:e}, central differences \
                 {fine:e}: error {error:e} above the bound {bound:e}"
            );
            largest = largest.max(exact.abs());
            worst = worst.max(error / bound);
        }
    }
    // The table of the closing notes: `cargo test --test it step_jacobians -- --nocapture`.
    eprintln!(
        "jacobian error: {label}: largest entry {largest:.3e}, largest error / bound {worst:.3e}"
    );
    (largest, worst)
}

/// The state of a planar chain of links of lengths `lengths` from the origin at angles
/// `angles` (from −y) turning at `rates`, in Cartesian coordinates bob by bob.
pub(super) fn chain_state<const N: usize>(
    lengths: &[f64],
    angles: &[f64],
    rates: &[f64],
) -> State<N> {
    let (mut q, mut v) = ([0.0; N], [0.0; N]);
    let (mut x, mut y, mut vx, mut vy) = (0.0, 0.0, 0.0, 0.0);
    for (link, ((l, angle), rate)) in lengths.iter().zip(angles).zip(rates).enumerate() {
        x += l * angle.sin();
        y -= l * angle.cos();
        vx += l * angle.cos() * rate;
        vy += l * angle.sin() * rate;
        (q[2 * link], q[2 * link + 1], v[2 * link], v[2 * link + 1]) = (x, y, vx, vy);
    }
    State::new(0.0, q, v)
}
