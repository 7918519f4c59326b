//! Velocity Verlet (Störmer–Verlet): the second-order explicit symplectic method, on both tiers.

use crate::error::StepError;
use crate::integrators::checks::check_finite_slice;
use crate::integrators::linearly_implicit::carried::{
    AccelerationRule, CarriedDense, CarriedScheme, CarriedSparse, MassSolve, RuleDefaults,
};
use crate::integrators::StepReport;
use crate::model::GeneratedSolve;

/// Velocity Verlet (Störmer–Verlet, "kick–drift–kick") for `M q̈ = −∇V(q)`:
///
/// ```text
/// a_k       = −M⁻¹ ∇V(q_k)
/// q_{k+1}   = q_k + h v_k + ½ h² a_k
/// v_{k+1}   = v_k + ½ h (a_k + a_{k+1})
/// ```
///
/// From L. Verlet, *Computer "experiments" on classical fluids* (Phys. Rev. 159, 1967), in the
/// one-step form of Swope, Andersen, Berendsen and Wilson (J. Chem. Phys. 76, 1982); see Hairer,
/// Lubich and Wanner, *Geometric Numerical Integration* (2nd ed. 2006), §I.1.4. Explicit,
/// symmetric, symplectic and second order, with an energy error `O(h²)` that stays bounded over
/// exponentially long times. It is Z&S with `β = 0` and RATTLE without constraints, and it is
/// the [`CarriedScheme`] with the acceleration `−M⁻¹ ∇V` ([`ExplicitAcceleration`]); its twin
/// on the sparse tier is [`SparseVerlet`].
///
/// One gradient evaluation per step: `a_{k+1}` is carried to the next step, cached with the `q`
/// it was computed at and recomputed whenever the incoming state's `q` differs bitwise from it.
/// The cache does not know the model: after changing a model's parameters between steps, or
/// stepping another model from the same `q`, call [`reset`](CarriedScheme::reset). The Cholesky
/// factor of the constant `M` is reused while `M` is unchanged; a configuration-dependent `M`
/// is refused with [`StepError::Unsupported`]. Beyond the stability limit `hω > 2` a step whose
/// energy has left the band of its run is refused with [`StepError::EnergyDiverged`]
/// ([`EnergyGuard`](crate::EnergyGuard), [`with_energy_guard`](CarriedScheme::with_energy_guard)),
/// as in every [`CarriedScheme`].
///
/// # Example
///
/// ```
/// use mechanism_runtime::reference::HarmonicOscillator;
/// use mechanism_runtime::{Integrator, State, Verlet};
/// let model = HarmonicOscillator::default();
/// let mut verlet = Verlet::<1>::new(0.01)?;
/// let mut state = State::new(0.0, [1.0], [0.0]);
/// for _ in 0..100 {
///     verlet.step(&model, &mut state)?;
/// }
/// assert!((state.t - 1.0).abs() < 1e-12);
/// # Ok::<(), mechanism_runtime::StepError>(())
/// ```
pub type Verlet<const N: usize> = CarriedScheme<CarriedDense<N>, ExplicitAcceleration>;

/// Velocity Verlet on the sparse tier: the scheme of [`Verlet`], with `M⁻¹` applied body by
/// body through the factor of the constant mass blocks; built for a model with
/// [`SparseVerlet::new`](CarriedScheme::new)`(&model, h)`, no allocation per step.
pub type SparseVerlet = CarriedScheme<CarriedSparse, ExplicitAcceleration>;

/// The acceleration of velocity Verlet, `a = −M(x)⁻¹ ∇V(x)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct ExplicitAcceleration;

impl RuleDefaults for ExplicitAcceleration {
    const DEFAULT_BETA: f64 = 0.0;
}

impl<Model: ?Sized, S: MassSolve<Model>> AccelerationRule<Model, S> for ExplicitAcceleration {
    const NAME: &'static str = "Störmer–Verlet";

    fn acceleration(
        &mut self,
        system: &mut S,
        model: &Model,
        x: &[f64],
        _guess: Option<&[f64]>,
        _beta_h2: f64,
        out: &mut [f64],
        _scratch: &mut [f64],
        t: f64,
    ) -> Result<StepReport, StepError> {
        system.gradient(model, x, out);
        check_finite_slice(out, "gradient", t)?;
        let factorizations = system.solve_mass(model, x, out, t)?;
        out.iter_mut().for_each(|a| *a = -*a);
        check_finite_slice(out, "acceleration", t)?;
        Ok(StepReport {
            factorizations,
            newton_iterations: 0,
        })
    }

    #[inline]
    fn generated_acceleration(
        &mut self,
        system: &mut S,
        model: &Model,
        x: &[f64],
        _beta_h2: f64,
        out: &mut [f64],
        _scratch: &mut [f64],
    ) -> Option<StepReport> {
        system.gradient(model, x, out);
        if system.generated_solve_mass(model, x, out) != GeneratedSolve::Solved {
            return None;
        }
        out.iter_mut().for_each(|a| *a = -*a);
        Some(StepReport::default())
    }
}
