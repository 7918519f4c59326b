//! A model with families after resolution, as data: sizes, coordinate families and their
//! groups, parameter families, and every energy term and constraint row as a [`Kernel`] in its
//! local slots, with the instances it runs over. [`super::resolve`] builds it from the syntax.

use mechanism_cas::{Id, Store};
use proc_macro2::TokenStream;
use quote::ToTokens;
use syn::{Attribute, Expr, Ident, Visibility};

use crate::derivatives::Derivative;
use crate::integrators::Family;
use crate::model::Parameter;
use crate::plan::{Plan, Shape};
use crate::symbols::Symbols;

/// A size: `N = 10` (a base size, an argument of `new`) or `R = 4 + 3 * (N - 1)` (derived).
pub struct Size {
    /// The size's name, an `i64` local of the generated constructor.
    pub name: Ident,
    /// The expression: an integer literal for a base size.
    pub value: Expr,
    /// Whether the size is a base size (an argument of `new`).
    pub base: bool,
    /// The value with every base size at its default.
    pub default: i64,
}

/// A family of coordinates `x[N]`.
pub struct CoordinateFamily {
    /// The family's name.
    pub name: Ident,
    /// The index of its size in [`FamilyModel::sizes`].
    pub size: usize,
    /// The index of its group in [`FamilyModel::groups`].
    pub group: usize,
    /// Its position among the group's members (its offset in a body's block).
    pub position: usize,
}

/// The families of one size: their members form the bodies `0..size`, each body holding one
/// member of every family of the group, in declaration order.
pub struct Group {
    /// The index of the size.
    pub size: usize,
    /// The families, in declaration order.
    pub families: Vec<usize>,
}

/// Where a slot reads: a scalar coordinate, or a family member at an index expression.
#[derive(Clone)]
pub enum Slot {
    /// The scalar coordinate with this index.
    Scalar(usize),
    /// Member `index` of the coordinate family `family`.
    Member {
        /// The family.
        family: usize,
        /// The index expression, as written.
        index: Expr,
    },
}

/// A family of parameters, `m[N] = 1.0`: a field `Vec<f64>` of `N` values, each the default
/// until the user changes it.
pub struct ParameterFamily {
    /// Attributes (doc comments) written before the family.
    pub attrs: Vec<syn::Attribute>,
    /// The family's name, also the field's name.
    pub name: Ident,
    /// The index of its size in [`FamilyModel::sizes`].
    pub size: usize,
    /// The default of every member.
    pub default: f64,
}

/// A member of a parameter family read by a kernel, `m[i - 1]`.
pub struct ParameterSlot {
    /// The index of the family in [`FamilyModel::parameter_families`].
    pub family: usize,
    /// The member index expression (in terms of sizes, the index and bindings).
    pub index: Expr,
}

/// One expression of the model in its local slots, lowered into a store of its own.
pub struct Kernel {
    /// The store.
    pub store: Store,
    /// The kernel's symbols: one coordinate (and velocity) per slot, the model's parameters.
    pub symbols: Symbols,
    /// The slots, in symbol order.
    pub slots: Vec<Slot>,
    /// The kernel's value, one per component (two for a vector row `[e1, e2]`).
    pub values: Vec<Id>,
    /// The parameter family members it reads; their symbols follow the scalar parameters'
    /// in `symbols.p`, and their indices follow the slots' in an instance's index array.
    pub parameter_slots: Vec<ParameterSlot>,
    /// The non-smooth functions (`abs`, `min`, …) it applies to its slots, where the user
    /// wrote them; empty if it is smooth in its slots (a `max(k, 1)` of parameters is).
    pub kinks: Vec<(proc_macro2::Span, &'static str)>,
}

/// Where a term or row family runs: its index, range, filter and bindings.
pub struct Instances {
    /// The index variable.
    pub index: Ident,
    /// The second index of a pair sum `sum(a..b, |i, j| …)`, running over `i + 1..b`: the
    /// instances are the pairs `i < j` of the range.
    pub pair: Option<Ident>,
    /// The range's start and end expressions.
    pub start: Expr,
    /// The range's end.
    pub end: Expr,
    /// The filter, if any.
    pub filter: Option<Expr>,
    /// The bindings, in order.
    pub bindings: Vec<(Ident, Expr)>,
}

/// An energy term: a kernel, summed over instances or evaluated once.
pub struct Term {
    /// The term as written, for the spans of errors.
    pub source: proc_macro2::TokenStream,
    /// The instances, `None` for a plain term.
    pub instances: Option<Instances>,
    /// The term's kernel: its value, and with a cutoff the switching distance `r` second.
    pub kernel: Kernel,
    /// A pair sum's smooth cutoff, if any.
    pub cutoff: Option<Cutoff>,
}

/// A constraint row or row family.
pub struct Row {
    /// Doc comments of the row.
    pub docs: Vec<Attribute>,
    /// The row's name.
    pub name: Ident,
    /// The instances, `None` for a single row.
    pub instances: Option<Instances>,
    /// The kernel, one value per component.
    pub kernel: Kernel,
}

/// A model with families, resolved.
pub struct FamilyModel {
    /// Outer attributes of the model.
    pub attrs: Vec<Attribute>,
    /// Visibility of the generated struct.
    pub vis: Visibility,
    /// The model's type name.
    pub name: Ident,
    /// Sizes, in declaration order.
    pub sizes: Vec<Size>,
    /// Scalar coordinates, in declaration order.
    pub scalars: Vec<Ident>,
    /// Coordinate families, in declaration order.
    pub families: Vec<CoordinateFamily>,
    /// Groups of families sharing a size, in order of first declaration.
    pub groups: Vec<Group>,
    /// Scalar parameters.
    pub parameters: Vec<Parameter>,
    /// Parameter families (`m[N] = 1.0`).
    pub parameter_families: Vec<ParameterFamily>,
    /// Kinetic energy terms.
    pub kinetic: Vec<Term>,
    /// Potential energy terms.
    pub potential: Vec<Term>,
    /// Holonomic rows and row families.
    pub rows: Vec<Row>,
    /// The integrators the model is compiled for.
    pub integrators: Vec<Family>,
    /// What `derivatives: [..]` asks for beyond the integrators' needs.
    pub derivatives: Vec<Derivative>,
}

/// A pair sum's cutoff as written: the switching distance and the scalar parameters that
/// bound the switching region.
pub struct Cutoff {
    /// The `cutoff(…)` call as written, for the spans of errors.
    pub source: TokenStream,
    /// The switching distance `r`, an expression of the pair's members.
    pub r: Expr,
    /// The scalar parameter where the switch starts (`S = 1` below it).
    pub on: Ident,
    /// The scalar parameter where the switch ends (`S = 0` from it on).
    pub off: Ident,
}

impl FamilyModel {
    /// Returns the derived quantities its integrators need: the plan of a model whose only
    /// rows are holonomic ([`Plan::new`]), with `Hess V` also when `derivatives: [hessians]`
    /// asks for it (the rows' Hessians are then emitted from [`Self::hessians`]), and what
    /// `derivatives: [step_jacobians]` adds ([`Plan::add_step_jacobians`]).
    pub fn plan(&self) -> Plan {
        let mut plan = Plan::new(
            &self.integrators,
            Shape {
                constrained: !self.rows.is_empty(),
                ..Shape::default()
            },
        );
        plan.hessian |= self.hessians();
        if self.step_jacobians() {
            plan.add_step_jacobians(&self.integrators);
        }
        plan
    }

    /// Returns whether `derivatives: [hessians]` asks for the potential's and the rows'
    /// Hessians (`SparsePotentialHessian`, `SparseHolonomicHessians`).
    pub fn hessians(&self) -> bool {
        crate::derivatives::hessians_wanted(&self.derivatives).is_some()
    }

    /// Returns whether `derivatives: [step_jacobians]` asks for what the sparse step Jacobians
    /// need (the rows' Hessians and every derivative in the parameters).
    pub fn step_jacobians(&self) -> bool {
        self.derivatives.contains(&Derivative::StepJacobians)
    }
}

impl Instances {
    /// Returns the index names in scope inside the family: the index (both of a pair) and the
    /// bindings.
    pub fn names(&self) -> Vec<String> {
        let mut names = vec![self.index.to_string()];
        names.extend(self.pair.iter().map(|p| p.to_string()));
        names.extend(self.bindings.iter().map(|(n, _)| n.to_string()));
        names
    }
}

/// Returns the index expressions of the members among `slots`, as written (e.g. `"i - 1"`).
pub fn member_indices<'a>(slots: impl Iterator<Item = &'a Slot>) -> Vec<String> {
    slots
        .filter_map(|slot| match slot {
            Slot::Member { index, .. } => Some(index.to_token_stream().to_string()),
            Slot::Scalar(_) => None,
        })
        .collect()
}

/// Returns whether one of the index expressions `read` mentions the index name `name`.
pub fn mentions_index(read: &[String], name: &Ident) -> bool {
    let name = name.to_string();
    read.iter().any(|index| {
        index
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|word| word == name)
    })
}
