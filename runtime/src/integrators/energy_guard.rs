//! The energy guard of the methods that have no constraint rows to watch: a blow-up of an
//! unconstrained or penalized run is an error, not an `Ok` with a state of energy 1e45.

use nalgebra::SVector;

use crate::error::StepError;
use crate::integrators::TierVector;
use crate::model::{Inertia, Potential};
use crate::state::State;

/// A guard against runs that blow up while their state stays finite: after every step of an
/// unconstrained or penalized method (Verlet, symplectic Euler, RK4, Newmark, push-forward
/// Newmark, Z&S, Z&Ss and stiff Z&Ss, on both tiers), the total energy `H = T + V` — with the
/// penalty in `V` for a penalized model — is compared with its value when the run started, and a
/// step whose energy has left a band around it is rejected with [`StepError::EnergyDiverged`]
/// (state unchanged) instead of being accepted.
///
/// # The test
///
/// At the start of a run (the first step, and every step from a configuration that the
/// integrator did not produce itself), the guard fixes the initial energy `H₀ = T(q₀, v₀) +
/// V(q₀)` and the energy scale
///
/// ```text
/// E = |T(q₀, v₀)| + |V(q₀)| + |∇V(q₀)|₁ · |q₀|∞ + A,
/// ```
///
/// and rejects a step whose result has
///
/// ```text
/// |H(q_{k+1}, v_{k+1}) − H₀| > limit · E          (or H not finite).
/// ```
///
/// `|T|` and `|V|` are the energy the state holds; `|∇V|₁ |q|∞` is the work the forces at the
/// start do over the configuration's own extent (for a pendulum released at rest from the
/// horizontal, where `T = V = 0`, it is `m g l`: the energy the fall will turn into motion), so
/// the scale does not vanish for a state at rest at the zero of the potential; `A` is the energy
/// the run may exchange with a heat bath ([`Integrator::admit_energy_exchange`](
/// crate::Integrator::admit_energy_exchange), which [`Langevin`](crate::Langevin) sets to
/// `n·kT`, twice the equipartition energy of its `n` momenta).
///
/// # Why this is the quantity to watch
///
/// A structure-preserving method that resolves its fastest motion keeps `|H − H₀|` at its
/// energy error, `O(h²)·E` for the second-order methods here: a fraction of `E`, and bounded
/// over exponentially long times. A method stepped beyond its stability limit (Verlet and the
/// penalized stiffness at `hω > 2`, RK4 at `hω > 2√2`, Z&Ss on the DNA chain at `h = 2`) has an
/// unstable mode whose amplitude, and with it `H`, grows geometrically; the state stays finite
/// for hundreds of steps while `H` runs through `1e45` and `1e112`. The default limit,
/// [`EnergyGuard::DEFAULT_LIMIT`] = 10, rejects the first step at which `H` has moved by ten
/// times the energy the run started with: far beyond any integration error of a run worth
/// keeping, and long before a geometric blow-up has left numbers a user could misread as
/// physics (the blown-up DNA chain is caught below `H = 11·E`, where `|H₀| ≤ E`).
///
/// One stable method the test cannot tell from a blow-up: [`Newmark`](crate::Newmark) with
/// `β > ¼` conserves `½vᵀMv + ½qᵀKq + ½(β − ¼)h² (Kq)ᵀM⁻¹(Kq)` on a linear model, not `H`, so
/// its `H` swings by the factor `1 + (β − ¼)(hω)²` between the phases of a mode of frequency
/// `ω`, and once that factor exceeds about `limit · E / |H₀|` (for a spring released from rest,
/// `E = 3|H₀|`: `hω ≈ 14` at `β = 0.4`) it leaves the band without diverging. Newmark at such
/// steps needs a larger limit.
///
/// What the test admits: energy that a dissipation removes (`H` falls at most to the minimum
/// of `V` over the motion, which for a bounded mechanism is within `|V₀| + |∇V|₁|q|∞` of `V₀`),
/// the work of prescribed forces of the size of the model's own energies, and the heat of a
/// Langevin bath (`A`). What needs a larger limit, or [`EnergyGuard::disabled`]: a run whose
/// energy legitimately changes by more than ten times its initial scale — a body falling freely
/// through many times its initial height, a collapse in an unbounded potential, a strongly
/// driven model.
///
/// The guard costs one evaluation of `T` and `V` per step (and of `∇V` at the start of a run).
///
/// ```
/// use mechanism_runtime::reference::HarmonicOscillator;
/// use mechanism_runtime::{EnergyGuard, Integrator, State, StepError, Verlet};
///
/// // A unit oscillator stepped at hω = 2.5, beyond Verlet's stability limit hω = 2.
/// let model = HarmonicOscillator::default();
/// let mut verlet = Verlet::<1>::new(2.5)?;
/// let mut state = State::new(0.0, [1.0], [0.0]);
/// let error = loop {
///     let before = state;
///     if let Err(error) = verlet.step(&model, &mut state) {
///         assert_eq!(state, before); // the rejected step left the state as it was
///         break error;
///     }
/// };
/// let StepError::EnergyDiverged { energy, initial, scale, .. } = error else { panic!() };
/// assert!((energy - initial).abs() > 10.0 * scale && state.t < 50.0);
///
/// // Switched off, the same run goes on and returns `Ok` on nonsense.
/// let mut unguarded = Verlet::<1>::new(2.5)?.with_energy_guard(EnergyGuard::disabled());
/// let mut state = State::new(0.0, [1.0], [0.0]);
/// for _ in 0..100 {
///     unguarded.step(&model, &mut state)?;
/// }
/// assert!(state.q[0].abs() > 1e20);
/// # Ok::<(), mechanism_runtime::StepError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EnergyGuard {
    limit: f64,
}

impl EnergyGuard {
    /// The default limit on `|H − H₀| / E`.
    pub const DEFAULT_LIMIT: f64 = 10.0;

    /// A guard that rejects a step when `|H − H₀|` exceeds `limit` times the run's energy scale.
    ///
    /// Fails with `BadParameter` unless `limit` is positive (`f64::INFINITY` disables it).
    pub fn new(limit: f64) -> Result<Self, StepError> {
        if limit > 0.0 {
            Ok(EnergyGuard { limit })
        } else {
            Err(StepError::BadParameter {
                name: "energy guard limit",
                value: limit,
                requirement: "must be positive (infinity disables the guard)",
            })
        }
    }

    /// A guard that accepts every finite step.
    pub fn disabled() -> Self {
        EnergyGuard {
            limit: f64::INFINITY,
        }
    }

    /// Returns the limit on `|H − H₀| / E`.
    pub fn limit(&self) -> f64 {
        self.limit
    }

    /// Returns whether the guard accepts every finite step.
    pub fn is_disabled(&self) -> bool {
        self.limit == f64::INFINITY
    }
}

impl Default for EnergyGuard {
    /// The guard with [`EnergyGuard::DEFAULT_LIMIT`].
    fn default() -> Self {
        EnergyGuard {
            limit: Self::DEFAULT_LIMIT,
        }
    }
}

/// What one integrator's [`EnergyGuard`] holds of the run it is in: the configuration its last
/// accepted step produced (a step from any other configuration starts a new run), the initial
/// energy `H₀` and the scale `E` without the bath's share, and that share `A`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct EnergyWatch<V> {
    guard: EnergyGuard,
    last_q: V,
    running: bool,
    initial: f64,
    scale: f64,
    exchange: f64,
}

impl<V: TierVector> EnergyWatch<V> {
    /// Creates the watch of `guard` with `zero`, a vector of the model's `n` coordinates.
    pub(crate) fn new(guard: EnergyGuard, zero: V) -> Self {
        EnergyWatch {
            guard,
            last_q: zero,
            running: false,
            initial: 0.0,
            scale: 0.0,
            exchange: 0.0,
        }
    }

    /// Returns the guard's limit (infinite when it is off).
    pub(crate) fn limit(&self) -> f64 {
        self.guard.limit
    }

    /// Replaces the guard's settings; the run goes on with its `H₀` and scale.
    pub(crate) fn set_guard(&mut self, guard: EnergyGuard) {
        self.guard = guard;
    }

    /// Sets the energy `A` the run may exchange with a heat bath (non-negative; a bad value
    /// counts as none).
    pub(crate) fn admit(&mut self, energy: f64) {
        self.exchange = if energy.is_finite() && energy > 0.0 {
            energy
        } else {
            0.0
        };
    }

    /// Writes the run the guard measures into `out` (for a checkpoint): whether one runs, its
    /// `H₀`, scale, bath share and last configuration.
    pub(crate) fn save(&self, out: &mut crate::checkpoint::Carried) {
        out.put_flag("guard.running", self.running);
        out.put(
            "guard.energy",
            &[self.initial, self.scale, self.exchange, self.guard.limit],
        );
        out.put("guard.last_q", self.last_q.as_slice());
    }

    /// Restores what [`save`](Self::save) wrote, checking every field first.
    pub(crate) fn restore(
        &mut self,
        from: &crate::checkpoint::Carried,
    ) -> Result<(), crate::checkpoint::CheckpointError> {
        let running = from.flag("guard.running")?;
        let energy = from.values("guard.energy", 4)?;
        let last_q = from.values("guard.last_q", self.last_q.as_slice().len())?;
        self.running = running;
        (self.initial, self.scale, self.exchange) = (energy[0], energy[1], energy[2]);
        self.last_q.as_mut_slice().copy_from_slice(last_q);
        Ok(())
    }

    /// Forgets the run, so that the next step starts a new one (after a change of the model).
    pub(crate) fn restart(&mut self) {
        self.running = false;
    }

    /// Returns whether a step from `q` continues the run: the guard is on and `q` is, bit for
    /// bit, the configuration of the last accepted step.
    #[inline]
    pub(crate) fn continues_at(&self, q: &[f64]) -> bool {
        self.running
            && self
                .last_q
                .as_slice()
                .iter()
                .zip(q)
                .all(|(a, b)| a.to_bits() == b.to_bits())
    }

    /// Starts a run at `q` unless a step from `q` continues one: `start()` returns
    /// `(T(q₀, v₀), V(q₀), |∇V(q₀)|₁)`, evaluated only then. Does nothing for a disabled guard.
    #[inline]
    pub(crate) fn begin(&mut self, q: &[f64], start: impl FnOnce() -> (f64, f64, f64)) {
        if !self.is_on() || self.continues_at(q) {
            return;
        }
        let (kinetic, potential, gradient_norm) = start();
        let extent = q.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        self.initial = kinetic + potential;
        self.scale = kinetic.abs() + potential.abs() + gradient_norm * extent;
        self.last_q.as_mut_slice().copy_from_slice(q);
        self.running = true;
    }

    /// Returns whether the guard is on (its limit is finite).
    #[inline]
    pub(crate) fn is_on(&self) -> bool {
        !self.guard.is_disabled()
    }

    /// Returns whether the guard accepts `energy`, the `H` after a step: it is off, or no run is
    /// measured, or `|H − H₀| ≤ limit · E`, or the scale is not finite (a start the guard cannot
    /// measure against). A NaN energy is rejected.
    #[inline]
    pub(crate) fn accepts(&self, energy: f64) -> bool {
        let scale = self.scale + self.exchange;
        !self.is_on()
            || !self.running
            || (energy - self.initial).abs() <= self.guard.limit * scale
            || !scale.is_finite()
    }

    /// Returns `EnergyDiverged` unless the guard [`accepts`](Self::accepts) `energy`, the `H`
    /// after a step from the time `t`.
    #[inline]
    pub(crate) fn check(&self, energy: f64, t: f64) -> Result<(), StepError> {
        if self.accepts(energy) {
            return Ok(());
        }
        Err(StepError::EnergyDiverged {
            energy,
            initial: self.initial,
            scale: self.scale + self.exchange,
            limit: self.guard.limit,
            t,
        })
    }

    /// Checks the energy of a step's result from the time `t`, evaluated by `energy` only when
    /// the guard is on, and, if the guard accepts it, records `q_next` as where the run goes on.
    #[inline]
    pub(crate) fn check_and_accept(
        &mut self,
        energy: impl FnOnce() -> f64,
        q_next: &[f64],
        t: f64,
    ) -> Result<(), StepError> {
        if self.is_on() {
            self.check(energy(), t)?;
            self.accept(q_next);
        }
        Ok(())
    }

    /// Records `q_next`, the configuration of the step just accepted, as where the run goes on.
    #[inline]
    pub(crate) fn accept(&mut self, q_next: &[f64]) {
        if self.running {
            self.last_q.as_mut_slice().copy_from_slice(q_next);
        }
    }
}

/// Returns `H(q, v) = T(q, v) + V(q)` of a fixed-size model.
#[inline(always)]
pub(crate) fn energy<Model, const N: usize>(
    model: &Model,
    q: &SVector<f64, N>,
    v: &SVector<f64, N>,
) -> f64
where
    Model: Inertia<N> + Potential<N> + ?Sized,
{
    model.kinetic_energy(q, v) + model.potential(q)
}

/// Returns `(T(q, v), V(q), |∇V(q)|₁)` of a fixed-size model: the terms of the guard's scale
/// at the start of a run ([`EnergyWatch::begin`]).
pub(crate) fn energy_terms<Model, const N: usize>(
    model: &Model,
    q: &SVector<f64, N>,
    v: &SVector<f64, N>,
) -> (f64, f64, f64)
where
    Model: Inertia<N> + Potential<N> + ?Sized,
{
    let mut grad = SVector::<f64, N>::zeros();
    model.potential_gradient(q, &mut grad);
    (
        model.kinetic_energy(q, v),
        model.potential(q),
        grad.lp_norm(1),
    )
}

impl<const N: usize> EnergyWatch<[f64; N]> {
    /// Starts a run at `state` of a fixed-size model unless a step from it continues one
    /// ([`begin`](Self::begin)).
    #[inline]
    pub(crate) fn begin_at<Model>(&mut self, model: &Model, state: &State<N>)
    where
        Model: Inertia<N> + Potential<N> + ?Sized,
    {
        self.begin(state.q.as_slice(), || {
            energy_terms(model, &state.q, &state.v)
        });
    }

    /// Checks the energy of the step's result `(q_next, v_next)` from the time `t` and, if the
    /// guard accepts it, records `q_next` as where the run goes on; evaluates nothing when the
    /// guard is off.
    #[inline]
    pub(crate) fn check_step<Model>(
        &mut self,
        model: &Model,
        q_next: &SVector<f64, N>,
        v_next: &SVector<f64, N>,
        t: f64,
    ) -> Result<(), StepError>
    where
        Model: Inertia<N> + Potential<N> + ?Sized,
    {
        self.check_and_accept(|| energy(model, q_next, v_next), q_next.as_slice(), t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_is_measured_against_its_start() {
        let mut watch = EnergyWatch::new(EnergyGuard::default(), [0.0; 2]);
        // T = 1, V = −3, |∇V|₁ = 2 at |q|∞ = 0.5: H₀ = −2, E = 1 + 3 + 1 = 5.
        watch.begin(&[0.5, -0.25], || (1.0, -3.0, 2.0));
        assert!(watch.check(-2.0 + 50.0, 0.0).is_ok());
        let Err(StepError::EnergyDiverged { initial, scale, .. }) = watch.check(-2.0 + 50.1, 0.0)
        else {
            panic!("the guard let an energy beyond its band pass");
        };
        assert_eq!((initial, scale), (-2.0, 5.0));
        assert!(watch.check(-2.0 - 50.1, 0.0).is_err());
        assert!(watch.check(f64::NAN, 0.0).is_err());
        // A step from the configuration the run reached goes on with the same start …
        watch.accept(&[0.6, -0.2]);
        watch.begin(&[0.6, -0.2], || panic!("a continuing run is not restarted"));
        assert!(watch.check(40.0, 1.0).is_ok());
        // … and one from anywhere else starts a new run.
        watch.begin(&[0.6, -0.3], || (0.0, 0.0, 0.0));
        assert!(watch.check(1e-300, 1.0).is_err());
    }

    #[test]
    fn the_bath_widens_the_band_and_a_disabled_guard_accepts_all() {
        let mut watch = EnergyWatch::new(EnergyGuard::default(), [0.0; 1]);
        watch.begin(&[1.0], || (0.0, 1.0, 1.0));
        assert!(watch.check(30.0, 0.0).is_err());
        watch.admit(2.0);
        assert!(watch.check(30.0, 0.0).is_ok());
        watch.set_guard(EnergyGuard::disabled());
        assert!(watch.check(f64::NAN, 0.0).is_ok());
        assert!(EnergyGuard::new(0.0).is_err() && EnergyGuard::new(f64::NAN).is_err());
    }
}
