//! Emits the model type: a struct whose fields are the parameters, and implementations of the
//! runtime's capability traits with straight-line, fixed-size `f64` code.

mod fallback;

pub use fallback::fallback;

use std::collections::HashMap;

use mechanism_cas::{emit, EmitOptions, Id, Output, Store, Symbol};
use proc_macro2::{Literal, TokenStream};
use quote::quote;

use crate::derive::{Derived, ScalarDerivatives};
use crate::model::Model;

/// The path under which generated code reaches the runtime crate.
fn runtime() -> TokenStream {
    quote!(::mechanism::runtime)
}

/// Lints that generated straight-line code may trip and that are not the user's business.
fn allow_lints() -> TokenStream {
    quote!(#[allow(unused_variables, clippy::all, clippy::pedantic, clippy::nursery)])
}

/// Generates the model's struct and trait implementations.
pub fn generate(model: &Model, derived: &Derived) -> TokenStream {
    let code = Code::new(model);
    let definition = code.definition();
    let inertia = code.inertia(derived);
    let potential = code.potential(&derived.potential);
    let holonomic = (!model.constraints.is_empty()).then(|| code.holonomic(derived));
    let penalty = derived.penalized.as_ref().map(|w| code.penalty(w));
    quote! {
        #definition
        #inertia
        #potential
        #holonomic
        #penalty
    }
}

/// Emits code for one model.
struct Code<'a> {
    model: &'a Model,
    symbols: HashMap<Symbol, TokenStream>,
    options: EmitOptions,
}

impl<'a> Code<'a> {
    fn new(model: &'a Model) -> Self {
        let mut symbols = HashMap::new();
        let s = &model.symbols;
        for i in 0..model.dof() {
            let index = Literal::usize_unsuffixed(i);
            symbols.insert(s.q[i], quote!(q[#index]));
            symbols.insert(s.v[i], quote!(v[#index]));
            symbols.insert(s.a[i], quote!(a[#index]));
        }
        for (symbol, parameter) in s.p.iter().zip(&model.parameters) {
            let name = &parameter.name;
            symbols.insert(*symbol, quote!(self.#name));
        }
        symbols.insert(s.omega, quote!(omega));
        let rt = runtime();
        Code {
            model,
            symbols,
            options: EmitOptions {
                fma: Some(quote!(#rt::fma::mul_add)),
            },
        }
    }

    fn store(&self) -> &Store {
        &self.model.store
    }

    /// Emits statements that write `outputs`, zero-filling `zero_fill` first when some output
    /// is structurally zero.
    fn body(&self, outputs: Vec<Output>, zero_fill: &[&TokenStream]) -> TokenStream {
        let any_zero = outputs.iter().any(|o| self.store().is_zero(o.value));
        let fill = if any_zero {
            quote!(#(#zero_fill.fill(0.0);)*)
        } else {
            quote!()
        };
        let symbol = |s: Symbol| {
            self.symbols
                .get(&s)
                .cloned()
                .unwrap_or_else(|| quote!(::core::f64::NAN))
        };
        let statements = emit(self.store(), &outputs, &symbol, &self.options);
        quote!(#fill #statements)
    }

    /// Emits a function body returning one scalar.
    fn scalar_body(&self, value: Id) -> TokenStream {
        if let Some(c) = self.store().constant(value) {
            let c = Literal::f64_suffixed(c);
            return quote!(#c);
        }
        let statements = self.body(
            vec![Output {
                target: quote!(value),
                value,
            }],
            &[],
        );
        quote! {
            let value: f64;
            #statements
            value
        }
    }

    fn vector(&self, name: &TokenStream, values: &[Id]) -> Vec<Output> {
        values
            .iter()
            .enumerate()
            .map(|(i, &value)| {
                let i = Literal::usize_unsuffixed(i);
                Output {
                    target: quote!(#name[#i]),
                    value,
                }
            })
            .collect()
    }

    fn matrix(&self, name: &TokenStream, rows: &[Vec<Id>]) -> Vec<Output> {
        let mut outputs = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            for (j, &value) in row.iter().enumerate() {
                let (i, j) = (Literal::usize_unsuffixed(i), Literal::usize_unsuffixed(j));
                outputs.push(Output {
                    target: quote!(#name[(#i, #j)]),
                    value,
                });
            }
        }
        outputs
    }

    fn definition(&self) -> TokenStream {
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
        let coordinates: Vec<String> = model.coordinates.iter().map(|c| c.to_string()).collect();
        let listing = format!(
            "Coordinates: {}.",
            coordinates
                .iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let constraint_listing = (!model.constraints.is_empty()).then(|| {
            let rows: Vec<String> = model
                .constraints
                .iter()
                .map(|c| format!("`{}`", c.name))
                .collect();
            let doc = format!("Holonomic constraints: {}.", rows.join(", "));
            quote!(#[doc = #doc])
        });
        quote! {
            #(#attrs)*
            #[doc = ""]
            #[doc = #listing]
            #constraint_listing
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

    fn inertia(&self, derived: &Derived) -> TokenStream {
        let model = self.model;
        let (rt, allow, name) = (runtime(), allow_lints(), &model.name);
        let n = Literal::usize_unsuffixed(model.dof());
        let constant = !derived.mass.iter().flatten().any(|&m| {
            model
                .symbols
                .q
                .iter()
                .any(|&q| self.store().depends_on(m, q))
        });
        let out = quote!(out);
        let mass = self.body(self.matrix(&out, &derived.mass), &[&out]);
        let kinetic = self.scalar_body(derived.kinetic);
        quote! {
            #allow
            impl #rt::Inertia<#n> for #name {
                const CONSTANT_MASS: bool = #constant;

                #[inline]
                fn mass_matrix(&self, q: &#rt::SVector<f64, #n>, out: &mut #rt::SMatrix<f64, #n, #n>) {
                    #mass
                }

                #[inline]
                fn kinetic_energy(&self, q: &#rt::SVector<f64, #n>, v: &#rt::SVector<f64, #n>) -> f64 {
                    #kinetic
                }
            }
        }
    }

    fn potential(&self, v: &ScalarDerivatives) -> TokenStream {
        let (rt, allow, name) = (runtime(), allow_lints(), &self.model.name);
        let n = Literal::usize_unsuffixed(self.model.dof());
        let (grad, hess, out) = (quote!(grad), quote!(hess), quote!(out));
        let value = self.scalar_body(v.value);
        let gradient = self.body(self.vector(&grad, &v.gradient), &[&grad]);
        let mut tokens = quote! {
            #allow
            impl #rt::Potential<#n> for #name {
                #[inline]
                fn potential(&self, q: &#rt::SVector<f64, #n>) -> f64 {
                    #value
                }

                #[inline]
                fn potential_gradient(&self, q: &#rt::SVector<f64, #n>, grad: &mut #rt::SVector<f64, #n>) {
                    #gradient
                }
            }
        };
        if let Some(h) = &v.hessian {
            let hessian = self.body(self.matrix(&hess, h), &[&hess]);
            let mut fused = self.vector(&grad, &v.gradient);
            fused.extend(self.matrix(&hess, h));
            let fused = self.body(fused, &[&grad, &hess]);
            tokens.extend(quote! {
                #allow
                impl #rt::PotentialHessian<#n> for #name {
                    #[inline]
                    fn potential_hessian(&self, q: &#rt::SVector<f64, #n>, hess: &mut #rt::SMatrix<f64, #n, #n>) {
                        #hessian
                    }

                    #[inline]
                    fn potential_gradient_hessian(
                        &self,
                        q: &#rt::SVector<f64, #n>,
                        grad: &mut #rt::SVector<f64, #n>,
                        hess: &mut #rt::SMatrix<f64, #n, #n>,
                    ) {
                        #fused
                    }
                }
            });
        }
        if let Some(t) = &v.third {
            let third = self.body(self.vector(&out, t), &[&out]);
            tokens.extend(quote! {
                #allow
                impl #rt::PotentialThirdDerivative<#n> for #name {
                    #[inline]
                    fn potential_third_contraction(
                        &self,
                        q: &#rt::SVector<f64, #n>,
                        a: &#rt::SVector<f64, #n>,
                        out: &mut #rt::SVector<f64, #n>,
                    ) {
                        #third
                    }
                }
            });
        }
        tokens
    }

    fn holonomic(&self, derived: &Derived) -> TokenStream {
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
        quote! {
            #allow
            impl #rt::Holonomic<#n, #m> for #name {
                const CONSTRAINTS: [&'static str; #m] = [#(#names),*];

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
        }
    }

    fn penalty(&self, w: &ScalarDerivatives) -> TokenStream {
        let (rt, allow, name) = (runtime(), allow_lints(), &self.model.name);
        let n = Literal::usize_unsuffixed(self.model.dof());
        let (grad, hess, out) = (quote!(grad), quote!(hess), quote!(out));
        let value = self.scalar_body(w.value);
        let gradient = self.body(self.vector(&grad, &w.gradient), &[&grad]);
        let (Some(h), Some(t)) = (&w.hessian, &w.third) else {
            return quote!();
        };
        let hessian = self.body(self.matrix(&hess, h), &[&hess]);
        let mut fused = self.vector(&grad, &w.gradient);
        fused.extend(self.matrix(&hess, h));
        let fused = self.body(fused, &[&grad, &hess]);
        let third = self.body(self.vector(&out, t), &[&out]);
        quote! {
            #allow
            impl #rt::PenalizedPotential<#n> for #name {
                #[inline]
                fn penalized_potential(&self, omega: f64, q: &#rt::SVector<f64, #n>) -> f64 {
                    #value
                }

                #[inline]
                fn penalized_potential_gradient(&self, omega: f64, q: &#rt::SVector<f64, #n>, grad: &mut #rt::SVector<f64, #n>) {
                    #gradient
                }

                #[inline]
                fn penalized_potential_hessian(&self, omega: f64, q: &#rt::SVector<f64, #n>, hess: &mut #rt::SMatrix<f64, #n, #n>) {
                    #hessian
                }

                #[inline]
                fn penalized_potential_gradient_hessian(
                    &self,
                    omega: f64,
                    q: &#rt::SVector<f64, #n>,
                    grad: &mut #rt::SVector<f64, #n>,
                    hess: &mut #rt::SMatrix<f64, #n, #n>,
                ) {
                    #fused
                }

                #[inline]
                fn penalized_potential_third_contraction(
                    &self,
                    omega: f64,
                    q: &#rt::SVector<f64, #n>,
                    a: &#rt::SVector<f64, #n>,
                    out: &mut #rt::SVector<f64, #n>,
                ) {
                    #third
                }
            }
        }
    }
}
