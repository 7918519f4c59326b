//! Differentiates the model's expressions into everything the plan asks for.

use mechanism_cas::{
    derivative, gradient, hessian, jacobian, third_contraction, Id, Store, Symbol,
};

use crate::family::{self, derive::FamilyDerived};
use crate::ir::Ir;
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

/// A vector function of `(q, v, t)` with its Jacobians.
pub struct VectorDerivatives {
    /// The value, one entry per coordinate.
    pub value: Vec<Id>,
    /// `∂/∂q`, row-major.
    pub dq: Vec<Vec<Id>>,
    /// `∂/∂v`, row-major.
    pub dv: Vec<Vec<Id>>,
}

/// Time derivatives of the holonomic constraints.
pub struct Kinematics {
    /// `g_t`.
    pub time_derivative: Vec<Id>,
    /// `(G v)_q v + 2 G_t v + g_tt`.
    pub acceleration_bias: Vec<Id>,
    /// Their derivatives in `q` and the parameters, if planned (`step_jacobians` on a model
    /// compiled for index reduction).
    pub derivatives: Option<KinematicsDerivatives>,
}

/// The derivatives of [`Kinematics`] that the variational equations of the index-1 system
/// need: the acceleration bias `b(q, v, t)` and `g_t(q, t)` differentiated in `q` and in the
/// run-time parameters (`∂b/∂v = 2((G v)_q + G_t)` is not among them: `b` is quadratic in `v`).
pub struct KinematicsDerivatives {
    /// `∂b/∂q`, `M×N`, row-major.
    pub bias_q: Vec<Vec<Id>>,
    /// `∂b/∂p`, `M×P`.
    pub bias_p: Vec<Vec<Id>>,
    /// `G_t = ∂g_t/∂q`, `M×N`.
    pub time_q: Vec<Vec<Id>>,
    /// `∂g_t/∂p`, `M×P`.
    pub time_p: Vec<Vec<Id>>,
}

/// Derivatives of the kinetic energy in `q`, and of the constraints, for discrete gradients.
pub struct SecondOrder {
    /// `∂T/∂q`.
    pub kinetic_gradient: Vec<Id>,
    /// `∂²T/∂q²`.
    pub kinetic_qq: Vec<Vec<Id>>,
    /// `∂²T/∂q∂v`.
    pub kinetic_qv: Vec<Vec<Id>>,
    /// `Hess g_k` for every holonomic row.
    pub constraint_hessians: Vec<Vec<Vec<Id>>>,
}

/// The derivatives of the velocity terms `c(q, v) = ∂T/∂q − Ṁ v` of a configuration-dependent
/// mass matrix (`Ṁ v = (∂²T/∂q∂v)ᵀ v`), which the variational equations of the index-1 system
/// need beside those of the forces: third derivatives of `T`.
pub struct VelocityTerms {
    /// `∂c/∂q`, `N×N`, row-major.
    pub dq: Vec<Vec<Id>>,
    /// `∂c/∂v`, `N×N`.
    pub dv: Vec<Vec<Id>>,
    /// `∂c/∂p`, `N×P`.
    pub dp: Vec<Vec<Id>>,
}

/// Derivatives with respect to the model's run-time parameters `p` (one column or one matrix
/// per parameter, in declaration order), for the parameter Jacobians of a step.
pub struct ParameterDerived {
    /// `∂M/∂p_j`, one row-major `N×N` matrix per parameter.
    pub mass: Vec<Vec<Vec<Id>>>,
    /// `∂V/∂p_j`, one row of `P` (in the difference quotient of a discrete gradient `D̄V`).
    pub potential: Vec<Vec<Id>>,
    /// `∂(∇V)_i/∂p_j`, `N×P`.
    pub potential_gradient: Vec<Vec<Id>>,
    /// `∂(∂T/∂q)_i/∂p_j` at `(q, v)`, `N×P` (zero for a constant `M`): the midpoint discrete
    /// Lagrangian's force in the parameters.
    pub kinetic_gradient: Vec<Vec<Id>>,
    /// `∂(∇²V a)_i/∂p_j` with `a` the acceleration symbols, `N×P`, if planned (Z&Ss's
    /// parameter Jacobian: `a = −(M + βh² ∇²V)⁻¹ ∇V` holds `∇²V` along `a`).
    pub potential_hessian_along: Option<Vec<Vec<Id>>>,
    /// `∂f_a,i/∂p_j` of the applied force `f_a = −∂R/∂v + f`, `N×P` (empty without either).
    pub applied_force: Vec<Vec<Id>>,
    /// `∂g_c/∂p_j`, `M×P`.
    pub constraints: Vec<Vec<Id>>,
    /// `∂G/∂p_j`, one row-major `M×N` matrix per parameter.
    pub constraint_jacobian: Vec<Vec<Vec<Id>>>,
    /// `∂A/∂p_j`, one row-major `K×N` matrix per parameter.
    pub nonholonomic_matrix: Vec<Vec<Vec<Id>>>,
    /// `∂w_i/∂p_j` of the nonholonomic drive, `K×P`.
    pub nonholonomic_drive: Vec<Vec<Id>>,
}

/// Every derived expression of a model.
pub struct Derived {
    /// Mass matrix `M(q)`.
    pub mass: Vec<Vec<Id>>,
    /// Kinetic energy `T(q, v)`.
    pub kinetic: Id,
    /// Potential `V(q)` and its derivatives.
    pub potential: ScalarDerivatives,
    /// Constraint values `g(q, t)`.
    pub constraints: Vec<Id>,
    /// Constraint Jacobian `G(q, t)`, row-major.
    pub jacobian: Vec<Vec<Id>>,
    /// Penalized potential `W(q) = V + ½ω²|g|²` and its derivatives, if planned.
    pub penalized: Option<ScalarDerivatives>,
    /// `Hess ½ω²|g|²`, row-major, if planned.
    pub penalty_hessian: Option<Vec<Vec<Id>>>,
    /// Constraint time derivatives, if planned.
    pub kinematics: Option<Kinematics>,
    /// Second-order quantities for discrete gradients, if planned.
    pub second_order: Option<SecondOrder>,
    /// The derivatives of the velocity terms `∂T/∂q − Ṁ v`, if planned (`None` for a constant
    /// `M`, whose velocity terms vanish).
    pub velocity_terms: Option<VelocityTerms>,
    /// Nonholonomic `A(q)` (row-major) and `w(t)`, if the model has such rows.
    pub nonholonomic: Option<(Vec<Vec<Id>>, Vec<Id>)>,
    /// `∂(A(q) v)/∂q`, row-major, if planned.
    pub nonholonomic_derivative: Option<Vec<Vec<Id>>>,
    /// Dissipative force `−∂R/∂v` and its Jacobians, if the model has dissipation.
    pub dissipation: Option<VectorDerivatives>,
    /// Generalized forces and their Jacobians, if the model has forces.
    pub forces: Option<VectorDerivatives>,
    /// Derivatives with respect to the parameters, if planned.
    pub parameters: Option<ParameterDerived>,
    /// Whether to emit the linear solves specialized to the structural nonzeros (for each
    /// Hessian above).
    pub linear_solve: bool,
}

/// The derived quantities of a model, by its kind.
pub enum Outputs {
    /// Every expression the plan asks for, over all coordinates.
    Fixed(Box<Derived>),
    /// A model with families: each term's and row's kernel differentiated in its local slots
    /// ([`family::derive`]).
    Runtime(Box<FamilyDerived>),
}

/// Computes the derived quantities of a model of either kind that `plan` asks for.
pub fn outputs(model: &mut Ir, plan: &Plan) -> Outputs {
    match model {
        Ir::Fixed(model) => Outputs::Fixed(Box::new(derive(model, plan))),
        Ir::Runtime { model, .. } => {
            Outputs::Runtime(Box::new(family::derive::derive(model, plan)))
        }
    }
}

/// Computes every derived expression of `model` that `plan` asks for.
pub fn derive(model: &mut Model, plan: &Plan) -> Derived {
    let q = model.symbols.q.clone();
    let v = model.symbols.v.clone();
    let a = model.symbols.a.clone();
    let t = model.symbols.t;
    let store = &mut model.store;
    let potential = scalar(store, model.potential, &q, &a, plan);
    let constraints: Vec<Id> = model.constraints.iter().map(|c| c.expr).collect();
    let jacobian_rows = if plan.constraints {
        jacobian(store, &constraints, &q)
    } else {
        Vec::new()
    };
    let mut penalty_hessian = None;
    let penalized = plan.penalty.then(|| {
        let squares: Vec<Id> = constraints.iter().map(|&g| store.powi(g, 2)).collect();
        let sum = store.sum(squares);
        let omega = store.symbol(model.symbols.omega);
        let omega2 = store.powi(omega, 2);
        let half = store.num(0.5);
        let half_omega2 = store.mul(half, omega2);
        let penalty = store.mul(half_omega2, sum);
        if plan.penalty_hessian {
            penalty_hessian = Some(hessian(store, penalty, &q));
        }
        let w = store.add(model.potential, penalty);
        scalar(store, w, &q, &a, plan)
    });
    let kinematics = plan.kinematics.then(|| {
        let mut kinematics = kinematics(store, &constraints, &jacobian_rows, &q, &v, t);
        if plan.parameter_derivatives {
            let p = &model.symbols.p;
            kinematics.derivatives = Some(KinematicsDerivatives {
                bias_q: jacobian(store, &kinematics.acceleration_bias, &q),
                bias_p: jacobian(store, &kinematics.acceleration_bias, p),
                time_q: jacobian(store, &kinematics.time_derivative, &q),
                time_p: jacobian(store, &kinematics.time_derivative, p),
            });
        }
        kinematics
    });
    let second_order = plan.second_order.then(|| {
        let kinetic_gradient = gradient(store, model.kinetic, &q);
        SecondOrder {
            kinetic_qq: hessian(store, model.kinetic, &q),
            kinetic_qv: jacobian(store, &kinetic_gradient, &v),
            kinetic_gradient,
            constraint_hessians: constraints.iter().map(|&g| hessian(store, g, &q)).collect(),
        }
    });
    let velocity_terms = second_order
        .as_ref()
        .filter(|_| plan.velocity_terms)
        .map(|second| velocity_terms(store, second, &q, &v, &model.symbols.p));
    let nonholonomic = plan.nonholonomic.then(|| {
        (
            model
                .nonholonomic
                .iter()
                .map(|r| r.matrix.clone())
                .collect(),
            model.nonholonomic.iter().map(|r| r.drive).collect(),
        )
    });
    let nonholonomic_derivative = plan.nonholonomic_derivative.then(|| {
        let rows: Vec<Id> = model
            .nonholonomic
            .iter()
            .map(|r| {
                let terms: Vec<Id> = r
                    .matrix
                    .iter()
                    .zip(&v)
                    .map(|(&a, &v)| {
                        let v = store.symbol(v);
                        store.mul(a, v)
                    })
                    .collect();
                store.sum(terms)
            })
            .collect();
        jacobian(store, &rows, &q)
    });
    let dissipation = model.dissipation.filter(|_| plan.dissipation).map(|r| {
        let minus_gradient: Vec<Id> = gradient(store, r, &v)
            .into_iter()
            .map(|g| store.neg(g))
            .collect();
        vector(store, minus_gradient, &q, &v)
    });
    let forces = model
        .forces
        .clone()
        .filter(|_| plan.forces)
        .map(|f| vector(store, f, &q, &v));
    let parameters = plan.parameter_derivatives.then(|| {
        let applied: Vec<Id> = match (&dissipation, &forces) {
            (Some(d), Some(f)) => d
                .value
                .iter()
                .zip(&f.value)
                .map(|(&d, &f)| store.add(d, f))
                .collect(),
            (Some(only), None) | (None, Some(only)) => only.value.clone(),
            (None, None) => Vec::new(),
        };
        let nonholonomic_rows: Vec<Vec<Id>> = model
            .nonholonomic
            .iter()
            .map(|r| r.matrix.clone())
            .collect();
        let drives: Vec<Id> = model.nonholonomic.iter().map(|r| r.drive).collect();
        let p = &model.symbols.p;
        let potential_hessian_along = potential
            .hessian
            .as_ref()
            .filter(|_| plan.third_derivative)
            .map(|hessian| {
                let along: Vec<Id> = hessian
                    .iter()
                    .map(|row| {
                        let terms: Vec<Id> = row
                            .iter()
                            .zip(&a)
                            .map(|(&h, &a)| {
                                let a = store.symbol(a);
                                store.mul(h, a)
                            })
                            .collect();
                        store.sum(terms)
                    })
                    .collect();
                jacobian(store, &along, p)
            });
        let kinetic_gradient = match &second_order {
            Some(second) => second.kinetic_gradient.clone(),
            None => gradient(store, model.kinetic, &q),
        };
        ParameterDerived {
            kinetic_gradient: jacobian(store, &kinetic_gradient, p),
            mass: per_parameter(store, &model.mass, p),
            potential: jacobian(store, &[potential.value], p),
            potential_gradient: jacobian(store, &potential.gradient, p),
            potential_hessian_along,
            applied_force: jacobian(store, &applied, p),
            constraints: jacobian(store, &constraints, p),
            constraint_jacobian: per_parameter(store, &jacobian_rows, p),
            nonholonomic_matrix: per_parameter(store, &nonholonomic_rows, p),
            nonholonomic_drive: jacobian(store, &drives, p),
        }
    });
    Derived {
        mass: model.mass.clone(),
        kinetic: model.kinetic,
        potential,
        constraints,
        jacobian: jacobian_rows,
        penalized,
        penalty_hessian,
        kinematics,
        second_order,
        velocity_terms,
        nonholonomic,
        nonholonomic_derivative,
        dissipation,
        forces,
        parameters,
        linear_solve: plan.linear_solve,
    }
}

/// Differentiates the velocity terms `c_i = ∂T/∂q_i − Σ_k v_k ∂²T/∂q_k∂v_i` (the runtime's
/// `∂T/∂q − (∂²T/∂q∂v)ᵀ v`) in `q`, `v` and `p`.
fn velocity_terms(
    store: &mut Store,
    second: &SecondOrder,
    q: &[Symbol],
    v: &[Symbol],
    p: &[Symbol],
) -> VelocityTerms {
    let velocities: Vec<Id> = v.iter().map(|&s| store.symbol(s)).collect();
    let terms: Vec<Id> = (0..q.len())
        .map(|i| {
            let coriolis: Vec<Id> = second
                .kinetic_qv
                .iter()
                .zip(&velocities)
                .map(|(row, &v_k)| store.mul(row[i], v_k))
                .collect();
            let coriolis = store.sum(coriolis);
            let minus = store.neg(coriolis);
            store.add(second.kinetic_gradient[i], minus)
        })
        .collect();
    VelocityTerms {
        dq: jacobian(store, &terms, q),
        dv: jacobian(store, &terms, v),
        dp: jacobian(store, &terms, p),
    }
}

/// Returns `∂matrix/∂p_j` for every parameter `p_j`, one matrix (row-major, as `matrix`) per
/// parameter.
fn per_parameter(store: &mut Store, matrix: &[Vec<Id>], p: &[Symbol]) -> Vec<Vec<Vec<Id>>> {
    p.iter()
        .map(|&p| {
            matrix
                .iter()
                .map(|row| row.iter().map(|&e| derivative(store, e, p)).collect())
                .collect()
        })
        .collect()
}

fn scalar(store: &mut Store, f: Id, q: &[Symbol], a: &[Symbol], plan: &Plan) -> ScalarDerivatives {
    ScalarDerivatives {
        value: f,
        gradient: gradient(store, f, q),
        hessian: plan.hessian.then(|| hessian(store, f, q)),
        third: plan
            .third_derivative
            .then(|| third_contraction(store, f, q, a)),
    }
}

fn vector(store: &mut Store, value: Vec<Id>, q: &[Symbol], v: &[Symbol]) -> VectorDerivatives {
    VectorDerivatives {
        dq: jacobian(store, &value, q),
        dv: jacobian(store, &value, v),
        value,
    }
}

/// `ġ = G v + g_t` and `g̈ = G q̈ + [(G v)_q v + 2 G_t v + g_tt]`: the bracket is the part of
/// `d/dt ġ` that does not involve `q̈`, i.e. `Σ_j ∂ġ/∂q_j v_j + ∂ġ/∂t`.
fn kinematics(
    store: &mut Store,
    constraints: &[Id],
    jacobian_rows: &[Vec<Id>],
    q: &[Symbol],
    v: &[Symbol],
    t: Symbol,
) -> Kinematics {
    let velocities: Vec<Id> = v.iter().map(|&s| store.symbol(s)).collect();
    let mut time_derivative = Vec::new();
    let mut acceleration_bias = Vec::new();
    for (&g, row) in constraints.iter().zip(jacobian_rows) {
        let g_t = derivative(store, g, t);
        let terms: Vec<Id> = row
            .iter()
            .zip(&velocities)
            .map(|(&gj, &vj)| store.mul(gj, vj))
            .collect();
        let gv = store.sum(terms);
        let g_dot = store.add(gv, g_t);
        let mut bias_terms: Vec<Id> = q
            .iter()
            .zip(&velocities)
            .map(|(&qj, &vj)| {
                let d = derivative(store, g_dot, qj);
                store.mul(d, vj)
            })
            .collect();
        bias_terms.push(derivative(store, g_dot, t));
        time_derivative.push(g_t);
        acceleration_bias.push(store.sum(bias_terms));
    }
    Kinematics {
        time_derivative,
        acceleration_bias,
        derivatives: None,
    }
}
