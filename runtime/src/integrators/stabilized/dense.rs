//! The fixed-size tier of the stabilized Runge–Kutta methods: eq. 1.5 of Ascher et al. (1995)
//! through the Schur complement `G M⁻¹ Gᵀ` on stack arrays.

use nalgebra::SVector;

use super::index_one::IndexOne;
use super::runge_kutta::{IndexOneSystem, IndexOneTier, RkScheme, Stages};
use super::{check_state, stabilize, Baumgarte, Metric, PostStabilization, Tableau};
use crate::error::StepError;
use crate::integrators::{Integrator, StepReport};
use crate::model::{AppliedForces, HolonomicKinematics, InertiaGradient, Potential};
use crate::state::State;

impl<const N: usize, const S: usize> Stages<SVector<f64, N>, S> {
    /// Returns `(q + h Σ w_j V_j, v + h Σ w_j v̇_j)`; see [`combine_into`](Self::combine_into).
    pub(crate) fn combine(
        &self,
        weights: &[f64; S],
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        h: f64,
    ) -> (SVector<f64, N>, SVector<f64, N>) {
        let (mut q_out, mut v_out) = (SVector::<f64, N>::zeros(), SVector::<f64, N>::zeros());
        self.combine_into(
            weights,
            (q.as_slice(), v.as_slice()),
            h,
            (q_out.as_mut_slice(), v_out.as_mut_slice()),
        );
        (q_out, v_out)
    }

    /// Computes every stage of `tableau` from `(q, v)` at `t` on the fixed-size tier; `first` is
    /// `v̇` at `(q, v, t)` when already known. `t_err` is the time reported in errors.
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
        let zero = SVector::<f64, N>::zeros();
        let mut stages = Self::filled(&zero);
        let (mut scratch_q, mut scratch_v) = (zero, zero);
        stages.compute_with(
            tableau,
            h,
            t,
            (q.as_slice(), v.as_slice()),
            first.as_ref().map(|a| a.as_slice()),
            t_err,
            (&mut scratch_q, &mut scratch_v),
            |q, v, t, out| dense_acceleration::<Model, N, M>(rhs, model, q, v, t, t_err, out),
        )?;
        Ok(stages)
    }
}

/// Solves eq. 1.5 on the fixed-size tier at a stage given as slices.
fn dense_acceleration<Model, const N: usize, const M: usize>(
    rhs: &mut IndexOne<N>,
    model: &Model,
    q: &[f64],
    v: &[f64],
    t: f64,
    t_err: f64,
    out: &mut [f64],
) -> Result<(), StepError>
where
    Model: InertiaGradient<N> + Potential<N> + HolonomicKinematics<N, M> + AppliedForces<N>,
{
    let (q, v) = (
        SVector::<f64, N>::from_column_slice(q),
        SVector::<f64, N>::from_column_slice(v),
    );
    let solution = rhs.evaluate::<Model, M>(model, &q, &v, t, t_err)?;
    out.copy_from_slice(solution.acceleration.as_slice());
    Ok(())
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
/// with [`StepError::Diverged`] instead of returning `Ok` ([`DivergenceGuard`](crate::integrators::DivergenceGuard), one more
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
///
/// # Both tiers
///
/// `StabilizedRk<N, M, S>` is [`RkScheme`] over [`IndexOneDense`], the fixed-size tier;
/// [`SparseStabilizedRk`](super::SparseStabilizedRk) is the same scheme over [`IndexOneSparse`](super::sparse::IndexOneSparse), for models of the sparse
/// tier (`model::sparse`), built with [`SparseStabilizedRk::new`](super::SparseStabilizedRk::new).
pub type StabilizedRk<const N: usize, const M: usize, const S: usize> =
    RkScheme<IndexOneDense<N, M>, S>;

/// The fixed-size tier of [`RkScheme`]: eq. 1.5 through the Schur complement `G M⁻¹ Gᵀ` with
/// stack-allocated Cholesky factors ([`constrained_acceleration`](super::constrained_acceleration)).
#[derive(Clone, Copy, Debug)]
pub struct IndexOneDense<const N: usize, const M: usize> {
    rhs: IndexOne<N>,
    /// `g(q_k)`, `|Gᵢ(q_k)|₁` and `g(q_{k+1})` for the divergence guard.
    g: SVector<f64, M>,
    row_norms: SVector<f64, M>,
    g_next: SVector<f64, M>,
}

impl<const N: usize, const M: usize> IndexOneTier for IndexOneDense<N, M> {
    type Vector = SVector<f64, N>;

    fn zero_vector(&self) -> SVector<f64, N> {
        SVector::zeros()
    }

    fn baumgarte(&self) -> Baumgarte {
        self.rhs.baumgarte
    }

    fn set_baumgarte(&mut self, baumgarte: Baumgarte) {
        self.rhs.baumgarte = baumgarte;
    }

    fn take_factorizations(&mut self) -> u32 {
        self.rhs.take_evaluations();
        self.rhs.take_factorizations()
    }
}

impl<Model, const N: usize, const M: usize> IndexOneSystem<Model> for IndexOneDense<N, M>
where
    Model: InertiaGradient<N> + Potential<N> + HolonomicKinematics<N, M> + AppliedForces<N>,
{
    fn acceleration(
        &mut self,
        model: &Model,
        (q, v): (&[f64], &[f64]),
        t: f64,
        t_err: f64,
        out: &mut [f64],
    ) -> Result<(), StepError> {
        dense_acceleration::<Model, N, M>(&mut self.rhs, model, q, v, t, t_err, out)
    }

    fn stabilize(
        &mut self,
        model: &Model,
        stabilization: PostStabilization,
        metric: Metric,
        (q, v): (&mut [f64], &mut [f64]),
        t: f64,
        t_err: f64,
    ) -> Result<u32, StepError> {
        let mut q_fixed = SVector::<f64, N>::from_column_slice(q);
        let mut v_fixed = SVector::<f64, N>::from_column_slice(v);
        let count = stabilize::<Model, N, M>(
            model,
            stabilization,
            metric,
            &mut self.rhs.mass,
            &mut q_fixed,
            &mut v_fixed,
            t,
            t_err,
        )?;
        q.copy_from_slice(q_fixed.as_slice());
        v.copy_from_slice(v_fixed.as_slice());
        Ok(count)
    }

    fn guard_rows(
        &mut self,
        model: &Model,
        (q, t): (&[f64], f64),
        (q_next, t_next): (&[f64], f64),
    ) -> (&[f64], &[f64], &[f64]) {
        let mut jac = nalgebra::SMatrix::<f64, M, N>::zeros();
        model.constraints_and_jacobian(&SVector::from_column_slice(q), t, &mut self.g, &mut jac);
        model.constraints(
            &SVector::from_column_slice(q_next),
            t_next,
            &mut self.g_next,
        );
        for row in 0..M {
            self.row_norms[row] = jac.row(row).lp_norm(1);
        }
        (
            self.g.as_slice(),
            self.row_norms.as_slice(),
            self.g_next.as_slice(),
        )
    }
}

impl<const N: usize, const M: usize, const S: usize> RkScheme<IndexOneDense<N, M>, S> {
    /// Creates the method `tableau` with step size `h`, no Baumgarte term and no
    /// post-stabilization; fails with `BadStepSize` unless `h` is positive and finite, and with
    /// `BadParameter` if the tableau is not a consistent explicit method ([`Tableau::check`]).
    pub fn new(tableau: Tableau<S>, h: f64) -> Result<Self, StepError> {
        let system = IndexOneDense {
            rhs: IndexOne::new(Baumgarte::NONE),
            g: SVector::zeros(),
            row_norms: SVector::zeros(),
            g_next: SVector::zeros(),
        };
        Self::with_system(tableau, h, system)
    }
}

#[diagnostic::do_not_recommend]
impl<Model, const N: usize, const M: usize, const S: usize> Integrator<Model, N>
    for RkScheme<IndexOneDense<N, M>, S>
where
    Model: InertiaGradient<N> + Potential<N> + HolonomicKinematics<N, M> + AppliedForces<N>,
{
    fn step(&mut self, model: &Model, state: &mut State<N>) -> Result<StepReport, StepError> {
        crate::integrators::checks::check_parameters(model)?;
        check_state(state)?;
        let report = self.advance(
            model,
            state.t,
            state.q.as_mut_slice(),
            state.v.as_mut_slice(),
        )?;
        state.t += self.step_size();
        Ok(report)
    }
}
