//! Gonzalez's discrete gradient of one function (eq. 26) and its Jacobian, with the masked form
//! and the round-off rules every discrete gradient of the crate shares.

use nalgebra::{SMatrix, SVector};

/// Returns whether every entry of `a` is finite.
pub(super) fn all_finite<const R: usize, const C: usize>(a: &SMatrix<f64, R, C>) -> bool {
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
pub(super) fn masked<const N: usize>(v: &SVector<f64, N>, mask: &[bool; N]) -> SVector<f64, N> {
    SVector::from_fn(|i, _| if mask[i] { v[i] } else { 0.0 })
}

/// Returns the relative round-off bound `(N + 4) ε` of the safe limit (module docs).
fn roundoff_factor(n: usize) -> f64 {
    (n as f64 + 4.0) * f64::EPSILON
}

/// Zeroes every component of `dc` not above `(N + 4) ε · scale[j]`, for `c` a sum over `N`
/// coordinates: a derivative of `c` that is pure round-off, which `/|v|` would amplify (the
/// Jacobian analogue of the safe limit). `dc` has one component per direction (`N` for `∂/∂y`,
/// `P` for the parameters).
pub(super) fn drop_roundoff<const L: usize>(
    dc: &mut SVector<f64, L>,
    scale: &SVector<f64, L>,
    n: usize,
) {
    let factor = roundoff_factor(n);
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
    drop_roundoff(&mut dc, &scale, N);
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

/// Returns `∂D̄f(x, y)/∂p` for [`gonzalez_masked`], the derivative of a discrete gradient in
/// the `P` parameters `f` depends on, for the parameter Jacobian of a step.
///
/// With `x`, `y` held fixed, `D̄f = ∇f(z) + c v_d/|v_d|²` and `c = f(y) − f(x) − ∇f(z)·v`
/// differentiate into
/// `∂D̄f/∂p = ∂∇f(z)/∂p + v_d (∂c/∂p)ᵀ / |v_d|²`, `∂c/∂p = ∂f(y)/∂p − ∂f(x)/∂p − (∂∇f(z)/∂p)ᵀ v`;
/// `fx_p`, `fy_p` are `∂f/∂p` at `x` and `y`, `grad_mid_p` is `∂∇f(z)/∂p` (`N × P`). As in
/// [`gonzalez_jacobian_masked`], this is the derivative of eq. 26 itself: each component of
/// `∂c/∂p` not above `(N + 4) ε` times its rounding scale
/// `|∂f(y)/∂p_j| + |∂f(x)/∂p_j| + Σᵢ |∂∇ᵢf(z)/∂p_j| (|xᵢ| + |yᵢ|)` is dropped, and for `v_d → 0`
/// (or a formula that overflows on finite input) the result is `∂∇f(z)/∂p`.
pub fn gonzalez_parameter_derivative_masked<const N: usize, const P: usize>(
    x: &SVector<f64, N>,
    y: &SVector<f64, N>,
    (fx_p, fy_p): (&SVector<f64, P>, &SVector<f64, P>),
    grad_mid_p: &SMatrix<f64, N, P>,
    mask: &[bool; N],
) -> SMatrix<f64, N, P> {
    let v = y - x;
    let vd = masked(&v, mask);
    let vv = vd.norm_squared();
    if vv < f64::MIN_POSITIVE {
        return *grad_mid_p;
    }
    let mut dc = fy_p - fx_p - grad_mid_p.tr_mul(&v);
    let magnitudes = x.abs() + y.abs();
    let scale = fy_p.abs() + fx_p.abs() + grad_mid_p.abs().tr_mul(&magnitudes);
    drop_roundoff(&mut dc, &scale, N);
    let out = grad_mid_p + vd * (dc.transpose() / vv);
    if !all_finite(&out) && all_finite(x) && all_finite(y) && all_finite(grad_mid_p) {
        return *grad_mid_p;
    }
    out
}
