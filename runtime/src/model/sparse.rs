//! Capability traits of the sparse tier: models whose sizes are known when they are constructed.
//!
//! A chain of 10 000 pendula or a ladder of 1000 rods has tens of thousands of coordinates; one
//! dense `N × N` matrix of it is gigabytes. Models of this tier therefore never hand over a dense
//! matrix: vectors are slices of the length the model reports, the mass matrix is block
//! diagonal (one block per body, in coordinate order), and every Jacobian is a sparsity pattern
//! fixed for the model's lifetime plus values written in the pattern's order. Integrators read
//! the patterns once, when they are constructed for a model, and build their factorizations'
//! symbolic analysis from them; each step then only asks for values.
//!
//! The traits mirror the fixed-size ones ([`Inertia`](super::Inertia),
//! [`Potential`](super::Potential), [`Holonomic`](super::Holonomic),
//! [`Nonholonomic`](super::Nonholonomic), [`AppliedForces`](super::AppliedForces)); the
//! integrators that serve both tiers share their scheme and differ only in the linear algebra
//! behind [`LinearSolver`](crate::linalg::LinearSolver).

use super::{Regularization, DEFAULT_GAMMA};

/// Coordinates grouped into bodies, with a block-diagonal mass matrix.
pub trait SparseInertia {
    /// Returns the number of coordinates `n`.
    fn coordinate_count(&self) -> usize;

    /// Returns the number of coordinates of each body, in coordinate order (they add up to `n`).
    ///
    /// Body `b` owns the consecutive coordinates after those of bodies `0..b`, and its block of
    /// the mass matrix is the only one coupling them. Integrators number the unknowns of their
    /// linear systems body by body.
    fn body_sizes(&self) -> &[usize];

    /// Returns whether `M` does not depend on `q`.
    fn constant_mass(&self) -> bool;

    /// Writes the diagonal blocks of `M(q)`, each dense and row-major, concatenated in body
    /// order (`Σ sᵦ²` values).
    fn mass_blocks(&self, q: &[f64], blocks: &mut [f64]);

    /// Returns the kinetic energy `½ vᵀ M(q) v`.
    fn kinetic_energy(&self, q: &[f64], v: &[f64]) -> f64;

    /// Returns the name and value of the model's first parameter that is not finite, if any,
    /// so that an integrator reports the culprit instead of its effect (a non-finite mass
    /// matrix or gradient). `None` by default.
    fn non_finite_parameter(&self) -> Option<(&'static str, f64)> {
        None
    }

    /// Returns the family name, index and value of the model's first parameter family member
    /// (`m[i]` of `parameters: { m[N] = 1.0 }`) that is not finite, if any, so that an
    /// integrator names the member ([`StepError::BadParameterMember`](crate::StepError::BadParameterMember))
    /// as it names a scalar parameter. `None` by default; every sparse-tier integrator asks
    /// before [`parameter_violation`](Self::parameter_violation).
    fn non_finite_member(&self) -> Option<(&'static str, usize, f64)> {
        None
    }

    /// Returns the name and value of the model's first parameter that is not valid, with what
    /// it must satisfy: by default the first non-finite one
    /// ([`non_finite_parameter`](Self::non_finite_parameter)); a model with a pair-sum cutoff
    /// also reports `on < 0` or `off ≤ on` ([`crate::switch::violation`]), and every generated
    /// family model a parameter family whose length is no longer the size `new` built it with
    /// (its `Vec` replaced or resized), before a kernel indexes it. Every sparse-tier
    /// integrator asks before a step and returns
    /// [`StepError::BadParameter`](crate::StepError::BadParameter) with it.
    fn parameter_violation(&self) -> Option<(&'static str, f64, &'static str)> {
        self.non_finite_parameter()
            .map(|(name, value)| (name, value, "a model parameter must be finite"))
    }
}

/// A block-diagonal mass matrix that does not depend on the configuration: what every
/// sparse-tier integrator needs, since each freezes `M` over a step (the sparse tier's
/// [`ConstantMass`](super::ConstantMass)).
///
/// `mechanism!` implements it exactly when the family model's mass matrix is constant
/// ([`SparseInertia::constant_mass`] true); a hand-written model implements it when its blocks
/// do not depend on `q` (the integrators still refuse one whose `constant_mass` says otherwise,
/// with [`StepError::Unsupported`](crate::StepError::Unsupported)).
#[diagnostic::on_unimplemented(
    message = "`{Self}` has a configuration-dependent mass matrix, which no sparse-tier integrator steps",
    label = "the mass matrix of `{Self}` depends on the coordinates",
    note = "every sparse-tier integrator freezes the mass matrix over a step (no velocity terms ∂T/∂q − Ṁv); a configuration-dependent one steps on the fixed-size tier (a model without families) with `livens`, `rk` or `dlda_midpoint` (`integrators: [..]` of `mechanism!`); a family of rigid-body orientations has a constant one as `orientations: {{ r[N]: matrix }}` (a quaternion's depends on `q`)"
)]
pub trait SparseConstantMass: SparseInertia {}

/// A potential energy `V(q)` and its gradient.
pub trait SparsePotential {
    /// Returns `V(q)`.
    fn potential(&self, q: &[f64]) -> f64;

    /// Writes `∇V(q)` into `grad`.
    fn potential_gradient(&self, q: &[f64], grad: &mut [f64]);
}

/// Holonomic constraints `g(q, t) = 0` with a sparse Jacobian `G = ∂g/∂q`.
pub trait SparseHolonomic {
    /// Returns the number of constraint rows `m`.
    fn constraint_count(&self) -> usize;

    /// Returns the structural nonzeros of `G` as `(row, coordinate)` pairs, each once; the
    /// values of [`constraints_and_jacobian`](Self::constraints_and_jacobian) come in this
    /// order. The pattern is fixed for the model's lifetime.
    fn jacobian_pattern(&self) -> &[(usize, usize)];

    /// Writes `g(q, t)` into `g` and the values of `G(q, t)` on its pattern into `jac`.
    fn constraints_and_jacobian(&self, q: &[f64], t: f64, g: &mut [f64], jac: &mut [f64]);

    /// Returns row `row`'s default SPOOK regularization; integrators may override it.
    fn regularization(&self, _row: usize) -> Regularization {
        Regularization::default()
    }
}

/// Nonholonomic rows linear in the velocities, `A(q) v = w(t)`, with a sparse `A`.
///
/// Every method has a default that describes no rows, so a model without such rows implements
/// it with an empty `impl`.
pub trait SparseNonholonomic {
    /// Returns the number of nonholonomic rows `k`.
    fn nonholonomic_count(&self) -> usize {
        0
    }

    /// Returns the structural nonzeros of `A` as `(row, coordinate)` pairs, each once.
    fn nonholonomic_pattern(&self) -> &[(usize, usize)] {
        &[]
    }

    /// Writes the values of `A(q)` on its pattern into `a`.
    fn nonholonomic_matrix(&self, _q: &[f64], _a: &mut [f64]) {}

    /// Writes the driving term `w(t)` into `w`.
    fn nonholonomic_drive(&self, _t: f64, _w: &mut [f64]) {}

    /// Returns row `row`'s SPOOK compliance `γ`; integrators may override it.
    fn nonholonomic_compliance(&self, _row: usize) -> f64 {
        DEFAULT_GAMMA
    }
}

/// Non-potential generalized forces `f(q, v, t)` (dissipation and applied forces); zero by
/// default, so a model without them implements it with an empty `impl`.
pub trait SparseAppliedForces {
    /// Writes `f(q, v, t)` into `out`.
    fn applied_force(&self, _q: &[f64], _v: &[f64], _t: f64, out: &mut [f64]) {
        out.fill(0.0);
    }
}

/// Time derivatives of sparse holonomic constraints, for index reduction (Ascher et al. 1995,
/// eq. 1.5): the sparse tier's [`HolonomicKinematics`](super::HolonomicKinematics).
pub trait SparseHolonomicKinematics: SparseHolonomic {
    /// Writes `g_t = ∂g/∂t` (zero for scleronomic constraints), so that `ġ = G v + g_t`.
    fn constraint_time_derivative(&self, q: &[f64], t: f64, out: &mut [f64]);

    /// Writes `(G v)_q v + 2 G_t v + g_tt`, so that `g̈ = G q̈ + (this)`: for a scleronomic row,
    /// `vᵀ Hess gᵢ v`.
    fn constraint_acceleration_bias(&self, q: &[f64], v: &[f64], t: f64, out: &mut [f64]);
}

/// The Hessian `Hess V(q)` of a [`SparsePotential`] on a sparsity pattern fixed for the
/// model's lifetime, for the linearly implicit integrators (Z&Ss, Z&S) and the sparse
/// linearization (`linearization::sparse_modes`).
///
/// The pattern lists each structural nonzero once, as `(i, j)` in either triangle: an entry
/// stands for both `H_ij` and `H_ji`, and a pair must not be listed twice (its values would
/// add up). Values are written in the pattern's order.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no `SparsePotentialHessian`",
    label = "the model lacks the potential's Hessian",
    note = "a `mechanism!` model with families has it when compiled for `zs`, `zss` or `zss_stiff`, or with `derivatives: [hessians]` (which the sparse linearization, `mechanism::runtime::linearization::sparse_modes`, needs) or `derivatives: [step_jacobians]` (the sparse step Jacobians)"
)]
pub trait SparsePotentialHessian: SparsePotential {
    /// Returns the structural nonzeros of `Hess V`, each unordered pair once.
    fn hessian_pattern(&self) -> &[(usize, usize)];

    /// Writes the values of `Hess V(q)` on its pattern into `hess`.
    fn potential_hessian(&self, q: &[f64], hess: &mut [f64]);

    /// Writes `∇V(q)` and `Hess V(q)` together; override to share work.
    fn potential_gradient_hessian(&self, q: &[f64], grad: &mut [f64], hess: &mut [f64]) {
        self.potential_gradient(q, grad);
        self.potential_hessian(q, hess);
    }
}

/// The third derivative of the potential contracted twice, `(a·V‴(q)·a)_i =
/// Σ_{j,k} ∂³V/∂q_i∂q_j∂q_k a_j a_k = ∂_i (aᵀ Hess V(q) a)` with `a` held fixed, as a vector:
/// full Z&S needs nothing more of `V‴` (Tao–Owhadi 2014, eq. 3), so no tensor is stored.
pub trait SparsePotentialThirdDerivative: SparsePotentialHessian {
    /// Writes `a·V‴(q)·a` into `out`.
    fn potential_third_contraction(&self, q: &[f64], a: &[f64], out: &mut [f64]);
}

/// The weighted sum of the constraint Hessians, `Σ_k λ_k Hess g_k(q, t)`, on one pattern fixed
/// for the model's lifetime: never `m` separate Hessians.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no `SparseHolonomicHessians`",
    label = "the model lacks its rows' Hessians",
    note = "a `mechanism!` model with families has them with `derivatives: [hessians]`, which the sparse linearization (`mechanism::runtime::linearization::sparse_equilibrium`, `sparse_modes`) needs"
)]
///
/// The pattern is the union of the patterns of the `Hess g_k`, each unordered pair once in
/// either triangle (as for [`SparsePotentialHessian`]).
pub trait SparseHolonomicHessians: SparseHolonomic {
    /// Returns the structural nonzeros of `Σ_k λ_k Hess g_k`, each unordered pair once.
    fn constraint_hessian_pattern(&self) -> &[(usize, usize)];

    /// Writes the values of `Σ_k weights_k Hess g_k(q, t)` on its pattern into `hess`.
    fn weighted_constraint_hessian(&self, q: &[f64], t: f64, weights: &[f64], hess: &mut [f64]);
}

/// The penalized potential `W(q) = V(q) + ½ ω² |g(q)|²` of a sparse-tier model (Tao–Owhadi
/// 2014, eq. 7), the sparse twin of [`PenalizedPotential`](super::PenalizedPotential);
/// [`Penalized`](super::Penalized) turns it into a [`SparsePotential`].
pub trait SparsePenalizedPotential {
    /// Returns `W(q)`.
    fn penalized_potential(&self, omega: f64, q: &[f64]) -> f64;

    /// Writes `∇W(q)` into `grad`.
    fn penalized_potential_gradient(&self, omega: f64, q: &[f64], grad: &mut [f64]);
}

/// The Hessian of the penalized potential on a fixed pattern (conventions of
/// [`SparsePotentialHessian`]), the sparse twin of
/// [`PenalizedHessian`](super::PenalizedHessian).
pub trait SparsePenalizedHessian: SparsePenalizedPotential {
    /// Returns the structural nonzeros of `Hess W`, each unordered pair once.
    fn penalized_hessian_pattern(&self) -> &[(usize, usize)];

    /// Writes the values of `Hess W(q)` on its pattern into `hess`.
    fn penalized_potential_hessian(&self, omega: f64, q: &[f64], hess: &mut [f64]);

    /// Writes `∇W(q)` and `Hess W(q)` together; override to share work.
    fn penalized_potential_gradient_hessian(
        &self,
        omega: f64,
        q: &[f64],
        grad: &mut [f64],
        hess: &mut [f64],
    ) {
        self.penalized_potential_gradient(omega, q, grad);
        self.penalized_potential_hessian(omega, q, hess);
    }
}

/// `a·W‴(q)·a` of the penalized potential as a vector, the sparse twin of
/// [`PenalizedThirdDerivative`](super::PenalizedThirdDerivative).
pub trait SparsePenalizedThirdDerivative: SparsePenalizedHessian {
    /// Writes `a·W‴(q)·a` into `out`.
    fn penalized_potential_third_contraction(
        &self,
        omega: f64,
        q: &[f64],
        a: &[f64],
        out: &mut [f64],
    );
}

/// The Hessian of the penalty alone, `Hess(½ ω² |g|²) = ω² (Gᵀ G + Σ_k g_k Hess g_k)`, on a
/// fixed pattern (conventions of [`SparsePotentialHessian`]); the sparse twin of
/// [`PenaltyHessian`](crate::PenaltyHessian). With [`SparsePenalizedHessian`] it makes
/// [`Penalized<Model>`](super::Penalized) a [`SparseSplitPotential`] with `ε⁻¹ V1 = ½ ω² |g|²`.
/// Scleronomic constraints only, like the penalty itself.
pub trait SparsePenaltyHessian {
    /// Returns the structural nonzeros of the penalty Hessian, each unordered pair once.
    fn penalty_hessian_pattern(&self) -> &[(usize, usize)];

    /// Writes the values of `Hess(½ ω² |g(q)|²)` on its pattern into `hess`.
    fn penalty_hessian(&self, omega: f64, q: &[f64], hess: &mut [f64]);
}

/// A potential `V = V0 + ε⁻¹ V1` split into a soft and a stiff part, the sparse twin of
/// [`SplitPotential`](crate::SplitPotential): [`SparsePotential`] is the total `V`, this adds
/// the Hessian of the stiff part on a fixed pattern (conventions of
/// [`SparsePotentialHessian`]), for stiff Z&Ss.
pub trait SparseSplitPotential: SparsePotential {
    /// Returns the structural nonzeros of `ε⁻¹ Hess V1`, each unordered pair once.
    fn stiff_hessian_pattern(&self) -> &[(usize, usize)];

    /// Writes the values of `ε⁻¹ Hess V1(q)` on its pattern into `hess`.
    fn stiff_hessian(&self, q: &[f64], hess: &mut [f64]);

    /// Writes `∇V(q)` (total) and `ε⁻¹ Hess V1(q)` together; override to share work.
    fn potential_gradient_stiff_hessian(&self, q: &[f64], grad: &mut [f64], hess: &mut [f64]) {
        self.potential_gradient(q, grad);
        self.stiff_hessian(q, hess);
    }
}

/// The penalized model has the constrained model's mass matrix.
#[diagnostic::do_not_recommend]
impl<Model: SparseConstantMass> SparseConstantMass for super::Penalized<Model> {}

/// The penalized model on the sparse tier: the constrained model's inertia, with `ω` checked
/// as one of its parameters.
impl<Model: SparseInertia> SparseInertia for super::Penalized<Model> {
    fn coordinate_count(&self) -> usize {
        self.model.coordinate_count()
    }
    fn body_sizes(&self) -> &[usize] {
        self.model.body_sizes()
    }
    fn constant_mass(&self) -> bool {
        self.model.constant_mass()
    }
    fn mass_blocks(&self, q: &[f64], blocks: &mut [f64]) {
        self.model.mass_blocks(q, blocks);
    }
    fn kinetic_energy(&self, q: &[f64], v: &[f64]) -> f64 {
        self.model.kinetic_energy(q, v)
    }
    fn non_finite_parameter(&self) -> Option<(&'static str, f64)> {
        if !self.omega.is_finite() {
            return Some(("omega", self.omega));
        }
        self.model.non_finite_parameter()
    }
    fn non_finite_member(&self) -> Option<(&'static str, usize, f64)> {
        self.model.non_finite_member()
    }
    fn parameter_violation(&self) -> Option<(&'static str, f64, &'static str)> {
        if !self.omega.is_finite() {
            return Some(("omega", self.omega, "a model parameter must be finite"));
        }
        self.model.parameter_violation()
    }
}

/// `V = W`, the penalized potential.
impl<Model: SparsePenalizedPotential> SparsePotential for super::Penalized<Model> {
    fn potential(&self, q: &[f64]) -> f64 {
        self.model.penalized_potential(self.omega, q)
    }
    fn potential_gradient(&self, q: &[f64], grad: &mut [f64]) {
        self.model.penalized_potential_gradient(self.omega, q, grad);
    }
}

/// `Hess V = Hess W`.
impl<Model: SparsePenalizedHessian> SparsePotentialHessian for super::Penalized<Model> {
    fn hessian_pattern(&self) -> &[(usize, usize)] {
        self.model.penalized_hessian_pattern()
    }
    fn potential_hessian(&self, q: &[f64], hess: &mut [f64]) {
        self.model.penalized_potential_hessian(self.omega, q, hess);
    }
    fn potential_gradient_hessian(&self, q: &[f64], grad: &mut [f64], hess: &mut [f64]) {
        self.model
            .penalized_potential_gradient_hessian(self.omega, q, grad, hess);
    }
}

/// `a·V‴·a = a·W‴·a`.
impl<Model: SparsePenalizedThirdDerivative> SparsePotentialThirdDerivative
    for super::Penalized<Model>
{
    fn potential_third_contraction(&self, q: &[f64], a: &[f64], out: &mut [f64]) {
        self.model
            .penalized_potential_third_contraction(self.omega, q, a, out);
    }
}

/// `W = V + ½ ω² |g|²` with `V0 = V` soft and `ε⁻¹ V1 = ½ ω² |g|²` stiff.
impl<Model> SparseSplitPotential for super::Penalized<Model>
where
    Model: SparsePenalizedPotential + SparsePenaltyHessian,
{
    fn stiff_hessian_pattern(&self) -> &[(usize, usize)] {
        self.model.penalty_hessian_pattern()
    }
    fn stiff_hessian(&self, q: &[f64], hess: &mut [f64]) {
        self.model.penalty_hessian(self.omega, q, hess);
    }
}

/// The stiff part's third derivative contracted twice, `a·(ε⁻¹ V1)‴(q)·a`, the sparse twin of
/// [`StiffThirdDerivative`](crate::StiffThirdDerivative): what the step Jacobian of
/// [`SparseZhangSkeelStiff`](crate::SparseZhangSkeelStiff) needs, whose acceleration
/// `−(M + βh² ε⁻¹ Hess V1)⁻¹ ∇V` holds `V1‴` along `a`. [`Penalized<Model>`](super::Penalized)
/// implements it as `a·W‴·a − a·V‴·a` (the penalty's part of `W = V + ½ ω² |g|²`) for a model
/// with both contractions (`mechanism!` generates them for `zss_stiff` with
/// `derivatives: [step_jacobians]`).
pub trait SparseStiffThirdDerivative: SparseSplitPotential + SparsePotentialHessian {
    /// Adds `scale · a·(ε⁻¹ V1)‴(q)·a` to `out`, with `scratch` (as many values as
    /// coordinates) for the contractions it takes.
    fn add_stiff_third_contraction(
        &self,
        q: &[f64],
        a: &[f64],
        scale: f64,
        scratch: &mut [f64],
        out: &mut [f64],
    );
}

impl<Model> SparseStiffThirdDerivative for super::Penalized<Model>
where
    Model: SparsePenalizedThirdDerivative + SparsePenaltyHessian + SparsePotentialThirdDerivative,
{
    fn add_stiff_third_contraction(
        &self,
        q: &[f64],
        a: &[f64],
        scale: f64,
        scratch: &mut [f64],
        out: &mut [f64],
    ) {
        self.model
            .penalized_potential_third_contraction(self.omega, q, a, scratch);
        out.iter_mut()
            .zip(&*scratch)
            .for_each(|(o, w)| *o += scale * w);
        self.model.potential_third_contraction(q, a, scratch);
        out.iter_mut()
            .zip(&*scratch)
            .for_each(|(o, v)| *o -= scale * v);
    }
}

/// The penalized model's parameters are the constrained model's (`ω` is the wrapper's own
/// field, not one of them).
impl<Model: super::SparseParameters> super::SparseParameters for super::Penalized<Model> {
    fn parameter_count(&self) -> usize {
        self.model.parameter_count()
    }
    fn parameter_name(&self, j: usize) -> Option<(&'static str, Option<usize>)> {
        self.model.parameter_name(j)
    }
    fn parameter_values(&self) -> Vec<f64> {
        self.model.parameter_values()
    }
    fn set_parameter_values(&mut self, values: &[f64]) -> Result<(), crate::StepError> {
        self.model.set_parameter_values(values)
    }
}
