//! Constant-temperature (Langevin) dynamics by the Geometric Langevin Algorithm (GLA): any
//! deterministic integrator of this crate composed with the exact Ornstein–Uhlenbeck flow.
//!
//! Tao and Owhadi (2014) §4.3 write Langevin dynamics as (eq. 27)
//!
//! ```text
//! dq = ∂H/∂p dt
//! dp = −∂H/∂q dt − γ ∂H/∂p dt + √(2γ β⁻¹) dW,      H = ½ pᵀM⁻¹p + V(q),   β⁻¹ = kT
//! ```
//!
//! whose invariant measure is the Boltzmann–Gibbs density `exp(−βH)/Z` (eq. 28), and simulate
//! it with GLA (N. Bou-Rabee and H. Owhadi, *Long-run accuracy of variational integrators in
//! the stochastic context*, SIAM J. Numer. Anal. 48, 2010): "composing the one-step update of a
//! deterministic integrator with the exact flow of an Ornstein–Uhlenbeck process
//! `dp = −γM⁻¹p dt + √(2γβ⁻¹) dW`". [`Langevin`] wraps the deterministic integrator.

mod ornstein_uhlenbeck;

use chacha20::rand_core::SeedableRng;
use chacha20::ChaCha8Rng;
use nalgebra::{SMatrix, SVector};
use rand_distr::{Distribution, StandardNormal};

use self::ornstein_uhlenbeck::OrnsteinUhlenbeck;
use super::checks::{check_finite, check_state, check_step_size};
use super::{Integrator, StepReport};
use crate::error::StepError;
use crate::model::Inertia;
use crate::state::State;

/// The Geometric Langevin Algorithm (Tao–Owhadi 2014 §4.3, eq. 27; Bou-Rabee–Owhadi 2010):
/// the exact Ornstein–Uhlenbeck flow over a full step, then one step of the deterministic
/// integrator `I`.
///
/// One step from `(t_k, q_k, v_k)` with `p = M(q) v`:
///
/// ```text
/// p̃_k = e^{−γhM⁻¹} p_k + η_k,   η_k ~ N(0, kT M (I − e^{−2γhM⁻¹}))   (exact OU flow, q fixed)
/// (q_{k+1}, p_{k+1}) = Φ_h(q_k, p̃_k)                                  (the inner integrator)
/// ```
///
/// in this order: GLA is the Lie–Trotter splitting `Φ_h ∘ θ_h` of Bou-Rabee and Owhadi, OU
/// first. The friction is the paper's `γ ∂H/∂p = γ M⁻¹p` (eq. 27), so with `M = m I` each
/// momentum decays at the rate `γ/m`, not `γ`. The matrix exponential is computed in the
/// eigenbasis of `M` (`M = Q D Qᵀ`, see the crate-private `OrnsteinUhlenbeck`): once for a
/// constant mass matrix, and again whenever `M(q)` differs from the last one.
///
/// If `Φ_h` is symplectic the invariant measure of the chain approximates Boltzmann–Gibbs to
/// within the accuracy with which `Φ_h` represents `H` (Bou-Rabee–Owhadi 2010); on a harmonic
/// oscillator with [`Verlet`](crate::Verlet) `⟨q²⟩` carries an `O(h²)` bias. The noise comes
/// from a ChaCha8 stream (the same words on every platform) seeded with a `u64`, turned into
/// normal draws by `rand_distr`'s ziggurat `StandardNormal`, so the same seed, model, initial
/// state and inner integrator give the same trajectory bit for bit on a given platform (the
/// ziggurat's rare tail draws call `ln`/`exp`, whose last bit may differ between math
/// libraries). No heap allocation per step.
///
/// `h` must be the inner integrator's step size; a step whose inner step does not advance `t`
/// by `h` fails with [`StepError::BadParameter`]. A failed step leaves the state and the random
/// stream unchanged.
#[derive(Debug)]
pub struct Langevin<I, const N: usize> {
    inner: I,
    h: f64,
    friction: f64,
    temperature: f64,
    rng: ChaCha8Rng,
    flow: Option<OrnsteinUhlenbeck<N>>,
}

impl<I, const N: usize> Langevin<I, N> {
    /// Wraps `inner` (whose step size must be `h`) with friction `γ = friction ≥ 0`,
    /// temperature `kT = temperature ≥ 0` and a noise stream seeded with `seed`.
    ///
    /// Fails with `BadStepSize` unless `h` is positive and finite, and with `BadParameter`
    /// unless `γ` and `kT` are finite and non-negative. `γ = 0` is the inner integrator alone;
    /// `kT = 0` is pure friction.
    pub fn new(
        inner: I,
        h: f64,
        friction: f64,
        temperature: f64,
        seed: u64,
    ) -> Result<Self, StepError> {
        let non_negative = |name, value: f64| {
            if value.is_finite() && value >= 0.0 {
                Ok(value)
            } else {
                Err(StepError::BadParameter {
                    name,
                    value,
                    requirement: "must be finite and non-negative",
                })
            }
        };
        Ok(Langevin {
            inner,
            h: check_step_size(h)?,
            friction: non_negative("friction", friction)?,
            temperature: non_negative("temperature", temperature)?,
            rng: ChaCha8Rng::seed_from_u64(seed),
            flow: None,
        })
    }

    /// Returns the step size `h`.
    pub fn step_size(&self) -> f64 {
        self.h
    }

    /// Returns the friction `γ`.
    pub fn friction(&self) -> f64 {
        self.friction
    }

    /// Returns the temperature `kT = β⁻¹`.
    pub fn temperature(&self) -> f64 {
        self.temperature
    }

    /// Returns the deterministic integrator.
    pub fn inner(&self) -> &I {
        &self.inner
    }

    /// Returns the deterministic integrator, e.g. to reset a carried acceleration.
    pub fn inner_mut(&mut self) -> &mut I {
        &mut self.inner
    }

    /// Restarts the noise stream from `seed`.
    pub fn reseed(&mut self, seed: u64) {
        self.rng = ChaCha8Rng::seed_from_u64(seed);
    }

    /// Applies the exact Ornstein–Uhlenbeck flow over `h` to `state.v`, at `state.q`.
    fn ornstein_uhlenbeck<Model>(
        &mut self,
        model: &Model,
        state: &mut State<N>,
    ) -> Result<(), StepError>
    where
        Model: Inertia<N>,
    {
        let mut mass = SMatrix::<f64, N, N>::zeros();
        model.mass_matrix(&state.q, &mut mass);
        let flow = match self.flow {
            Some(flow) if flow.is_for(&mass) => flow,
            _ => {
                let flow = OrnsteinUhlenbeck::try_new(
                    &mass,
                    self.friction * self.h,
                    self.temperature,
                    state.t,
                )?;
                self.flow = Some(flow);
                flow
            }
        };
        let xi = SVector::<f64, N>::from_fn(|_, _| StandardNormal.sample(&mut self.rng));
        let v = flow.apply(&state.v, &xi);
        check_finite(&v, "v", state.t)?;
        state.v = v;
        Ok(())
    }
}

#[diagnostic::do_not_recommend]
impl<I, Model, const N: usize> Integrator<Model, N> for Langevin<I, N>
where
    I: Integrator<Model, N>,
    Model: Inertia<N>,
{
    fn step(&mut self, model: &Model, state: &mut State<N>) -> Result<StepReport, StepError> {
        crate::integrators::checks::check_parameters(model)?;
        check_state(state)?;
        let stream_position = self.rng.get_word_pos();
        let mut trial = *state;
        let result = self
            .ornstein_uhlenbeck(model, &mut trial)
            .and_then(|()| self.inner.step(model, &mut trial))
            .and_then(|report| {
                let advanced = trial.t - state.t;
                let tolerance = 1e-9 * self.h + 4.0 * f64::EPSILON * state.t.abs();
                if (advanced - self.h).abs() <= tolerance {
                    Ok(report)
                } else {
                    Err(StepError::BadParameter {
                        name: "h",
                        value: self.h,
                        requirement: "must equal the step size of the inner integrator",
                    })
                }
            });
        match result {
            Ok(report) => {
                *state = trial;
                Ok(report)
            }
            Err(err) => {
                self.rng.set_word_pos(stream_position);
                Err(err)
            }
        }
    }
}
