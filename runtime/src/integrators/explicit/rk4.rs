//! The classical fourth-order Runge–Kutta method: the non-structure-preserving baseline.

use nalgebra::SVector;

use super::{acceleration, check_finite, check_state, check_step_size, MassFactor};
use crate::error::StepError;
use crate::integrators::{EnergyGuard, EnergyWatch, Integrator, StepReport};
use crate::model::{ConstantMass, Potential};
use crate::state::State;

/// The classical Runge–Kutta method of order 4 for `q̇ = v`, `M(q) v̇ = −∇V(q)`:
///
/// ```text
/// a(q) = −M(q)⁻¹ ∇V(q)
/// k₁ = (v_k,            a(q_k))
/// k₂ = (v_k + ½h a₁,    a(q_k + ½h v_k))
/// k₃ = (v_k + ½h a₂,    a(q_k + ½h (v_k + ½h a₁)))
/// k₄ = (v_k + h a₃,     a(q_k + h (v_k + ½h a₂)))
/// (q, v)_{k+1} = (q, v)_k + (h/6)(k₁ + 2k₂ + 2k₃ + k₄)
/// ```
///
/// Kutta (1901); Hairer, Nørsett and Wanner, *Solving Ordinary Differential Equations I*
/// (2nd ed. 1993), §II.1, Table 1.2. Explicit, fourth order, four gradient evaluations per step,
/// and neither symplectic nor symmetric: on a harmonic oscillator `|R(iωh)|² =
/// 1 − (ωh)⁶/72 + O((ωh)⁸) < 1`, so energy and angular momentum decay monotonically. It is the
/// method Cuell (2005) §4.1 compares symplectic Euler against over 20 000 periods. When
/// `Inertia::CONSTANT_MASS` holds the Cholesky factor of `M` is reused while `M` is unchanged.
/// Beyond its stability limit (`hω > 2√2` for a mode of frequency `ω`) a step whose energy has
/// left the band of its run is refused with [`StepError::EnergyDiverged`] ([`EnergyGuard`],
/// [`with_energy_guard`](Self::with_energy_guard)).
#[derive(Clone, Copy, Debug)]
pub struct Rk4<const N: usize> {
    h: f64,
    mass: MassFactor<N>,
    watch: EnergyWatch<[f64; N]>,
}

impl<const N: usize> Rk4<N> {
    /// Creates an RK4 stepper; fails unless `h` is positive and finite.
    pub fn new(h: f64) -> Result<Self, StepError> {
        Ok(Rk4 {
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

impl<Model, const N: usize> Integrator<Model, N> for Rk4<N>
where
    Model: ConstantMass<N> + Potential<N>,
{
    crate::checkpoint::carried_access!();

    fn admit_energy_exchange(&mut self, energy: f64) {
        self.watch.admit(energy);
    }

    fn step(&mut self, model: &Model, state: &mut State<N>) -> Result<StepReport, StepError> {
        crate::integrators::checks::check_constant_mass::<Model, N>("RK4")?;
        crate::integrators::checks::check_parameters(model)?;
        check_state(state)?;
        self.watch.begin_at(model, state);
        let (h, t) = (self.h, state.t);
        let (q, v) = (state.q, state.v);
        let mut factorizations = 0;
        let mut accelerate = |x: &SVector<f64, N>| {
            check_finite(x, "q", t)?;
            let (a, _, count) = acceleration(model, &mut self.mass, x, t)?;
            factorizations += count;
            Ok::<_, StepError>(a)
        };
        let a1 = accelerate(&q)?;
        let v2 = v + a1 * (0.5 * h);
        let a2 = accelerate(&(q + v * (0.5 * h)))?;
        let v3 = v + a2 * (0.5 * h);
        let a3 = accelerate(&(q + v2 * (0.5 * h)))?;
        let v4 = v + a3 * h;
        let a4 = accelerate(&(q + v3 * h))?;
        let q_next = q + (v + (v2 + v3) * 2.0 + v4) * (h / 6.0);
        let v_next = v + (a1 + (a2 + a3) * 2.0 + a4) * (h / 6.0);
        check_finite(&q_next, "q", t)?;
        check_finite(&v_next, "v", t)?;
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
impl<const N: usize> crate::checkpoint::CarriedState for Rk4<N> {
    fn identity(&self) -> crate::checkpoint::IntegratorIdentity {
        crate::checkpoint::IntegratorIdentity::new(format!("Rk4<{N}>"))
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
