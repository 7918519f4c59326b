//! Fixed-step explicit Runge–Kutta on the index-1 formulation, with Baumgarte and
//! post-stabilization (Ascher et al. 1995, eq. 5.4).

use super::{check_step_size, Baumgarte, Metric, PostStabilization, Tableau};
use crate::error::StepError;
use crate::integrators::checks::check_finite_slice;
use crate::integrators::TierVector;
use crate::integrators::{DivergenceGuard, StepReport};

/// The stage derivatives `K_i = (V_i, v̇_i)` of one Runge–Kutta step of the index-1 ODE.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stages<V, const S: usize> {
    /// `K_i` for `q`: the stage velocities `V_i`.
    pub(crate) velocity: [V; S],
    /// `K_i` for `v`: the stage accelerations of eq. 1.5 at `(Q_i, V_i, t + c_i h)`.
    pub(crate) acceleration: [V; S],
}

impl<V: TierVector, const S: usize> Stages<V, S> {
    /// Returns stages whose vectors are copies of `zero`.
    pub(crate) fn filled(zero: &V) -> Self {
        Stages {
            velocity: std::array::from_fn(|_| zero.clone()),
            acceleration: std::array::from_fn(|_| zero.clone()),
        }
    }

    /// Writes `(q + h Σ w_j V_j, v + h Σ w_j v̇_j)` into `(q_out, v_out)`, summing in stage
    /// order so that a stage built with `a_Sj = b_j` is bitwise equal to the propagated solution
    /// (first same as last).
    pub(crate) fn combine_into(
        &self,
        weights: &[f64; S],
        (q, v): (&[f64], &[f64]),
        h: f64,
        (q_out, v_out): (&mut [f64], &mut [f64]),
    ) {
        for i in 0..q.len() {
            let (mut dq, mut dv) = (0.0, 0.0);
            for (j, &w) in weights.iter().enumerate() {
                if w != 0.0 {
                    dq += self.velocity[j].as_slice()[i] * w;
                    dv += self.acceleration[j].as_slice()[i] * w;
                }
            }
            q_out[i] = q[i] + dq * h;
            v_out[i] = v[i] + dv * h;
        }
    }

    /// Computes every stage of `tableau` from `(q, v)` at `t` with `acceleration(Q, V, t, out)`
    /// (eq. 1.5 at a stage), in the stage buffers; `first` is `v̇` at `(q, v, t)` when already
    /// known (first same as last), `scratch` holds the stage points. `t_err` is the time
    /// reported in errors.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn compute_with<F>(
        &mut self,
        tableau: &Tableau<S>,
        h: f64,
        t: f64,
        (q, v): (&[f64], &[f64]),
        first: Option<&[f64]>,
        t_err: f64,
        (scratch_q, scratch_v): (&mut V, &mut V),
        mut acceleration: F,
    ) -> Result<(), StepError>
    where
        F: FnMut(&[f64], &[f64], f64, &mut [f64]) -> Result<(), StepError>,
    {
        for i in 0..S {
            if i > 0 {
                self.combine_into(
                    &tableau.a[i],
                    (q, v),
                    h,
                    (scratch_q.as_mut_slice(), scratch_v.as_mut_slice()),
                );
            }
            let (q_i, v_i) = if i == 0 {
                (q, v)
            } else {
                (scratch_q.as_slice(), scratch_v.as_slice())
            };
            check_finite_slice(q_i, "stage q", t_err)?;
            check_finite_slice(v_i, "stage v", t_err)?;
            self.velocity[i].as_mut_slice().copy_from_slice(v_i);
            let out = self.acceleration[i].as_mut_slice();
            match (i, first) {
                (0, Some(a)) => out.copy_from_slice(a),
                _ => acceleration(q_i, v_i, t + tableau.c[i] * h, out)?,
            }
        }
        Ok(())
    }
}

/// How a tier of [`RkScheme`] stores its vectors and keeps Baumgarte's parameters: the
/// model-independent half of the seam.
pub trait IndexOneTier {
    /// A state-space vector of this tier.
    type Vector: TierVector;

    /// Returns a zero vector of the model's size.
    fn zero_vector(&self) -> Self::Vector;

    /// Returns Baumgarte's parameters used in every stage.
    fn baumgarte(&self) -> Baumgarte;

    /// Sets Baumgarte's parameters.
    fn set_baumgarte(&mut self, baumgarte: Baumgarte);

    /// Returns and resets the count of factorizations since the last call.
    fn take_factorizations(&mut self) -> u32;
}

/// The linear algebra of one stabilized Runge–Kutta step on one tier: the seam between
/// [`RkScheme`] and a backend of [`linalg`](crate::linalg).
pub trait IndexOneSystem<Model: ?Sized>: IndexOneTier {
    /// Solves eq. 1.5 (with eq. 2.1) at `state = (q, v)` and `t` and writes `v̇` into `out`; `t_err` is the
    /// time reported in errors.
    fn acceleration(
        &mut self,
        model: &Model,
        state: (&[f64], &[f64]),
        t: f64,
        t_err: f64,
        out: &mut [f64],
    ) -> Result<(), StepError>;

    /// Applies the post-stabilization to `state = (q, v)` in place at time `t`; returns the factorizations it took.
    /// On error `(q, v)` are unchanged.
    #[allow(clippy::too_many_arguments)]
    fn stabilize(
        &mut self,
        model: &Model,
        stabilization: PostStabilization,
        metric: Metric,
        state: (&mut [f64], &mut [f64]),
        t: f64,
        t_err: f64,
    ) -> Result<u32, StepError>;

    /// Evaluates, for the divergence guard with `start = (q_k, t_k)` and
    /// `end = (q_{k+1}, t_{k+1})`, `g(q_k, t_k)`, the row norms `|Gᵢ(q_k)|₁` and
    /// `g(q_{k+1}, t_{k+1})`, and returns them.
    fn guard_rows(
        &mut self,
        model: &Model,
        start: (&[f64], f64),
        end: (&[f64], f64),
    ) -> (&[f64], &[f64], &[f64]);
}

/// The stabilized Runge–Kutta method over a tier's linear algebra `Sys`: the tableau, the step
/// size, the stabilization and the divergence guard here, the solve of eq. 1.5 in `Sys`.
///
/// Use it through [`StabilizedRk`](super::StabilizedRk) (fixed size) or [`SparseStabilizedRk`](super::SparseStabilizedRk); the scheme's
/// equations are in the docs of [`StabilizedRk`](super::StabilizedRk). As for SPOOK
/// ([`SpookScheme`](crate::integrators::linearly_implicit::SpookScheme)), the method — the
/// stages, their combination, the finiteness checks, the guard, leaving the state unchanged on
/// failure — is written once, on slices; the tiers differ only in how eq. 1.5 is solved (the
/// Schur complement `G M⁻¹ Gᵀ` on stack arrays, or the sparse saddle-point matrix).
#[derive(Clone, Debug)]
pub struct RkScheme<Sys: IndexOneTier, const S: usize> {
    tableau: Tableau<S>,
    h: f64,
    stabilization: PostStabilization,
    metric: Metric,
    guard: DivergenceGuard,
    system: Sys,
    stages: Stages<Sys::Vector, S>,
    /// The stage point `(Q_i, V_i)` and the new state `(q_{n+1}, v_{n+1})`.
    scratch: [Sys::Vector; 4],
}

impl<Sys, const S: usize> Copy for RkScheme<Sys, S>
where
    Sys: IndexOneTier + Copy,
    Sys::Vector: Copy,
{
}

impl<Sys: IndexOneTier, const S: usize> RkScheme<Sys, S> {
    /// Creates the scheme around `system`, checking the tableau and the step size.
    pub(super) fn with_system(tableau: Tableau<S>, h: f64, system: Sys) -> Result<Self, StepError> {
        tableau.check()?;
        let h = check_step_size(h)?;
        let zero = system.zero_vector();
        Ok(RkScheme {
            tableau,
            h,
            stabilization: PostStabilization::None,
            metric: Metric::Euclidean,
            guard: DivergenceGuard::default(),
            stages: Stages::filled(&zero),
            scratch: std::array::from_fn(|_| zero.clone()),
            system,
        })
    }

    /// Sets Baumgarte's parameters (eq. 2.1) used in every stage.
    pub fn with_baumgarte(mut self, baumgarte: Baumgarte) -> Self {
        self.system.set_baumgarte(baumgarte);
        self
    }

    /// Sets the post-stabilization applied after every step (eq. 5.4).
    pub fn with_post_stabilization(mut self, stabilization: PostStabilization) -> Self {
        self.stabilization = stabilization;
        self
    }

    /// Sets the metric of the block-diagonal stabilizers (eq. 5.5 or 5.6).
    pub fn with_metric(mut self, metric: Metric) -> Self {
        self.metric = metric;
        self
    }

    /// Replaces the divergence guard (default: [`DivergenceGuard::default`]), which rejects a
    /// step whose constraint residual exploded (a step far beyond the stability limit of the
    /// explicit method) with [`StepError::Diverged`] instead of returning `Ok`.
    pub fn with_divergence_guard(mut self, guard: DivergenceGuard) -> Self {
        self.guard = guard;
        self
    }

    /// Returns the step size `h`.
    pub fn step_size(&self) -> f64 {
        self.h
    }

    /// Returns the Butcher tableau.
    pub fn tableau(&self) -> &Tableau<S> {
        &self.tableau
    }

    /// Returns Baumgarte's parameters.
    pub fn baumgarte(&self) -> Baumgarte {
        self.system.baumgarte()
    }

    /// Returns the post-stabilization.
    pub fn post_stabilization(&self) -> PostStabilization {
        self.stabilization
    }

    /// Returns the metric of the block-diagonal stabilizers.
    pub fn metric(&self) -> Metric {
        self.metric
    }

    /// Returns the tier's system.
    pub(super) fn system(&self) -> &Sys {
        &self.system
    }

    /// Runs one step from `(t, q, v)`; writes `q_{n+1}`, `v_{n+1}` only on success.
    pub(super) fn advance<Model: ?Sized>(
        &mut self,
        model: &Model,
        t: f64,
        q: &mut [f64],
        v: &mut [f64],
    ) -> Result<StepReport, StepError>
    where
        Sys: IndexOneSystem<Model>,
    {
        let h = self.h;
        self.system.take_factorizations();
        let [stage_q, stage_v, q_new, v_new] = &mut self.scratch;
        let system = &mut self.system;
        self.stages.compute_with(
            &self.tableau,
            h,
            t,
            (q, v),
            None,
            t,
            (stage_q, stage_v),
            |q_i, v_i, t_i, out| system.acceleration(model, (q_i, v_i), t_i, t, out),
        )?;
        let (q_new, v_new) = (q_new.as_mut_slice(), v_new.as_mut_slice());
        self.stages
            .combine_into(&self.tableau.b, (q, v), h, (&mut *q_new, &mut *v_new));
        check_finite_slice(q_new, "q", t)?;
        check_finite_slice(v_new, "v", t)?;
        let t_next = t + h;
        let stabilization = self.system.stabilize(
            model,
            self.stabilization,
            self.metric,
            (&mut *q_new, &mut *v_new),
            t_next,
            t,
        )?;
        if !self.guard.is_disabled() {
            let (g, norms, g_next) = self.system.guard_rows(model, (q, t), (q_new, t_next));
            self.guard.check_rows(q, q_new, g, norms, g_next, t)?;
        }
        q.copy_from_slice(q_new);
        v.copy_from_slice(v_new);
        Ok(StepReport {
            factorizations: self.system.take_factorizations() + stabilization,
            newton_iterations: 0,
        })
    }
}
