//! The discrete gradients' properties: directionality (eq. 27, 29) for the kernel, the masked
//! kernel, the potential, the constraint rows and the partitioned kinetic energy; consistency
//! with the midpoint gradient down to the safe limit; masks; totality.

use super::*;

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
