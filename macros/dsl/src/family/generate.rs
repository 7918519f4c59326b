//! Emits a model with families: a struct holding the parameters, the sizes and, per kernel,
//! the table of its instances' global coordinates (built once by `new`); and the sparse tier's
//! traits, each a loop over instances around the kernel's straight-line code.
//!
//! Every term and row is a list of instances, each an array of global coordinate indices, one
//! per slot of its kernel (a plain term or row is a list of one). `new(sizes)` evaluates the
//! ranges, filters, bindings and member indices in `i64` arithmetic with the user's own
//! tokens, checks every index against its family's size (an error naming the family, the
//! instance and the access), and builds the constraint Jacobian's pattern and each instance's
//! positions in it. A step then only gathers, evaluates and scatters.

use std::collections::HashMap;

use mechanism_cas::{gradient, hessian, Id, Output, Symbol};
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote, ToTokens};
use syn::Ident;

use crate::errors::Errors;
use crate::family::assembly::{assemble_hessian, Part};
use crate::family::index::{self, Value};
use crate::family::kernel_code::{kernel_copy, Emitter, KernelCopy};
use crate::family::model::{Cutoff, FamilyModel, Instances, Kernel, Slot};
use crate::family::switch;
use crate::integrators::Capabilities;

/// How many instances at each end of a range the macro evaluates with the default sizes to
/// report an out-of-range literal offset at compile time (the constructor checks them all).
const CHECKED_AT_EACH_END: i64 = 64;

fn runtime() -> TokenStream {
    quote!(::mechanism::runtime)
}

/// A kernel's derivatives, in its own store.
struct Derived {
    /// `∂value_c/∂slot_k` for every component `c` and slot `k`.
    gradient: Vec<Vec<Id>>,
}

/// Emits the model.
pub fn generate(model: &FamilyModel) -> syn::Result<TokenStream> {
    let mut errors = Errors::new();
    check_defaults(model, &mut errors);
    let cutoffs: Vec<&Cutoff> = model
        .potential
        .iter()
        .filter_map(|t| t.cutoff.as_ref())
        .collect();
    if Needs::for_model(model).third_derivative {
        for cutoff in &cutoffs {
            errors.error_spanned(
                &cutoff.source,
                "full Z&S (`zs`) needs the contraction a·V‴·a, which a pair sum with a cutoff does not provide; step this model with `zss`, `zss_stiff`, `verlet`, `rattle`, `shake` or `spook` (list them in `integrators: [..]`), or drop the cutoff",
            );
        }
    }
    let bodies = body_checks(model, &mut errors);
    errors.finish()?;
    let rt = runtime();
    let name = &model.name;
    let vis = &model.vis;
    let attrs = &model.attrs;
    let parameter_fields = model.parameters.iter().map(|p| {
        let (attrs, name) = (&p.attrs, &p.name);
        quote!(#(#attrs)* pub #name: f64)
    });
    let parameter_fields = parameter_fields.chain(model.parameter_families.iter().map(|p| {
        let (attrs, name) = (&p.attrs, &p.name);
        quote!(#(#attrs)* pub #name: ::std::vec::Vec<f64>)
    }));
    let parameter_defaults = model
        .parameters
        .iter()
        .map(|p| {
            let (name, value) = (&p.name, Literal::f64_suffixed(p.default));
            quote!(#name: #value)
        })
        .chain(model.parameter_families.iter().map(|p| {
            let (name, value) = (&p.name, Literal::f64_suffixed(p.default));
            let size = &model.sizes[p.size].name;
            quote!(#name: ::std::vec![#value; #size as usize])
        }))
        .collect::<Vec<_>>();
    let base_sizes: Vec<&Ident> = model
        .sizes
        .iter()
        .filter(|s| s.base)
        .map(|s| &s.name)
        .collect();
    let size_arguments: Vec<Ident> = base_sizes
        .iter()
        .map(|s| format_ident!("{}", s.to_string().to_lowercase()))
        .collect();
    let size_docs = base_sizes
        .iter()
        .map(|s| format!("`{s}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let size_defaults: Vec<Literal> = model
        .sizes
        .iter()
        .filter(|s| s.base)
        .map(|s| Literal::usize_unsuffixed(s.default as usize))
        .collect();
    let size_lets = size_lets(model);

    // Coordinates: scalars first (one body), then each group body by body.
    let scalar_count = Literal::usize_unsuffixed(model.scalars.len());
    let group_layout = model.groups.iter().enumerate().map(|(g, group)| {
        let size = &model.sizes[group.size].name;
        let width = Literal::usize_unsuffixed(group.families.len());
        let offset = format_ident!("__group{}", g);
        quote! {
            let #offset: usize = __coordinates;
            for _ in 0..(#size as usize) {
                __body_sizes.push(#width);
            }
            __coordinates += (#size as usize) * #width;
        }
    });

    // Kernels: every term and row, with its instance table.
    let mut fields = Vec::new();
    let mut builders = Vec::new();
    let mut kinetic_code = Vec::new();
    let mut mass_code = Vec::new();
    let mut potential_code = Vec::new();
    let mut gradient_code = Vec::new();
    let mut row_code = Vec::new();
    let mut constant_mass = true;
    let needs = Needs::for_model(model);
    // The parameters a step checks first, so that a NaN names its culprit (`non_finite_parameter`).
    let scalar_parameters: Vec<&Ident> = model.parameters.iter().map(|p| &p.name).collect();
    let scalar_names: Vec<String> = scalar_parameters.iter().map(|p| p.to_string()).collect();
    let family_parameters: Vec<&Ident> = model.parameter_families.iter().map(|p| &p.name).collect();
    let family_names: Vec<String> = family_parameters.iter().map(|p| p.to_string()).collect();
    // Each family's length as `new` made it, checked before a step (`parameter_violation`).
    let family_count = Literal::usize_unsuffixed(family_parameters.len());
    let family_positions = (0..family_parameters.len()).map(Literal::usize_unsuffixed);
    let family_sizes: Vec<&Ident> = model
        .parameter_families
        .iter()
        .map(|p| &model.sizes[p.size].name)
        .collect();
    let mut penalty_parts = Vec::new();
    let mut bias_code = Vec::new();

    // What `new` estimates before it allocates (`Footprint`), per kernel: its instance table
    // (and a kinetic term's block offsets, a row's positions) and its rows and Jacobian entries.
    let mut footprint = Vec::new();
    for (k, term) in model.kinetic.iter().enumerate() {
        let table = format_ident!("__kinetic{}", k);
        let blocks = format_ident!("__kinetic{}_block", k);
        footprint.push(table_footprint(term.instances.as_ref(), &term.kernel, 1));
        let (builder, field) = instance_table(
            model,
            &table,
            term.instances.as_ref(),
            &term.kernel,
            "kinetic energy term",
        )?;
        fields.push(field);
        fields.push(quote!(#blocks: ::std::vec::Vec<usize>));
        let body = &bodies[k];
        let block_offset = match body {
            Some(BodyOf::Scalars) | None => quote!(0usize),
            Some(BodyOf::Group { slot, .. }) => {
                let slot = Literal::usize_unsuffixed(*slot);
                quote!(__block_offsets[__body_of[__ix[#slot]]])
            }
        };
        builders.push(quote! {
            #builder
            let #blocks: ::std::vec::Vec<usize> = #table.iter().map(|__ix| #block_offset).collect();
        });
        let kernel = &term.kernel;
        let value = kernel.values[0];
        let code = Emitter::new(model, kernel);
        let value_statements = code.emit(&[Output {
            target: quote!(__value),
            value,
        }]);
        kinetic_code.push(quote! {
            for __ix in &self.#table {
                let __value: f64;
                #value_statements
                __energy += __value;
            }
        });
        // Mass block entries ∂²T/∂v_a∂v_b of the velocity slots, all in one body.
        let mut store_kernel = kernel_copy(kernel);
        let v: Vec<Symbol> = store_kernel.symbols.v.clone();
        let q: Vec<Symbol> = store_kernel.symbols.q.clone();
        let h = hessian(&mut store_kernel.store, value, &v);
        let mut outputs = Vec::new();
        let width = match body {
            Some(BodyOf::Scalars) => model.scalars.len(),
            Some(BodyOf::Group { group, .. }) => model.groups[*group].families.len(),
            None => 0,
        };
        for (a, row) in h.iter().enumerate() {
            for (b, &entry) in row.iter().enumerate() {
                if store_kernel.store.is_zero(entry) {
                    continue;
                }
                if q.iter().any(|&s| store_kernel.store.depends_on(entry, s)) {
                    constant_mass = false;
                }
                let (la, lb) = (
                    local(model, &kernel.slots[a]),
                    local(model, &kernel.slots[b]),
                );
                let position = Literal::usize_unsuffixed(la * width + lb);
                outputs.push(Output {
                    target: quote!(blocks[__offset + #position]),
                    value: entry,
                });
            }
        }
        let statements = Emitter::new(model, &store_kernel).emit(&outputs);
        mass_code.push(quote! {
            for (__ix, &__offset) in self.#table.iter().zip(&self.#blocks) {
                #statements
            }
        });
    }

    let mut potential_parts = Vec::new();
    for (k, term) in model.potential.iter().enumerate() {
        let table = format_ident!("__potential{}", k);
        let (builder, field) = instance_table(
            model,
            &table,
            term.instances.as_ref(),
            &term.kernel,
            "potential term",
        )?;
        fields.push(field);
        builders.push(builder);
        footprint.push(table_footprint(term.instances.as_ref(), &term.kernel, 0));
        let mut part = Part::potential(table, &term.kernel, term.cutoff.as_ref());
        potential_code.push(part.energy(model));
        gradient_code.push(part.gradient(model, quote!(grad)));
        potential_parts.push(part);
    }

    // Rows: numbered in declaration order, instance by instance, component by component.
    let mut pattern_builders = Vec::new();
    let mut row_families = Vec::new();
    for (k, row) in model.rows.iter().enumerate() {
        let table = format_ident!("__row{}", k);
        let start = format_ident!("__row{}_start", k);
        let positions = format_ident!("__row{}_positions", k);
        let what = format!("constraint `{}`", row.name);
        let (builder, field) =
            instance_table(model, &table, row.instances.as_ref(), &row.kernel, &what)?;
        fields.push(field);
        let mut kernel = kernel_copy(&row.kernel);
        let q = kernel.symbols.q.clone();
        let components = kernel.values.len();
        let jacobian: Vec<Vec<Id>> = kernel
            .values
            .clone()
            .into_iter()
            .map(|value| gradient(&mut kernel.store, value, &q))
            .collect();
        // The rows and their Jacobian are emitted by one loop: clean them up together.
        let all: Vec<Id> = kernel
            .values
            .iter()
            .chain(jacobian.iter().flatten())
            .copied()
            .collect();
        let mut all = kernel.simplified(&all).into_iter();
        kernel.values = all.by_ref().take(components).collect();
        let derived = Derived {
            gradient: jacobian
                .iter()
                .map(|row| all.by_ref().take(row.len()).collect())
                .collect(),
        };
        // Structural nonzeros (component, slot), in emission order.
        let nonzero: Vec<(usize, usize)> = (0..components)
            .flat_map(|c| (0..q.len()).map(move |s| (c, s)))
            .filter(|&(c, s)| !kernel.store.is_zero(derived.gradient[c][s]))
            .collect();
        let count = Literal::usize_unsuffixed(nonzero.len());
        let width = Literal::usize_unsuffixed(components);
        footprint.push(table_footprint(
            row.instances.as_ref(),
            &row.kernel,
            nonzero.len(),
        ));
        let instances = instance_count(row.instances.as_ref());
        footprint.push(quote! {
            __footprint.rows += #instances * (#width as f64);
            __footprint.jacobian_entries += #instances * (#count as f64);
        });
        row_families.push(quote! {
            #rt::model::size_checks::RowFamily {
                what: #what,
                start: __model.#start,
                instances: __model.#table.len(),
                components: #width,
            }
        });
        fields.push(quote!(#start: usize));
        fields.push(quote!(#positions: ::std::vec::Vec<[usize; #count]>));
        let pairs = nonzero.iter().map(|&(c, s)| {
            let (c, s) = (Literal::usize_unsuffixed(c), Literal::usize_unsuffixed(s));
            quote!((#c, #s))
        });
        builders.push(quote! {
            #builder
            let #start: usize = __rows;
            __rows += #table.len() * #width;
        });
        pattern_builders.push(quote! {
            let #positions: ::std::vec::Vec<[usize; #count]> = #table
                .iter()
                .enumerate()
                .map(|(__instance, __ix)| {
                    let __pairs: [(usize, usize); #count] = [#(#pairs),*];
                    let mut __at = [0usize; #count];
                    let __first = __pattern.len();
                    for (__j, &(__c, __s)) in __pairs.iter().enumerate() {
                        let __entry = (#start + __instance * #width + __c, __ix[__s]);
                        // Two slots of one instance may name the same coordinate: one entry.
                        __at[__j] = match __pattern[__first..].iter().position(|e| *e == __entry) {
                            Some(__p) => __first + __p,
                            None => {
                                __pattern.push(__entry);
                                __pattern.len() - 1
                            }
                        };
                    }
                    __at
                })
                .collect();
        });
        let outputs: Vec<Output> = nonzero
            .iter()
            .enumerate()
            .map(|(j, &(c, s))| {
                let j = Literal::usize_unsuffixed(j);
                Output {
                    target: quote!(__d[#j]),
                    value: derived.gradient[c][s],
                }
            })
            .chain(kernel.values.iter().enumerate().map(|(c, &value)| {
                let c = Literal::usize_unsuffixed(c);
                Output {
                    target: quote!(__g[#c]),
                    value,
                }
            }))
            .collect();
        let statements = Emitter::new(model, &kernel).emit(&outputs);
        row_code.push(quote! {
            for (__instance, (__ix, __at)) in self.#table.iter().zip(&self.#positions).enumerate() {
                let mut __d = [0.0f64; #count];
                let mut __g = [0.0f64; #width];
                #statements
                g[self.#start + __instance * #width..][..#width].copy_from_slice(&__g);
                for (__j, &__p) in __at.iter().enumerate() {
                    jac[__p] += __d[__j];
                }
            }
        });
        if needs.penalty {
            penalty_parts.push(Part::penalty(table.clone(), &row.kernel));
        }
        if needs.kinematics {
            bias_code.push(acceleration_bias(model, &mut kernel, &table, &start));
        }
    }

    let mut hessian_names = Vec::new();
    let mut hessian_builders = Vec::new();
    let mut derivative_impls = Vec::new();
    let mut assemble = |name: &str, parts: &mut [&mut Part]| {
        let assembled = assemble_hessian(model, name, parts);
        fields.extend(assembled.fields);
        hessian_names.extend(assembled.names);
        hessian_builders.push(assembled.builder);
        (assembled.pattern, assembled.code)
    };
    if needs.hessian {
        let (pattern, code) = assemble(
            "potential",
            &mut potential_parts.iter_mut().collect::<Vec<_>>(),
        );
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
            let code = potential_parts
                .iter_mut()
                .map(|p| p.third_contraction(model));
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
            .iter_mut()
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
        let mut all: Vec<&mut Part> = potential_parts
            .iter_mut()
            .chain(penalty_parts.iter_mut())
            .collect();
        let (pattern, code) = assemble("penalized", &mut all);
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
                .iter_mut()
                .chain(penalty_parts.iter_mut())
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
            let (pattern, code) =
                assemble("penalty", &mut penalty_parts.iter_mut().collect::<Vec<_>>());
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
    let table_names: Vec<Ident> = fields_names(model);
    let row_starts: Vec<Ident> = (0..model.rows.len())
        .map(|k| format_ident!("__row{}_start", k))
        .collect();
    let row_positions: Vec<Ident> = (0..model.rows.len())
        .map(|k| format_ident!("__row{}_positions", k))
        .collect();
    let kinetic_blocks: Vec<Ident> = (0..model.kinetic.len())
        .map(|k| format_ident!("__kinetic{}_block", k))
        .collect();
    // Coordinates and mass block entries per size, for the footprint.
    let group_footprint = model.groups.iter().map(|group| {
        let size = &model.sizes[group.size].name;
        let width = Literal::usize_unsuffixed(group.families.len());
        quote! {
            __footprint.coordinates += (#size as f64) * (#width as f64);
            __footprint.mass_entries += (#size as f64) * ((#width * #width) as f64);
        }
    });
    let footprint_check = quote! {
        let mut __footprint = #rt::model::size_checks::Footprint::default();
        __footprint.coordinates = #scalar_count as f64;
        __footprint.mass_entries = (#scalar_count * #scalar_count) as f64;
        #(#group_footprint)*
        #(#footprint)*
        __footprint.check()?;
    };
    let integrator_variants = model
        .integrators
        .iter()
        .map(|i| format_ident!("{}", format!("{i:?}")));
    let rows_check = (!model.rows.is_empty()).then(|| {
        quote! {
            #rt::model::size_checks::check_rows(
                &__model,
                &[#(#row_families),*],
                &[#(#rt::capabilities::Family::#integrator_variants),*],
            )?;
        }
    });
    let new_doc =
        format!(
        "Returns the model with base sizes {size_docs} (defaults: {}) and the default parameters, \
         its patterns and instance tables built; fails with `InvalidModel` for a size below 1, \
         a family member index out of range, or a row that the sizes make impossible (constant \
         and nonzero, as the wrap-around row of a ring of one member) or, for a model compiled \
         for SHAKE, RATTLE or the stabilized Runge–Kutta methods, dependent everywhere \
         (`size_checks::check_rows`), and with `TooLarge`, before allocating, for sizes whose \
         memory estimate exceeds what the machine has (`size_checks::Footprint`).",
        size_defaults.iter().map(|l| l.to_string()).collect::<Vec<_>>().join(", ")
    );
    let cutoff_checks = switch::parameter_checks(&cutoffs);
    // What every sparse-tier integrator is bounded on (each freezes `M` over a step).
    let constant_mass_marker = constant_mass.then(|| {
        quote! {
            #[diagnostic::do_not_recommend]
            impl #rt::model::SparseConstantMass for #name {}
        }
    });
    let integrator_impls = quote! {
        #constant_mass_marker
        impl #rt::model::SparseInertia for #name {
            fn coordinate_count(&self) -> usize { self.__coordinates }
            fn body_sizes(&self) -> &[usize] { &self.__body_sizes }
            fn constant_mass(&self) -> bool { #constant_mass }
            fn non_finite_parameter(&self) -> ::core::option::Option<(&'static str, f64)> {
                #(
                    if !self.#scalar_parameters.is_finite() {
                        return ::core::option::Option::Some((#scalar_names, self.#scalar_parameters));
                    }
                )*
                #(
                    if let ::core::option::Option::Some(&__value) =
                        self.#family_parameters.iter().find(|x| !x.is_finite())
                    {
                        return ::core::option::Option::Some((#family_names, __value));
                    }
                )*
                ::core::option::Option::None
            }
            fn non_finite_member(&self) -> ::core::option::Option<(&'static str, usize, f64)> {
                #(
                    if let ::core::option::Option::Some(__index) =
                        self.#family_parameters.iter().position(|x| !x.is_finite())
                    {
                        return ::core::option::Option::Some((#family_names, __index, self.#family_parameters[__index]));
                    }
                )*
                ::core::option::Option::None
            }
            fn parameter_violation(&self) -> ::core::option::Option<(&'static str, f64, &'static str)> {
                #(
                    if self.#family_parameters.len() != self.__family_lengths[#family_positions] {
                        return ::core::option::Option::Some((
                            #family_names,
                            self.#family_parameters.len() as f64,
                            "a parameter family needs one member per index of its size, as `new` built it (the value is its length now); change members in place",
                        ));
                    }
                )*
                if let ::core::option::Option::Some((__name, __value)) =
                    #rt::model::SparseInertia::non_finite_parameter(self)
                {
                    return ::core::option::Option::Some((__name, __value, "a model parameter must be finite"));
                }
                #cutoff_checks
                ::core::option::Option::None
            }
            #[allow(unused_variables, clippy::all)]
            fn mass_blocks(&self, q: &[f64], blocks: &mut [f64]) {
                blocks.fill(0.0);
                #(#mass_code)*
            }
            #[allow(unused_variables, clippy::all)]
            fn kinetic_energy(&self, q: &[f64], v: &[f64]) -> f64 {
                let mut __energy = 0.0;
                #(#kinetic_code)*
                __energy
            }
        }
        impl #rt::model::SparsePotential for #name {
            #[allow(unused_variables, clippy::all)]
            fn potential(&self, q: &[f64]) -> f64 {
                let mut __energy = 0.0;
                #(#potential_code)*
                __energy
            }
            #[allow(unused_variables, clippy::all)]
            fn potential_gradient(&self, q: &[f64], grad: &mut [f64]) {
                grad.fill(0.0);
                #(#gradient_code)*
            }
        }
        impl #rt::model::SparseHolonomic for #name {
            fn constraint_count(&self) -> usize { self.__rows }
            fn jacobian_pattern(&self) -> &[(usize, usize)] { &self.__pattern }
            #[allow(unused_variables, clippy::all)]
            fn constraints_and_jacobian(&self, q: &[f64], t: f64, g: &mut [f64], jac: &mut [f64]) {
                jac.fill(0.0);
                #(#row_code)*
            }
        }
        #(#derivative_impls)*
        impl #rt::model::SparseNonholonomic for #name {}
        impl #rt::model::SparseAppliedForces for #name {}
    };
    Ok(quote! {
        #(#attrs)*
        #[derive(Clone, Debug)]
        #vis struct #name {
            #(#parameter_fields,)*
            __coordinates: usize,
            __body_sizes: ::std::vec::Vec<usize>,
            __rows: usize,
            __pattern: ::std::vec::Vec<(usize, usize)>,
            __family_lengths: [usize; #family_count],
            #(#fields,)*
        }

        impl #name {
            #[doc = #new_doc]
            #[allow(non_snake_case, unused_variables, unused_mut, unused_parens, clippy::all)]
            pub fn new(#(#size_arguments: usize),*) -> ::core::result::Result<Self, #rt::StepError> {
                #size_lets
                #footprint_check
                let mut __coordinates: usize = #scalar_count;
                let mut __body_sizes: ::std::vec::Vec<usize> = ::std::vec::Vec::new();
                if #scalar_count > 0 {
                    __body_sizes.push(#scalar_count);
                }
                #(#group_layout)*
                let mut __block_offsets = ::std::vec::Vec::with_capacity(__body_sizes.len());
                let mut __body_of: ::std::vec::Vec<usize> = ::std::vec::Vec::with_capacity(__coordinates);
                let mut __next = 0usize;
                for (__body, &__s) in __body_sizes.iter().enumerate() {
                    __block_offsets.push(__next);
                    __next += __s * __s;
                    __body_of.extend(::core::iter::repeat(__body).take(__s));
                }
                let mut __rows: usize = 0;
                #(#builders)*
                let mut __pattern: ::std::vec::Vec<(usize, usize)> = ::std::vec::Vec::new();
                #(#pattern_builders)*
                #(#hessian_builders)*
                let __model = #name {
                    #(#parameter_defaults,)*
                    __coordinates,
                    __body_sizes,
                    __rows,
                    __pattern,
                    __family_lengths: [#(#family_sizes as usize),*],
                    #(#table_names,)*
                    #(#kinetic_blocks,)*
                    #(#row_starts,)*
                    #(#row_positions,)*
                    #(#hessian_names,)*
                };
                #rows_check
                Ok(__model)
            }
        }

        #integrator_impls
    })
}

/// The derived quantities the integrators of the model need (the family pipeline's share of
/// [`crate::plan::Plan`], read from the same capability table).
struct Needs {
    /// `Hess V` on a pattern (`SparsePotentialHessian`), for the Zhang–Skeel family.
    hessian: bool,
    /// `a·V‴·a` (and `a·W‴·a` with a penalty), for full Z&S.
    third_derivative: bool,
    /// `W = V + ½ω²|g|²` with its gradient and Hessian, for the penalty integrators on a
    /// constrained model (Tao–Owhadi 2014, eq. 7).
    penalty: bool,
    /// `Hess ½ω²|g|²` alone, the stiff part for stiff Z&Ss (eq. 19).
    penalty_hessian: bool,
    /// `g_t` and `vᵀ Hess g_k v`, for the index-1 formulation of the stabilized Runge–Kutta
    /// methods.
    kinematics: bool,
}

impl Needs {
    fn for_model(model: &FamilyModel) -> Needs {
        let any = |need: fn(Capabilities) -> bool| {
            model.integrators.iter().any(|i| need(i.capabilities()))
        };
        let penalty = !model.rows.is_empty() && any(|c| c.penalty);
        let third_derivative = any(|c| c.third_derivative);
        Needs {
            hessian: any(|c| c.hessian) || third_derivative,
            third_derivative,
            penalty,
            penalty_hessian: penalty && any(|c| c.stiff_penalty),
            kinematics: any(|c| c.kinematics),
        }
    }
}

/// Returns the loop that writes the rows' acceleration bias `vᵀ Hess g_c v` (their constraints
/// do not depend on time) for every instance of the row family `table` starting at row
/// `start`: the `g̈ = G q̈ + vᵀ Hess g v` of the index-1 formulation (Ascher et al. 1995, eq. 1.5).
fn acceleration_bias(
    model: &FamilyModel,
    kernel: &mut KernelCopy,
    table: &Ident,
    start: &Ident,
) -> TokenStream {
    let (q, v) = (kernel.symbols.q.clone(), kernel.symbols.v.clone());
    let velocities: Vec<Id> = v.iter().map(|&s| kernel.store.symbol(s)).collect();
    let directional = |store: &mut mechanism_cas::Store, f: Id| {
        let d = gradient(store, f, &q);
        let terms: Vec<Id> = d
            .iter()
            .zip(&velocities)
            .map(|(&d, &v)| store.mul(d, v))
            .collect();
        store.sum(terms)
    };
    let width = kernel.values.len();
    let outputs: Vec<Output> = kernel
        .values
        .clone()
        .into_iter()
        .enumerate()
        .map(|(c, g)| {
            let once = directional(&mut kernel.store, g);
            let value = directional(&mut kernel.store, once);
            let c = Literal::usize_unsuffixed(c);
            Output {
                target: quote!(__b[#c]),
                value,
            }
        })
        .collect();
    let statements = Emitter::new(model, &*kernel).emit(&outputs);
    let width = Literal::usize_unsuffixed(width);
    quote! {
        for (__instance, __ix) in self.#table.iter().enumerate() {
            let mut __b = [0.0f64; #width];
            #statements
            out[self.#start + __instance * #width..][..#width].copy_from_slice(&__b);
        }
    }
}

/// The names of the instance tables, in field order.
fn fields_names(model: &FamilyModel) -> Vec<Ident> {
    (0..model.kinetic.len())
        .map(|k| format_ident!("__kinetic{}", k))
        .chain((0..model.potential.len()).map(|k| format_ident!("__potential{}", k)))
        .chain((0..model.rows.len()).map(|k| format_ident!("__row{}", k)))
        .collect()
}

/// Emits `let N: i64 = n as i64; let R: i64 = …;` and the checks that sizes are positive.
fn size_lets(model: &FamilyModel) -> TokenStream {
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
fn instance_count(instances: Option<&Instances>) -> TokenStream {
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
fn table_footprint(instances: Option<&Instances>, kernel: &Kernel, extra: usize) -> TokenStream {
    let per_instance =
        Literal::usize_unsuffixed(kernel.slots.len() + kernel.parameter_slots.len() + extra);
    let count = instance_count(instances);
    quote!(__footprint.table_entries += #count * (#per_instance as f64);)
}

/// Emits the builder of a kernel's instance table `table: Vec<[usize; slots]>` and its field.
fn instance_table(
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

/// Where a kinetic term's velocities live.
enum BodyOf {
    /// The scalar coordinates' body.
    Scalars,
    /// A body of group `group`, named by the term's slot `slot`.
    Group { group: usize, slot: usize },
}

/// Checks that each kinetic term's velocities are those of one body (the sparse tier's mass
/// matrix is block diagonal) and returns that body.
fn body_checks(model: &FamilyModel, errors: &mut Errors) -> Vec<Option<BodyOf>> {
    model
        .kinetic
        .iter()
        .map(|term| {
            let kernel = &term.kernel;
            let moving: Vec<usize> = (0..kernel.slots.len())
                .filter(|&s| kernel.values.iter().any(|&v| kernel.store.depends_on(v, kernel.symbols.v[s])))
                .collect();
            let mut body: Option<(Option<usize>, String)> = None;
            for &s in &moving {
                let this = match &kernel.slots[s] {
                    Slot::Scalar(_) => (None, String::new()),
                    Slot::Member { family, index } => (
                        Some(model.families[*family].group),
                        index.to_token_stream().to_string(),
                    ),
                };
                match &body {
                    None => body = Some(this),
                    Some(existing) if *existing == this => {}
                    Some(_) => {
                        errors.error_spanned(
                            &term.source,
                            "this kinetic energy term couples the velocities of two bodies; the sparse tier needs a block-diagonal mass matrix — write each body's kinetic energy as its own term",
                        );
                        return None;
                    }
                }
            }
            let (group, _) = body?;
            Some(match group {
                None => BodyOf::Scalars,
                Some(group) => BodyOf::Group {
                    group,
                    slot: moving[0],
                },
            })
        })
        .collect()
}

/// Returns a slot's position within its body's block.
fn local(model: &FamilyModel, slot: &Slot) -> usize {
    match slot {
        Slot::Scalar(k) => *k,
        Slot::Member { family, .. } => model.families[*family].position,
    }
}

/// Evaluates every family's first and last instances with the default sizes and reports a
/// member index out of range at its tokens: a literal offset such as `x[i - 1]` with
/// `i in 0..N` is a compile error.
fn check_defaults(model: &FamilyModel, errors: &mut Errors) {
    let mut env: HashMap<String, i64> = HashMap::new();
    for size in &model.sizes {
        env.insert(size.name.to_string(), size.default);
    }
    let kernels = model
        .kinetic
        .iter()
        .chain(&model.potential)
        .map(|t| (t.instances.as_ref(), &t.kernel))
        .chain(model.rows.iter().map(|r| (r.instances.as_ref(), &r.kernel)));
    for (instances, kernel) in kernels {
        // Every member access of the kernel: (family name, its size's default, index).
        let accesses: Vec<(&Ident, i64, &syn::Expr)> = kernel
            .slots
            .iter()
            .filter_map(|slot| match slot {
                Slot::Member { family, index } => {
                    let f = &model.families[*family];
                    Some((&f.name, model.sizes[f.size].default, index))
                }
                Slot::Scalar(_) => None,
            })
            .chain(kernel.parameter_slots.iter().map(|slot| {
                let f = &model.parameter_families[slot.family];
                (&f.name, model.sizes[f.size].default, &slot.index)
            }))
            .collect();
        let check_slots = |env: &HashMap<String, i64>, errors: &mut Errors, at: Option<i64>| {
            for &(name, size, index) in &accesses {
                match index::eval(index, env) {
                    Some(Value::Int(k)) if (0..size).contains(&k) => {}
                    Some(Value::Int(k)) => {
                        let instance = at.map_or(String::new(), |i| format!(" for index {i}"));
                        errors.error_spanned(
                            index,
                            format!(
                                "`{}[{}]` is out of range{instance}: it is {k}, and `{}` has {size} members with the default sizes; shift the family's range or the offset",
                                name,
                                index.to_token_stream(),
                                name
                            ),
                        );
                    }
                    _ => errors.error_spanned(index, "this member index is not an integer with the default sizes (a division by zero?)"),
                }
            }
        };
        let Some(instances) = instances else {
            check_slots(&env, errors, None);
            continue;
        };
        let (Some(Value::Int(start)), Some(Value::Int(end))) = (
            index::eval(&instances.start, &env),
            index::eval(&instances.end, &env),
        ) else {
            errors.error_spanned(
                &instances.start,
                "this range does not evaluate to integers with the default sizes",
            );
            continue;
        };
        let before = errors.is_empty();
        let values = (start..end.min(start.saturating_add(CHECKED_AT_EACH_END)))
            .chain(end.saturating_sub(CHECKED_AT_EACH_END).max(start)..end);
        // A pair sum's second index: its first and last values after `i`.
        let seconds = |i: i64| -> Vec<Option<i64>> {
            match instances.pair {
                None => vec![None],
                Some(_) => {
                    let first = i.saturating_add(1);
                    (first..end.min(first.saturating_add(CHECKED_AT_EACH_END)))
                        .chain(end.saturating_sub(CHECKED_AT_EACH_END).max(first)..end)
                        .map(Some)
                        .collect()
                }
            }
        };
        let values: Vec<(i64, Option<i64>)> = values
            .flat_map(|i| seconds(i).into_iter().map(move |j| (i, j)))
            .collect();
        for (i, j) in values {
            let mut env = env.clone();
            env.insert(instances.index.to_string(), i);
            if let (Some(pair), Some(j)) = (&instances.pair, j) {
                env.insert(pair.to_string(), j);
            }
            if let Some(filter) = &instances.filter {
                if index::eval(filter, &env) != Some(Value::Bool(true)) {
                    continue;
                }
            }
            for (name, value) in &instances.bindings {
                if let Some(Value::Int(v)) = index::eval(value, &env) {
                    env.insert(name.to_string(), v);
                }
            }
            check_slots(&env, errors, Some(i));
            if before && !errors.is_empty() {
                break;
            }
        }
    }
}
