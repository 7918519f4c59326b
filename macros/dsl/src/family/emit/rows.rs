//! The holonomic rows of a model with families: `g` and its Jacobian on a pattern built once by
//! `new`, and their acceleration bias (their penalty and weighted parts are assembled by
//! [`super::derivatives`]).

use mechanism_cas::{Id, Output};
use proc_macro2::{Literal, TokenStream};
use quote::quote;
use syn::Ident;

use super::runtime;
use super::tables::{instance_count, instance_table, table_footprint, Tables};
use crate::family::derive::RowDerived;
use crate::family::fields::{row_positions, row_start, row_table};
use crate::family::kernel_code::{Emitter, KernelCopy};
use crate::family::model::FamilyModel;
use crate::family::switch::indexed;

/// The rows' code.
pub(super) struct Rows {
    /// The statements of `new` that build the Jacobian's pattern and each instance's positions.
    pub pattern_builders: Vec<TokenStream>,
    /// The row families as `size_checks::RowFamily` values, for the check in `new`.
    pub families: Vec<TokenStream>,
    /// Per row, the loop that writes its instances' values and Jacobian entries.
    pub code: Vec<TokenStream>,
    /// Per row, the loop that writes its acceleration bias, if the integrators need it.
    pub bias: Vec<TokenStream>,
}

/// Emits the holonomic rows from their derived quantities `derived` (one per row), adding their
/// instance tables, starts and positions to `tables`.
pub(super) fn rows(
    model: &FamilyModel,
    derived: &[RowDerived],
    tables: &mut Tables,
) -> syn::Result<Rows> {
    let rt = runtime();
    let Tables {
        fields,
        builders,
        footprint,
    } = tables;
    let mut row_code = Vec::new();
    let mut bias_code = Vec::new();
    // Rows: numbered in declaration order, instance by instance, component by component.
    let mut pattern_builders = Vec::new();
    let mut row_families = Vec::new();
    for (k, (row, derived)) in model.rows.iter().zip(derived).enumerate() {
        let (table, start, positions) = (row_table(k), row_start(k), row_positions(k));
        let what = format!("constraint `{}`", row.name);
        let (builder, field) =
            instance_table(model, &table, row.instances.as_ref(), &row.kernel, &what)?;
        fields.push(field);
        let kernel = &derived.kernel;
        let components = kernel.values.len();
        let slots = kernel.symbols.q.len();
        // Structural nonzeros (component, slot), in emission order.
        let nonzero: Vec<(usize, usize)> = (0..components)
            .flat_map(|c| (0..slots).map(move |s| (c, s)))
            .filter(|&(c, s)| !kernel.store.is_zero(derived.jacobian[c][s]))
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
                    value: derived.jacobian[c][s],
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
        let statements = Emitter::new(model, kernel).emit(&outputs);
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
        if let Some(bias) = &derived.bias {
            bias_code.push(acceleration_bias(model, kernel, bias, &table, &start));
        }
    }
    Ok(Rows {
        pattern_builders,
        families: row_families,
        code: row_code,
        bias: bias_code,
    })
}

/// Returns the loop that writes the rows' acceleration bias `bias` (`vᵀ Hess g_c v` per
/// component, [`crate::family::derive`]) for every instance of the row family `table` starting
/// at row `start`.
fn acceleration_bias(
    model: &FamilyModel,
    kernel: &KernelCopy,
    bias: &[Id],
    table: &Ident,
    start: &Ident,
) -> TokenStream {
    let outputs = indexed(quote!(__b), bias.iter().copied());
    let statements = Emitter::new(model, kernel).emit(&outputs);
    let width = Literal::usize_unsuffixed(bias.len());
    quote! {
        for (__instance, __ix) in self.#table.iter().enumerate() {
            let mut __b = [0.0f64; #width];
            #statements
            out[self.#start + __instance * #width..][..#width].copy_from_slice(&__b);
        }
    }
}
