//! The instance tables of a model with families and what `new` builds around them: the size
//! arguments, each kernel's table of global coordinate indices, and the memory footprint
//! estimated before allocating.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote, ToTokens};
use syn::Ident;

use super::runtime;
use crate::family::fields;
use crate::family::model::{FamilyModel, Instances, Kernel, Slot};

/// What the emitters of the terms and rows add to the struct and to `new`, in emission order.
#[derive(Default)]
pub(super) struct Tables {
    /// The struct's fields (instance tables, offsets, positions, patterns).
    pub fields: Vec<TokenStream>,
    /// The statements of `new` that build them.
    pub builders: Vec<TokenStream>,
    /// The statements of `new` that add each table to the memory estimate.
    pub footprint: Vec<TokenStream>,
}

/// The names of the instance tables, in field order.
pub(super) fn fields_names(model: &FamilyModel) -> Vec<Ident> {
    (0..model.kinetic.len())
        .map(|k| format_ident!("__kinetic{}", k))
        .chain((0..model.potential.len()).map(fields::potential_table))
        .chain((0..model.rows.len()).map(fields::row_table))
        .collect()
}

/// Emits `let N: i64 = n as i64; let R: i64 = …;` and the checks that sizes are positive.
pub(super) fn size_lets(model: &FamilyModel) -> TokenStream {
    let rt = runtime();
    let lets = model.sizes.iter().map(|size| {
        let name = &size.name;
        let value = if size.base {
            let argument = format_ident!("{}", name.to_string().to_lowercase());
            quote!(#argument as i64)
        } else {
            size.value.to_token_stream()
        };
        let what = format!("size `{name}`");
        quote! {
            let #name: i64 = #value;
            if #name < 1 {
                return Err(#rt::StepError::InvalidModel {
                    what: #what,
                    index: 0,
                    reason: "a size must be at least 1",
                });
            }
        }
    });
    quote!(#(#lets)*)
}

/// Emits the number of a kernel's instances as `f64`, before filters: `1` for a plain term,
/// `k` for a range of `k` values and `k(k − 1)/2` for a pair sum over it.
pub(super) fn instance_count(instances: Option<&Instances>) -> TokenStream {
    match instances {
        None => quote!(1.0f64),
        Some(instances) => {
            let (start, end) = (&instances.start, &instances.end);
            let values = quote!((((#end) as f64) - ((#start) as f64)).max(0.0));
            match instances.pair {
                None => values,
                Some(_) => quote!((#values * (#values - 1.0).max(0.0) / 2.0)),
            }
        }
    }
}

/// Emits the footprint of a kernel's instance table: its instances times its slots, plus
/// `extra` entries per instance (a kinetic term's block offset, a row's Jacobian positions).
pub(super) fn table_footprint(
    instances: Option<&Instances>,
    kernel: &Kernel,
    extra: usize,
) -> TokenStream {
    let per_instance =
        Literal::usize_unsuffixed(kernel.slots.len() + kernel.parameter_slots.len() + extra);
    let count = instance_count(instances);
    quote!(__footprint.table_entries += #count * (#per_instance as f64);)
}

/// Emits the builder of a kernel's instance table `table: Vec<[usize; slots]>` and its field.
pub(super) fn instance_table(
    model: &FamilyModel,
    table: &Ident,
    instances: Option<&Instances>,
    kernel: &Kernel,
    what: &str,
) -> syn::Result<(TokenStream, TokenStream)> {
    let rt = runtime();
    let slots = Literal::usize_unsuffixed(kernel.slots.len() + kernel.parameter_slots.len());
    let parameter_gathers = kernel.parameter_slots.iter().map(|slot| {
        let family = &model.parameter_families[slot.family];
        let size = &model.sizes[family.size].name;
        let index = &slot.index;
        let what = format!("{what}: member {}[{}]", family.name, index.to_token_stream());
        quote! {{
            let __k: i64 = #index;
            if __k < 0 || __k >= #size {
                return Err(#rt::StepError::InvalidModel {
                    what: #what,
                    index: __instance_value as usize,
                    reason: "the member index is out of range of its parameter family (the `index` is the family's index variable)",
                });
            }
            __k as usize
        }}
    });
    let gathers = kernel.slots.iter().map(|slot| match slot {
        Slot::Scalar(k) => {
            let k = Literal::usize_unsuffixed(*k);
            quote!(#k)
        }
        Slot::Member { family, index } => {
            let f = &model.families[*family];
            let size = &model.sizes[f.size].name;
            let group = format_ident!("__group{}", f.group);
            let width = Literal::usize_unsuffixed(model.groups[f.group].families.len());
            let position = Literal::usize_unsuffixed(f.position);
            let access = format!("{}[{}]", f.name, index.to_token_stream());
            let what = format!("{what}: member {access}");
            quote! {{
                let __k: i64 = #index;
                if __k < 0 || __k >= #size {
                    return Err(#rt::StepError::InvalidModel {
                        what: #what,
                        index: __instance_value as usize,
                        reason: "the member index is out of range of its family (the `index` is the family's index variable)",
                    });
                }
                #group + (__k as usize) * #width + #position
            }}
        }
    });
    let gathers: Vec<TokenStream> = gathers.chain(parameter_gathers).collect();
    let field = quote!(#table: ::std::vec::Vec<[usize; #slots]>);
    let builder = match instances {
        None => quote! {
            let __instance_value: i64 = 0;
            let #table: ::std::vec::Vec<[usize; #slots]> = ::std::vec![[#(#gathers),*]];
        },
        Some(instances) => {
            let (index, start, end) = (&instances.index, &instances.start, &instances.end);
            let filter = instances
                .filter
                .as_ref()
                .map(|f| quote!(if !(#f) { continue; }));
            let bindings = instances
                .bindings
                .iter()
                .map(|(name, value)| quote!(let #name: i64 = #value;));
            let body = quote! {
                #filter
                #(#bindings)*
                #table.push([#(#gathers),*]);
            };
            // A pair sum's instances are the pairs `index < pair` of the range.
            let body = match &instances.pair {
                None => body,
                Some(pair) => quote! {
                    for #pair in (#index + 1)..(#end) {
                        let #pair: i64 = #pair;
                        #body
                    }
                },
            };
            quote! {
                let mut #table: ::std::vec::Vec<[usize; #slots]> = ::std::vec::Vec::new();
                for #index in (#start)..(#end) {
                    let #index: i64 = #index;
                    let __instance_value: i64 = #index;
                    #body
                }
            }
        }
    };
    Ok((builder, field))
}

/// Returns a slot's position within its body's block.
pub(super) fn local(model: &FamilyModel, slot: &Slot) -> usize {
    match slot {
        Slot::Scalar(k) => *k,
        Slot::Member { family, .. } => model.families[*family].position,
    }
}
