//! The exact Jacobians of a GLA step ([`Langevin`](super::Langevin),
//! [`SparseLangevin`](super::SparseLangevin)) along its realization of the noise.
//!
//! A GLA step is `(q', v') = Φ_h(q, ṽ)` with the Ornstein–Uhlenbeck flow
//! `ṽ = e^{−γhM⁻¹} v + Q diag(σ) ξ` (`M = Q D Qᵀ` block by block, the docs of
//! [`Langevin`](super::Langevin)). Its derivative is taken with the step's draws `ξ` held fixed
//! — the pathwise derivative of one realization, which is what a sensitivity or a gradient
//! along a simulated trajectory with a given seed is (the noise is an input of the step, not a
//! function of the state). For a constant `M`, `ṽ` does not depend on `q` and `E = e^{−γhM⁻¹}`
//! is its derivative in `v`, so with the inner integrator's Jacobian `J_Φ` at `(q, ṽ)`
//!
//! ```text
//! J = J_Φ · [ I 0 ; 0 E ],      J_p = J_Φ,p + J_Φ,v S,      S_ij = ∂ṽ_i/∂p_j
//! ```
//!
//! `S` is zero unless the masses depend on the parameters. Where a block of `M` is diagonal,
//! its basis is the identity and each coordinate is a scalar process with mass `m_i`:
//! `S_ij = (c_i′ v_i + σ_i′ ξ_i) ∂m_i/∂p_j` with the derivatives of `c_i = e^{−γh/m_i}` and
//! `σ_i = √(kT (1 − c_i²)/m_i)` (`OrnsteinUhlenbeck::mass_slopes`). Where a parameter reaches
//! an off-diagonal entry of `M`, or a block that is not diagonal, the noise is drawn in an
//! eigenbasis that moves with `M` — and does not move smoothly where eigenvalues repeat (every
//! rigid body with a symmetric inertia) — so no parameter derivative is taken: such a product
//! fails with [`StepError::Unsupported`]; the state Jacobian has no such limit. A
//! configuration-dependent `M` is not covered (its flow's basis moves with `q`).
//!
//! `E` is symmetric, so the adjoint applies it to the inner adjoint's `v` part; on the sparse
//! tier it is applied block by block, `O(Σ s_b²)` per product on top of the inner one's.

use nalgebra::SMatrix;

use super::ornstein_uhlenbeck::OrnsteinUhlenbeck;
use super::LangevinScheme;
use crate::error::StepError;
use crate::integrators::jacobian::{check_product_lengths, Product};
use crate::integrators::{
    DifferentiableInParameters, DifferentiableStep, ParameterJacobian, SparseDifferentiableStep,
    StepJacobian, StepReport,
};
use crate::model::{
    ConstantMass, MassParameterDerivatives, SparseConstantMass, SparseParameterDerivatives,
};
use crate::state::{DynState, State};

/// The error of a parameter derivative through a mass the flow cannot differentiate.
const NOT_DIAGONAL: StepError = StepError::Unsupported {
    integrator: "Langevin (GLA)",
    requirement: "a parameter Jacobian only where the parameters reach diagonal entries of diagonal blocks of M: elsewhere the noise is drawn in an eigenbasis of M that does not move smoothly with the parameters (the state Jacobian and the parameters outside M are unaffected)",
};

/// What a linearized sparse GLA step keeps: the state it started from, the flow's slopes in
/// the masses and which coordinates have them, whether a parameter reaches `M` where no
/// derivative is taken, and a product's buffer. Sized when the scheme is built.
#[derive(Clone, Debug)]
pub(super) struct Linearization {
    valid: bool,
    q: Vec<f64>,
    v: Vec<f64>,
    slopes: Vec<f64>,
    diagonal: Vec<bool>,
    unsupported_parameters: bool,
    direction: Vec<f64>,
}

impl Linearization {
    /// Sized for `n` coordinates.
    pub(super) fn new(n: usize) -> Self {
        Linearization {
            valid: false,
            q: vec![0.0; n],
            v: vec![0.0; n],
            slopes: vec![0.0; n],
            diagonal: vec![false; n],
            unsupported_parameters: false,
            direction: vec![0.0; n],
        }
    }
}

/// Returns `m · E` for `E = e^{−γhM⁻¹}` of the flow's last step (row by row, `E` symmetric).
fn times_decay<const R: usize, const N: usize>(
    flow: &mut OrnsteinUhlenbeck,
    m: &SMatrix<f64, R, N>,
) -> SMatrix<f64, R, N> {
    let mut out = *m;
    for r in 0..R {
        let mut row: [f64; N] = std::array::from_fn(|c| m[(r, c)]);
        flow.apply_decay(&mut row);
        for (c, value) in row.into_iter().enumerate() {
            out[(r, c)] = value;
        }
    }
    out
}

impl<I, Model, const N: usize> DifferentiableStep<Model, N> for LangevinScheme<I, State<N>>
where
    I: DifferentiableStep<Model, N>,
    Model: ConstantMass<N>,
{
    fn step_with_jacobian(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        jacobian: &mut StepJacobian<N>,
    ) -> Result<StepReport, StepError> {
        let mut inner = StepJacobian::<N>::default();
        let report = self.step_fixed(model, state, |integrator, model, trial| {
            integrator.step_with_jacobian(model, trial, &mut inner)
        })?;
        *jacobian = StepJacobian {
            q_v: times_decay(&mut self.flow, &inner.q_v),
            v_v: times_decay(&mut self.flow, &inner.v_v),
            ..inner
        };
        Ok(report)
    }
}

impl<I, Model, const N: usize, const P: usize> DifferentiableInParameters<Model, N, P>
    for LangevinScheme<I, State<N>>
where
    I: DifferentiableInParameters<Model, N, P>,
    Model: ConstantMass<N> + MassParameterDerivatives<N, P>,
{
    fn step_with_jacobians(
        &mut self,
        model: &Model,
        state: &mut State<N>,
        jacobian: &mut StepJacobian<N>,
        parameters: &mut ParameterJacobian<N, P>,
    ) -> Result<StepReport, StepError> {
        // Where the parameters reach M, checked before the step (a failure changes nothing).
        let (mut mass, mut mass_p) = (
            SMatrix::<f64, N, N>::zeros(),
            [SMatrix::<f64, N, N>::zeros(); P],
        );
        model.mass_matrix(&state.q, &mut mass);
        model.mass_parameter_derivatives(&state.q, &mut mass_p);
        let off_diagonal =
            |m: &SMatrix<f64, N, N>| (0..N).any(|i| (0..N).any(|j| i != j && m[(i, j)] != 0.0));
        let reaches_mass = mass_p.iter().any(|m| m.iter().any(|&x| x != 0.0));
        if reaches_mass && (off_diagonal(&mass) || mass_p.iter().any(off_diagonal)) {
            return Err(NOT_DIAGONAL);
        }
        let v = state.v;
        let (mut inner, mut inner_p) = (
            StepJacobian::<N>::default(),
            ParameterJacobian::<N, P>::default(),
        );
        let report = self.step_fixed(model, state, |integrator, model, trial| {
            integrator.step_with_jacobians(model, trial, &mut inner, &mut inner_p)
        })?;
        let (mut slopes, mut diagonal) = ([0.0; N], [false; N]);
        self.flow
            .mass_slopes(v.as_slice(), &mut slopes, &mut diagonal);
        let s = SMatrix::<f64, N, P>::from_fn(|i, j| slopes[i] * mass_p[j][(i, i)]);
        *parameters = ParameterJacobian {
            q_p: inner_p.q_p + inner.q_v * s,
            v_p: inner_p.v_p + inner.v_v * s,
        };
        *jacobian = StepJacobian {
            q_v: times_decay(&mut self.flow, &inner.q_v),
            v_v: times_decay(&mut self.flow, &inner.v_v),
            ..inner
        };
        Ok(report)
    }
}

impl<I, Model> SparseDifferentiableStep<Model> for LangevinScheme<I, DynState>
where
    I: SparseDifferentiableStep<Model>,
    Model: SparseConstantMass + SparseParameterDerivatives + ?Sized,
{
    fn step_linearized(
        &mut self,
        model: &Model,
        state: &mut DynState,
    ) -> Result<StepReport, StepError> {
        let n = self.flow.coordinate_count();
        let lin = &mut self.linearization;
        if state.q.len() == n && state.v.len() == n {
            lin.q.copy_from_slice(&state.q);
            lin.v.copy_from_slice(&state.v);
        }
        // The plain step's checks; it forgets the last linearization.
        let report = self.step_sparse(model, state, |integrator, model, trial| {
            integrator.step_linearized(model, trial)
        })?;
        let lin = &mut self.linearization;
        self.flow
            .mass_slopes(&lin.v, &mut lin.slopes, &mut lin.diagonal);
        let mut unsupported = false;
        model.mass_parameter_entries(&lin.q, &mut |a, b, _, value| {
            unsupported |= value != 0.0 && (a != b || !lin.diagonal[a]);
        });
        lin.unsupported_parameters = unsupported;
        lin.valid = true;
        Ok(report)
    }

    fn tangent(
        &mut self,
        model: &Model,
        (dq, dv, dp): (&[f64], &[f64], &[f64]),
        out: (&mut [f64], &mut [f64]),
    ) -> Result<(), StepError> {
        let lin = &mut self.linearization;
        check_linearized(lin)?;
        check_product_lengths(
            Product::Tangent,
            (lin.q.len(), model.parameter_count()),
            [dq.len(), dv.len(), out.0.len(), out.1.len()],
            dp.len(),
        )?;
        if !dp.is_empty() && lin.unsupported_parameters {
            return Err(NOT_DIAGONAL);
        }
        // δṽ = E δv + S δp.
        lin.direction.copy_from_slice(dv);
        self.flow.apply_decay(&mut lin.direction);
        if !dp.is_empty() {
            let (direction, slopes) = (&mut lin.direction, &lin.slopes);
            model.mass_parameter_entries(&lin.q, &mut |a, b, j, value| {
                if a == b {
                    direction[a] += slopes[a] * value * dp[j];
                }
            });
        }
        self.inner.tangent(model, (dq, &lin.direction, dp), out)
    }

    fn adjoint(
        &mut self,
        model: &Model,
        weights: (&[f64], &[f64]),
        (out_q, out_v): (&mut [f64], &mut [f64]),
        gradient: &mut [f64],
    ) -> Result<(), StepError> {
        let lin = &self.linearization;
        check_linearized(lin)?;
        check_product_lengths(
            Product::Adjoint,
            (lin.q.len(), model.parameter_count()),
            [weights.0.len(), weights.1.len(), out_q.len(), out_v.len()],
            gradient.len(),
        )?;
        if !gradient.is_empty() && lin.unsupported_parameters {
            return Err(NOT_DIAGONAL);
        }
        self.inner
            .adjoint(model, weights, (&mut *out_q, &mut *out_v), gradient)?;
        // `out_v` weighs δṽ: Sᵀ out_v into the gradient, then Eᵀ = E.
        if !gradient.is_empty() {
            let (slopes, weights_v) = (&lin.slopes, &*out_v);
            model.mass_parameter_entries(&lin.q, &mut |a, b, j, value| {
                if a == b {
                    gradient[j] += weights_v[a] * slopes[a] * value;
                }
            });
        }
        self.flow.apply_decay(out_v);
        Ok(())
    }
}

/// Returns `InvalidModel` unless the last step was linearized.
fn check_linearized(lin: &Linearization) -> Result<(), StepError> {
    if lin.valid {
        Ok(())
    } else {
        Err(StepError::InvalidModel {
            what: "step Jacobian product",
            index: 0,
            reason: "needs a step taken with `step_linearized` since the last plain step",
        })
    }
}

impl<I> LangevinScheme<I, DynState> {
    /// Forgets the last linearized step (a plain step was taken).
    pub(super) fn forget_linearization(&mut self) {
        self.linearization.valid = false;
    }
}
