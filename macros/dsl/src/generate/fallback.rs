//! After an error: the spanned `compile_error!`s plus a stub of the model, so that code using the
//! model does not drown the real errors in follow-up errors (thiserror's `fallback.rs` idea).
//!
//! The stub has the model's name, its parameters as fields, and the core runtime traits with
//! the sizes the syntax gives, so `Model::default()` and `integrator.step(&model, ..)` still
//! type-check. Its bodies are never run: the crate does not compile.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use crate::ast::{Mechanism, SectionBody};

/// Returns the errors followed by a stub of the model.
pub fn fallback(ast: &Mechanism, error: &syn::Error) -> TokenStream {
    let errors = error.to_compile_error();
    let (attrs, vis, name) = (&ast.attrs, &ast.vis, &ast.name);
    let count = |keyword: &str| {
        ast.sections
            .iter()
            .find(|s| s.keyword == keyword)
            .map(|s| match &s.body {
                SectionBody::Names(names) => names.len(),
                SectionBody::Rows(rows) | SectionBody::Assignments(rows) => rows.len(),
                SectionBody::Expr(_) | SectionBody::Unknown(_) => 0,
            })
    };
    let fields: Vec<&syn::Ident> = ast
        .sections
        .iter()
        .filter(|s| s.keyword == "parameters")
        .flat_map(|s| match &s.body {
            SectionBody::Assignments(rows) => rows.iter().map(|r| &r.name).collect(),
            _ => Vec::new(),
        })
        .fold(Vec::new(), |mut unique: Vec<&syn::Ident>, field| {
            if !unique.contains(&field) {
                unique.push(field);
            }
            unique
        });
    let mut tokens = quote! {
        #errors
        #(#attrs)*
        #[derive(Clone, Copy, Debug, Default, PartialEq)]
        #vis struct #name {
            #(#[allow(missing_docs)] pub #fields: f64,)*
        }
        #[allow(missing_docs)]
        impl #name {
            pub const DOF: usize = 0;
            pub fn new() -> Self {
                <Self as ::core::default::Default>::default()
            }
        }
    };
    let Some(n) = count("coordinates").filter(|&n| n > 0) else {
        return tokens;
    };
    let rt = quote!(::mechanism::runtime);
    let n = Literal::usize_unsuffixed(n);
    let unreachable = quote!(::core::unreachable!(
        "mechanism! reported an error for this model"
    ));
    tokens.extend(quote! {
        #[allow(unused_variables)]
        impl #rt::Configuration<#n> for #name {
            const COORDINATES: [&'static str; #n] = [""; #n];
        }
        #[allow(unused_variables)]
        impl #rt::Inertia<#n> for #name {
            const CONSTANT_MASS: bool = true;
            fn mass_matrix(&self, q: &#rt::SVector<f64, #n>, out: &mut #rt::SMatrix<f64, #n, #n>) { #unreachable }
        }
        impl #rt::ConstantMass<#n> for #name {}
        #[allow(unused_variables)]
        impl #rt::Potential<#n> for #name {
            fn potential(&self, q: &#rt::SVector<f64, #n>) -> f64 { #unreachable }
            fn potential_gradient(&self, q: &#rt::SVector<f64, #n>, grad: &mut #rt::SVector<f64, #n>) { #unreachable }
        }
        #[allow(unused_variables)]
        impl #rt::PotentialHessian<#n> for #name {
            fn potential_hessian(&self, q: &#rt::SVector<f64, #n>, hess: &mut #rt::SMatrix<f64, #n, #n>) { #unreachable }
        }
        #[allow(unused_variables)]
        impl #rt::PotentialThirdDerivative<#n> for #name {
            fn potential_third_contraction(&self, q: &#rt::SVector<f64, #n>, a: &#rt::SVector<f64, #n>, out: &mut #rt::SVector<f64, #n>) { #unreachable }
        }
        #[allow(unused_variables)]
        impl #rt::PenalizedPotential<#n> for #name {
            fn penalized_potential(&self, omega: f64, q: &#rt::SVector<f64, #n>) -> f64 { #unreachable }
            fn penalized_potential_gradient(&self, omega: f64, q: &#rt::SVector<f64, #n>, grad: &mut #rt::SVector<f64, #n>) { #unreachable }
        }
        #[allow(unused_variables)]
        impl #rt::PenalizedHessian<#n> for #name {
            fn penalized_potential_hessian(&self, omega: f64, q: &#rt::SVector<f64, #n>, hess: &mut #rt::SMatrix<f64, #n, #n>) { #unreachable }
        }
        #[allow(unused_variables)]
        impl #rt::PenalizedThirdDerivative<#n> for #name {
            fn penalized_potential_third_contraction(&self, omega: f64, q: &#rt::SVector<f64, #n>, a: &#rt::SVector<f64, #n>, out: &mut #rt::SVector<f64, #n>) { #unreachable }
        }
        #[allow(unused_variables)]
        impl #rt::PenaltyHessian<#n> for #name {
            fn penalty_hessian(&self, omega: f64, q: &#rt::SVector<f64, #n>, hess: &mut #rt::SMatrix<f64, #n, #n>) { #unreachable }
        }
    });
    let m = Literal::usize_unsuffixed(count("holonomic").unwrap_or(0));
    let k = Literal::usize_unsuffixed(count("nonholonomic").unwrap_or(0));
    tokens.extend(quote! {
        #[allow(unused_variables)]
        impl #rt::Holonomic<#n, #m> for #name {
            const CONSTRAINTS: [&'static str; #m] = [""; #m];
            fn constraints(&self, q: &#rt::SVector<f64, #n>, t: f64, g: &mut #rt::SVector<f64, #m>) { #unreachable }
            fn constraint_jacobian(&self, q: &#rt::SVector<f64, #n>, t: f64, jac: &mut #rt::SMatrix<f64, #m, #n>) { #unreachable }
        }
        #[allow(unused_variables)]
        impl #rt::Nonholonomic<#n, #k> for #name {
            const NONHOLONOMIC: [&'static str; #k] = [""; #k];
            fn nonholonomic_matrix(&self, q: &#rt::SVector<f64, #n>, a: &mut #rt::SMatrix<f64, #k, #n>) { #unreachable }
            fn nonholonomic_drive(&self, t: f64, w: &mut #rt::SVector<f64, #k>) { #unreachable }
        }
        impl #rt::AppliedForces<#n> for #name {}
    });
    tokens
}
