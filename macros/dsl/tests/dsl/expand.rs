//! Expansion tests without the compiler: tokens in, pretty-printed code or errors out.

use mechanism_dsl::ast::Mechanism;
use mechanism_dsl::expand_model;
use quote::quote;

use crate::models::families;

fn expand(tokens: proc_macro2::TokenStream) -> syn::Result<String> {
    let ast: Mechanism = syn::parse2(tokens)?;
    let expanded = expand_model(&ast)?;
    let file: syn::File = syn::parse2(expanded).expect("the expansion is valid Rust");
    Ok(prettyplease::unparse(&file))
}

fn errors(tokens: proc_macro2::TokenStream) -> Vec<String> {
    match expand(tokens) {
        Ok(code) => panic!("expected errors, got an expansion:\n{code}"),
        Err(error) => error.into_iter().map(|e| e.to_string()).collect(),
    }
}

#[test]
fn double_pendulum_expands_to_every_trait_with_literal_sizes() {
    let code = expand(quote! {
        /// Planar double pendulum.
        pub struct DoublePendulum {
            coordinates: [x1, y1, x2, y2],
            parameters: { m1 = 1.0, m2 = 1.0, l1 = 1.0, l2 = 1.4142135623730951, g = 1.0 },
            kinetic: 0.5*m1*(dot(x1).powi(2) + dot(y1).powi(2)) + 0.5*m2*(dot(x2).powi(2) + dot(y2).powi(2)),
            potential: m1*g*y1 + m2*g*y2,
            holonomic: { rod1: x1.powi(2) + y1.powi(2) - l1.powi(2),
                         rod2: (x2 - x1).powi(2) + (y2 - y1).powi(2) - l2.powi(2) },
        }
    })
    .expect("the double pendulum is valid");
    for expected in [
        "pub struct DoublePendulum",
        "pub m1: f64",
        "impl ::mechanism::runtime::Configuration<4> for DoublePendulum",
        "const COORDINATES: [&'static str; 4] = [\"x1\", \"y1\", \"x2\", \"y2\"]",
        "impl ::mechanism::runtime::Inertia<4> for DoublePendulum",
        "const CONSTANT_MASS: bool = true",
        "impl ::mechanism::runtime::PotentialHessian<4> for DoublePendulum",
        "impl ::mechanism::runtime::PotentialThirdDerivative<4> for DoublePendulum",
        "impl ::mechanism::runtime::Holonomic<4, 2> for DoublePendulum",
        "const CONSTRAINTS: [&'static str; 2] = [\"rod1\", \"rod2\"]",
        "impl ::mechanism::runtime::PenalizedPotential<4> for DoublePendulum",
    ] {
        assert!(code.contains(expected), "missing `{expected}` in:\n{code}");
    }
    // The potential is linear: its Hessian is zero, written as one fill and no entries.
    let hessian = code
        .split("fn potential_hessian")
        .nth(1)
        .and_then(|rest| rest.split("fn potential_gradient_hessian").next())
        .expect("potential_hessian is generated");
    assert!(hessian.contains("hess.fill(0.0)"), "{hessian}");
    assert!(
        !hessian.contains("hess[("),
        "a zero Hessian writes no entry: {hessian}"
    );
}

#[test]
fn lagrangian_gives_the_same_mass_matrix_as_kinetic_energy() {
    let from_lagrangian = expand(quote! {
        pub struct Spring {
            coordinates: [x],
            parameters: { m = 2.0, k = 3.0 },
            lagrangian: 0.5 * m * dot(x).powi(2) - 0.5 * k * x.powi(2),
        }
    })
    .expect("valid");
    assert!(from_lagrangian.contains("const CONSTANT_MASS: bool = true"));
    assert!(
        from_lagrangian.contains("out[(0, 0)] = self.m"),
        "{from_lagrangian}"
    );
}

#[test]
fn every_unknown_name_is_reported_in_one_build() {
    let messages = errors(quote! {
        pub struct Spring {
            coordinates: [x],
            parameters: { m = 1.0 },
            kinetic: 0.5 * mass * dot(x).powi(2),
            potential: 0.5 * k * x.powi(2),
        }
    });
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(messages[0].contains("cannot find `mass`"), "{messages:?}");
    assert!(messages[1].contains("cannot find `k`"), "{messages:?}");
}

#[test]
fn caret_is_rejected_with_a_hint() {
    let messages = errors(quote! {
        pub struct Spring {
            coordinates: [x],
            kinetic: 0.5 * dot(x).powi(2),
            potential: x ^ 2,
        }
    });
    assert_eq!(messages.len(), 1);
    assert!(messages[0].contains("x.powi(2)"), "{messages:?}");
}

#[test]
fn ill_formed_models_are_rejected() {
    let cases = [
        (
            quote! { pub struct A { coordinates: [x], potential: x } },
            "no kinetic energy",
        ),
        (
            quote! { pub struct A { coordinates: [x], kinetic: dot(x).powi(3) } },
            "not quadratic",
        ),
        (
            quote! { pub struct A { coordinates: [x], kinetic: dot(x).powi(2) + dot(x) } },
            "not a quadratic form",
        ),
        (
            quote! { pub struct A { coordinates: [x], kinetic: dot(x).powi(2), potential: dot(x) } },
            "depends on velocities",
        ),
        (
            quote! { pub struct A { coordinates: [x, x], kinetic: dot(x).powi(2) } },
            "declared twice",
        ),
        (
            quote! { pub struct A { coordinates: [x], parameters: { l = 1.0 }, kinetic: dot(x).powi(2), holonomic: { c: l - 1.0 } } },
            "does not depend on the coordinates",
        ),
        (
            quote! { pub struct A { coordinates: [x], kinetic: dot(x).powi(2), springs: 1.0 } },
            "unknown section `springs`",
        ),
        (
            quote! { pub struct A { coordinates: [x], parameters: { k = 1.0 / 0.0 }, kinetic: dot(x).powi(2) } },
            "division by zero",
        ),
        (
            quote! { pub struct A { coordinates: [x], parameters: { k = (0.0).ln() }, kinetic: dot(x).powi(2) } },
            "not a finite number",
        ),
    ];
    for (tokens, expected) in cases {
        let messages = errors(tokens.clone());
        assert!(
            messages.iter().any(|m| m.contains(expected)),
            "expected an error containing `{expected}` for `{tokens}`, got {messages:?}"
        );
    }
}

#[test]
fn name_errors_and_expression_errors_come_in_one_build_without_cascade() {
    let messages = errors(quote! {
        pub struct Twice {
            coordinates: [x, x],
            kinetic: 0.5 * dot(x).powi(2),
            potential: k * x,
            holonomic: { c: x ^ 2 },
        }
    });
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert!(messages[0].contains("declared twice"), "{messages:?}");
    assert!(messages[1].contains("cannot find `k`"), "{messages:?}");
    assert!(messages[2].contains("XOR"), "{messages:?}");
}

#[test]
fn integrators_decide_what_is_generated() {
    let code = expand(quote! {
        pub struct Cart {
            coordinates: [x],
            kinetic: 0.5 * dot(x).powi(2),
            potential: 0.5 * x.powi(2),
            integrators: [spook],
        }
    })
    .expect("valid");
    assert!(code.contains("impl ::mechanism::runtime::Potential<1>"));
    assert!(
        !code.contains("PotentialHessian"),
        "spook needs no Hessian:\n{code}"
    );
    assert!(!code.contains("PotentialThirdDerivative"), "{code}");
    let code = expand(quote! {
        pub struct Cart {
            coordinates: [x],
            kinetic: 0.5 * dot(x).powi(2),
            potential: 0.5 * x.powi(2),
            integrators: [zs],
        }
    })
    .expect("valid");
    assert!(code.contains("PotentialThirdDerivative<1>"), "{code}");
}

#[test]
fn family_expansions_do_not_depend_on_the_sizes() {
    // N is a run-time value: the default sizes appear once, in `new`'s documentation; every
    // other token is the same for 10 and 10 000.
    let small = families::family_models(10, 10).map(|m| expand(m).unwrap());
    let large = families::family_models(10_000, 10_000).map(|m| expand(m).unwrap());
    for (small, large) in small.iter().zip(&large) {
        assert_eq!(small.matches("(defaults: 10)").count(), 1);
        assert_eq!(&small.replace("(defaults: 10)", "(defaults: 10000)"), large);
        let loops = small.matches("for ").count();
        assert!(loops >= 4, "the step code loops over instances");
    }
}

#[test]
fn empty_lists_of_a_model_with_families_are_reported_as_empty() {
    let messages = errors(quote! {
        pub struct Empty {
            sizes: { N = 4 },
            coordinates: [],
            parameters: { k = 1.0 },
            kinetic: 0.5 * k,
        }
    });
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].contains("`coordinates` lists no coordinate")
            && messages[0].contains("[x[N], y[N]]"),
        "{messages:?}"
    );
    let messages = errors(quote! {
        pub struct Unstepped {
            sizes: { N = 4 },
            coordinates: [x[N]],
            kinetic: sum(0..N, |i| 0.5 * dot(x[i]).powi(2)),
            potential: sum(0..N, |i| 0.5 * x[i].powi(2)),
            integrators: [],
        }
    });
    assert_eq!(messages.len(), 1, "{messages:?}");
    assert!(
        messages[0].contains("`integrators: []` lists no integrator"),
        "{messages:?}"
    );
}

/// The `ConstantMass` marker, which the integrators that freeze `M` are bounded on, is emitted
/// exactly when the macro's own integrator check sees a constant mass: a polar model has
/// neither the marker nor `zs`, a Cartesian one has both.
#[test]
fn the_constant_mass_marker_agrees_with_the_integrator_check() {
    let polar = |integrators: proc_macro2::TokenStream| {
        expand(quote! {
            pub struct Polar {
                coordinates: [r, phi],
                kinetic: 0.5 * (dot(r).powi(2) + r.powi(2) * dot(phi).powi(2)),
                potential: 0.5 * (r - 1.0).powi(2),
                integrators: [#integrators],
            }
        })
    };
    let varying = polar(quote!(livens)).expect("livens steps a varying mass");
    assert!(varying.contains("const CONSTANT_MASS: bool = false"));
    assert!(!varying.contains("runtime::ConstantMass"), "{varying}");
    assert!(
        polar(quote!(zs)).is_err(),
        "the macro refuses zs for a varying mass"
    );

    let cartesian = expand(quote! {
        pub struct Planar {
            coordinates: [x, y],
            kinetic: 0.5 * (dot(x).powi(2) + dot(y).powi(2)),
            potential: 0.5 * (x.powi(2) + y.powi(2)),
            integrators: [zs, livens],
        }
    })
    .expect("valid");
    assert!(
        cartesian.contains("impl ::mechanism::runtime::ConstantMass<2> for Planar {}"),
        "{cartesian}"
    );
}
