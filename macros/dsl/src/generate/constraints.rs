//! The constraint rows: `Holonomic` (`g`, `G`, SPOOK's specialized step and solve), the
//! regularization of each row, the kinematic terms (`g_t`, `(Gv)_q v`), the second-order terms
//! of the kinetic energy and the constraint Hessians, and `Nonholonomic` (`A(q)`, `w(t)`).

use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::{allow_lints, runtime, Code};
use crate::derivatives::Derivative;
use crate::derive::Derived;
use crate::integrators::Family;
use crate::model::Tau;

impl Code<'_> {
    pub(super) fn holonomic(&self, derived: &Derived) -> TokenStream {
        let model = self.model;
        let (rt, allow, name) = (runtime(), allow_lints(), &model.name);
        let n = Literal::usize_unsuffixed(model.dof());
        let m = Literal::usize_unsuffixed(model.constraints.len());
        let names: Vec<String> = model
            .constraints
            .iter()
            .map(|c| c.name.to_string())
            .collect();
        let (g, jac) = (quote!(g), quote!(jac));
        let values = self.body(self.vector(&g, &derived.constraints), &[&g]);
        let jacobian = self.body(self.matrix(&jac, &derived.jacobian), &[&jac]);
        let mut fused = self.vector(&g, &derived.constraints);
        fused.extend(self.matrix(&jac, &derived.jacobian));
        let fused = self.body(fused, &[&g, &jac]);
        let regularization = self.regularization();
        let depends_on: Vec<TokenStream> = derived
            .constraints
            .iter()
            .map(|&g| self.dependency_mask(&[g]))
            .collect();
        // Without rows, the (empty) Hessians are emitted here, so that `Livens<N, 0>` runs on
        // an unconstrained model; with rows, `second_order` emits them when planned.
        let empty_hessians = model.constraints.is_empty().then(|| {
            quote! {
                #allow
                impl #rt::HolonomicHessians<#n, 0> for #name {
                    #[inline]
                    fn constraint_hessians(&self, q: &#rt::SVector<f64, #n>, t: f64, out: &mut [#rt::SMatrix<f64, #n, #n>; 0]) {}
                }
            }
        });
        // SPOOK's Schur complement and its whole step, specialized where `M` is constant and
        // diagonal and there are no nonholonomic rows (the common case of point masses and
        // rods).
        let spook_solve = self.spook_specialized(derived).then(|| {
            let body = self.spook_solve(&derived.jacobian, model.dof());
            let step = self.spook_step(derived);
            quote! {
                #[inline]
                #[allow(unused_mut, clippy::too_many_arguments)]
                fn spook_step(
                    &self,
                    q: &mut #rt::SVector<f64, #n>,
                    v: &mut #rt::SVector<f64, #n>,
                    t: f64,
                    h: f64,
                    coefficients: &#rt::SpookCoefficients<#m>,
                    guard: &#rt::DivergenceGuard,
                    lambda: &mut #rt::SVector<f64, #m>,
                ) -> #rt::GeneratedSolve {
                    #step
                }

                #[inline]
                #[allow(clippy::too_many_arguments)]
                fn spook_solve(
                    &self,
                    mass: &#rt::SMatrix<f64, #n, #n>,
                    jac: &#rt::SMatrix<f64, #m, #n>,
                    r: &#rt::SVector<f64, #n>,
                    sigma: &#rt::SVector<f64, #m>,
                    rhs: &#rt::SVector<f64, #m>,
                    v: &mut #rt::SVector<f64, #n>,
                    lambda: &mut #rt::SVector<f64, #m>,
                ) -> #rt::GeneratedSolve {
                    #body
                }
            }
        });
        quote! {
            #allow
            impl #rt::Holonomic<#n, #m> for #name {
                #regularization
                #spook_solve

                const CONSTRAINTS: [&'static str; #m] = [#(#names),*];
                const CONSTRAINT_DEPENDS_ON: [[bool; #n]; #m] = [#(#depends_on),*];

                #[inline]
                fn constraints(&self, q: &#rt::SVector<f64, #n>, t: f64, g: &mut #rt::SVector<f64, #m>) {
                    #values
                }

                #[inline]
                fn constraint_jacobian(&self, q: &#rt::SVector<f64, #n>, t: f64, jac: &mut #rt::SMatrix<f64, #m, #n>) {
                    #jacobian
                }

                #[inline]
                fn constraints_and_jacobian(
                    &self,
                    q: &#rt::SVector<f64, #n>,
                    t: f64,
                    g: &mut #rt::SVector<f64, #m>,
                    jac: &mut #rt::SMatrix<f64, #m, #n>,
                ) {
                    #fused
                }
            }

            #empty_hessians
        }
    }

    /// Whether SPOOK's step is specialized to the model's structural nonzeros
    /// (`Holonomic::spook_step`): `M` constant and diagonal, no nonholonomic rows.
    fn spook_specialized(&self, derived: &Derived) -> bool {
        let model = self.model;
        derived.linear_solve
            && model.uses(Family::Spook)
            && model.nonholonomic.is_empty()
            && self.diagonal_mass(derived)
            && !model.configuration_dependent_mass()
    }

    pub(super) fn regularization(&self) -> TokenStream {
        let rt = runtime();
        let rows = self
            .model
            .constraints
            .iter()
            .enumerate()
            .filter(|(_, c)| c.epsilon.is_some() || c.tau.is_some());
        let arms: Vec<TokenStream> = rows
            .map(|(i, c)| {
                let i = Literal::usize_unsuffixed(i);
                let epsilon = match c.epsilon {
                    Some(e) => {
                        let e = Literal::f64_suffixed(e);
                        quote!(#e)
                    }
                    None => quote!(default.epsilon),
                };
                let tau = match c.tau {
                    Some(Tau::Seconds(x)) => {
                        let x = Literal::f64_suffixed(x);
                        quote!(#rt::Relaxation::Seconds(#x))
                    }
                    Some(Tau::Steps(x)) => {
                        let x = Literal::f64_suffixed(x);
                        quote!(#rt::Relaxation::Steps(#x))
                    }
                    None => quote!(default.tau),
                };
                quote!(#i => #rt::Regularization { epsilon: #epsilon, tau: #tau },)
            })
            .collect();
        if arms.is_empty() {
            return quote!();
        }
        quote! {
            fn regularization(&self, row: usize) -> #rt::Regularization {
                let default = #rt::Regularization::default();
                match row {
                    #(#arms)*
                    _ => default,
                }
            }
        }
    }

    pub(super) fn kinematics(&self, derived: &Derived) -> Option<TokenStream> {
        let kinematics = derived.kinematics.as_ref()?;
        let model = self.model;
        let (rt, allow, name) = (runtime(), allow_lints(), &model.name);
        let n = Literal::usize_unsuffixed(model.dof());
        let m = Literal::usize_unsuffixed(model.constraints.len());
        let out = quote!(out);
        let g_t = self.body(self.vector(&out, &kinematics.time_derivative), &[&out]);
        let bias = self.body(self.vector(&out, &kinematics.acceleration_bias), &[&out]);
        let derivatives = kinematics.derivatives.as_ref().map(|d| {
            let p = Literal::usize_unsuffixed(model.parameters.len());
            // The velocity terms' derivatives; a constant `M` has none (zero).
            let (terms_q, terms_v, terms_p) = match &derived.velocity_terms {
                Some(terms) => {
                    let (cq, cv) = (quote!(cq), quote!(cv));
                    let mut jacobians = self.matrix(&cq, &terms.dq);
                    jacobians.extend(self.matrix(&cv, &terms.dv));
                    (
                        self.body(jacobians, &[&cq, &cv]),
                        quote!(),
                        self.body(self.matrix(&out, &terms.dp), &[&out]),
                    )
                }
                None => (
                    quote!(cq.fill(0.0);),
                    quote!(cv.fill(0.0);),
                    quote!(out.fill(0.0);),
                ),
            };
            let (bias_q, bias_p) = (
                self.body(self.matrix(&out, &d.bias_q), &[&out]),
                self.body(self.matrix(&out, &d.bias_p), &[&out]),
            );
            let (time_q, time_p) = (
                self.body(self.matrix(&out, &d.time_q), &[&out]),
                self.body(self.matrix(&out, &d.time_p), &[&out]),
            );
            quote! {
                #allow
                impl #rt::KinematicsJacobians<#n, #m> for #name {
                    #[inline]
                    fn acceleration_bias_jacobian(
                        &self,
                        q: &#rt::SVector<f64, #n>,
                        v: &#rt::SVector<f64, #n>,
                        t: f64,
                        out: &mut #rt::SMatrix<f64, #m, #n>,
                    ) {
                        #bias_q
                    }

                    #[inline]
                    fn time_derivative_jacobian(&self, q: &#rt::SVector<f64, #n>, t: f64, out: &mut #rt::SMatrix<f64, #m, #n>) {
                        #time_q
                    }
                }

                #allow
                impl #rt::VelocityTermJacobians<#n> for #name {
                    #[inline]
                    fn velocity_term_jacobians(
                        &self,
                        q: &#rt::SVector<f64, #n>,
                        v: &#rt::SVector<f64, #n>,
                        cq: &mut #rt::SMatrix<f64, #n, #n>,
                        cv: &mut #rt::SMatrix<f64, #n, #n>,
                    ) {
                        #terms_q
                        #terms_v
                    }
                }

                #allow
                impl #rt::VelocityTermParameterJacobian<#n, #p> for #name {
                    #[inline]
                    fn velocity_term_parameter_jacobian(
                        &self,
                        q: &#rt::SVector<f64, #n>,
                        v: &#rt::SVector<f64, #n>,
                        out: &mut #rt::SMatrix<f64, #n, #p>,
                    ) {
                        #terms_p
                    }
                }

                #allow
                impl #rt::KinematicsParameterDerivatives<#n, #m, #p> for #name {
                    #[inline]
                    fn acceleration_bias_parameter_jacobian(
                        &self,
                        q: &#rt::SVector<f64, #n>,
                        v: &#rt::SVector<f64, #n>,
                        t: f64,
                        out: &mut #rt::SMatrix<f64, #m, #p>,
                    ) {
                        #bias_p
                    }

                    #[inline]
                    fn time_derivative_parameter_jacobian(&self, q: &#rt::SVector<f64, #n>, t: f64, out: &mut #rt::SMatrix<f64, #m, #p>) {
                        #time_p
                    }
                }
            }
        });
        Some(quote! {
            #allow
            impl #rt::HolonomicKinematics<#n, #m> for #name {
                #[inline]
                fn constraint_time_derivative(&self, q: &#rt::SVector<f64, #n>, t: f64, out: &mut #rt::SVector<f64, #m>) {
                    #g_t
                }

                #[inline]
                fn constraint_acceleration_bias(
                    &self,
                    q: &#rt::SVector<f64, #n>,
                    v: &#rt::SVector<f64, #n>,
                    t: f64,
                    out: &mut #rt::SVector<f64, #m>,
                ) {
                    #bias
                }
            }

            #derivatives
        })
    }

    pub(super) fn second_order(&self, derived: &Derived) -> Option<TokenStream> {
        let second = derived.second_order.as_ref()?;
        let model = self.model;
        let (rt, allow, name) = (runtime(), allow_lints(), &model.name);
        let n = Literal::usize_unsuffixed(model.dof());
        let (out, qq, qv) = (quote!(out), quote!(qq), quote!(qv));
        let gradient = self.body(self.vector(&out, &second.kinetic_gradient), &[&out]);
        let mut hessians = self.matrix(&qq, &second.kinetic_qq);
        hessians.extend(self.matrix(&qv, &second.kinetic_qv));
        let hessians = self.body(hessians, &[&qq, &qv]);
        let mut tokens = quote! {
            #allow
            impl #rt::InertiaGradient<#n> for #name {
                #[inline]
                fn kinetic_gradient(&self, q: &#rt::SVector<f64, #n>, v: &#rt::SVector<f64, #n>, out: &mut #rt::SVector<f64, #n>) {
                    #gradient
                }

                #[inline]
                fn kinetic_hessians(
                    &self,
                    q: &#rt::SVector<f64, #n>,
                    v: &#rt::SVector<f64, #n>,
                    qq: &mut #rt::SMatrix<f64, #n, #n>,
                    qv: &mut #rt::SMatrix<f64, #n, #n>,
                ) {
                    #hessians
                }
            }
        };
        if !model.constraints.is_empty() {
            let m = Literal::usize_unsuffixed(model.constraints.len());
            let mut outputs = Vec::new();
            let mut fills = Vec::new();
            let targets: Vec<TokenStream> = (0..model.constraints.len())
                .map(|k| {
                    let k = Literal::usize_unsuffixed(k);
                    quote!(out[#k])
                })
                .collect();
            for (target, rows) in targets.iter().zip(&second.constraint_hessians) {
                outputs.extend(self.matrix(target, rows));
                fills.push(target);
            }
            let body = self.body(outputs, &fills);
            // SPOOK's step Jacobian, specialized where its step is.
            let jacobian = (self.spook_specialized(derived)
                && model.derivatives.contains(&Derivative::StepJacobians))
            .then(|| self.spook_velocity_jacobian(derived))
            .flatten()
            .map(|body| {
                quote! {
                    #[inline]
                    #[allow(unused_mut, clippy::too_many_arguments)]
                    fn spook_velocity_jacobian(
                        &self,
                        q: &#rt::SVector<f64, #n>,
                        v: &#rt::SVector<f64, #n>,
                        t: f64,
                        h: f64,
                        coefficients: &#rt::SpookCoefficients<#m>,
                        v_next: &#rt::SVector<f64, #n>,
                        lambda: &#rt::SVector<f64, #m>,
                        v_q: &mut #rt::SMatrix<f64, #n, #n>,
                        v_v: &mut #rt::SMatrix<f64, #n, #n>,
                    ) -> #rt::GeneratedSolve {
                        #body
                    }
                }
            });
            tokens.extend(quote! {
                #allow
                impl #rt::HolonomicHessians<#n, #m> for #name {
                    #[inline]
                    fn constraint_hessians(&self, q: &#rt::SVector<f64, #n>, t: f64, out: &mut [#rt::SMatrix<f64, #n, #n>; #m]) {
                        #body
                    }
                    #jacobian
                }
            });
        }
        Some(tokens)
    }

    pub(super) fn nonholonomic(&self, derived: &Derived) -> TokenStream {
        let model = self.model;
        let (rt, allow, name) = (runtime(), allow_lints(), &model.name);
        let n = Literal::usize_unsuffixed(model.dof());
        let k = Literal::usize_unsuffixed(model.nonholonomic.len());
        let names: Vec<String> = model
            .nonholonomic
            .iter()
            .map(|r| r.name.to_string())
            .collect();
        let (a, w) = (quote!(a), quote!(w));
        let (matrix, drive) = match &derived.nonholonomic {
            Some((matrix, drive)) => (
                self.body(self.matrix(&a, matrix), &[&a]),
                self.body(self.vector(&w, drive), &[&w]),
            ),
            None => (quote!(), quote!()),
        };
        let arms: Vec<TokenStream> = model
            .nonholonomic
            .iter()
            .enumerate()
            .filter_map(|(i, r)| {
                let gamma = Literal::f64_suffixed(r.gamma?);
                let i = Literal::usize_unsuffixed(i);
                Some(quote!(#i => #gamma,))
            })
            .collect();
        let derivative = derived.nonholonomic_derivative.as_ref().map(|rows| {
            let out = quote!(out);
            let body = self.body(self.matrix(&out, rows), &[&out]);
            quote! {
                #allow
                impl #rt::NonholonomicDerivative<#n, #k> for #name {
                    #[inline]
                    fn nonholonomic_velocity_jacobian(
                        &self,
                        q: &#rt::SVector<f64, #n>,
                        v: &#rt::SVector<f64, #n>,
                        out: &mut #rt::SMatrix<f64, #k, #n>,
                    ) {
                        #body
                    }
                }
            }
        });
        let compliance = (!arms.is_empty()).then(|| {
            quote! {
                fn nonholonomic_compliance(&self, row: usize) -> f64 {
                    match row {
                        #(#arms)*
                        _ => #rt::model::DEFAULT_GAMMA,
                    }
                }
            }
        });
        quote! {
            #allow
            impl #rt::Nonholonomic<#n, #k> for #name {
                const NONHOLONOMIC: [&'static str; #k] = [#(#names),*];

                #[inline]
                fn nonholonomic_matrix(&self, q: &#rt::SVector<f64, #n>, a: &mut #rt::SMatrix<f64, #k, #n>) {
                    #matrix
                }

                #[inline]
                fn nonholonomic_drive(&self, t: f64, w: &mut #rt::SVector<f64, #k>) {
                    #drive
                }

                #compliance
            }

            #derivative
        }
    }
}
