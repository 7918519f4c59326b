//! Fixed-step explicit Runge–Kutta on the index-1 formulation, with Baumgarte and
//! post-stabilization (Ascher et al. 1995, eq. 5.4).

use nalgebra::SVector;

use super::index_one::IndexOne;
use super::{
    check_finite, check_state, check_step_size, stabilize, Baumgarte, Metric, PostStabilization,
    Tableau,
};
use crate::error::StepError;
use crate::integrators::{DivergenceGuard, Integrator, StepReport};
use crate::model::{AppliedForces, HolonomicKinematics, InertiaGradient, Potential};
use crate::state::State;

/// The stage derivatives `K_i = (V_i, v̇_i)` of one Runge–Kutta step of the index-1 ODE.
pub(crate) struct Stages<const N: usize, const S: usize> {
    /// `K_i` for `q`: the stage velocities `V_i`.
    pub(crate) velocity: [SVector<f64, N>; S],
    /// `K_i` for `v`: the stage accelerations of eq. 1.5 at `(Q_i, V_i, t + c_i h)`.
    pub(crate) acceleration: [SVector<f64, N>; S],
}

impl<const N: usize, const S: usize> Stages<N, S> {
    /// Returns `(q + h Σ w_j V_j, v + h Σ w_j v̇_j)`, summing in stage order so that a stage
    /// built with `a_Sj = b_j` is bitwise equal to the propagated solution (first same as last).
    pub(crate) fn combine(
        &self,
        weights: &[f64; S],
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        h: f64,
    ) -> (SVector<f64, N>, SVector<f64, N>) {
        let mut dq = SVector::<f64, N>::zeros();
        let mut dv = SVector::<f64, N>::zeros();
        for (j, &w) in weights.iter().enumerate() {
            if w != 0.0 {
                dq += self.velocity[j] * w;
                dv += self.acceleration[j] * w;
            }
        }
        (q + dq * h, v + dv * h)
    }

    /// Computes every stage of `tableau` from `(q, v)` at `t`; `first` is `v̇` at `(q, v, t)`
    /// when already known (first same as last). `t_err` is the time reported in errors.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn compute<Model, const M: usize>(
        rhs: &mut IndexOne<N>,
        model: &Model,
        tableau: &Tableau<S>,
        h: f64,
        t: f64,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        first: Option<SVector<f64, N>>,
        t_err: f64,
    ) -> Result<Self, StepError>
    where
        Model: InertiaGradient<N> + Potential<N> + HolonomicKinematics<N, M> + AppliedForces<N>,
    {
        let mut stages = Stages {
            velocity: [SVector::<f64, N>::zeros(); S],
            acceleration: [SVector::<f64, N>::zeros(); S],
        };
        for i in 0..S {
            let (q_i, v_i) = if i == 0 {
                (*q, *v)
            } else {
                stages.combine(&tableau.a[i], q, v, h)
            };
            check_finite(&q_i, "stage q", t_err)?;
            check_finite(&v_i, "stage v", t_err)?;
            stages.velocity[i] = v_i;
            stages.acceleration[i] = match (i, first) {
                (0, Some(a)) => a,
                _ => {
                    rhs.evaluate::<Model, M>(model, &q_i, &v_i, t + tableau.c[i] * h, t_err)?
                        .acceleration
                }
            };
        }
        Ok(stages)
    }
}

/// An explicit Runge–Kutta method with fixed step size on the index-1 formulation of a
/// holonomically constrained system, with optional Baumgarte and post-stabilization: the
/// methods compared in Ascher, Chin, Petzold and Reich, *Stabilization of constrained mechanical
/// systems with DAEs and invariant manifolds* (1995), Tables 6.1–6.2.
///
/// One step from `z_n = (q_n, v_n)` at `t_n`:
///
/// 1. `z̃_{n+1} = φ_h(z_n)`: the `S`-stage method of [`Tableau`] applied to the ODE (1.6)
///
///    ```text
///    q̇ = v,    v̇ = a(q, v, t)   with   [ M  Gᵀ ; G  0 ] (a ; λ) = (f ; φ)    (eq. 1.5, 2.1)
///    ```
///
///    where `a` comes from [`constrained_acceleration`](super::constrained_acceleration) with
///    this integrator's [`Baumgarte`] parameters (default `Baum(0, 0)`);
/// 2. `z_{n+1} = z̃_{n+1} − F(z̃_{n+1}) h(z̃_{n+1}, t_{n+1})` (eq. 5.4 with `α = 1`), the
///    [`PostStabilization`] (default none) with its [`Metric`].
///
/// The paper's recommendation is S-both² ([`PostStabilization::BothTwice`]) with the Euclidean
/// metric: drift `O(h^{2p})` for the cost of a fraction of a stage. Per step: `S` solves of
/// eq. 1.5 (one Cholesky factor of `G M⁻¹ Gᵀ` each, plus `M(q)` unless
/// `Inertia::CONSTANT_MASS` and unchanged), then one or two evaluations of `g`, `G`, `g_t` and
/// one factorization for the stabilization. Allocation-free; on error the state is unchanged.
/// A step whose holonomic residual explodes (far beyond the method's stability limit) fails
/// with [`StepError::Diverged`] instead of returning `Ok` ([`DivergenceGuard`], one more
/// evaluation of `g` and `G` per step; [`StabilizedRk::with_divergence_guard`]).
///
/// ```
/// use mechanism_runtime::integrators::stabilized::{PostStabilization, StabilizedRk, RK4};
/// use mechanism_runtime::reference::double_pendulum::{initial_state, DoublePendulum};
/// use mechanism_runtime::Integrator;
///
/// let model = DoublePendulum::default();
/// let mut rk = StabilizedRk::<4, 2, 4>::new(RK4, 0.01)?
///     .with_post_stabilization(PostStabilization::BothTwice);
/// let mut state = initial_state();
/// for _ in 0..100 {
///     rk.step(&model, &mut state)?;
/// }
/// let drift = mechanism_runtime::integrators::stabilized::drift::<_, 4, 2>(&model, &state);
/// assert!(drift.position < 1e-12 && drift.velocity < 1e-10);
/// # Ok::<(), mechanism_runtime::StepError>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct StabilizedRk<const N: usize, const M: usize, const S: usize> {
    tableau: Tableau<S>,
    h: f64,
    rhs: IndexOne<N>,
    stabilization: PostStabilization,
    metric: Metric,
    guard: DivergenceGuard,
}

impl<const N: usize, const M: usize, const S: usize> StabilizedRk<N, M, S> {
    /// Creates the method `tableau` with step size `h`, no Baumgarte term and no
    /// post-stabilization; fails with `BadStepSize` unless `h` is positive and finite, and with
    /// `BadParameter` if the tableau is not a consistent explicit method ([`Tableau::check`]).
    pub fn new(tableau: Tableau<S>, h: f64) -> Result<Self, StepError> {
        tableau.check()?;
        Ok(StabilizedRk {
            tableau,
            h: check_step_size(h)?,
            rhs: IndexOne::new(Baumgarte::NONE),
            stabilization: PostStabilization::None,
            metric: Metric::Euclidean,
            guard: DivergenceGuard::default(),
        })
    }

    /// Sets Baumgarte's parameters (eq. 2.1) used in every stage.
    pub fn with_baumgarte(mut self, baumgarte: Baumgarte) -> Self {
        self.rhs.baumgarte = baumgarte;
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
}

#[diagnostic::do_not_recommend]
impl<Model, const N: usize, const M: usize, const S: usize> Integrator<Model, N>
    for StabilizedRk<N, M, S>
where
    Model: InertiaGradient<N> + Potential<N> + HolonomicKinematics<N, M> + AppliedForces<N>,
{
    fn step(&mut self, model: &Model, state: &mut State<N>) -> Result<StepReport, StepError> {
        crate::integrators::checks::check_parameters(model)?;
        check_state(state)?;
        let (h, t) = (self.h, state.t);
        self.rhs.take_factorizations();
        let stages = Stages::<N, S>::compute::<Model, M>(
            &mut self.rhs,
            model,
            &self.tableau,
            h,
            t,
            &state.q,
            &state.v,
            None,
            t,
        )?;
        let (mut q, mut v) = stages.combine(&self.tableau.b, &state.q, &state.v, h);
        check_finite(&q, "q", t)?;
        check_finite(&v, "v", t)?;
        let t_next = t + h;
        let stabilization = stabilize::<Model, N, M>(
            model,
            self.stabilization,
            self.metric,
            &mut self.rhs.mass,
            &mut q,
            &mut v,
            t_next,
            t,
        )?;
        if self.guard.limit() < f64::INFINITY {
            let (mut g, mut g_next) = (SVector::<f64, M>::zeros(), SVector::<f64, M>::zeros());
            let mut jac = nalgebra::SMatrix::<f64, M, N>::zeros();
            model.constraints_and_jacobian(&state.q, t, &mut g, &mut jac);
            model.constraints(&q, t_next, &mut g_next);
            self.guard.check(&g, &jac, &g_next, &state.q, &q, t)?;
        }
        state.q = q;
        state.v = v;
        state.t = t_next;
        self.rhs.take_evaluations();
        Ok(StepReport {
            factorizations: self.rhs.take_factorizations() + stabilization,
            newton_iterations: 0,
        })
    }
}
