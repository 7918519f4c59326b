//! The carried-acceleration schemes' linear algebra on the fixed-size tier: `SMatrix` kernels
//! on the stack behind [`LinearSolver`].

use nalgebra::{SMatrix, SVector};

use super::{
    CarriedScheme, CarriedTier, EnergyTerms, FullHessian, ImplicitSolve, MassSolve, NewmarkSystem,
    NewtonIterate, RuleDefaults, StiffHessian, ThirdContraction,
};
use crate::error::StepError;
use crate::integrators::checks::{
    all_finite, check_constant_mass, check_finite, check_parameters, check_state,
};
use crate::integrators::energy_guard;
use crate::integrators::mass_factor::MassFactor;
use crate::integrators::newton::Newton;
use crate::integrators::{Integrator, StepReport};
use crate::linalg::{LinearSolver, SymmetricFactor};
use crate::model::{
    ConstantMass, GeneratedSolve, Inertia, Potential, PotentialHessian, PotentialThirdDerivative,
    SplitPotential,
};
use crate::state::State;

use super::{next_position, next_velocity, AccelerationRule};

/// The name of `M + βh² Hess V` in errors.
pub(crate) const IMPLICIT_MATRIX: &str = "M + βh² Hess V";

/// The name of `M + βh² ε⁻¹ Hess V1` in errors.
pub(crate) const STIFF_MATRIX: &str = "M + βh² ε⁻¹ Hess V1";

/// The fixed-size tier of [`CarriedScheme`]: the cached Cholesky factor of `M` and the
/// symmetric factorization of `M + βh² H` (Cholesky, or LU when it is indefinite, as for a
/// penalized potential), both through [`LinearSolver`] on stack arrays.
#[derive(Clone, Copy, Debug, Default)]
pub struct CarriedDense<const N: usize> {
    mass: MassFactor<N>,
    implicit: Option<SymmetricFactor<N>>,
}

impl<const N: usize> CarriedTier for CarriedDense<N> {
    type Vector = [f64; N];
}

/// Returns the result `solved` of a solve `mechanism!` generated for the model, having copied
/// its solution `y` into `io` if it is [`Solved`](GeneratedSolve::Solved): the slice seams'
/// view of the model's `SVector` methods.
///
/// The seams call the generated code directly, not through a closure: a closure is a function
/// of its own, which LLVM declines to inline once the generated body is in it, and the call
/// then passes every vector through memory (the double pendulum's Z&Ss step 35 → 33 ns, the
/// 10-link chain's 150 → 134 ns).
#[inline(always)]
fn written_if_solved<const N: usize>(
    solved: GeneratedSolve,
    y: &SVector<f64, N>,
    io: &mut [f64],
) -> GeneratedSolve {
    if solved == GeneratedSolve::Solved {
        io.copy_from_slice(y.as_slice());
    }
    solved
}

impl<const N: usize, R: RuleDefaults> CarriedScheme<CarriedDense<N>, R> {
    /// Creates the stepper with step size `h` and the method's default `β` (0.4; Verlet has
    /// none) and settings; fails unless `h` is positive and finite.
    pub fn new(h: f64) -> Result<Self, StepError> {
        Self::with_parts(
            h,
            R::DEFAULT_BETA,
            R::default(),
            CarriedDense::default(),
            [0.0; N],
        )
    }
}

impl<const N: usize> CarriedDense<N> {
    /// Factors `M + βh² H` and writes `−(M + βh² H)⁻¹ ∇V` into `out`.
    fn solve_implicit(
        &mut self,
        matrix: &SMatrix<f64, N, N>,
        grad: &SVector<f64, N>,
        name: &'static str,
        out: &mut [f64],
        t: f64,
    ) -> Result<u32, StepError> {
        check_finite(grad, "gradient", t)?;
        let wrap = StepError::linear_algebra(name, t);
        self.implicit.factor(matrix).map_err(&wrap)?;
        out.copy_from_slice(grad.as_slice());
        self.implicit.solve_in_place(out).map_err(&wrap)?;
        out.iter_mut().for_each(|a| *a = -*a);
        Ok(1)
    }
}

impl<Model, const N: usize> MassSolve<Model> for CarriedDense<N>
where
    Model: Inertia<N> + Potential<N> + ?Sized,
{
    fn gradient(&mut self, model: &Model, x: &[f64], grad: &mut [f64]) {
        let mut g = SVector::<f64, N>::zeros();
        model.potential_gradient(&SVector::from_column_slice(x), &mut g);
        grad.copy_from_slice(g.as_slice());
    }

    fn solve_mass(
        &mut self,
        model: &Model,
        x: &[f64],
        b: &mut [f64],
        t: f64,
    ) -> Result<u32, StepError> {
        if self.generated_solve_mass(model, x, b) == GeneratedSolve::Solved {
            // A scaling by the constant diagonal's reciprocals: no factorization.
            return Ok(0);
        }
        let x = SVector::<f64, N>::from_column_slice(x);
        let (chol, factorizations) = self.mass.factor_at(model, &x, t)?;
        let solution = chol.solve(&SVector::from_column_slice(b));
        b.copy_from_slice(solution.as_slice());
        Ok(factorizations)
    }

    #[inline(always)]
    fn generated_solve_mass(&mut self, model: &Model, x: &[f64], b: &mut [f64]) -> GeneratedSolve {
        let mut y = SVector::<f64, N>::from_column_slice(b);
        let solved = model.mass_solve(&SVector::from_column_slice(x), &mut y);
        written_if_solved(solved, &y, b)
    }
}

impl<Model, const N: usize> EnergyTerms<Model> for CarriedDense<N>
where
    Model: Inertia<N> + Potential<N> + ?Sized,
{
    #[inline(always)]
    fn energy(&mut self, model: &Model, x: &[f64], v: &[f64]) -> f64 {
        let (x, v) = (SVector::from_column_slice(x), SVector::from_column_slice(v));
        energy_guard::energy(model, &x, &v)
    }

    fn energy_terms(
        &mut self,
        model: &Model,
        x: &[f64],
        v: &[f64],
        _scratch: &mut [f64],
    ) -> (f64, f64, f64) {
        let (x, v) = (SVector::from_column_slice(x), SVector::from_column_slice(v));
        energy_guard::energy_terms(model, &x, &v)
    }
}

impl<Model, const N: usize> ImplicitSolve<Model, FullHessian> for CarriedDense<N>
where
    Model: Inertia<N> + PotentialHessian<N> + ?Sized,
{
    fn implicit_acceleration(
        &mut self,
        model: &Model,
        x: &[f64],
        beta_h2: f64,
        out: &mut [f64],
        t: f64,
    ) -> Result<u32, StepError> {
        if self.generated_implicit_acceleration(model, x, beta_h2, out) == GeneratedSolve::Solved {
            return Ok(1);
        }
        let x = SVector::<f64, N>::from_column_slice(x);
        let mut mass = SMatrix::<f64, N, N>::zeros();
        model.mass_matrix(&x, &mut mass);
        let mut grad = SVector::<f64, N>::zeros();
        let mut hess = SMatrix::<f64, N, N>::zeros();
        model.potential_gradient_hessian(&x, &mut grad, &mut hess);
        self.solve_implicit(&(mass + hess * beta_h2), &grad, IMPLICIT_MATRIX, out, t)
    }

    #[inline(always)]
    fn generated_implicit_acceleration(
        &mut self,
        model: &Model,
        x: &[f64],
        beta_h2: f64,
        out: &mut [f64],
    ) -> GeneratedSolve {
        let mut a = SVector::<f64, N>::zeros();
        let solved = model.implicit_acceleration(&SVector::from_column_slice(x), beta_h2, &mut a);
        written_if_solved(solved, &a, out)
    }
}

impl<Model, const N: usize> ImplicitSolve<Model, StiffHessian> for CarriedDense<N>
where
    Model: Inertia<N> + SplitPotential<N> + ?Sized,
{
    fn implicit_acceleration(
        &mut self,
        model: &Model,
        x: &[f64],
        beta_h2: f64,
        out: &mut [f64],
        t: f64,
    ) -> Result<u32, StepError> {
        if self.generated_implicit_acceleration(model, x, beta_h2, out) == GeneratedSolve::Solved {
            return Ok(1);
        }
        let x = SVector::<f64, N>::from_column_slice(x);
        let mut mass = SMatrix::<f64, N, N>::zeros();
        model.mass_matrix(&x, &mut mass);
        let mut grad = SVector::<f64, N>::zeros();
        let mut stiff = SMatrix::<f64, N, N>::zeros();
        model.potential_gradient_stiff_hessian(&x, &mut grad, &mut stiff);
        self.solve_implicit(&(mass + stiff * beta_h2), &grad, STIFF_MATRIX, out, t)
    }

    #[inline(always)]
    fn generated_implicit_acceleration(
        &mut self,
        model: &Model,
        x: &[f64],
        beta_h2: f64,
        out: &mut [f64],
    ) -> GeneratedSolve {
        let mut a = SVector::<f64, N>::zeros();
        let solved =
            model.stiff_implicit_acceleration(&SVector::from_column_slice(x), beta_h2, &mut a);
        written_if_solved(solved, &a, out)
    }
}

impl<Model, const N: usize> NewtonIterate<Model, FullHessian> for CarriedDense<N>
where
    Model: Inertia<N> + PotentialHessian<N> + ?Sized,
{
    fn newton_iterate(
        &mut self,
        model: &Model,
        y: &[f64],
        a: &[f64],
        beta_h2: f64,
        out: &mut [f64],
        t: f64,
    ) -> Result<u32, StepError> {
        let (y, a) = (SVector::from_column_slice(y), SVector::from_column_slice(a));
        let mut mass = SMatrix::<f64, N, N>::zeros();
        let mut grad = SVector::<f64, N>::zeros();
        let (_, residual) = newton_residual(model, &y, &a, &mut mass, &mut grad);
        check_finite(&grad, "gradient", t)?;
        let correction =
            newton_correction(model, &y, &mass, residual, beta_h2, &mut self.implicit, t)?;
        out.copy_from_slice((a - correction).as_slice());
        Ok(1)
    }
}

/// The fixed-size tier's hooks keep the arithmetic of the fixed-size Newmark steppers from
/// before the tiers shared the scheme: a Cholesky solve with `M` (cached while a constant `M`
/// is unchanged) rather than the generated scaling, and `β·(h·h)`.
impl<Model, const N: usize> NewmarkSystem<Model> for CarriedDense<N>
where
    Model: Inertia<N> + Potential<N> + ?Sized,
{
    fn start_acceleration(
        &mut self,
        model: &Model,
        q: &[f64],
        out: &mut [f64],
        t: f64,
    ) -> Result<u32, StepError> {
        let q = SVector::<f64, N>::from_column_slice(q);
        let (chol, factorizations) = self.mass.factor_at(model, &q, t)?;
        let mut grad = SVector::<f64, N>::zeros();
        model.potential_gradient(&q, &mut grad);
        check_finite(&grad, "gradient", t)?;
        let a = -chol.solve(&grad);
        check_finite(&a, "acceleration", t)?;
        out.copy_from_slice(a.as_slice());
        Ok(factorizations)
    }

    #[inline(always)]
    fn corrector_coefficient(beta: f64, h: f64) -> f64 {
        beta * (h * h)
    }
}

/// Writes `M(y)` and `∇V(y)` into `mass` and `grad` and returns `(M(y) a, M(y) a + ∇V(y))`:
/// the inertial term and the residual of `M a + ∇V(y) = 0`.
fn newton_residual<Model, const N: usize>(
    model: &Model,
    y: &SVector<f64, N>,
    a: &SVector<f64, N>,
    mass: &mut SMatrix<f64, N, N>,
    grad: &mut SVector<f64, N>,
) -> (SVector<f64, N>, SVector<f64, N>)
where
    Model: Inertia<N> + Potential<N> + ?Sized,
{
    model.mass_matrix(y, mass);
    model.potential_gradient(y, grad);
    let inertial = *mass * a;
    (inertial, inertial + *grad)
}

/// Returns the Newton correction `(M(y) + βh² Hess V(y))⁻¹ residual`, factoring the Jacobian
/// into `jacobian`.
fn newton_correction<Model, const N: usize>(
    model: &Model,
    y: &SVector<f64, N>,
    mass: &SMatrix<f64, N, N>,
    residual: SVector<f64, N>,
    beta_h2: f64,
    jacobian: &mut Option<SymmetricFactor<N>>,
    t: f64,
) -> Result<SVector<f64, N>, StepError>
where
    Model: PotentialHessian<N> + ?Sized,
{
    let mut hess = SMatrix::<f64, N, N>::zeros();
    model.potential_hessian(y, &mut hess);
    let wrap = StepError::linear_algebra(IMPLICIT_MATRIX, t);
    jacobian.factor(&(mass + hess * beta_h2)).map_err(&wrap)?;
    let mut correction = residual;
    jacobian
        .solve_in_place(correction.as_mut_slice())
        .map_err(&wrap)?;
    Ok(correction)
}

/// An acceleration and what it cost.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Solve<const N: usize> {
    pub(crate) a: SVector<f64, N>,
    pub(crate) factorizations: u32,
    pub(crate) iterations: u32,
}

/// Solves `r(a) = M(y) a + ∇V(y) = 0`, `y = base + βh² a`, by Newton from `guess` with the
/// Jacobian `M(y) + βh² Hess V(y)`, until the residual or the correction meets the tolerance
/// of `newton`; an error past its iteration limit or on a residual that is not finite.
pub(crate) fn newton_solve<Model, const N: usize>(
    model: &Model,
    base: &SVector<f64, N>,
    beta_h2: f64,
    guess: SVector<f64, N>,
    newton: Newton,
    t: f64,
) -> Result<Solve<N>, StepError>
where
    Model: Inertia<N> + PotentialHessian<N> + ?Sized,
{
    let mut a = guess;
    let mut iterations = 0usize;
    let mut mass = SMatrix::<f64, N, N>::zeros();
    let mut grad = SVector::<f64, N>::zeros();
    let mut jacobian: Option<SymmetricFactor<N>> = None;
    loop {
        let y = base + a * beta_h2;
        let (inertial, residual) = newton_residual(model, &y, &a, &mut mass, &mut grad);
        if iterations == 0 {
            check_finite(&grad, "gradient", t)?;
        }
        let norm = residual.amax();
        if norm <= newton.tolerance() * inertial.amax().max(grad.amax()) {
            break;
        }
        if !norm.is_finite() || iterations >= newton.max_iterations() {
            return Err(StepError::NewtonDiverged {
                iterations,
                residual: norm,
                t,
            });
        }
        let correction = newton_correction(model, &y, &mass, residual, beta_h2, &mut jacobian, t)?;
        a -= correction;
        iterations += 1;
        // The residual of a stiff ∇V stalls at its rounding error, O(ε ω² |g| |∇g|), which
        // may exceed tol·|∇V|; a correction below tol·|a| means Newton has converged.
        if correction.amax() <= newton.tolerance() * a.amax() {
            break;
        }
    }
    Ok(Solve {
        a,
        factorizations: iterations as u32,
        iterations: iterations as u32,
    })
}

impl<Model, const N: usize> ThirdContraction<Model> for CarriedDense<N>
where
    Model: PotentialThirdDerivative<N> + ?Sized,
{
    #[inline(always)]
    fn third_contraction(&mut self, model: &Model, x: &[f64], a: &[f64], out: &mut [f64]) {
        let mut third = SVector::<f64, N>::zeros();
        model.potential_third_contraction(
            &SVector::from_column_slice(x),
            &SVector::from_column_slice(a),
            &mut third,
        );
        out.copy_from_slice(third.as_slice());
    }
}

impl<const N: usize, R> CarriedScheme<CarriedDense<N>, R> {
    /// Runs the step of [`advance`](CarriedScheme::advance) on its fast path: with the
    /// acceleration carried at exactly `q`, the update, the generated acceleration at `x_{k+1}`
    /// ([`AccelerationRule::generated_acceleration`]) and one finiteness check of `x_{k+1}`
    /// and `v_{k+1}` (which covers `a_{k+1}`) together at the end. Returns `None`, with
    /// nothing written, where there is no carried acceleration, no generated code, or a value
    /// that is not finite; the arithmetic is `advance`'s, so a `Some` is its result bit for
    /// bit.
    ///
    /// It needs no check of the state: it runs only from the `q` its last step produced (bit
    /// for bit, and that was finite), and a `v` that is not finite makes `v_{k+1}` not finite.
    /// `x_{k+1}`, `a_{k+1}` and `v_{k+1}` are locals, not the scheme's buffers, so that they
    /// stay in registers between the update, the generated code and the final stores.
    #[inline]
    fn generated_advance<Model: ?Sized>(
        &mut self,
        model: &Model,
        q: &mut [f64],
        v: &mut [f64],
    ) -> Option<StepReport>
    where
        R: AccelerationRule<Model, CarriedDense<N>>,
        CarriedDense<N>: EnergyTerms<Model>,
    {
        let h = self.h;
        let beta_h2 = self.beta * h * h;
        self.carried_at(q)?;
        let guarded = self.watch.is_on();
        if guarded && !self.watch.continues_at(q) {
            return None;
        }
        let a_k = &self.carried_a;
        let mut x_next = [0.0; N];
        for (((x, q), v), a) in x_next.iter_mut().zip(&*q).zip(&*v).zip(a_k) {
            *x = next_position(*q, *v, *a, h);
        }
        let (mut a_next, mut scratch) = ([0.0; N], [0.0; N]);
        let report = self.rule.generated_acceleration(
            &mut self.system,
            model,
            &x_next,
            beta_h2,
            &mut a_next,
            &mut scratch,
        )?;
        let mut v_next = [0.0; N];
        for (((v_next, v), a), b) in v_next.iter_mut().zip(&*v).zip(a_k).zip(&a_next) {
            *v_next = next_velocity(*v, *a, *b, h);
        }
        // `a_{k+1}` needs no test of its own: `v_{k+1} = v_k + ½h (a_k + a_{k+1})` with a
        // finite `a_k` and `h > 0` is not finite where `a_{k+1}` is not (`±∞` stays `±∞` or
        // meets the other sign as NaN, `½h` underflowing to 0 makes `0 · ∞` NaN). Two tests,
        // not one: combined, LLVM fuses them into 512-bit instructions where the target has
        // AVX-512, which made a native build of the double pendulum's Z&Ss step 35 % slower
        // than the portable one.
        if !(all_finite(&x_next) && all_finite(&v_next)) {
            return None;
        }
        if guarded {
            // A rejected step reruns on the checked path, which reports it.
            let energy = self.system.energy(model, &x_next, &v_next);
            if !self.watch.accepts(energy) {
                return None;
            }
            self.watch.accept(&x_next);
        }
        q.copy_from_slice(&x_next);
        v.copy_from_slice(&v_next);
        self.carried_x = x_next;
        self.carried_a = a_next;
        Some(report)
    }
}

impl<Model, R, const N: usize> Integrator<Model, N> for CarriedScheme<CarriedDense<N>, R>
where
    Model: ConstantMass<N> + Potential<N>,
    R: AccelerationRule<Model, CarriedDense<N>>,
{
    crate::checkpoint::carried_access!();

    fn admit_energy_exchange(&mut self, energy: f64) {
        self.watch.admit(energy);
    }

    fn step(&mut self, model: &Model, state: &mut State<N>) -> Result<StepReport, StepError> {
        check_constant_mass::<Model, N>(R::NAME)?;
        check_parameters(model)?;
        // The fast path checks what it needs itself (`generated_advance`); else the checked
        // step, which reports the culprit.
        if state.t.is_finite() {
            let (q, v) = (state.q.as_mut_slice(), state.v.as_mut_slice());
            if let Some(report) = self.generated_advance(model, q, v) {
                state.t += self.h;
                return Ok(report);
            }
        }
        check_state(state)?;
        let report = self.advance(
            model,
            state.t,
            state.q.as_mut_slice(),
            state.v.as_mut_slice(),
        )?;
        state.t += self.h;
        Ok(report)
    }
}
