//! Gonzalez discrete gradients (Kinon–Betsch–Livens, eq. 26–29) and their Newton Jacobians.
//!
//! A discrete gradient `D̄f(x, y)` replaces `∇f` in an implicit step so that the directionality
//! condition `D̄f(x, y)·(y − x) = f(y) − f(x)` (eq. 27) holds exactly; that is what makes the
//! energy–momentum schemes of Gonzalez and Kinon–Betsch conserve energy to round-off.
//!
//! [`gonzalez`] and [`gonzalez_jacobian`] are the kernels on plain values. The traits apply them
//! to a model's potential, constraints and kinetic energy and are implemented for every model
//! with the base capability ([`Potential`], [`PotentialHessian`], [`Holonomic`],
//! [`HolonomicHessians`], [`InertiaGradient`]), so no model implements them by hand.
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

use nalgebra::{SMatrix, SVector};

use crate::model::{Holonomic, HolonomicHessians, InertiaGradient, Potential, PotentialHessian};

/// Returns whether every entry of `a` is finite.
fn all_finite<const R: usize, const C: usize>(a: &SMatrix<f64, R, C>) -> bool {
    a.iter().all(|x| x.is_finite())
}

/// Returns whether the Gonzalez correction `c v / |v|²` is round-off and must be dropped (see
/// the module docs, "Safe limit").
fn correction_is_roundoff<const N: usize>(
    x: &SVector<f64, N>,
    y: &SVector<f64, N>,
    fx: f64,
    fy: f64,
    grad_mid: &SVector<f64, N>,
    c: f64,
    vv: f64,
) -> bool {
    if vv < f64::MIN_POSITIVE {
        return true;
    }
    let mut scale = fx.abs() + fy.abs();
    for i in 0..N {
        scale += grad_mid[i].abs() * (x[i].abs() + y[i].abs());
    }
    c.abs() <= roundoff_factor(N) * scale
}

/// Returns whether `x`, `y`, `fx`, `fy` and `grad_mid` are all finite.
fn inputs_finite<const N: usize>(
    x: &SVector<f64, N>,
    y: &SVector<f64, N>,
    fx: f64,
    fy: f64,
    grad_mid: &SVector<f64, N>,
) -> bool {
    fx.is_finite() && fy.is_finite() && all_finite(x) && all_finite(y) && all_finite(grad_mid)
}

/// Returns Gonzalez's discrete gradient `D̄f(x, y)` (Kinon–Betsch–Livens eq. 26).
///
/// `D̄f(x, y) = ∇f(z) + (f(y) − f(x) − ∇f(z)·v) / |v|² · v` with `z = (x + y)/2`, `v = y − x`;
/// `fx = f(x)`, `fy = f(y)` and `grad_mid = ∇f(z)` are supplied by the caller so that one model
/// evaluation serves several discrete gradients. The result satisfies the directionality
/// condition `D̄f·v = f(y) − f(x)` (eq. 27) to round-off and equals `∇f(z) + O(|v|²)`. For short
/// steps it returns `∇f(z)` exactly (the safe limit of the module docs), so it is finite for
/// finite input, `y == x` included. This is [`gonzalez_masked`] with every coordinate in the mask.
pub fn gonzalez<const N: usize>(
    x: &SVector<f64, N>,
    y: &SVector<f64, N>,
    fx: f64,
    fy: f64,
    grad_mid: &SVector<f64, N>,
) -> SVector<f64, N> {
    gonzalez_masked(x, y, fx, fy, grad_mid, &[true; N])
}

/// Returns Gonzalez's discrete gradient formed in the coordinates `f` depends on (module docs,
/// "Masks"): `D̄f(x, y) = ∇f(z) + c v_d / |v_d|²` with `c = f(y) − f(x) − ∇f(z)·v` and
/// `v_d = mask ⊙ (y − x)`.
///
/// `mask[i] = false` declares that `f` does not depend on `x_i`; the component `i` of the result
/// is then `∇ᵢf(z)` (zero for such an `f`). Directionality `D̄f·v = f(y) − f(x)` holds for any
/// mask, consistency for a mask that covers the dependencies of `f`. The safe limit and the
/// overflow fallback are those of [`gonzalez`], with `|v_d|²` in place of `|v|²`.
pub fn gonzalez_masked<const N: usize>(
    x: &SVector<f64, N>,
    y: &SVector<f64, N>,
    fx: f64,
    fy: f64,
    grad_mid: &SVector<f64, N>,
    mask: &[bool; N],
) -> SVector<f64, N> {
    let v = y - x;
    let vd = masked(&v, mask);
    let vv = vd.norm_squared();
    let c = fy - fx - grad_mid.dot(&v);
    if correction_is_roundoff(x, y, fx, fy, grad_mid, c, vv) {
        return *grad_mid;
    }
    let out = grad_mid + vd * (c / vv);
    if !all_finite(&out) && inputs_finite(x, y, fx, fy, grad_mid) {
        return *grad_mid;
    }
    out
}

/// Returns `mask ⊙ v`: `v` with the components outside the mask set to zero.
fn masked<const N: usize>(v: &SVector<f64, N>, mask: &[bool; N]) -> SVector<f64, N> {
    SVector::from_fn(|i, _| if mask[i] { v[i] } else { 0.0 })
}

/// Returns the relative round-off bound `(N + 4) ε` of the safe limit (module docs).
fn roundoff_factor(n: usize) -> f64 {
    (n as f64 + 4.0) * f64::EPSILON
}

/// Zeroes every component of `dc` not above `(N + 4) ε · scale[j]`: a derivative of `c` that is
/// pure round-off, which `/|v|` would amplify (the Jacobian analogue of the safe limit).
fn drop_roundoff<const N: usize>(dc: &mut SVector<f64, N>, scale: &SVector<f64, N>) {
    let factor = roundoff_factor(N);
    for (value, scale) in dc.iter_mut().zip(scale.iter()) {
        if value.abs() <= factor * scale {
            *value = 0.0;
        }
    }
}

/// Returns `∂D̄f(x, y)/∂y`, the derivative of [`gonzalez`] in its second point, for Newton.
///
/// Differentiating eq. 26 with `c = f(y) − f(x) − ∇f(z)·v` and `∂c/∂y = ∇f(y) − ∇f(z) − ½ H v`
/// (`H = Hess f(z)`, symmetric) gives
/// `J = ½ H + (v (∂c/∂y)ᵀ + c I) / |v|² − 2 c v vᵀ / |v|⁴`, where `J[(i, j)] = ∂D̄ᵢ/∂yⱼ`;
/// `grad_y = ∇f(y)` and `hess_mid = Hess f(z)`. This is [`gonzalez_jacobian_masked`] with every
/// coordinate in the mask.
///
/// Round-off is treated as in [`gonzalez`]: where `c` is round-off (the safe limit), the terms
/// in `c` are dropped, and each component of `∂c/∂y` not above `(N + 4) ε` times its rounding
/// scale `|∇ⱼf(y)| + |∇ⱼf(z)| + Σᵢ |Hⱼᵢ| (|xᵢ| + |yᵢ|)` is dropped too. So `J` is the
/// derivative of eq. 26 itself — not of the piecewise value of [`gonzalez`], which differs from
/// eq. 26 only by round-off: where `c` vanishes at a long step (say a step along which `f` is
/// quadratic), `c` still grows off that step, and Newton needs the `v (∂c/∂y)ᵀ/|v|²` term. For
/// `v → 0` every correction drops and `J = ½ H`, the limit of the exact `J`. If every input is
/// finite but the formula overflows, `½ H` is returned.
pub fn gonzalez_jacobian<const N: usize>(
    x: &SVector<f64, N>,
    y: &SVector<f64, N>,
    fx: f64,
    fy: f64,
    grad_mid: &SVector<f64, N>,
    grad_y: &SVector<f64, N>,
    hess_mid: &SMatrix<f64, N, N>,
) -> SMatrix<f64, N, N> {
    gonzalez_jacobian_masked(x, y, fx, fy, grad_mid, grad_y, hess_mid, &[true; N])
}

/// Returns `∂D̄f(x, y)/∂y` for [`gonzalez_masked`], for Newton.
///
/// With `D = diag(mask)`, `v_d = D v` and `∂|v_d|²/∂y = 2 v_d`, differentiating
/// `D̄f = ∇f(z) + c v_d/|v_d|²` gives
/// `J = ½ H + (v_d (∂c/∂y)ᵀ + c D) / |v_d|² − 2 c v_d v_dᵀ / |v_d|⁴` (`v` in [`gonzalez_jacobian`]
/// becomes `v_d`, the identity becomes `D`); round-off and overflow are treated as there.
#[allow(clippy::too_many_arguments)]
pub fn gonzalez_jacobian_masked<const N: usize>(
    x: &SVector<f64, N>,
    y: &SVector<f64, N>,
    fx: f64,
    fy: f64,
    grad_mid: &SVector<f64, N>,
    grad_y: &SVector<f64, N>,
    hess_mid: &SMatrix<f64, N, N>,
    mask: &[bool; N],
) -> SMatrix<f64, N, N> {
    let half_hess = hess_mid * 0.5;
    let v = y - x;
    let vd = masked(&v, mask);
    let vv = vd.norm_squared();
    if vv < f64::MIN_POSITIVE {
        return half_hess;
    }
    let inv = 1.0 / vv;
    let mut dc = grad_y - grad_mid - half_hess * v;
    let magnitudes = x.abs() + y.abs();
    let scale = grad_y.abs() + grad_mid.abs() + hess_mid.abs() * magnitudes;
    drop_roundoff(&mut dc, &scale);
    let mut out = half_hess + vd * (dc.transpose() * inv);
    let c = fy - fx - grad_mid.dot(&v);
    if !correction_is_roundoff(x, y, fx, fy, grad_mid, c, vv) {
        out -= vd * (vd.transpose() * (2.0 * c * inv * inv));
        for (i, &depends) in mask.iter().enumerate() {
            if depends {
                out[(i, i)] += c * inv;
            }
        }
    }
    if !all_finite(&out)
        && inputs_finite(x, y, fx, fy, grad_mid)
        && all_finite(grad_y)
        && all_finite(hess_mid)
    {
        return half_hess;
    }
    out
}

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
    /// Round-off in `c` and in its derivatives is dropped as in [`gonzalez_jacobian`]; for
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
        drop_roundoff(&mut dc, &scale);
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
