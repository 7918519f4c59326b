//! Gonzalez discrete gradients (Kinon–Betsch–Livens, eq. 26–29) and their Newton Jacobians.
//!
//! A discrete gradient `D̄f(x, y)` replaces `∇f` in an implicit step so that the directionality
//! condition `D̄f(x, y)·(y − x) = f(y) − f(x)` (eq. 27) holds exactly; that is what makes the
//! energy–momentum schemes of Gonzalez and Kinon–Betsch conserve energy to round-off.
//!
//! [`gonzalez`] and [`gonzalez_jacobian`] are the kernels on plain values. The traits apply them
//! to a model's potential, constraints and kinetic energy and are implemented for every model
//! with the base capability ([`Potential`], [`PotentialHessian`], [`Holonomic`],
//! [`HolonomicHessians`], [`InertiaGradient`](crate::model::InertiaGradient)), so no model implements them by hand.
//!
//! # Safe limit
//!
//! With `v = y − x` and `c = f(y) − f(x) − ∇f(z)·v`, eq. 26 adds `c v / |v|²` to `∇f(z)`.
//! Analytically `c = O(|v|³)` (midpoint rule), so the correction is `O(|v|²)`; numerically `c` is
//! a difference of nearly equal numbers and, for short steps, pure round-off, which the division
//! by `|v|²` would amplify without bound (and `|v|² = 0` gives NaN). The correction is therefore
//! dropped — the result is `∇f(z)` — when
//!
//! * `|c| ≤ (N + 4) ε S` with `S = |f(x)| + |f(y)| + Σᵢ |∇ᵢf(z)| (|xᵢ| + |yᵢ|)`: `S` bounds the
//!   magnitude of the terms whose rounding makes up `c` — the two values of `f` (including the
//!   cancellation inside their evaluation, which for a smooth `f` is of order `Σ |∇ᵢf| |xᵢ|`,
//!   e.g. `x² + y² − l²` on the circle) and the `N` products of `∇f(z)·v` — and `N + 4` counts the
//!   roundings; below that bound `c` carries no information, so dropping it costs nothing beyond
//!   the round-off already in `f(y) − f(x)`; or
//! * `|v|²` is zero or subnormal (`< f64::MIN_POSITIVE`), where `c / |v|²` cannot be formed.
//!
//! The criterion looks at the computed `c` rather than at `|v|` alone, so it is unit-free and
//! never drops a correction that is resolved: whenever the correction is kept, `|c|` exceeds
//! twice its round-off, so the computed correction is within a factor of about two of the exact
//! `O(|v|²)` one — consistency holds without noise amplification, and the term `c/|v|²` of the
//! Jacobian stays `O(|v|)`. The price is a directionality defect of at most `(N + 4) ε S` in
//! steps where the correction is dropped. The Jacobians drop round-off the same way, term by term
//! (see [`gonzalez_jacobian`]).
//!
//! Finally, if every input is finite but the formula overflows (possible only for inconsistent
//! arguments, e.g. `f(y) − f(x)` far larger than `∇f` allows), `∇f(z)` is returned, so the result
//! is finite for finite input. Non-finite input propagates, so that integrators can report it.
//!
//! # Masks: discrete gradients that respect cyclic coordinates
//!
//! Eq. 26 puts its correction along the whole step `v = y − x`, so `D̄f` has a component along
//! every coordinate that moved — also along coordinates `f` does not depend on. For the spring
//! pendulum in spherical coordinates (§6.2) neither `T` nor `V` depends on the azimuth `φ`, whose
//! conjugate momentum `p_φ` is the angular momentum about the vertical; the `φ` row of eq. 30b
//! then reads `p_φ^{n+1} − p_φ^n = h (D̄₁T − D̄V)_φ`, which is not zero with eq. 26 as it stands
//! (the correction `c Δφ/|v|²`), and `p_φ` drifts by a truncation error. Gonzalez (*Time
//! integration and discrete Hamiltonian systems*, J. Nonlinear Sci. 6, 1996, §4) requires a
//! discrete gradient to respect the symmetry (be equivariant under the group action) for the
//! scheme to conserve the corresponding momentum map; for a cyclic coordinate that means a zero
//! component along it.
//!
//! [`gonzalez_masked`] therefore applies eq. 26 in the coordinates `f` depends on: with a mask
//! `d` (`dᵢ = false` when `f` does not depend on `xᵢ`) and `v_d = d ⊙ v`,
//!
//! ```text
//! D̄f(x, y) = ∇f(z) + c v_d / |v_d|²,   c = f(y) − f(x) − ∇f(z)·v
//! ```
//!
//! * directionality holds exactly as before: `v_d·v = |v_d|²`, so `D̄f·v = ∇f(z)·v + c`;
//! * consistency is unchanged: `f` is a function of the masked coordinates alone, so
//!   `c = O(|v_d|³)` and the correction is `O(|v_d|²)`;
//! * the component along an unmasked coordinate is `∇ᵢf(z)`, exactly `0` when `f` does not
//!   depend on `xᵢ`; so eq. 30b gives `p_φ^{n+1} = p_φ^n` for a cyclic `φ` (without constraints
//!   that involve `φ`).
//!
//! `c` uses the full `v`, so directionality does not depend on `∇f(z)` being zero off the mask;
//! a wrong mask (a `false` where `f` does depend on `xᵢ`) breaks it only for steps along such
//! coordinates alone, where `v_d = 0` and the correction is dropped. The safe limit applies
//! unchanged with `|v_d|²` in place of `|v|²`. The masks come from the models
//! ([`Potential::POTENTIAL_DEPENDS_ON`], [`Inertia::MASS_DEPENDS_ON`](crate::Inertia::MASS_DEPENDS_ON),
//! [`Holonomic::CONSTRAINT_DEPENDS_ON`]); all `true` — eq. 26 itself, what [`gonzalez`]
//! computes — unless a model says otherwise, and `mechanism!` emits them from the symbolic
//! dependencies of its expressions.

mod gonzalez;
mod kinetic;

pub use gonzalez::{
    gonzalez, gonzalez_jacobian, gonzalez_jacobian_masked, gonzalez_masked,
    gonzalez_parameter_derivative_masked,
};
pub use kinetic::{KineticDiscreteGradient, KineticJacobians};

use nalgebra::{SMatrix, SVector};

use crate::model::{Holonomic, HolonomicHessians, Potential, PotentialHessian};

/// The discrete gradient `D̄V(q0, q1)` of the potential (eq. 26, used in eq. 30b), for every
/// [`Potential`].
pub trait PotentialDiscreteGradient<const N: usize>: Potential<N> {
    /// Writes `D̄V(q0, q1)` into `out`, from `V(q0)`, `V(q1)` and `∇V` at the midpoint.
    fn potential_discrete_gradient(
        &self,
        q0: &SVector<f64, N>,
        q1: &SVector<f64, N>,
        out: &mut SVector<f64, N>,
    );
}

impl<const N: usize, Model: Potential<N> + ?Sized> PotentialDiscreteGradient<N> for Model {
    fn potential_discrete_gradient(
        &self,
        q0: &SVector<f64, N>,
        q1: &SVector<f64, N>,
        out: &mut SVector<f64, N>,
    ) {
        let mid = (q0 + q1) * 0.5;
        let mut grad_mid = SVector::<f64, N>::zeros();
        self.potential_gradient(&mid, &mut grad_mid);
        *out = gonzalez_masked(
            q0,
            q1,
            self.potential(q0),
            self.potential(q1),
            &grad_mid,
            &Self::POTENTIAL_DEPENDS_ON,
        );
    }
}

/// The Newton Jacobian `∂D̄V(q0, q1)/∂q1` of the potential's discrete gradient, for every
/// [`PotentialHessian`]; a separate trait so that models without a Hessian still get
/// [`PotentialDiscreteGradient`].
pub trait PotentialDiscreteGradientJacobian<const N: usize>: PotentialHessian<N> {
    /// Writes `∂D̄V(q0, q1)/∂q1` (see [`gonzalez_jacobian`]) into `out`.
    fn potential_discrete_gradient_jacobian(
        &self,
        q0: &SVector<f64, N>,
        q1: &SVector<f64, N>,
        out: &mut SMatrix<f64, N, N>,
    );
}

impl<const N: usize, Model: PotentialHessian<N> + ?Sized> PotentialDiscreteGradientJacobian<N>
    for Model
{
    fn potential_discrete_gradient_jacobian(
        &self,
        q0: &SVector<f64, N>,
        q1: &SVector<f64, N>,
        out: &mut SMatrix<f64, N, N>,
    ) {
        let mid = (q0 + q1) * 0.5;
        let mut grad_mid = SVector::<f64, N>::zeros();
        let mut hess_mid = SMatrix::<f64, N, N>::zeros();
        let mut grad_1 = SVector::<f64, N>::zeros();
        self.potential_gradient_hessian(&mid, &mut grad_mid, &mut hess_mid);
        self.potential_gradient(q1, &mut grad_1);
        *out = gonzalez_jacobian_masked(
            q0,
            q1,
            self.potential(q0),
            self.potential(q1),
            &grad_mid,
            &grad_1,
            &hess_mid,
            &Self::POTENTIAL_DEPENDS_ON,
        );
    }
}

/// The discrete gradients `D̄g_k(q0, q1)` of every constraint row (eq. 26, used in eq. 28b and
/// 30b), for every [`Holonomic`] model.
///
/// All evaluations use the same time `t`, so directionality reads
/// `D̄g_k·(q1 − q0) = g_k(q1, t) − g_k(q0, t)`; for scleronomic constraints `t` is irrelevant.
pub trait ConstraintDiscreteGradient<const N: usize, const M: usize>: Holonomic<N, M> {
    /// Writes `D̄g_k(q0, q1)` into row `k` of `out`, from `g` at both ends and `G` at the midpoint.
    fn constraint_discrete_gradient(
        &self,
        q0: &SVector<f64, N>,
        q1: &SVector<f64, N>,
        t: f64,
        out: &mut SMatrix<f64, M, N>,
    );
}

impl<const N: usize, const M: usize, Model: Holonomic<N, M> + ?Sized>
    ConstraintDiscreteGradient<N, M> for Model
{
    fn constraint_discrete_gradient(
        &self,
        q0: &SVector<f64, N>,
        q1: &SVector<f64, N>,
        t: f64,
        out: &mut SMatrix<f64, M, N>,
    ) {
        let mid = (q0 + q1) * 0.5;
        let mut g0 = SVector::<f64, M>::zeros();
        let mut g1 = SVector::<f64, M>::zeros();
        let mut jac_mid = SMatrix::<f64, M, N>::zeros();
        self.constraints(q0, t, &mut g0);
        self.constraints(q1, t, &mut g1);
        self.constraint_jacobian(&mid, t, &mut jac_mid);
        for k in 0..M {
            let grad_mid = jac_mid.row(k).transpose();
            let mask = &Self::CONSTRAINT_DEPENDS_ON[k];
            let row = gonzalez_masked(q0, q1, g0[k], g1[k], &grad_mid, mask);
            out.set_row(k, &row.transpose());
        }
    }
}

/// The Newton Jacobians `∂D̄g_k(q0, q1)/∂q1` of the constraints' discrete gradients, for every
/// [`HolonomicHessians`] model.
pub trait ConstraintDiscreteGradientJacobians<const N: usize, const M: usize>:
    HolonomicHessians<N, M>
{
    /// Writes `∂D̄g_k(q0, q1)/∂q1` (see [`gonzalez_jacobian`]) into `out[k]` for every row `k`.
    fn constraint_discrete_gradient_jacobians(
        &self,
        q0: &SVector<f64, N>,
        q1: &SVector<f64, N>,
        t: f64,
        out: &mut [SMatrix<f64, N, N>; M],
    );
}

impl<const N: usize, const M: usize, Model: HolonomicHessians<N, M> + ?Sized>
    ConstraintDiscreteGradientJacobians<N, M> for Model
{
    fn constraint_discrete_gradient_jacobians(
        &self,
        q0: &SVector<f64, N>,
        q1: &SVector<f64, N>,
        t: f64,
        out: &mut [SMatrix<f64, N, N>; M],
    ) {
        let mid = (q0 + q1) * 0.5;
        let mut g0 = SVector::<f64, M>::zeros();
        let mut g1 = SVector::<f64, M>::zeros();
        let mut jac_mid = SMatrix::<f64, M, N>::zeros();
        let mut jac_1 = SMatrix::<f64, M, N>::zeros();
        self.constraints(q0, t, &mut g0);
        self.constraints(q1, t, &mut g1);
        self.constraint_jacobian(&mid, t, &mut jac_mid);
        self.constraint_jacobian(q1, t, &mut jac_1);
        self.constraint_hessians(&mid, t, out);
        for (k, hess_mid) in out.iter_mut().enumerate() {
            let grad_mid = jac_mid.row(k).transpose();
            let grad_1 = jac_1.row(k).transpose();
            let mask = &Self::CONSTRAINT_DEPENDS_ON[k];
            *hess_mid =
                gonzalez_jacobian_masked(q0, q1, g0[k], g1[k], &grad_mid, &grad_1, hess_mid, mask);
        }
    }
}
