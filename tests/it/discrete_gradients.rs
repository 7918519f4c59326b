//! Gonzalez discrete gradients of *generated* models (Kinon–Betsch 2020, eq. 26–29): the
//! directionality property `D̄f(x, y)·(y − x) = f(y) − f(x)` to its round-off bound
//! ([`roundoff_bound`]) at random points, for the potential, every constraint row, and the
//! partitioned discrete gradient of a kinetic energy with a configuration-dependent mass matrix.

use mechanism::mechanism;
use mechanism::models::DoublePendulum;
use mechanism::runtime::{
    ConstraintDiscreteGradient, Holonomic, Inertia, InertiaGradient, KineticDiscreteGradient,
    Potential, PotentialDiscreteGradient, SMatrix, SVector,
};
use proptest::prelude::*;

mechanism! {
    /// The spherical spring pendulum of Kinon–Betsch §6.2, with gravity, on a cone.
    pub struct SpringPendulum {
        coordinates: [r, theta, phi],
        parameters: { m = 1.0, ea = 300.0, l0 = 1.0, g = 9.81 },
        kinetic: 0.5 * m * (dot(r).powi(2) + r.powi(2) * dot(theta).powi(2)
            + r.powi(2) * theta.sin().powi(2) * dot(phi).powi(2)),
        potential: 0.5 * ea * ((r.powi(2) - l0.powi(2)) / (2.0 * l0.powi(2))).powi(2)
            - m * g * r * theta.cos(),
        holonomic: { cone: theta - 0.3 * phi.sin() * r },
        integrators: [livens],
    }
}

/// `|a − b| ≤ bound`.
fn assert_directional(what: &str, lhs: f64, rhs: f64, bound: f64) {
    assert!(
        (lhs - rhs).abs() <= bound,
        "{what}: D̄f·Δ = {lhs:e} but f(y) − f(x) = {rhs:e} (bound {bound:e})"
    );
}

/// The round-off bound on `|D̄f·Δ − (f(y) − f(x))|` for a discrete gradient in `n` unknowns,
/// with `Δ = y − x` as the kernel forms it and `f(x)`, `f(y)` the very values it used.
///
/// `runtime::discrete_gradient` ("Safe limit") bounds the defect of a dropped correction by
/// `(n + 4) ε S`, `S = |f(x)| + |f(y)| + Σᵢ |∇ᵢf(z)| (|xᵢ| + |yᵢ|)` (`S` covers the cancellation
/// inside `f` as well as the products of `∇f(z)·Δ`). A kept correction `c Δ/|Δ|²` adds the
/// roundings of `c = f(y) − f(x) − ∇f(z)·Δ` (at most `(n + 2) ε S`), of `c/|Δ|²` and of the sum
/// `D̄f·Δ` formed here (`(n + 1) ε Σᵢ |D̄ᵢf Δᵢ|`); `2 (n + 4) ε (S + Σᵢ |D̄ᵢf Δᵢ|)` covers both
/// cases. It is a bound from the operation count, not from observed runs: a defect above it is a
/// bug, whatever the seed.
fn roundoff_bound(n: usize, s: f64, dot_abs: f64) -> f64 {
    2.0 * (n as f64 + 4.0) * f64::EPSILON * (s + dot_abs)
}

/// `S = |f(x)| + |f(y)| + Σᵢ |∇ᵢf(z)| (|xᵢ| + |yᵢ|)` of [`roundoff_bound`].
fn rounding_scale<const N: usize>(
    fx: f64,
    fy: f64,
    grad_mid: &SVector<f64, N>,
    x: &SVector<f64, N>,
    y: &SVector<f64, N>,
) -> f64 {
    fx.abs() + fy.abs() + grad_mid.abs().dot(&(x.abs() + y.abs()))
}

fn point4() -> impl Strategy<Value = SVector<f64, 4>> {
    prop::array::uniform4(-2.0..2.0f64).prop_map(SVector::from)
}

fn step4() -> impl Strategy<Value = SVector<f64, 4>> {
    (prop::array::uniform4(-1.0..1.0f64), -8.0..0.0f64)
        .prop_map(|(d, e)| SVector::from(d) * 10f64.powf(e))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The pendulum's V is linear and its g quadratic, for which the midpoint gradient alone is
    /// already directional: this checks the plumbing; the spring pendulum below checks the
    /// correction term of eq. 26.
    #[test]
    fn double_pendulum_potential_and_constraints_are_directional(x in point4(), d in step4()) {
        let model = DoublePendulum::default();
        let y = x + d;
        // The step the kernel sees: `y − x` differs from `d` by the rounding of `x + d`.
        let d = y - x;
        let z = (x + y) * 0.5;
        let mut dg = SVector::<f64, 4>::zeros();
        model.potential_discrete_gradient(&x, &y, &mut dg);
        let (vx, vy) = (model.potential(&x), model.potential(&y));
        let mut grad = SVector::<f64, 4>::zeros();
        model.potential_gradient(&z, &mut grad);
        let bound = roundoff_bound(4, rounding_scale(vx, vy, &grad, &x, &y), dg.abs().dot(&d.abs()));
        assert_directional("V", dg.dot(&d), vy - vx, bound);

        let mut rows = SMatrix::<f64, 2, 4>::zeros();
        model.constraint_discrete_gradient(&x, &y, 0.0, &mut rows);
        let (mut gx, mut gy) = (SVector::<f64, 2>::zeros(), SVector::<f64, 2>::zeros());
        model.constraints(&x, 0.0, &mut gx);
        model.constraints(&y, 0.0, &mut gy);
        let mut jac = SMatrix::<f64, 2, 4>::zeros();
        model.constraint_jacobian(&z, 0.0, &mut jac);
        for k in 0..2 {
            let row = rows.row(k).transpose();
            let grad = jac.row(k).transpose();
            let bound = roundoff_bound(
                4,
                rounding_scale(gx[k], gy[k], &grad, &x, &y),
                row.abs().dot(&d.abs()),
            );
            assert_directional("g", row.dot(&d), gy[k] - gx[k], bound);
        }
    }

    #[test]
    fn spring_pendulum_discrete_gradients_are_directional(
        q0 in (0.8..1.2f64, 0.3..2.8f64, -3.0..3.0f64),
        v0 in prop::array::uniform3(-2.0..2.0f64),
        dq in prop::array::uniform3(-0.2..0.2f64),
        dv in prop::array::uniform3(-1.0..1.0f64),
    ) {
        let model = SpringPendulum::default();
        let q0 = SVector::<f64, 3>::new(q0.0, q0.1, q0.2);
        let v0 = SVector::from(v0);
        let (q1, v1) = (q0 + SVector::from(dq), v0 + SVector::from(dv));
        // The steps the kernels see.
        let (dq, dv) = (q1 - q0, v1 - v0);
        let z = (q0 + q1) * 0.5;

        // Eq. 29 telescopes two Gonzalez directionalities in q (at v0 and at v1, each within
        // its bound) and the exact midpoint rule in v (rounding only, `|D̄₂T|·|Δv|`).
        let (mut d1, mut d2) = (SVector::<f64, 3>::zeros(), SVector::<f64, 3>::zeros());
        model.kinetic_discrete_gradient(&q0, &v0, &q1, &v1, &mut d1, &mut d2);
        let (t0, t1) = (model.kinetic_energy(&q0, &v0), model.kinetic_energy(&q1, &v1));
        let mut s = 0.0;
        for w in [v0, v1] {
            let mut grad = SVector::<f64, 3>::zeros();
            model.kinetic_gradient(&z, &w, &mut grad);
            s += rounding_scale(model.kinetic_energy(&q0, &w), model.kinetic_energy(&q1, &w), &grad, &q0, &q1);
        }
        let dot_abs = d1.abs().dot(&dq.abs()) + d2.abs().dot(&dv.abs());
        assert_directional("T (eq. 29)", d1.dot(&dq) + d2.dot(&dv), t1 - t0, roundoff_bound(6, s, dot_abs));

        let mut dg = SVector::<f64, 3>::zeros();
        model.potential_discrete_gradient(&q0, &q1, &mut dg);
        let (vx, vy) = (model.potential(&q0), model.potential(&q1));
        let mut grad = SVector::<f64, 3>::zeros();
        model.potential_gradient(&z, &mut grad);
        let bound = roundoff_bound(3, rounding_scale(vx, vy, &grad, &q0, &q1), dg.abs().dot(&dq.abs()));
        assert_directional("V", dg.dot(&dq), vy - vx, bound);

        let mut row = SMatrix::<f64, 1, 3>::zeros();
        model.constraint_discrete_gradient(&q0, &q1, 0.0, &mut row);
        let (mut gx, mut gy) = (SVector::<f64, 1>::zeros(), SVector::<f64, 1>::zeros());
        model.constraints(&q0, 0.0, &mut gx);
        model.constraints(&q1, 0.0, &mut gy);
        let mut jac = SMatrix::<f64, 1, 3>::zeros();
        model.constraint_jacobian(&z, 0.0, &mut jac);
        let (row, grad) = (row.transpose(), jac.transpose());
        let bound = roundoff_bound(3, rounding_scale(gx[0], gy[0], &grad, &q0, &q1), row.abs().dot(&dq.abs()));
        assert_directional("g", row.dot(&dq), gy[0] - gx[0], bound);
    }
}
