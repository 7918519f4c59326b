//! Generated code against the symbolic interpreter: the models in `models/exotic.rs` are
//! compiled by `mechanism!` and, from the same source text, run through the pipeline's `derive`
//! stage without simplification and evaluated by `mechanism_cas::eval`. Any error in
//! simplification, common-subexpression sharing or code emission shows up as a mismatch.
//! The constraint acceleration bias is also checked against finite differences in time, which
//! does not go through the symbolic derivation at all.

include!("../models/exotic.rs");

use std::collections::HashMap;

use mechanism::runtime::{
    Dissipation, Forces, Holonomic, HolonomicHessians, HolonomicKinematics, Inertia,
    InertiaGradient, Nonholonomic, PenalizedHessian, PenalizedPotential, PenalizedThirdDerivative,
    Potential, PotentialHessian, PotentialThirdDerivative, SMatrix, SVector,
};
use mechanism_cas::{eval, Id, Symbol};
use mechanism_dsl::derive::{derive, Derived};
use mechanism_dsl::model::Model;
use mechanism_dsl::plan::Plan;
use proptest::prelude::*;

const SOURCE: &str = include_str!("../models/exotic.rs");

/// Runs the DSL pipeline up to (not including) simplification on the `index`-th model.
fn interpreted(index: usize) -> (Model, Derived) {
    let file = syn::parse_file(SOURCE).expect("models/exotic.rs parses");
    let Some(syn::Item::Macro(item)) = file.items.get(index) else {
        panic!("models/exotic.rs has no mechanism! invocation number {index}");
    };
    let ast = syn::parse2(item.mac.tokens.clone()).expect("the model parses");
    let mut model = mechanism_dsl::validate::validate(&ast).expect("the model is valid");
    let plan = Plan::for_model(&model);
    let derived = derive(&mut model, &plan);
    (model, derived)
}

/// Compares generated numbers with the interpreter at one point.
struct Check<'a> {
    model: &'a Model,
    values: HashMap<Symbol, f64>,
}

impl<'a> Check<'a> {
    fn new(
        model: &'a Model,
        q: [f64; 3],
        v: [f64; 3],
        a: [f64; 3],
        p: [f64; 3],
        t: f64,
        omega: f64,
    ) -> Self {
        let s = &model.symbols;
        let mut values = HashMap::new();
        for i in 0..3 {
            values.insert(s.q[i], q[i]);
            values.insert(s.v[i], v[i]);
            values.insert(s.a[i], a[i]);
            values.insert(s.p[i], p[i]);
        }
        values.insert(s.t, t);
        values.insert(s.omega, omega);
        Check { model, values }
    }

    fn scalar(&self, what: &str, generated: f64, id: Id) {
        let interpreted = eval(&self.model.store, id, &|s| self.values.get(&s).copied())
            .expect("every symbol is bound");
        let tolerance = 1e-12 * (1.0 + interpreted.abs());
        assert!(
            (generated - interpreted).abs() <= tolerance,
            "{what}: generated {generated} vs interpreted {interpreted}"
        );
    }

    fn vector<const R: usize>(&self, what: &str, generated: &SVector<f64, R>, ids: &[Id]) {
        assert_eq!(ids.len(), R, "{what}");
        for (i, &id) in ids.iter().enumerate() {
            self.scalar(&format!("{what}[{i}]"), generated[i], id);
        }
    }

    fn matrix<const R: usize, const C: usize>(
        &self,
        what: &str,
        generated: &SMatrix<f64, R, C>,
        ids: &[Vec<Id>],
    ) {
        assert_eq!(ids.len(), R, "{what}");
        for (i, row) in ids.iter().enumerate() {
            for (j, &id) in row.iter().enumerate() {
                self.scalar(&format!("{what}[({i}, {j})]"), generated[(i, j)], id);
            }
        }
    }
}

fn vec3(x: [f64; 3]) -> SVector<f64, 3> {
    SVector::from(x)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn exotic_matches_interpreter(
        q in prop::array::uniform3(-0.6..0.6f64),
        v in prop::array::uniform3(-2.0..2.0f64),
        a in prop::array::uniform3(-2.0..2.0f64),
        p in (0.5..2.0f64, 0.2..1.5f64, 1.0..3.0f64),
        omega in 1.0..30.0f64,
    ) {
        let (model, d) = interpreted(0);
        let check = Check::new(&model, q, v, a, [p.0, p.1, p.2], 0.0, omega);
        let generated = Exotic { k: p.0, c: p.1, r: p.2 };
        let (q, v, a) = (vec3(q), vec3(v), vec3(a));

        let mut m3 = SMatrix::<f64, 3, 3>::zeros();
        let mut v3 = SVector::<f64, 3>::zeros();
        generated.mass_matrix(&q, &mut m3);
        check.matrix("mass", &m3, &d.mass);
        check.scalar("kinetic", generated.kinetic_energy(&q, &v), d.kinetic);
        check.scalar("potential", generated.potential(&q), d.potential.value);
        generated.potential_gradient_hessian(&q, &mut v3, &mut m3);
        check.vector("gradient", &v3, &d.potential.gradient);
        check.matrix("hessian", &m3, d.potential.hessian.as_ref().unwrap());
        generated.potential_third_contraction(&q, &a, &mut v3);
        check.vector("third", &v3, d.potential.third.as_ref().unwrap());
        let mut g = SVector::<f64, 2>::zeros();
        let mut jac = SMatrix::<f64, 2, 3>::zeros();
        generated.constraints_and_jacobian(&q, 0.0, &mut g, &mut jac);
        check.vector("constraints", &g, &d.constraints);
        check.matrix("jacobian", &jac, &d.jacobian);
        let w = d.penalized.as_ref().expect("zs runs the penalty");
        check.scalar("penalized", generated.penalized_potential(omega, &q), w.value);
        generated.penalized_potential_gradient_hessian(omega, &q, &mut v3, &mut m3);
        check.vector("penalized gradient", &v3, &w.gradient);
        check.matrix("penalized hessian", &m3, w.hessian.as_ref().unwrap());
        generated.penalized_potential_third_contraction(omega, &q, &a, &mut v3);
        check.vector("penalized third", &v3, w.third.as_ref().unwrap());
    }

    #[test]
    fn driven_matches_interpreter(
        q in prop::array::uniform3(-0.6..0.6f64),
        v in prop::array::uniform3(-2.0..2.0f64),
        p in (0.5..2.0f64, 0.2..1.5f64, 1.0..3.0f64),
        t in 0.0..3.0f64,
    ) {
        let (model, d) = interpreted(1);
        let check = Check::new(&model, q, v, [0.0; 3], [p.0, p.1, p.2], t, 1.0);
        let generated = Driven { k: p.0, c: p.1, w: p.2 };
        let (q, v) = (vec3(q), vec3(v));

        let mut m3 = SMatrix::<f64, 3, 3>::zeros();
        let mut n3 = SMatrix::<f64, 3, 3>::zeros();
        let mut v3 = SVector::<f64, 3>::zeros();
        generated.mass_matrix(&q, &mut m3);
        check.matrix("mass", &m3, &d.mass);
        check.scalar("kinetic", generated.kinetic_energy(&q, &v), d.kinetic);
        let second = d.second_order.as_ref().expect("rk needs ∂T/∂q");
        generated.kinetic_gradient(&q, &v, &mut v3);
        check.vector("kinetic gradient", &v3, &second.kinetic_gradient);
        generated.kinetic_hessians(&q, &v, &mut m3, &mut n3);
        check.matrix("kinetic qq", &m3, &second.kinetic_qq);
        check.matrix("kinetic qv", &n3, &second.kinetic_qv);

        let mut g = SVector::<f64, 1>::zeros();
        let mut jac = SMatrix::<f64, 1, 3>::zeros();
        generated.constraints_and_jacobian(&q, t, &mut g, &mut jac);
        check.vector("constraints", &g, &d.constraints);
        check.matrix("jacobian", &jac, &d.jacobian);
        let kinematics = d.kinematics.as_ref().expect("rk needs kinematics");
        generated.constraint_time_derivative(&q, t, &mut g);
        check.vector("g_t", &g, &kinematics.time_derivative);
        generated.constraint_acceleration_bias(&q, &v, t, &mut g);
        check.vector("acceleration bias", &g, &kinematics.acceleration_bias);

        let dissipation = d.dissipation.as_ref().expect("the model has dissipation");
        generated.dissipation_force(&q, &v, &mut v3);
        check.vector("dissipation force", &v3, &dissipation.value);
        generated.dissipation_jacobians(&q, &v, &mut m3, &mut n3);
        check.matrix("dissipation dq", &m3, &dissipation.dq);
        check.matrix("dissipation dv", &n3, &dissipation.dv);
        let forces = d.forces.as_ref().expect("the model has forces");
        generated.force(&q, &v, t, &mut v3);
        check.vector("force", &v3, &forces.value);
        generated.force_jacobians(&q, &v, t, &mut m3, &mut n3);
        check.matrix("force dq", &m3, &forces.dq);
        check.matrix("force dv", &n3, &forces.dv);
    }

    #[test]
    fn skating_matches_interpreter(
        q in prop::array::uniform3(-0.6..0.6f64),
        p in (0.5..2.0f64, 1.0..3.0f64, 0.1..1.0f64),
        t in 0.0..3.0f64,
    ) {
        let (model, d) = interpreted(3);
        let check = Check::new(&model, q, [0.0; 3], [0.0; 3], [p.0, p.1, p.2], t, 1.0);
        let generated = Skating { k: p.0, w: p.1, c: p.2 };
        let q = vec3(q);
        let (matrix, drive) = d.nonholonomic.as_ref().expect("the model has a nonholonomic row");
        let mut a = SMatrix::<f64, 1, 3>::zeros();
        generated.nonholonomic_matrix(&q, &mut a);
        check.matrix("A", &a, matrix);
        let mut wv = SVector::<f64, 1>::zeros();
        generated.nonholonomic_drive(t, &mut wv);
        check.vector("w", &wv, drive);
    }

    /// `g̈ = G q̈ + bias` along any path `q(s) = q + v s + ½ a s²`: the bias, computed
    /// symbolically, must match a central second difference of `g` in time.
    #[test]
    fn acceleration_bias_matches_finite_differences(
        q in prop::array::uniform3(-0.6..0.6f64),
        v in prop::array::uniform3(-2.0..2.0f64),
        acc in prop::array::uniform3(-2.0..2.0f64),
        t in 0.0..3.0f64,
    ) {
        let model = Driven::default();
        let (q, v, acc) = (vec3(q), vec3(v), vec3(acc));
        let g_at = |s: f64| {
            let mut g = SVector::<f64, 1>::zeros();
            model.constraints(&(q + v * s + acc * (0.5 * s * s)), t + s, &mut g);
            g
        };
        let step = 1e-4;
        let second_difference = (g_at(step) - g_at(0.0) * 2.0 + g_at(-step)) / (step * step);
        let mut jac = SMatrix::<f64, 1, 3>::zeros();
        model.constraint_jacobian(&q, t, &mut jac);
        let mut bias = SVector::<f64, 1>::zeros();
        model.constraint_acceleration_bias(&q, &v, t, &mut bias);
        let predicted = jac * acc + bias;
        prop_assert!((second_difference - predicted).amax() < 1e-5 * (1.0 + predicted.amax()),
            "finite differences {second_difference} vs G a + bias {predicted}");
    }

    #[test]
    fn curved_matches_interpreter(
        q in (0.5..1.5f64, 0.2..1.4f64, -1.0..1.0f64),
        v in prop::array::uniform3(-2.0..2.0f64),
    ) {
        let (model, d) = interpreted(2);
        let q = [q.0, q.1, q.2];
        let check = Check::new(&model, q, v, [0.0; 3], [1.0, 300.0, 1.0], 0.0, 1.0);
        let generated = Curved::default();
        let (q, v) = (vec3(q), vec3(v));
        let mut m3 = SMatrix::<f64, 3, 3>::zeros();
        let mut n3 = SMatrix::<f64, 3, 3>::zeros();
        let mut v3 = SVector::<f64, 3>::zeros();
        generated.potential_gradient_hessian(&q, &mut v3, &mut m3);
        check.vector("gradient", &v3, &d.potential.gradient);
        check.matrix("hessian", &m3, d.potential.hessian.as_ref().unwrap());
        let second = d.second_order.as_ref().expect("livens needs ∂T/∂q");
        generated.kinetic_gradient(&q, &v, &mut v3);
        check.vector("kinetic gradient", &v3, &second.kinetic_gradient);
        generated.kinetic_hessians(&q, &v, &mut m3, &mut n3);
        check.matrix("kinetic qq", &m3, &second.kinetic_qq);
        check.matrix("kinetic qv", &n3, &second.kinetic_qv);
        let mut hessians = [SMatrix::<f64, 3, 3>::zeros(); 1];
        generated.constraint_hessians(&q, 0.0, &mut hessians);
        check.matrix("constraint hessian", &hessians[0], &second.constraint_hessians[0]);
    }
}

/// The integrators a model is compiled for decide what is generated (checked at compile time).
#[test]
fn capabilities_follow_the_integrators() {
    const {
        assert!(<Exotic as Inertia<3>>::CONSTANT_MASS);
        assert!(!<Driven as Inertia<3>>::CONSTANT_MASS);
        assert!(!<Curved as Inertia<3>>::CONSTANT_MASS);
        assert!(<mechanism::models::DoublePendulum as Inertia<4>>::CONSTANT_MASS);
    }
}
