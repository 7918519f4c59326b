//! The derive and simplify stages of a model with families: every term's and row's kernel
//! differentiated in its local slots, in a store of its own, into what the plan asks for; then
//! each output group cleaned up by the bounded e-graph of [`crate::simplify`]. The emitters of
//! [`super::emit`] only read the result.
//!
//! Per kernel, and with the same output groups as the fixed-size model's
//! [`crate::simplify::simplify_outputs`] (each group is emitted as one loop body):
//!
//! ```text
//! kinetic term    ∂²T/∂v∂v (the mass block; constant or a polynomial, left as derived)
//! potential term  ∇V_k | Hess V_k | a·V_k‴·a      (Hessian and contraction as planned)
//!                 ∇r | Hess r                     (a cutoff's switching distance)
//! row             g, ∂g/∂q | vᵀ Hess g_c v         (the bias for the index-1 methods)
//!                 ½|g|²: ∇ | Hess | a·(…)‴·a       (its penalty part, for Z&S and Newmark)
//!                 Σ_c λ_c g_c: Hess               (derivatives: [hessians])
//! ```

use mechanism_cas::{gradient, Id, Store, Symbol};

use crate::family::assembly::{Part, PartNeeds};
use crate::family::fields::{potential_table, row_start, row_table};
use crate::family::kernel_code::{kernel_copy, KernelCopy};
use crate::family::model::FamilyModel;
use crate::plan::Plan;

/// Every derived quantity of a model with families.
pub struct FamilyDerived {
    /// Per kinetic term, its mass block.
    pub kinetic: Vec<MassBlock>,
    /// Per potential term, its part of `V` with the derivatives the plan asks for.
    pub potential: Vec<Part>,
    /// Per holonomic row (family), its values, Jacobian and the parts built from it.
    pub rows: Vec<RowDerived>,
    /// What `derivatives: [step_jacobians]` adds, if it asks for it.
    pub step: Option<StepDerived>,
}

/// The derivatives a sparse step Jacobian needs beyond the Hessians (`derivatives:
/// [step_jacobians]`), per kernel as entries keyed by slot and parameter-symbol positions
/// (a parameter position `j` is the kernel's `symbols.p[j]`: a scalar parameter, or past the
/// scalars one of its parameter slots).
pub struct StepDerived {
    /// Per kinetic term, `∂²(∂²T/∂v_a∂v_b)/∂p_j` keyed `[a, b, j]`.
    pub mass: Vec<Entries<3>>,
    /// Per potential term, `∂²V/∂q_a∂p_j` keyed `[a, j]`.
    pub potential: Vec<Entries<2>>,
    /// Per potential term, `∂³V/∂q_a∂q_b∂p_j` keyed `[a, b, j]` (every ordered pair), when
    /// the plan has the third derivative (Z&Ss's parameter Jacobian differentiates
    /// `(M + βh² Hess V) a` in the parameters).
    pub potential_hessian: Option<Vec<Entries<3>>>,
    /// Per row, `∂g_c/∂p_j` keyed `[c, j]`.
    pub values: Vec<Entries<2>>,
    /// Per row, `∂²g_c/∂q_a∂p_j` keyed `[c, a, j]`.
    pub jacobian: Vec<Entries<3>>,
    /// Per row, `∂²g_c/∂q_a∂q_b` keyed `[c, a, b]` (every ordered pair).
    pub hessian: Vec<Entries<3>>,
}

/// One kernel's structurally nonzero derivatives, simplified as one group.
pub struct Entries<const K: usize> {
    /// The kernel, in a store of its own that holds the entries.
    pub kernel: KernelCopy,
    /// The entries with their keys.
    pub entries: Vec<([usize; K], Id)>,
}

impl<const K: usize> Entries<K> {
    /// The entries `entries` of `kernel`, as derived.
    fn new(kernel: KernelCopy, entries: Vec<([usize; K], Id)>) -> Self {
        Entries { kernel, entries }
    }

    /// Simplifies the entries as one group and drops the structurally zero ones.
    fn simplify(&mut self) {
        self.entries = self.kernel.simplified_nonzero(&self.entries);
    }
}

impl StepDerived {
    /// Simplifies every group in place.
    fn simplify(&mut self) {
        self.mass.iter_mut().for_each(Entries::simplify);
        self.potential.iter_mut().for_each(Entries::simplify);
        self.potential_hessian
            .iter_mut()
            .flatten()
            .for_each(Entries::simplify);
        self.values.iter_mut().for_each(Entries::simplify);
        self.jacobian.iter_mut().for_each(Entries::simplify);
        self.hessian.iter_mut().for_each(Entries::simplify);
    }
}

/// A kinetic term's mass block `∂²T/∂v_a∂v_b` over its velocity slots.
pub struct MassBlock {
    /// The kernel, in a store of its own that holds the block.
    pub kernel: KernelCopy,
    /// The block, by slot pair.
    pub entries: Vec<Vec<Id>>,
}

/// A holonomic row's (or row family's) derived quantities.
pub struct RowDerived {
    /// The kernel: its values are the row's components `g_c`.
    pub kernel: KernelCopy,
    /// `∂g_c/∂s_k` for every component `c` and slot `k`.
    pub jacobian: Vec<Vec<Id>>,
    /// `vᵀ Hess g_c v` per component, if the integrators need the acceleration bias.
    pub bias: Option<Vec<Id>>,
    /// Its part `½|g|²` of the penalty `½ω²|g|²`, if the integrators need it.
    pub penalty: Option<Part>,
    /// Its part `Σ_c λ_c g_c` of `Σ_k λ_k g_k`, if `derivatives: [hessians]` asks for the
    /// rows' Hessians.
    pub weighted: Option<Part>,
}

impl FamilyDerived {
    /// The potential terms' parts.
    pub fn potential_parts(&self) -> impl Iterator<Item = &Part> {
        self.potential.iter()
    }

    /// The rows' penalty parts.
    pub fn penalty_parts(&self) -> impl Iterator<Item = &Part> {
        self.rows.iter().filter_map(|row| row.penalty.as_ref())
    }

    /// The rows' weighted parts.
    pub fn weighted_parts(&self) -> impl Iterator<Item = &Part> {
        self.rows.iter().filter_map(|row| row.weighted.as_ref())
    }

    /// Simplifies every output group in place (the simplify stage).
    pub fn simplify(&mut self) {
        for part in &mut self.potential {
            part.simplify();
        }
        for row in &mut self.rows {
            row.simplify();
        }
        if let Some(step) = &mut self.step {
            step.simplify();
        }
    }
}

impl RowDerived {
    /// Simplifies the row's values with its Jacobian (one loop emits both), its bias, and its
    /// parts.
    fn simplify(&mut self) {
        let components = self.kernel.values.len();
        let all: Vec<Id> = self
            .kernel
            .values
            .iter()
            .chain(self.jacobian.iter().flatten())
            .copied()
            .collect();
        let mut all = self.kernel.simplified(&all).into_iter();
        self.kernel.values = all.by_ref().take(components).collect();
        for row in &mut self.jacobian {
            *row = all.by_ref().take(row.len()).collect();
        }
        if let Some(bias) = &self.bias {
            self.bias = Some(self.kernel.simplified(bias));
        }
        for part in self.penalty.iter_mut().chain(&mut self.weighted) {
            part.simplify();
        }
    }
}

/// Differentiates every kernel of `model` into what `plan` asks for (the derive stage).
pub fn derive(model: &FamilyModel, plan: &Plan) -> FamilyDerived {
    // A potential term's Hessian is assembled into `Hess V` and into the penalized `Hess W`.
    let hessian = plan.hessian || plan.penalty;
    let potential_needs = PartNeeds {
        gradient: true,
        hessian,
        third: hessian && plan.third_derivative,
    };
    let penalty_needs = PartNeeds {
        gradient: true,
        hessian: true,
        third: plan.third_derivative,
    };
    let weighted_needs = PartNeeds {
        hessian: true,
        ..PartNeeds::default()
    };
    let kinetic = model
        .kinetic
        .iter()
        .map(|term| {
            let mut kernel = kernel_copy(&term.kernel);
            let v: Vec<Symbol> = kernel.symbols.v.clone();
            let entries = mechanism_cas::hessian(&mut kernel.store, term.kernel.values[0], &v);
            MassBlock { kernel, entries }
        })
        .collect();
    let potential = model
        .potential
        .iter()
        .enumerate()
        .map(|(k, term)| {
            let mut part = Part::potential(potential_table(k), &term.kernel, term.cutoff.as_ref());
            part.derive(potential_needs);
            part
        })
        .collect();
    let rows = model
        .rows
        .iter()
        .enumerate()
        .map(|(k, row)| {
            let (table, start) = (row_table(k), row_start(k));
            let mut kernel = kernel_copy(&row.kernel);
            let q = kernel.symbols.q.clone();
            let jacobian = kernel
                .values
                .clone()
                .into_iter()
                .map(|value| gradient(&mut kernel.store, value, &q))
                .collect();
            let bias = plan.kinematics.then(|| {
                acceleration_bias(&mut kernel.store, &kernel.values, &q, &kernel.symbols.v)
            });
            let penalty = plan.penalty.then(|| {
                let mut part = Part::penalty(table.clone(), &row.kernel);
                part.derive(penalty_needs);
                part
            });
            let weighted = model.hessians().then(|| {
                let mut part = Part::weighted(table, &row.kernel, start);
                part.derive(weighted_needs);
                part
            });
            RowDerived {
                kernel,
                jacobian,
                bias,
                penalty,
                weighted,
            }
        })
        .collect();
    let step = plan
        .parameter_derivatives
        .then(|| step_derived(model, plan.third_derivative));
    FamilyDerived {
        kinetic,
        potential,
        rows,
        step,
    }
}

/// Differentiates every kernel into what a sparse step Jacobian needs ([`StepDerived`]); with
/// `third`, also the potential's Hessian in the parameters.
fn step_derived(model: &FamilyModel, third: bool) -> StepDerived {
    let mass = model
        .kinetic
        .iter()
        .map(|term| {
            let mut kernel = kernel_copy(&term.kernel);
            let (v, p) = (kernel.symbols.v.clone(), kernel.symbols.p.clone());
            let block = mechanism_cas::hessian(&mut kernel.store, term.kernel.values[0], &v);
            let mut entries = Vec::new();
            for (a, row) in block.iter().enumerate() {
                for (b, &entry) in row.iter().enumerate() {
                    let d = gradient(&mut kernel.store, entry, &p);
                    entries.extend(d.into_iter().enumerate().map(|(j, d)| ([a, b, j], d)));
                }
            }
            Entries::new(kernel, entries)
        })
        .collect();
    let potential = model
        .potential
        .iter()
        .map(|term| {
            let mut kernel = kernel_copy(&term.kernel);
            let (q, p) = (kernel.symbols.q.clone(), kernel.symbols.p.clone());
            let grad = gradient(&mut kernel.store, term.kernel.values[0], &q);
            let mut entries = Vec::new();
            for (a, &g) in grad.iter().enumerate() {
                let d = gradient(&mut kernel.store, g, &p);
                entries.extend(d.into_iter().enumerate().map(|(j, d)| ([a, j], d)));
            }
            Entries::new(kernel, entries)
        })
        .collect();
    let potential_hessian = third.then(|| {
        model
            .potential
            .iter()
            .map(|term| {
                let mut kernel = kernel_copy(&term.kernel);
                let (q, p) = (kernel.symbols.q.clone(), kernel.symbols.p.clone());
                let h = mechanism_cas::hessian(&mut kernel.store, term.kernel.values[0], &q);
                let mut entries = Vec::new();
                for (a, row) in h.into_iter().enumerate() {
                    for (b, entry) in row.into_iter().enumerate() {
                        let d = gradient(&mut kernel.store, entry, &p);
                        entries.extend(d.into_iter().enumerate().map(|(j, d)| ([a, b, j], d)));
                    }
                }
                Entries::new(kernel, entries)
            })
            .collect()
    });
    let (mut values, mut jacobian, mut hessian) = (Vec::new(), Vec::new(), Vec::new());
    for row in &model.rows {
        let kernel = kernel_copy(&row.kernel);
        let (q, p) = (kernel.symbols.q.clone(), kernel.symbols.p.clone());
        let (mut in_p, mut in_qp, mut in_qq) =
            (kernel_copy(&row.kernel), kernel, kernel_copy(&row.kernel));
        let (mut e_p, mut e_qp, mut e_qq) = (Vec::new(), Vec::new(), Vec::new());
        for (c, &g) in row.kernel.values.iter().enumerate() {
            let d = gradient(&mut in_p.store, g, &p);
            e_p.extend(d.into_iter().enumerate().map(|(j, d)| ([c, j], d)));
            for (a, d) in gradient(&mut in_qp.store, g, &q).into_iter().enumerate() {
                let dp = gradient(&mut in_qp.store, d, &p);
                e_qp.extend(dp.into_iter().enumerate().map(|(j, d)| ([c, a, j], d)));
            }
            let h = mechanism_cas::hessian(&mut in_qq.store, g, &q);
            for (a, row) in h.into_iter().enumerate() {
                e_qq.extend(row.into_iter().enumerate().map(|(b, d)| ([c, a, b], d)));
            }
        }
        values.push(Entries::new(in_p, e_p));
        jacobian.push(Entries::new(in_qp, e_qp));
        hessian.push(Entries::new(in_qq, e_qq));
    }
    StepDerived {
        mass,
        potential,
        potential_hessian,
        values,
        jacobian,
        hessian,
    }
}

/// Returns `vᵀ Hess g_c v` for every component `g_c` of `values` (a row family's constraints do
/// not depend on time): the `g̈ = G q̈ + vᵀ Hess g v` of the index-1 formulation (Ascher et al.
/// 1995, eq. 1.5), as the directional derivative along `v` taken twice.
fn acceleration_bias(store: &mut Store, values: &[Id], q: &[Symbol], v: &[Symbol]) -> Vec<Id> {
    let velocities: Vec<Id> = v.iter().map(|&s| store.symbol(s)).collect();
    let directional = |store: &mut Store, f: Id| {
        let d = gradient(store, f, q);
        let terms: Vec<Id> = d
            .iter()
            .zip(&velocities)
            .map(|(&d, &v)| store.mul(d, v))
            .collect();
        store.sum(terms)
    };
    values
        .iter()
        .map(|&g| {
            let once = directional(store, g);
            directional(store, once)
        })
        .collect()
}
