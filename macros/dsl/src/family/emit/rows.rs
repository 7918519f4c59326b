//! The holonomic rows of a model with families: `g` and its Jacobian on a pattern built once by
//! `new`, the rows' penalty parts and weighted parts (for their Hessians), and their
//! acceleration bias.

use mechanism_cas::{gradient, Id, Output};
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
use syn::Ident;

use super::runtime;
use super::tables::{instance_count, instance_table, table_footprint, Tables};
use crate::family::assembly::Part;
use crate::family::kernel_code::{kernel_copy, Emitter, KernelCopy};
use crate::family::model::FamilyModel;
use crate::plan::Plan;

/// A kernel's derivatives, in its own store.
struct Derived {
    /// `∂value_c/∂slot_k` for every component `c` and slot `k`.
    gradient: Vec<Vec<Id>>,
}

/// The rows' code.
pub(super) struct Rows {
    /// The statements of `new` that build the Jacobian's pattern and each instance's positions.
    pub pattern_builders: Vec<TokenStream>,
    /// The row families as `size_checks::RowFamily` values, for the check in `new`.
    pub families: Vec<TokenStream>,
    /// Per row, the loop that writes its instances' values and Jacobian entries.
    pub code: Vec<TokenStream>,
    /// Per row, its part of the penalty `½ω²|g|²`, if the integrators need it.
    pub penalty_parts: Vec<Part>,
    /// Per row, its part `Σ_c λ_c g_c` of `Σ_k λ_k g_k`, if `derivatives: [hessians]` asks
    /// for the rows' Hessians.
    pub weighted_parts: Vec<Part>,
    /// Per row, the loop that writes its acceleration bias, if the integrators need it.
    pub bias: Vec<TokenStream>,
}

/// Emits the holonomic rows, adding their instance tables, starts and positions to `tables`.
pub(super) fn rows(model: &FamilyModel, needs: &Plan, tables: &mut Tables) -> syn::Result<Rows> {
    let rt = runtime();
    let Tables {
        fields,
        builders,
        footprint,
    } = tables;
    let mut row_code = Vec::new();
    let mut penalty_parts = Vec::new();
    let mut weighted_parts = Vec::new();
    let mut bias_code = Vec::new();
    // Rows: numbered in declaration order, instance by instance, component by component.
    let mut pattern_builders = Vec::new();
    let mut row_families = Vec::new();
    for (k, row) in model.rows.iter().enumerate() {
        let table = format_ident!("__row{}", k);
        let start = format_ident!("__row{}_start", k);
        let positions = format_ident!("__row{}_positions", k);
        let what = format!("constraint `{}`", row.name);
        let (builder, field) =
            instance_table(model, &table, row.instances.as_ref(), &row.kernel, &what)?;
        fields.push(field);
        let mut kernel = kernel_copy(&row.kernel);
        let q = kernel.symbols.q.clone();
        let components = kernel.values.len();
        let jacobian: Vec<Vec<Id>> = kernel
            .values
            .clone()
            .into_iter()
            .map(|value| gradient(&mut kernel.store, value, &q))
            .collect();
        // The rows and their Jacobian are emitted by one loop: clean them up together.
        let all: Vec<Id> = kernel
            .values
            .iter()
            .chain(jacobian.iter().flatten())
            .copied()
            .collect();
        let mut all = kernel.simplified(&all).into_iter();
        kernel.values = all.by_ref().take(components).collect();
        let derived = Derived {
            gradient: jacobian
                .iter()
                .map(|row| all.by_ref().take(row.len()).collect())
                .collect(),
        };
        // Structural nonzeros (component, slot), in emission order.
        let nonzero: Vec<(usize, usize)> = (0..components)
            .flat_map(|c| (0..q.len()).map(move |s| (c, s)))
            .filter(|&(c, s)| !kernel.store.is_zero(derived.gradient[c][s]))
            .collect();
        let count = Literal::usize_unsuffixed(nonzero.len());
        let width = Literal::usize_unsuffixed(components);
        footprint.push(table_footprint(
            row.instances.as_ref(),
            &row.kernel,
            nonzero.len(),
        ));
        let instances = instance_count(row.instances.as_ref());
        footprint.push(quote! {
            __footprint.rows += #instances * (#width as f64);
            __footprint.jacobian_entries += #instances * (#count as f64);
        });
        row_families.push(quote! {
            #rt::model::size_checks::RowFamily {
                what: #what,
                start: __model.#start,
                instances: __model.#table.len(),
                components: #width,
            }
        });
        fields.push(quote!(#start: usize));
        fields.push(quote!(#positions: ::std::vec::Vec<[usize; #count]>));
        let pairs = nonzero.iter().map(|&(c, s)| {
            let (c, s) = (Literal::usize_unsuffixed(c), Literal::usize_unsuffixed(s));
            quote!((#c, #s))
        });
        builders.push(quote! {
            #builder
            let #start: usize = __rows;
            __rows += #table.len() * #width;
        });
        pattern_builders.push(quote! {
            let #positions: ::std::vec::Vec<[usize; #count]> = #table
                .iter()
                .enumerate()
                .map(|(__instance, __ix)| {
                    let __pairs: [(usize, usize); #count] = [#(#pairs),*];
                    let mut __at = [0usize; #count];
                    let __first = __pattern.len();
                    for (__j, &(__c, __s)) in __pairs.iter().enumerate() {
                        let __entry = (#start + __instance * #width + __c, __ix[__s]);
                        // Two slots of one instance may name the same coordinate: one entry.
                        __at[__j] = match __pattern[__first..].iter().position(|e| *e == __entry) {
                            Some(__p) => __first + __p,
                            None => {
                                __pattern.push(__entry);
                                __pattern.len() - 1
                            }
                        };
                    }
                    __at
                })
                .collect();
        });
        let outputs: Vec<Output> = nonzero
            .iter()
            .enumerate()
            .map(|(j, &(c, s))| {
                let j = Literal::usize_unsuffixed(j);
                Output {
                    target: quote!(__d[#j]),
                    value: derived.gradient[c][s],
                }
            })
            .chain(kernel.values.iter().enumerate().map(|(c, &value)| {
                let c = Literal::usize_unsuffixed(c);
                Output {
                    target: quote!(__g[#c]),
                    value,
                }
            }))
            .collect();
        let statements = Emitter::new(model, &kernel).emit(&outputs);
        row_code.push(quote! {
            for (__instance, (__ix, __at)) in self.#table.iter().zip(&self.#positions).enumerate() {
                let mut __d = [0.0f64; #count];
                let mut __g = [0.0f64; #width];
                #statements
                g[self.#start + __instance * #width..][..#width].copy_from_slice(&__g);
                for (__j, &__p) in __at.iter().enumerate() {
                    jac[__p] += __d[__j];
                }
            }
        });
        if needs.penalty {
            penalty_parts.push(Part::penalty(table.clone(), &row.kernel));
        }
        if model.hessians() {
            weighted_parts.push(Part::weighted(table.clone(), &row.kernel, start.clone()));
        }
        if needs.kinematics {
            bias_code.push(acceleration_bias(model, &mut kernel, &table, &start));
        }
    }
    Ok(Rows {
        pattern_builders,
        families: row_families,
        code: row_code,
        penalty_parts,
        weighted_parts,
        bias: bias_code,
    })
}

/// Returns the loop that writes the rows' acceleration bias `vᵀ Hess g_c v` (their constraints
/// do not depend on time) for every instance of the row family `table` starting at row
/// `start`: the `g̈ = G q̈ + vᵀ Hess g v` of the index-1 formulation (Ascher et al. 1995, eq. 1.5).
fn acceleration_bias(
    model: &FamilyModel,
    kernel: &mut KernelCopy,
    table: &Ident,
    start: &Ident,
) -> TokenStream {
    let (q, v) = (kernel.symbols.q.clone(), kernel.symbols.v.clone());
    let velocities: Vec<Id> = v.iter().map(|&s| kernel.store.symbol(s)).collect();
    let directional = |store: &mut mechanism_cas::Store, f: Id| {
        let d = gradient(store, f, &q);
        let terms: Vec<Id> = d
            .iter()
            .zip(&velocities)
            .map(|(&d, &v)| store.mul(d, v))
            .collect();
        store.sum(terms)
    };
    let width = kernel.values.len();
    let outputs: Vec<Output> = kernel
        .values
        .clone()
        .into_iter()
        .enumerate()
        .map(|(c, g)| {
            let once = directional(&mut kernel.store, g);
            let value = directional(&mut kernel.store, once);
            let c = Literal::usize_unsuffixed(c);
            Output {
                target: quote!(__b[#c]),
                value,
            }
        })
        .collect();
    let statements = Emitter::new(model, &*kernel).emit(&outputs);
    let width = Literal::usize_unsuffixed(width);
    quote! {
        for (__instance, __ix) in self.#table.iter().enumerate() {
            let mut __b = [0.0f64; #width];
            #statements
            out[self.#start + __instance * #width..][..#width].copy_from_slice(&__b);
        }
    }
}
