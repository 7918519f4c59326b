//! The model's type and its inertia: the struct of parameters with `Default` and `new`, the
//! `Configuration` listing of coordinates, constraints and parameters, and `Inertia` (`M(q)`,
//! the kinetic energy) with the `ConstantMass` marker.

use mechanism_cas::Id;
use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::{allow_lints, runtime, Code};
use crate::derive::Derived;

impl Code<'_> {
    pub(super) fn definition(&self) -> TokenStream {
        let model = self.model;
        let (rt, allow) = (runtime(), allow_lints());
        let (attrs, vis, name) = (&model.attrs, &model.vis, &model.name);
        let n = Literal::usize_unsuffixed(model.dof());
        let fields = model.parameters.iter().map(|p| {
            let (attrs, field) = (&p.attrs, &p.name);
            let doc = format!("Parameter `{}` (default `{}`).", field, p.default);
            let doc = if attrs.is_empty() {
                quote!(#[doc = #doc])
            } else {
                quote!(#[doc = ""] #[doc = #doc])
            };
            quote!(#(#attrs)* #doc pub #field: f64)
        });
        let defaults = model.parameters.iter().map(|p| {
            let (field, value) = (&p.name, Literal::f64_suffixed(p.default));
            quote!(#field: #value)
        });
        // A coordinate named with a keyword is written `r#type`; it is called `type`.
        let coordinates: Vec<String> = model
            .coordinates
            .iter()
            .map(|c| syn::ext::IdentExt::unraw(c).to_string())
            .collect();
        let listing = format!(
            "Coordinates: {}.",
            coordinates
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let constraint_listing = row_listing(
            "Holonomic constraints",
            model.constraints.iter().map(|c| (&c.name, &c.docs)),
        );
        let nonholonomic_listing = row_listing(
            "Nonholonomic constraints",
            model.nonholonomic.iter().map(|r| (&r.name, &r.docs)),
        );
        let integrators = format!(
            "Compiled for the integrators: {}.",
            model
                .integrators
                .iter()
                .map(|i| format!("`{}`", i.name()))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let families = model.integrators.iter().map(|i| {
            let variant = quote::format_ident!("{}", format!("{i:?}"));
            quote!(#rt::capabilities::Family::#variant)
        });
        quote! {
            #(#attrs)*
            #[doc = ""]
            #[doc = #listing]
            #constraint_listing
            #nonholonomic_listing
            #[doc = ""]
            #[doc = #integrators]
            #[derive(Clone, Copy, Debug, PartialEq)]
            #vis struct #name {
                #(#fields,)*
            }

            #allow
            impl ::core::default::Default for #name {
                fn default() -> Self {
                    #name { #(#defaults,)* }
                }
            }

            #allow
            impl #name {
                /// Number of generalized coordinates.
                pub const DOF: usize = #n;

                /// The integrator families this model is compiled for (its
                /// `integrators: [..]`, or the default set that can step it).
                pub const INTEGRATORS: &'static [#rt::capabilities::Family] = &[#(#families),*];

                /// Creates the model with every parameter at its default value.
                pub fn new() -> Self {
                    <Self as ::core::default::Default>::default()
                }
            }

            impl #rt::Configuration<#n> for #name {
                const COORDINATES: [&'static str; #n] = [#(#coordinates),*];
            }
        }
    }

    /// Returns `[d_0, …, d_{N−1}]`: whether some expression of `roots` depends on `q_i`, the
    /// dependency mask of a discrete gradient (structural, so a `false` is exact).
    pub(super) fn dependency_mask(&self, roots: &[Id]) -> TokenStream {
        let mask = self.store().dependency_mask(roots, &self.model.symbols.q);
        quote!([#(#mask),*])
    }

    /// Returns whether the mass matrix is structurally diagonal (point masses).
    pub(super) fn diagonal_mass(&self, derived: &Derived) -> bool {
        let n = self.model.dof();
        (0..n).all(|i| (0..n).all(|j| i == j || self.store().is_zero(derived.mass[i][j])))
    }

    pub(super) fn inertia(&self, derived: &Derived) -> TokenStream {
        let model = self.model;
        let (rt, allow, name) = (runtime(), allow_lints(), &model.name);
        let n = Literal::usize_unsuffixed(model.dof());
        // The same test as the integrator check's (`integrators::fit`), so that the macro
        // refuses exactly the integrators the `ConstantMass` bound would.
        let constant = !model.configuration_dependent_mass();
        // `T(q, v)` is emitted from its own expression, so its q-dependence joins M's.
        let mut roots: Vec<Id> = derived.mass.iter().flatten().copied().collect();
        roots.push(derived.kinetic);
        let depends_on = self.dependency_mask(&roots);
        let out = quote!(out);
        let mass = self.body(self.matrix(&out, &derived.mass), &[&out]);
        let kinetic = self.scalar_body(derived.kinetic);
        let mass_solve = (derived.linear_solve && constant && self.diagonal_mass(derived))
            .then(|| self.mass_solve_method(&derived.mass));
        let parameter_fields: Vec<&syn::Ident> = model.parameters.iter().map(|p| &p.name).collect();
        let parameter_checks = model.parameters.iter().map(|p| {
            let (field, label) = (&p.name, p.name.to_string());
            quote! {
                if !self.#field.is_finite() {
                    return ::core::option::Option::Some((#label, self.#field));
                }
            }
        });
        // What the integrators that freeze `M` over a step are bounded on; `do_not_recommend`
        // keeps the library's models out of the "implemented for" list of the error that
        // names a model without it.
        let constant_mass = constant.then(|| {
            quote! {
                #[diagnostic::do_not_recommend]
                impl #rt::ConstantMass<#n> for #name {}
            }
        });
        quote! {
            #allow
            impl #rt::Inertia<#n> for #name {
                const CONSTANT_MASS: bool = #constant;
                const MASS_DEPENDS_ON: [bool; #n] = #depends_on;

                #[inline]
                fn non_finite_parameter(&self) -> ::core::option::Option<(&'static str, f64)> {
                    // One branch for the common case; the culprit is searched only on failure.
                    if true #(& (self.#parameter_fields * 0.0 == 0.0))* {
                        return ::core::option::Option::None;
                    }
                    #(#parameter_checks)*
                    ::core::option::Option::None
                }

                #[inline]
                fn mass_matrix(&self, q: &#rt::SVector<f64, #n>, out: &mut #rt::SMatrix<f64, #n, #n>) {
                    #mass
                }

                #[inline]
                fn kinetic_energy(&self, q: &#rt::SVector<f64, #n>, v: &#rt::SVector<f64, #n>) -> f64 {
                    #kinetic
                }

                #mass_solve
            }
            #constant_mass
        }
    }
}

/// Returns doc lines listing named rows with their doc comments.
fn row_listing<'a>(
    title: &str,
    rows: impl Iterator<Item = (&'a syn::Ident, &'a Vec<syn::Attribute>)>,
) -> TokenStream {
    let mut lines = Vec::new();
    for (name, docs) in rows {
        let text: Vec<String> = docs
            .iter()
            .filter_map(|attr| match &attr.meta {
                syn::Meta::NameValue(nv) => match &nv.value {
                    syn::Expr::Lit(syn::ExprLit {
                        lit: syn::Lit::Str(s),
                        ..
                    }) => Some(s.value().trim().to_string()),
                    _ => None,
                },
                _ => None,
            })
            .collect();
        let line = if text.is_empty() {
            format!("- `{name}`")
        } else {
            format!("- `{name}`: {}", text.join(" "))
        };
        lines.push(line);
    }
    if lines.is_empty() {
        return quote!();
    }
    let title = format!("{title}:");
    quote! {
        #[doc = ""]
        #[doc = #title]
        #[doc = ""]
        #(#[doc = #lines])*
    }
}
