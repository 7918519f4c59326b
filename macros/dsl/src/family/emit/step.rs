//! What `derivatives: [step_jacobians]` adds to a model with families: the flat parameter
//! vector (`SparseParameters`), the rows' Hessians and the applied force's Jacobians
//! (`SparseStepDerivatives`; the tier's family models have no applied forces) and every
//! function's derivatives in the parameters (`SparseParameterDerivatives`; with the third
//! derivative planned, `SparsePotentialHessianParameterDerivative`), each a loop over a
//! kernel's instances that evaluates its entries ([`StepDerived`]) and hands each to the
//! caller's visitor with its global indices.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
use syn::Ident;

use super::runtime;
use crate::family::derive::{Entries, StepDerived};
use crate::family::fields::{potential_table, row_start, row_table};
use crate::family::kernel_code::Emitter;
use crate::family::model::FamilyModel;

/// One index of a visited entry.
#[derive(Clone, Copy)]
enum Key {
    /// A kernel slot: its global coordinate `__ix[k]`.
    Slot,
    /// A position in the kernel's parameter symbols: a scalar's index, or a family member's.
    Parameter,
    /// A component of a row family's instance: its global row.
    Row,
}

/// Emits the three traits' impls from the derived entries `step`.
pub(super) fn step_derivatives(model: &FamilyModel, step: &StepDerived) -> TokenStream {
    let rt = runtime();
    let name = &model.name;
    let offsets = parameter_offsets(model);
    let kinetic_tables: Vec<Ident> = (0..model.kinetic.len())
        .map(|k| format_ident!("__kinetic{}", k))
        .collect();
    let visits = |entries: &[Entries<3>], tables: &[Ident], keys: [Key; 3], rows: bool| {
        loops(model, entries, tables, &keys, rows)
    };
    let row_tables: Vec<Ident> = (0..model.rows.len()).map(row_table).collect();
    let potential_tables: Vec<Ident> = (0..model.potential.len()).map(potential_table).collect();
    let mass = visits(
        &step.mass,
        &kinetic_tables,
        [Key::Slot, Key::Slot, Key::Parameter],
        false,
    );
    let hessian = visits(
        &step.hessian,
        &row_tables,
        [Key::Row, Key::Slot, Key::Slot],
        true,
    );
    let jacobian = visits(
        &step.jacobian,
        &row_tables,
        [Key::Row, Key::Slot, Key::Parameter],
        true,
    );
    let potential = loops(
        model,
        &step.potential,
        &potential_tables,
        &[Key::Slot, Key::Parameter],
        false,
    );
    let values = loops(
        model,
        &step.values,
        &row_tables,
        &[Key::Row, Key::Parameter],
        true,
    );
    let parameters = parameters_impl(model);
    let hessian_parameters = step.potential_hessian.as_ref().map(|entries| {
        // A potential whose Hessian does not depend on the parameters visits nothing.
        let visits = if entries.iter().all(|group| group.entries.is_empty()) {
            quote!()
        } else {
            let visits = loops(
                model,
                entries,
                &potential_tables,
                &[Key::Slot, Key::Slot, Key::Parameter],
                false,
            );
            quote!(#offsets #visits)
        };
        quote! {
            impl #rt::model::SparsePotentialHessianParameterDerivative for #name {
                #[allow(unused_variables, unused_mut, clippy::all)]
                fn potential_hessian_parameter_entries(
                    &self,
                    q: &[f64],
                    visit: &mut impl FnMut(usize, usize, usize, f64),
                ) {
                    #visits
                }
            }
        }
    });
    quote! {
        #parameters
        #hessian_parameters
        impl #rt::model::SparseStepDerivatives for #name {
            #[allow(unused_variables, unused_mut, clippy::all)]
            fn constraint_hessian_entries(
                &self,
                q: &[f64],
                t: f64,
                visit: &mut impl FnMut(usize, usize, usize, f64),
            ) {
                #hessian
            }
            fn applied_force_jacobian_entries(
                &self,
                _q: &[f64],
                _v: &[f64],
                _t: f64,
                _visit: &mut impl FnMut(usize, usize, f64, f64),
            ) {
            }
        }
        impl #rt::model::SparseParameterDerivatives for #name {
            #[allow(unused_variables, unused_mut, clippy::all)]
            fn mass_parameter_entries(
                &self,
                q: &[f64],
                visit: &mut impl FnMut(usize, usize, usize, f64),
            ) {
                #offsets
                #mass
            }
            #[allow(unused_variables, unused_mut, clippy::all)]
            fn potential_gradient_parameter_entries(
                &self,
                q: &[f64],
                visit: &mut impl FnMut(usize, usize, f64),
            ) {
                #offsets
                #potential
            }
            fn applied_force_parameter_entries(
                &self,
                _q: &[f64],
                _v: &[f64],
                _t: f64,
                _visit: &mut impl FnMut(usize, usize, f64),
            ) {
            }
            #[allow(unused_variables, unused_mut, clippy::all)]
            fn constraint_parameter_entries(
                &self,
                q: &[f64],
                t: f64,
                visit: &mut impl FnMut(usize, usize, f64),
            ) {
                #offsets
                #values
            }
            #[allow(unused_variables, unused_mut, clippy::all)]
            fn constraint_jacobian_parameter_entries(
                &self,
                q: &[f64],
                t: f64,
                visit: &mut impl FnMut(usize, usize, usize, f64),
            ) {
                #offsets
                #jacobian
            }
        }
    }
}

/// `let __poff = [..]`: the position in the flat parameter vector of each parameter family's
/// first member (after the scalars and the families before it, at their current lengths).
fn parameter_offsets(model: &FamilyModel) -> TokenStream {
    let scalars = Literal::usize_unsuffixed(model.parameters.len());
    let count = Literal::usize_unsuffixed(model.parameter_families.len());
    let families = model.parameter_families.iter().map(|p| &p.name);
    quote! {
        let mut __next: usize = #scalars;
        let __poff: [usize; #count] = [#({
            let __first = __next;
            __next += self.#families.len();
            __first
        }),*];
    }
}

/// The loops over each kernel's instances (`tables`, one per entry group) that evaluate the
/// entries and visit each with its indices; `rows`: the tables are row families', whose
/// component keys are global rows.
fn loops<const K: usize>(
    model: &FamilyModel,
    groups: &[Entries<K>],
    tables: &[Ident],
    keys: &[Key],
    rows: bool,
) -> TokenStream {
    let code = groups
        .iter()
        .zip(tables)
        .enumerate()
        .map(|(k, (group, table))| {
            if group.entries.is_empty() {
                return quote!();
            }
            let kernel = &group.kernel;
            let slots = kernel.slots;
            let scalars = model.parameters.len();
            let count = Literal::usize_unsuffixed(group.entries.len());
            let outputs: Vec<mechanism_cas::Output> = group
                .entries
                .iter()
                .enumerate()
                .map(|(e, &(_, value))| {
                    let e = Literal::usize_unsuffixed(e);
                    mechanism_cas::Output {
                        target: quote!(__e[#e]),
                        value,
                    }
                })
                .collect();
            let statements = Emitter::new(model, kernel).emit(&outputs);
            let (start, width) = (
                row_start(k),
                Literal::usize_unsuffixed(if rows {
                    model.rows[k].kernel.values.len()
                } else {
                    0
                }),
            );
            let visits = group.entries.iter().enumerate().map(|(e, (key, _))| {
                let e = Literal::usize_unsuffixed(e);
                let indices = key.iter().zip(keys).map(|(&index, kind)| match kind {
                    Key::Slot => {
                        let index = Literal::usize_unsuffixed(index);
                        quote!(__ix[#index])
                    }
                    Key::Row => {
                        let index = Literal::usize_unsuffixed(index);
                        quote!(self.#start + __instance * #width + #index)
                    }
                    Key::Parameter if index < scalars => {
                        let index = Literal::usize_unsuffixed(index);
                        quote!(#index)
                    }
                    Key::Parameter => {
                        let slot = index - scalars;
                        let family = Literal::usize_unsuffixed(kernel.parameter_families[slot]);
                        let position = Literal::usize_unsuffixed(slots + slot);
                        quote!(__poff[#family] + __ix[#position])
                    }
                });
                quote!(visit(#(#indices,)* __e[#e]);)
            });
            quote! {
                for (__instance, __ix) in self.#table.iter().enumerate() {
                    let mut __e = [0.0f64; #count];
                    #statements
                    #(#visits)*
                }
            }
        });
    quote!(#(#code)*)
}

/// `SparseParameters`: the scalars in declaration order, then each family's members.
fn parameters_impl(model: &FamilyModel) -> TokenStream {
    let rt = runtime();
    let name = &model.name;
    let scalars: Vec<&Ident> = model.parameters.iter().map(|p| &p.name).collect();
    let scalar_names: Vec<String> = scalars.iter().map(|p| p.to_string()).collect();
    let scalar_count = Literal::usize_unsuffixed(scalars.len());
    let scalar_positions: Vec<Literal> =
        (0..scalars.len()).map(Literal::usize_unsuffixed).collect();
    let families: Vec<&Ident> = model.parameter_families.iter().map(|p| &p.name).collect();
    let family_names: Vec<String> = families.iter().map(|p| p.to_string()).collect();
    quote! {
        impl #rt::model::SparseParameters for #name {
            fn parameter_count(&self) -> usize {
                #scalar_count #(+ self.#families.len())*
            }
            #[allow(unused_mut, unused_variables)]
            fn parameter_name(&self, j: usize) -> ::core::option::Option<(&'static str, ::core::option::Option<usize>)> {
                const __SCALARS: [&str; #scalar_count] = [#(#scalar_names),*];
                if let ::core::option::Option::Some(&__name) = __SCALARS.get(j) {
                    return ::core::option::Option::Some((__name, ::core::option::Option::None));
                }
                let mut __j = j - #scalar_count;
                #(
                    if __j < self.#families.len() {
                        return ::core::option::Option::Some((#family_names, ::core::option::Option::Some(__j)));
                    }
                    __j -= self.#families.len();
                )*
                ::core::option::Option::None
            }
            fn parameter_values(&self) -> ::std::vec::Vec<f64> {
                let mut __values = ::std::vec::Vec::with_capacity(#rt::model::SparseParameters::parameter_count(self));
                #(__values.push(self.#scalars);)*
                #(__values.extend_from_slice(&self.#families);)*
                __values
            }
            #[allow(unused_mut, unused_variables)]
            fn set_parameter_values(&mut self, values: &[f64]) -> ::core::result::Result<(), #rt::StepError> {
                let __count = #rt::model::SparseParameters::parameter_count(self);
                if values.len() != __count {
                    return ::core::result::Result::Err(#rt::StepError::InvalidModel {
                        what: "parameter values",
                        index: values.len(),
                        reason: "must have one value per parameter (SparseParameters::parameter_count)",
                    });
                }
                #(self.#scalars = values[#scalar_positions];)*
                let mut __next: usize = #scalar_count;
                #(
                    let __length = self.#families.len();
                    self.#families.copy_from_slice(&values[__next..__next + __length]);
                    __next += __length;
                )*
                ::core::result::Result::Ok(())
            }
        }
    }
}
