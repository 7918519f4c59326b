//! Emits the model type: a struct whose fields are the parameters, and implementations of the
//! runtime's capability traits with straight-line, fixed-size `f64` code.
//!
//! [`generate`] assembles the outputs of one `Code` emitter, whose methods are grouped by
//! output: `definition` (the struct and its inertia), `energy` (the potential and the
//! penalized potential), `constraints` (holonomic and nonholonomic rows), `forces` (applied
//! forces, dissipation), and `solve` (the linear solves specialized to the structural nonzeros,
//! in the elimination order of `ordering`; SPOOK's Schur complement in `schur`, its step in
//! `spook` and its step Jacobian in `spook_jacobian`). After an error, `fallback` emits a stub.

mod constraints;
mod definition;
mod energy;
mod factor;
mod fallback;
mod forces;
mod ldlt;
mod ordering;
mod parameters;
mod robot;
mod schur;
mod solve;
mod spook;
mod spook_jacobian;

pub use fallback::fallback;

use std::collections::HashMap;

use mechanism_cas::{emit, EmitOptions, Id, Output, Store, Symbol};
use proc_macro2::{Literal, TokenStream};
use quote::quote;

use crate::derive::{Derived, Outputs};
use crate::ir::Ir;
use crate::model::Model;

/// The path under which generated code reaches the runtime crate.
fn runtime() -> TokenStream {
    quote!(::mechanism::runtime)
}

/// Lints that generated straight-line code may trip and that are not the user's business.
fn allow_lints() -> TokenStream {
    quote!(#[allow(unused_variables, clippy::all, clippy::pedantic, clippy::nursery)])
}

/// Generates the struct and trait implementations of a model of either kind: the fixed-size
/// traits with straight-line code ([`fixed`]), or the sparse tier's traits with loops over
/// instances around each kernel's code ([`family::emit`](crate::family::emit)).
pub fn generate(model: &Ir, outputs: &Outputs) -> syn::Result<TokenStream> {
    match (model, outputs) {
        (Ir::Fixed(model), Outputs::Fixed(derived)) => Ok(fixed(model, derived)),
        (Ir::Runtime { model, bodies }, Outputs::Runtime(derived)) => {
            crate::family::emit::generate(model, bodies, derived)
        }
        (Ir::Fixed(model), Outputs::Runtime(_)) => Err(syn::Error::new_spanned(
            &model.name,
            "internal: a fixed-size model with a family model's derived quantities",
        )),
        (Ir::Runtime { model, .. }, Outputs::Fixed(_)) => Err(syn::Error::new_spanned(
            &model.name,
            "internal: a model with families with a fixed-size model's derived quantities",
        )),
    }
}

/// Generates a fixed-size model's struct and trait implementations.
pub fn fixed(model: &Model, derived: &Derived) -> TokenStream {
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
    let parameters = derived.parameters.as_ref().map(|p| code.parameters(p));
    let robot = model.robot.as_ref().map(|r| code.robot(r));
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
        #parameters
        #robot
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
}
