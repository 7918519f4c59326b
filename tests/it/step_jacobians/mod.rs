//! Exact step Jacobians (`DifferentiableStep`) against central differences of the step itself.
//!
//! The bound. For a smooth step map `Φ`, the central difference with step `d` is
//! `D_d = J + (d²/6) Φ‴ + O(d⁴)`, plus the step's rounding `δ` divided by `d`. So
//! `D_{2d} − D_d = (3d²/6) Φ‴ + O(d⁴)` is three times `D_d`'s truncation error, and every
//! entry must satisfy `|J − D_d| ≤ |D_{2d} − D_d| + 2δ/d` with `δ = 16 κ ε (1 + |Φ|∞)`, the
//! rounding of a step whose linear solve has the condition number `κ` (each test states its
//! estimate). A missing term of the Jacobian (a force Jacobian times `h`, a multiplier times a
//! row Hessian) is `≳ 1e-3` here, far above the bounds, which are `≲ 1e-5`.

mod spook;

use mechanism::runtime::{DifferentiableStep, State, StepJacobian};

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
    let scale = 1.0 + map(&x).iter().fold(0.0f64, |m, y| m.max(y.abs()));
    let rounding = 2.0 * 16.0 * conditioning * f64::EPSILON * scale / d;
    let fine = mechanism_test_support::central_differences(&map, &x, d);
    let coarse = mechanism_test_support::central_differences(&map, &x, 2.0 * d);
    let entry = |row: usize, column: usize| {
        let block = match (row < N, column < N) {
            (true, true) => &jacobian.q_q,
            (true, false) => &jacobian.q_v,
            (false, true) => &jacobian.v_q,
            (false, false) => &jacobian.v_v,
        };
        block[(row % N, column % N)]
    };
    let (mut largest, mut worst) = (0.0f64, 0.0f64);
    for column in 0..2 * N {
        for row in 0..2 * N {
            let exact = entry(row, column);
            let bound = (coarse[column][row] - fine[column][row]).abs() + rounding;
            let error = (exact - fine[column][row]).abs();
            assert!(
                error <= bound,
                "{label}: ∂x'_{row}/∂x_{column} = {exact:e}, central differences \
                 {:e}: error {error:e} above the bound {bound:e}",
                fine[column][row]
            );
            largest = largest.max(exact.abs());
            worst = worst.max(error / bound);
        }
    }
    (largest, worst)
}
