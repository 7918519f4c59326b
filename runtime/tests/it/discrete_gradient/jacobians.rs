//! Every Newton Jacobian of the discrete gradients (kernel, masked kernel, potential,
//! constraint rows, kinetic energy) and the inertia gradient against central differences.

use super::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

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
