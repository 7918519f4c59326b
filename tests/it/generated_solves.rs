//! The linear solves `mechanism!` specializes to a model's structural nonzeros (the
//! acceleration `a = −(M + βh² H)⁻¹ ∇V` of Z&Ss, Z&S and stiff Z&Ss, unrolled over the nonzeros
//! of `M + βh² H` and their fill; SPOOK's Schur complement `G M⁻¹ Gᵀ + Σ` for a constant
//! diagonal `M`) against the runtime's generic dense kernels, which a wrapper that hides the
//! generated code makes the integrators use:
//!
//! - the generated block `LDLᵀ` (`2 × 2` pivots along paths of the elimination tree, in the
//!   coordinates' order on the double pendulum's dense matrix, from both ends on the chain's
//!   banded one) is another backward-stable factorization than the generic Cholesky: along
//!   each scheme's generic trajectory, one step through the generated fast path agrees with
//!   the generic step from the same state to rounding, and each generated acceleration agrees
//!   with nalgebra's LU of the assembled matrix within `n κ ε |a|`;
//! - an indefinite `M + βh² H` (compressed rods) is declined by the generated code and solved
//!   by the generic pivoted LU;
//! - the mass solve `M⁻¹ b` of a constant diagonal `M` (Z&S's correction) is the generic
//!   Cholesky's scaling; a mass that is not positive is declined and reported by the generic
//!   Cholesky;
//! - the banded 10-link chain is solved by the generated code (it does not decline);
//! - SPOOK's generated step agrees with the generic one from the same state to a few ulps
//!   (the sums of `G M⁻¹ Gᵀ` may run in another order than nalgebra's product), along a
//!   trajectory of the double pendulum and of the chain;
//! - SPOOK's generated whole step (`Holonomic::spook_step`: `∇V`, `f`, `g`, `G`, the Schur
//!   solve, `q_{k+1}` and the guard's rows in one function) is the generic step around the
//!   generated Schur solve bit for bit (where multiply-adds are not fused), multipliers included,
//!   on the double pendulum, the chain and a pendulum with dissipation, a force of time and
//!   per-row regularization; its `Σ`, `Υ` kept between steps follow the model stepped; and
//!   every failure (non-finite parameter or state, a diverging step, a mass that is not
//!   positive, an ideal row at a singular point) is the generic step's, with the state
//!   unchanged.

#[path = "../../benches/peer/chain10.rs"]
mod chain10;

use chain10::Chain10;
use mechanism::mechanism;
use mechanism::models::DoublePendulum;
use mechanism::runtime::{
    AppliedForces, ConstantMass, DivergenceGuard, EnergyGuard, GeneratedSolve, Holonomic, Inertia,
    Integrator, Nonholonomic, Penalized, PenalizedHessian, PenaltyHessian, Potential,
    PotentialHessian, PotentialThirdDerivative, Regularization, Relaxation, SMatrix, SVector,
    SplitPotential, Spook, SpookCoefficients, State, StepError, ZhangSkeel, ZhangSkeelSimplified,
    ZhangSkeelStiff,
};

/// A model seen only through the runtime's traits, without its generated solves (the
/// provided methods keep their default, `NotGenerated`): the integrators then run their generic
/// dense kernels.
///
/// With `KEEP_SPOOK_SOLVE` the view keeps the generated Schur solve of SPOOK
/// (`Holonomic::spook_solve`) and hides only the generated whole step (`spook_step`): SPOOK
/// then runs its generic step around the generated solve, which the generated step must
/// reproduce.
struct Generic<'a, Model, const KEEP_SPOOK_SOLVE: bool = false>(&'a Model);

impl<const N: usize, const KEEP_SPOOK_SOLVE: bool, Model: ConstantMass<N>> ConstantMass<N>
    for Generic<'_, Model, KEEP_SPOOK_SOLVE>
{
}

impl<const N: usize, const KEEP_SPOOK_SOLVE: bool, Model: Inertia<N>> Inertia<N>
    for Generic<'_, Model, KEEP_SPOOK_SOLVE>
{
    const CONSTANT_MASS: bool = Model::CONSTANT_MASS;
    fn mass_matrix(&self, q: &SVector<f64, N>, m: &mut SMatrix<f64, N, N>) {
        self.0.mass_matrix(q, m);
    }
    fn non_finite_parameter(&self) -> Option<(&'static str, f64)> {
        self.0.non_finite_parameter()
    }
}

impl<const N: usize, const KEEP_SPOOK_SOLVE: bool, Model: Potential<N>> Potential<N>
    for Generic<'_, Model, KEEP_SPOOK_SOLVE>
{
    fn potential(&self, q: &SVector<f64, N>) -> f64 {
        self.0.potential(q)
    }
    fn potential_gradient(&self, q: &SVector<f64, N>, grad: &mut SVector<f64, N>) {
        self.0.potential_gradient(q, grad);
    }
}

impl<const N: usize, const KEEP_SPOOK_SOLVE: bool, Model: PotentialHessian<N>> PotentialHessian<N>
    for Generic<'_, Model, KEEP_SPOOK_SOLVE>
{
    fn potential_hessian(&self, q: &SVector<f64, N>, hess: &mut SMatrix<f64, N, N>) {
        self.0.potential_hessian(q, hess);
    }
    fn potential_gradient_hessian(
        &self,
        q: &SVector<f64, N>,
        grad: &mut SVector<f64, N>,
        hess: &mut SMatrix<f64, N, N>,
    ) {
        self.0.potential_gradient_hessian(q, grad, hess);
    }
}

impl<const N: usize, const KEEP_SPOOK_SOLVE: bool, Model: PotentialThirdDerivative<N>>
    PotentialThirdDerivative<N> for Generic<'_, Model, KEEP_SPOOK_SOLVE>
{
    fn potential_third_contraction(
        &self,
        q: &SVector<f64, N>,
        a: &SVector<f64, N>,
        out: &mut SVector<f64, N>,
    ) {
        self.0.potential_third_contraction(q, a, out);
    }
}

impl<const N: usize, const KEEP_SPOOK_SOLVE: bool, Model: SplitPotential<N>> SplitPotential<N>
    for Generic<'_, Model, KEEP_SPOOK_SOLVE>
{
    fn stiff_hessian(&self, q: &SVector<f64, N>, hess: &mut SMatrix<f64, N, N>) {
        self.0.stiff_hessian(q, hess);
    }
}

impl<const N: usize, const KEEP_SPOOK_SOLVE: bool, const M: usize, Model: Holonomic<N, M>>
    Holonomic<N, M> for Generic<'_, Model, KEEP_SPOOK_SOLVE>
{
    const CONSTRAINTS: [&'static str; M] = Model::CONSTRAINTS;
    fn constraints(&self, q: &SVector<f64, N>, t: f64, g: &mut SVector<f64, M>) {
        self.0.constraints(q, t, g);
    }
    fn constraint_jacobian(&self, q: &SVector<f64, N>, t: f64, jac: &mut SMatrix<f64, M, N>) {
        self.0.constraint_jacobian(q, t, jac);
    }
    fn constraints_and_jacobian(
        &self,
        q: &SVector<f64, N>,
        t: f64,
        g: &mut SVector<f64, M>,
        jac: &mut SMatrix<f64, M, N>,
    ) {
        self.0.constraints_and_jacobian(q, t, g, jac);
    }
    fn regularization(&self, row: usize) -> Regularization {
        self.0.regularization(row)
    }
    fn spook_solve(
        &self,
        mass: &SMatrix<f64, N, N>,
        jac: &SMatrix<f64, M, N>,
        r: &SVector<f64, N>,
        sigma: &SVector<f64, M>,
        rhs: &SVector<f64, M>,
        v: &mut SVector<f64, N>,
        lambda: &mut SVector<f64, M>,
    ) -> GeneratedSolve {
        if KEEP_SPOOK_SOLVE {
            self.0.spook_solve(mass, jac, r, sigma, rhs, v, lambda)
        } else {
            GeneratedSolve::NotGenerated
        }
    }
}

impl<const N: usize, const KEEP_SPOOK_SOLVE: bool, Model: Nonholonomic<N, 0>> Nonholonomic<N, 0>
    for Generic<'_, Model, KEEP_SPOOK_SOLVE>
{
    const NONHOLONOMIC: [&'static str; 0] = [];
    fn nonholonomic_matrix(&self, q: &SVector<f64, N>, a: &mut SMatrix<f64, 0, N>) {
        self.0.nonholonomic_matrix(q, a);
    }
    fn nonholonomic_drive(&self, t: f64, w: &mut SVector<f64, 0>) {
        self.0.nonholonomic_drive(t, w);
    }
}

impl<const N: usize, const KEEP_SPOOK_SOLVE: bool, Model: AppliedForces<N>> AppliedForces<N>
    for Generic<'_, Model, KEEP_SPOOK_SOLVE>
{
    fn applied_force(
        &self,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        t: f64,
        out: &mut SVector<f64, N>,
    ) {
        self.0.applied_force(q, v, t, out);
    }
}

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

/// Steps `model` with SPOOK along `steps` steps and, from each state, the generic kernels once;
/// returns the largest difference of the two steps' states relative to the state's size.
fn spook_one_step_differences<const N: usize, const M: usize, Model>(
    model: &Model,
    start: State<N>,
    h: f64,
    steps: usize,
) -> f64
where
    Model: ConstantMass<N> + Potential<N> + Holonomic<N, M> + Nonholonomic<N, 0> + AppliedForces<N>,
{
    let view = Generic(model);
    let (mut generated, mut generic) = (
        Spook::<N, M, 0>::new(h).unwrap(),
        Spook::<N, M, 0>::new(h).unwrap(),
    );
    let (mut state, mut worst) = (start, 0.0f64);
    for _ in 0..steps {
        let mut other = state;
        Integrator::<Model, N>::step(&mut generated, model, &mut state).expect("generated step");
        Integrator::<Generic<Model>, N>::step(&mut generic, &view, &mut other)
            .expect("generic step");
        let (difference, scale) = state_difference(&other, &state);
        worst = worst.max(difference / scale);
    }
    worst
}

/// Returns the largest difference between `a` and `b` over `q` and `v`, and the scale
/// `max(1, |q|∞, |v|∞)` of `b`.
fn state_difference<const N: usize>(a: &State<N>, b: &State<N>) -> (f64, f64) {
    let scale = b.q.iter().chain(&b.v).fold(1.0f64, |m, x| m.max(x.abs()));
    let difference =
        a.q.iter()
            .zip(&b.q)
            .chain(a.v.iter().zip(&b.v))
            .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    (difference, scale)
}

#[test]
fn spooks_generated_schur_complement_agrees_with_the_generic_one() {
    // One step from the same state: the same equations with sums in another order, so the
    // steps differ by rounding, `≲ n κ(S) ε` relative with `S ≈ G M⁻¹ Gᵀ` (Σ is tiny at
    // ε = 1e-8): κ ≈ 10 and n = 4 for the double pendulum (≈ 4e-15), κ ≲ 4·10² (the chain's
    // tridiagonal G Gᵀ, `O(links²)`) and n = 20 for the chain (≈ 1e-12). A wrong entry of S or
    // a wrong sign would differ at O(1).
    let (dp, h) = (DoublePendulum::default(), 1.0 / 60.0);
    let (mut v, mut lambda) = (SVector::zeros(), SVector::zeros());
    let start = DoublePendulum::initial_state();
    let (mut g, mut jac, mut mass) = (SVector::zeros(), SMatrix::zeros(), SMatrix::zeros());
    dp.constraints_and_jacobian(&SVector::from(start.q), 0.0, &mut g, &mut jac);
    dp.mass_matrix(&SVector::from(start.q), &mut mass);
    let sigma = SVector::from([1e-3; 2]);
    assert_eq!(
        dp.spook_solve(
            &mass,
            &jac,
            &SVector::from([0.1, 0.2, 0.3, 0.4]),
            &sigma,
            &sigma,
            &mut v,
            &mut lambda
        ),
        GeneratedSolve::Solved
    );
    let worst = spook_one_step_differences::<4, 2, _>(&dp, start, h, 2000);
    println!("SPOOK, double pendulum: largest one-step difference {worst:.1e}");
    assert!(worst < 1e-14, "{worst:e}");
    let chain = Chain10::default();
    let mut q = [0.0; 20];
    for k in 0..10 {
        q[2 * k] = 5f64.sqrt() * (k + 1) as f64;
    }
    let worst =
        spook_one_step_differences::<20, 10, _>(&chain, State::new(0.0, q, [0.0; 20]), 0.05, 1000);
    println!("SPOOK, chain of 10: largest one-step difference {worst:.1e}");
    assert!(worst < 1e-12, "{worst:e}");
}

mechanism! {
    /// The double pendulum with friction, a periodic push on the lower bob and a softer, slower
    /// upper rod: SPOOK's generated step with every term of `r = M v − h ∇V + h f` (dissipation
    /// and a time-dependent force) and a row-specific regularization.
    pub struct PushedPendulum {
        coordinates: [x1, y1, x2, y2],
        parameters: { c = 0.05, f0 = 0.3, w = 2.0 },
        kinetic: 0.5 * (dot(x1).powi(2) + dot(y1).powi(2))
            + (dot(x2).powi(2) + dot(y2).powi(2)),
        potential: y1 + 2.0 * y2,
        holonomic: {
            #[spook(epsilon = 1e-6, tau = 0.05)]
            rod1: x1.powi(2) + y1.powi(2) - 1.0,
            rod2: (x2 - x1).powi(2) + (y2 - y1).powi(2) - 2.0,
        },
        dissipation: 0.5 * c * (dot(x1).powi(2) + dot(y1).powi(2) + dot(x2).powi(2)
            + dot(y2).powi(2)),
        forces: { x2: f0 * (w * t).cos() },
        integrators: [spook],
    }
}

/// Steps `model` with SPOOK at step size `h` (with the regularization `overrides` of some rows)
/// through its generated step (`Holonomic::spook_step`, which must solve at every state) and
/// through the generic step around the generated Schur solve (the view `Generic<_, true>`), from
/// the same state at every step, for `steps` steps; asserts the same new state and multipliers,
/// and the generated step's own output committed unchanged.
///
/// Both do the same operations in the same order, so they agree bit for bit (`==`) where
/// `fma::mul_add` is a plain `a * b + c`. Where the target fuses it, the one emission of `∇V`,
/// `g` and `G` that the generated step shares may fuse other products than the separate
/// emissions the generic step calls (a shared product is not fused), so there they agree to
/// `tolerance` relative to the state's size.
fn spook_lockstep<const N: usize, const M: usize, Model>(
    model: &Model,
    (h, overrides): (f64, [Option<Regularization>; M]),
    start: State<N>,
    steps: usize,
    tolerance: f64,
) where
    Model: ConstantMass<N> + Potential<N> + Holonomic<N, M> + Nonholonomic<N, 0> + AppliedForces<N>,
{
    let tolerance = if cfg!(target_feature = "fma") {
        tolerance
    } else {
        0.0
    };
    let view = Generic::<Model, true>(model);
    let mut spook = Spook::<N, M>::new(h).unwrap();
    let mut regularizations = [Regularization::default(); M];
    for (row, overridden) in overrides.into_iter().enumerate() {
        if let Some(regularization) = overridden {
            spook = spook.with_regularization(row, regularization).unwrap();
        }
        regularizations[row] = overridden.unwrap_or_else(|| model.regularization(row));
    }
    let coefficients = SpookCoefficients::new(h, &regularizations);
    let (mut generated, mut generic) = (spook, spook);
    let mut state = start;
    for k in 0..steps {
        let (mut q, mut v, mut lambda) = (state.q, state.v, SVector::zeros());
        let guard = DivergenceGuard::default();
        assert_eq!(
            model.spook_step(
                &mut q,
                &mut v,
                state.t,
                h,
                &coefficients,
                &guard,
                &mut lambda
            ),
            GeneratedSolve::Solved,
            "step {k}"
        );
        let mut other = state;
        let (x, y) = (
            Integrator::<Model, N>::step(&mut generated, model, &mut state),
            Integrator::<Generic<Model, true>, N>::step(&mut generic, &view, &mut other),
        );
        assert_eq!(x, y, "step {k}");
        assert!(
            state.q == q && state.v == v && *generated.multipliers() == lambda,
            "step {k}: the generated step's output is not what was committed"
        );
        let scale = state
            .q
            .iter()
            .chain(&state.v)
            .chain(generated.multipliers())
            .fold(1.0f64, |m, x| m.max(x.abs()));
        let difference = state
            .q
            .iter()
            .zip(&other.q)
            .chain(state.v.iter().zip(&other.v))
            .chain(generated.multipliers().iter().zip(generic.multipliers()))
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        assert!(
            difference <= tolerance * scale && state.t == other.t,
            "step {k}: {state:?} {:?} vs {other:?} {:?}",
            generated.multipliers(),
            generic.multipliers()
        );
        state = other;
    }
}

#[test]
fn spooks_generated_step_is_the_generic_step() {
    let h = 1.0 / 60.0;
    let start = DoublePendulum::initial_state();
    spook_lockstep(
        &DoublePendulum::default(),
        (h, [None; 2]),
        start,
        2000,
        1e-14,
    );
    let mut q = [0.0; 20];
    for k in 0..10 {
        q[2 * k] = 5f64.sqrt() * (k + 1) as f64;
    }
    let start = State::new(0.0, q, [0.0; 20]);
    spook_lockstep(&Chain10::default(), (0.05, [None; 10]), start, 1000, 1e-12);
    // Dissipation, a force of time, a row's own regularization, and an override.
    let pushed = PushedPendulum::default();
    let start = State::new(0.0, [0.0, -1.0, 1.0, -2.0], [0.5, 0.0, 0.0, 0.3]);
    spook_lockstep(&pushed, (h, [None; 2]), start, 1000, 1e-14);
    let soft = Regularization {
        epsilon: 1e-4,
        tau: Relaxation::Seconds(0.1),
    };
    spook_lockstep(&pushed, (h, [None, Some(soft)]), start, 1000, 1e-14);
}

#[test]
fn spooks_coefficients_follow_the_model_stepped() {
    // One stepper for two models whose rows are regularized differently: its Σ and Υ, kept
    // between steps, are recomputed for each model's rows, so the two trajectories are those
    // of a stepper per model.
    let (pendulum, pushed) = (DoublePendulum::default(), PushedPendulum::default());
    let h = 1.0 / 60.0;
    let mut shared = Spook::<4, 2>::new(h).unwrap();
    let (mut own_pendulum, mut own_pushed) = (shared, shared);
    let start = DoublePendulum::initial_state();
    let (mut a, mut b, mut c, mut d) = (start, start, start, start);
    for _ in 0..200 {
        shared.step(&pendulum, &mut a).unwrap();
        own_pendulum.step(&pendulum, &mut c).unwrap();
        shared.step(&pushed, &mut b).unwrap();
        own_pushed.step(&pushed, &mut d).unwrap();
        assert!(a == c && b == d, "{a:?} {c:?}, {b:?} {d:?}");
    }
}

#[test]
fn spooks_generated_step_fails_as_the_generic_step() {
    // Each case through the stepper with the generated step and through the generic step around
    // the generated Schur solve (the code that stepped these models before the generated step):
    // the same result, and on failure the same error with the state unchanged.
    let h = 1.0 / 60.0;
    let moving = DoublePendulum::initial_state();
    let mut at_two = moving;
    at_two.t = 2.0;
    let mut not_finite = moving;
    not_finite.v[2] = f64::NAN;
    let mut on_the_pivot = moving;
    // The upper rod's Jacobian vanishes at the pivot: with ε = 0 its Schur pivot is zero.
    on_the_pivot.q = SVector::from([0.0, 0.0, 1.0, -2.0]);
    let ideal = Regularization {
        epsilon: 0.0,
        tau: Relaxation::Steps(2.0),
    };
    let cases = [
        (
            "non-finite parameter",
            DoublePendulum {
                l1: f64::NAN,
                ..DoublePendulum::default()
            },
            h,
            moving,
            None,
        ),
        (
            "non-finite state",
            DoublePendulum::default(),
            h,
            not_finite,
            None,
        ),
        (
            "diverging step",
            DoublePendulum::default(),
            1e6,
            at_two,
            None,
        ),
        (
            "negative mass",
            DoublePendulum {
                m1: -1.0,
                ..DoublePendulum::default()
            },
            h,
            moving,
            None,
        ),
        (
            "massless bob",
            DoublePendulum {
                m1: 0.0,
                ..DoublePendulum::default()
            },
            h,
            moving,
            None,
        ),
        (
            "ideal row at its singular point",
            DoublePendulum::default(),
            h,
            on_the_pivot,
            Some(ideal),
        ),
    ];
    for (name, model, h, start, regularization) in cases {
        let mut spook = Spook::<4, 2>::new(h).unwrap();
        if let Some(regularization) = regularization {
            spook = spook.with_regularization(0, regularization).unwrap();
        }
        let (mut generated, mut generic) = (spook, spook);
        let view = Generic::<DoublePendulum, true>(&model);
        let (mut a, mut b) = (start, start);
        let x = Integrator::<DoublePendulum, 4>::step(&mut generated, &model, &mut a);
        let y = Integrator::<Generic<DoublePendulum, true>, 4>::step(&mut generic, &view, &mut b);
        println!("{name}: {x:?}");
        assert_eq!(format!("{x:?}"), format!("{y:?}"), "{name}");
        // Debug strings, so that a NaN left in a state compares equal to itself.
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "{name}");
        assert_eq!(generated.multipliers(), generic.multipliers(), "{name}");
        if x.is_err() {
            assert_eq!(
                format!("{a:?}"),
                format!("{start:?}"),
                "{name}: state changed"
            );
        }
    }
}
