//! The linear solves `mechanism!` specializes to a model's structural nonzeros (the
//! acceleration `a = −(M + βh² H)⁻¹ ∇V` of Z&Ss, Z&S and stiff Z&Ss, unrolled over the nonzeros
//! of `M + βh² H` and their fill; SPOOK's Schur complement `G M⁻¹ Gᵀ + Σ` for a constant
//! diagonal `M`) against the runtime's generic dense kernels, which a wrapper that hides the
//! generated code makes the integrators use:
//!
//! - where the generated `LDLᵀ` eliminates in the coordinates' order (the double pendulum's
//!   dense matrix) it does the generic root-free Cholesky's operations in its order with the
//!   structural zeros left out, so whole trajectories agree exactly (`==` on every component,
//!   which also equates `0.0` and `−0.0`); where it eliminates in another order (the
//!   chain's banded matrix, from both ends or dissected) one step from the same state agrees to rounding;
//! - one solve agrees with nalgebra's LU of the assembled matrix to the conditioning;
//! - an indefinite `M + βh² H` (compressed rods) is declined by the generated code and stepped
//!   by the generic pivoted LU, again exactly as without the generated code;
//! - the mass solve `M⁻¹ b` of a constant diagonal `M` (Z&S's correction) is the generic
//!   Cholesky's scaling, so Z&S's trajectories agree exactly too; a mass that is not positive
//!   is declined and reported by the generic Cholesky;
//! - the banded 10-link chain is solved by the generated code (it does not decline);
//! - SPOOK's generated step agrees with the generic one from the same state to a few ulps
//!   (the sums of `G M⁻¹ Gᵀ` may run in another order than nalgebra's product), along a
//!   trajectory of the double pendulum and of the chain.

#[path = "../benches/peer/chain10.rs"]
mod chain10;

use chain10::Chain10;
use mechanism::models::DoublePendulum;
use mechanism::runtime::{
    AppliedForces, GeneratedSolve, Holonomic, Inertia, Integrator, Nonholonomic, Penalized,
    PenalizedHessian, PenalizedPotential, PenaltyHessian, Potential, PotentialHessian,
    PotentialThirdDerivative, Regularization, SMatrix, SVector, SplitPotential, Spook, State,
    StepError, ZhangSkeel, ZhangSkeelSimplified, ZhangSkeelStiff,
};

/// A model seen only through the runtime's traits, without its generated solves (the
/// provided methods keep their default, `NotGenerated`): the integrators then run their generic
/// dense kernels.
struct Generic<'a, Model>(&'a Model);

impl<const N: usize, Model: Inertia<N>> Inertia<N> for Generic<'_, Model> {
    const CONSTANT_MASS: bool = Model::CONSTANT_MASS;
    fn mass_matrix(&self, q: &SVector<f64, N>, m: &mut SMatrix<f64, N, N>) {
        self.0.mass_matrix(q, m);
    }
    fn non_finite_parameter(&self) -> Option<(&'static str, f64)> {
        self.0.non_finite_parameter()
    }
}

impl<const N: usize, Model: Potential<N>> Potential<N> for Generic<'_, Model> {
    fn potential(&self, q: &SVector<f64, N>) -> f64 {
        self.0.potential(q)
    }
    fn potential_gradient(&self, q: &SVector<f64, N>, grad: &mut SVector<f64, N>) {
        self.0.potential_gradient(q, grad);
    }
}

impl<const N: usize, Model: PotentialHessian<N>> PotentialHessian<N> for Generic<'_, Model> {
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

impl<const N: usize, Model: PotentialThirdDerivative<N>> PotentialThirdDerivative<N>
    for Generic<'_, Model>
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

impl<const N: usize, Model: SplitPotential<N>> SplitPotential<N> for Generic<'_, Model> {
    fn stiff_hessian(&self, q: &SVector<f64, N>, hess: &mut SMatrix<f64, N, N>) {
        self.0.stiff_hessian(q, hess);
    }
}

impl<const N: usize, const M: usize, Model: Holonomic<N, M>> Holonomic<N, M>
    for Generic<'_, Model>
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
}

impl<const N: usize, Model: Nonholonomic<N, 0>> Nonholonomic<N, 0> for Generic<'_, Model> {
    const NONHOLONOMIC: [&'static str; 0] = [];
    fn nonholonomic_matrix(&self, q: &SVector<f64, N>, a: &mut SMatrix<f64, 0, N>) {
        self.0.nonholonomic_matrix(q, a);
    }
    fn nonholonomic_drive(&self, t: f64, w: &mut SVector<f64, 0>) {
        self.0.nonholonomic_drive(t, w);
    }
}

impl<const N: usize, Model: AppliedForces<N>> AppliedForces<N> for Generic<'_, Model> {
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

/// Steps `model` and its generic view side by side and asserts equal states at every step;
/// returns the number of steps.
fn lockstep<const N: usize, Model, I>(
    model: &Model,
    mut generated: I,
    mut generic: I,
    start: State<N>,
    steps: usize,
) where
    I: Integrator<Model, N> + for<'a> Integrator<Generic<'a, Model>, N>,
{
    let view = Generic(model);
    let (mut a, mut b) = (start, start);
    for k in 0..steps {
        let (x, y) = (
            Integrator::<Model, N>::step(&mut generated, model, &mut a),
            Integrator::<Generic<Model>, N>::step(&mut generic, &view, &mut b),
        );
        assert!(x.is_ok() && y.is_ok(), "step {k} (N = {N}): {x:?} {y:?}");
        assert!(
            a.q == b.q && a.v == b.v,
            "step {k}: {:?} {:?} vs {:?} {:?}",
            a.q,
            a.v,
            b.q,
            b.v
        );
    }
}

fn double_pendulum() -> Penalized<DoublePendulum> {
    Penalized::new(DoublePendulum::default(), 20.0)
}

/// Tao–Owhadi §4.1's start: the second rod at 45°, at rest, on the constraints.
fn moving_state() -> State<4> {
    DoublePendulum::initial_state()
}

#[test]
fn generated_solves_step_exactly_as_the_generic_kernels() {
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
    lockstep(
        &model,
        ZhangSkeelSimplified::<4>::new(h).unwrap(),
        ZhangSkeelSimplified::<4>::new(h).unwrap(),
        moving_state(),
        steps,
    );
    lockstep(
        &model,
        ZhangSkeel::<4>::new(h).unwrap(),
        ZhangSkeel::<4>::new(h).unwrap(),
        moving_state(),
        steps,
    );
    lockstep(
        &model,
        ZhangSkeelStiff::<4>::new(h).unwrap(),
        ZhangSkeelStiff::<4>::new(h).unwrap(),
        moving_state(),
        steps,
    );
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
        let worst = chain_accelerations_against_lu(start, 1000, stiff);
        println!("chain of 10, stiff = {stiff}: largest error / (n κ ε |a|) {worst:.2}");
        assert!(worst < 1.0, "stiff = {stiff}: {worst}");
    }
}

/// Steps the penalized 10-link chain from `start` with the generic Z&Ss (or stiff Z&Ss) and
/// returns, over the states, the largest error of the generated acceleration against nalgebra's
/// LU of the assembled `M + βh² H`, in units of the forward error bound `n κ ε |a|` of a
/// backward-stable solve (`κ` the 2-norm condition number, from the singular values).
fn chain_accelerations_against_lu(start: State<20>, steps: usize, stiff: bool) -> f64 {
    let (omega, h) = (20.0, 0.05);
    let c = 0.4 * h * h;
    let (model, chain) = (
        Chain10::default(),
        Penalized::new(Chain10::default(), omega),
    );
    let view = Generic(&chain);
    let (mut zss, mut zss_stiff) = (
        ZhangSkeelSimplified::<20>::new(h).unwrap(),
        ZhangSkeelStiff::<20>::new(h).unwrap(),
    );
    let (mut state, mut worst, mut declined) = (start, 0.0f64, 0);
    for _ in 0..steps {
        let (result, a, mass, hess, expected) =
            chain_solves(&model, omega, &SVector::from(state.q), c, stiff);
        let eigenvalues = (mass + hess * c).symmetric_eigenvalues();
        if eigenvalues.min() <= 0.0 {
            // Compressed rods make M + βh² Hess W indefinite: declined (and stepped by the
            // generic LU, tested above), never solved wrong.
            assert_eq!(result, GeneratedSolve::Declined);
            declined += 1;
        } else {
            assert_eq!(result, GeneratedSolve::Solved);
        }
        let singular = (mass + hess * c).singular_values();
        let kappa = singular.max() / singular.min();
        let bound = 20.0 * kappa * f64::EPSILON * expected.amax();
        if result == GeneratedSolve::Solved {
            worst = worst.max((a - expected).amax() / bound);
        }
        if stiff {
            Integrator::<Generic<_>, 20>::step(&mut zss_stiff, &view, &mut state).unwrap();
        } else {
            Integrator::<Generic<_>, 20>::step(&mut zss, &view, &mut state).unwrap();
        }
    }
    println!("chain of 10, stiff = {stiff}: {declined} of {steps} states declined");
    assert!(declined < steps / 10, "{declined} of {steps} declined");
    worst
}

/// The chain's generated acceleration at `q` (Z&Ss's, or stiff Z&Ss's with the penalty
/// Hessian), with `M`, the Hessian it factors, and [`dense_solve`]'s answer from them.
#[allow(clippy::type_complexity)]
fn chain_solves(
    model: &Chain10,
    omega: f64,
    q: &SVector<f64, 20>,
    c: f64,
    stiff: bool,
) -> (
    GeneratedSolve,
    SVector<f64, 20>,
    SMatrix<f64, 20, 20>,
    SMatrix<f64, 20, 20>,
    SVector<f64, 20>,
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
        let (result, a, _, _, expected) = chain_solves(&model, omega, &q, c, stiff);
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
    lockstep(
        &model,
        ZhangSkeelSimplified::<4>::new(0.1).unwrap(),
        ZhangSkeelSimplified::<4>::new(0.1).unwrap(),
        compressed,
        50,
    );
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
    Model: Inertia<N> + Potential<N> + Holonomic<N, M> + Nonholonomic<N, 0> + AppliedForces<N>,
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
        let scale = state
            .q
            .iter()
            .chain(&state.v)
            .fold(1.0f64, |m, x| m.max(x.abs()));
        let difference = state
            .q
            .iter()
            .zip(&other.q)
            .chain(state.v.iter().zip(&other.v))
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        worst = worst.max(difference / scale);
    }
    worst
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
