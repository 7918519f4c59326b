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
//! `dp = −γM⁻¹p dt + √(2γβ⁻¹) dW`". [`Langevin`] wraps a deterministic integrator of the
//! fixed-size tier, [`SparseLangevin`] one of the sparse tier; both are the one
//! [`LangevinScheme`].

mod jacobian;
mod ornstein_uhlenbeck;

use chacha20::rand_core::SeedableRng;
use chacha20::ChaCha8Rng;
use nalgebra::SMatrix;

use self::ornstein_uhlenbeck::OrnsteinUhlenbeck;
use super::checks::{
    check_body_sizes, check_dyn_state, check_finite_slice, check_parameters,
    check_sparse_parameters, check_state, check_step_size,
};
use super::{Integrator, SparseIntegrator, StepReport};
use crate::checkpoint::{Carried, CheckpointError, IntegratorIdentity};
use crate::error::StepError;
use crate::integrators::checks::check_built_for;
use crate::model::{Inertia, SparseInertia};
use crate::state::{DynState, State};

/// The name of the matrix whose eigendecomposition failed, for errors.
const MASS_MATRIX: &str = "mass matrix (eigendecomposition for the Ornstein–Uhlenbeck step)";

/// The Geometric Langevin Algorithm (Tao–Owhadi 2014 §4.3, eq. 27; Bou-Rabee–Owhadi 2010) on
/// the fixed-size tier: the exact Ornstein–Uhlenbeck flow over a full step, then one step of the
/// deterministic integrator `I`.
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
/// eigenbasis of `M` (`M = Q D Qᵀ`, by Jacobi rotations): once for a constant mass matrix, and
/// again whenever `M(q)` differs from the last one.
///
/// If `Φ_h` is symplectic the invariant measure of the chain approximates Boltzmann–Gibbs to
/// within the accuracy with which `Φ_h` represents `H` (Bou-Rabee–Owhadi 2010); on a harmonic
/// oscillator with [`Verlet`](crate::Verlet) `⟨q²⟩` carries an `O(h²)` bias. The noise comes
/// from a ChaCha8 stream (the same words on every platform) seeded with a `u64`, turned into
/// normal draws by `rand_distr`'s ziggurat `StandardNormal`, one per coordinate in coordinate
/// order, so the same seed, model, initial state and inner integrator give the same trajectory
/// bit for bit on a given platform (the ziggurat's rare tail draws call `ln`/`exp`, whose last
/// bit may differ between math libraries). The buffers of the flow are sized in
/// [`new`](LangevinScheme::new); no heap allocation per step.
///
/// Around an integrator that differentiates its step, GLA does too, along the step's draws
/// (the pathwise derivative of one realization; `jacobian.rs`):
/// [`DifferentiableStep`](crate::DifferentiableStep) and
/// [`DifferentiableInParameters`](crate::DifferentiableInParameters) here,
/// [`SparseDifferentiableStep`](crate::SparseDifferentiableStep) for [`SparseLangevin`].
/// A copy ([`Clone`]) draws the same noise as the original from where it stands.
///
/// `h` must be the inner integrator's step size; a step whose inner step does not advance `t`
/// by `h` fails with [`StepError::BadParameter`]. A failed step leaves the state and the random
/// stream unchanged. A mass matrix with a negative eigenvalue fails with
/// [`StepError::NotPositiveDefinite`] (its `row` is the eigenvalue's index), one with a
/// vanishing eigenvalue with [`StepError::Singular`].
///
/// # Example
///
/// A unit oscillator at `kT = 0.5` around [`Verlet`](crate::Verlet): the time average of
/// `q²` approaches `kT/k`.
///
/// ```
/// use mechanism_runtime::reference::HarmonicOscillator;
/// use mechanism_runtime::{Integrator, Langevin, State, Verlet};
///
/// let (h, kt) = (0.05, 0.5);
/// let mut langevin = Langevin::new(Verlet::new(h)?, h, 1.0, kt, 2014)?;
/// let mut state = State::new(0.0, [1.0], [0.0]);
/// let (steps, mut sum) = (200_000, 0.0);
/// for _ in 0..steps {
///     langevin.step(&HarmonicOscillator::default(), &mut state)?;
///     sum += state.q[0] * state.q[0];
/// }
/// assert!((sum / steps as f64 - kt).abs() < 0.1 * kt);
/// # Ok::<(), mechanism_runtime::StepError>(())
/// ```
pub type Langevin<I, const N: usize> = LangevinScheme<I, State<N>>;

/// The Geometric Langevin Algorithm on the sparse tier: [`Langevin`]'s step for a model with a
/// block-diagonal mass matrix ([`SparseInertia`]) and an inner [`SparseIntegrator`], with the
/// exact Ornstein–Uhlenbeck flow taken block by block.
///
/// `M = diag(M_1, …, M_B)` (one block per body) makes `e^{−γhM⁻¹}` and the noise covariance
/// `kT M (I − e^{−2γhM⁻¹})` block diagonal too, so each body's velocities move by the flow of
/// its own block, in the eigenbasis `M_b = Q_b D_b Q_bᵀ`: a cost of `O(Σ s_b³)` per change of
/// `M` and `O(Σ s_b²)` per step, linear in the number of bodies. An eigenvalue of a block that
/// is negative fails with [`StepError::NotPositiveDefinite`] whose `row` is the block's first
/// coordinate plus the eigenvalue's index in the block (so it names the body); a vanishing one
/// with [`StepError::Singular`].
///
/// # Example
///
/// Tao–Owhadi's chain of pendula at temperature `kT = 0.1`, stepped by [`SparseSpook`](crate::SparseSpook):
///
/// ```
/// use mechanism_runtime::reference::PendulumChain;
/// use mechanism_runtime::{SparseIntegrator, SparseLangevin, SparseSpook};
///
/// let chain = PendulumChain::tao_owhadi(100);
/// let mut state = chain.tao_owhadi_state();
/// let h = 0.01;
/// let spook = SparseSpook::new(&chain, h)?;
/// // Buffers for the model's blocks, sized here; friction γ = 1, kT = 0.1, seed 7.
/// let mut langevin = SparseLangevin::new(&chain, spook, h, 1.0, 0.1, 7)?;
/// for _ in 0..100 {
///     langevin.step(&chain, &mut state)?;
/// }
/// assert!((state.t - 1.0).abs() < 1e-12);
/// # Ok::<(), mechanism_runtime::StepError>(())
/// ```
pub type SparseLangevin<I> = LangevinScheme<I, DynState>;

/// The Geometric Langevin Algorithm around an inner integrator `I`, for states `S` of one tier
/// ([`State<N>`] for [`Langevin`], [`DynState`] for [`SparseLangevin`]); the equations are in
/// the docs of [`Langevin`].
///
/// Why one scheme parameterized by the state, rather than a seam trait per tier as in SPOOK:
/// the Ornstein–Uhlenbeck flow needs no linear solve, only the eigendecomposition of each
/// diagonal block of `M`, and the fixed-size tier's dense `M` is the special case of one block
/// of size `N`. So the flow is written once on slices, block by block (a crate-private
/// `OrnsteinUhlenbeck` with its buffers sized when the wrapper is built), and so is the step
/// around it: the trial state, the rewinding of the noise stream on failure, the check that the
/// inner step advanced `t` by `h`. What differs between the tiers is only how the mass matrix
/// is read (`Inertia::mass_matrix` into one block, or `SparseInertia::mass_blocks`), which
/// trait the inner integrator implements, and the sparse tier's check that a model fits the
/// buffers; the two `Integrator`/`SparseIntegrator` impls are those few lines. The fixed-size
/// tier's buffers are then on the heap, allocated once in [`new`](LangevinScheme::new) (a few
/// `N²` values); its steps stay allocation-free.
#[derive(Debug)]
pub struct LangevinScheme<I, S> {
    inner: I,
    h: f64,
    friction: f64,
    temperature: f64,
    rng: ChaCha8Rng,
    flow: OrnsteinUhlenbeck,
    /// The state being stepped; committed only on success.
    trial: S,
    /// What the last linearized step keeps for the Jacobian of its Ornstein–Uhlenbeck flow.
    linearization: jacobian::Linearization,
}

/// A copy continues the noise stream where the original stands: both draw the same noise
/// from here on (a fresh stream needs [`reseed`](LangevinScheme::reseed)).
impl<I: Clone, S: Clone> Clone for LangevinScheme<I, S> {
    fn clone(&self) -> Self {
        let mut rng = ChaCha8Rng::from_seed(self.rng.get_seed());
        rng.set_stream(self.rng.get_stream());
        rng.set_word_pos(self.rng.get_word_pos());
        LangevinScheme {
            inner: self.inner.clone(),
            h: self.h,
            friction: self.friction,
            temperature: self.temperature,
            rng,
            flow: self.flow.clone(),
            trial: self.trial.clone(),
            linearization: self.linearization.clone(),
        }
    }
}

impl<I, const N: usize> LangevinScheme<I, State<N>> {
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
        let trial = State::new(0.0, [0.0; N], [0.0; N]);
        scheme(inner, &[N], h, friction, temperature, seed, trial)
    }
}

impl<I> LangevinScheme<I, DynState> {
    /// Wraps `inner` (whose step size must be `h`) for `model`, with friction
    /// `γ = friction ≥ 0`, temperature `kT = temperature ≥ 0` and a noise stream seeded with
    /// `seed`; sizes every buffer for the model's bodies, so that no step allocates.
    ///
    /// Fails as [`Langevin::new`](LangevinScheme::new) does, and with `InvalidModel` if the
    /// model's body sizes do not add up to its number of coordinates.
    pub fn new<Model: SparseInertia + ?Sized>(
        model: &Model,
        inner: I,
        h: f64,
        friction: f64,
        temperature: f64,
        seed: u64,
    ) -> Result<Self, StepError> {
        let n = model.coordinate_count();
        check_body_sizes(model.body_sizes(), n)?;
        let trial = DynState::new(0.0, vec![0.0; n], vec![0.0; n]);
        scheme(
            inner,
            model.body_sizes(),
            h,
            friction,
            temperature,
            seed,
            trial,
        )
    }
}

/// Checks the parameters and builds the scheme with the flow for blocks of sizes `sizes`.
fn scheme<I, S>(
    inner: I,
    sizes: &[usize],
    h: f64,
    friction: f64,
    temperature: f64,
    seed: u64,
    trial: S,
) -> Result<LangevinScheme<I, S>, StepError> {
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
    let h = check_step_size(h)?;
    let friction = non_negative("friction", friction)?;
    let temperature = non_negative("temperature", temperature)?;
    Ok(LangevinScheme {
        inner,
        h,
        friction,
        temperature,
        rng: ChaCha8Rng::seed_from_u64(seed),
        flow: OrnsteinUhlenbeck::new(sizes, friction * h, temperature),
        trial,
        linearization: jacobian::Linearization::new(sizes.iter().sum()),
    })
}

impl<I, S> LangevinScheme<I, S> {
    /// Returns `n·kT` for `n` coordinates: the energy the run may exchange with the bath, which
    /// the inner integrator's energy guard admits ([`Integrator::admit_energy_exchange`]).
    /// At equilibrium the `n` momenta hold `n·kT/2` on average and a harmonic potential as
    /// much again, so `n·kT` is what a run started cold takes up from the bath.
    fn bath_energy(&self, n: usize) -> f64 {
        n as f64 * self.temperature
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

    /// Returns the identity of the scheme around the inner integrator's, if it has one.
    fn identity_around(&self, inner: Option<IntegratorIdentity>) -> Option<IntegratorIdentity> {
        let inner = inner?;
        let mut identity = IntegratorIdentity::new(format!("Langevin({})", inner.name));
        identity.settings = inner.settings;
        Some(
            identity
                .setting("langevin.h", self.h)
                .setting("langevin.friction", self.friction)
                .setting("langevin.temperature", self.temperature),
        )
    }

    /// Writes the noise stream's key, stream number and word position: restored, the stream
    /// continues with the draws the uninterrupted run would have taken.
    fn save_noise(&self, out: &mut Carried) {
        let seed = self.rng.get_seed();
        let mut words: Vec<u64> = seed
            .chunks_exact(8)
            .map(|chunk| {
                chunk
                    .iter()
                    .rev()
                    .fold(0u64, |w, &b| (w << 8) | u64::from(b))
            })
            .collect();
        let position = self.rng.get_word_pos();
        words.push(self.rng.get_stream());
        words.push(position as u64);
        words.push((position >> 64) as u64);
        out.put_words("noise", &words);
    }

    /// Returns the noise stream that [`save_noise`](Self::save_noise) wrote.
    fn noise_from(from: &Carried) -> Result<ChaCha8Rng, CheckpointError> {
        let words = from.words("noise", 7)?;
        let mut seed = [0u8; 32];
        for (chunk, word) in seed.chunks_exact_mut(8).zip(words) {
            chunk.copy_from_slice(&word.to_le_bytes());
        }
        let mut rng = ChaCha8Rng::from_seed(seed);
        rng.set_stream(words[4]);
        rng.set_word_pos(u128::from(words[5]) | (u128::from(words[6]) << 64));
        Ok(rng)
    }

    /// Returns the wrapped integrator's fields under `inner.` and the noise stream; the
    /// Ornstein–Uhlenbeck flow and the trial state are rebuilt by every step.
    fn save_with(&self, inner: impl FnOnce(&I, &mut Carried), out: &mut Carried) {
        let mut fields = Carried::default();
        inner(&self.inner, &mut fields);
        out.put_nested("inner", fields);
        self.save_noise(out);
    }

    /// Restores what [`save_with`](Self::save_with) wrote: the noise stream is decoded first,
    /// so that a bad field leaves the scheme unchanged.
    fn restore_with(
        &mut self,
        inner: impl FnOnce(&mut I, &Carried) -> Result<(), CheckpointError>,
        from: &Carried,
    ) -> Result<(), CheckpointError> {
        let rng = Self::noise_from(from)?;
        inner(&mut self.inner, &from.nested("inner"))?;
        self.rng = rng;
        Ok(())
    }

    /// Restarts the noise stream from `seed`.
    pub fn reseed(&mut self, seed: u64) {
        self.rng = ChaCha8Rng::seed_from_u64(seed);
    }

    /// Runs one GLA step of both tiers from `state`: the exact Ornstein–Uhlenbeck flow on the
    /// trial state's `v` with the mass blocks `mass_blocks` writes for its `q`, then
    /// `inner_step`, then the check that `t` advanced by `h`; commits the trial state on
    /// success, rewinds the noise stream on failure.
    fn advance<Model: ?Sized>(
        &mut self,
        model: &Model,
        state: &mut S,
        mass_blocks: impl FnOnce(&Model, &S, &mut [f64]),
        inner_step: impl FnOnce(&mut I, &Model, &mut S) -> Result<StepReport, StepError>,
    ) -> Result<StepReport, StepError>
    where
        S: Phase,
    {
        let t = state.time();
        let stream_position = self.rng.get_word_pos();
        self.trial.load(state);
        mass_blocks(model, &self.trial, self.flow.mass_mut());
        let result = check_finite_slice(self.flow.mass(), "mass matrix", t)
            .and_then(|()| {
                self.flow
                    .prepare()
                    .map_err(StepError::linear_algebra(MASS_MATRIX, t))
            })
            .and_then(|()| {
                let v = self.trial.velocities_mut();
                self.flow.apply(v, &mut self.rng);
                check_finite_slice(v, "v", t)
            })
            .and_then(|()| inner_step(&mut self.inner, model, &mut self.trial))
            .and_then(|report| {
                let advanced = self.trial.time() - t;
                let tolerance = 1e-9 * self.h + 4.0 * f64::EPSILON * t.abs();
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
                std::mem::swap(state, &mut self.trial);
                Ok(report)
            }
            Err(err) => {
                self.rng.set_word_pos(stream_position);
                Err(err)
            }
        }
    }
}

/// What [`LangevinScheme::advance`] needs of a tier's state.
trait Phase {
    /// Returns `t`.
    fn time(&self) -> f64;
    /// Returns `v`.
    fn velocities_mut(&mut self) -> &mut [f64];
    /// Overwrites `self` with `other` without allocating (the sizes agree).
    fn load(&mut self, other: &Self);
}

impl<const N: usize> Phase for State<N> {
    fn time(&self) -> f64 {
        self.t
    }
    fn velocities_mut(&mut self) -> &mut [f64] {
        self.v.as_mut_slice()
    }
    fn load(&mut self, other: &Self) {
        *self = *other;
    }
}

impl Phase for DynState {
    fn time(&self) -> f64 {
        self.t
    }
    fn velocities_mut(&mut self) -> &mut [f64] {
        &mut self.v
    }
    fn load(&mut self, other: &Self) {
        self.t = other.t;
        self.q.clone_from(&other.q);
        self.v.clone_from(&other.v);
    }
}

#[diagnostic::do_not_recommend]
impl<I, Model, const N: usize> Integrator<Model, N> for LangevinScheme<I, State<N>>
where
    I: Integrator<Model, N>,
    Model: Inertia<N>,
{
    fn carried_identity(&self) -> Option<IntegratorIdentity> {
        self.identity_around(self.inner.carried_identity())
    }

    fn save_carried(&self, out: &mut Carried) {
        self.save_with(|inner, out| inner.save_carried(out), out)
    }

    fn restore_carried(&mut self, from: &Carried) -> Result<(), CheckpointError> {
        self.restore_with(|inner, from| inner.restore_carried(from), from)
    }
    fn step(&mut self, model: &Model, state: &mut State<N>) -> Result<StepReport, StepError> {
        self.step_fixed(model, state, |inner, model, trial| inner.step(model, trial))
    }
}

impl<I, const N: usize> LangevinScheme<I, State<N>> {
    /// The GLA step of the fixed-size tier, with `inner_step` as the inner integrator's step
    /// (the plain one, or one with its Jacobians).
    fn step_fixed<Model>(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        inner_step: impl FnOnce(&mut I, &Model, &mut State<N>) -> Result<StepReport, StepError>,
    ) -> Result<StepReport, StepError>
    where
        I: Integrator<Model, N>,
        Model: Inertia<N>,
    {
        check_parameters(model)?;
        check_state(state)?;
        let bath = self.bath_energy(N);
        self.advance(
            model,
            state,
            |model, state, blocks| {
                let mut mass = SMatrix::<f64, N, N>::zeros();
                model.mass_matrix(&state.q, &mut mass);
                blocks.copy_from_slice(mass.as_slice());
            },
            |inner, model, trial| {
                inner.admit_energy_exchange(bath);
                inner_step(inner, model, trial)
            },
        )
    }
}

#[diagnostic::do_not_recommend]
impl<I, Model> SparseIntegrator<Model> for LangevinScheme<I, DynState>
where
    I: SparseIntegrator<Model>,
    Model: SparseInertia + ?Sized,
{
    fn carried_identity(&self) -> Option<IntegratorIdentity> {
        self.identity_around(self.inner.carried_identity())
    }

    fn save_carried(&self, out: &mut Carried) {
        self.save_with(|inner, out| inner.save_carried(out), out)
    }

    fn restore_carried(&mut self, from: &Carried) -> Result<(), CheckpointError> {
        self.restore_with(|inner, from| inner.restore_carried(from), from)
    }

    fn step(&mut self, model: &Model, state: &mut DynState) -> Result<StepReport, StepError> {
        self.step_sparse(model, state, |inner, model, trial| inner.step(model, trial))
    }
}

impl<I> LangevinScheme<I, DynState> {
    /// The GLA step of the sparse tier, with `inner_step` as the inner integrator's step (the
    /// plain one, or the linearized one).
    fn step_sparse<Model>(
        &mut self,
        model: &Model,
        state: &mut DynState,
        inner_step: impl FnOnce(&mut I, &Model, &mut DynState) -> Result<StepReport, StepError>,
    ) -> Result<StepReport, StepError>
    where
        I: SparseIntegrator<Model>,
        Model: SparseInertia + ?Sized,
    {
        self.forget_linearization();
        check_built_for(
            model.body_sizes() == self.flow.sizes(),
            "body sizes",
            model.body_sizes().len(),
        )?;
        check_sparse_parameters(model)?;
        check_dyn_state(state, self.flow.coordinate_count())?;
        let bath = self.bath_energy(self.flow.coordinate_count());
        self.advance(
            model,
            state,
            |model, state, blocks| model.mass_blocks(&state.q, blocks),
            |inner, model, trial| {
                inner.admit_energy_exchange(bath);
                inner_step(inner, model, trial)
            },
        )
    }
}
