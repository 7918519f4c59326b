//! Velocity Verlet (Störmer–Verlet): the second-order explicit symplectic method.

use nalgebra::SVector;

use super::{acceleration, check_finite, check_state, check_step_size, same_bits, MassFactor};
use crate::error::StepError;
use crate::integrators::{Integrator, StepReport};
use crate::model::{Inertia, Potential};
use crate::state::State;

/// Velocity Verlet (Störmer–Verlet, "kick–drift–kick") for `M q̈ = −∇V(q)`:
///
/// ```text
/// a_k       = −M⁻¹ ∇V(q_k)
/// v_{k+½}   = v_k + ½ h a_k
/// q_{k+1}   = q_k + h v_{k+½}
/// v_{k+1}   = v_{k+½} + ½ h a_{k+1}
/// ```
///
/// From L. Verlet, *Computer "experiments" on classical fluids* (Phys. Rev. 159, 1967), in the
/// one-step form of Swope, Andersen, Berendsen and Wilson (J. Chem. Phys. 76, 1982); see Hairer,
/// Lubich and Wanner, *Geometric Numerical Integration* (2nd ed. 2006), §I.1.4. Explicit,
/// symmetric, symplectic and second order, with an energy error `O(h²)` that stays bounded over
/// exponentially long times. It is Z&S with `β = 0` and RATTLE without constraints.
///
/// One gradient evaluation per step: `a_{k+1}` is carried to the next step, cached with the `q`
/// it was computed at and recomputed whenever the incoming state's `q` differs bitwise from it.
/// The cache does not know the model: after changing a model's parameters between steps, or
/// stepping another model from the same `q`, call [`reset`](Self::reset). When
/// `Inertia::CONSTANT_MASS` holds the Cholesky factor of `M` is reused while `M` is unchanged;
/// a configuration-dependent `M(q)` is evaluated where each `a` is (the method is then no longer
/// symplectic).
#[derive(Clone, Copy, Debug)]
pub struct Verlet<const N: usize> {
    h: f64,
    mass: MassFactor<N>,
    /// The configuration and the acceleration computed there.
    carried: Option<(SVector<f64, N>, SVector<f64, N>)>,
}

impl<const N: usize> Verlet<N> {
    /// Creates a velocity Verlet stepper; fails unless `h` is positive and finite.
    pub fn new(h: f64) -> Result<Self, StepError> {
        Ok(Verlet {
            h: check_step_size(h)?,
            mass: MassFactor::default(),
            carried: None,
        })
    }

    /// Returns the step size `h`.
    pub fn step_size(&self) -> f64 {
        self.h
    }

    /// Forgets the acceleration carried from the last step, so the next step recomputes it.
    pub fn reset(&mut self) {
        self.carried = None;
    }

    /// Returns the carried acceleration if it was computed at exactly `q`.
    fn carried_at(&self, q: &SVector<f64, N>) -> Option<SVector<f64, N>> {
        let (at, a) = self.carried.as_ref()?;
        same_bits(at, q).then_some(*a)
    }
}

#[diagnostic::do_not_recommend]
impl<Model, const N: usize> Integrator<Model, N> for Verlet<N>
where
    Model: Inertia<N> + Potential<N>,
{
    fn step(&mut self, model: &Model, state: &mut State<N>) -> Result<StepReport, StepError> {
        crate::integrators::checks::check_constant_mass::<Model, N>("Störmer–Verlet")?;
        crate::integrators::checks::check_parameters(model)?;
        check_state(state)?;
        let (h, t) = (self.h, state.t);
        let mut factorizations = 0;
        let a_k = match self.carried_at(&state.q) {
            Some(a_k) => a_k,
            None => {
                let (a_k, _, count) = acceleration(model, &mut self.mass, &state.q, t)?;
                factorizations += count;
                a_k
            }
        };
        let v_half = state.v + a_k * (0.5 * h);
        let q_next = state.q + v_half * h;
        check_finite(&q_next, "q", t)?;
        let (a_next, _, count) = acceleration(model, &mut self.mass, &q_next, t)?;
        factorizations += count;
        let v_next = v_half + a_next * (0.5 * h);
        check_finite(&v_next, "v", t)?;

        self.carried = Some((q_next, a_next));
        state.q = q_next;
        state.v = v_next;
        state.t = t + h;
        Ok(StepReport {
            factorizations,
            newton_iterations: 0,
        })
    }
}
