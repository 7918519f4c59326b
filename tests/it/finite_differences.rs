//! Generated derivatives of the `Driven` model (configuration-dependent mass, a rheonomic
//! constraint, dissipation, forces) and of the `Exotic` model (every function of the
//! language) against central finite differences of the generated values themselves:
//! independent of the symbolic derivation.

include!("../models/exotic.rs");

use mechanism::runtime::{
    Dissipation, Forces, Holonomic, HolonomicKinematics, Inertia, InertiaGradient, SMatrix, SVector,
};
use proptest::prelude::*;

const STEP: f64 = 1e-6;

/// Central difference of `f` along coordinate `j` of `x`.
fn partial<const R: usize>(
    f: impl Fn(&SVector<f64, 3>) -> SVector<f64, R>,
    x: &SVector<f64, 3>,
    j: usize,
) -> SVector<f64, R> {
    let mut e = SVector::<f64, 3>::zeros();
    e[j] = STEP;
    (f(&(x + e)) - f(&(x - e))) / (2.0 * STEP)
}

fn assert_close<const R: usize, const C: usize>(
    what: &str,
    a: &SMatrix<f64, R, C>,
    b: &SMatrix<f64, R, C>,
) {
    let scale = 1.0 + b.amax();
    assert!(
        (a - b).amax() <= 1e-6 * scale,
        "{what}: generated {a} vs finite differences {b}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn generated_derivatives_match_finite_differences(
        q in prop::array::uniform3(-0.6..0.6f64),
        v in prop::array::uniform3(-2.0..2.0f64),
        t in 0.0..3.0f64,
    ) {
        let model = Driven::default();
        let (q, v) = (SVector::from(q), SVector::from(v));

        // ∂T/∂q, ∂²T/∂q², ∂²T/∂q∂v.
        let mut grad = SVector::<f64, 3>::zeros();
        model.kinetic_gradient(&q, &v, &mut grad);
        let kinetic = |x: &SVector<f64, 3>| SVector::<f64, 1>::new(model.kinetic_energy(x, &v));
        let fd = SVector::<f64, 3>::from_fn(|j, _| partial(kinetic, &q, j)[0]);
        assert_close("∂T/∂q", &grad, &fd);
        let (mut qq, mut qv) = (SMatrix::<f64, 3, 3>::zeros(), SMatrix::<f64, 3, 3>::zeros());
        model.kinetic_hessians(&q, &v, &mut qq, &mut qv);
        let gradient_in_q = |x: &SVector<f64, 3>| {
            let mut g = SVector::<f64, 3>::zeros();
            model.kinetic_gradient(x, &v, &mut g);
            g
        };
        let gradient_in_v = |w: &SVector<f64, 3>| {
            let mut g = SVector::<f64, 3>::zeros();
            model.kinetic_gradient(&q, w, &mut g);
            g
        };
        assert_close("∂²T/∂q²", &qq, &SMatrix::<f64, 3, 3>::from_fn(|i, j| partial(gradient_in_q, &q, j)[i]));
        assert_close("∂²T/∂q∂v", &qv, &SMatrix::<f64, 3, 3>::from_fn(|i, j| partial(gradient_in_v, &v, j)[i]));

        // ġ = G v + g_t along q(s) = q + v s at time t + s.
        let mut jac = SMatrix::<f64, 1, 3>::zeros();
        model.constraint_jacobian(&q, t, &mut jac);
        let mut g_t = SVector::<f64, 1>::zeros();
        model.constraint_time_derivative(&q, t, &mut g_t);
        let g_at = |s: f64| {
            let mut g = SVector::<f64, 1>::zeros();
            model.constraints(&(q + v * s), t + s, &mut g);
            g
        };
        let g_dot = (g_at(STEP) - g_at(-STEP)) / (2.0 * STEP);
        assert_close("ġ = G v + g_t", &(jac * v + g_t), &g_dot);

        // Dissipation and force Jacobians.
        let (mut dq, mut dv) = (SMatrix::<f64, 3, 3>::zeros(), SMatrix::<f64, 3, 3>::zeros());
        model.dissipation_jacobians(&q, &v, &mut dq, &mut dv);
        let damping_q = |x: &SVector<f64, 3>| { let mut f = SVector::<f64, 3>::zeros(); model.dissipation_force(x, &v, &mut f); f };
        let damping_v = |w: &SVector<f64, 3>| { let mut f = SVector::<f64, 3>::zeros(); model.dissipation_force(&q, w, &mut f); f };
        assert_close("∂f_R/∂q", &dq, &SMatrix::<f64, 3, 3>::from_fn(|i, j| partial(damping_q, &q, j)[i]));
        assert_close("∂f_R/∂v", &dv, &SMatrix::<f64, 3, 3>::from_fn(|i, j| partial(damping_v, &v, j)[i]));
        model.force_jacobians(&q, &v, t, &mut dq, &mut dv);
        let force_q = |x: &SVector<f64, 3>| { let mut f = SVector::<f64, 3>::zeros(); model.force(x, &v, t, &mut f); f };
        let force_v = |w: &SVector<f64, 3>| { let mut f = SVector::<f64, 3>::zeros(); model.force(&q, w, t, &mut f); f };
        assert_close("∂f/∂q", &dq, &SMatrix::<f64, 3, 3>::from_fn(|i, j| partial(force_q, &q, j)[i]));
        assert_close("∂f/∂v", &dv, &SMatrix::<f64, 3, 3>::from_fn(|i, j| partial(force_v, &v, j)[i]));
    }
}

/// The dissipative force is `−∂R/∂v` of the `R` written in `models/exotic.rs`.
#[test]
fn dissipation_force_is_minus_the_velocity_gradient_of_the_rayleigh_function() {
    let model = Driven::default();
    let (q, v) = (
        SVector::<f64, 3>::new(0.3, -0.2, 0.1),
        SVector::<f64, 3>::new(0.5, 1.5, -2.0),
    );
    let rayleigh = |w: &SVector<f64, 3>| {
        SVector::<f64, 1>::new(
            0.5 * model.c * (w[0].powi(2) + q[0].powi(2) * w[1].powi(2)) + 0.1 * w[2].powi(4),
        )
    };
    let mut f = SVector::<f64, 3>::zeros();
    model.dissipation_force(&q, &v, &mut f);
    let fd = SVector::<f64, 3>::from_fn(|j, _| -partial(rayleigh, &v, j)[0]);
    assert_close("−∂R/∂v", &f, &fd);
}

mechanism::mechanism! {
    /// Two nonholonomic rows nonlinear in `q`, for `dlda`'s `∂(A(q) v)/∂q`.
    pub struct Rolling {
        coordinates: [x, y, theta],
        parameters: { r = 0.7 },
        kinetic: 0.5 * (dot(x).powi(2) + dot(y).powi(2) + dot(theta).powi(2)),
        potential: 0.0,
        nonholonomic: {
            roll_x: dot(x) - r * theta.cos() * dot(theta),
            skate: dot(x) * (theta + y).sin() - dot(y) * x.cos() * theta.cos(),
        },
        integrators: [dlda],
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn nonholonomic_velocity_jacobian_matches_finite_differences(
        q in prop::array::uniform3(-1.5..1.5f64),
        v in prop::array::uniform3(-2.0..2.0f64),
    ) {
        use mechanism::runtime::{Nonholonomic, NonholonomicDerivative};
        let model = Rolling::default();
        let (q, v) = (SVector::from(q), SVector::from(v));
        let mut jac = SMatrix::<f64, 2, 3>::zeros();
        model.nonholonomic_velocity_jacobian(&q, &v, &mut jac);
        let rows = |x: &SVector<f64, 3>| {
            let mut a = SMatrix::<f64, 2, 3>::zeros();
            model.nonholonomic_matrix(x, &mut a);
            a * v
        };
        let fd = SMatrix::<f64, 2, 3>::from_fn(|i, j| partial(rows, &q, j)[i]);
        assert_close("∂(A v)/∂q", &jac, &fd);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// `Exotic` uses every function of the language (`atan2`, `tanh`, `sinh`, `cosh`, `asin`,
    /// `acos`, `atan`, `log` among them) in its potential and an `atan2` in a constraint.
    /// Central differences with step `STEP = 1e-6` err by at most `STEP²/6 · |f'''|` plus
    /// `ε |f| / STEP`; on `[-0.6, 0.6]³` both the values (|f| < 50) and the third derivatives
    /// (< 1e3) are small, so the error is below 2e-8, well inside the `1e-6` of `assert_close`.
    #[test]
    fn exotic_derivatives_match_finite_differences(q in prop::array::uniform3(-0.6..0.6f64)) {
        use mechanism::runtime::{Potential, PotentialHessian};
        let model = Exotic::default();
        let q = SVector::from(q);
        let (mut grad, mut hess) = (SVector::<f64, 3>::zeros(), SMatrix::<f64, 3, 3>::zeros());
        model.potential_gradient_hessian(&q, &mut grad, &mut hess);
        let value = |x: &SVector<f64, 3>| SVector::<f64, 1>::new(model.potential(x));
        assert_close("∇V", &grad, &SVector::<f64, 3>::from_fn(|j, _| partial(value, &q, j)[0]));
        let gradient = |x: &SVector<f64, 3>| {
            let (mut g, mut h) = (SVector::<f64, 3>::zeros(), SMatrix::<f64, 3, 3>::zeros());
            model.potential_gradient_hessian(x, &mut g, &mut h);
            g
        };
        assert_close("∇²V", &hess, &SMatrix::<f64, 3, 3>::from_fn(|i, j| partial(gradient, &q, j)[i]));
        let (mut g, mut jac) = (SVector::<f64, 2>::zeros(), SMatrix::<f64, 2, 3>::zeros());
        model.constraints_and_jacobian(&q, 0.0, &mut g, &mut jac);
        let rows = |x: &SVector<f64, 3>| {
            let mut g = SVector::<f64, 2>::zeros();
            model.constraints(x, 0.0, &mut g);
            g
        };
        assert_close("G", &jac, &SMatrix::<f64, 2, 3>::from_fn(|i, j| partial(rows, &q, j)[i]));
    }
}
