//! The kinetic energy terms of a model with families: `T` and the mass matrix's blocks, each a
//! loop over a term's instances.

use mechanism_cas::{Output, Symbol};
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use super::tables::{instance_table, local, table_footprint, Tables};
use crate::family::checks::BodyOf;
use crate::family::derive::MassBlock;
use crate::family::kernel_code::Emitter;
use crate::family::model::FamilyModel;

/// The kinetic energy's code.
pub(super) struct Kinetic {
    /// Per term, the loop that adds its instances to `__energy`.
    pub energy: Vec<TokenStream>,
    /// Per term, the loop that writes its instances' mass block entries.
    pub mass: Vec<TokenStream>,
    /// Whether no mass entry depends on the coordinates.
    pub constant_mass: bool,
}

/// Emits the kinetic energy terms with their mass blocks `blocks_derived`, on the body of each
/// (`bodies`, from [`crate::family::checks::terms`]), adding their instance tables to `tables`.
pub(super) fn kinetic(
    model: &FamilyModel,
    bodies: &[Option<BodyOf>],
    blocks_derived: &[MassBlock],
    tables: &mut Tables,
) -> syn::Result<Kinetic> {
    let Tables {
        fields,
        builders,
        footprint,
    } = tables;
    let mut kinetic_code = Vec::new();
    let mut mass_code = Vec::new();
    let mut constant_mass = true;
    for (k, term) in model.kinetic.iter().enumerate() {
        let table = format_ident!("__kinetic{}", k);
        let blocks = format_ident!("__kinetic{}_block", k);
        footprint.push(table_footprint(term.instances.as_ref(), &term.kernel, 1));
        let (builder, field) = instance_table(
            model,
            &table,
            term.instances.as_ref(),
            &term.kernel,
            "kinetic energy term",
        )?;
        fields.push(field);
        fields.push(quote!(#blocks: ::std::vec::Vec<usize>));
        let body = &bodies[k];
        let block_offset = match body {
            Some(BodyOf::Scalars) | None => quote!(0usize),
            Some(BodyOf::Group { slot, .. }) => {
                let slot = Literal::usize_unsuffixed(*slot);
                quote!(__block_offsets[__body_of[__ix[#slot]]])
            }
        };
        builders.push(quote! {
            #builder
            let #blocks: ::std::vec::Vec<usize> = #table.iter().map(|__ix| #block_offset).collect();
        });
        let kernel = &term.kernel;
        let value = kernel.values[0];
        let code = Emitter::new(model, kernel);
        let value_statements = code.emit(&[Output {
            target: quote!(__value),
            value,
        }]);
        kinetic_code.push(quote! {
            for __ix in &self.#table {
                let __value: f64;
                #value_statements
                __energy += __value;
            }
        });
        // Mass block entries ∂²T/∂v_a∂v_b of the velocity slots, all in one body.
        let MassBlock {
            kernel: store_kernel,
            entries: h,
        } = &blocks_derived[k];
        let q: &[Symbol] = &store_kernel.symbols.q;
        let mut outputs = Vec::new();
        let width = match body {
            Some(BodyOf::Scalars) => model.scalars.len(),
            Some(BodyOf::Group { group, .. }) => model.groups[*group].families.len(),
            None => 0,
        };
        for (a, row) in h.iter().enumerate() {
            for (b, &entry) in row.iter().enumerate() {
                if store_kernel.store.is_zero(entry) {
                    continue;
                }
                if q.iter().any(|&s| store_kernel.store.depends_on(entry, s)) {
                    constant_mass = false;
                }
                let (la, lb) = (
                    local(model, &kernel.slots[a]),
                    local(model, &kernel.slots[b]),
                );
                let position = Literal::usize_unsuffixed(la * width + lb);
                outputs.push(Output {
                    target: quote!(blocks[__offset + #position]),
                    value: entry,
                });
            }
        }
        let statements = Emitter::new(model, store_kernel).emit(&outputs);
        mass_code.push(quote! {
            for (__ix, &__offset) in self.#table.iter().zip(&self.#blocks) {
                #statements
            }
        });
    }
    Ok(Kinetic {
        energy: kinetic_code,
        mass: mass_code,
        constant_mass,
    })
}
