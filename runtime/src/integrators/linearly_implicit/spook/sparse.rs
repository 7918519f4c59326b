//! SPOOK's linear algebra on the sparse tier: one sparse `LDLᵀ` of the quasi-definite matrix
//! of eq. 29 per step, on a pattern analysed once.
//!
//! With `λ → −λ` and `α → −α`, eq. 29 is the symmetric quasi-definite system
//!
//! ```text
//! [ M   Gᵀ   Aᵀ ] [ v_{k+1} ]   [ r ]
//! [ G   −Σ   0  ] [   −λ    ] = [ t ]
//! [ A   0    −Γ ] [   −α    ]   [ s ]
//! ```
//!
//! which has an `LDLᵀ` factorization with diagonal `D` (positive on the coordinates, negative
//! on the rows) in every symmetric order as soon as `M ≻ 0`, `Σ ≻ 0`, `Γ ≻ 0` (Vanderbei 1995).
//! The unknowns are numbered body by body, each constraint row right after the last body it
//! touches: for chains and ladders this order is banded, needs no fill-reducing permutation,
//! and keeps the factorization accurate as `ε → 0` (see [`SparseLdlt`]). Rows with `ε = 0`
//! (ideal constraints) keep a zero diagonal; the factorization then still exists when the rows
//! are independent, and a dependent set is reported as a vanishing pivot.

use super::sparse_linearization::Linearization;
use super::{
    restore_multipliers, save_multipliers, scheme, SpookOverrides, SpookRows, SpookScheme,
    SpookSystem,
};
use crate::error::StepError;
use crate::integrators::checks::{
    check_built_for, check_dyn_state, check_finite_slice, check_mass_is_constant,
    check_sparse_parameters,
};
use crate::integrators::saddle_point::SaddlePoint;
use crate::integrators::{SparseIntegrator, StepReport};
use crate::linalg::products::{add_pattern_times, block_diagonal_times};
use crate::linalg::LinalgError;
use crate::model::{
    Regularization, SparseAppliedForces, SparseConstantMass, SparseHolonomic, SparseInertia,
    SparseNonholonomic, SparsePotential,
};
use crate::state::DynState;

/// The name of SPOOK's matrix in errors.
pub(super) const SPOOK_MATRIX: &str = "SPOOK matrix [[M, Gᵀ, Aᵀ], [G, −Σ, 0], [A, 0, −Γ]]";

/// The system of eq. 29 of one sparse-tier model: its numbering, sparsity pattern, symbolic
/// factorization and every buffer of a step, all sized when it is built.
#[derive(Debug)]
pub struct SpookSparse {
    /// The quasi-definite matrix of eq. 29 on its analysed pattern.
    pub(super) saddle_point: SaddlePoint,
    /// `G`'s pattern, `(row, coordinate)`, for `G v`.
    pub(super) jacobian_pattern: Vec<(usize, usize)>,
    /// The model's values at `q_k`.
    pub(super) mass_blocks: Vec<f64>,
    gradient: Vec<f64>,
    force: Vec<f64>,
    pub(super) jacobian: Vec<f64>,
    nonholonomic: Vec<f64>,
    /// The rows of eq. 29.
    g: Vec<f64>,
    jac_v: Vec<f64>,
    sigma: Vec<f64>,
    t: Vec<f64>,
    gamma: Vec<f64>,
    s: Vec<f64>,
    r: Vec<f64>,
    /// `q_{k+1}`, and for the divergence guard `g(q_{k+1})`, the Jacobian values there
    /// (scratch) and the row norms `|Gᵢ(q_k)|₁`.
    q_next: Vec<f64>,
    g_next: Vec<f64>,
    jacobian_next: Vec<f64>,
    row_norms: Vec<f64>,
    /// The solution of the last solve and the multipliers of the last successful step.
    v_next: Vec<f64>,
    lambda: Vec<f64>,
    alpha: Vec<f64>,
    pub(super) multipliers: Vec<f64>,
    nonholonomic_multipliers: Vec<f64>,
    pub(super) overrides: Vec<Option<Regularization>>,
    compliance_overrides: Vec<Option<f64>>,
    /// What the last step keeps for its Jacobian products, if it was linearized.
    pub(super) linearization: Linearization,
}

impl SpookScheme<SpookSparse> {
    /// Creates a SPOOK stepper with step size `h` for `model`: numbers the unknowns, builds the
    /// sparsity pattern and its symbolic factorization, and sizes every buffer, so that no step
    /// allocates.
    ///
    /// Fails with `InvalidModel` if the body sizes do not add up to the number of coordinates,
    /// a pattern entry lies outside the model, or a row has no entry (it cannot depend on the
    /// coordinates).
    pub fn new<Model>(model: &Model, h: f64) -> Result<Self, StepError>
    where
        Model: SparseInertia + SparseHolonomic + SparseNonholonomic + ?Sized,
    {
        scheme(h, SpookSparse::new(model)?)
    }

    /// Returns the holonomic multipliers `λ` of the last successful step, as for
    /// [`Spook::multipliers`](super::Spook): `Gᵀλ / h` is the constraint force.
    pub fn multipliers(&self) -> &[f64] {
        &self.system.multipliers
    }

    /// Returns the nonholonomic multipliers `α` of the last successful step.
    pub fn nonholonomic_multipliers(&self) -> &[f64] {
        &self.system.nonholonomic_multipliers
    }

    /// Returns the sparse system, for its statistics and residual.
    pub fn system(&self) -> &SpookSparse {
        &self.system
    }
}

impl SpookSparse {
    /// Builds the system for `model`; see [`SparseSpook::new`](super::SparseSpook).
    fn new<Model>(model: &Model) -> Result<Self, StepError>
    where
        Model: SparseInertia + SparseHolonomic + SparseNonholonomic + ?Sized,
    {
        let n = model.coordinate_count();
        let (m, k) = (model.constraint_count(), model.nonholonomic_count());
        let jacobian_pattern = model.jacobian_pattern().to_vec();
        let nonholonomic_pattern = model.nonholonomic_pattern();
        let saddle_point = SaddlePoint::new(
            n,
            model.body_sizes(),
            (m, &jacobian_pattern),
            (k, nonholonomic_pattern),
            SPOOK_MATRIX,
        )?;
        Ok(SpookSparse {
            mass_blocks: vec![0.0; saddle_point.mass_value_count()],
            jacobian: vec![0.0; jacobian_pattern.len()],
            jacobian_next: vec![0.0; jacobian_pattern.len()],
            q_next: vec![0.0; n],
            g_next: vec![0.0; m],
            row_norms: vec![0.0; m],
            nonholonomic: vec![0.0; nonholonomic_pattern.len()],
            jacobian_pattern,
            saddle_point,
            gradient: vec![0.0; n],
            force: vec![0.0; n],
            g: vec![0.0; m],
            jac_v: vec![0.0; m],
            sigma: vec![0.0; m],
            t: vec![0.0; m],
            gamma: vec![0.0; k],
            s: vec![0.0; k],
            r: vec![0.0; n],
            v_next: vec![0.0; n],
            lambda: vec![0.0; m],
            alpha: vec![0.0; k],
            multipliers: vec![0.0; m],
            nonholonomic_multipliers: vec![0.0; k],
            overrides: vec![None; m],
            compliance_overrides: vec![None; k],
            linearization: Linearization::default(),
        })
    }

    /// Returns the number of unknowns of eq. 29, `n + m + k`.
    pub fn unknown_count(&self) -> usize {
        self.saddle_point.unknown_count()
    }

    /// Returns the number of stored entries of the factor `L` (the fill of the numbering).
    pub fn factor_entry_count(&self) -> usize {
        self.saddle_point.factor_entry_count()
    }

    /// Returns the relative residual `‖A x − b‖∞ / ‖b‖∞` of the last solve of eq. 29, in the
    /// symmetric form above: the accuracy of the factorization for this matrix. Allocates; a
    /// diagnostic, not part of a step.
    pub fn relative_residual(&self) -> Result<f64, LinalgError> {
        self.saddle_point.relative_residual()
    }

    /// Returns `InvalidModel` unless `model` has the sizes this system was built for.
    ///
    /// Patterns are fixed for a model's lifetime (the traits' contract), so comparing their
    /// lengths and the body sizes catches a foreign model without reading the patterns at every
    /// step.
    pub(super) fn check_model<Model>(&self, model: &Model) -> Result<(), StepError>
    where
        Model: SparseInertia + SparseHolonomic + SparseNonholonomic + ?Sized,
    {
        check_built_for(
            model.body_sizes() == self.saddle_point.body_sizes(),
            "body sizes",
            model.body_sizes().len(),
        )?;
        let (jacobian, nonholonomic) = (model.jacobian_pattern(), model.nonholonomic_pattern());
        check_built_for(
            model.constraint_count() == self.g.len() && jacobian.len() == self.jacobian.len(),
            "constraint jacobian pattern",
            jacobian.len(),
        )?;
        check_built_for(
            model.nonholonomic_count() == self.s.len()
                && nonholonomic.len() == self.nonholonomic.len(),
            "nonholonomic pattern",
            nonholonomic.len(),
        )?;
        Ok(())
    }
}

impl SpookOverrides for SpookSparse {
    fn overrides_mut(&mut self) -> &mut [Option<Regularization>] {
        &mut self.overrides
    }
    fn compliance_overrides_mut(&mut self) -> &mut [Option<f64>] {
        &mut self.compliance_overrides
    }
}

impl<Model> SpookSystem<Model> for SpookSparse
where
    Model: SparseInertia
        + SparsePotential
        + SparseHolonomic
        + SparseNonholonomic
        + SparseAppliedForces
        + ?Sized,
{
    fn evaluate(
        &mut self,
        model: &Model,
        q: &[f64],
        v: &[f64],
        time: f64,
        h: f64,
    ) -> Result<(), StepError> {
        self.check_model(model)?;
        model.mass_blocks(q, &mut self.mass_blocks);
        check_finite_slice(&self.mass_blocks, "mass matrix", time)?;
        model.potential_gradient(q, &mut self.gradient);
        check_finite_slice(&self.gradient, "gradient", time)?;
        model.applied_force(q, v, time, &mut self.force);
        check_finite_slice(&self.force, "applied force", time)?;
        model.constraints_and_jacobian(q, time, &mut self.g, &mut self.jacobian);
        check_finite_slice(&self.g, "constraints", time)?;
        check_finite_slice(&self.jacobian, "constraint jacobian", time)?;
        model.nonholonomic_matrix(q, &mut self.nonholonomic);
        check_finite_slice(&self.nonholonomic, "nonholonomic matrix A", time)?;
        model.nonholonomic_drive(time, &mut self.s);
        check_finite_slice(&self.s, "nonholonomic drive w", time)?;

        // r = M v − h ∇V + h f.
        block_diagonal_times(
            self.saddle_point.body_sizes(),
            &self.mass_blocks,
            v,
            &mut self.r,
        );
        for ((r, gradient), force) in self.r.iter_mut().zip(&self.gradient).zip(&self.force) {
            *r = *r - h * gradient + h * force;
        }
        self.jac_v.fill(0.0);
        add_pattern_times(&self.jacobian_pattern, &self.jacobian, v, &mut self.jac_v);
        Ok(())
    }

    fn model_regularization(model: &Model, row: usize) -> Regularization {
        model.regularization(row)
    }

    fn model_compliance(model: &Model, row: usize) -> f64 {
        model.nonholonomic_compliance(row)
    }

    fn rows(&mut self) -> SpookRows<'_> {
        SpookRows {
            g: &self.g,
            jac_v: &self.jac_v,
            sigma: &mut self.sigma,
            rhs: &mut self.t,
            gamma: &mut self.gamma,
            overrides: &self.overrides,
            compliance_overrides: &self.compliance_overrides,
        }
    }

    fn solve(&mut self, _model: &Model, time: f64) -> Result<u32, StepError> {
        let wrap = StepError::linear_algebra(SPOOK_MATRIX, time);
        self.saddle_point
            .factor(
                &self.mass_blocks,
                &self.jacobian,
                &self.nonholonomic,
                &self.sigma,
                &self.gamma,
            )
            .map_err(&wrap)?;
        self.saddle_point
            .solve(
                (&self.r, &self.t, &self.s),
                (&mut self.v_next, &mut self.lambda, &mut self.alpha),
            )
            .map_err(&wrap)?;
        // The symmetric form solves for −λ and −α.
        self.lambda.iter_mut().for_each(|x| *x = -*x);
        self.alpha.iter_mut().for_each(|x| *x = -*x);
        Ok(1)
    }

    fn solution(&self) -> (&[f64], &[f64], &[f64]) {
        (&self.v_next, &self.lambda, &self.alpha)
    }

    fn configuration_after(
        &mut self,
        model: &Model,
        q: &[f64],
        h: f64,
        t_next: f64,
        guarded: bool,
    ) {
        for ((q_next, q), v) in self.q_next.iter_mut().zip(q).zip(&self.v_next) {
            *q_next = q + v * h;
        }
        if guarded {
            model.constraints_and_jacobian(
                &self.q_next,
                t_next,
                &mut self.g_next,
                &mut self.jacobian_next,
            );
            self.row_norms.fill(0.0);
            for (&(row, _), value) in self.jacobian_pattern.iter().zip(&self.jacobian) {
                self.row_norms[row] += value.abs();
            }
        }
    }

    fn next_configuration(&self) -> &[f64] {
        &self.q_next
    }

    fn guard_rows(&self) -> (&[f64], &[f64], &[f64]) {
        (&self.g, &self.row_norms, &self.g_next)
    }

    fn accept(&mut self) {
        self.multipliers.copy_from_slice(&self.lambda);
        self.nonholonomic_multipliers.copy_from_slice(&self.alpha);
    }
}

impl<Model> SparseIntegrator<Model> for SpookScheme<SpookSparse>
where
    Model: SparseConstantMass
        + SparsePotential
        + SparseHolonomic
        + SparseNonholonomic
        + SparseAppliedForces
        + ?Sized,
{
    crate::checkpoint::carried_access!();

    fn step(&mut self, model: &Model, state: &mut DynState) -> Result<StepReport, StepError> {
        self.system.linearization.invalidate();
        check_mass_is_constant(model.constant_mass(), "SPOOK")?;
        check_sparse_parameters(model)?;
        check_dyn_state(state, model.coordinate_count())?;
        let report = self.advance(model, state.t, &mut state.q, &mut state.v)?;
        state.t += self.h;
        Ok(report)
    }
}

/// SPOOK carries only its last multipliers: the next step solves for them afresh from `q_k`,
/// `v_k`, but a run's multiplier columns show them.
impl crate::checkpoint::CarriedState for SpookScheme<SpookSparse> {
    fn identity(&self) -> crate::checkpoint::IntegratorIdentity {
        let overrides = format!(
            "{:?}{:?}",
            self.system.overrides, self.system.compliance_overrides
        );
        self.spook_identity("SparseSpook", &overrides)
    }

    fn save(&self, out: &mut crate::checkpoint::Carried) {
        save_multipliers(
            out,
            &self.system.multipliers,
            &self.system.nonholonomic_multipliers,
        );
    }

    fn restore(
        &mut self,
        from: &crate::checkpoint::Carried,
    ) -> Result<(), crate::checkpoint::CheckpointError> {
        let system = &mut self.system;
        restore_multipliers(
            from,
            &mut system.multipliers,
            &mut system.nonholonomic_multipliers,
        )
    }
}
