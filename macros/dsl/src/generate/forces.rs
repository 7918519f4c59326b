//! The forces: the applied-force total the integrators read, and the dissipation and the
//! explicit forces with their Jacobians.

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::{allow_lints, runtime, Code};
use crate::derive::{Derived, VectorDerivatives};

impl Code<'_> {
    /// Emits `AppliedForces`: the sum of the dissipative force and the `forces` section, or the
    /// zero defaults when the model has neither.
    pub(super) fn applied_forces(&self, derived: &Derived) -> TokenStream {
        let (rt, allow, name) = (runtime(), allow_lints(), &self.model.name);
        let n = Literal::usize_unsuffixed(self.model.dof());
        let (dissipation, forces) = (derived.dissipation.is_some(), derived.forces.is_some());
        if !dissipation && !forces {
            return quote! {
                #allow
                impl #rt::AppliedForces<#n> for #name {}
            };
        }
        let mut value = vec![quote!(out.fill(0.0);)];
        let mut jacobians = vec![quote! { dq.fill(0.0); dv.fill(0.0); }];
        if dissipation {
            value.push(quote! {
                let mut part = #rt::SVector::<f64, #n>::zeros();
                #rt::Dissipation::dissipation_force(self, q, v, &mut part);
                *out += part;
            });
            jacobians.push(quote! {
                let mut part_q = #rt::SMatrix::<f64, #n, #n>::zeros();
                let mut part_v = #rt::SMatrix::<f64, #n, #n>::zeros();
                #rt::Dissipation::dissipation_jacobians(self, q, v, &mut part_q, &mut part_v);
                *dq += part_q;
                *dv += part_v;
            });
        }
        if forces {
            value.push(quote! {
                let mut part = #rt::SVector::<f64, #n>::zeros();
                #rt::Forces::force(self, q, v, t, &mut part);
                *out += part;
            });
            jacobians.push(quote! {
                let mut part_q = #rt::SMatrix::<f64, #n, #n>::zeros();
                let mut part_v = #rt::SMatrix::<f64, #n, #n>::zeros();
                #rt::Forces::force_jacobians(self, q, v, t, &mut part_q, &mut part_v);
                *dq += part_q;
                *dv += part_v;
            });
        }
        quote! {
            #allow
            impl #rt::AppliedForces<#n> for #name {
                #[inline]
                fn applied_force(&self, q: &#rt::SVector<f64, #n>, v: &#rt::SVector<f64, #n>, t: f64, out: &mut #rt::SVector<f64, #n>) {
                    #(#value)*
                }

                #[inline]
                fn applied_force_jacobians(
                    &self,
                    q: &#rt::SVector<f64, #n>,
                    v: &#rt::SVector<f64, #n>,
                    t: f64,
                    dq: &mut #rt::SMatrix<f64, #n, #n>,
                    dv: &mut #rt::SMatrix<f64, #n, #n>,
                ) {
                    #(#jacobians)*
                }
            }
        }
    }

    /// Emits the value and Jacobians of a vector function of `(q, v[, t])`.
    pub(super) fn vector_function(&self, f: &VectorDerivatives) -> (TokenStream, TokenStream) {
        let (out, dq, dv) = (quote!(out), quote!(dq), quote!(dv));
        let value = self.body(self.vector(&out, &f.value), &[&out]);
        let mut jacobians = self.matrix(&dq, &f.dq);
        jacobians.extend(self.matrix(&dv, &f.dv));
        (value, self.body(jacobians, &[&dq, &dv]))
    }

    pub(super) fn dissipation(&self, d: &VectorDerivatives) -> TokenStream {
        let (rt, allow, name) = (runtime(), allow_lints(), &self.model.name);
        let n = Literal::usize_unsuffixed(self.model.dof());
        let (value, jacobians) = self.vector_function(d);
        quote! {
            #allow
            impl #rt::Dissipation<#n> for #name {
                #[inline]
                fn dissipation_force(&self, q: &#rt::SVector<f64, #n>, v: &#rt::SVector<f64, #n>, out: &mut #rt::SVector<f64, #n>) {
                    #value
                }

                #[inline]
                fn dissipation_jacobians(
                    &self,
                    q: &#rt::SVector<f64, #n>,
                    v: &#rt::SVector<f64, #n>,
                    dq: &mut #rt::SMatrix<f64, #n, #n>,
                    dv: &mut #rt::SMatrix<f64, #n, #n>,
                ) {
                    #jacobians
                }
            }
        }
    }

    pub(super) fn forces(&self, f: &VectorDerivatives) -> TokenStream {
        let (rt, allow, name) = (runtime(), allow_lints(), &self.model.name);
        let n = Literal::usize_unsuffixed(self.model.dof());
        let (value, jacobians) = self.vector_function(f);
        quote! {
            #allow
            impl #rt::Forces<#n> for #name {
                #[inline]
                fn force(&self, q: &#rt::SVector<f64, #n>, v: &#rt::SVector<f64, #n>, t: f64, out: &mut #rt::SVector<f64, #n>) {
                    #value
                }

                #[inline]
                fn force_jacobians(
                    &self,
                    q: &#rt::SVector<f64, #n>,
                    v: &#rt::SVector<f64, #n>,
                    t: f64,
                    dq: &mut #rt::SMatrix<f64, #n, #n>,
                    dv: &mut #rt::SMatrix<f64, #n, #n>,
                ) {
                    #jacobians
                }
            }
        }
    }
}
