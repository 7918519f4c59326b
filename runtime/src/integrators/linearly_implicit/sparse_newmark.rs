//! Newmark with one Newton iteration per step on the sparse tier: the "partially solved
//! Newmark" that Tao–Owhadi compare stiff Z&Ss with on the water cluster (2014, §4.3, Fig. 6).

use std::marker::PhantomData;

use super::carried::{
    check_beta, CarriedSparse, EnergyTerms, FullHessian, MassSolve, NewtonIterate, SparseHessian,
    StiffHessian, DEFAULT_BETA,
};
use crate::error::StepError;
use crate::integrators::checks::{
    check_built_for, check_dyn_state, check_finite_slice, check_mass_is_constant,
    check_sparse_parameters, check_step_size,
};
use crate::integrators::{EnergyGuard, EnergyWatch, SparseIntegrator, StepReport};
use crate::model::{SparseConstantMass, SparseInertia, SparsePotential};
use crate::state::DynState;

/// [`NewmarkOneIteration`](crate::NewmarkOneIteration) on the sparse tier, with the Newton
/// Jacobian built from the Hessian that `Which` names: [`SparseNewmarkOneIteration`] (`Hess V`)
/// or [`SparseNewmarkOneIterationStiff`] (the stiff part's Hessian, as stiff Z&Ss).
///
/// From M. Tao and H. Owhadi, *Variational and linearly-implicit integrators, with applications*
/// (2014), §2.1 and §4.1 (Newmark, eq. 12, `γ = ½`, solved by a single Newton iteration):
///
/// ```text
/// q̃       = q_k + h v_k + (½ − β) h² a_k
/// y       = q̃ + βh² a_k
/// a_{k+1} = a_k − (M + βh² H(y))⁻¹ (M a_k + ∇V(y))
/// q_{k+1} = q̃ + βh² a_{k+1}
/// v_{k+1} = v_k + ½ h (a_k + a_{k+1})
/// ```
///
/// One sparse `LDLᵀ` of `M + βh² H` per step, on the pattern analysed by `new`, positive
/// definite required (see [`CarriedSparse`]); no allocation per step. With `H = Hess V` the
/// iterate is Newton's; with the stiff Hessian `ε⁻¹ Hess V1` of a split potential `V = V0 +
/// ε⁻¹ V1` (e.g. a [`Penalized`](crate::Penalized) model) it is one step of a Newton iteration
/// whose Jacobian drops `Hess V0`, the same approximation stiff Z&Ss makes (eq. 19), so that
/// the two cost one block-diagonal solve per step each and differ only in the scheme. Either
/// is consistent and second order for a smooth `V` (the first iterate from `a_k` is within
/// `O(h²)` of the converged `a_{k+1}`), but not variational and, unlike Z&S, not the
/// linearization of a symplectic scheme.
///
/// The carried `a_{k+1}` is part of the method's state, as in the fixed-size
/// `NewmarkOneIteration`: it is reused while the incoming `q` matches the last `q_{k+1}` bit
/// for bit (so a Langevin kick, which changes only `v`, keeps it), and otherwise, or after
/// [`reset`](Self::reset), the step restarts from `a_k = −M⁻¹ ∇V(q_k)`. The paper assumes a
/// constant `M`; a model whose mass depends on `q` is refused. The state is unchanged on error.
///
/// # Example
///
/// A chain of 100 pendula with its rods as the penalty `½ ω² |g|²`:
///
/// ```
/// use mechanism_runtime::reference::PendulumChain;
/// use mechanism_runtime::{Penalized, SparseIntegrator, SparseNewmarkOneIterationStiff};
/// let chain = PendulumChain::tao_owhadi(100);
/// let mut state = chain.tao_owhadi_state();
/// let model = Penalized::new(chain, 20.0);
/// let mut newmark = SparseNewmarkOneIterationStiff::new(&model, 0.05)?;
/// for _ in 0..20 {
///     let report = newmark.step(&model, &mut state)?;
///     assert_eq!(report.newton_iterations, 1);
/// }
/// assert!((state.t - 1.0).abs() < 1e-12);
/// # Ok::<(), mechanism_runtime::StepError>(())
/// ```
#[derive(Debug)]
pub struct SparseNewmarkFirstIterate<Which> {
    h: f64,
    beta: f64,
    system: CarriedSparse,
    which: PhantomData<Which>,
    /// Whether `carried_a` belongs to `carried_q`.
    carried: bool,
    carried_q: Vec<f64>,
    carried_a: Vec<f64>,
    a_k: Vec<f64>,
    predictor: Vec<f64>,
    y: Vec<f64>,
    a_next: Vec<f64>,
    q_next: Vec<f64>,
    v_next: Vec<f64>,
    /// The energy guard and the run it measures.
    watch: EnergyWatch<Vec<f64>>,
}

/// One-iteration Newmark on the sparse tier with the Jacobian `M + βh² Hess V`.
pub type SparseNewmarkOneIteration = SparseNewmarkFirstIterate<FullHessian>;

/// One-iteration Newmark on the sparse tier with the Jacobian `M + βh² ε⁻¹ Hess V1` of a
/// split potential (the Hessian stiff Z&Ss factors).
pub type SparseNewmarkOneIterationStiff = SparseNewmarkFirstIterate<StiffHessian>;

impl<Which> SparseNewmarkFirstIterate<Which> {
    fn for_model<Model>(
        model: &Model,
        hessian: &[(usize, usize)],
        h: f64,
    ) -> Result<Self, StepError>
    where
        Model: SparseInertia + ?Sized,
    {
        let n = model.coordinate_count();
        Ok(SparseNewmarkFirstIterate {
            h: check_step_size(h)?,
            beta: DEFAULT_BETA,
            system: CarriedSparse::new(model, hessian)?,
            which: PhantomData,
            carried: false,
            carried_q: vec![0.0; n],
            carried_a: vec![0.0; n],
            a_k: vec![0.0; n],
            predictor: vec![0.0; n],
            y: vec![0.0; n],
            a_next: vec![0.0; n],
            q_next: vec![0.0; n],
            v_next: vec![0.0; n],
            watch: EnergyWatch::new(EnergyGuard::default(), vec![0.0; n]),
        })
    }

    /// Sets `β` (default 0.4; finite and non-negative, `≥ ¼` for unconditional linear
    /// stability) and forgets the carried acceleration.
    pub fn with_beta(mut self, beta: f64) -> Result<Self, StepError> {
        self.beta = check_beta(beta)?;
        self.carried = false;
        self.watch.restart();
        Ok(self)
    }

    /// Replaces the energy guard (default: [`EnergyGuard::default`]), which rejects a step
    /// whose energy has left the band around the run's initial energy with
    /// [`StepError::EnergyDiverged`] instead of returning `Ok` on a blow-up.
    pub fn with_energy_guard(mut self, guard: EnergyGuard) -> Self {
        self.watch.set_guard(guard);
        self
    }

    /// Returns the step size `h`.
    pub fn step_size(&self) -> f64 {
        self.h
    }

    /// Forgets the acceleration carried from the last step, so that the next step restarts
    /// from `a_k = −M⁻¹ ∇V(q_k)`, and the run the energy guard measures; call it after changing
    /// the model between steps.
    pub fn reset(&mut self) {
        self.carried = false;
        self.watch.restart();
    }

    fn carried_at(&self, q: &[f64]) -> bool {
        self.carried
            && self
                .carried_q
                .iter()
                .zip(q)
                .all(|(a, b)| a.to_bits() == b.to_bits())
    }
}

impl<Which> SparseNewmarkFirstIterate<Which> {
    /// Creates the stepper for `model` with step size `h` and `β = 0.4`: reads the pattern of
    /// the Hessian `Which` names, analyses the pattern of `M + βh² H` and sizes every buffer.
    /// Fails with `BadStepSize` for a bad `h` and `InvalidModel` for inconsistent body sizes or
    /// patterns.
    pub fn new<Model>(model: &Model, h: f64) -> Result<Self, StepError>
    where
        Model: SparseInertia + ?Sized,
        Which: SparseHessian<Model>,
    {
        Self::for_model(model, Which::pattern(model), h)
    }
}

impl<Model, Which> SparseIntegrator<Model> for SparseNewmarkFirstIterate<Which>
where
    Model: SparseConstantMass + SparsePotential + ?Sized,
    CarriedSparse: NewtonIterate<Model, Which> + MassSolve<Model> + EnergyTerms<Model>,
{
    crate::checkpoint::carried_access!();

    fn admit_energy_exchange(&mut self, energy: f64) {
        self.watch.admit(energy);
    }

    fn step(&mut self, model: &Model, state: &mut DynState) -> Result<StepReport, StepError> {
        check_mass_is_constant(model.constant_mass(), "one-iteration Newmark")?;
        check_sparse_parameters(model)?;
        check_dyn_state(state, model.coordinate_count())?;
        check_built_for(
            model.body_sizes() == self.system.body_sizes(),
            "body sizes",
            model.body_sizes().len(),
        )?;
        let (h, t) = (self.h, state.t);
        let (system, scratch) = (&mut self.system, &mut self.y);
        self.watch.begin(&state.q, || {
            system.energy_terms(model, &state.q, &state.v, scratch)
        });
        let (h2, beta_h2) = (h * h, self.beta * h * h);
        let mut report = StepReport {
            factorizations: 0,
            newton_iterations: 1,
        };
        if self.carried_at(&state.q) {
            self.a_k.copy_from_slice(&self.carried_a);
        } else {
            // a_k = −M⁻¹ ∇V(q_k).
            self.system.gradient(model, &state.q, &mut self.a_k);
            check_finite_slice(&self.a_k, "gradient", t)?;
            report.factorizations += self.system.solve_mass(model, &state.q, &mut self.a_k, t)?;
            self.a_k.iter_mut().for_each(|a| *a = -*a);
        }
        for k in 0..state.q.len() {
            self.predictor[k] = state.q[k] + h * state.v[k] + (0.5 - self.beta) * h2 * self.a_k[k];
            self.y[k] = self.predictor[k] + beta_h2 * self.a_k[k];
        }
        check_finite_slice(&self.y, "q", t)?;
        report.factorizations +=
            self.system
                .newton_iterate(model, &self.y, &self.a_k, beta_h2, &mut self.a_next, t)?;
        check_finite_slice(&self.a_next, "acceleration", t)?;
        for k in 0..state.q.len() {
            self.q_next[k] = self.predictor[k] + beta_h2 * self.a_next[k];
            self.v_next[k] = state.v[k] + 0.5 * h * (self.a_k[k] + self.a_next[k]);
        }
        check_finite_slice(&self.q_next, "q", t)?;
        check_finite_slice(&self.v_next, "v", t)?;
        let (system, q_next, v_next) = (&mut self.system, &self.q_next, &self.v_next);
        self.watch
            .check_and_accept(|| system.energy(model, q_next, v_next), q_next, t)?;
        state.q.copy_from_slice(&self.q_next);
        state.v.copy_from_slice(&self.v_next);
        state.t = t + h;
        self.carried_q.copy_from_slice(&self.q_next);
        self.carried_a.copy_from_slice(&self.a_next);
        self.carried = true;
        Ok(report)
    }
}

/// The carried acceleration (with its configuration) and the energy guard's run.
impl<Which> crate::checkpoint::CarriedState for SparseNewmarkFirstIterate<Which> {
    fn identity(&self) -> crate::checkpoint::IntegratorIdentity {
        crate::checkpoint::IntegratorIdentity::new(format!(
            "SparseNewmarkFirstIterate<{}>",
            crate::checkpoint::short_type_name::<Which>()
        ))
        .setting("h", self.h)
        .setting("beta", self.beta)
        .setting("energy_guard", self.watch.limit())
    }

    fn save(&self, out: &mut crate::checkpoint::Carried) {
        out.put_flag("carried", self.carried);
        out.put("carried.q", &self.carried_q);
        out.put("carried.a", &self.carried_a);
        self.watch.save(out);
    }

    fn restore(
        &mut self,
        from: &crate::checkpoint::Carried,
    ) -> Result<(), crate::checkpoint::CheckpointError> {
        let n = self.carried_q.len();
        let carried = from.flag("carried")?;
        let q = from.values("carried.q", n)?;
        let a = from.values("carried.a", n)?;
        let mut watch = self.watch.clone();
        watch.restore(from)?;
        self.carried = carried;
        self.carried_q.copy_from_slice(q);
        self.carried_a.copy_from_slice(a);
        self.watch = watch;
        Ok(())
    }
}
