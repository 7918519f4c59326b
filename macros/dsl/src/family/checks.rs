//! Checks of a resolved model with families against the default sizes, the integrators and
//! `derivatives: [..]` ([`terms`]): member indices in range, no cutoff where full Z&S needs
//! `a·V‴·a`, no kink where `derivatives: [hessians]` needs second derivatives, and each
//! kinetic term on one body. (Their inertia is checked with the fixed-size models' in
//! [`crate::validate`]'s one inertia check.)

use std::collections::HashMap;

use quote::ToTokens;
use syn::Ident;

use crate::errors::Errors;
use crate::family::index::{self, Value};
use crate::family::model::{Cutoff, FamilyModel, Slot};
use crate::integrators::fit::hessian_kink;

/// How many instances at each end of a range the macro evaluates with the default sizes to
/// report an out-of-range literal offset at compile time (the constructor checks them all).
const CHECKED_AT_EACH_END: i64 = 64;

/// Checks the terms and rows against the default sizes, the integrators and `derivatives:
/// [..]`, reporting every error at the user's tokens: member indices in range with the default
/// sizes, no pair-sum cutoff in a model for full Z&S, no non-smooth function in the potential
/// or the rows of a model that asks for their Hessians, and each kinetic term's velocities
/// those of one body, whose body it returns per kinetic term.
pub fn terms(model: &FamilyModel) -> syn::Result<Vec<Option<BodyOf>>> {
    let mut errors = Errors::new();
    check_defaults(model, &mut errors);
    let cutoffs: Vec<&Cutoff> = model
        .potential
        .iter()
        .filter_map(|t| t.cutoff.as_ref())
        .collect();
    if model.plan().third_derivative {
        for cutoff in &cutoffs {
            errors.error_spanned(
                &cutoff.source,
                "full Z&S (`zs`) needs the contraction a·V‴·a, which a pair sum with a cutoff does not provide; step this model with `zss`, `zss_stiff`, `verlet`, `rattle`, `shake` or `spook` (list them in `integrators: [..]`), or drop the cutoff",
            );
        }
    }
    if model.step_jacobians() {
        for cutoff in &cutoffs {
            errors.error_spanned(
                &cutoff.source,
                "`derivatives: [step_jacobians]` differentiates every term in the parameters, which a pair sum with a cutoff does not provide yet (its switch depends on the `on` and `off` parameters); drop the cutoff, or `step_jacobians`",
            );
        }
    }
    if model.hessians() {
        kink_checks(model, &mut errors);
    }
    let bodies = body_checks(model, &mut errors);
    errors.finish()?;
    Ok(bodies)
}

/// Reports each non-smooth function of the potential's terms and of the rows, whose second
/// derivatives `derivatives: [hessians]` asks for, as a fixed-size model's
/// ([`hessian_kink_problems`](crate::integrators::fit::hessian_kink_problems)) are.
fn kink_checks(model: &FamilyModel, errors: &mut Errors) {
    let what = "`derivatives: [hessians]`";
    let energy = model.potential.iter().map(|t| (&t.kernel, "the energy"));
    let rows = model.rows.iter().map(|r| (&r.kernel, "the constraints"));
    for (kernel, of) in energy.chain(rows) {
        for &(span, function) in &kernel.kinks {
            errors.error_at(span, hessian_kink(what, function, of));
        }
    }
}

/// Where a kinetic term's velocities live.
pub enum BodyOf {
    /// The scalar coordinates' body.
    Scalars,
    /// A body of group `group`, named by the term's slot `slot`.
    Group {
        /// The group's index.
        group: usize,
        /// The slot that names the body.
        slot: usize,
    },
}

/// Checks that each kinetic term's velocities are those of one body (the sparse tier's mass
/// matrix is block diagonal) and returns that body.
fn body_checks(model: &FamilyModel, errors: &mut Errors) -> Vec<Option<BodyOf>> {
    model
        .kinetic
        .iter()
        .map(|term| {
            let kernel = &term.kernel;
            let moving: Vec<usize> = (0..kernel.slots.len())
                .filter(|&s| kernel.values.iter().any(|&v| kernel.store.depends_on(v, kernel.symbols.v[s])))
                .collect();
            let mut body: Option<(Option<usize>, String)> = None;
            for &s in &moving {
                let this = match &kernel.slots[s] {
                    Slot::Scalar(_) => (None, String::new()),
                    Slot::Member { family, index } => (
                        Some(model.families[*family].group),
                        index.to_token_stream().to_string(),
                    ),
                };
                match &body {
                    None => body = Some(this),
                    Some(existing) if *existing == this => {}
                    Some(_) => {
                        errors.error_spanned(
                            &term.source,
                            "this kinetic energy term couples the velocities of two bodies; the sparse tier needs a block-diagonal mass matrix — write each body's kinetic energy as its own term",
                        );
                        return None;
                    }
                }
            }
            let (group, _) = body?;
            Some(match group {
                None => BodyOf::Scalars,
                Some(group) => BodyOf::Group {
                    group,
                    slot: moving[0],
                },
            })
        })
        .collect()
}

/// Evaluates every family's first and last instances with the default sizes and reports a
/// member index out of range at its tokens: a literal offset such as `x[i - 1]` with
/// `i in 0..N` is a compile error.
fn check_defaults(model: &FamilyModel, errors: &mut Errors) {
    let mut env: HashMap<String, i64> = HashMap::new();
    for size in &model.sizes {
        env.insert(size.name.to_string(), size.default);
    }
    let kernels = model
        .kinetic
        .iter()
        .chain(&model.potential)
        .map(|t| (t.instances.as_ref(), &t.kernel))
        .chain(model.rows.iter().map(|r| (r.instances.as_ref(), &r.kernel)));
    for (instances, kernel) in kernels {
        // Every member access of the kernel: (family name, its size's default, index).
        let accesses: Vec<(&Ident, i64, &syn::Expr)> = kernel
            .slots
            .iter()
            .filter_map(|slot| match slot {
                Slot::Member { family, index } => {
                    let f = &model.families[*family];
                    Some((&f.name, model.sizes[f.size].default, index))
                }
                Slot::Scalar(_) => None,
            })
            .chain(kernel.parameter_slots.iter().map(|slot| {
                let f = &model.parameter_families[slot.family];
                (&f.name, model.sizes[f.size].default, &slot.index)
            }))
            .collect();
        let check_slots = |env: &HashMap<String, i64>, errors: &mut Errors, at: Option<i64>| {
            for &(name, size, index) in &accesses {
                match index::eval(index, env) {
                    Some(Value::Int(k)) if (0..size).contains(&k) => {}
                    Some(Value::Int(k)) => {
                        let instance = at.map_or(String::new(), |i| format!(" for index {i}"));
                        errors.error_spanned(
                            index,
                            format!(
                                "`{}[{}]` is out of range{instance}: it is {k}, and `{}` has {size} members with the default sizes; shift the family's range or the offset",
                                name,
                                index.to_token_stream(),
                                name
                            ),
                        );
                    }
                    _ => errors.error_spanned(index, "this member index is not an integer with the default sizes (a division by zero?)"),
                }
            }
        };
        let Some(instances) = instances else {
            check_slots(&env, errors, None);
            continue;
        };
        let (Some(Value::Int(start)), Some(Value::Int(end))) = (
            index::eval(&instances.start, &env),
            index::eval(&instances.end, &env),
        ) else {
            errors.error_spanned(
                &instances.start,
                "this range does not evaluate to integers with the default sizes",
            );
            continue;
        };
        let before = errors.is_empty();
        let values = (start..end.min(start.saturating_add(CHECKED_AT_EACH_END)))
            .chain(end.saturating_sub(CHECKED_AT_EACH_END).max(start)..end);
        // A pair sum's second index: its first and last values after `i`.
        let seconds = |i: i64| -> Vec<Option<i64>> {
            match instances.pair {
                None => vec![None],
                Some(_) => {
                    let first = i.saturating_add(1);
                    (first..end.min(first.saturating_add(CHECKED_AT_EACH_END)))
                        .chain(end.saturating_sub(CHECKED_AT_EACH_END).max(first)..end)
                        .map(Some)
                        .collect()
                }
            }
        };
        let values: Vec<(i64, Option<i64>)> = values
            .flat_map(|i| seconds(i).into_iter().map(move |j| (i, j)))
            .collect();
        for (i, j) in values {
            let mut env = env.clone();
            env.insert(instances.index.to_string(), i);
            if let (Some(pair), Some(j)) = (&instances.pair, j) {
                env.insert(pair.to_string(), j);
            }
            if let Some(filter) = &instances.filter {
                if index::eval(filter, &env) != Some(Value::Bool(true)) {
                    continue;
                }
            }
            for (name, value) in &instances.bindings {
                if let Some(Value::Int(v)) = index::eval(value, &env) {
                    env.insert(name.to_string(), v);
                }
            }
            check_slots(&env, errors, Some(i));
            if before && !errors.is_empty() {
                break;
            }
        }
    }
}
