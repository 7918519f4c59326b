//! The Zhang–Skeel family's generated solves: the block `LDLᵀ` of `M + βh² H` against the
//! generic Cholesky and an LU of the assembled matrix, an indefinite matrix declined to the
//! generic LU, a mass that is not positive declined to the generic Cholesky.

use mechanism::mechanism;
use mechanism::models::{Chain10, DoublePendulum};
use mechanism::runtime::{
    EnergyGuard, GeneratedSolve, Inertia, Integrator, Penalized, PenalizedHessian, PenaltyHessian,
    PotentialHessian, SMatrix, SVector, SplitPotential, State, StepError, ZhangSkeel,
    ZhangSkeelSimplified, ZhangSkeelStiff,
};

use super::{state_difference, Generic};

/// Steps the generic view of `model` with `stepper` from `start` for `steps` steps and, at
/// every state on that trajectory, steps `model` itself with a copy of the stepper taken just
/// before: the copy carries the acceleration the generic step computed at exactly this state,
/// so it runs the generated fast path (the update, the generated solve at `x_{k+1}`, one
/// finiteness test). Asserts both steps succeed and their states agree to `tolerance` times
/// `max(1, |q|∞, |v|∞)`; returns the largest difference in those units.
///
/// The two steps share `x_{k+1}` and `a_k`; they differ only by the solve for `a_{k+1}`, the
/// generated block `LDLᵀ` against the generic Cholesky of the same `M + βh² H`. Both are
/// backward stable, so their accelerations differ by at most about `2 n κ ε |a|`
/// ([`accelerations_against_lu`] checks each against that bound), and `v_{k+1}` by `h/2` of
/// that.
fn one_step_agreement<const N: usize, Model, I>(
    model: &Model,
    mut stepper: I,
    start: State<N>,
    steps: usize,
    tolerance: f64,
) -> f64
where
    I: Integrator<Model, N> + for<'a> Integrator<Generic<'a, Model>, N> + Clone,
{
    let view = Generic(model);
    let (mut state, mut worst) = (start, 0.0f64);
    for k in 0..steps {
        let (mut copy, mut generated) = (stepper.clone(), state);
        let x = Integrator::<Model, N>::step(&mut copy, model, &mut generated);
        let y = Integrator::<Generic<Model>, N>::step(&mut stepper, &view, &mut state);
        assert!(x.is_ok() && y.is_ok(), "step {k} (N = {N}): {x:?} {y:?}");
        let (difference, scale) = state_difference(&generated, &state);
        worst = worst.max(difference / scale);
        assert!(
            difference <= tolerance * scale && generated.t == state.t,
            "step {k}: {generated:?} vs {state:?}"
        );
    }
    worst
}

fn double_pendulum() -> Penalized<DoublePendulum> {
    Penalized::new(DoublePendulum::default(), 20.0)
}

/// Tao–Owhadi §4.1's start: the second rod at 45°, at rest, on the constraints.
fn moving_state() -> State<4> {
    DoublePendulum::initial_state()
}

#[test]
fn generated_solves_step_close_to_the_generic_kernels() {
    let model = double_pendulum();
    let (h, steps) = (0.1, 2000);
    // The generated code runs (rather than declining) for every scheme below.
    let (q, c, mut a) = (
        SVector::from(moving_state().q),
        0.4 * h * h,
        SVector::zeros(),
    );
    assert_eq!(
        model.implicit_acceleration(&q, c, &mut a),
        GeneratedSolve::Solved
    );
    assert_eq!(
        model.stiff_implicit_acceleration(&q, c, &mut a),
        GeneratedSolve::Solved
    );
    // Z&S's M⁻¹ (a·V‴·a) runs the generated scaling by the constant diagonal's reciprocals.
    let mut b = SVector::from([1.0, -2.0, 3.0, 0.5]);
    assert_eq!(model.mass_solve(&q, &mut b), GeneratedSolve::Solved);
    // Along each scheme's generic trajectory, one step with the generated solve agrees with the
    // generic step to 1e-12 of the state. Both solves are within n κ ε |a| of the exact
    // acceleration (checked below, state by state), and v_{k+1} differs by h/2 of their
    // difference; the measured differences are below 1e-16, a wrong solve is off by O(h |a|).
    let tolerance = 1e-12;
    let worst = [
        one_step_agreement(
            &model,
            ZhangSkeelSimplified::<4>::new(h).unwrap(),
            moving_state(),
            steps,
            tolerance,
        ),
        one_step_agreement(
            &model,
            ZhangSkeel::<4>::new(h).unwrap(),
            moving_state(),
            steps,
            tolerance,
        ),
        one_step_agreement(
            &model,
            ZhangSkeelStiff::<4>::new(h).unwrap(),
            moving_state(),
            steps,
            tolerance,
        ),
    ];
    println!(
        "double pendulum, Z&Ss / Z&S / stiff Z&Ss: largest difference of one step {:?}",
        worst.map(|w| format!("{w:.1e}"))
    );
    for stiff in [false, true] {
        let worst =
            accelerations_against_lu(&DoublePendulum::default(), moving_state(), h, steps, stiff);
        println!("double pendulum, stiff = {stiff}: largest error / (n κ ε |a|) {worst:.2}");
        assert!(worst < 1.0, "stiff = {stiff}: {worst}");
    }
    let chain = Penalized::new(Chain10::default(), 20.0);
    let mut q = [0.0; 20];
    for k in 0..10 {
        // Horizontal at rest, Tao–Owhadi's start: x_k = k √5, y_k = 0.
        q[2 * k] = 5f64.sqrt() * (k + 1) as f64;
    }
    let start = State::new(0.0, q, [0.0; 20]);
    let (q, c, mut a) = (SVector::from(q), 0.4 * 0.05 * 0.05, SVector::zeros());
    assert_eq!(
        chain.implicit_acceleration(&q, c, &mut a),
        GeneratedSolve::Solved
    );
    assert_eq!(
        chain.stiff_implicit_acceleration(&q, c, &mut a),
        GeneratedSolve::Solved
    );
    // The chain's banded matrix is factored in another order (from both ends or dissected: a
    // shallower chain of divisions), so its sums run in another order than the generic kernel's and the
    // trajectories part by rounding: along the generic trajectory, each generated acceleration
    // is checked against an LU of the assembled matrix instead.
    for stiff in [false, true] {
        let worst = accelerations_against_lu(&Chain10::default(), start, 0.05, 1000, stiff);
        println!("chain of 10, stiff = {stiff}: largest error / (n κ ε |a|) {worst:.2}");
        assert!(worst < 1.0, "stiff = {stiff}: {worst}");
    }
}

mechanism! {
    /// A chain of four unit-mass pendula (`g = 1`, `L² = 5`). Its factorization from both ends
    /// defers a block's division ([`Factor::defer_where_faster`] in the macro's `ordering`):
    /// the block next to an end is factored scaled by that end's determinant, and the middle
    /// block, updated by two blocks, reads the deferred block's entries unscaled.
    struct Chain4 {
        coordinates: [x1, y1, x2, y2, x3, y3, x4, y4],
        kinetic: 0.5
            * (dot(x1).powi(2) + dot(y1).powi(2) + dot(x2).powi(2) + dot(y2).powi(2) +
                dot(x3).powi(2) + dot(y3).powi(2) + dot(x4).powi(2) + dot(y4).powi(2)),
        potential: y1 + y2 + y3 + y4,
        holonomic: {
            rod1: x1.powi(2) + y1.powi(2) - 5.0,
            rod2: (x2 - x1).powi(2) + (y2 - y1).powi(2) - 5.0,
            rod3: (x3 - x2).powi(2) + (y3 - y2).powi(2) - 5.0,
            rod4: (x4 - x3).powi(2) + (y4 - y3).powi(2) - 5.0,
        },
        integrators: [zss, zss_stiff],
    }
}

#[test]
fn a_deferred_division_solves_within_the_error_bound_of_a_backward_stable_solve() {
    // Horizontal at rest (x_k = k √5, y_k = 0), then falling: the rods stretch and compress
    // under the penalty, and the deferred block's scale det_K changes with them.
    let mut q = [0.0; 8];
    for k in 0..4 {
        q[2 * k] = 5f64.sqrt() * (k + 1) as f64;
    }
    let (c, mut a) = (0.4 * 0.05 * 0.05, SVector::zeros());
    let chain = Penalized::new(Chain4::default(), 20.0);
    assert_eq!(
        chain.implicit_acceleration(&SVector::from(q), c, &mut a),
        GeneratedSolve::Solved
    );
    let start = State::new(0.0, q, [0.0; 8]);
    for stiff in [false, true] {
        let worst = accelerations_against_lu(&Chain4::default(), start, 0.05, 1000, stiff);
        println!("chain of 4, stiff = {stiff}: largest error / (n κ ε |a|) {worst:.2}");
        assert!(worst < 1.0, "stiff = {stiff}: {worst}");
    }
}

/// Steps `model` penalized at `ω = 20` from `start` with the generic Z&Ss (or stiff Z&Ss) at
/// step size `h` and returns, over the states, the largest error of the generated acceleration
/// against nalgebra's LU of the assembled `M + βh² H`, in units of the forward error bound
/// `n κ ε |a|` of a backward-stable solve (`κ` the 2-norm condition number, from the singular
/// values).
fn accelerations_against_lu<const N: usize, Model>(
    model: &Model,
    start: State<N>,
    h: f64,
    steps: usize,
    stiff: bool,
) -> f64
where
    Model: Clone + Inertia<N> + PenalizedHessian<N> + PenaltyHessian<N>,
    ZhangSkeelSimplified<N>: for<'a> Integrator<Generic<'a, Penalized<Model>>, N>,
    ZhangSkeelStiff<N>: for<'a> Integrator<Generic<'a, Penalized<Model>>, N>,
{
    let omega = 20.0;
    let c = 0.4 * h * h;
    let penalized = Penalized::new(model.clone(), omega);
    let view = Generic(&penalized);
    // The run is a source of hard states, not a trajectory to trust: the chain falling from the
    // horizontal at h = 0.05 gains an energy of 19 times its scale by t = 30 (H₀ = 0), which the
    // energy guard would refuse.
    let (mut zss, mut zss_stiff) = (
        ZhangSkeelSimplified::<N>::new(h)
            .unwrap()
            .with_energy_guard(EnergyGuard::disabled()),
        ZhangSkeelStiff::<N>::new(h)
            .unwrap()
            .with_energy_guard(EnergyGuard::disabled()),
    );
    let (mut state, mut worst, mut declined) = (start, 0.0f64, 0);
    for _ in 0..steps {
        let (result, a, mass, hess, expected) =
            penalized_solves(model, omega, &SVector::from(state.q), c, stiff);
        let matrix = nalgebra::DMatrix::from_fn(N, N, |i, j| mass[(i, j)] + c * hess[(i, j)]);
        let eigenvalues = matrix.clone().symmetric_eigenvalues();
        if eigenvalues.min() <= 0.0 {
            // Compressed rods make M + βh² Hess W indefinite: declined (and stepped by the
            // generic LU, tested above), never solved wrong.
            assert_eq!(result, GeneratedSolve::Declined);
            declined += 1;
        } else {
            assert_eq!(result, GeneratedSolve::Solved);
        }
        let singular = matrix.singular_values();
        let kappa = singular.max() / singular.min();
        let bound = N as f64 * kappa * f64::EPSILON * expected.amax();
        if result == GeneratedSolve::Solved {
            worst = worst.max((a - expected).amax() / bound);
        }
        if stiff {
            Integrator::<Generic<_>, N>::step(&mut zss_stiff, &view, &mut state).unwrap();
        } else {
            Integrator::<Generic<_>, N>::step(&mut zss, &view, &mut state).unwrap();
        }
    }
    println!("N = {N}, stiff = {stiff}: {declined} of {steps} states declined");
    assert!(declined < steps / 10, "{declined} of {steps} declined");
    worst
}

/// The penalized model's generated acceleration at `q` (Z&Ss's, or stiff Z&Ss's with the
/// penalty Hessian), with `M`, the Hessian it factors, and [`dense_solve`]'s answer from them.
#[allow(clippy::type_complexity)]
fn penalized_solves<const N: usize, Model: Inertia<N> + PenalizedHessian<N> + PenaltyHessian<N>>(
    model: &Model,
    omega: f64,
    q: &SVector<f64, N>,
    c: f64,
    stiff: bool,
) -> (
    GeneratedSolve,
    SVector<f64, N>,
    SMatrix<f64, N, N>,
    SMatrix<f64, N, N>,
    SVector<f64, N>,
) {
    let (mut mass, mut hess, mut grad) = (SMatrix::zeros(), SMatrix::zeros(), SVector::zeros());
    model.mass_matrix(q, &mut mass);
    let mut a = SVector::zeros();
    let result = if stiff {
        model.penalized_potential_gradient(omega, q, &mut grad);
        model.penalty_hessian(omega, q, &mut hess);
        model.penalty_implicit_acceleration(omega, q, c, &mut a)
    } else {
        model.penalized_potential_gradient_hessian(omega, q, &mut grad, &mut hess);
        model.penalized_implicit_acceleration(omega, q, c, &mut a)
    };
    let expected = dense_solve(&mass, &hess, &grad, c);
    (result, a, mass, hess, expected)
}

/// Returns `−(M + c H)⁻¹ g` by nalgebra's LU of the assembled dense matrix.
fn dense_solve<const N: usize>(
    mass: &SMatrix<f64, N, N>,
    hess: &SMatrix<f64, N, N>,
    grad: &SVector<f64, N>,
    c: f64,
) -> SVector<f64, N> {
    let matrix = nalgebra::DMatrix::from_fn(N, N, |i, j| mass[(i, j)] + c * hess[(i, j)]);
    let rhs = nalgebra::DVector::from_fn(N, |i, _| -grad[i]);
    let x = matrix.lu().solve(&rhs).expect("a regular matrix");
    SVector::from_fn(|i, _| x[i])
}

#[test]
fn a_generated_solve_agrees_with_an_lu_of_the_assembled_matrix() {
    let (model, c) = (Chain10::default(), 0.4 * 0.05 * 0.05);
    let mut q = SVector::<f64, 20>::zeros();
    for k in 0..20 {
        // Near the horizontal start, every rod a little off its length.
        q[k] = if k % 2 == 0 {
            2.3 * (k / 2 + 1) as f64 + 0.01 * k as f64
        } else {
            -0.05 * k as f64
        };
    }
    for (omega, stiff) in [(20.0, false), (20.0, true)] {
        let (result, a, _, _, expected) = penalized_solves(&model, omega, &q, c, stiff);
        assert_eq!(result, GeneratedSolve::Solved);
        // κ(M + cH) ≈ 1 + c·8ω²·5 = 9 here: agreement to a few hundred ulps of |a|.
        let error = (a - expected).amax();
        assert!(
            error < 1e-12 * expected.amax(),
            "stiff = {stiff}: {error:e} of {}",
            expected.amax()
        );
    }
}

#[test]
fn an_indefinite_matrix_is_declined_and_stepped_by_the_generic_lu() {
    // Compressed rods (|d|² = 1.25 < 5): 2ω²(|d|² − L²) = −3000 across each rod, so
    // M + βh² Hess W has a negative eigenvalue at h = 0.1 (1 − 0.4 · 0.01 · 3000 < 0).
    let model = double_pendulum();
    let compressed = State::new(0.0, [0.5, -1.0, 1.0, -2.0], [0.0; 4]);
    let mut a = SVector::zeros();
    let q = SVector::from(compressed.q);
    assert_eq!(
        model.implicit_acceleration(&q, 0.4 * 0.1 * 0.1, &mut a),
        GeneratedSolve::Declined
    );
    // Declined there, the acceleration at the start comes from the generic pivoted LU; along
    // the trajectory, where the rods stretch again and the generated solve takes over (from the
    // first x_{k+1} on), each step agrees as in
    // `generated_solves_step_close_to_the_generic_kernels`.
    let zss = ZhangSkeelSimplified::<4>::new(0.1).unwrap();
    one_step_agreement(&model, zss, compressed, 50, 1e-12);
}

#[test]
fn a_mass_that_is_not_positive_is_declined_and_reported_by_the_generic_cholesky() {
    let q = SVector::from(moving_state().q);
    for (m1, singular) in [(0.0, true), (-1.0, false)] {
        let model = Penalized::new(
            DoublePendulum {
                m1,
                ..DoublePendulum::default()
            },
            20.0,
        );
        let mut b = SVector::from([1.0, -2.0, 3.0, 0.5]);
        assert_eq!(model.mass_solve(&q, &mut b), GeneratedSolve::Declined);
        assert_eq!(
            b,
            SVector::from([1.0, -2.0, 3.0, 0.5]),
            "b written on decline"
        );
        let mut state = moving_state();
        let err = ZhangSkeel::<4>::new(0.1)
            .unwrap()
            .step(&model, &mut state)
            .unwrap_err();
        let expected = if singular {
            matches!(
                err,
                StepError::Singular {
                    matrix: "mass matrix",
                    ..
                }
            )
        } else {
            matches!(
                err,
                StepError::NotPositiveDefinite {
                    matrix: "mass matrix",
                    row: 0,
                    ..
                }
            )
        };
        assert!(expected, "m1 = {m1}: {err:?}");
        assert_eq!(state, moving_state(), "state changed by a failed step");
    }
}
