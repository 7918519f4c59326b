//! Newmark's method with `γ = ½` and Newmark with a single Newton iteration per step, the
//! nonlinearly implicit relatives of Z&S (Tao and Owhadi 2014, §2.1); their push-forward is in
//! `push_forward.rs`.

use nalgebra::{SMatrix, SVector};

use super::carried::{check_beta, DEFAULT_BETA};
use super::{check_finite, check_state, check_step_size, MassFactor};
use crate::error::StepError;
use crate::integrators::newton::{newton_builders, Newton};
use crate::integrators::{EnergyGuard, EnergyWatch, Integrator, StepReport};
use crate::linalg::{LinearSolver, SymmetricFactor};
use crate::model::{ConstantMass, Inertia, Potential, PotentialHessian};
use crate::state::State;

/// The default relative tolerance on the Newton residual (and correction); `1e-12` is at the
/// rounding floor of the penalized double pendulum's `∇W` at `ω = 20`.
const DEFAULT_TOLERANCE: f64 = 1e-10;

/// The default maximal number of Newton iterations per solve.
const DEFAULT_MAX_ITERATIONS: usize = 50;

/// The default Newton settings.
pub(super) const DEFAULT_NEWTON: Newton = Newton::preset(DEFAULT_TOLERANCE, DEFAULT_MAX_ITERATIONS);

/// The name of the Newton Jacobian, for errors.
const NEWTON_MATRIX: &str = "M + βh² Hess V";

/// Newmark's method with `γ = ½` (Tao–Owhadi 2014, Integrator 2, eq. 12).
///
/// From M. Tao and H. Owhadi, *Variational and linearly-implicit integrators, with applications*
/// (2014), after N. M. Newmark, *A method of computation for structural dynamics* (1959).
/// For `M q̈ = −∇V(q)`:
///
/// ```text
/// q_{k+1} = q_k + h v_k + h² [(½ − β) a_k + β a_{k+1}]
/// v_{k+1} = v_k + ½ h (a_k + a_{k+1})
/// a_k     = −M⁻¹ ∇V(q_k)
/// ```
///
/// Second order and variational for `γ = ½`, and unconditionally linearly stable if `β ≥ ¼`,
/// but not canonically symplectic in `(q, v)` (see [`PushForwardNewmark`](super::PushForwardNewmark)). Implicit for
/// `β ≠ 0`: each step solves the nonlinear equation in `a = a_{k+1}`
///
/// ```text
/// r(a) = M a + ∇V(q̃ + βh² a) = 0,    q̃ = q_k + h v_k + (½ − β) h² a_k
/// ```
///
/// by Newton's method with the Jacobian `M + βh² Hess V(q̃ + βh² a)` (one LU or Cholesky
/// factorization per iteration), starting from `a_k`. It stops when the residual is small,
/// `|r|_∞ ≤ tol · max(|M a|_∞, |∇V|_∞)`, or when the Newton correction is, `|Δa|_∞ ≤ tol · |a|_∞`
/// (default `tol = 1e-10`, [`with_tolerance`](Self::with_tolerance)). The residual of a stiff
/// potential stalls at the rounding error of `∇V`, a small difference of `O(ω²)` terms for a
/// penalty: about `1e-12` relative for the double pendulum at `ω = 20`, growing like `ω²`,
/// hence the default above that floor and the correction test beyond it. It fails with [`StepError::NewtonDiverged`] after
/// `max_iterations` iterations (default 50, [`with_max_iterations`](Self::with_max_iterations))
/// or on a non-finite residual. A step whose energy has left the band of its run is refused
/// with [`StepError::EnergyDiverged`] ([`EnergyGuard`], [`with_energy_guard`](Self::with_energy_guard);
/// note its paragraph on Newmark at `hω ≫ 1`). The state is unchanged on error.
///
/// `a_{k+1}` is carried to the next step: it is cached with the `q` it was solved at and
/// recomputed as `−M⁻¹ ∇V(q)` (a Cholesky solve with `M`, whose factor is reused while a
/// constant `M` is unchanged) whenever the incoming `q` differs bitwise from it; call
/// [`reset`](Self::reset) after changing the model between steps. A configuration-dependent
/// `M(q)` is evaluated at each Newton iterate, and the Jacobian omits its derivative; the paper
/// assumes a constant `M`.
#[derive(Clone, Copy, Debug)]
pub struct Newmark<const N: usize> {
    core: Core<N>,
    newton: Newton,
    mass: MassFactor<N>,
}

/// Newmark with only the first Newton iteration per step: the "linearly-implicit Newmark" of
/// Tao–Owhadi 2014, §4.1 (Fig. 1, row 5).
///
/// The scheme of [`Newmark`] (eq. 12, `γ = ½`) in which `a_{k+1}` is the first Newton iterate
/// from `a_k`, accepted without a convergence test:
///
/// ```text
/// q̃       = q_k + h v_k + (½ − β) h² a_k
/// a_{k+1} = a_k − (M + βh² Hess V(q̃ + βh² a_k))⁻¹ (M a_k + ∇V(q̃ + βh² a_k))
/// q_{k+1} = q̃ + βh² a_{k+1}
/// v_{k+1} = v_k + ½ h (a_k + a_{k+1})
/// ```
///
/// One factorization per step and never a Newton failure, like Z&Ss; it is consistent and
/// coincides with [`Newmark`] for a quadratic `V`, but for nonlinear stiff problems its error at
/// large steps is much larger than that of the converged scheme (Tao–Owhadi Fig. 1, rows 4–5),
/// which is why Z&S linearizes the *push-forward* scheme instead ([`PushForwardNewmark`](super::PushForwardNewmark)).
/// [`StepReport::newton_iterations`] is 1.
///
/// A separate type rather than a `max_iterations = 1` option of [`Newmark`], where running out
/// of iterations is an error: here the unconverged iterate *is* the method. The carried `a_{k+1}`
/// is therefore part of the method's state (it is not `−M⁻¹ ∇V(q_{k+1})`): it is reused while
/// the incoming `q` matches bitwise, and otherwise (or after [`reset`](Self::reset)) the step
/// restarts from the consistent `a_k = −M⁻¹ ∇V(q_k)`.
#[derive(Clone, Copy, Debug)]
pub struct NewmarkOneIteration<const N: usize> {
    core: Core<N>,
    mass: MassFactor<N>,
}

/// What the Newmark steppers of eq. 12 share: the step size, `β`, and the carried acceleration.
#[derive(Clone, Copy, Debug)]
struct Core<const N: usize> {
    pub(super) h: f64,
    pub(super) beta: f64,
    /// The configuration and the acceleration computed there.
    pub(super) carried: Option<(SVector<f64, N>, SVector<f64, N>)>,
    /// The energy guard and the run it measures.
    watch: EnergyWatch<[f64; N]>,
}

impl<const N: usize> Core<N> {
    pub(super) fn new(h: f64) -> Result<Self, StepError> {
        Ok(Core {
            h: check_step_size(h)?,
            beta: DEFAULT_BETA,
            carried: None,
            watch: EnergyWatch::new(EnergyGuard::default(), [0.0; N]),
        })
    }

    pub(super) fn with_beta(mut self, beta: f64) -> Result<Self, StepError> {
        self.beta = check_beta(beta)?;
        self.carried = None;
        self.watch.restart();
        Ok(self)
    }

    /// Returns the carried acceleration if it was computed at exactly `q`.
    pub(super) fn carried_at(&self, q: &SVector<f64, N>) -> Option<SVector<f64, N>> {
        let (at, acceleration) = self.carried.as_ref()?;
        let same = at
            .iter()
            .zip(q.iter())
            .all(|(a, b)| a.to_bits() == b.to_bits());
        same.then_some(*acceleration)
    }

    /// Advances `state` by Newmark's eq. 12, where `solve(q̃, a_k, t)` returns `a_{k+1}` with
    /// `M a_{k+1} + ∇V(q̃ + βh² a_{k+1}) ≈ 0` and `initial(q, t)` returns `−M⁻¹ ∇V(q)`.
    ///
    /// The step's result is checked by the energy guard of `model` before it is written.
    fn newmark_step<Model, I, S>(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        mut initial: I,
        mut solve: S,
    ) -> Result<StepReport, StepError>
    where
        Model: Inertia<N> + Potential<N>,
        I: FnMut(&SVector<f64, N>, f64) -> Result<Solve<N>, StepError>,
        S: FnMut(&SVector<f64, N>, SVector<f64, N>, f64) -> Result<Solve<N>, StepError>,
    {
        check_state(state)?;
        self.watch.begin_at(model, state);
        let (h, t) = (self.h, state.t);
        let h2 = h * h;
        let mut report = StepReport::default();
        let a_k = match self.carried_at(&state.q) {
            Some(a_k) => a_k,
            None => initial(&state.q, t)?.add_to(&mut report),
        };
        let predictor = state.q + state.v * h + a_k * ((0.5 - self.beta) * h2);
        check_finite(&predictor, "q", t)?;
        let a_next = solve(&predictor, a_k, t)?.add_to(&mut report);
        // The same expression as the Newton iterate's argument, so the carried a_{k+1} is keyed
        // by exactly the q it was solved at.
        let q_next = predictor + a_next * (self.beta * h2);
        check_finite(&q_next, "q", t)?;
        let v_next = state.v + (a_k + a_next) * (0.5 * h);
        check_finite(&v_next, "v", t)?;
        self.watch.check_step(model, &q_next, &v_next, t)?;

        self.carried = Some((q_next, a_next));
        state.q = q_next;
        state.v = v_next;
        state.t = t + h;
        Ok(report)
    }
}

/// An acceleration and what it cost.
#[derive(Clone, Copy, Debug)]
pub(super) struct Solve<const N: usize> {
    pub(super) a: SVector<f64, N>,
    pub(super) factorizations: u32,
    pub(super) iterations: u32,
}

impl<const N: usize> Solve<N> {
    /// Adds the cost to `report` and returns the acceleration.
    pub(super) fn add_to(self, report: &mut StepReport) -> SVector<f64, N> {
        report.factorizations += self.factorizations;
        report.newton_iterations += self.iterations;
        self.a
    }
}

/// How far to iterate Newton on `M a + ∇V(base + βh² a) = 0`.
#[derive(Clone, Copy, Debug)]
pub(super) enum Stop {
    /// Until the residual meets the tolerance; an error past the iteration limit.
    Converged(Newton),
    /// Exactly one iteration, accepted without a test.
    FirstIterate,
}

/// Solves `r(a) = M(y) a + ∇V(y) = 0`, `y = base + βh² a`, by Newton from `guess` with the
/// Jacobian `M(y) + βh² Hess V(y)`.
pub(super) fn newton_solve<Model, const N: usize>(
    model: &Model,
    base: &SVector<f64, N>,
    beta_h2: f64,
    guess: SVector<f64, N>,
    stop: Stop,
    t: f64,
) -> Result<Solve<N>, StepError>
where
    Model: Inertia<N> + PotentialHessian<N>,
{
    let mut a = guess;
    let mut iterations = 0usize;
    let mut mass = SMatrix::<f64, N, N>::zeros();
    let mut grad = SVector::<f64, N>::zeros();
    let mut hess = SMatrix::<f64, N, N>::zeros();
    let mut jacobian: Option<SymmetricFactor<N>> = None;
    loop {
        if iterations == 1 && matches!(stop, Stop::FirstIterate) {
            check_finite(&a, "acceleration", t)?;
            break;
        }
        let y = base + a * beta_h2;
        model.mass_matrix(&y, &mut mass);
        model.potential_gradient(&y, &mut grad);
        if iterations == 0 {
            check_finite(&grad, "gradient", t)?;
        }
        let inertial = mass * a;
        let residual = inertial + grad;
        let norm = residual.amax();
        if let Stop::Converged(newton) = stop {
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
        }
        model.potential_hessian(&y, &mut hess);
        let wrap = StepError::linear_algebra(NEWTON_MATRIX, t);
        jacobian.factor(&(mass + hess * beta_h2)).map_err(&wrap)?;
        let mut correction = residual;
        jacobian
            .solve_in_place(correction.as_mut_slice())
            .map_err(&wrap)?;
        a -= correction;
        iterations += 1;
        if let Stop::Converged(newton) = stop {
            // The residual of a stiff ∇V stalls at its rounding error, O(ε ω² |g| |∇g|), which
            // may exceed tol·|∇V|; a correction below tol·|a| means Newton has converged.
            if correction.amax() <= newton.tolerance() * a.amax() {
                break;
            }
        }
    }
    Ok(Solve {
        a,
        factorizations: iterations as u32,
        iterations: iterations as u32,
    })
}

/// Returns `−M(q)⁻¹ ∇V(q)` and the factorizations of `M` it took (0 or 1).
fn explicit_acceleration<Model, const N: usize>(
    model: &Model,
    mass_factor: &mut MassFactor<N>,
    q: &SVector<f64, N>,
    t: f64,
) -> Result<Solve<N>, StepError>
where
    Model: Inertia<N> + PotentialHessian<N>,
{
    let mut mass = SMatrix::<f64, N, N>::zeros();
    model.mass_matrix(q, &mut mass);
    let (chol, factorizations) = mass_factor.factor(&mass, Model::CONSTANT_MASS, t)?;
    let mut grad = SVector::<f64, N>::zeros();
    model.potential_gradient(q, &mut grad);
    check_finite(&grad, "gradient", t)?;
    let a = -chol.solve(&grad);
    check_finite(&a, "acceleration", t)?;
    Ok(Solve {
        a,
        factorizations,
        iterations: 0,
    })
}

macro_rules! newmark_builders {
    ($name:ident) => {
        impl<const N: usize> $name<N> {
            /// Returns the step size `h`.
            pub fn step_size(&self) -> f64 {
                self.core.h
            }

            /// Returns the parameter `β`.
            pub fn beta(&self) -> f64 {
                self.core.beta
            }

            /// Sets `β` (default 0.4); fails with `BadParameter` unless it is finite and `≥ 0`.
            ///
            /// `β ≥ ¼` makes the method unconditionally linearly stable; smaller values are
            /// accepted (`β = 0` is explicit velocity Verlet) but stable only for small `h`.
            pub fn with_beta(mut self, beta: f64) -> Result<Self, StepError> {
                self.core = self.core.with_beta(beta)?;
                Ok(self)
            }

            /// Forgets the acceleration carried from the last step, so the next step recomputes it,
            /// and the run the energy guard measures, so that the next step starts a new one.
            pub fn reset(&mut self) {
                self.core.carried = None;
                self.core.watch.restart();
            }

            /// Replaces the energy guard (default: [`EnergyGuard::default`]), which rejects a
            /// step whose energy has left the band around the run's initial energy with
            /// [`StepError::EnergyDiverged`] instead of returning `Ok` on a blow-up.
            pub fn with_energy_guard(mut self, guard: EnergyGuard) -> Self {
                self.core.watch.set_guard(guard);
                self
            }
        }
    };
}

newmark_builders!(Newmark);
newmark_builders!(NewmarkOneIteration);
newton_builders!(
    [const N: usize] Newmark<N>,
    newton,
    tolerance_rule!(),
    "1e-10",
    "50"
);

impl<const N: usize> Newmark<N> {
    /// Creates a Newmark stepper with step size `h`, `γ = ½`, `β = 0.4`, Newton tolerance
    /// `1e-10` and at most 50 iterations; fails unless `h` is positive and finite.
    pub fn new(h: f64) -> Result<Self, StepError> {
        Ok(Newmark {
            core: Core::new(h)?,
            newton: DEFAULT_NEWTON,
            mass: MassFactor::default(),
        })
    }
}

impl<const N: usize> NewmarkOneIteration<N> {
    /// Creates a one-iteration Newmark stepper with step size `h`, `γ = ½` and `β = 0.4`;
    /// fails unless `h` is positive and finite.
    pub fn new(h: f64) -> Result<Self, StepError> {
        Ok(NewmarkOneIteration {
            core: Core::new(h)?,
            mass: MassFactor::default(),
        })
    }
}

impl<Model, const N: usize> Integrator<Model, N> for Newmark<N>
where
    Model: ConstantMass<N> + PotentialHessian<N>,
{
    crate::checkpoint::carried_access!();

    fn admit_energy_exchange(&mut self, energy: f64) {
        self.core.watch.admit(energy);
    }

    fn step(&mut self, model: &Model, state: &mut State<N>) -> Result<StepReport, StepError> {
        crate::integrators::checks::check_constant_mass::<Model, N>("Newmark")?;
        crate::integrators::checks::check_parameters(model)?;
        let beta_h2 = self.core.beta * self.core.h * self.core.h;
        let stop = Stop::Converged(self.newton);
        let mass = &mut self.mass;
        self.core.newmark_step(
            model,
            state,
            |q, t| explicit_acceleration(model, mass, q, t),
            |predictor, a_k, t| newton_solve(model, predictor, beta_h2, a_k, stop, t),
        )
    }
}

impl<Model, const N: usize> Integrator<Model, N> for NewmarkOneIteration<N>
where
    Model: ConstantMass<N> + PotentialHessian<N>,
{
    crate::checkpoint::carried_access!();

    fn admit_energy_exchange(&mut self, energy: f64) {
        self.core.watch.admit(energy);
    }

    fn step(&mut self, model: &Model, state: &mut State<N>) -> Result<StepReport, StepError> {
        crate::integrators::checks::check_constant_mass::<Model, N>("one-iteration Newmark")?;
        crate::integrators::checks::check_parameters(model)?;
        let beta_h2 = self.core.beta * self.core.h * self.core.h;
        let mass = &mut self.mass;
        self.core.newmark_step(
            model,
            state,
            |q, t| explicit_acceleration(model, mass, q, t),
            |predictor, a_k, t| newton_solve(model, predictor, beta_h2, a_k, Stop::FirstIterate, t),
        )
    }
}

impl<const N: usize> Core<N> {
    /// Returns the identity of the Newmark stepper `name` with this core's settings.
    fn identity(&self, name: &str) -> crate::checkpoint::IntegratorIdentity {
        crate::checkpoint::IntegratorIdentity::new(format!("{name}<{N}>"))
            .setting("h", self.h)
            .setting("beta", self.beta)
            .setting("energy_guard", self.watch.limit())
    }

    /// Writes the carried acceleration (with its configuration) and the energy guard's run.
    fn save(&self, out: &mut crate::checkpoint::Carried) {
        out.put_flag("carried", self.carried.is_some());
        let (q, a) = self
            .carried
            .unwrap_or_else(|| (SVector::zeros(), SVector::zeros()));
        out.put("carried.q", q.as_slice());
        out.put("carried.a", a.as_slice());
        self.watch.save(out);
    }

    /// Restores what [`save`](Self::save) wrote, checking every field first.
    fn restore(
        &mut self,
        from: &crate::checkpoint::Carried,
    ) -> Result<(), crate::checkpoint::CheckpointError> {
        let carried = from.flag("carried")?;
        let q = SVector::from_column_slice(from.values("carried.q", N)?);
        let a = SVector::from_column_slice(from.values("carried.a", N)?);
        let mut watch = self.watch;
        watch.restore(from)?;
        self.carried = carried.then_some((q, a));
        self.watch = watch;
        Ok(())
    }
}

/// The carried acceleration, which is also Newton's starting point (a warm start that changes
/// the next step's bits), and the energy guard's run.
impl<const N: usize> crate::checkpoint::CarriedState for Newmark<N> {
    fn identity(&self) -> crate::checkpoint::IntegratorIdentity {
        self.core
            .identity("Newmark")
            .setting("newton.tolerance", self.newton.tolerance())
            .setting("newton.max_iterations", self.newton.max_iterations() as f64)
    }

    fn save(&self, out: &mut crate::checkpoint::Carried) {
        self.core.save(out);
    }

    fn restore(
        &mut self,
        from: &crate::checkpoint::Carried,
    ) -> Result<(), crate::checkpoint::CheckpointError> {
        self.core.restore(from)
    }
}

/// The carried acceleration and the energy guard's run, as [`Newmark`]'s.
impl<const N: usize> crate::checkpoint::CarriedState for NewmarkOneIteration<N> {
    fn identity(&self) -> crate::checkpoint::IntegratorIdentity {
        self.core.identity("NewmarkOneIteration")
    }

    fn save(&self, out: &mut crate::checkpoint::Carried) {
        self.core.save(out);
    }

    fn restore(
        &mut self,
        from: &crate::checkpoint::Carried,
    ) -> Result<(), crate::checkpoint::CheckpointError> {
        self.core.restore(from)
    }
}

/// The stopping rule of Newmark's Newton iteration, for the docs of the builders of Newmark
/// and push-forward Newmark.
macro_rules! tolerance_rule {
    () => {
        "A solve stops when `|M a + ∇V|_∞ ≤ tolerance · max(|M a|_∞, |∇V|_∞)` or when the Newton correction is `|Δa|_∞ ≤ tolerance · |a|_∞`; past the iteration cap a step fails with `NewtonDiverged`."
    };
}

pub(super) use tolerance_rule;
