//! Error-controlled embedded Runge–Kutta (DOPRI5) on the index-1 formulation, with Baumgarte
//! and post-stabilization: the automatic code of Ascher et al. (1995) §6, Tables 6.3–6.4.

use nalgebra::SVector;

mod carried;
mod dense_output;
mod statistics;

pub use statistics::{AdaptiveStatistics, AdaptiveStep};

use dense_output::{dense_step, is_dopri5, DenseStep, DOPRI5_DENSE};

use super::index_one::IndexOne;
use super::runge_kutta::Stages;
use super::{
    check_finite, check_state, check_step_size, same_bits, stabilize, Baumgarte, EmbeddedTableau,
    Metric, PostStabilization,
};
use crate::error::StepError;
use crate::integrators::{Integrator, StepReport};
use crate::model::{AppliedForces, HolonomicKinematics, InertiaGradient, Potential};
use crate::state::State;

/// An embedded explicit Runge–Kutta pair with local error control on the index-1 formulation,
/// with Baumgarte's term and post-stabilization after every accepted step; with
/// [`DOPRI5`](super::DOPRI5) (alias [`Dopri5`]) it is the automatic code of Ascher et al. (1995)
/// §6 (Tables 6.3–6.4).
///
/// An attempt from `z_n = (q_n, v_n)` with step `h` computes the stages of the index-1 ODE
/// exactly as [`StabilizedRk`](super::StabilizedRk) does, the propagated `z̃_{n+1}` (weights `b`,
/// order `p`) and the error estimate `e = h Σ_i (b_i − b̂_i) K_i`. Its size is the weighted
/// RMS norm over the `2N` components of `z` (Hairer–Nørsett–Wanner I, eq. II.4.11)
///
/// ```text
/// err = √( (1/2N) Σ_i (e_i / sc_i)² ),    sc_i = atol + rtol · max(|z_{n,i}|, |z̃_{n+1,i}|)
/// ```
///
/// The attempt is accepted if `err ≤ 1`; then the [`PostStabilization`] is applied to `z̃_{n+1}`
/// (it is not part of the error estimate: the error controlled is that of the ODE integrator
/// `φ_h`, as in the paper). Either way the next step size is
///
/// ```text
/// h_new = h · min(fac_max, max(fac_min, safety · err^(−1/(q+1)))),    q = min(p, p̂)
/// ```
///
/// with `safety = 0.9`, `fac_min = 0.2`, `fac_max = 10` by default, and `fac_max = 1` right
/// after a rejection (HNW I §II.4). The first step size is chosen by the starting-step
/// algorithm of HNW I §II.4 (one extra evaluation) unless set with
/// [`with_initial_step`](Self::with_initial_step). A step size that falls below
/// `16 ε |t|` is [`StepError::StepSizeTooSmall`].
///
/// For a first-same-as-last pair (DOPRI5: `a_Sj = b_j`, `c_S = 1`) the last stage of an
/// accepted step is reused as the first stage of the next whenever the state was not changed
/// in between (no post-stabilization), as in DOPRI5; with a post-stabilization it is
/// recomputed at the stabilized state.
///
/// ```
/// use mechanism_runtime::integrators::stabilized::{Dopri5, PostStabilization, DOPRI5};
/// use mechanism_runtime::reference::double_pendulum::{initial_state, DoublePendulum};
///
/// let model = DoublePendulum::default();
/// // The paper's tolerances: rtol = TOL = 1e-5, atol = 0.1 TOL.
/// let mut dopri = Dopri5::<4, 2>::new(DOPRI5, 1e-5, 1e-6)?
///     .with_post_stabilization(PostStabilization::BothTwice);
/// let mut state = initial_state();
/// let run = dopri.advance_to(&model, &mut state, 10.0, |_| {})?;
/// assert_eq!(state.t, 10.0);
/// assert!(run.steps() >= run.accepted && run.accepted > 10);
/// # Ok::<(), mechanism_runtime::StepError>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct AdaptiveRk<const N: usize, const M: usize, const S: usize> {
    tableau: EmbeddedTableau<S>,
    rtol: f64,
    atol: f64,
    safety: f64,
    min_factor: f64,
    max_factor: f64,
    max_step: f64,
    initial_step: Option<f64>,
    /// The step size proposed by the controller for the next attempt.
    proposal: Option<f64>,
    rhs: IndexOne<N>,
    stabilization: PostStabilization,
    metric: Metric,
    /// The last stage of the last accepted step, for first same as last.
    carried: Option<CarriedStage<N>>,
    statistics: AdaptiveStatistics,
    /// Shampine's dense-output weights `d_i` when the pair is [`DOPRI5`](super::DOPRI5).
    dense_weights: Option<[f64; S]>,
    /// The continuous extension of the last accepted step.
    dense: Option<DenseStep<N>>,
}

/// The last stage `v̇(t, q, v)` of an accepted first-same-as-last step.
#[derive(Clone, Copy, Debug)]
struct CarriedStage<const N: usize> {
    t: f64,
    q: SVector<f64, N>,
    v: SVector<f64, N>,
    acceleration: SVector<f64, N>,
}

/// The Dormand–Prince 5(4) [`AdaptiveRk`], to be created with [`DOPRI5`](super::DOPRI5).
pub type Dopri5<const N: usize, const M: usize> = AdaptiveRk<N, M, 7>;

/// Returns `BadParameter` for `name = value` with `requirement`.
fn bad(name: &'static str, value: f64, requirement: &'static str) -> StepError {
    StepError::BadParameter {
        name,
        value,
        requirement,
    }
}

impl<const N: usize, const M: usize, const S: usize> AdaptiveRk<N, M, S> {
    /// Creates the pair `tableau` with relative tolerance `rtol` and absolute tolerance `atol`
    /// (Ascher et al. use `rtol = TOL`, `atol = 0.1 TOL`), no Baumgarte term and no
    /// post-stabilization.
    ///
    /// Fails with `BadParameter` unless `rtol` is finite and non-negative and `atol` finite and
    /// positive (an `atol` of zero divides by zero at a vanishing component, e.g. `v = 0` at
    /// rest), or if the tableau fails [`EmbeddedTableau::check`].
    pub fn new(tableau: EmbeddedTableau<S>, rtol: f64, atol: f64) -> Result<Self, StepError> {
        tableau.check()?;
        if !(rtol.is_finite() && rtol >= 0.0) {
            return Err(bad("rtol", rtol, "must be finite and non-negative"));
        }
        if !(atol.is_finite() && atol > 0.0) {
            return Err(bad("atol", atol, "must be finite and positive"));
        }
        Ok(AdaptiveRk {
            tableau,
            rtol,
            atol,
            safety: 0.9,
            min_factor: 0.2,
            max_factor: 10.0,
            max_step: f64::INFINITY,
            initial_step: None,
            proposal: None,
            rhs: IndexOne::new(Baumgarte::NONE),
            stabilization: PostStabilization::None,
            metric: Metric::Euclidean,
            carried: None,
            statistics: AdaptiveStatistics::default(),
            dense_weights: is_dopri5(&tableau).then(|| {
                let mut d = [0.0; S];
                d.copy_from_slice(&DOPRI5_DENSE);
                d
            }),
            dense: None,
        })
    }

    /// Sets Baumgarte's parameters (eq. 2.1) used in every stage.
    pub fn with_baumgarte(mut self, baumgarte: Baumgarte) -> Self {
        self.rhs.baumgarte = baumgarte;
        self
    }

    /// Sets the post-stabilization applied after every accepted step (eq. 5.4).
    pub fn with_post_stabilization(mut self, stabilization: PostStabilization) -> Self {
        self.stabilization = stabilization;
        self
    }

    /// Sets the metric of the block-diagonal stabilizers (eq. 5.5 or 5.6).
    pub fn with_metric(mut self, metric: Metric) -> Self {
        self.metric = metric;
        self
    }

    /// Sets the first step size instead of estimating it; fails with `BadStepSize` unless `h`
    /// is positive and finite.
    pub fn with_initial_step(mut self, h: f64) -> Result<Self, StepError> {
        self.initial_step = Some(check_step_size(h)?);
        self.proposal = None;
        Ok(self)
    }

    /// Caps the step size (default: no cap); fails with `BadStepSize` unless `h_max` is positive
    /// (`f64::INFINITY` removes the cap).
    pub fn with_max_step(mut self, h_max: f64) -> Result<Self, StepError> {
        if h_max.is_nan() || h_max <= 0.0 {
            return Err(StepError::BadStepSize { h: h_max });
        }
        self.max_step = h_max;
        Ok(self)
    }

    /// Sets the controller's safety factor and bounds on `h_new / h` (defaults `0.9`, `0.2`,
    /// `10`); fails with `BadParameter` unless `0 < safety ≤ 1` and
    /// `0 < min_factor < 1 < max_factor < ∞`.
    pub fn with_controller(
        mut self,
        safety: f64,
        min_factor: f64,
        max_factor: f64,
    ) -> Result<Self, StepError> {
        if !(safety > 0.0 && safety <= 1.0) {
            return Err(bad("safety", safety, "must lie in (0, 1]"));
        }
        if !(min_factor > 0.0 && min_factor < 1.0) {
            return Err(bad("min_factor", min_factor, "must lie in (0, 1)"));
        }
        if !(max_factor > 1.0 && max_factor.is_finite()) {
            return Err(bad("max_factor", max_factor, "must be finite and above 1"));
        }
        self.safety = safety;
        self.min_factor = min_factor;
        self.max_factor = max_factor;
        Ok(self)
    }

    /// Returns `(rtol, atol)`.
    pub fn tolerances(&self) -> (f64, f64) {
        (self.rtol, self.atol)
    }

    /// Returns the embedded tableau.
    pub fn tableau(&self) -> &EmbeddedTableau<S> {
        &self.tableau
    }

    /// Returns Baumgarte's parameters.
    pub fn baumgarte(&self) -> Baumgarte {
        self.rhs.baumgarte
    }

    /// Returns the post-stabilization.
    pub fn post_stabilization(&self) -> PostStabilization {
        self.stabilization
    }

    /// Returns the metric of the block-diagonal stabilizers.
    pub fn metric(&self) -> Metric {
        self.metric
    }

    /// Returns the step size the controller proposes for the next attempt, once there is one.
    pub fn next_step_size(&self) -> Option<f64> {
        self.proposal
    }

    /// Returns the counts accumulated since creation or the last
    /// [`reset_statistics`](Self::reset_statistics).
    pub fn statistics(&self) -> AdaptiveStatistics {
        self.statistics
    }

    /// Sets the accumulated counts to zero.
    pub fn reset_statistics(&mut self) {
        self.statistics = AdaptiveStatistics::default();
    }

    /// Forgets the proposed step size and the carried stage, as for a new initial value.
    pub fn reset(&mut self) {
        self.proposal = None;
        self.carried = None;
        self.dense = None;
    }

    /// Takes one accepted step from `state` that ends at or before `t_end`, retrying rejected
    /// attempts with smaller steps; lands exactly on `t_end` when the proposed step would reach
    /// within 1% of it. On error `state` is unchanged.
    ///
    /// Fails with `BadParameter` unless `t_end > state.t`, with `StepSizeTooSmall` if the step
    /// size underflows, and with any error of the index-1 solve or the stabilization.
    pub fn step_toward<Model>(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        t_end: f64,
    ) -> Result<AdaptiveStep, StepError>
    where
        Model: InertiaGradient<N> + Potential<N> + HolonomicKinematics<N, M> + AppliedForces<N>,
    {
        crate::integrators::checks::check_parameters(model)?;
        check_state(state)?;
        let t = state.t;
        if t_end.is_nan() || t_end <= t {
            return Err(bad("t_end", t_end, "must be later than the state's time"));
        }
        self.rhs.take_factorizations();
        self.rhs.take_evaluations();
        let result = self.attempt_until_accepted(model, state, t_end);
        self.statistics.evaluations += self.rhs.take_evaluations() as usize;
        result
    }

    fn attempt_until_accepted<Model>(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        t_end: f64,
    ) -> Result<AdaptiveStep, StepError>
    where
        Model: InertiaGradient<N> + Potential<N> + HolonomicKinematics<N, M> + AppliedForces<N>,
    {
        let (t, q, v) = (state.t, state.q, state.v);
        let first = match self.carried_at(state) {
            Some(a) => a,
            None => {
                self.rhs
                    .evaluate::<Model, M>(model, &q, &v, t, t)?
                    .acceleration
            }
        };
        let mut h = match (self.proposal, self.initial_step) {
            (Some(h), _) | (None, Some(h)) => h,
            (None, None) => self.starting_step(model, state, first)?,
        };
        let method = &self.tableau.method;
        let exponent = 1.0 / (method.order.min(self.tableau.embedded_order) as f64 + 1.0);
        let fsal = method.c[S - 1] == 1.0 && method.a[S - 1] == method.b;
        let mut rejected = 0usize;
        loop {
            h = h.min(self.max_step);
            // The controller's step before it is shortened to land on t_end.
            let unclipped = h;
            let landing = t + 1.01 * h >= t_end;
            if landing {
                h = t_end - t;
            }
            if h.is_nan() || h <= 16.0 * f64::EPSILON * t.abs() || h < f64::MIN_POSITIVE {
                return Err(StepError::StepSizeTooSmall { h, t });
            }
            let stages = Stages::<SVector<f64, N>, S>::compute::<Model, M>(
                &mut self.rhs,
                model,
                method,
                h,
                t,
                &q,
                &v,
                Some(first),
                t,
            )?;
            let (mut q_new, mut v_new) = stages.combine(&method.b, &q, &v, h);
            let error = self.error_norm(&stages, h, &q, &v, &q_new, &v_new);
            if error <= 1.0 {
                check_finite(&q_new, "q", t)?;
                check_finite(&v_new, "v", t)?;
                let t_new = if landing { t_end } else { t + h };
                self.dense = self
                    .dense_weights
                    .map(|d| dense_step(&stages, &d, (t, t_new, h), (&q, &v), (&q_new, &v_new)));
                let carried = fsal.then(|| CarriedStage {
                    t: t_new,
                    q: q_new,
                    v: v_new,
                    acceleration: stages.acceleration[S - 1],
                });
                let stabilization = stabilize::<Model, N, M>(
                    model,
                    self.stabilization,
                    self.metric,
                    &mut self.rhs.mass,
                    &mut q_new,
                    &mut v_new,
                    t_new,
                    t,
                )?;
                let max_factor = if rejected > 0 { 1.0 } else { self.max_factor };
                let factor =
                    (self.safety * error.powf(-exponent)).clamp(self.min_factor, max_factor);
                // A step shortened to land on t_end says nothing against the longer one.
                self.proposal = Some(if landing {
                    (h * factor).max(unclipped)
                } else {
                    h * factor
                });
                self.carried = carried;
                self.statistics.accepted += 1;
                state.q = q_new;
                state.v = v_new;
                state.t = t_new;
                return Ok(AdaptiveStep {
                    h,
                    rejected,
                    error,
                    factorizations: self.rhs.take_factorizations() + stabilization,
                });
            }
            // NaN compares false above and is rejected here with the smallest factor.
            let factor = (self.safety * error.powf(-exponent)).max(self.min_factor);
            h *= factor.min(1.0);
            self.proposal = Some(h);
            self.statistics.rejected += 1;
            rejected += 1;
        }
    }

    /// Integrates from `state` to exactly `t_end`, calling `observe` after every accepted step;
    /// returns the counts of this call. Does nothing if `t_end == state.t`. On error `state`
    /// holds the last accepted step.
    ///
    /// Fails with `BadParameter` (and `state` unchanged) unless `t_end` is finite and not
    /// earlier than `state.t`: a NaN or infinite end time is refused, never taken as "done".
    pub fn advance_to<Model>(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        t_end: f64,
        mut observe: impl FnMut(&State<N>),
    ) -> Result<AdaptiveStatistics, StepError>
    where
        Model: InertiaGradient<N> + Potential<N> + HolonomicKinematics<N, M> + AppliedForces<N>,
    {
        crate::integrators::checks::check_parameters(model)?;
        check_state(state)?;
        if !t_end.is_finite() {
            return Err(bad("t_end", t_end, "must be finite"));
        }
        if t_end < state.t {
            return Err(bad(
                "t_end",
                t_end,
                "must not be earlier than the state's time",
            ));
        }
        let before = self.statistics;
        if t_end == state.t {
            return Ok(AdaptiveStatistics::default());
        }
        while state.t < t_end {
            self.step_toward(model, state, t_end)?;
            observe(state);
        }
        if state.t > t_end {
            return Err(bad(
                "t_end",
                t_end,
                "must not be earlier than the state's time",
            ));
        }
        Ok(self.statistics.since(&before))
    }

    /// Returns the carried last stage if it was computed at exactly `state`.
    fn carried_at(&self, state: &State<N>) -> Option<SVector<f64, N>> {
        let carried = self.carried.as_ref()?;
        let same = carried.t.to_bits() == state.t.to_bits()
            && same_bits(&carried.q, &state.q)
            && same_bits(&carried.v, &state.v);
        same.then_some(carried.acceleration)
    }

    /// Returns the weighted RMS norm of the error estimate `h Σ (b_i − b̂_i) K_i`.
    fn error_norm(
        &self,
        stages: &Stages<SVector<f64, N>, S>,
        h: f64,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        q_new: &SVector<f64, N>,
        v_new: &SVector<f64, N>,
    ) -> f64 {
        if N == 0 {
            return 0.0;
        }
        let mut error_q = SVector::<f64, N>::zeros();
        let mut error_v = SVector::<f64, N>::zeros();
        let method = &self.tableau.method;
        for j in 0..S {
            let w = method.b[j] - self.tableau.b_hat[j];
            if w != 0.0 {
                error_q += stages.velocity[j] * (w * h);
                error_v += stages.acceleration[j] * (w * h);
            }
        }
        let mut sum = 0.0;
        for (e, (y0, y1)) in error_q.iter().chain(error_v.iter()).zip(
            q.iter()
                .chain(v.iter())
                .zip(q_new.iter().chain(v_new.iter())),
        ) {
            let scale = self.atol + self.rtol * y0.abs().max(y1.abs());
            sum += (e / scale) * (e / scale);
        }
        (sum / (2 * N) as f64).sqrt()
    }

    /// Returns the starting step size of Hairer–Nørsett–Wanner I §II.4 (their code's `hinit`):
    /// `h0 = 0.01 ‖z‖/‖f‖` (scaled norms), one explicit Euler step to estimate the second
    /// derivative, then `h1 = (0.01 / max(‖f′‖, ‖f‖))^(1/(p+1))` and `min(100 h0, h1, h_max)`.
    fn starting_step<Model>(
        &mut self,
        model: &Model,
        state: &State<N>,
        a0: SVector<f64, N>,
    ) -> Result<f64, StepError>
    where
        Model: InertiaGradient<N> + Potential<N> + HolonomicKinematics<N, M> + AppliedForces<N>,
    {
        let (t, q, v) = (state.t, &state.q, &state.v);
        let scaled_rms = |x: &SVector<f64, N>, y: &SVector<f64, N>| -> f64 {
            if N == 0 {
                return 0.0;
            }
            let mut sum = 0.0;
            for (value, reference) in x.iter().chain(y.iter()).zip(q.iter().chain(v.iter())) {
                let r = value / (self.atol + self.rtol * reference.abs());
                sum += r * r;
            }
            (sum / (2 * N) as f64).sqrt()
        };
        let norm_f = scaled_rms(v, &a0);
        let norm_z = scaled_rms(q, v);
        let mut h0 = if norm_f <= 1e-5 || norm_z <= 1e-5 {
            1e-6
        } else {
            0.01 * norm_z / norm_f
        };
        if !(h0.is_finite() && h0 > 0.0) {
            // The scaled norms overflowed (tolerances far below the state's size).
            h0 = 1e-6;
        }
        h0 = h0.min(self.max_step);
        let (q1, v1) = (q + v * h0, v + a0 * h0);
        let a1 = self
            .rhs
            .evaluate::<Model, M>(model, &q1, &v1, t + h0, t)?
            .acceleration;
        let second = scaled_rms(&(v1 - v), &(a1 - a0)) / h0;
        let larger = second.max(norm_f);
        let order = self.tableau.method.order as f64;
        let h1 = if larger <= 1e-15 {
            (h0 * 1e-3).max(1e-6)
        } else {
            (0.01 / larger).powf(1.0 / (order + 1.0))
        };
        Ok((100.0 * h0).min(h1).min(self.max_step))
    }
}

/// One accepted adaptive step per call, with no end time: the step size is the controller's.
#[diagnostic::do_not_recommend]
impl<Model, const N: usize, const M: usize, const S: usize> Integrator<Model, N>
    for AdaptiveRk<N, M, S>
where
    Model: InertiaGradient<N> + Potential<N> + HolonomicKinematics<N, M> + AppliedForces<N>,
{
    fn step(&mut self, model: &Model, state: &mut State<N>) -> Result<StepReport, StepError> {
        let step = self.step_toward(model, state, f64::INFINITY)?;
        Ok(StepReport {
            factorizations: step.factorizations,
            newton_iterations: 0,
        })
    }

    crate::checkpoint::carried_access!();
}
