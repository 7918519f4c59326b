//! SPOOK's linear algebra on the fixed-size tier: Schur complements with stack-allocated
//! Cholesky factors (eq. 30), or the elimination of the multipliers for a singular `M`.

use nalgebra::{SMatrix, SVector};

use super::factor::{Eq29Factor, Eq29Matrix};
use super::{
    check_regularization, holonomic_coefficients, nonholonomic_coefficient, restore_multipliers,
    save_multipliers, scheme, SpookOverrides, SpookRows, SpookScheme, SpookSystem,
};
use crate::error::StepError;
use crate::integrators::checks::{
    check_constant_mass, check_finite, check_parameters, check_state,
};
use crate::integrators::mass_factor::MassFactor;
use crate::integrators::{Integrator, StepReport};
use crate::linalg::mat_vec;
use crate::model::{
    AppliedForces, ConstantMass, GeneratedSolve, Holonomic, Inertia, Nonholonomic, Potential,
    Regularization, SpookCoefficients, SpookStep,
};
use crate::state::State;

/// The system of eq. 29 for `N` coordinates, `M` holonomic and `K` nonholonomic rows, in
/// fixed-size storage; see [`Spook`](super::Spook).
#[derive(Clone, Copy, Debug)]
pub struct SpookDense<const N: usize, const M: usize, const K: usize> {
    overrides: [Option<Regularization>; M],
    compliance_overrides: [Option<f64>; K],
    /// `M(q_k)`.
    mass: SMatrix<f64, N, N>,
    /// `G(q_k)`.
    jac: SMatrix<f64, M, N>,
    /// `A(q_k)`.
    nonholonomic: SMatrix<f64, K, N>,
    /// `G v_k`.
    jac_v: SVector<f64, M>,
    /// The diagonal of `Σ`.
    sigma: SVector<f64, M>,
    /// The diagonal of `Γ`.
    gamma: SVector<f64, K>,
    /// `r = M v_k − h ∇V + h f`.
    r: SVector<f64, N>,
    /// `s = w(t_k)`.
    s: SVector<f64, K>,
    /// `t = −(4/h) Υ g + Υ G v_k`.
    t: SVector<f64, M>,
    /// Whether `M` is constant (from the model's `Inertia::CONSTANT_MASS`).
    constant_mass: bool,
    /// `g(q_k)`, the solution `v_{k+1}`, `λ` of the last solve, `q_{k+1}`, and for the
    /// divergence guard `g(q_{k+1})` and the row norms `|Gᵢ(q_k)|₁`: the generic step's.
    step: SpookStep<N, M>,
    /// The nonholonomic multipliers `α` of the last solve.
    alpha: SVector<f64, K>,
    /// `Σ` and `Υ` for the generated step, valid for the step size `coefficients_h` (`NaN`
    /// before the first) and the rows' regularizations `coefficients_for`.
    pub(super) coefficients: SpookCoefficients<M>,
    coefficients_h: f64,
    coefficients_for: [Regularization; M],
    /// The multipliers of the last successful step.
    pub(super) multipliers: SVector<f64, M>,
    pub(super) nonholonomic_multipliers: SVector<f64, K>,
    pub(super) mass_factor: MassFactor<N>,
}

/// The diagonals of `Σ`, `Υ` (eq. 27) and `Γ` at one step size.
pub(super) struct RowCoefficients<const M: usize, const K: usize> {
    pub(super) sigma: SVector<f64, M>,
    pub(super) upsilon: SVector<f64, M>,
    pub(super) gamma: SVector<f64, K>,
}

impl<const N: usize, const M: usize, const K: usize> Default for SpookDense<N, M, K> {
    fn default() -> Self {
        SpookDense {
            overrides: [None; M],
            compliance_overrides: [None; K],
            mass: SMatrix::zeros(),
            jac: SMatrix::zeros(),
            nonholonomic: SMatrix::zeros(),
            jac_v: SVector::zeros(),
            sigma: SVector::zeros(),
            gamma: SVector::zeros(),
            r: SVector::zeros(),
            s: SVector::zeros(),
            t: SVector::zeros(),
            constant_mass: false,
            step: SpookStep::default(),
            alpha: SVector::zeros(),
            coefficients: SpookCoefficients::default(),
            coefficients_h: f64::NAN,
            coefficients_for: [Regularization::default(); M],
            multipliers: SVector::zeros(),
            nonholonomic_multipliers: SVector::zeros(),
            mass_factor: MassFactor::default(),
        }
    }
}

impl<const N: usize, const M: usize, const K: usize> SpookScheme<SpookDense<N, M, K>> {
    /// Creates a SPOOK stepper with step size `h` and the model's regularization on every row.
    pub fn new(h: f64) -> Result<Self, StepError> {
        scheme(h, SpookDense::default())
    }

    /// Overrides the regularization of every holonomic row.
    pub fn with_regularizations(
        mut self,
        regularizations: [Regularization; M],
    ) -> Result<Self, StepError> {
        for (row, regularization) in regularizations.into_iter().enumerate() {
            self = self.with_regularization(row, regularization)?;
        }
        Ok(self)
    }

    /// Returns the holonomic multipliers `λ` of the last successful step, as in eq. 29.
    ///
    /// `λ` absorbs one factor of `h` (§5): `Gᵀλ` is the constraint impulse over the step, so
    /// the constraint force is `Gᵀλ / h`, with the sign of `M q̈ = −∇V + f + Gᵀλ/h + Aᵀα/h`.
    ///
    /// **Accuracy.** `λ/h` is a **first-order** approximation of the exact multiplier over the
    /// step `[t_k, t_{k+1}]`: its error is `O(h)` (measured against the pendulum's rod tension
    /// at `t_{k+1}` in `tests/it/multipliers.rs`), on top of the model change the regularization
    /// makes (`ε`, `τ`). At coarse steps the stabilization's transient (`τ = 2h`) still shows.
    pub fn multipliers(&self) -> &SVector<f64, M> {
        &self.system.multipliers
    }

    /// Returns the nonholonomic multipliers `α` of the last successful step (eq. 24, 29): `Aᵀα`
    /// is the impulse of the nonholonomic rows over the step.
    pub fn nonholonomic_multipliers(&self) -> &SVector<f64, K> {
        &self.system.nonholonomic_multipliers
    }
}

impl<const N: usize, const M: usize, const K: usize> SpookScheme<SpookDense<N, M, K>> {
    /// The checks of [`Integrator::step`] (a constant `M`, the model's parameters), then the
    /// step `mechanism!` generated ([`generated_step`](Self::generated_step)) with the time
    /// advanced: `Ok(None)`, with `state` unchanged, where it does not run or declines, and the
    /// generic step must run.
    pub(super) fn checked_generated_step<Model>(
        &mut self,
        model: &Model,
        state: &mut State<N>,
    ) -> Result<Option<StepReport>, StepError>
    where
        Model: ConstantMass<N> + Holonomic<N, M>,
    {
        check_constant_mass::<Model, N>("SPOOK")?;
        check_parameters(model)?;
        // The generated step needs no check of q and v: one that is not finite makes its
        // outputs not finite, and it declines.
        if !state.t.is_finite() {
            return Ok(None);
        }
        let generated = self.generated_step(model, state);
        if generated.is_some() {
            state.t += self.h;
        }
        Ok(generated)
    }

    /// Runs the step `mechanism!` generated for the model ([`Holonomic::spook_step`]) and
    /// commits it as [`advance`](SpookScheme::advance) would; returns `None`, with `state`
    /// unchanged, where the model has no such step (or has nonholonomic rows), a row's
    /// regularization is invalid, the generated step declines or the divergence guard rejects
    /// its result: the generic step then runs and reports the error with its culprit.
    ///
    /// The generic step's parameter check comes first (in [`Integrator::step`]); its state
    /// check is not needed (a `q` or `v` that is not finite makes an output not finite, and
    /// the step declines), only a finite `t`. `Σ` and `Υ` are computed again only when the
    /// step size or a row's regularization changed.
    fn generated_step<Model: Holonomic<N, M>>(
        &mut self,
        model: &Model,
        state: &mut State<N>,
    ) -> Option<StepReport> {
        if K != 0 || !self.system.refresh_coefficients(model, self.h) {
            return None;
        }
        // The generated step runs the guard itself and writes q, v and λ only on success.
        let system = &mut self.system;
        let solved = model.spook_step(
            &mut state.q,
            &mut state.v,
            state.t,
            self.h,
            &system.coefficients,
            &self.guard,
            &mut system.multipliers,
        );
        (solved == GeneratedSolve::Solved).then_some(StepReport {
            factorizations: 1,
            newton_iterations: 0,
        })
    }
}

impl<const N: usize, const M: usize, const K: usize> SpookOverrides for SpookDense<N, M, K> {
    fn overrides_mut(&mut self) -> &mut [Option<Regularization>] {
        &mut self.overrides
    }
    fn compliance_overrides_mut(&mut self) -> &mut [Option<f64>] {
        &mut self.compliance_overrides
    }
}

impl<const N: usize, const M: usize, const K: usize> SpookDense<N, M, K> {
    /// Brings `Σ`, `Υ` of eq. 27 and `4/h` up to date for step size `h` and each row's
    /// regularization (its override, else the model's): returns `true` at once if neither
    /// changed bit for bit since the last call, else computes them again
    /// ([`recompute_coefficients`](Self::recompute_coefficients)).
    #[inline(always)]
    pub(super) fn refresh_coefficients<Model: Holonomic<N, M> + ?Sized>(
        &mut self,
        model: &Model,
        h: f64,
    ) -> bool {
        let unchanged = self.coefficients_h.to_bits() == h.to_bits()
            && (0..M).all(|row| {
                let regularization =
                    self.overrides[row].unwrap_or_else(|| model.regularization(row));
                regularization.same_bits(&self.coefficients_for[row])
            });
        unchanged || self.recompute_coefficients(model, h)
    }

    /// Computes `Σ`, `Υ` and `4/h` for step size `h` and each row's regularization; returns
    /// `false` if a row's regularization is invalid (the generic step reports it). Out of
    /// line: it runs when the step size or a regularization changes, not every step.
    #[cold]
    #[inline(never)]
    fn recompute_coefficients<Model: Holonomic<N, M> + ?Sized>(
        &mut self,
        model: &Model,
        h: f64,
    ) -> bool {
        let mut regularizations = [Regularization::default(); M];
        for (row, regularization) in regularizations.iter_mut().enumerate() {
            *regularization = self.overrides[row].unwrap_or_else(|| model.regularization(row));
            if check_regularization(regularization).is_err() {
                self.coefficients_h = f64::NAN;
                return false;
            }
        }
        self.coefficients = SpookCoefficients::new(h, &regularizations);
        self.coefficients_for = regularizations;
        self.coefficients_h = h;
        true
    }

    /// Returns the diagonals of `Σ`, `Υ` (eq. 27) and `Γ` for step size `h` and each row's
    /// regularization (its override, else the model's), as the step forms them; fails as the
    /// step does on an invalid one.
    pub(super) fn coefficients<Model: Holonomic<N, M> + Nonholonomic<N, K> + ?Sized>(
        &self,
        model: &Model,
        h: f64,
    ) -> Result<RowCoefficients<M, K>, StepError> {
        let (mut sigma, mut upsilon) = (SVector::<f64, M>::zeros(), SVector::<f64, M>::zeros());
        for row in 0..M {
            let regularization = self.overrides[row].unwrap_or_else(|| model.regularization(row));
            (sigma[row], upsilon[row]) = holonomic_coefficients(&regularization, h)?;
        }
        let mut gamma = SVector::<f64, K>::zeros();
        for row in 0..K {
            let compliance = self.compliance_overrides[row]
                .unwrap_or_else(|| model.nonholonomic_compliance(row));
            gamma[row] = nonholonomic_coefficient(compliance, h)?;
        }
        Ok(RowCoefficients {
            sigma,
            upsilon,
            gamma,
        })
    }

    /// Factors the matrix of eq. 29 at the last evaluation (`M`'s factor reused while `M` is
    /// unchanged); returns the factor and the number of factorizations it took.
    fn factor(&mut self, time: f64) -> Result<(Eq29Factor<N, M, K>, u32), StepError> {
        Eq29Factor::new(
            &mut self.mass_factor,
            Eq29Matrix {
                mass: &self.mass,
                constant_mass: self.constant_mass,
                jac: &self.jac,
                a: &self.nonholonomic,
                sigma: &self.sigma,
                gamma: &self.gamma,
            },
            time,
        )
    }
}

impl<Model, const N: usize, const M: usize, const K: usize> SpookSystem<Model>
    for SpookDense<N, M, K>
where
    Model: Inertia<N> + Potential<N> + Holonomic<N, M> + Nonholonomic<N, K> + AppliedForces<N>,
{
    fn evaluate(
        &mut self,
        model: &Model,
        q: &[f64],
        v: &[f64],
        time: f64,
        h: f64,
    ) -> Result<(), StepError> {
        let q = SVector::<f64, N>::from_column_slice(q);
        let v = SVector::<f64, N>::from_column_slice(v);
        self.constant_mass = Model::CONSTANT_MASS;
        model.mass_matrix(&q, &mut self.mass);
        let mut grad = SVector::<f64, N>::zeros();
        model.potential_gradient(&q, &mut grad);
        check_finite(&grad, "gradient", time)?;
        let mut force = SVector::<f64, N>::zeros();
        model.applied_force(&q, &v, time, &mut force);
        check_finite(&force, "applied force", time)?;
        model.constraints_and_jacobian(&q, time, &mut self.step.g, &mut self.jac);
        check_finite(&self.step.g, "constraints", time)?;
        check_finite(&self.jac, "constraint jacobian", time)?;
        model.nonholonomic_matrix(&q, &mut self.nonholonomic);
        check_finite(&self.nonholonomic, "nonholonomic matrix A", time)?;
        model.nonholonomic_drive(time, &mut self.s);
        check_finite(&self.s, "nonholonomic drive w", time)?;
        self.jac_v = mat_vec(&self.jac, &v);
        self.r = mat_vec(&self.mass, &v) - grad * h + force * h;
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
            g: self.step.g.as_slice(),
            jac_v: self.jac_v.as_slice(),
            sigma: self.sigma.as_mut_slice(),
            rhs: self.t.as_mut_slice(),
            gamma: self.gamma.as_mut_slice(),
            overrides: &self.overrides,
            compliance_overrides: &self.compliance_overrides,
        }
    }

    fn solve(&mut self, model: &Model, time: f64) -> Result<u32, StepError> {
        if K == 0
            && self.constant_mass
            && model.spook_solve(
                &self.mass,
                &self.jac,
                &self.r,
                &self.sigma,
                &self.t,
                &mut self.step.v,
                &mut self.step.lambda,
            ) == GeneratedSolve::Solved
        {
            self.alpha = SVector::zeros();
            return Ok(1);
        }
        let (factor, factorizations) = self.factor(time)?;
        let (v, alpha, lambda) = factor.solve(&self.r, &self.s, &self.t);
        (self.step.v, self.alpha, self.step.lambda) = (v, alpha, lambda);
        Ok(factorizations)
    }

    fn solution(&self) -> (&[f64], &[f64], &[f64]) {
        (
            self.step.v.as_slice(),
            self.step.lambda.as_slice(),
            self.alpha.as_slice(),
        )
    }

    fn configuration_after(
        &mut self,
        model: &Model,
        q: &[f64],
        h: f64,
        t_next: f64,
        guarded: bool,
    ) {
        self.step.q = SVector::<f64, N>::from_column_slice(q) + self.step.v * h;
        if guarded {
            model.constraints(&self.step.q, t_next, &mut self.step.g_next);
            for row in 0..M {
                self.step.row_norms[row] = self.jac.row(row).lp_norm(1);
            }
        }
    }

    fn next_configuration(&self) -> &[f64] {
        self.step.q.as_slice()
    }

    fn guard_rows(&self) -> (&[f64], &[f64], &[f64]) {
        (
            self.step.g.as_slice(),
            self.step.row_norms.as_slice(),
            self.step.g_next.as_slice(),
        )
    }

    fn accept(&mut self) {
        self.multipliers = self.step.lambda;
        self.nonholonomic_multipliers = self.alpha;
    }
}

impl<Model, const N: usize, const M: usize, const K: usize> Integrator<Model, N>
    for SpookScheme<SpookDense<N, M, K>>
where
    Model: ConstantMass<N> + Potential<N> + Holonomic<N, M> + Nonholonomic<N, K> + AppliedForces<N>,
{
    crate::checkpoint::carried_access!();

    fn step(&mut self, model: &Model, state: &mut State<N>) -> Result<StepReport, StepError> {
        if let Some(report) = self.checked_generated_step(model, state)? {
            return Ok(report);
        }
        check_state(state)?;
        let report = self.advance(
            model,
            state.t,
            state.q.as_mut_slice(),
            state.v.as_mut_slice(),
        )?;
        state.t += self.h;
        Ok(report)
    }
}

/// SPOOK carries only its last multipliers: the next step solves for them afresh from `q_k`,
/// `v_k`, but a run's multiplier columns show them.
impl<const N: usize, const M: usize, const K: usize> crate::checkpoint::CarriedState
    for SpookScheme<SpookDense<N, M, K>>
{
    fn identity(&self) -> crate::checkpoint::IntegratorIdentity {
        let overrides = format!(
            "{:?}{:?}",
            self.system.overrides, self.system.compliance_overrides
        );
        self.spook_identity(&format!("Spook<{N}, {M}, {K}>"), &overrides)
    }

    fn save(&self, out: &mut crate::checkpoint::Carried) {
        save_multipliers(
            out,
            self.system.multipliers.as_slice(),
            self.system.nonholonomic_multipliers.as_slice(),
        );
    }

    fn restore(
        &mut self,
        from: &crate::checkpoint::Carried,
    ) -> Result<(), crate::checkpoint::CheckpointError> {
        let system = &mut self.system;
        restore_multipliers(
            from,
            system.multipliers.as_mut_slice(),
            system.nonholonomic_multipliers.as_mut_slice(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::Spook;
    use crate::error::StepError;
    use crate::model::{Regularization, Relaxation};

    #[test]
    fn rejects_bad_step_sizes_and_regularizations() {
        for h in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let err = Spook::<4, 2>::new(h).unwrap_err();
            assert!(matches!(err, StepError::BadStepSize { h: x } if x.to_bits() == h.to_bits()));
        }
        let spook = Spook::<4, 2>::new(0.01).unwrap();
        let err = spook
            .with_regularization(2, Regularization::default())
            .unwrap_err();
        assert!(matches!(err, StepError::BadParameter { name: "row", .. }));
        let negative = Regularization {
            epsilon: -1.0,
            tau: Relaxation::Steps(2.0),
        };
        let err = spook.with_regularization(0, negative).unwrap_err();
        assert!(matches!(
            err,
            StepError::BadParameter {
                name: "epsilon",
                ..
            }
        ));
    }
}
