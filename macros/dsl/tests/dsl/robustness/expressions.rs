//! Well-formed models whose expressions are random: odd constants, every function, division,
//! huge powers, reaching derivation, simplification and code generation.

use proc_macro2::{Ident, Literal, Span, TokenStream};
use proptest::prelude::*;
use quote::quote;

use super::token_soup::LITERALS;
use super::{cases, check};

/// A random expression in the DSL's own language (and a bit beyond), as tokens: this reaches
/// derivation, simplification and code generation with odd constants and functions.
fn expression() -> impl Strategy<Value = TokenStream> {
    // Mostly valid atoms, so that a fair share of models reaches the later stages.
    let atom = prop_oneof![
        8 => prop::sample::select(&["x", "y", "k", "l"][..])
            .prop_map(|n| { let n = Ident::new(n, Span::call_site()); quote!(#n) }),
        1 => prop::sample::select(&["t", "nope", "dot"][..])
            .prop_map(|n| { let n = Ident::new(n, Span::call_site()); quote!(#n) }),
        1 => prop::sample::select(&["x", "y", "k"][..])
            .prop_map(|n| { let n = Ident::new(n, Span::call_site()); quote!(dot(#n)) }),
        1 => prop::sample::select(LITERALS).prop_map(|l| l.parse::<TokenStream>().unwrap()),
        6 => prop_oneof![Just(0.0), Just(1.0), Just(2.0), Just(1e308), Just(1e-320), 0.0..10.0f64]
            .prop_map(|v| { let v = Literal::f64_unsuffixed(v); quote!(#v) }),
    ];
    atom.prop_recursive(6, 64, 3, |inner| {
        let method = prop::sample::select(
            &[
                "sqrt", "sin", "cos", "tan", "exp", "ln", "sqrt", "sin", "cos", "tan", "exp", "ln",
                "abs", "powi",
            ][..],
        );
        prop_oneof![
            (
                inner.clone(),
                prop::sample::select(&["+", "-", "*", "/", "+", "-", "*", "/", "^", "%"][..]),
                inner.clone()
            )
                .prop_map(|(a, op, b)| {
                    let op: TokenStream = op.parse().unwrap();
                    quote!((#a) #op (#b))
                }),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| quote!(#a * #b)),
            inner.clone().prop_map(|a| quote!(-(#a))),
            inner.clone().prop_map(|a| quote!((#a))),
            (inner.clone(), method.clone()).prop_map(|(a, m)| {
                let m = Ident::new(m, Span::call_site());
                quote!((#a).#m())
            }),
            (inner.clone(), method.clone()).prop_map(|(a, m)| {
                let m = Ident::new(m, Span::call_site());
                quote!(#m(#a))
            }),
            (
                inner.clone(),
                prop::sample::select(&["powi", "powf"][..]),
                prop_oneof![
                    (-70i32..70).prop_map(|n| {
                        let n = Literal::i32_unsuffixed(n);
                        quote!(#n)
                    }),
                    Just(quote!(-3)),
                    Just(quote!(0.5)),
                    Just(quote!(1e308)),
                    Just(quote!(x)),
                    Just(quote!(2147483648)),
                    Just(quote!(-2147483649)),
                ]
            )
                .prop_map(|(a, m, n)| {
                    let m = Ident::new(m, Span::call_site());
                    quote!((#a).#m(#n))
                }),
            (inner.clone(), inner).prop_map(|(a, b)| quote!(powf(#a, #b))),
        ]
    })
}

/// A model whose sections are well formed but whose expressions are random.
fn random_expression_model() -> impl Strategy<Value = TokenStream> {
    (
        expression(),
        expression(),
        expression(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(kinetic_factor, potential, constraint, lagrangian, with_constraint)| {
                let energy = if lagrangian {
                    quote!(lagrangian: 0.5 * (#kinetic_factor) * dot(x).powi(2) - (#potential),)
                } else {
                    quote! {
                        kinetic: 0.5 * (dot(x).powi(2) + dot(y).powi(2)) * (#kinetic_factor),
                        potential: #potential,
                    }
                };
                let holonomic = if with_constraint {
                    quote!(holonomic: { c: #constraint },)
                } else {
                    quote!()
                };
                quote! {
                    pub struct Random {
                        coordinates: [x, y],
                        parameters: { k = 1.0, l = 2.0 },
                        #energy
                        #holonomic
                    }
                }
            },
        )
}

proptest! {
    #![proptest_config(cases(96))]

    /// Well-formed models with random expressions: odd constants, every function, division,
    /// huge powers. These reach derivation, simplification and generation.
    #[test]
    fn random_expressions_never_panic(model in random_expression_model()) {
        check(model);
    }
}
