//! Gonzalez discrete gradients of *generated* models (Kinon–Betsch 2020, eq. 26–29): the
//! directionality property `D̄f(x, y)·(y − x) = f(y) − f(x)` to 1e-13 relative at random points,
//! for the potential, every constraint row, and the partitioned discrete gradient of a kinetic
//! energy with a configuration-dependent mass matrix.

use mechanism::mechanism;
use mechanism::models::DoublePendulum;
use mechanism::runtime::{
    ConstraintDiscreteGradient, Holonomic, Inertia, KineticDiscreteGradient, Potential,
    PotentialDiscreteGradient, SMatrix, SVector,
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

/// `|a − b| ≤ 1e-13 · scale`, where `scale` bounds the magnitudes that cancel.
fn assert_directional(what: &str, lhs: f64, rhs: f64, scale: f64) {
    assert!(
        (lhs - rhs).abs() <= 1e-13 * scale,
        "{what}: D̄f·Δ = {lhs:e} but f(y) − f(x) = {rhs:e} (scale {scale:e})"
    );
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
        let mut dg = SVector::<f64, 4>::zeros();
        model.potential_discrete_gradient(&x, &y, &mut dg);
        let (vx, vy) = (model.potential(&x), model.potential(&y));
        assert_directional("V", dg.dot(&d), vy - vx, vx.abs() + vy.abs() + dg.abs().dot(&d.abs()));

        let mut rows = SMatrix::<f64, 2, 4>::zeros();
        model.constraint_discrete_gradient(&x, &y, 0.0, &mut rows);
        let (mut gx, mut gy) = (SVector::<f64, 2>::zeros(), SVector::<f64, 2>::zeros());
        model.constraints(&x, 0.0, &mut gx);
        model.constraints(&y, 0.0, &mut gy);
        for k in 0..2 {
            let row = rows.row(k).transpose();
            // Each g_k cancels an l² of order 1 inside its own evaluation; that rounding is
            // part of the scale (see `runtime::discrete_gradient`).
            let scale = gx[k].abs() + gy[k].abs() + row.abs().dot(&d.abs()) + 8.0 * (1.0 + x.norm_squared() + y.norm_squared());
            assert_directional("g", row.dot(&d), gy[k] - gx[k], scale);
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
        let (v0, dq, dv) = (SVector::from(v0), SVector::from(dq), SVector::from(dv));
        let (q1, v1) = (q0 + dq, v0 + dv);

        let (mut d1, mut d2) = (SVector::<f64, 3>::zeros(), SVector::<f64, 3>::zeros());
        model.kinetic_discrete_gradient(&q0, &v0, &q1, &v1, &mut d1, &mut d2);
        let (t0, t1) = (model.kinetic_energy(&q0, &v0), model.kinetic_energy(&q1, &v1));
        assert_directional(
            "T (eq. 29)",
            d1.dot(&dq) + d2.dot(&dv),
            t1 - t0,
            t0.abs() + t1.abs() + d1.abs().dot(&dq.abs()) + d2.abs().dot(&dv.abs()),
        );

        let mut dg = SVector::<f64, 3>::zeros();
        model.potential_discrete_gradient(&q0, &q1, &mut dg);
        let (vx, vy) = (model.potential(&q0), model.potential(&q1));
        assert_directional("V", dg.dot(&dq), vy - vx, vx.abs() + vy.abs() + dg.abs().dot(&dq.abs()));

        let mut row = SMatrix::<f64, 1, 3>::zeros();
        model.constraint_discrete_gradient(&q0, &q1, 0.0, &mut row);
        let (mut gx, mut gy) = (SVector::<f64, 1>::zeros(), SVector::<f64, 1>::zeros());
        model.constraints(&q0, 0.0, &mut gx);
        model.constraints(&q1, 0.0, &mut gy);
        let row = row.transpose();
        assert_directional("g", row.dot(&dq), gy[0] - gx[0], gx[0].abs() + gy[0].abs() + row.abs().dot(&dq.abs()) + 4.0);
    }
}
