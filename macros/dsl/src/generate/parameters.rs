//! The parameters by index (`Parameters<P>`) and the derivatives of the model's functions with
//! respect to them (`ParameterDerivatives<N, M, K, P>`), for the parameter Jacobians of a step
//! (`derivatives: [step_jacobians]`).

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::{allow_lints, runtime, Code, Output};
use crate::derive::ParameterDerived;

impl Code<'_> {
    pub(super) fn parameters(&self, derived: &ParameterDerived) -> TokenStream {
        let model = self.model;
        let (rt, allow, name) = (runtime(), allow_lints(), &model.name);
        let n = Literal::usize_unsuffixed(model.dof());
        let m = Literal::usize_unsuffixed(model.constraints.len());
        let k = Literal::usize_unsuffixed(model.nonholonomic.len());
        let p = Literal::usize_unsuffixed(model.parameters.len());
        let names: Vec<String> = model
            .parameters
            .iter()
            .map(|p| p.name.to_string())
            .collect();
        let fields: Vec<&syn::Ident> = model.parameters.iter().map(|p| &p.name).collect();
        let indices: Vec<Literal> = (0..fields.len()).map(Literal::usize_unsuffixed).collect();
        let out = quote!(out);
        let mass = self.per_parameter(&derived.mass);
        let potential = self.body(self.vector(&out, &derived.potential[0]), &[&out]);
        let kinetic = self.body(self.matrix(&out, &derived.kinetic_gradient), &[&out]);
        let gradient = self.body(self.matrix(&out, &derived.potential_gradient), &[&out]);
        let force = if derived.applied_force.is_empty() {
            quote!(out.fill(0.0);)
        } else {
            self.body(self.matrix(&out, &derived.applied_force), &[&out])
        };
        let constraints = self.body(self.matrix(&out, &derived.constraints), &[&out]);
        let constraint_jacobian = self.per_parameter(&derived.constraint_jacobian);
        let nonholonomic_matrix = self.per_parameter(&derived.nonholonomic_matrix);
        let drive = self.body(self.matrix(&out, &derived.nonholonomic_drive), &[&out]);
        let hessian_along = derived.potential_hessian_along.as_ref().map(|along| {
            let body = self.body(self.matrix(&out, along), &[&out]);
            quote! {
                #allow
                impl #rt::PotentialHessianParameterDerivative<#n, #p> for #name {
                    #[inline]
                    fn potential_hessian_parameter_derivative(
                        &self,
                        q: &#rt::SVector<f64, #n>,
                        a: &#rt::SVector<f64, #n>,
                        out: &mut #rt::SMatrix<f64, #n, #p>,
                    ) {
                        #body
                    }
                }
            }
        });
        quote! {
            #allow
            impl #rt::Parameters<#p> for #name {
                const PARAMETERS: [&'static str; #p] = [#(#names),*];

                #[inline]
                fn parameter_values(&self) -> #rt::SVector<f64, #p> {
                    #rt::SVector::<f64, #p>::from([#(self.#fields),*])
                }

                #[inline]
                fn set_parameter_values(&mut self, values: &#rt::SVector<f64, #p>) {
                    #(self.#fields = values[#indices];)*
                }
            }

            #allow
            impl #rt::MassParameterDerivatives<#n, #p> for #name {
                #[inline]
                fn mass_parameter_derivatives(&self, q: &#rt::SVector<f64, #n>, out: &mut [#rt::SMatrix<f64, #n, #n>; #p]) {
                    #mass
                }
            }

            #allow
            impl #rt::ParameterDerivatives<#n, #m, #k, #p> for #name {
                #[inline]
                fn kinetic_gradient_parameter_jacobian(
                    &self,
                    q: &#rt::SVector<f64, #n>,
                    v: &#rt::SVector<f64, #n>,
                    out: &mut #rt::SMatrix<f64, #n, #p>,
                ) {
                    #kinetic
                }

                #[inline]
                fn potential_parameter_gradient(&self, q: &#rt::SVector<f64, #n>, out: &mut #rt::SVector<f64, #p>) {
                    #potential
                }

                #[inline]
                fn potential_gradient_parameter_jacobian(&self, q: &#rt::SVector<f64, #n>, out: &mut #rt::SMatrix<f64, #n, #p>) {
                    #gradient
                }

                #[inline]
                fn applied_force_parameter_jacobian(
                    &self,
                    q: &#rt::SVector<f64, #n>,
                    v: &#rt::SVector<f64, #n>,
                    t: f64,
                    out: &mut #rt::SMatrix<f64, #n, #p>,
                ) {
                    #force
                }

                #[inline]
                fn constraint_parameter_jacobian(&self, q: &#rt::SVector<f64, #n>, t: f64, out: &mut #rt::SMatrix<f64, #m, #p>) {
                    #constraints
                }

                #[inline]
                fn constraint_jacobian_parameter_derivatives(&self, q: &#rt::SVector<f64, #n>, t: f64, out: &mut [#rt::SMatrix<f64, #m, #n>; #p]) {
                    #constraint_jacobian
                }

                #[inline]
                fn nonholonomic_matrix_parameter_derivatives(&self, q: &#rt::SVector<f64, #n>, out: &mut [#rt::SMatrix<f64, #k, #n>; #p]) {
                    #nonholonomic_matrix
                }

                #[inline]
                fn nonholonomic_drive_parameter_jacobian(&self, t: f64, out: &mut #rt::SMatrix<f64, #k, #p>) {
                    #drive
                }
            }

            #hessian_along
        }
    }

    /// Emits a body writing one matrix per parameter, `out[j]` from `matrices[j]`.
    fn per_parameter(&self, matrices: &[Vec<Vec<mechanism_cas::Id>>]) -> TokenStream {
        let targets: Vec<TokenStream> = (0..matrices.len())
            .map(|j| {
                let j = Literal::usize_unsuffixed(j);
                quote!(out[#j])
            })
            .collect();
        let outputs: Vec<Output> = targets
            .iter()
            .zip(matrices)
            .flat_map(|(target, rows)| self.matrix(target, rows))
            .collect();
        let fills: Vec<&TokenStream> = targets.iter().collect();
        self.body(outputs, &fills)
    }
}
