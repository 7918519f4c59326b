//! Symplectic Euler: the first-order explicit symplectic method.

use super::{acceleration, check_finite, check_state, check_step_size, MassFactor};
use crate::error::StepError;
use crate::integrators::{EnergyGuard, EnergyWatch, Integrator, StepReport};
use crate::model::{ConstantMass, Potential};
use crate::state::State;

/// Symplectic Euler, velocity first ("kick, then drift"), for `M q̈ = −∇V(q)`:
///
/// ```text
/// v_{k+1} = v_k − h M⁻¹ ∇V(q_k)
/// q_{k+1} = q_k + h v_{k+1}
/// ```
///
/// This is the variant of symplectic Euler that updates the momentum first (Hairer, Lubich and
/// Wanner, *Geometric Numerical Integration*, 2nd ed. 2006, §I.1.2 and Theorem VI.3.3), written
/// for the velocity `v = M⁻¹p` with a constant `M`:
/// explicit, symplectic, first order, with energy error bounded (no drift) for small `h`. It is
/// the unconstrained case of SPOOK (Lacoursière 2007, eq. 12 and 29 with no constraint rows),
/// and the discrete Euler–Lagrange map of `L_d(q_0, q_1) = h T((q_1 − q_0)/h) − h V(q_0)`.
///
/// Beyond its stability limit (`hω > 2`) a step whose energy has left the band of its run is
/// refused with [`StepError::EnergyDiverged`] ([`EnergyGuard`],
/// [`with_energy_guard`](Self::with_energy_guard)).
///
/// One gradient evaluation per step. When `Inertia::CONSTANT_MASS` holds the Cholesky factor of
/// `M` is reused while `M` is unchanged; a configuration-dependent `M(q)` is evaluated at `q_k`
/// (the method is then no longer symplectic).
#[derive(Clone, Copy, Debug)]
pub struct SymplecticEuler<const N: usize> {
    h: f64,
    mass: MassFactor<N>,
    watch: EnergyWatch<[f64; N]>,
}

impl<const N: usize> SymplecticEuler<N> {
    /// Creates a symplectic Euler stepper; fails unless `h` is positive and finite.
    pub fn new(h: f64) -> Result<Self, StepError> {
        Ok(SymplecticEuler {
            h: check_step_size(h)?,
            mass: MassFactor::default(),
            watch: EnergyWatch::new(EnergyGuard::default(), [0.0; N]),
        })
    }

    /// Replaces the energy guard (default: [`EnergyGuard::default`]), which rejects a step
    /// whose energy has left the band around the run's initial energy with
    /// [`StepError::EnergyDiverged`] instead of returning `Ok` on a blow-up (a step size beyond
    /// the method's stability limit).
    pub fn with_energy_guard(mut self, guard: EnergyGuard) -> Self {
        self.watch.set_guard(guard);
        self
    }

    /// Forgets the run the energy guard measures, so that the next step starts a new one;
    /// call it after changing the model's parameters between steps.
    pub fn reset(&mut self) {
        self.watch.restart();
    }

    /// Returns the step size `h`.
    pub fn step_size(&self) -> f64 {
        self.h
    }
}

impl<Model, const N: usize> Integrator<Model, N> for SymplecticEuler<N>
where
    Model: ConstantMass<N> + Potential<N>,
{
    crate::checkpoint::carried_access!();

    fn admit_energy_exchange(&mut self, energy: f64) {
        self.watch.admit(energy);
    }

    fn step(&mut self, model: &Model, state: &mut State<N>) -> Result<StepReport, StepError> {
        crate::integrators::checks::check_constant_mass::<Model, N>("symplectic Euler")?;
        crate::integrators::checks::check_parameters(model)?;
        check_state(state)?;
        self.watch.begin_at(model, state);
        let (h, t) = (self.h, state.t);
        let (a, _, factorizations) = acceleration(model, &mut self.mass, &state.q, t)?;
        let v_next = state.v + a * h;
        let q_next = state.q + v_next * h;
        check_finite(&v_next, "v", t)?;
        check_finite(&q_next, "q", t)?;
        self.watch.check_step(model, &q_next, &v_next, t)?;

        state.q = q_next;
        state.v = v_next;
        state.t = t + h;
        Ok(StepReport {
            factorizations,
            newton_iterations: 0,
        })
    }
}

/// Only the energy guard's run: the method carries nothing else from one step to the next.
impl<const N: usize> crate::checkpoint::CarriedState for SymplecticEuler<N> {
    fn identity(&self) -> crate::checkpoint::IntegratorIdentity {
        crate::checkpoint::IntegratorIdentity::new(format!("SymplecticEuler<{N}>"))
            .setting("h", self.h)
            .setting("energy_guard", self.watch.limit())
    }

    fn save(&self, out: &mut crate::checkpoint::Carried) {
        self.watch.save(out);
    }

    fn restore(
        &mut self,
        from: &crate::checkpoint::Carried,
    ) -> Result<(), crate::checkpoint::CheckpointError> {
        self.watch.restore(from)
    }
}
