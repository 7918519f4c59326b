//! Generated code against the symbolic interpreter: the model in `models/exotic.rs` is compiled
//! by `mechanism!` and, from the same source text, run through the pipeline's `derive` stage
//! without simplification and evaluated by `mechanism_cas::eval`. Any error in simplification,
//! common-subexpression sharing or code emission shows up as a mismatch.

include!("models/exotic.rs");

use std::collections::HashMap;

use mechanism::runtime::{
    Holonomic, Inertia, PenalizedPotential, Potential, PotentialHessian, PotentialThirdDerivative,
    SMatrix, SVector,
};
use mechanism_cas::{eval, Id, Store, Symbol};
use mechanism_dsl::derive::{derive, Derived};
use mechanism_dsl::model::Model;
use mechanism_dsl::plan::Plan;
use proptest::prelude::*;

const SOURCE: &str = include_str!("models/exotic.rs");

/// Runs the DSL pipeline up to (not including) simplification on `SOURCE`.
fn interpreted() -> (Model, Derived) {
    let file = syn::parse_file(SOURCE).expect("models/exotic.rs parses");
    let Some(syn::Item::Macro(item)) = file.items.first() else {
        panic!("models/exotic.rs must hold one mechanism! invocation");
    };
    let ast = syn::parse2(item.mac.tokens.clone()).expect("the model parses");
    let mut model = mechanism_dsl::validate::validate(&ast).expect("the model is valid");
    let plan = Plan::for_model(&model);
    let derived = derive(&mut model, &plan);
    (model, derived)
}

struct Point {
    values: HashMap<Symbol, f64>,
}

impl Point {
    fn eval(&self, store: &Store, id: Id) -> f64 {
        eval(store, id, &|s| self.values.get(&s).copied()).expect("every symbol is bound")
    }
}

fn assert_close(what: &str, generated: f64, interpreted: f64) {
    let tolerance = 1e-12 * (1.0 + interpreted.abs());
    assert!(
        (generated - interpreted).abs() <= tolerance,
        "{what}: generated {generated} vs interpreted {interpreted}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn generated_code_matches_interpreter(
        q in prop::array::uniform3(-0.6..0.6f64),
        v in prop::array::uniform3(-2.0..2.0f64),
        a in prop::array::uniform3(-2.0..2.0f64),
        omega in 1.0..30.0f64,
        k in 0.5..2.0f64,
        c in 0.2..1.5f64,
        r in 1.0..3.0f64,
    ) {
        let (model, derived) = interpreted();
        let store = &model.store;
        let s = &model.symbols;
        let mut values = HashMap::new();
        for i in 0..3 {
            values.insert(s.q[i], q[i]);
            values.insert(s.v[i], v[i]);
            values.insert(s.a[i], a[i]);
        }
        for (symbol, value) in s.p.iter().zip([k, c, r]) {
            values.insert(*symbol, value);
        }
        values.insert(s.omega, omega);
        let point = Point { values };

        let generated = Exotic { k, c, r };
        let (q, v, a) = (SVector::from(q), SVector::from(v), SVector::from(a));

        let mut mass = SMatrix::<f64, 3, 3>::zeros();
        generated.mass_matrix(&q, &mut mass);
        let mut grad = SVector::<f64, 3>::zeros();
        let mut hess = SMatrix::<f64, 3, 3>::zeros();
        generated.potential_gradient_hessian(&q, &mut grad, &mut hess);
        let mut third = SVector::<f64, 3>::zeros();
        generated.potential_third_contraction(&q, &a, &mut third);
        let mut g = SVector::<f64, 2>::zeros();
        let mut jac = SMatrix::<f64, 2, 3>::zeros();
        generated.constraints_and_jacobian(&q, 0.0, &mut g, &mut jac);
        let mut wgrad = SVector::<f64, 3>::zeros();
        let mut whess = SMatrix::<f64, 3, 3>::zeros();
        generated.penalized_potential_gradient_hessian(omega, &q, &mut wgrad, &mut whess);
        let mut wthird = SVector::<f64, 3>::zeros();
        generated.penalized_potential_third_contraction(omega, &q, &a, &mut wthird);

        assert_close("kinetic", generated.kinetic_energy(&q, &v), point.eval(store, derived.kinetic));
        assert_close("potential", generated.potential(&q), point.eval(store, derived.potential.value));
        let w = derived.penalized.as_ref().expect("the model has constraints");
        assert_close("penalized", generated.penalized_potential(omega, &q), point.eval(store, w.value));
        for i in 0..3 {
            assert_close("gradient", grad[i], point.eval(store, derived.potential.gradient[i]));
            assert_close("third", third[i], point.eval(store, derived.potential.third.as_ref().unwrap()[i]));
            assert_close("penalized gradient", wgrad[i], point.eval(store, w.gradient[i]));
            assert_close("penalized third", wthird[i], point.eval(store, w.third.as_ref().unwrap()[i]));
            for j in 0..3 {
                assert_close("mass", mass[(i, j)], point.eval(store, derived.mass[i][j]));
                assert_close("hessian", hess[(i, j)], point.eval(store, derived.potential.hessian.as_ref().unwrap()[i][j]));
                assert_close("penalized hessian", whess[(i, j)], point.eval(store, w.hessian.as_ref().unwrap()[i][j]));
            }
        }
        for row in 0..2 {
            assert_close("constraint", g[row], point.eval(store, derived.constraints[row]));
            for j in 0..3 {
                assert_close("jacobian", jac[(row, j)], point.eval(store, derived.jacobian[row][j]));
            }
        }
    }
}

/// The mass matrix of `Exotic` depends on `q`, and the generated code says so (checked at
/// compile time).
#[test]
fn configuration_dependent_mass_is_flagged() {
    const {
        assert!(!<Exotic as Inertia<3>>::CONSTANT_MASS);
        assert!(<mechanism::models::DoublePendulum as Inertia<4>>::CONSTANT_MASS);
    }
}
