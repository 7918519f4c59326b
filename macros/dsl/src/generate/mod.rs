//! Emits the model type: a struct whose fields are the parameters, and implementations of the
//! runtime's capability traits with straight-line, fixed-size `f64` code.

mod fallback;
mod ordering;
mod solve;

pub use fallback::fallback;

use std::collections::HashMap;

use mechanism_cas::{emit, EmitOptions, Id, Output, Store, Symbol};
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
use syn::Ident;

use crate::derive::{Derived, ScalarDerivatives, VectorDerivatives};
use crate::integrators::Family;
use crate::model::{Model, Tau};

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
    // The mass matrix for the specialized linear solves of the Zhang–Skeel family, if the
    // model is compiled for one.
    let z_family = model.integrators.iter().any(|f| {
        let can = f.capabilities();
        can.linear_solve && can.hessian
    });
    let solve_mass = (derived.linear_solve && z_family).then_some(derived.mass.as_slice());
    let potential = code.potential(&derived.potential, solve_mass);
    // `Holonomic<N, 0>`, `Nonholonomic<N, 0>` and a zero `AppliedForces<N>` are emitted too, so
    // that an integrator can require all three and a model can never have rows or forces that
    // an integrator silently drops because it was not asked for them.
    let holonomic = code.holonomic(derived);
    let penalty = derived
        .penalized
        .as_ref()
        .map(|w| code.penalty(w, derived.penalty_hessian.as_ref(), solve_mass));
    let kinematics = code.kinematics(derived);
    let second_order = code.second_order(derived);
    let nonholonomic = code.nonholonomic(derived);
    let dissipation = derived.dissipation.as_ref().map(|d| code.dissipation(d));
    let forces = derived.forces.as_ref().map(|f| code.forces(f));
    let applied = code.applied_forces(derived);
    quote! {
        #definition
        #inertia
        #potential
        #holonomic
        #penalty
        #kinematics
        #second_order
        #nonholonomic
        #dissipation
        #forces
        #applied
    }
}

/// The names under which a scalar energy and its derivatives are emitted: the potential `V`
/// or the penalized potential `W = V + ½ω²|g|²`, which takes `ω` as its first argument.
struct Energy {
    /// The traits of the value and gradient, the Hessian, and the third-derivative contraction.
    traits: [Ident; 3],
    /// The methods of the value, the gradient, the Hessian, the fused gradient and Hessian,
    /// and the third-derivative contraction.
    methods: [Ident; 5],
    /// The specialized implicit solve's method.
    solve_fn: Ident,
    /// Items at the head of the value trait's implementation.
    header: TokenStream,
    /// Whether the energy is the penalized one, whose methods take `omega: f64` first.
    penalized: bool,
}

impl Energy {
    /// Returns the potential `V` of a model with `n` coordinates, whose value trait declares
    /// `depends_on`, the mask of the coordinates it reads.
    fn potential(n: &Literal, depends_on: TokenStream) -> Energy {
        Energy::named(
            ["Potential", "PotentialHessian", "PotentialThirdDerivative"],
            "potential",
            "implicit_acceleration",
            quote!(const POTENTIAL_DEPENDS_ON: [bool; #n] = #depends_on;),
            false,
        )
    }

    /// Returns the penalized potential `W = V + ½ω²|g|²`.
    fn penalized() -> Energy {
        Energy::named(
            [
                "PenalizedPotential",
                "PenalizedHessian",
                "PenalizedThirdDerivative",
            ],
            "penalized_potential",
            "penalized_implicit_acceleration",
            quote!(),
            true,
        )
    }

    /// Returns the energy with these trait names, method prefix and solve method.
    fn named(
        traits: [&str; 3],
        prefix: &str,
        solve: &str,
        header: TokenStream,
        penalized: bool,
    ) -> Energy {
        let method = |suffix: &str| format_ident!("{prefix}{suffix}");
        Energy {
            traits: traits.map(|name| format_ident!("{name}")),
            methods: [
                method(""),
                method("_gradient"),
                method("_hessian"),
                method("_gradient_hessian"),
                method("_third_contraction"),
            ],
            solve_fn: format_ident!("{solve}"),
            header,
            penalized,
        }
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
        symbols.insert(s.t, quote!(t));
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
    fn dependency_mask(&self, roots: &[Id]) -> TokenStream {
        let mask = self.store().dependency_mask(roots, &self.model.symbols.q);
        quote!([#(#mask),*])
    }

    /// Returns whether the mass matrix is structurally diagonal (point masses).
    fn diagonal_mass(&self, derived: &Derived) -> bool {
        let n = self.model.dof();
        (0..n).all(|i| (0..n).all(|j| i == j || self.store().is_zero(derived.mass[i][j])))
    }

    fn inertia(&self, derived: &Derived) -> TokenStream {
        let model = self.model;
        let (rt, allow, name) = (runtime(), allow_lints(), &model.name);
        let n = Literal::usize_unsuffixed(model.dof());
        // The same test as the integrator check's (`validate::integrators`), so that the macro
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

    /// Emits the potential `V` at the levels planned: `Potential`, then `PotentialHessian` and
    /// `PotentialThirdDerivative` when the integrators need them.
    fn potential(&self, v: &ScalarDerivatives, solve_mass: Option<&[Vec<Id>]>) -> TokenStream {
        let n = Literal::usize_unsuffixed(self.model.dof());
        let energy = Energy::potential(&n, self.dependency_mask(&[v.value]));
        self.energy(&energy, v, solve_mass)
    }

    /// Emits a scalar energy and its derivatives at the levels in `derivatives`: the value and
    /// gradient, then the Hessian (with the fused gradient-and-Hessian and, given the mass, the
    /// specialized implicit solve) and the third-derivative contraction when present.
    fn energy(
        &self,
        energy: &Energy,
        derivatives: &ScalarDerivatives,
        solve_mass: Option<&[Vec<Id>]>,
    ) -> TokenStream {
        let (rt, allow, name) = (runtime(), allow_lints(), &self.model.name);
        let n = Literal::usize_unsuffixed(self.model.dof());
        let (grad, hess, out) = (quote!(grad), quote!(hess), quote!(out));
        let Energy {
            traits: [value_trait, hessian_trait, third_trait],
            methods: [value_fn, gradient_fn, hessian_fn, fused_fn, third_fn],
            solve_fn,
            header,
            penalized,
        } = energy;
        let omega = if *penalized {
            quote!(omega: f64,)
        } else {
            quote!()
        };
        let value = self.scalar_body(derivatives.value);
        let gradient = self.body(self.vector(&grad, &derivatives.gradient), &[&grad]);
        let mut tokens = quote! {
            #allow
            impl #rt::#value_trait<#n> for #name {
                #header

                #[inline]
                fn #value_fn(&self, #omega q: &#rt::SVector<f64, #n>) -> f64 {
                    #value
                }

                #[inline]
                fn #gradient_fn(&self, #omega q: &#rt::SVector<f64, #n>, grad: &mut #rt::SVector<f64, #n>) {
                    #gradient
                }
            }
        };
        if let Some(h) = &derivatives.hessian {
            let hessian = self.body(self.matrix(&hess, h), &[&hess]);
            let mut fused = self.vector(&grad, &derivatives.gradient);
            fused.extend(self.matrix(&hess, h));
            let fused = self.body(fused, &[&grad, &hess]);
            let solve = solve_mass.map(|mass| {
                self.implicit_solve_method(
                    quote!(#solve_fn),
                    *penalized,
                    mass,
                    &derivatives.gradient,
                    h,
                )
            });
            tokens.extend(quote! {
                #allow
                impl #rt::#hessian_trait<#n> for #name {
                    #solve

                    #[inline]
                    fn #hessian_fn(&self, #omega q: &#rt::SVector<f64, #n>, hess: &mut #rt::SMatrix<f64, #n, #n>) {
                        #hessian
                    }

                    #[inline]
                    fn #fused_fn(
                        &self,
                        #omega
                        q: &#rt::SVector<f64, #n>,
                        grad: &mut #rt::SVector<f64, #n>,
                        hess: &mut #rt::SMatrix<f64, #n, #n>,
                    ) {
                        #fused
                    }
                }
            });
        }
        if let Some(t) = &derivatives.third {
            let third = self.body(self.vector(&out, t), &[&out]);
            tokens.extend(quote! {
                #allow
                impl #rt::#third_trait<#n> for #name {
                    #[inline]
                    fn #third_fn(
                        &self,
                        #omega
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
        let diagonal_mass = self.diagonal_mass(derived);
        let spook_solve = (derived.linear_solve
            && model.uses(Family::Spook)
            && model.nonholonomic.is_empty()
            && diagonal_mass
            && !model.configuration_dependent_mass())
        .then(|| {
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

    /// Emits the penalized potential `W = V + ½ω²|g|²` at the levels planned:
    /// `PenalizedPotential`, then `PenalizedHessian` and `PenalizedThirdDerivative` when the
    /// integrators need them, and `PenaltyHessian` (the stiff part alone) for stiff Z&Ss.
    fn penalty(
        &self,
        w: &ScalarDerivatives,
        penalty_hessian: Option<&Vec<Vec<Id>>>,
        solve_mass: Option<&[Vec<Id>]>,
    ) -> TokenStream {
        let (rt, allow, name) = (runtime(), allow_lints(), &self.model.name);
        let n = Literal::usize_unsuffixed(self.model.dof());
        let hess = quote!(hess);
        let mut tokens = self.energy(&Energy::penalized(), w, solve_mass);
        if let Some(h) = penalty_hessian {
            let hessian = self.body(self.matrix(&hess, h), &[&hess]);
            let solve = solve_mass.map(|mass| {
                self.implicit_solve_method(
                    quote!(penalty_implicit_acceleration),
                    true,
                    mass,
                    &w.gradient,
                    h,
                )
            });
            tokens.extend(quote! {
                #allow
                impl #rt::PenaltyHessian<#n> for #name {
                    #solve

                    #[inline]
                    fn penalty_hessian(&self, omega: f64, q: &#rt::SVector<f64, #n>, hess: &mut #rt::SMatrix<f64, #n, #n>) {
                        #hessian
                    }
                }
            });
        }
        tokens
    }

    fn regularization(&self) -> TokenStream {
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

    fn kinematics(&self, derived: &Derived) -> Option<TokenStream> {
        let kinematics = derived.kinematics.as_ref()?;
        let model = self.model;
        let (rt, allow, name) = (runtime(), allow_lints(), &model.name);
        let n = Literal::usize_unsuffixed(model.dof());
        let m = Literal::usize_unsuffixed(model.constraints.len());
        let out = quote!(out);
        let g_t = self.body(self.vector(&out, &kinematics.time_derivative), &[&out]);
        let bias = self.body(self.vector(&out, &kinematics.acceleration_bias), &[&out]);
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
        })
    }

    fn second_order(&self, derived: &Derived) -> Option<TokenStream> {
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
            tokens.extend(quote! {
                #allow
                impl #rt::HolonomicHessians<#n, #m> for #name {
                    #[inline]
                    fn constraint_hessians(&self, q: &#rt::SVector<f64, #n>, t: f64, out: &mut [#rt::SMatrix<f64, #n, #n>; #m]) {
                        #body
                    }
                }
            });
        }
        Some(tokens)
    }

    fn nonholonomic(&self, derived: &Derived) -> TokenStream {
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

    /// Emits `AppliedForces`: the sum of the dissipative force and the `forces` section, or the
    /// zero defaults when the model has neither.
    fn applied_forces(&self, derived: &Derived) -> TokenStream {
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
    fn vector_function(&self, f: &VectorDerivatives) -> (TokenStream, TokenStream) {
        let (out, dq, dv) = (quote!(out), quote!(dq), quote!(dv));
        let value = self.body(self.vector(&out, &f.value), &[&out]);
        let mut jacobians = self.matrix(&dq, &f.dq);
        jacobians.extend(self.matrix(&dv, &f.dv));
        (value, self.body(jacobians, &[&dq, &dv]))
    }

    fn dissipation(&self, d: &VectorDerivatives) -> TokenStream {
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

    fn forces(&self, f: &VectorDerivatives) -> TokenStream {
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
