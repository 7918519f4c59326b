//! Edge cases: division by zero, constants that fold to non-finite values, literals out of
//! range, large and odd powers, deep nesting and long sums on a realistic stack, models with no
//! coordinates or many, and degenerate inputs.

use std::panic::{catch_unwind, AssertUnwindSafe};

use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::quote;

use super::{check, messages};

/// A one-coordinate model with this potential.
fn with_potential(potential: TokenStream) -> TokenStream {
    quote! {
        pub struct Edge {
            coordinates: [x],
            parameters: { k = 1.0 },
            kinetic: 0.5 * dot(x).powi(2),
            potential: #potential,
        }
    }
}

#[test]
fn division_by_a_zero_literal() {
    for potential in [
        quote!(x / 0.0),
        quote!(1.0 / 0.0 * x),
        quote!(x * (1.0 / 0.0)),
        quote!(0.0 / 0.0 + x),
        quote!(x / (k - k)),
        quote!(x / (1.0 - 1.0)),
        quote!((x - x) / (x - x)),
        quote!(k / (x - x)),
    ] {
        messages(with_potential(potential));
    }
    // In a parameter default, division by zero is an error (not a panic).
    let m = messages(quote! {
        pub struct A { coordinates: [x], parameters: { k = 1.0 / 0.0 }, kinetic: dot(x).powi(2) }
    });
    assert!(!m.is_empty());
}

#[test]
fn constant_folding_to_non_finite_values() {
    for potential in [
        quote!(0.0.powf(-1.0) * x),
        quote!(x * powf(0.0, -1.0)),
        quote!(x + (-1.0).sqrt()),
        quote!(x + (0.0).ln()),
        quote!(x + (-1.0).ln()),
        quote!(x * 1e308 * 1e308),
        quote!(x + 1e308 * 10.0),
        quote!(x + (1000.0).exp()),
        quote!(x * (710.0).exp()),
        quote!(x + 1.5707963267948966.tan()),
        quote!(x * 1e-320 / 1e-320),
        quote!(x + 1e308 + 1e308 - 1e308),
        quote!(1e308 * x.powi(2) * 1e308),
        quote!((1e308 * 10.0).sqrt() * x),
        quote!(x.powf(1e308)),
        quote!(x.powf(-1e308)),
        quote!((x * 0.0).powf(-1.0)),
        quote!((x - x).powi(-1)),
        quote!(1e308 * 10.0),
        quote!(0.0 / 0.0),
        quote!(1e308 * 1e308 - 1e308 * 1e308),
    ] {
        messages(with_potential(potential));
    }
    // A non-finite parameter default, and non-finite constants in a mass matrix, a constraint.
    let m = messages(quote! {
        pub struct A { coordinates: [x], parameters: { k = 1e308 * 10.0 }, kinetic: dot(x).powi(2) }
    });
    assert!(!m.is_empty());
    messages(quote! {
        pub struct A { coordinates: [x], kinetic: 1e308 * 1e308 * dot(x).powi(2) }
    });
    messages(quote! {
        pub struct A { coordinates: [x], kinetic: (0.0).ln() * dot(x).powi(2) }
    });
    messages(quote! {
        pub struct A { coordinates: [x, y], kinetic: dot(x).powi(2) + dot(y).powi(2),
                       holonomic: { c: x * 1e308 * 1e308 + y, d: x - (0.0 / 0.0) } }
    });
}

#[test]
fn literals_out_of_range() {
    for potential in [
        quote!(x * 1e400),
        quote!(x * 1e-400),
        quote!(x * 5e-324),
        quote!(x * 18446744073709551616),
        quote!(x * 340282366920938463463374607431768211456),
        quote!(x * 1u8),
        quote!(x * 1.5f32),
        quote!(x * "two"),
        quote!(x * 'c'),
        quote!(x * true),
    ] {
        messages(with_potential(potential));
    }
}

#[test]
fn powers_with_large_and_odd_exponents() {
    for potential in [
        quote!(x.powi(64)),
        quote!(x.powi(-64)),
        quote!(x.powi(65)),
        quote!(x.powi(-65)),
        quote!(x.powi(1000)),
        quote!(x.powi(2147483647)),
        quote!(x.powi(-2147483648)),
        quote!(x.powi(2147483648)),
        quote!(x.powi(99999999999999999999)),
        quote!(x.powi(0)),
        quote!(x.powi(-0)),
        quote!(x.powi(1.5)),
        quote!(x.powi(1e308)),
        quote!(x.powi(k)),
        quote!(x.powi(x)),
        quote!(x.powi(2 * 32)),
        quote!(x.powi(64 * 64)),
        quote!(powi(x, 64).powi(64).powi(64)),
        quote!(x.powi(64).powi(64).powi(64).powi(64)),
        quote!(x.powi()),
        quote!(x.powi(1, 2)),
        quote!(powi(x)),
        quote!(powi()),
        quote!(x.powf(1000.0)),
        quote!(x.powf(-1000.0)),
        quote!(x.powf(x)),
        quote!(2.0.powf(x * 1000.0)),
        quote!(x.powf(0.0)),
        quote!(0.0.powf(0.0) * x),
        quote!(x.sqrt(1.0)),
        quote!(sqrt()),
        quote!(dot()),
        quote!(dot(x, x)),
        quote!(dot(k)),
        quote!(dot(x + 1.0)),
        quote!(dot(dot(x))),
        quote!(x.dot()),
    ] {
        messages(with_potential(potential));
    }
}

/// Runs `f` on a thread with an 8 MiB stack, the main-thread stack of a typical Linux rustc
/// (rustc also grows its stack on demand), so that deep recursion is tested on a realistic
/// stack rather than the test harness's 2 MiB default.
fn on_big_stack(f: impl FnOnce() + Send + 'static) {
    on_stack(8 << 20, f);
}

fn on_stack(bytes: usize, f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(bytes)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("no panic");
}

/// Runs `expand` alone (no checks of its output) on an 8 MiB stack.
fn expand_on_big_stack(input: TokenStream) {
    let input = input.to_string();
    on_big_stack(move || {
        let input: TokenStream = input.parse().expect("lexes");
        let output = catch_unwind(AssertUnwindSafe(|| mechanism_dsl::expand(input)))
            .expect("`expand` does not panic");
        assert!(!output.is_empty());
    });
}

#[test]
fn deeply_nested_parentheses() {
    on_big_stack(|| {
        for depth in [16usize, 64, 200] {
            let mut expr = quote!(x.powi(2));
            for _ in 0..depth {
                expr = quote!((#expr));
            }
            let potential = quote!(k * #expr);
            assert!(
                messages(with_potential(potential)).is_empty(),
                "depth {depth}"
            );

            // Nested function applications and negations.
            let mut expr = quote!(x);
            for i in 0..depth {
                expr = if i % 2 == 0 {
                    quote!(-(#expr))
                } else {
                    quote!((#expr + 1.0))
                };
            }
            messages(with_potential(expr));
        }
        // Nested sin(): derivatives grow with the depth, so keep it moderate.
        let mut expr = quote!(x);
        for _ in 0..24 {
            expr = quote!((#expr).sin());
        }
        messages(with_potential(expr));
        // Unbalanced nesting does not lex; nested empty groups do not parse.
        let mut expr = quote!();
        for _ in 0..200 {
            expr = quote!((#expr));
        }
        messages(with_potential(expr));
    });
}

#[test]
fn very_long_sums() {
    let sum_of_squares = || {
        let terms = (0..1000).map(|i| {
            let c = Literal::f64_unsuffixed(i as f64 + 0.5);
            quote!(#c * x.powi(2))
        });
        with_potential(quote!(#(#terms)+*))
    };
    let alternating = || {
        let terms = (0..1000).map(|i| if i % 2 == 0 { quote!(x) } else { quote!(k) });
        with_potential(quote!(#(#terms)-*))
    };
    // A long product: its derivatives grow quadratically (1000 factors take ~11 s and 53 MB of
    // code in release), so keep it at 100 here.
    let product = || with_potential((1..100).fold(quote!(x), |acc, _| quote!(#acc * x)));

    // `expand` itself fits in a realistic stack.
    expand_on_big_stack(sum_of_squares());
    expand_on_big_stack(alternating());
    expand_on_big_stack(product());

    // The generated code of the first sum nests ~1000 `mul_add` calls; parsing it back with
    // syn in a debug build needs more than 8 MiB of stack, so check the output on 64 MiB.
    on_stack(64 << 20, move || {
        assert!(messages(sum_of_squares()).is_empty());
        assert!(messages(alternating()).is_empty());
        assert!(messages(product()).is_empty());
    });
}

#[test]
fn a_model_with_no_coordinates() {
    for model in [
        quote!(pub struct Empty { coordinates: [], kinetic: 0.0, potential: 1.0 }),
        quote!(pub struct Empty { coordinates: [], parameters: { k = 1.0 }, kinetic: k }),
        quote!(pub struct Empty { coordinates: [] }),
        quote!(pub struct Empty { parameters: { k = 1.0 }, potential: k }),
        quote!(pub struct Empty { coordinates: [], holonomic: { c: 1.0 } }),
        quote!(pub struct Empty { coordinates: [], lagrangian: 0.0 }),
    ] {
        assert!(!messages(model).is_empty());
    }
}

#[test]
fn degenerate_inputs() {
    for input in [
        quote!(),
        quote!(Name),
        quote!(struct),
        quote!(struct Name),
        quote!(pub struct Name),
        quote!(
            pub struct Name {}
        ),
        quote!(pub struct Name {,}),
        quote!(pub struct Name (coordinates: [x])),
        quote!(pub struct Name [coordinates: [x]]),
        quote!(pub struct Name { coordinates }),
        quote!(pub struct Name { coordinates: }),
        quote!(
            pub struct Name {
                coordinates: x,
            }
        ),
        quote!(pub struct Name { coordinates: [1.0] }),
        quote!(pub struct Name { coordinates: [x,,] }),
        quote!(pub struct Name { : [x] }),
        quote!(pub struct Name { coordinates: [x] } trailing tokens),
        quote!(
            pub struct Name {
                coordinates: [x],
            }
            pub struct Other {}
        ),
        quote!(#[derive(Debug)] pub struct Name { coordinates: [x], kinetic: dot(x).powi(2) }),
        quote!(#[doc = 1] struct Name { coordinates: [x], kinetic: dot(x).powi(2) }),
        quote!(pub(in crate::a) struct Name { coordinates: [x], kinetic: dot(x).powi(2) }),
        quote!(struct Name<T> { coordinates: [x], kinetic: dot(x).powi(2) }),
        quote!(enum Name { coordinates: [x] }),
        quote!(
            fn name() {}
        ),
        quote!(pub struct r#struct { coordinates: [x], kinetic: dot(x).powi(2) }),
        quote!(pub struct Name { r#coordinates: [x], kinetic: dot(x).powi(2) }),
        quote!(pub struct Name { coordinates: [r#x], kinetic: dot(r#x).powi(2) }),
        quote!(pub struct Name { coordinates: [x], kinetic: dot(x).powi(2), kinetic: dot(x).powi(2) }),
        quote!(pub struct Name { coordinates: [x], coordinates: [y], kinetic: dot(x).powi(2) }),
        quote!(pub struct Name { coordinates: [t, dot], kinetic: dot(t).powi(2) }),
        quote!(pub struct Name { coordinates: [x], parameters: { x = 1.0 }, kinetic: dot(x).powi(2) }),
        quote!(pub struct Name { coordinates: [x], parameters: { k = x }, kinetic: dot(x).powi(2) }),
        quote!(pub struct Name { coordinates: [x], parameters: { k = k }, kinetic: dot(x).powi(2) }),
        quote!(pub struct Name { coordinates: [x], parameters: { k: 1.0 }, kinetic: dot(x).powi(2) }),
        quote!(pub struct Name { coordinates: [x], holonomic: { c = x }, kinetic: dot(x).powi(2) }),
        quote!(pub struct Name { coordinates: [x], holonomic: { c: x, c: x }, kinetic: dot(x).powi(2) }),
        quote!(pub struct Name { coordinates: [x], holonomic: {}, kinetic: dot(x).powi(2) }),
        quote!(pub struct Name { coordinates: [x], parameters: {}, kinetic: dot(x).powi(2) }),
        quote!(pub struct Name { coordinates: [x], kinetic: dot(x).powi(2), potential: { x } }),
        quote!(pub struct Name { coordinates: [x], kinetic: dot(x).powi(2), potential: if x { 1.0 } else { 2.0 } }),
        quote!(pub struct Name { coordinates: [x], kinetic: dot(x).powi(2), potential: |x| x }),
        quote!(pub struct Name { coordinates: [x], kinetic: dot(x).powi(2), potential: x[0] }),
        quote!(pub struct Name { coordinates: [x], kinetic: dot(x).powi(2), potential: self.x }),
        quote!(pub struct Name { coordinates: [x], kinetic: dot(x).powi(2), potential: f64::sin(x) }),
        quote!(pub struct Name { coordinates: [x], kinetic: dot(x).powi(2), potential: x as f64 }),
        quote!(pub struct Name { coordinates: [x], kinetic: dot(x).powi(2), potential: !x }),
        quote!(pub struct Name { coordinates: [x], kinetic: dot(x).powi(2), potential: t * x }),
        quote!(pub struct Name { coordinates: [x], kinetic: dot(x).powi(2), potential: mechanism!(x) }),
        quote!(pub struct Name { coordinates: [x], kinetic: dot(x).powi(2), holonomic: { c: dot(x) } }),
        quote!(
            pub struct Name {
                coordinates: [x],
                kinetic: dot(x),
            }
        ),
        quote!(pub struct Name { coordinates: [x], kinetic: 0.0 }),
        quote!(pub struct Name { coordinates: [x], kinetic: x.powi(2) }),
        quote!(pub struct Name { coordinates: [x], kinetic: -dot(x).powi(2) }),
        quote!(pub struct Name { coordinates: [x], kinetic: dot(x).powi(4) }),
        quote!(pub struct Name { coordinates: [x], kinetic: dot(x).sin() }),
        quote!(pub struct Name { coordinates: [x], kinetic: dot(x).powi(2) / x }),
        quote!(pub struct Name { coordinates: [x], kinetic: dot(x).powi(2) / dot(x) }),
        quote!(pub struct Name { coordinates: [x], lagrangian: dot(x).powi(2) * dot(x) }),
        quote!(pub struct Name { coordinates: [x], lagrangian: x * dot(x) }),
        quote!(pub struct Name { coordinates: [x], lagrangian: 1.0 / dot(x) }),
        quote!(pub struct Name { coordinates: [x], lagrangian: dot(x).powi(2), kinetic: dot(x).powi(2) }),
    ] {
        check(input);
    }
}

#[test]
fn models_of_many_coordinates_and_names() {
    on_big_stack(|| {
        // 100 coordinates in one quadratic form, with one constraint row each.
        let names: Vec<Ident> = (0..100)
            .map(|i| Ident::new(&format!("q{i}"), Span::call_site()))
            .collect();
        let rows = names.iter().enumerate().map(|(i, q)| {
            let row = Ident::new(&format!("c{i}"), Span::call_site());
            quote!(#row: #q - 1.0)
        });
        let model = quote! {
            pub struct Many {
                coordinates: [#(#names),*],
                kinetic: 0.5 * (#(dot(#names).powi(2))+*),
                potential: #(#names)+*,
                holonomic: { #(#rows),* },
            }
        };
        messages(model);
    });
}
