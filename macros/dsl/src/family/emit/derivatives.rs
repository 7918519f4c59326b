//! The derivatives of a model with families that its integrators need beyond `V`, `∇V` and
//! `g`: `Hess V` and `a·V‴·a`, the penalized potential `W = V + ½ω²|g|²` with its derivatives,
//! the stiff part alone, and the rows' kinematic terms; and what `derivatives: [hessians]` asks
//! for besides, the rows' weighted Hessians `Σ_k λ_k Hess g_k`; each Hessian on a pattern built
//! once by `new`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::Ident;

use super::runtime;
use crate::family::assembly::{assemble_hessian, Part};
use crate::family::derive::FamilyDerived;
use crate::family::model::FamilyModel;
use crate::plan::Plan;

/// The derivatives' code.
pub(super) struct Derivatives {
    /// The trait implementations.
    pub impls: Vec<TokenStream>,
    /// The fields of the Hessians' patterns and positions.
    pub hessian_names: Vec<Ident>,
    /// The statements of `new` that build them.
    pub hessian_builders: Vec<TokenStream>,
}

/// Emits the derivatives `needs` asks for from the potential's and the rows' penalty parts
/// of `derived` and the rows' acceleration bias `bias_code`, and the rows' weighted Hessians
/// from their weighted parts if `derivatives: [hessians]` asks for them, adding the Hessians'
/// fields to `fields`.
pub(super) fn derivatives(
    model: &FamilyModel,
    needs: &Plan,
    derived: &FamilyDerived,
    bias_code: &[TokenStream],
    fields: &mut Vec<TokenStream>,
) -> Derivatives {
    let potential_parts: Vec<&Part> = derived.potential_parts().collect();
    let penalty_parts: Vec<&Part> = derived.penalty_parts().collect();
    let weighted_parts: Vec<&Part> = derived.weighted_parts().collect();
    let rt = runtime();
    let name = &model.name;
    let mut hessian_names = Vec::new();
    let mut hessian_builders = Vec::new();
    let mut derivative_impls = Vec::new();
    let mut assemble = |name: &str, parts: &[&Part]| {
        let assembled = assemble_hessian(model, name, parts);
        fields.extend(assembled.fields);
        hessian_names.extend(assembled.names);
        hessian_builders.push(assembled.builder);
        (assembled.pattern, assembled.code)
    };
    if needs.hessian {
        let (pattern, code) = assemble("potential", &potential_parts);
        derivative_impls.push(quote! {
            impl #rt::model::SparsePotentialHessian for #name {
                fn hessian_pattern(&self) -> &[(usize, usize)] { &self.#pattern }
                #[allow(unused_variables, clippy::all)]
                fn potential_hessian(&self, q: &[f64], hess: &mut [f64]) {
                    hess.fill(0.0);
                    #code
                }
            }
        });
        if needs.third_derivative {
            let code = potential_parts.iter().map(|p| p.third_contraction(model));
            derivative_impls.push(quote! {
                impl #rt::model::SparsePotentialThirdDerivative for #name {
                    #[allow(unused_variables, clippy::all)]
                    fn potential_third_contraction(&self, q: &[f64], a: &[f64], out: &mut [f64]) {
                        out.fill(0.0);
                        #(#code)*
                    }
                }
            });
        }
    }
    if needs.penalty {
        let energy = penalty_parts
            .iter()
            .map(|p| p.energy(model))
            .collect::<Vec<_>>();
        let gradient = penalty_parts
            .iter()
            .map(|p| p.gradient(model, quote!(grad)))
            .collect::<Vec<_>>();
        derivative_impls.push(quote! {
            impl #rt::model::SparsePenalizedPotential for #name {
                #[allow(unused_variables, clippy::all)]
                fn penalized_potential(&self, omega: f64, q: &[f64]) -> f64 {
                    let mut __energy = #rt::model::SparsePotential::potential(self, q);
                    #(#energy)*
                    __energy
                }
                #[allow(unused_variables, clippy::all)]
                fn penalized_potential_gradient(&self, omega: f64, q: &[f64], grad: &mut [f64]) {
                    #rt::model::SparsePotential::potential_gradient(self, q, grad);
                    #(#gradient)*
                }
            }
        });
        let all: Vec<&Part> = potential_parts
            .iter()
            .chain(&penalty_parts)
            .copied()
            .collect();
        let (pattern, code) = assemble("penalized", &all);
        derivative_impls.push(quote! {
            impl #rt::model::SparsePenalizedHessian for #name {
                fn penalized_hessian_pattern(&self) -> &[(usize, usize)] { &self.#pattern }
                #[allow(unused_variables, clippy::all)]
                fn penalized_potential_hessian(&self, omega: f64, q: &[f64], hess: &mut [f64]) {
                    hess.fill(0.0);
                    #code
                }
            }
        });
        if needs.third_derivative {
            let code = potential_parts
                .iter()
                .chain(&penalty_parts)
                .map(|p| p.third_contraction(model))
                .collect::<Vec<_>>();
            derivative_impls.push(quote! {
                impl #rt::model::SparsePenalizedThirdDerivative for #name {
                    #[allow(unused_variables, clippy::all)]
                    fn penalized_potential_third_contraction(&self, omega: f64, q: &[f64], a: &[f64], out: &mut [f64]) {
                        out.fill(0.0);
                        #(#code)*
                    }
                }
            });
        }
        if needs.penalty_hessian {
            let (pattern, code) = assemble("penalty", &penalty_parts);
            derivative_impls.push(quote! {
                impl #rt::model::SparsePenaltyHessian for #name {
                    fn penalty_hessian_pattern(&self) -> &[(usize, usize)] { &self.#pattern }
                    #[allow(unused_variables, clippy::all)]
                    fn penalty_hessian(&self, omega: f64, q: &[f64], hess: &mut [f64]) {
                        hess.fill(0.0);
                        #code
                    }
                }
            });
        }
    }
    if model.hessians() {
        // Also without rows (then the pattern is empty), as `SparseHolonomic` is.
        let (pattern, code) = assemble("constraints", &weighted_parts);
        derivative_impls.push(quote! {
            impl #rt::model::SparseHolonomicHessians for #name {
                fn constraint_hessian_pattern(&self) -> &[(usize, usize)] { &self.#pattern }
                #[allow(unused_variables, clippy::all)]
                fn weighted_constraint_hessian(&self, q: &[f64], t: f64, weights: &[f64], hess: &mut [f64]) {
                    hess.fill(0.0);
                    #code
                }
            }
        });
    }
    if needs.kinematics {
        derivative_impls.push(quote! {
            impl #rt::model::SparseHolonomicKinematics for #name {
                fn constraint_time_derivative(&self, q: &[f64], t: f64, out: &mut [f64]) {
                    out.fill(0.0);
                }
                #[allow(unused_variables, clippy::all)]
                fn constraint_acceleration_bias(&self, q: &[f64], v: &[f64], t: f64, out: &mut [f64]) {
                    #(#bias_code)*
                }
            }
        });
    }
    Derivatives {
        impls: derivative_impls,
        hessian_names,
        hessian_builders,
    }
}
