//! The potential energy terms of a model with families: `V` and `∇V`, each a loop over a
//! term's instances.

use proc_macro2::TokenStream;
use quote::quote;

use super::tables::{instance_table, table_footprint, Tables};
use crate::family::assembly::Part;
use crate::family::model::FamilyModel;

/// The potential's code.
pub(super) struct Potential {
    /// Per term, the loop that adds its instances to `__energy`.
    pub energy: Vec<TokenStream>,
    /// Per term, the loop that adds its instances' gradients to `grad`.
    pub gradient: Vec<TokenStream>,
}

/// Emits the potential energy terms from their derived `parts` (one per term), adding their
/// instance tables to `tables`.
pub(super) fn potential(
    model: &FamilyModel,
    parts: &[Part],
    tables: &mut Tables,
) -> syn::Result<Potential> {
    let Tables {
        fields,
        builders,
        footprint,
    } = tables;
    let mut potential_code = Vec::new();
    let mut gradient_code = Vec::new();
    for (term, part) in model.potential.iter().zip(parts) {
        let (builder, field) = instance_table(
            model,
            &part.table,
            term.instances.as_ref(),
            &term.kernel,
            "potential term",
        )?;
        fields.push(field);
        builders.push(builder);
        footprint.push(table_footprint(term.instances.as_ref(), &term.kernel, 0));
        potential_code.push(part.energy(model));
        gradient_code.push(part.gradient(model, quote!(grad)));
    }
    Ok(Potential {
        energy: potential_code,
        gradient: gradient_code,
    })
}
