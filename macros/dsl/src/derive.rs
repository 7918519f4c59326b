//! Differentiates the model's expressions into everything the plan asks for.

use mechanism_cas::{gradient, hessian, jacobian, third_contraction, Id, Store};

use crate::model::Model;
use crate::plan::Plan;

/// A scalar function of `q` with its derivatives.
pub struct ScalarDerivatives {
    /// The value.
    pub value: Id,
    /// The gradient with respect to `q`.
    pub gradient: Vec<Id>,
    /// The Hessian, if planned.
    pub hessian: Option<Vec<Vec<Id>>>,
    /// The contraction `a·f'''·a`, if planned.
    pub third: Option<Vec<Id>>,
}

/// Every derived expression of a model.
pub struct Derived {
    /// Mass matrix `M(q)`.
    pub mass: Vec<Vec<Id>>,
    /// Kinetic energy `T(q, v)`.
    pub kinetic: Id,
    /// Potential `V(q)` and its derivatives.
    pub potential: ScalarDerivatives,
    /// Constraint values `g(q)`.
    pub constraints: Vec<Id>,
    /// Constraint Jacobian `G(q)`, row-major.
    pub jacobian: Vec<Vec<Id>>,
    /// Penalized potential `W(q) = V + ½ω²|g|²` and its derivatives, if planned.
    pub penalized: Option<ScalarDerivatives>,
}

/// Computes every derived expression of `model` that `plan` asks for.
pub fn derive(model: &mut Model, plan: &Plan) -> Derived {
    let q = model.symbols.q.clone();
    let a = model.symbols.a.clone();
    let store = &mut model.store;
    let potential = scalar(store, model.potential, &q, &a, plan);
    let constraints: Vec<Id> = model.constraints.iter().map(|c| c.expr).collect();
    let jacobian = if plan.constraints {
        jacobian(store, &constraints, &q)
    } else {
        Vec::new()
    };
    let penalized = plan.penalty.then(|| {
        let squares: Vec<Id> = constraints.iter().map(|&g| store.powi(g, 2)).collect();
        let sum = store.sum(squares);
        let omega = store.symbol(model.symbols.omega);
        let omega2 = store.powi(omega, 2);
        let half = store.num(0.5);
        let half_omega2 = store.mul(half, omega2);
        let penalty = store.mul(half_omega2, sum);
        let w = store.add(model.potential, penalty);
        scalar(store, w, &q, &a, plan)
    });
    Derived {
        mass: model.mass.clone(),
        kinetic: model.kinetic,
        potential,
        constraints,
        jacobian,
        penalized,
    }
}

fn scalar(
    store: &mut Store,
    f: Id,
    q: &[mechanism_cas::Symbol],
    a: &[mechanism_cas::Symbol],
    plan: &Plan,
) -> ScalarDerivatives {
    ScalarDerivatives {
        value: f,
        gradient: gradient(store, f, q),
        hessian: plan.hessian.then(|| hessian(store, f, q)),
        third: plan
            .third_derivative
            .then(|| third_contraction(store, f, q, a)),
    }
}
