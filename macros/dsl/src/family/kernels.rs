//! Kernel extraction for models with families: every energy term (`sum(a..b, |i| body)` or a
//! plain expression) and every row (`anchor: …` or `rod[i in 1..N]: …`) becomes a [`Kernel`],
//! its body with each member access `x[e]` replaced by a local slot symbol, lowered into a
//! store of its own, with the instances it runs over. [`super::resolve`] calls it once the
//! names are known.

use std::collections::HashMap;

use mechanism_cas::{Id, Store};
use quote::ToTokens;
use syn::{Expr, Ident};

use crate::ast::{Index, Named, RowFamily};
use crate::errors::Errors;
use crate::expr::{Context, Lowerer};
use crate::family::cutoff;
use crate::family::index;
use crate::family::model::{
    member_indices, mentions_index, CoordinateFamily, Instances, Kernel, ParameterFamily,
    ParameterSlot, Row, Size, Slot, Term,
};
use crate::family::sums::{as_sum, split_sum};
use crate::model::Parameter;
use crate::symbols::{Name, Symbols};

/// What names mean while kernels are extracted.
pub(super) struct Scope<'a> {
    /// The sizes.
    pub(super) sizes: &'a [Size],
    /// The scalar coordinates.
    pub(super) scalars: &'a [Ident],
    /// The coordinate families.
    pub(super) families: &'a [CoordinateFamily],
    /// The scalar parameters.
    pub(super) parameters: &'a [Parameter],
    /// The parameter families.
    pub(super) parameter_families: &'a [ParameterFamily],
}

impl Scope<'_> {
    /// Splits an energy into its terms (`a + sum(0..N, |i| b) + …`) and extracts their kernels.
    pub(super) fn terms(&self, expr: &Expr, what: &str, errors: &mut Errors) -> Vec<Term> {
        let mut parts = Vec::new();
        split_sum(expr, &mut parts);
        parts
            .into_iter()
            .filter_map(|part| match as_sum(part) {
                Some(Ok((index, pair, range, body, cut))) => {
                    let cut = match cut {
                        None => None,
                        Some(cut) => Some(cutoff::parse(cut, self.parameters, errors)?),
                    };
                    if let (Some(cut), None) = (&cut, pair) {
                        errors.error_spanned(
                            &cut.source,
                            format!("a cutoff switches the pairs of a pair sum; write the sum over pairs, `sum(a..b, |{index}, j| body, cutoff(…))`, or drop the cutoff"),
                        );
                        return None;
                    }
                    let mut instances = self.instances(index, range, None, &[], errors)?;
                    if let Some(pair) = pair {
                        if *pair == *index || self.sizes.iter().any(|s| s.name == *pair) {
                            errors.error_spanned(
                                pair,
                                format!("the second index `{pair}` of a pair sum needs a name of its own (not the first index's, not a size's)"),
                            );
                            return None;
                        }
                        instances.pair = Some(pair.clone());
                    }
                    let mut components = vec![body.clone()];
                    components.extend(cut.iter().map(|c| c.r.clone()));
                    let kernel = self.kernel(&components, &instances.names(), what, errors)?;
                    if let (Some(cut), Some(pair)) = (&cut, pair) {
                        cutoff::check_distance(&kernel, cut, index, pair, errors);
                    }
                    Some(Term {
                        source: part.to_token_stream(),
                        instances: Some(instances),
                        kernel,
                        cutoff: cut,
                    })
                }
                Some(Err(error)) => {
                    errors.push(error);
                    None
                }
                None => {
                    let kernel = self.kernel(std::slice::from_ref(part), &[], what, errors)?;
                    Some(Term {
                        source: part.to_token_stream(),
                        instances: None,
                        kernel,
                        cutoff: None,
                    })
                }
            })
            .collect()
    }

    /// Extracts a holonomic row or row family.
    pub(super) fn row(&self, row: &Named<Expr>, errors: &mut Errors) -> Option<Row> {
        let (instances, names) = match &row.index {
            None => (None, Vec::new()),
            Some(Index::Rows(family)) => {
                let RowFamily {
                    index,
                    range,
                    filter,
                    bindings,
                    ..
                } = family.as_ref();
                let instances = self.instances(index, range, filter.as_ref(), bindings, errors)?;
                let names = instances.names();
                (Some(instances), names)
            }
            Some(Index::Size { size, .. }) => {
                errors.error_spanned(
                    size,
                    "a row family is written `name[i in a..b]: …`, with its index variable and range",
                );
                return None;
            }
        };
        let components: Vec<Expr> = match &row.value {
            Expr::Array(array) => array.elems.iter().cloned().collect(),
            other => vec![other.clone()],
        };
        let what = format!("constraint `{}`", row.name);
        let kernel = self.kernel(&components, &names, &what, errors)?;
        if let Some(instances) = &instances {
            // Which index names the members read.
            let read = member_indices(kernel.slots.iter());
            let mentions = |name: &Ident| mentions_index(&read, name);
            let depends = mentions(&instances.index)
                || instances.bindings.iter().any(|(name, _)| mentions(name));
            if !depends {
                errors.error_spanned(
                    &row.value,
                    format!(
                        "row family `{}` does not depend on its index `{}`: every instance is the same row; index a member with it (e.g. `x[{}]`) or write a plain row",
                        row.name, instances.index, instances.index
                    ),
                );
                return None;
            }
            for (name, _) in &instances.bindings {
                if !mentions(name) {
                    errors.error_spanned(
                        name,
                        format!("index binding `{name}` of row family `{}` is never used; remove it or index a member with it", row.name),
                    );
                }
            }
        }
        Some(Row {
            docs: row
                .attrs
                .iter()
                .filter(|a| a.path().is_ident("doc"))
                .cloned()
                .collect(),
            name: row.name.clone(),
            instances,
            kernel,
        })
    }

    /// Checks a family's range, filter and bindings.
    fn instances(
        &self,
        index: &Ident,
        range: &Expr,
        filter: Option<&Expr>,
        bindings: &[(Ident, Expr)],
        errors: &mut Errors,
    ) -> Option<Instances> {
        let Some((start, end)) = index::range_ends(range) else {
            errors.error_spanned(
                range,
                "a family's range is half-open with both ends, e.g. `1..N`",
            );
            return None;
        };
        if self.sizes.iter().any(|s| s.name == *index) {
            errors.error_spanned(
                index,
                format!("index `{index}` has the name of a size; rename it"),
            );
            return None;
        }
        let mut names: Vec<String> = self.sizes.iter().map(|s| s.name.to_string()).collect();
        let before = errors.is_empty();
        {
            let known = |n: &str| names.iter().any(|k| k == n);
            index::check(start, &known, "a range", errors);
            index::check(end, &known, "a range", errors);
        }
        names.push(index.to_string());
        if let Some(filter) = filter {
            let known = |n: &str| names.iter().any(|k| k == n);
            index::check(filter, &known, "a filter", errors);
        }
        for (name, value) in bindings {
            let known = |n: &str| names.iter().any(|k| k == n);
            index::check(value, &known, "an index binding", errors);
            names.push(name.to_string());
        }
        if before && !errors.is_empty() {
            return None;
        }
        Some(Instances {
            index: index.clone(),
            pair: None,
            start: start.clone(),
            end: end.clone(),
            filter: filter.cloned(),
            bindings: bindings.to_vec(),
        })
    }

    /// Extracts the kernel of `components`: member accesses become slots, the rest is lowered
    /// as in a fixed model. `indices` are the index names in scope (index and bindings).
    fn kernel(
        &self,
        components: &[Expr],
        indices: &[String],
        what: &str,
        errors: &mut Errors,
    ) -> Option<Kernel> {
        let mut slots: Vec<(Slot, String)> = Vec::new();
        let mut parameter_slots: Vec<(ParameterSlot, String)> = Vec::new();
        let mut rewritten = Vec::new();
        let before = errors.is_empty();
        for component in components {
            rewritten.push(self.rewrite(
                component,
                indices,
                &mut slots,
                &mut parameter_slots,
                what,
                errors,
            ));
        }
        if before && !errors.is_empty() {
            return None;
        }
        let slot_names: Vec<Ident> = (0..slots.len())
            .map(|k| quote::format_ident!("__slot{}", k))
            .collect();
        // The scalar parameters, then the parameter family members the kernel reads.
        let parameter_names: Vec<Ident> = self
            .parameters
            .iter()
            .map(|p| p.name.clone())
            .chain((0..parameter_slots.len()).map(|k| quote::format_ident!("__parameter{}", k)))
            .collect();
        let symbols = Symbols::new(&slot_names, &parameter_names);
        let mut names: HashMap<String, Name> = HashMap::new();
        for (k, name) in slot_names.iter().enumerate() {
            names.insert(name.to_string(), Name::Coordinate(k));
        }
        for (j, name) in parameter_names.iter().enumerate() {
            names.insert(name.to_string(), Name::Parameter(j));
        }
        let mut store = Store::new();
        let mut lowerer = Lowerer {
            store: &mut store,
            symbols: &symbols,
            names: &names,
            errors,
            uses: Default::default(),
            robot: None,
        };
        let values: Option<Vec<Id>> = rewritten
            .iter()
            .map(|e| lowerer.lower(e, Context::Dynamic))
            .collect();
        let uses = lowerer.take_uses();
        if let Some(span) = uses.time.first() {
            errors.error_at(
                *span,
                format!("{what} may not depend on time `t` in a model with families yet"),
            );
        }
        let values = values?;
        // As for a fixed-size model: the uses count only if a value has a kink in the slots.
        let kinks = if values
            .iter()
            .any(|&v| !store.non_smooth_dependencies(v, &symbols.q).is_empty())
        {
            uses.non_smooth
        } else {
            Vec::new()
        };
        Some(Kernel {
            store,
            symbols,
            slots: slots.into_iter().map(|(s, _)| s).collect(),
            values,
            parameter_slots: parameter_slots.into_iter().map(|(s, _)| s).collect(),
            kinks,
        })
    }

    /// Replaces scalar coordinates and member accesses `x[e]` by slot names, recording the
    /// slots; reports unknown families, scalar coordinates indexed and families used bare.
    fn rewrite(
        &self,
        expr: &Expr,
        indices: &[String],
        slots: &mut Vec<(Slot, String)>,
        parameter_slots: &mut Vec<(ParameterSlot, String)>,
        what: &str,
        errors: &mut Errors,
    ) -> Expr {
        use syn::visit_mut::VisitMut;
        struct Rewriter<'s, 'e> {
            scope: &'s Scope<'s>,
            indices: &'s [String],
            slots: &'s mut Vec<(Slot, String)>,
            parameter_slots: &'s mut Vec<(ParameterSlot, String)>,
            what: &'s str,
            errors: &'e mut Errors,
        }
        impl Rewriter<'_, '_> {
            fn slot(&mut self, slot: Slot, key: String) -> Expr {
                let k = match self.slots.iter().position(|(_, existing)| *existing == key) {
                    Some(k) => k,
                    None => {
                        self.slots.push((slot, key));
                        self.slots.len() - 1
                    }
                };
                let name = quote::format_ident!("__slot{}", k);
                syn::parse_quote!(#name)
            }

            /// Checks a member index against the sizes and indices in scope.
            fn index_ok(&mut self, index: &Expr) -> bool {
                let mut names: Vec<String> = self
                    .scope
                    .sizes
                    .iter()
                    .map(|s| s.name.to_string())
                    .collect();
                names.extend(self.indices.iter().cloned());
                let known = |n: &str| names.iter().any(|k| k == n);
                let before = self.errors.is_empty();
                index::check(index, &known, "a member index", self.errors);
                !before || self.errors.is_empty()
            }
        }
        impl VisitMut for Rewriter<'_, '_> {
            fn visit_expr_mut(&mut self, expr: &mut Expr) {
                match expr {
                    Expr::Index(access) => {
                        let Some(name) = size_name(&access.expr) else {
                            if let Expr::Index(inner) = &*access.expr {
                                if size_name(&inner.expr).is_some() {
                                    self.errors.error_spanned(
                                        &*access,
                                        "a family takes one index, and this access has two; for a second dimension, declare one family per column (`x[N], y[N]` share the body index `i`) or flatten the index (`x[3 * i + k]` with `x[3 * N]`)",
                                    );
                                    return;
                                }
                            }
                            self.errors.error_spanned(
                                &access.expr,
                                "only a coordinate family can be indexed, e.g. `x[i]`",
                            );
                            return;
                        };
                        if let Some(family) = self
                            .scope
                            .parameter_families
                            .iter()
                            .position(|p| p.name == name)
                        {
                            if !self.index_ok(&access.index) {
                                return;
                            }
                            let key = format!("{name}[{}]", access.index.to_token_stream());
                            let k = match self.parameter_slots.iter().position(|(_, e)| *e == key) {
                                Some(k) => k,
                                None => {
                                    self.parameter_slots.push((
                                        ParameterSlot {
                                            family,
                                            index: (*access.index).clone(),
                                        },
                                        key,
                                    ));
                                    self.parameter_slots.len() - 1
                                }
                            };
                            let ident = quote::format_ident!("__parameter{}", k);
                            *expr = syn::parse_quote!(#ident);
                            return;
                        }
                        let Some(family) = self.scope.families.iter().position(|f| f.name == name)
                        else {
                            let message = if self.scope.scalars.iter().any(|s| *s == name) {
                                format!("`{name}` is a scalar coordinate, not a family; write `{name}` without an index, or declare `{name}[N]`")
                            } else {
                                format!(
                                    "unknown family `{name}`; the coordinate families are: {}",
                                    self.scope
                                        .families
                                        .iter()
                                        .map(|f| format!("`{}`", f.name))
                                        .collect::<Vec<_>>()
                                        .join(", ")
                                )
                            };
                            self.errors.error_spanned(&access.expr, message);
                            return;
                        };
                        if !self.index_ok(&access.index) {
                            return;
                        }
                        let key = format!("{name}[{}]", access.index.to_token_stream());
                        *expr = self.slot(
                            Slot::Member {
                                family,
                                index: (*access.index).clone(),
                            },
                            key,
                        );
                    }
                    Expr::Path(path) => {
                        let Some(ident) = path.path.get_ident() else {
                            return;
                        };
                        let name = ident.to_string();
                        if let Some(k) = self.scope.scalars.iter().position(|s| *s == name) {
                            *expr = self.slot(Slot::Scalar(k), name);
                        } else if self.scope.parameter_families.iter().any(|p| p.name == name) {
                            self.errors.error_spanned(
                                &*path,
                                format!("`{name}` is a parameter family; name one member, e.g. `{name}[i]`, in {}", self.what),
                            );
                        } else if self.scope.families.iter().any(|f| f.name == name) {
                            self.errors.error_spanned(
                                &*path,
                                format!("`{name}` is a family; name one member, e.g. `{name}[i]`, in {}", self.what),
                            );
                        } else if self.indices.contains(&name)
                            || self.scope.sizes.iter().any(|s| s.name == name)
                        {
                            self.errors.error_spanned(
                                &*path,
                                format!("`{name}` is an index or a size; it may appear only inside `[…]` in {}", self.what),
                            );
                        }
                    }
                    Expr::Call(call) if matches!(&*call.func, Expr::Path(p) if p.path.is_ident("sum")) =>
                    {
                        self.errors.error_spanned(
                            &*call,
                            format!(
                                "`sum(…)` must be a term of its own in {}: `a + sum(0..N, |i| …)`",
                                self.what
                            ),
                        );
                    }
                    _ => syn::visit_mut::visit_expr_mut(self, expr),
                }
            }
        }
        let mut copy = expr.clone();
        let mut rewriter = Rewriter {
            scope: self,
            indices,
            slots,
            parameter_slots,
            what,
            errors,
        };
        rewriter.visit_expr_mut(&mut copy);
        copy
    }
}

/// Returns the name of a size written as a plain identifier.
pub(super) fn size_name(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Path(path) => path.path.get_ident().map(|i| i.to_string()),
        _ => None,
    }
}
