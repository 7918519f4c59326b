//! The stabilized Runge–Kutta methods on the sparse tier: eq. 1.5 of Ascher et al. (1995) as
//! one sparse saddle-point solve per stage.

use super::runge_kutta::{IndexOneSystem, IndexOneTier, RkScheme};
use super::{Baumgarte, Metric, PostStabilization, Tableau};
use crate::error::StepError;
use crate::integrators::checks::{
    check_built_for, check_dyn_state, check_finite_slice, check_mass_is_constant,
    check_sparse_parameters,
};
use crate::integrators::saddle_point::SaddlePoint;
use crate::integrators::{SparseIntegrator, StepReport};
use crate::model::{
    SparseAppliedForces, SparseConstantMass, SparseHolonomicKinematics, SparseInertia,
    SparsePotential,
};
use crate::state::DynState;

/// The name of the index-1 matrix in errors.
const INDEX_ONE_MATRIX: &str = "index-1 matrix [[M, Gᵀ], [G, 0]]";

/// The integrator's name in errors.
const NAME: &str = "stabilized Runge–Kutta (sparse tier)";

/// A stabilized Runge–Kutta method with fixed step size on the sparse tier: the scheme of
/// [`StabilizedRk`](super::StabilizedRk) with eq. 1.5 solved as one sparse saddle-point system per stage,
/// `[[M, Gᵀ], [G, 0]]` factored by `LDLᵀ` on a pattern analysed once (see [`IndexOneSparse`]).
/// No heap allocation per step.
pub type SparseStabilizedRk<const S: usize> = RkScheme<IndexOneSparse, S>;

/// The sparse tier of [`RkScheme`]: eq. 1.5 with Baumgarte's term (eq. 2.1),
///
/// ```text
/// [ M   Gᵀ ] [ v̇ ]   [ f ]        f = −∇V + f_a(q, v, t)
/// [ G   0  ] [ λ  ] = [ φ ],      φ = −(G v)_q v − 2 G_t v − g_tt − α1 (G v + g_t) − α0 g
/// ```
///
/// solved as one saddle-point matrix on a pattern analysed once, with the unknowns numbered
/// body by body and each row right after the last body it touches, factored by a sparse
/// `LDLᵀ` with positive pivots on the coordinates and negative ones on the rows. With the rows
/// eliminated after their coordinates, each row's pivot is `−Gᵢ M⁻¹ Gᵢᵀ` updated by the rows
/// before it: the factorization exists exactly when the rows are independent, and dependent
/// (redundant) rows are reported as [`StepError::Singular`]. The mass matrix must be constant
/// and block diagonal (the sparse tier's [`SparseInertia`]); post-stabilization is implemented
/// on the fixed-size tier only, and any other than [`PostStabilization::None`] is refused with
/// [`StepError::Unsupported`] at the first step.
#[derive(Debug)]
pub struct IndexOneSparse {
    baumgarte: Baumgarte,
    saddle_point: SaddlePoint,
    jacobian_pattern: Vec<(usize, usize)>,
    /// The model's values at a stage.
    mass_blocks: Vec<f64>,
    gradient: Vec<f64>,
    force: Vec<f64>,
    g: Vec<f64>,
    g_t: Vec<f64>,
    jacobian: Vec<f64>,
    phi: Vec<f64>,
    /// `Σ = 0` (ideal rows) and the multipliers of the last solve.
    sigma: Vec<f64>,
    lambda: Vec<f64>,
    /// For the divergence guard: `g(q_{k+1})`, the Jacobian there (scratch), `|Gᵢ(q_k)|₁`.
    g_next: Vec<f64>,
    jacobian_next: Vec<f64>,
    row_norms: Vec<f64>,
    factorizations: u32,
}

impl<const S: usize> RkScheme<IndexOneSparse, S> {
    /// Creates the method `tableau` with step size `h` for `model`, no Baumgarte term and no
    /// post-stabilization: numbers the unknowns of eq. 1.5, analyses the pattern and sizes every
    /// buffer, so that no step allocates.
    ///
    /// Fails with `BadStepSize` unless `h` is positive and finite, with `BadParameter` for an
    /// inconsistent tableau, and with `InvalidModel` for inconsistent body sizes or patterns.
    pub fn new<Model>(model: &Model, tableau: Tableau<S>, h: f64) -> Result<Self, StepError>
    where
        Model: SparseInertia + SparseHolonomicKinematics + ?Sized,
    {
        let (n, m) = (model.coordinate_count(), model.constraint_count());
        let jacobian_pattern = model.jacobian_pattern().to_vec();
        let saddle_point = SaddlePoint::new(
            n,
            model.body_sizes(),
            (m, &jacobian_pattern),
            (0, &[]),
            INDEX_ONE_MATRIX,
        )?;
        let entries = jacobian_pattern.len();
        let system = IndexOneSparse {
            baumgarte: Baumgarte::NONE,
            mass_blocks: vec![0.0; saddle_point.mass_value_count()],
            saddle_point,
            jacobian_pattern,
            gradient: vec![0.0; n],
            force: vec![0.0; n],
            g: vec![0.0; m],
            g_t: vec![0.0; m],
            jacobian: vec![0.0; entries],
            phi: vec![0.0; m],
            sigma: vec![0.0; m],
            lambda: vec![0.0; m],
            g_next: vec![0.0; m],
            jacobian_next: vec![0.0; entries],
            row_norms: vec![0.0; m],
            factorizations: 0,
        };
        Self::with_system(tableau, h, system)
    }

    /// Returns the multipliers `λ` of the last stage solved (the last stage of the last step;
    /// with the sign of eq. 1.1, the constraint force is `−Gᵀ λ`).
    pub fn stage_multipliers(&self) -> &[f64] {
        &self.system().lambda
    }
}

impl IndexOneSparse {
    /// Returns `InvalidModel` unless `model` has the sizes this system was built for.
    fn check_model<Model>(&self, model: &Model) -> Result<(), StepError>
    where
        Model: SparseInertia + SparseHolonomicKinematics + ?Sized,
    {
        check_built_for(
            model.body_sizes() == self.saddle_point.body_sizes(),
            "body sizes",
            model.body_sizes().len(),
        )?;
        let pattern = model.jacobian_pattern();
        check_built_for(
            model.constraint_count() == self.g.len() && pattern.len() == self.jacobian.len(),
            "constraint jacobian pattern",
            pattern.len(),
        )?;
        Ok(())
    }
}

impl IndexOneTier for IndexOneSparse {
    type Vector = Vec<f64>;

    fn zero_vector(&self) -> Vec<f64> {
        vec![0.0; self.gradient.len()]
    }

    fn baumgarte(&self) -> Baumgarte {
        self.baumgarte
    }

    fn set_baumgarte(&mut self, baumgarte: Baumgarte) {
        self.baumgarte = baumgarte;
    }

    fn take_factorizations(&mut self) -> u32 {
        std::mem::take(&mut self.factorizations)
    }
}

impl<Model> IndexOneSystem<Model> for IndexOneSparse
where
    Model:
        SparseInertia + SparsePotential + SparseHolonomicKinematics + SparseAppliedForces + ?Sized,
{
    fn acceleration(
        &mut self,
        model: &Model,
        (q, v): (&[f64], &[f64]),
        t: f64,
        t_err: f64,
        out: &mut [f64],
    ) -> Result<(), StepError> {
        model.mass_blocks(q, &mut self.mass_blocks);
        check_finite_slice(&self.mass_blocks, "mass matrix", t_err)?;
        // f = −∇V + f_a.
        model.potential_gradient(q, &mut self.gradient);
        model.applied_force(q, v, t, &mut self.force);
        for (f, grad) in self.force.iter_mut().zip(&self.gradient) {
            *f -= grad;
        }
        check_finite_slice(&self.force, "force", t_err)?;
        // φ = −bias − α1 (G v + g_t) − α0 g.
        model.constraints_and_jacobian(q, t, &mut self.g, &mut self.jacobian);
        model.constraint_acceleration_bias(q, v, t, &mut self.phi);
        self.phi.iter_mut().for_each(|phi| *phi = -*phi);
        if !self.baumgarte.is_none() {
            model.constraint_time_derivative(q, t, &mut self.g_t);
            for (&(row, col), value) in self.jacobian_pattern.iter().zip(&self.jacobian) {
                self.g_t[row] += value * v[col];
            }
            let (alpha1, alpha0) = (self.baumgarte.alpha1(), self.baumgarte.alpha0());
            for ((phi, g_dot), g) in self.phi.iter_mut().zip(&self.g_t).zip(&self.g) {
                *phi -= alpha1 * g_dot + alpha0 * g;
            }
        }
        check_finite_slice(&self.phi, "constraint acceleration bias", t_err)?;
        check_finite_slice(&self.jacobian, "constraint jacobian", t_err)?;

        let wrap = StepError::linear_algebra(INDEX_ONE_MATRIX, t_err);
        self.saddle_point
            .factor(&self.mass_blocks, &self.jacobian, &[], &self.sigma, &[])
            .map_err(&wrap)?;
        self.factorizations += 1;
        self.saddle_point
            .solve(
                (&self.force, &self.phi, &[]),
                (out, &mut self.lambda, &mut []),
            )
            .map_err(&wrap)?;
        check_finite_slice(&self.lambda, "multipliers", t_err)?;
        check_finite_slice(out, "acceleration", t_err)
    }

    fn stabilize(
        &mut self,
        _model: &Model,
        stabilization: PostStabilization,
        _metric: Metric,
        _state: (&mut [f64], &mut [f64]),
        _t: f64,
        _t_err: f64,
    ) -> Result<u32, StepError> {
        match stabilization {
            PostStabilization::None => Ok(0),
            _ => Err(StepError::Unsupported {
                integrator: NAME,
                requirement: "post-stabilization is implemented on the fixed-size tier only: \
                    use PostStabilization::None with Baumgarte's term on the sparse tier, or \
                    SPOOK or RATTLE, which keep the constraints without it",
            }),
        }
    }

    fn guard_rows(
        &mut self,
        model: &Model,
        (q, t): (&[f64], f64),
        (q_next, t_next): (&[f64], f64),
    ) -> (&[f64], &[f64], &[f64]) {
        model.constraints_and_jacobian(q, t, &mut self.g, &mut self.jacobian);
        model.constraints_and_jacobian(q_next, t_next, &mut self.g_next, &mut self.jacobian_next);
        self.row_norms.fill(0.0);
        for (&(row, _), value) in self.jacobian_pattern.iter().zip(&self.jacobian) {
            self.row_norms[row] += value.abs();
        }
        (&self.g, &self.row_norms, &self.g_next)
    }
}

impl<Model, const S: usize> SparseIntegrator<Model> for RkScheme<IndexOneSparse, S>
where
    Model: SparseConstantMass
        + SparsePotential
        + SparseHolonomicKinematics
        + SparseAppliedForces
        + ?Sized,
{
    fn step(&mut self, model: &Model, state: &mut DynState) -> Result<StepReport, StepError> {
        check_mass_is_constant(model.constant_mass(), NAME)?;
        check_sparse_parameters(model)?;
        check_dyn_state(state, model.coordinate_count())?;
        self.system().check_model(model)?;
        let report = self.advance(model, state.t, &mut state.q, &mut state.v)?;
        state.t += self.step_size();
        Ok(report)
    }
}
