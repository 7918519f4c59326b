//! The kinetic energy's discrete gradients (eq. 28–29) and their Newton blocks.

use nalgebra::{SMatrix, SVector};

use super::gonzalez::{
    all_finite, drop_roundoff, gonzalez_jacobian_masked, gonzalez_masked, masked,
};
use crate::model::InertiaGradient;

/// The four `N × N` Newton blocks of the kinetic discrete gradients `(D̄₁T, D̄₂T)` with respect
/// to the new state `(q1, v1)`, as written by
/// [`KineticDiscreteGradient::kinetic_discrete_gradient_jacobians`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KineticJacobians<const N: usize> {
    /// `∂D̄₁T/∂q1`.
    pub d1_q1: SMatrix<f64, N, N>,
    /// `∂D̄₁T/∂v1`.
    pub d1_v1: SMatrix<f64, N, N>,
    /// `∂D̄₂T/∂q1`.
    pub d2_q1: SMatrix<f64, N, N>,
    /// `∂D̄₂T/∂v1`.
    pub d2_v1: SMatrix<f64, N, N>,
}

impl<const N: usize> Default for KineticJacobians<N> {
    /// Returns four zero blocks, ready to be overwritten.
    fn default() -> Self {
        KineticJacobians {
            d1_q1: SMatrix::zeros(),
            d1_v1: SMatrix::zeros(),
            d2_q1: SMatrix::zeros(),
            d2_v1: SMatrix::zeros(),
        }
    }
}

/// The partitioned discrete gradients `D̄₁T`, `D̄₂T` of the kinetic energy `T(q, v)`
/// (eq. 29, used in eq. 30b–c), for every [`InertiaGradient`] model.
///
/// The construction is the symmetric average
///
/// ```text
/// D̄₁T = ½ [D̄_q T(q0, q1; v0) + D̄_q T(q0, q1; v1)]
/// D̄₂T = ½ [D̄_v T(q0; v0, v1) + D̄_v T(q1; v0, v1)] = ¼ (M(q0) + M(q1)) (v0 + v1)
/// ```
///
/// where `D̄_q` is Gonzalez's eq. 26 in `q` with `v` frozen, formed with the mask
/// [`Inertia::MASS_DEPENDS_ON`](crate::Inertia::MASS_DEPENDS_ON) ([`gonzalez_masked`]: zero along
/// cyclic coordinates), and `D̄_v` eq. 26 in `v` with `q` frozen; because `T` is quadratic in `v`, the midpoint rule is exact there and
/// `D̄_v T(q; v0, v1) = M(q) (v0 + v1)/2` with no correction. Telescoping the four Gonzalez
/// directionalities gives eq. 29, `D̄₁T·Δq + D̄₂T·Δv = T(q1, v1) − T(q0, v0)`; with a constant
/// mass matrix `D̄₁T = 0` and `D̄₂T = M v^{n+½}` (Proposition 5.5).
pub trait KineticDiscreteGradient<const N: usize>: InertiaGradient<N> {
    /// Writes `D̄₁T` into `dq` and `D̄₂T` into `dv` for the step `(q0, v0) → (q1, v1)`.
    fn kinetic_discrete_gradient(
        &self,
        q0: &SVector<f64, N>,
        v0: &SVector<f64, N>,
        q1: &SVector<f64, N>,
        v1: &SVector<f64, N>,
        dq: &mut SVector<f64, N>,
        dv: &mut SVector<f64, N>,
    );

    /// Writes the derivatives of `(D̄₁T, D̄₂T)` with respect to `(q1, v1)` into `out`, for Newton.
    ///
    /// With `Δq = q1 − q0`, `z = (q0 + q1)/2`, `c(w) = T(q1, w) − T(q0, w) − ∂_qT(z, w)·Δq` and
    /// `Q(q, w) = ∂²T/∂q∂v` (so that `∂(M(q) w)/∂q = Q(q, w)ᵀ`), and `Δq_d` the step masked by
    /// [`Inertia::MASS_DEPENDS_ON`](crate::Inertia::MASS_DEPENDS_ON):
    ///
    /// ```text
    /// ∂D̄₁T/∂q1 = ½ [J(v0) + J(v1)]        J(w): gonzalez_jacobian_masked of T(·, w)
    /// ∂D̄₁T/∂v1 = ½ [Q(z, v1) + Δq_d ((M(q1) − M(q0)) v1 − Q(z, v1)ᵀ Δq)ᵀ / |Δq_d|²]
    /// ∂D̄₂T/∂q1 = ¼ Q(q1, v0 + v1)ᵀ
    /// ∂D̄₂T/∂v1 = ¼ (M(q0) + M(q1))
    /// ```
    ///
    /// Round-off in `c` and in its derivatives is dropped as in [`gonzalez_jacobian`](super::gonzalez_jacobian); for
    /// `Δq → 0` the blocks tend to `½ [Hess_q T(z, v0) + Hess_q T(z, v1)]`, `½ Q(z, v1)`,
    /// `¼ Q(q1, v0 + v1)ᵀ` and `½ M(q1)`.
    fn kinetic_discrete_gradient_jacobians(
        &self,
        q0: &SVector<f64, N>,
        v0: &SVector<f64, N>,
        q1: &SVector<f64, N>,
        v1: &SVector<f64, N>,
        out: &mut KineticJacobians<N>,
    );
}

impl<const N: usize, Model: InertiaGradient<N> + ?Sized> KineticDiscreteGradient<N> for Model {
    fn kinetic_discrete_gradient(
        &self,
        q0: &SVector<f64, N>,
        v0: &SVector<f64, N>,
        q1: &SVector<f64, N>,
        v1: &SVector<f64, N>,
        dq: &mut SVector<f64, N>,
        dv: &mut SVector<f64, N>,
    ) {
        let mut m0 = SMatrix::<f64, N, N>::zeros();
        let mut m1 = SMatrix::<f64, N, N>::zeros();
        self.mass_matrix(q0, &mut m0);
        if Self::CONSTANT_MASS {
            *dq = SVector::zeros();
            *dv = m0 * ((v0 + v1) * 0.5);
            return;
        }
        self.mass_matrix(q1, &mut m1);
        *dv = (m0 + m1) * ((v0 + v1) * 0.25);
        let mid = (q0 + q1) * 0.5;
        let mut grad_mid = SVector::<f64, N>::zeros();
        *dq = SVector::zeros();
        for w in [v0, v1] {
            self.kinetic_gradient(&mid, w, &mut grad_mid);
            let t0 = self.kinetic_energy(q0, w);
            let t1 = self.kinetic_energy(q1, w);
            *dq += gonzalez_masked(q0, q1, t0, t1, &grad_mid, &Self::MASS_DEPENDS_ON) * 0.5;
        }
    }

    fn kinetic_discrete_gradient_jacobians(
        &self,
        q0: &SVector<f64, N>,
        v0: &SVector<f64, N>,
        q1: &SVector<f64, N>,
        v1: &SVector<f64, N>,
        out: &mut KineticJacobians<N>,
    ) {
        let mut m0 = SMatrix::<f64, N, N>::zeros();
        let mut m1 = SMatrix::<f64, N, N>::zeros();
        self.mass_matrix(q0, &mut m0);
        if Self::CONSTANT_MASS {
            *out = KineticJacobians::default();
            out.d2_v1 = m0 * 0.5;
            return;
        }
        self.mass_matrix(q1, &mut m1);
        out.d2_v1 = (m0 + m1) * 0.25;

        let mut qq = SMatrix::<f64, N, N>::zeros();
        let mut qv = SMatrix::<f64, N, N>::zeros();
        self.kinetic_hessians(q1, &(v0 + v1), &mut qq, &mut qv);
        out.d2_q1 = qv.transpose() * 0.25;

        let at_v0 = FrozenVelocity::evaluate(self, q0, q1, v0);
        let at_v1 = FrozenVelocity::evaluate(self, q0, q1, v1);
        let mask = &Self::MASS_DEPENDS_ON;
        out.d1_q1 = (at_v0.jacobian(q0, q1, mask) + at_v1.jacobian(q0, q1, mask)) * 0.5;

        // ∂/∂v1 of ½ D̄_q T(q0, q1; v1) = ½ [∂_qT(z, v1) + c(v1) Δq_d / |Δq_d|²] (Δq_d the
        // masked step), with the round-off of ∂c/∂v1 dropped as in `gonzalez_jacobian`.
        let hess_qv = at_v1.hess_qv;
        out.d1_v1 = hess_qv * 0.5;
        let dq = q1 - q0;
        let dq_d = masked(&dq, mask);
        let vv = dq_d.norm_squared();
        if vv < f64::MIN_POSITIVE {
            return;
        }
        let (p0, p1) = (m0 * v1, m1 * v1);
        let mut dc = p1 - p0 - hess_qv.transpose() * dq;
        let scale = p1.abs() + p0.abs() + hess_qv.transpose().abs() * (q0.abs() + q1.abs());
        drop_roundoff(&mut dc, &scale, N);
        let block = out.d1_v1 + dq_d * (dc.transpose() * (0.5 / vv));
        // As in `gonzalez_jacobian`: an overflow from finite input falls back to the limit.
        if all_finite(&block) || !all_finite(&dc) {
            out.d1_v1 = block;
        }
    }
}

/// `T(·, w)` and its `q`-derivatives for a frozen velocity `w`: what `D̄_q T(q0, q1; w)` and its
/// Jacobians need.
struct FrozenVelocity<const N: usize> {
    /// `T(q0, w)`.
    t0: f64,
    /// `T(q1, w)`.
    t1: f64,
    /// `∂_qT(z, w)` at the midpoint `z`.
    grad_mid: SVector<f64, N>,
    /// `∂_qT(q1, w)`.
    grad_1: SVector<f64, N>,
    /// `∂²T/∂q² (z, w)`.
    hess_qq: SMatrix<f64, N, N>,
    /// `∂²T/∂q∂v (z, w)`.
    hess_qv: SMatrix<f64, N, N>,
}

impl<const N: usize> FrozenVelocity<N> {
    /// Evaluates `model`'s kinetic energy and its `q`-derivatives for the step `q0 → q1` at `w`.
    fn evaluate<Model: InertiaGradient<N> + ?Sized>(
        model: &Model,
        q0: &SVector<f64, N>,
        q1: &SVector<f64, N>,
        w: &SVector<f64, N>,
    ) -> Self {
        let mid = (q0 + q1) * 0.5;
        let mut frozen = FrozenVelocity {
            t0: model.kinetic_energy(q0, w),
            t1: model.kinetic_energy(q1, w),
            grad_mid: SVector::zeros(),
            grad_1: SVector::zeros(),
            hess_qq: SMatrix::zeros(),
            hess_qv: SMatrix::zeros(),
        };
        model.kinetic_gradient(&mid, w, &mut frozen.grad_mid);
        model.kinetic_gradient(q1, w, &mut frozen.grad_1);
        model.kinetic_hessians(&mid, w, &mut frozen.hess_qq, &mut frozen.hess_qv);
        frozen
    }

    /// Returns `∂D̄_q T(q0, q1; w)/∂q1` by [`gonzalez_jacobian_masked`] with the mask of `M(q)`.
    fn jacobian(
        &self,
        q0: &SVector<f64, N>,
        q1: &SVector<f64, N>,
        mask: &[bool; N],
    ) -> SMatrix<f64, N, N> {
        gonzalez_jacobian_masked(
            q0,
            q1,
            self.t0,
            self.t1,
            &self.grad_mid,
            &self.grad_1,
            &self.hess_qq,
            mask,
        )
    }
}
