//! The valid models: the seeds of the mutation tests, each of which expands to Rust, and the
//! ten-link chain of pendula.

use proc_macro2::TokenStream;
use quote::quote;

use super::expand_valid;
use crate::models::{chain, families};

fn double_pendulum() -> TokenStream {
    quote! {
        /// Planar double pendulum.
        pub struct DoublePendulum {
            coordinates: [x1, y1, x2, y2],
            parameters: {
                /// Mass of the first bob.
                m1 = 1.0,
                m2 = 1.0, l1 = 1.0, l2 = 1.4142135623730951, g = 1.0,
            },
            kinetic: 0.5 * m1 * (dot(x1).powi(2) + dot(y1).powi(2))
                + 0.5 * m2 * (dot(x2).powi(2) + dot(y2).powi(2)),
            potential: m1 * g * y1 + m2 * g * y2,
            holonomic: {
                /// The first rod.
                rod1: x1.powi(2) + y1.powi(2) - l1.powi(2),
                rod2: (x2 - x1).powi(2) + (y2 - y1).powi(2) - l2.powi(2),
            },
        }
    }
}

fn spring_lagrangian() -> TokenStream {
    quote! {
        pub struct Spring {
            coordinates: [x],
            parameters: { m = 2.0, k = 3.0 },
            lagrangian: 0.5 * m * dot(x).powi(2) - 0.5 * k * x.powi(2),
        }
    }
}

fn every_function() -> TokenStream {
    quote! {
        struct Functions {
            coordinates: [x, y],
            parameters: { a = 0.5, b = 2.0 },
            kinetic: 0.5 * (dot(x).powi(2) + dot(y).powi(2)),
            potential: sqrt(x.powi(2) + 1.0) + x.sin() + cos(y) + (a * x).tan() + exp(-y)
                + (x.powi(2) + b).ln() + x.powi(3) + (y.powi(2) + 1.0).powf(1.5)
                + powi(x, 4) + powf(y.powi(2) + 2.0, a) + ln(b + y.powi(2)) + tan(0.1 * y)
                + x.sqrt() * y.exp().cos() + sin(x * y),
            holonomic: { c: x.sin() + y.cos() - 1.0 },
        }
    }
}

fn singular() -> TokenStream {
    quote! {
        pub struct Singular {
            coordinates: [x, y],
            parameters: { k = 1.0 },
            kinetic: 0.5 * (dot(x).powi(2) + dot(y).powi(2)),
            // `1/x`, `x⁻³`, and `sqrt` of something that is zero on a line.
            potential: k / x + x.powi(-3) + sqrt(x) + (y - x).sqrt() + (x * 0.0).sqrt()
                + 1.0 / (x - x + y),
            holonomic: { circle: sqrt(x.powi(2) + y.powi(2)) - 1.0 },
        }
    }
}

fn polar() -> TokenStream {
    quote! {
        /// A spring pendulum in polar coordinates: the mass matrix depends on `r`.
        pub struct Polar {
            coordinates: [r, th],
            parameters: { m = 1.0, k = 10.0, r0 = 1.0, g = 9.81 },
            kinetic: 0.5 * m * (dot(r).powi(2) + r.powi(2) * dot(th).powi(2)),
            potential: 0.5 * k * (r - r0).powi(2) - m * g * r * th.cos(),
        }
    }
}

fn free_particle() -> TokenStream {
    quote! {
        pub(crate) struct Free {
            coordinates: [x],
            kinetic: dot(x) * dot(x) / 2.0,
        }
    }
}

/// A cloud with a parameter family and a pair sum, compiled for the penalty-free Z&S family.
fn family_cloud() -> TokenStream {
    quote! {
        pub struct FamilyCloud {
            sizes: { N = 5 },
            coordinates: [x[N], y[N]],
            parameters: { m[N] = 1.0, k = 2.0 },
            kinetic: sum(0..N, |i| 0.5 * m[i] * (dot(x[i]).powi(2) + dot(y[i]).powi(2))),
            potential: sum(0..N, |i, j| k / ((x[i] - x[j]).powi(2) + (y[i] - y[j]).powi(2) + 1.0))
                + sum(0..N, |i| 0.5 * m[i] * (x[i].powi(2) + y[i].powi(2))),
            integrators: [zs, zss, verlet],
        }
    }
}

pub(super) fn valid_models() -> Vec<TokenStream> {
    vec![
        double_pendulum(),
        spring_lagrangian(),
        every_function(),
        singular(),
        polar(),
        free_particle(),
        chain::chain(3),
    ]
}

/// The seed models of the mutation tests: the valid models and those written with families
/// (whose pipeline does not make every check of `each_ill_posed_class_is_an_error` yet).
pub(super) fn mutation_seeds() -> Vec<TokenStream> {
    let mut models = valid_models();
    // The library's chain and ladder (`src/models/families.rs`; filters, bindings, vector rows,
    // a derived size), at small default sizes.
    models.extend(families::family_models(10, 3));
    models.push(family_cloud());
    models
}

#[test]
fn every_seed_model_is_valid() {
    for model in mutation_seeds() {
        expand_valid(model);
    }
}

// ---------------------------------------------------------------------------------------------
// The chain of pendula (Tao–Owhadi §4.2).
// ---------------------------------------------------------------------------------------------

#[test]
fn ten_link_chain_expands_to_rust() {
    let code = expand_valid(chain::chain(10));
    for expected in [
        "pub struct Chain10",
        "Configuration<20> for Chain10",
        "Holonomic<20, 10> for Chain10",
        "pub l10: f64",
    ] {
        assert!(code.contains(expected), "missing `{expected}`");
    }
}
