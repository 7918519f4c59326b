//! The potential energy terms of a model with families: `V` and `∇V`, each a loop over a
//! term's instances, and the parts its derivatives are assembled from.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::tables::{instance_table, table_footprint, Tables};
use crate::family::assembly::Part;
use crate::family::model::FamilyModel;

/// The potential's code.
pub(super) struct Potential {
    /// Per term, its part, from which the Hessians and contractions are assembled.
    pub parts: Vec<Part>,
    /// Per term, the loop that adds its instances to `__energy`.
    pub energy: Vec<TokenStream>,
    /// Per term, the loop that adds its instances' gradients to `grad`.
    pub gradient: Vec<TokenStream>,
}

/// Emits the potential energy terms, adding their instance tables to `tables`.
pub(super) fn potential(model: &FamilyModel, tables: &mut Tables) -> syn::Result<Potential> {
    let Tables {
        fields,
        builders,
        footprint,
    } = tables;
    let mut potential_code = Vec::new();
    let mut gradient_code = Vec::new();
    let mut potential_parts = Vec::new();
    for (k, term) in model.potential.iter().enumerate() {
        let table = format_ident!("__potential{}", k);
        let (builder, field) = instance_table(
            model,
            &table,
            term.instances.as_ref(),
            &term.kernel,
            "potential term",
        )?;
        fields.push(field);
        builders.push(builder);
        footprint.push(table_footprint(term.instances.as_ref(), &term.kernel, 0));
        let mut part = Part::potential(table, &term.kernel, term.cutoff.as_ref());
        potential_code.push(part.energy(model));
        gradient_code.push(part.gradient(model, quote!(grad)));
        potential_parts.push(part);
    }
    Ok(Potential {
        parts: potential_parts,
        energy: potential_code,
        gradient: gradient_code,
    })
}
