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
//!
//! The emitters, by output: `tables` (instance tables, sizes, footprint), `kinetic` (`T` and
//! the mass blocks), `potential` (`V`, `∇V`), `rows` (`g`, its Jacobian, the penalty parts and
//! the acceleration bias) and `derivatives` (Hessians, contractions, the penalized potential,
//! the rows' weighted Hessians) and `step` (for `derivatives: [step_jacobians]`: the flat
//! parameter vector, the rows' Hessians and every derivative in the parameters as visited
//! entries); [`generate`] assembles the struct, `new` and the traits from their outputs.

mod derivatives;
mod kinetic;
mod potential;
mod rows;
mod step;
mod tables;

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
use syn::Ident;

use crate::family::checks::BodyOf;
use crate::family::derive::FamilyDerived;
use crate::family::fields;
use crate::family::model::{Cutoff, FamilyModel};
use crate::family::switch;
use tables::{fields_names, size_lets, Tables};

/// The path under which generated code reaches the runtime crate.
fn runtime() -> TokenStream {
    quote!(::mechanism::runtime)
}

/// Emits the model, checked by [`crate::family::checks`], whose kinetic terms live on `bodies`,
/// from its derived quantities `derived` ([`crate::family::derive`]).
pub fn generate(
    model: &FamilyModel,
    bodies: &[Option<BodyOf>],
    derived: &FamilyDerived,
) -> syn::Result<TokenStream> {
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

    let needs = model.plan();
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
    let mut tables = Tables::default();
    let kinetic::Kinetic {
        energy: kinetic_code,
        mass: mass_code,
        constant_mass,
    } = kinetic::kinetic(model, bodies, &derived.kinetic, &mut tables)?;
    let potential::Potential {
        energy: potential_code,
        gradient: gradient_code,
    } = potential::potential(model, &derived.potential, &mut tables)?;
    let rows::Rows {
        pattern_builders,
        families: row_families,
        code: row_code,
        bias: bias_code,
    } = rows::rows(model, &derived.rows, &mut tables)?;
    let derivatives::Derivatives {
        impls: derivative_impls,
        hessian_names,
        hessian_builders,
    } = derivatives::derivatives(model, &needs, derived, &bias_code, &mut tables.fields);
    let Tables {
        fields,
        builders,
        footprint,
    } = tables;
    let cutoffs: Vec<&Cutoff> = model
        .potential
        .iter()
        .filter_map(|t| t.cutoff.as_ref())
        .collect();
    let table_names: Vec<Ident> = fields_names(model);
    let row_starts: Vec<Ident> = (0..model.rows.len()).map(fields::row_start).collect();
    let row_positions: Vec<Ident> = (0..model.rows.len()).map(fields::row_positions).collect();
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
    let step_impls = derived
        .step
        .as_ref()
        .map(|step| step::step_derivatives(model, step));
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
        #step_impls
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
