//! Gonzalez discrete gradients (Kinon–Betsch–Livens eq. 26–29): directionality, consistency,
//! the safe limit for short steps, and every Newton Jacobian against finite differences.

use mechanism_runtime::discrete_gradient::{
    gonzalez, gonzalez_jacobian, gonzalez_jacobian_masked, gonzalez_masked,
};
use mechanism_runtime::reference::{DoublePendulum, SphericalSpringPendulum};
use mechanism_runtime::{
    ConstraintDiscreteGradient, ConstraintDiscreteGradientJacobians, Holonomic, Inertia,
    InertiaGradient, KineticDiscreteGradient, KineticJacobians, Potential,
    PotentialDiscreteGradient, PotentialDiscreteGradientJacobian, SMatrix, SVector,
};
use proptest::prelude::*;

/// Step lengths `|q1 − q0|` exercised by the property tests: exactly equal points, the safe
/// limit, the transition, and ordinary steps.
const STEP_SCALES: [f64; 9] = [0.0, 1e-14, 1e-12, 1e-9, 1e-6, 1e-4, 1e-2, 0.1, 1.0];

/// The spherical pendulum with gravity, so that `V` depends on `θ` as well as on `r`.
fn spherical() -> SphericalSpringPendulum {
    SphericalSpringPendulum {
        gravity: 9.81,
        ..SphericalSpringPendulum::default()
    }
}

/// A smooth non-polynomial test function on ℝ³: `F = sin x₀ e^{x₁} + x₂⁴/4 + x₀ x₂`.
fn test_f(x: &SVector<f64, 3>) -> f64 {
    x[0].sin() * x[1].exp() + 0.25 * x[2].powi(4) + x[0] * x[2]
}

/// Returns `∇F`.
fn test_grad(x: &SVector<f64, 3>) -> SVector<f64, 3> {
    let e = x[1].exp();
    SVector::<f64, 3>::new(x[0].cos() * e + x[2], x[0].sin() * e, x[2].powi(3) + x[0])
}

/// Returns `Hess F`.
fn test_hess(x: &SVector<f64, 3>) -> SMatrix<f64, 3, 3> {
    let e = x[1].exp();
    let (s, c) = x[0].sin_cos();
    #[rustfmt::skip]
    let h = SMatrix::<f64, 3, 3>::new(
        -s * e, c * e, 1.0,
        c * e,  s * e, 0.0,
        1.0,    0.0,   3.0 * x[2] * x[2],
    );
    h
}

/// Returns `D̄F(x, y)` through the kernel.
fn test_discrete_gradient(x: &SVector<f64, 3>, y: &SVector<f64, 3>) -> SVector<f64, 3> {
    gonzalez(x, y, test_f(x), test_f(y), &test_grad(&((x + y) * 0.5)))
}

/// A smooth function on ℝ³ that does not depend on `x₂` (a cyclic coordinate):
/// `G = sin x₀ e^{x₁} + x₀⁴/4`.
fn cyclic_f(x: &SVector<f64, 3>) -> f64 {
    x[0].sin() * x[1].exp() + 0.25 * x[0].powi(4)
}

/// Returns `∇G`; its last component is exactly zero.
fn cyclic_grad(x: &SVector<f64, 3>) -> SVector<f64, 3> {
    let e = x[1].exp();
    SVector::<f64, 3>::new(x[0].cos() * e + x[0].powi(3), x[0].sin() * e, 0.0)
}

/// Returns `Hess G`.
fn cyclic_hess(x: &SVector<f64, 3>) -> SMatrix<f64, 3, 3> {
    let e = x[1].exp();
    let (s, c) = x[0].sin_cos();
    #[rustfmt::skip]
    let h = SMatrix::<f64, 3, 3>::new(
        -s * e + 3.0 * x[0] * x[0], c * e, 0.0,
        c * e,                      s * e, 0.0,
        0.0,                        0.0,   0.0,
    );
    h
}

/// The dependency mask of `G`.
const CYCLIC_MASK: [bool; 3] = [true, true, false];

/// Returns the masked `D̄G(x, y)` through the kernel.
fn cyclic_discrete_gradient(x: &SVector<f64, 3>, y: &SVector<f64, 3>) -> SVector<f64, 3> {
    let z = (x + y) * 0.5;
    gonzalez_masked(
        x,
        y,
        cyclic_f(x),
        cyclic_f(y),
        &cyclic_grad(&z),
        &CYCLIC_MASK,
    )
}

/// The directionality defect `|D̄f·v − (f(y) − f(x))|` of one discrete gradient, relative to
/// two scales.
#[derive(Clone, Copy, Debug, Default)]
struct Directionality {
    /// Relative to `|f(x)| + |f(y)| + Σᵢ |∇ᵢf(z)| (|xᵢ| + |yᵢ|)`: the round-off scale of
    /// evaluating `f` near `x` and `y` (for `x² + y² − l²` near the circle the values are tiny
    /// but their rounding is of order `ε l²`), which bounds what any evaluation can resolve.
    honest: f64,
    /// Relative to `|f(x)| + |f(y)| + |∇f(z)| |v|`, which ignores cancellation inside `f`;
    /// meaningful once the step is long enough for the correction to dominate round-off.
    narrow: f64,
}

impl Directionality {
    /// Returns the componentwise worse of `self` and `other`.
    fn max(self, other: Self) -> Self {
        Directionality {
            honest: self.honest.max(other.honest),
            narrow: self.narrow.max(other.narrow),
        }
    }
}

/// Returns the directionality defect (eq. 27) of `discrete` for `f` between `x` and `y`.
fn directionality_error<const N: usize>(
    x: &SVector<f64, N>,
    y: &SVector<f64, N>,
    fx: f64,
    fy: f64,
    grad_mid: &SVector<f64, N>,
    discrete: &SVector<f64, N>,
) -> Directionality {
    let v = y - x;
    let error = (discrete.dot(&v) - (fy - fx)).abs();
    if error == 0.0 {
        return Directionality::default();
    }
    let values = fx.abs() + fy.abs();
    let cancellation: f64 = (0..N)
        .map(|i| grad_mid[i].abs() * (x[i].abs() + y[i].abs()))
        .sum();
    Directionality {
        honest: error / (values + cancellation),
        narrow: error / (values + grad_mid.norm() * v.norm()),
    }
}

/// The shortest step for which the narrow relative bound is asserted.
const NARROW_FROM: f64 = 1e-2;

/// Fails unless `d` is within [`DIRECTIONALITY_TOLERANCE`] (the narrow bound only for steps of
/// at least [`NARROW_FROM`]).
fn check_directionality(what: &str, d: Directionality, scale: f64) -> Result<(), TestCaseError> {
    prop_assert!(
        d.honest <= DIRECTIONALITY_TOLERANCE,
        "{what}: relative error {:e}",
        d.honest
    );
    prop_assert!(
        scale < NARROW_FROM || d.narrow <= DIRECTIONALITY_TOLERANCE,
        "{what}: narrow relative error {:e}",
        d.narrow
    );
    Ok(())
}

/// The worst relative directionality error tolerated: a few hundred ulps.
const DIRECTIONALITY_TOLERANCE: f64 = 1e-13;

/// A point `x` and a second point `y = x + scale·d` with `|d| = 1`.
fn pair<const N: usize>(
    x: [f64; N],
    d: [f64; N],
    scale: f64,
) -> (SVector<f64, N>, SVector<f64, N>) {
    let x = SVector::from(x);
    let d = SVector::from(d);
    let norm = d.norm();
    let direction = if norm > 1e-3 {
        d / norm
    } else {
        let mut e = SVector::zeros();
        e[0] = 1.0;
        e
    };
    (x, x + direction * scale)
}

/// Returns the potential's discrete gradient and its directionality error.
fn potential_directionality<const N: usize, Model: Potential<N>>(
    model: &Model,
    q0: &SVector<f64, N>,
    q1: &SVector<f64, N>,
) -> Directionality {
    let mut discrete = SVector::zeros();
    model.potential_discrete_gradient(q0, q1, &mut discrete);
    assert!(discrete.iter().all(|x| x.is_finite()), "non-finite D̄V");
    let mut grad_mid = SVector::zeros();
    model.potential_gradient(&((q0 + q1) * 0.5), &mut grad_mid);
    directionality_error(
        q0,
        q1,
        model.potential(q0),
        model.potential(q1),
        &grad_mid,
        &discrete,
    )
}

/// Returns the worst directionality error of the double pendulum's constraint rows.
fn constraint_directionality(
    model: &DoublePendulum,
    q0: &SVector<f64, 4>,
    q1: &SVector<f64, 4>,
) -> Directionality {
    let mut discrete = SMatrix::<f64, 2, 4>::zeros();
    model.constraint_discrete_gradient(q0, q1, 0.0, &mut discrete);
    assert!(discrete.iter().all(|x| x.is_finite()), "non-finite D̄g");
    let (mut g0, mut g1) = (SVector::<f64, 2>::zeros(), SVector::<f64, 2>::zeros());
    let mut jac_mid = SMatrix::<f64, 2, 4>::zeros();
    model.constraints(q0, 0.0, &mut g0);
    model.constraints(q1, 0.0, &mut g1);
    model.constraint_jacobian(&((q0 + q1) * 0.5), 0.0, &mut jac_mid);
    (0..2)
        .map(|k| {
            directionality_error(
                q0,
                q1,
                g0[k],
                g1[k],
                &jac_mid.row(k).transpose(),
                &discrete.row(k).transpose(),
            )
        })
        .fold(Directionality::default(), Directionality::max)
}

/// Returns the partitioned directionality error of eq. 29 for the step `(q0, v0) → (q1, v1)`,
/// relative to the four kinetic energies `T(qᵢ, vⱼ)` that the construction combines.
fn kinetic_directionality<const N: usize, Model: InertiaGradient<N>>(
    model: &Model,
    q0: &SVector<f64, N>,
    v0: &SVector<f64, N>,
    q1: &SVector<f64, N>,
    v1: &SVector<f64, N>,
) -> f64 {
    let (mut dq, mut dv) = (SVector::zeros(), SVector::zeros());
    model.kinetic_discrete_gradient(q0, v0, q1, v1, &mut dq, &mut dv);
    assert!(dq.iter().chain(dv.iter()).all(|x| x.is_finite()));
    let t00 = model.kinetic_energy(q0, v0);
    let t11 = model.kinetic_energy(q1, v1);
    let scale = t00 + t11 + model.kinetic_energy(q0, v1) + model.kinetic_energy(q1, v0);
    let error = (dq.dot(&(q1 - q0)) + dv.dot(&(v1 - v0)) - (t11 - t00)).abs();
    if error == 0.0 {
        0.0
    } else {
        error / scale
    }
}

/// A configuration of the spherical pendulum away from the singular `θ = kπ`.
fn spherical_configuration() -> impl Strategy<Value = [f64; 3]> {
    [0.6..1.5f64, 0.3..2.8f64, -3.0..3.0f64]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn kernel_is_directional_and_finite(
        x in [-1.5..1.5f64, -1.5..1.5f64, -1.5..1.5f64],
        d in [-1.0..1.0f64, -1.0..1.0f64, -1.0..1.0f64],
        scale in prop::sample::select(STEP_SCALES.to_vec()),
    ) {
        let (x, y) = pair(x, d, scale);
        let z = (x + y) * 0.5;
        let discrete = test_discrete_gradient(&x, &y);
        prop_assert!(discrete.iter().all(|c| c.is_finite()));
        let error = directionality_error(&x, &y, test_f(&x), test_f(&y), &test_grad(&z), &discrete);
        check_directionality("F", error, scale)?;
    }

    #[test]
    fn masked_kernel_is_directional_and_zero_off_the_mask(
        x in [-1.5..1.5f64, -1.5..1.5f64, -1.5..1.5f64],
        d in [-1.0..1.0f64, -1.0..1.0f64, -1.0..1.0f64],
        scale in prop::sample::select(STEP_SCALES.to_vec()),
    ) {
        let (x, y) = pair(x, d, scale);
        let z = (x + y) * 0.5;
        let discrete = cyclic_discrete_gradient(&x, &y);
        prop_assert!(discrete.iter().all(|c| c.is_finite()));
        // Exactly zero along the coordinate G does not depend on, whatever the step.
        prop_assert_eq!(discrete[2], 0.0);
        let error = directionality_error(
            &x, &y, cyclic_f(&x), cyclic_f(&y), &cyclic_grad(&z), &discrete,
        );
        check_directionality("G, masked", error, scale)?;
        // An all-true mask is Gonzalez's eq. 26 itself.
        let full = gonzalez_masked(
            &x, &y, test_f(&x), test_f(&y), &test_grad(&z), &[true; 3],
        );
        prop_assert_eq!(full, test_discrete_gradient(&x, &y));
    }

    #[test]
    fn masked_jacobian_matches_finite_differences(
        x in [-1.5..1.5f64, -1.5..1.5f64, -1.5..1.5f64],
        d in [-1.0..1.0f64, -1.0..1.0f64, -1.0..1.0f64],
        scale in 0.1..1.0f64,
    ) {
        let (x, y) = pair(x, d, scale);
        let z = (x + y) * 0.5;
        let exact = gonzalez_jacobian_masked(
            &x,
            &y,
            cyclic_f(&x),
            cyclic_f(&y),
            &cyclic_grad(&z),
            &cyclic_grad(&y),
            &cyclic_hess(&z),
            &CYCLIC_MASK,
        );
        let approx = central_jacobian(|y| cyclic_discrete_gradient(&x, y), &y);
        check_close("∂D̄G/∂y, masked", &exact, &approx)?;
        prop_assert!(exact.row(2).iter().all(|&c| c == 0.0), "row 2: {}", exact);
    }

    #[test]
    fn potential_discrete_gradients_are_directional(
        q in [-2.0..2.0f64, -2.0..2.0f64, -2.0..2.0f64, -2.0..2.0f64],
        d in [-1.0..1.0f64, -1.0..1.0f64, -1.0..1.0f64, -1.0..1.0f64],
        r in spherical_configuration(),
        e in [-1.0..1.0f64, -1.0..1.0f64, -1.0..1.0f64],
        scale in prop::sample::select(STEP_SCALES.to_vec()),
    ) {
        let (q0, q1) = pair(q, d, scale);
        let error = potential_directionality(&DoublePendulum::default(), &q0, &q1);
        check_directionality("V, double pendulum", error, scale)?;
        let (r0, r1) = pair(r, e, scale);
        for model in [spherical(), SphericalSpringPendulum::default()] {
            let error = potential_directionality(&model, &r0, &r1);
            check_directionality("V, spherical pendulum", error, scale)?;
        }
    }

    #[test]
    fn constraint_discrete_gradients_are_directional(
        q in [-2.0..2.0f64, -2.0..2.0f64, -2.0..2.0f64, -2.0..2.0f64],
        d in [-1.0..1.0f64, -1.0..1.0f64, -1.0..1.0f64, -1.0..1.0f64],
        scale in prop::sample::select(STEP_SCALES.to_vec()),
    ) {
        let (q0, q1) = pair(q, d, scale);
        let error = constraint_directionality(&DoublePendulum::default(), &q0, &q1);
        check_directionality("g_k, double pendulum", error, scale)?;
    }

    #[test]
    fn kinetic_discrete_gradients_are_directional(
        q in spherical_configuration(),
        d in [-1.0..1.0f64, -1.0..1.0f64, -1.0..1.0f64],
        v0 in [-2.0..2.0f64, -2.0..2.0f64, -2.0..2.0f64],
        v1 in [-2.0..2.0f64, -2.0..2.0f64, -2.0..2.0f64],
        scale in prop::sample::select(STEP_SCALES.to_vec()),
    ) {
        let (q0, q1) = pair(q, d, scale);
        let (v0, v1) = (SVector::from(v0), SVector::from(v1));
        let error = kinetic_directionality(&spherical(), &q0, &v0, &q1, &v1);
        prop_assert!(error <= DIRECTIONALITY_TOLERANCE, "spherical pendulum: {error:e}");
        let p0 = SVector::<f64, 4>::new(q0[0], q0[1], q0[2], 0.5);
        let p1 = SVector::<f64, 4>::new(q1[0], q1[1], q1[2], -0.5);
        let w0 = SVector::<f64, 4>::new(v0[0], v0[1], v0[2], 1.0);
        let w1 = SVector::<f64, 4>::new(v1[0], v1[1], v1[2], -1.0);
        let error = kinetic_directionality(&DoublePendulum::default(), &p0, &w0, &p1, &w1);
        prop_assert!(error <= DIRECTIONALITY_TOLERANCE, "double pendulum: {error:e}");
    }

    #[test]
    fn jacobians_match_finite_differences(
        x in [-1.5..1.5f64, -1.5..1.5f64, -1.5..1.5f64],
        d in [-1.0..1.0f64, -1.0..1.0f64, -1.0..1.0f64],
        q in [-2.0..2.0f64, -2.0..2.0f64, -2.0..2.0f64, -2.0..2.0f64],
        dq in [-1.0..1.0f64, -1.0..1.0f64, -1.0..1.0f64, -1.0..1.0f64],
        r in spherical_configuration(),
        dr in [-1.0..1.0f64, -1.0..1.0f64, -1.0..1.0f64],
        v0 in [-2.0..2.0f64, -2.0..2.0f64, -2.0..2.0f64],
        v1 in [-2.0..2.0f64, -2.0..2.0f64, -2.0..2.0f64],
        scale in 0.1..1.0f64,
    ) {
        let (x, y) = pair(x, d, scale);
        check_kernel_jacobian(&x, &y)?;
        let (q0, q1) = pair(q, dq, scale);
        check_constraint_jacobians(&q0, &q1)?;
        // Keep the spherical step clear of the singular θ = kπ.
        let (r0, r1) = pair(r, dr, 0.25 * scale);
        // V and M do not depend on the azimuth φ, so their discrete gradients are masked
        // (`gonzalez_masked`): the correction `c v_d / |v_d|²` is homogeneous of degree one in
        // the masked step `v_d = (Δr, Δθ, 0)` and varies on the length scale `|v_d|`. A central
        // difference with step `FD_STEP` then has a relative truncation error of order
        // `(FD_STEP / |v_d|)²` and a cancellation error of order `ε / (FD_STEP |v_d|)`, both
        // below `FD_TOLERANCE` only for `|v_d| ≳ 1e-3`; a step almost along φ (seed 986611758:
        // `|v_d| = 1e-4`, error 1e-4) is no test of the Jacobian, so the masked part must be at
        // least a tenth of the step (`|v_d| ≥ 2.5e-3`).
        let step = r1 - r0;
        prop_assume!(step[0].hypot(step[1]) >= 0.1 * step.norm());
        check_potential_jacobian(&spherical(), &r0, &r1)?;
        check_kinetic_jacobians(&spherical(), &r0, &SVector::from(v0), &r1, &SVector::from(v1))?;
    }

    #[test]
    fn kinetic_derivatives_match_finite_differences(
        q in spherical_configuration(),
        v in [-2.0..2.0f64, -2.0..2.0f64, -2.0..2.0f64],
    ) {
        check_inertia_gradient(&spherical(), &SVector::from(q), &SVector::from(v))?;
    }
}

/// The central-difference step of the Jacobian checks.
const FD_STEP: f64 = 1e-6;

/// The relative tolerance of the Jacobian checks: `O(FD_STEP²)` truncation plus
/// `O(ε/FD_STEP)` cancellation, with margin.
const FD_TOLERANCE: f64 = 1e-6;

/// Returns the central-difference Jacobian of `f` at `y`: column `j` is `∂f/∂y_j`.
fn central_jacobian<const N: usize, const R: usize>(
    f: impl Fn(&SVector<f64, N>) -> SVector<f64, R>,
    y: &SVector<f64, N>,
) -> SMatrix<f64, R, N> {
    let mut out = SMatrix::<f64, R, N>::zeros();
    for j in 0..N {
        let mut e = SVector::<f64, N>::zeros();
        e[j] = FD_STEP;
        out.set_column(j, &((f(&(y + e)) - f(&(y - e))) / (2.0 * FD_STEP)));
    }
    out
}

/// Fails unless `exact` and `approx` agree to `FD_TOLERANCE` relative to their size.
fn check_close<const R: usize, const C: usize>(
    what: &str,
    exact: &SMatrix<f64, R, C>,
    approx: &SMatrix<f64, R, C>,
) -> Result<(), TestCaseError> {
    let error = (exact - approx).amax();
    let scale = 1.0 + exact.amax();
    prop_assert!(
        error <= FD_TOLERANCE * scale,
        "{what}: error {error:e} (scale {scale:e})\nexact {exact}\nfinite differences {approx}"
    );
    Ok(())
}

fn check_kernel_jacobian(x: &SVector<f64, 3>, y: &SVector<f64, 3>) -> Result<(), TestCaseError> {
    let z = (x + y) * 0.5;
    let exact = gonzalez_jacobian(
        x,
        y,
        test_f(x),
        test_f(y),
        &test_grad(&z),
        &test_grad(y),
        &test_hess(&z),
    );
    let approx = central_jacobian(|y| test_discrete_gradient(x, y), y);
    check_close("∂D̄F/∂y", &exact, &approx)
}

fn check_potential_jacobian<Model: PotentialDiscreteGradientJacobian<3>>(
    model: &Model,
    q0: &SVector<f64, 3>,
    q1: &SVector<f64, 3>,
) -> Result<(), TestCaseError> {
    let mut exact = SMatrix::zeros();
    model.potential_discrete_gradient_jacobian(q0, q1, &mut exact);
    let approx = central_jacobian(
        |q1| {
            let mut out = SVector::zeros();
            model.potential_discrete_gradient(q0, q1, &mut out);
            out
        },
        q1,
    );
    check_close("∂D̄V/∂q1", &exact, &approx)
}

fn check_constraint_jacobians(
    q0: &SVector<f64, 4>,
    q1: &SVector<f64, 4>,
) -> Result<(), TestCaseError> {
    let model = DoublePendulum::default();
    let mut exact = [SMatrix::<f64, 4, 4>::zeros(); 2];
    model.constraint_discrete_gradient_jacobians(q0, q1, 0.0, &mut exact);
    for (k, exact_k) in exact.iter().enumerate() {
        let approx = central_jacobian(
            |q1| {
                let mut out = SMatrix::<f64, 2, 4>::zeros();
                model.constraint_discrete_gradient(q0, q1, 0.0, &mut out);
                out.row(k).transpose()
            },
            q1,
        );
        check_close("∂D̄g_k/∂q1", exact_k, &approx)?;
    }
    Ok(())
}

fn check_kinetic_jacobians<Model: KineticDiscreteGradient<3>>(
    model: &Model,
    q0: &SVector<f64, 3>,
    v0: &SVector<f64, 3>,
    q1: &SVector<f64, 3>,
    v1: &SVector<f64, 3>,
) -> Result<(), TestCaseError> {
    let mut exact = KineticJacobians::default();
    model.kinetic_discrete_gradient_jacobians(q0, v0, q1, v1, &mut exact);
    let gradients = |q1: &SVector<f64, 3>, v1: &SVector<f64, 3>| {
        let (mut dq, mut dv) = (SVector::zeros(), SVector::zeros());
        model.kinetic_discrete_gradient(q0, v0, q1, v1, &mut dq, &mut dv);
        (dq, dv)
    };
    let d1_q1 = central_jacobian(|q1| gradients(q1, v1).0, q1);
    let d1_v1 = central_jacobian(|v1| gradients(q1, v1).0, v1);
    let d2_q1 = central_jacobian(|q1| gradients(q1, v1).1, q1);
    let d2_v1 = central_jacobian(|v1| gradients(q1, v1).1, v1);
    check_close("∂D̄₁T/∂q1", &exact.d1_q1, &d1_q1)?;
    check_close("∂D̄₁T/∂v1", &exact.d1_v1, &d1_v1)?;
    check_close("∂D̄₂T/∂q1", &exact.d2_q1, &d2_q1)?;
    check_close("∂D̄₂T/∂v1", &exact.d2_v1, &d2_v1)
}

fn check_inertia_gradient<Model: InertiaGradient<3>>(
    model: &Model,
    q: &SVector<f64, 3>,
    v: &SVector<f64, 3>,
) -> Result<(), TestCaseError> {
    let mut gradient = SVector::zeros();
    let (mut qq, mut qv) = (SMatrix::zeros(), SMatrix::zeros());
    model.kinetic_gradient(q, v, &mut gradient);
    model.kinetic_hessians(q, v, &mut qq, &mut qv);
    let energy = |q: &SVector<f64, 3>| SVector::<f64, 1>::new(model.kinetic_energy(q, v));
    let approx = central_jacobian(energy, q).transpose();
    check_close("∂T/∂q", &gradient, &approx)?;
    let kinetic_gradient = |q: &SVector<f64, 3>, v: &SVector<f64, 3>| {
        let mut out = SVector::zeros();
        model.kinetic_gradient(q, v, &mut out);
        out
    };
    // Row i of ∂(∂T/∂q)/∂q is ∂²T/∂q_i∂q; row i of ∂(∂T/∂q)/∂v is ∂²T/∂q_i∂v.
    check_close(
        "∂²T/∂q²",
        &qq,
        &central_jacobian(|q| kinetic_gradient(q, v), q),
    )?;
    check_close(
        "∂²T/∂q∂v",
        &qv,
        &central_jacobian(|v| kinetic_gradient(q, v), v),
    )?;
    // ∂T/∂v = M v, so ∂²T/∂q∂v is also the transpose of ∂(M v)/∂q.
    let momentum = |q: &SVector<f64, 3>| {
        let mut m = SMatrix::zeros();
        model.mass_matrix(q, &mut m);
        m * v
    };
    check_close("∂(M v)/∂q", &qv.transpose(), &central_jacobian(momentum, q))
}

/// `D̄f(x, y) − ∇f(z)` is `O(|v|²)` all the way down: the safe limit does not amplify round-off.
#[test]
fn discrete_gradient_converges_to_the_midpoint_gradient() {
    let x = SVector::<f64, 3>::new(0.4, -0.3, 1.1);
    let d = SVector::<f64, 3>::new(0.3, -0.8, 0.5).normalize();
    let reference = {
        let s = 0.1;
        let y = x + d * s;
        (test_discrete_gradient(&x, &y) - test_grad(&((x + y) * 0.5))).norm() / (s * s)
    };
    assert!(
        reference > 1e-3,
        "the test function must have a visible correction"
    );
    let mut s = 0.1;
    while s > 1e-300 {
        let y = x + d * s;
        let z = (x + y) * 0.5;
        let discrete = test_discrete_gradient(&x, &y);
        assert!(
            discrete.iter().all(|c| c.is_finite()),
            "non-finite at |v| = {s:e}"
        );
        let error = (discrete - test_grad(&z)).norm();
        assert!(
            error <= 4.0 * reference * s * s,
            "|D̄F − ∇F(z)| = {error:e} at |v| = {s:e}"
        );
        s *= 0.3;
    }
    // y == x exactly: the midpoint gradient itself, for the models too.
    assert_eq!(test_discrete_gradient(&x, &x), test_grad(&x));
    let q = SVector::<f64, 3>::new(1.05, 0.9, 0.2);
    let mut out = SVector::zeros();
    let model = spherical();
    model.potential_discrete_gradient(&q, &q, &mut out);
    let mut grad = SVector::zeros();
    model.potential_gradient(&q, &mut grad);
    assert_eq!(out, grad);
    let mut jac = SMatrix::zeros();
    model.potential_discrete_gradient_jacobian(&q, &q, &mut jac);
    assert!(jac.iter().all(|c| c.is_finite()));
}

/// Without the mask, eq. 26 puts a component `c Δx₂/|v|²` along the coordinate `G` does not
/// depend on; with it the component is zero, and the masked gradient is still consistent:
/// `D̄G − ∇G(z) = O(|v|²)` down to the safe limit.
#[test]
fn masked_discrete_gradient_is_consistent_and_drops_the_cyclic_component() {
    let x = SVector::<f64, 3>::new(0.4, -0.3, 1.1);
    let d = SVector::<f64, 3>::new(0.3, -0.8, 0.5).normalize();
    let y = x + d * 0.1;
    let z = (x + y) * 0.5;
    let unmasked = gonzalez(&x, &y, cyclic_f(&x), cyclic_f(&y), &cyclic_grad(&z));
    assert!(
        unmasked[2].abs() > 1e-6,
        "eq. 26 has a cyclic component {:e}",
        unmasked[2]
    );
    let reference = (cyclic_discrete_gradient(&x, &y) - cyclic_grad(&z)).norm() / 0.01;
    assert!(reference > 1e-3, "the correction must be visible");
    let mut s = 0.1;
    while s > 1e-300 {
        let y = x + d * s;
        let z = (x + y) * 0.5;
        let discrete = cyclic_discrete_gradient(&x, &y);
        assert!(
            discrete.iter().all(|c| c.is_finite()),
            "non-finite at {s:e}"
        );
        assert_eq!(discrete[2], 0.0);
        let error = (discrete - cyclic_grad(&z)).norm();
        assert!(
            error <= 4.0 * reference * s * s,
            "|D̄G − ∇G(z)| = {error:e} at |v| = {s:e}"
        );
        s *= 0.3;
    }
    // A step along the cyclic coordinate alone: v_d = 0, G(y) = G(x), D̄G = ∇G(z).
    let along = x + SVector::<f64, 3>::new(0.0, 0.0, 0.7);
    let mid = (x + along) * 0.5;
    assert_eq!(cyclic_discrete_gradient(&x, &along), cyclic_grad(&mid));
    let jac = gonzalez_jacobian_masked(
        &x,
        &along,
        cyclic_f(&x),
        cyclic_f(&along),
        &cyclic_grad(&mid),
        &cyclic_grad(&along),
        &cyclic_hess(&mid),
        &CYCLIC_MASK,
    );
    assert_eq!(jac, cyclic_hess(&mid) * 0.5);
}

/// The spherical pendulum's discrete gradients of `T` and `V` vanish along the cyclic `φ`.
#[test]
fn spherical_pendulum_discrete_gradients_vanish_along_phi() {
    let model = spherical();
    let (q0, q1) = (
        SVector::<f64, 3>::new(1.05, 1.2, 0.3),
        SVector::<f64, 3>::new(1.1, 1.0, 0.9),
    );
    let (v0, v1) = (
        SVector::<f64, 3>::new(0.1, 1.0, 1.0),
        SVector::<f64, 3>::new(-0.2, 0.8, 1.3),
    );
    let mut dv = SVector::zeros();
    model.potential_discrete_gradient(&q0, &q1, &mut dv);
    let (mut d1, mut d2) = (SVector::zeros(), SVector::zeros());
    model.kinetic_discrete_gradient(&q0, &v0, &q1, &v1, &mut d1, &mut d2);
    assert_eq!((dv[2], d1[2]), (0.0, 0.0));
    let mut jacobians = KineticJacobians::default();
    model.kinetic_discrete_gradient_jacobians(&q0, &v0, &q1, &v1, &mut jacobians);
    assert!(jacobians.d1_q1.row(2).iter().all(|&c| c == 0.0));
    assert!(jacobians.d1_v1.row(2).iter().all(|&c| c == 0.0));
}

/// Inconsistent but finite arguments never produce NaN or infinity; NaN input propagates.
#[test]
fn kernel_is_total_for_finite_input() {
    let x = SVector::<f64, 2>::new(1.0, 2.0);
    let grad = SVector::<f64, 2>::new(3.0, -1.0);
    let hess = SMatrix::<f64, 2, 2>::identity();
    let cases = [
        (x + SVector::<f64, 2>::new(1e-170, 0.0), 0.0, 1.0),
        (x + SVector::<f64, 2>::new(1e-150, 0.0), 0.0, 1e10),
        (x + SVector::<f64, 2>::new(1e-150, 0.0), -f64::MAX, f64::MAX),
        (x, 0.0, 1.0),
        (x + SVector::<f64, 2>::new(1e-9, 1e-9), 5.0, 5.0),
    ];
    for (y, fx, fy) in cases {
        let out = gonzalez(&x, &y, fx, fy, &grad);
        assert!(out.iter().all(|c| c.is_finite()), "{out} for y = {y}");
        let jac = gonzalez_jacobian(&x, &y, fx, fy, &grad, &grad, &hess);
        assert!(jac.iter().all(|c| c.is_finite()), "{jac} for y = {y}");
    }
    let y = x + SVector::<f64, 2>::new(0.1, 0.0);
    assert!(gonzalez(&x, &y, f64::NAN, 1.0, &grad)[0].is_nan());
    assert!(gonzalez(&x, &y, 0.0, 1.0, &SVector::<f64, 2>::new(f64::NAN, 0.0))[0].is_nan());
}

/// For a constant mass matrix the partitioned gradients are `D̄₁T = 0`, `D̄₂T = M v^{n+½}`
/// (Proposition 5.5), and the Jacobian blocks are `0, 0, 0, M/2`.
#[test]
fn constant_mass_kinetic_gradients_are_the_midpoint_momentum() {
    let model = DoublePendulum {
        m1: 2.0,
        ..DoublePendulum::default()
    };
    let q0 = SVector::<f64, 4>::new(0.1, -1.0, 1.0, -2.0);
    let q1 = SVector::<f64, 4>::new(0.2, -0.9, 1.1, -2.2);
    let v0 = SVector::<f64, 4>::new(1.0, 0.5, -0.3, 0.2);
    let v1 = SVector::<f64, 4>::new(-0.4, 0.7, 0.1, 0.9);
    let (mut dq, mut dv) = (SVector::zeros(), SVector::zeros());
    model.kinetic_discrete_gradient(&q0, &v0, &q1, &v1, &mut dq, &mut dv);
    let mut m = SMatrix::zeros();
    model.mass_matrix(&q0, &mut m);
    assert_eq!(dq, SVector::<f64, 4>::zeros());
    assert!((dv - m * (v0 + v1) * 0.5).amax() < 1e-15);
    let mut blocks = KineticJacobians::default();
    model.kinetic_discrete_gradient_jacobians(&q0, &v0, &q1, &v1, &mut blocks);
    assert_eq!(blocks.d1_q1, SMatrix::<f64, 4, 4>::zeros());
    assert_eq!(blocks.d1_v1, SMatrix::<f64, 4, 4>::zeros());
    assert_eq!(blocks.d2_q1, SMatrix::<f64, 4, 4>::zeros());
    assert_eq!(blocks.d2_v1, m * 0.5);
}

/// A deterministic sweep that prints the worst directionality errors (run with
/// `--nocapture`), so that the margin below [`DIRECTIONALITY_TOLERANCE`] is on record.
#[test]
fn worst_case_directionality_sweep() {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut uniform = |lo: f64, hi: f64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        lo + (hi - lo) * ((state >> 11) as f64 / (1u64 << 53) as f64)
    };
    // Per quantity: the honest bound over all steps, the narrow bound over all steps and over
    // steps of at least NARROW_FROM.
    let mut worst = [[0.0f64; 3]; 3];
    let mut worst_kinetic = 0.0f64;
    let record = |slot: &mut [f64; 3], d: Directionality, scale: f64| {
        slot[0] = slot[0].max(d.honest);
        slot[1] = slot[1].max(d.narrow);
        if scale >= NARROW_FROM {
            slot[2] = slot[2].max(d.narrow);
        }
    };
    for i in 0..200_000 {
        let scale = STEP_SCALES[i % STEP_SCALES.len()];
        let q = [(); 4].map(|_| uniform(-2.0, 2.0));
        let d = [(); 4].map(|_| uniform(-1.0, 1.0));
        let (q0, q1) = pair(q, d, scale);
        let pendulum = DoublePendulum::default();
        record(
            &mut worst[0],
            potential_directionality(&pendulum, &q0, &q1),
            scale,
        );
        record(
            &mut worst[1],
            constraint_directionality(&pendulum, &q0, &q1),
            scale,
        );
        let r = [uniform(0.6, 1.5), uniform(0.3, 2.8), uniform(-3.0, 3.0)];
        let e = [(); 3].map(|_| uniform(-1.0, 1.0));
        let (r0, r1) = pair(r, e, scale);
        record(
            &mut worst[2],
            potential_directionality(&spherical(), &r0, &r1),
            scale,
        );
        let v0 = SVector::from([(); 3].map(|_| uniform(-2.0, 2.0)));
        let v1 = SVector::from([(); 3].map(|_| uniform(-2.0, 2.0)));
        worst_kinetic = worst_kinetic.max(kinetic_directionality(&spherical(), &r0, &v0, &r1, &v1));
    }
    println!("worst relative directionality errors (honest; narrow, all steps; narrow, |v| ≥ {NARROW_FROM}):");
    for (label, w) in [
        "V, double pendulum",
        "g_k, double pendulum",
        "V, spherical pendulum",
    ]
    .iter()
    .zip(worst)
    {
        println!("  {label:<22} {:.2e}  {:.2e}  {:.2e}", w[0], w[1], w[2]);
    }
    println!("  T, spherical (eq. 29)  {worst_kinetic:.2e}");
    assert!(worst
        .iter()
        .all(|w| w[0] <= DIRECTIONALITY_TOLERANCE && w[2] <= DIRECTIONALITY_TOLERANCE));
    assert!(worst_kinetic <= DIRECTIONALITY_TOLERANCE);
}

/// A long step along which `f` happens to be quadratic has `c = 0` (the midpoint rule is exact)
/// but `∂c/∂y ≠ 0`: the Jacobian must keep `v (∂c/∂y)ᵀ/|v|²` although the correction itself is
/// dropped. Regression cases for the kernel (`f = x₀² x₁` along `e₀`) and for the kinetic energy
/// of the spherical pendulum (quadratic in `r`) along a pure-`r` step.
#[test]
fn jacobians_keep_the_derivative_of_a_vanishing_correction() {
    let f = |x: &SVector<f64, 2>| x[0] * x[0] * x[1];
    let grad = |x: &SVector<f64, 2>| SVector::<f64, 2>::new(2.0 * x[0] * x[1], x[0] * x[0]);
    let hess =
        |x: &SVector<f64, 2>| SMatrix::<f64, 2, 2>::new(2.0 * x[1], 2.0 * x[0], 2.0 * x[0], 0.0);
    let x = SVector::<f64, 2>::new(0.3, 0.7);
    let y = SVector::<f64, 2>::new(0.8, 0.7);
    let z = (x + y) * 0.5;
    let exact = gonzalez_jacobian(&x, &y, f(&x), f(&y), &grad(&z), &grad(&y), &hess(&z));
    let approx = central_jacobian(
        |y| gonzalez(&x, y, f(&x), f(y), &grad(&((x + y) * 0.5))),
        &y,
    );
    // ∂D̄₀/∂y₁ = ½ H₀₁ + v₀ (∂c/∂y₁)/v₀² = z₀ + v₀/4 (∂c/∂y₁ = v₀²/4), c = 0.
    assert!((exact[(0, 1)] - (z[0] + 0.125)).abs() < 1e-14, "{exact}");
    check_close("∂D̄f/∂y", &exact, &approx).unwrap();

    let model = spherical();
    let q0 = SVector::<f64, 3>::new(0.6, 0.3, 0.0);
    let q1 = SVector::<f64, 3>::new(0.625, 0.3, 0.0);
    let v0 = SVector::<f64, 3>::zeros();
    for v1 in [
        SVector::<f64, 3>::new(0.0, 0.0, 1.25),
        SVector::<f64, 3>::new(0.4, -0.7, 1.25),
    ] {
        check_kinetic_jacobians(&model, &q0, &v0, &q1, &v1).unwrap();
        check_kinetic_jacobians(&model, &q0, &v1, &q1, &v0).unwrap();
    }
}
