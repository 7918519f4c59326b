//! Robustness of the expansion function: `mechanism_dsl::expand` never panics. Every input,
//! random token soup or a mutated valid model, yields either a valid expansion or spanned
//! `compile_error!`s (plus a stub type), and in both cases the output parses as a Rust file.
//!
//! The tests do not depend on the exact set of sections the language knows: they only require
//! "no panic" and "the output is Rust", and valid models use only the original sections.

use std::panic::{catch_unwind, AssertUnwindSafe};

use mechanism_dsl::ast::Mechanism;
use proc_macro2::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};
use proptest::prelude::*;
use proptest::sample::Index;
use quote::quote;

use crate::models::{chain, families};

// ---------------------------------------------------------------------------------------------
// The property checked on every input.
// ---------------------------------------------------------------------------------------------

/// What an expansion turned out to be.
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    /// A model: no `compile_error!` in the output.
    Expansion,
    /// Spanned errors (and the stub type).
    Errors,
}

/// Runs `expand` on `input` and checks the robustness contract: no panic, non-empty output,
/// output parses as a Rust file, and is either an expansion or contains `compile_error`.
fn check(input: TokenStream) -> Outcome {
    let shown = input.to_string();
    let result = catch_unwind(AssertUnwindSafe(|| mechanism_dsl::expand(input)));
    let output = match result {
        Ok(output) => output,
        Err(payload) => {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "<non-string panic payload>".into());
            panic!("`expand` panicked with {message:?} on input:\n{shown}");
        }
    };
    assert!(
        !output.is_empty(),
        "`expand` returned no tokens for:\n{shown}"
    );
    let text = output.to_string();
    if let Err(error) = syn::parse2::<syn::File>(output) {
        panic!("the output of `expand` is not a Rust file ({error}) for input:\n{shown}\noutput:\n{text}");
    }
    if text.contains("compile_error") {
        Outcome::Errors
    } else {
        Outcome::Expansion
    }
}

/// Expands a model that must be valid, returning the pretty-printed code.
fn expand_valid(tokens: TokenStream) -> String {
    let ast: Mechanism = syn::parse2(tokens.clone()).expect("the model parses");
    let expanded = mechanism_dsl::expand_model(&ast)
        .unwrap_or_else(|e| panic!("the model is valid, got errors {:?}", error_messages(&e)));
    let file: syn::File = syn::parse2(expanded).expect("the expansion is valid Rust");
    assert_eq!(check(tokens), Outcome::Expansion);
    prettyplease::unparse(&file)
}

/// Expands a model through `expand_model`, returning its error messages (empty if valid),
/// after checking the robustness contract of `expand` on it.
fn messages(tokens: TokenStream) -> Vec<String> {
    let outcome = check(tokens.clone());
    let result = syn::parse2::<Mechanism>(tokens).and_then(|ast| mechanism_dsl::expand_model(&ast));
    match result {
        Ok(_) => {
            assert_eq!(outcome, Outcome::Expansion);
            Vec::new()
        }
        Err(error) => {
            assert_eq!(outcome, Outcome::Errors);
            error_messages(&error)
        }
    }
}

fn error_messages(error: &syn::Error) -> Vec<String> {
    error.clone().into_iter().map(|e| e.to_string()).collect()
}

// ---------------------------------------------------------------------------------------------
// Valid models to mutate.
// ---------------------------------------------------------------------------------------------

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

fn valid_models() -> Vec<TokenStream> {
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
fn mutation_seeds() -> Vec<TokenStream> {
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
// Random token streams.
// ---------------------------------------------------------------------------------------------

/// Identifiers that matter to the DSL, names models use, Rust keywords and strangers.
/// Ranges of family sums, valid and not.
const RANGES: &[&str] = &[
    "0..N", "1..N", "0..N - 1", "N..0", "0..0", "-3..N", "0..M", "0..N + 1", "0..", "..N",
    "0..N / 0", "0..i", "0..K", "0.5..N",
];

/// Member indices, valid and not.
const MEMBER_INDICES: &[&str] = &[
    "i",
    "i + 1",
    "i - 1",
    "(i + 1) % N",
    "N - 1 - i",
    "i / 0",
    "i % 0",
    "j",
    "N",
    "i * 1000000000000",
    "i as usize",
    "i + j",
    "k",
    "2 * i",
    "-i",
    "if i > 0 { i - 1 } else { 0 }",
];

/// Row family headers, valid and not.
const ROW_HEADERS: &[&str] = &[
    "i in 0..N",
    "i in 1..N if i % 2 == 0",
    "i in 0..N, p = i + 1",
    "i in 0..N, p = i / 0",
    "i in N..0",
    "i in 0..N if i",
    "i in 0..N, i = 2",
    "j in 0..N",
    "i in 0..M",
    "i in 0..N, p = if i > 0 { i - 1 } else { N - 1 }",
    "i",
    "i in",
    "in 0..N",
];

const IDENTS: &[&str] = &[
    "coordinates",
    "parameters",
    "kinetic",
    "potential",
    "lagrangian",
    "holonomic",
    "nonholonomic",
    "dissipation",
    "forces",
    "integrators",
    "options",
    "springs",
    "x",
    "y",
    "x1",
    "y1",
    "q",
    "m",
    "g",
    "l",
    "k",
    "t",
    "dot",
    "self",
    "Self",
    "crate",
    "super",
    "sqrt",
    "sin",
    "cos",
    "tan",
    "exp",
    "ln",
    "powi",
    "powf",
    "pow",
    "log",
    "abs",
    "struct",
    "pub",
    "fn",
    "let",
    "mut",
    "in",
    "as",
    "true",
    "false",
    "doc",
    "_",
    "f64",
    "NAN",
    "Unknown",
    "mass",
    "omega",
    "r#try",
];

/// Punctuation, as (character, spacing); joint `:` `:` gives paths, `=` `>` arrows, ….
const PUNCTS: &[char] = &[
    ':', ',', '=', '+', '-', '*', '/', '^', '.', '#', '!', ';', '<', '>', '&', '|', '?', '@', '%',
    '~', '$',
];

/// Literal spellings, parsed into tokens: numbers of every shape (huge, tiny, zero, integer
/// overflowing `u64`, suffixed), strings, chars, bytes.
const LITERALS: &[&str] = &[
    "0",
    "1",
    "2",
    "3",
    "-1",
    "64",
    "65",
    "-65",
    "2147483648",
    "18446744073709551616",
    "0.0",
    "-0.0",
    "0.5",
    "1.0",
    "1e308",
    "1.7976931348623157e308",
    "1e309",
    "1e400",
    "1e-320",
    "5e-324",
    "1e-400",
    "3.14159",
    "1_000.5",
    "0x10",
    "0b101",
    "1u8",
    "1.0f32",
    "2f64",
    "1e10i32",
    "\"s\"",
    "\"\"",
    "'c'",
    "b'x'",
    "b\"bytes\"",
    "r\"raw\"",
];

#[derive(Clone, Debug)]
enum Tok {
    Ident(&'static str),
    Punct(char, bool),
    Literal(&'static str),
    Float(f64),
    Group(Delimiter, Vec<Tok>),
}

fn to_tree(tok: &Tok) -> TokenTree {
    match tok {
        Tok::Ident(name) => match name.strip_prefix("r#") {
            Some(raw) => Ident::new_raw(raw, Span::call_site()).into(),
            None => Ident::new(name, Span::call_site()).into(),
        },
        Tok::Punct(c, joint) => {
            let spacing = if *joint {
                Spacing::Joint
            } else {
                Spacing::Alone
            };
            Punct::new(*c, spacing).into()
        }
        Tok::Literal(text) => {
            // "-1" is two tokens; everything else is one literal.
            let stream: TokenStream = text.parse().expect("literal table entries lex");
            let trees: Vec<TokenTree> = stream.into_iter().collect();
            if trees.len() == 1 {
                trees.into_iter().next().unwrap()
            } else {
                Group::new(Delimiter::None, trees.into_iter().collect()).into()
            }
        }
        Tok::Float(v) => Literal::f64_unsuffixed(*v).into(),
        Tok::Group(delimiter, inner) => Group::new(*delimiter, to_stream(inner)).into(),
    }
}

fn to_stream(toks: &[Tok]) -> TokenStream {
    toks.iter().map(to_tree).collect()
}

fn leaf() -> impl Strategy<Value = Tok> {
    prop_oneof![
        4 => prop::sample::select(IDENTS).prop_map(Tok::Ident),
        4 => (prop::sample::select(PUNCTS), any::<bool>()).prop_map(|(c, j)| Tok::Punct(c, j)),
        2 => prop::sample::select(LITERALS).prop_map(Tok::Literal),
        1 => prop_oneof![
            Just(0.0),
            Just(f64::MAX),
            Just(f64::MIN_POSITIVE),
            Just(5e-324),
            (0.0..1e6f64),
            any::<f64>().prop_filter("finite", |v| v.is_finite() && *v >= 0.0),
        ]
        .prop_map(Tok::Float),
    ]
}

fn delimiter() -> impl Strategy<Value = Delimiter> {
    prop_oneof![
        Just(Delimiter::Parenthesis),
        Just(Delimiter::Bracket),
        Just(Delimiter::Brace),
        Just(Delimiter::None),
    ]
}

/// Random token sequences with groups nested up to a few levels.
fn tokens(max_len: usize) -> impl Strategy<Value = Vec<Tok>> {
    let tree = leaf().prop_recursive(4, 48, 8, |inner| {
        (delimiter(), prop::collection::vec(inner, 0..8)).prop_map(|(d, v)| Tok::Group(d, v))
    });
    prop::collection::vec(tree, 0..max_len)
}

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

fn cases(n: u32) -> ProptestConfig {
    ProptestConfig {
        cases: n,
        // A panic is the finding; shrinking it would only repeat slow expansions.
        max_shrink_iters: 64,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(cases(256))]

    /// Any token soup at all.
    #[test]
    fn random_token_streams_never_panic(toks in tokens(24)) {
        check(to_stream(&toks));
    }

    /// Token soup after a struct header, so that parsing reaches the sections.
    #[test]
    fn random_struct_bodies_never_panic(toks in tokens(24)) {
        let body = to_stream(&toks);
        check(quote!(pub struct Soup { #body }));
    }

    /// `keyword: soup,` sections after valid coordinates, so that validation runs on them.
    #[test]
    fn random_sections_never_panic(
        sections in prop::collection::vec(
            (prop::sample::select(IDENTS), tokens(8)), 0..5),
    ) {
        let sections = sections.into_iter().map(|(keyword, toks)| {
            let keyword = Ident::new(keyword.trim_start_matches("r#"), Span::call_site());
            let value = to_stream(&toks);
            quote!(#keyword: #value,)
        });
        check(quote! {
            pub struct Soup {
                coordinates: [x, y],
                #(#sections)*
            }
        });
    }
}

proptest! {
    #![proptest_config(cases(192))]

    /// Models with families whose sections, ranges, member indices, pair sums and row family
    /// headers are token soup: the family pipeline's resolution, index evaluation at the
    /// default sizes and generation never panic.
    #[test]
    fn random_family_syntax_never_panics(
        sections in prop::collection::vec((prop::sample::select(IDENTS), tokens(8)), 0..3),
        range in prop::sample::select(RANGES),
        index in prop::sample::select(MEMBER_INDICES),
        header in prop::sample::select(ROW_HEADERS),
        soup in tokens(5),
        which in 0..4usize,
        pair in any::<bool>(),
    ) {
        let sections = sections.into_iter().map(|(keyword, toks)| {
            let keyword = Ident::new(keyword.trim_start_matches("r#"), Span::call_site());
            let value = to_stream(&toks);
            quote!(#keyword: #value,)
        });
        let parse = |text: &str| text.parse::<TokenStream>().expect("a token stream");
        let (mut range, mut index, mut header) = (parse(range), parse(index), parse(header));
        // One of the three, or none, is token soup instead.
        match which {
            0 => range = to_stream(&soup),
            1 => index = to_stream(&soup),
            2 => header = to_stream(&soup),
            _ => {}
        }
        let closure = if pair { quote!(|i, j|) } else { quote!(|i|) };
        check(quote! {
            pub struct Soup {
                sizes: { N = 4, M = 2 * N },
                coordinates: [x[N], y[N], z[M]],
                parameters: { m[N] = 1.0, k = 2.0 },
                kinetic: sum(0..N, |i| 0.5 * m[i] * (dot(x[i]).powi(2) + dot(y[i]).powi(2)))
                    + sum(0..M, |i| 0.5 * dot(z[i]).powi(2)),
                potential: sum(#range, #closure k * x[#index].powi(2)),
                holonomic: { rod[#header]: x[i] - y[i], },
                #(#sections)*
            }
        });
    }
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

// ---------------------------------------------------------------------------------------------
// Mutations of valid models.
// ---------------------------------------------------------------------------------------------

/// A model flattened to a sequence of leaf tokens and explicit group boundaries, so that a
/// mutation can also delete or duplicate one bracket of a pair.
#[derive(Clone, Debug)]
enum Flat {
    Leaf(TokenTree),
    Open(Delimiter),
    Close,
}

fn flatten(stream: TokenStream, out: &mut Vec<Flat>) {
    for tree in stream {
        match tree {
            TokenTree::Group(group) => {
                out.push(Flat::Open(group.delimiter()));
                flatten(group.stream(), out);
                out.push(Flat::Close);
            }
            leaf => out.push(Flat::Leaf(leaf)),
        }
    }
}

/// Rebuilds a token stream; an unmatched close ends the innermost open group (whatever its
/// delimiter), and groups still open at the end are closed there.
fn rebuild(flat: &[Flat]) -> TokenStream {
    let mut stack: Vec<(Delimiter, Vec<TokenTree>)> = vec![(Delimiter::None, Vec::new())];
    for item in flat {
        match item {
            Flat::Leaf(tree) => stack.last_mut().unwrap().1.push(tree.clone()),
            Flat::Open(delimiter) => stack.push((*delimiter, Vec::new())),
            Flat::Close => {
                if stack.len() > 1 {
                    let (delimiter, trees) = stack.pop().unwrap();
                    let group = Group::new(delimiter, trees.into_iter().collect());
                    stack.last_mut().unwrap().1.push(group.into());
                }
            }
        }
    }
    while stack.len() > 1 {
        let (delimiter, trees) = stack.pop().unwrap();
        let group = Group::new(delimiter, trees.into_iter().collect());
        stack.last_mut().unwrap().1.push(group.into());
    }
    stack.pop().unwrap().1.into_iter().collect()
}

/// Replacement identifiers: names of the models, function names, section keywords, unknowns.
const IDENT_POOL: &[&str] = &[
    "x",
    "y",
    "x1",
    "y2",
    "r",
    "th",
    "m",
    "m1",
    "g",
    "l1",
    "k",
    "a",
    "t",
    "dot",
    "sqrt",
    "sin",
    "cos",
    "tan",
    "exp",
    "ln",
    "powi",
    "powf",
    "pow",
    "log10",
    "coordinates",
    "parameters",
    "kinetic",
    "potential",
    "lagrangian",
    "holonomic",
    "nonholonomic",
    "forces",
    "struct",
    "pub",
    "self",
    "unknown",
    "Chain3",
    "doc",
];

/// Replacement literals.
const LITERAL_POOL: &[&str] = &[
    "0",
    "0.0",
    "1",
    "1e308",
    "-1",
    "1e-320",
    "1e400",
    "-0.0",
    "2",
    "64",
    "65",
    "-65",
    "2147483648",
    "0.5",
    "\"str\"",
    "1u8",
];

/// Replacement operators.
const OPERATOR_POOL: &[char] = &['+', '-', '*', '/', '^', '%', ',', ':', '=', '.', ';', '!'];

#[derive(Clone, Debug)]
enum Mutation {
    Delete(Index),
    Duplicate(Index),
    Swap(Index, Index),
    ReplaceIdent(Index, &'static str),
    ReplaceLiteral(Index, &'static str),
    ReplaceOperator(Index, char),
    WrapParens(Index, usize),
    Insert(Index, Tok),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        1 => any::<Index>().prop_map(Mutation::Delete),
        1 => any::<Index>().prop_map(Mutation::Duplicate),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::Swap(a, b)),
        3 => (any::<Index>(), prop::sample::select(IDENT_POOL))
            .prop_map(|(i, n)| Mutation::ReplaceIdent(i, n)),
        3 => (any::<Index>(), prop::sample::select(LITERAL_POOL))
            .prop_map(|(i, l)| Mutation::ReplaceLiteral(i, l)),
        2 => (any::<Index>(), prop::sample::select(OPERATOR_POOL))
            .prop_map(|(i, c)| Mutation::ReplaceOperator(i, c)),
        1 => (any::<Index>(), 0usize..12).prop_map(|(i, len)| Mutation::WrapParens(i, len)),
        1 => (any::<Index>(), leaf()).prop_map(|(i, t)| Mutation::Insert(i, t)),
    ]
}

/// Positions of the items of `flat` that satisfy `keep`.
fn positions(flat: &[Flat], keep: impl Fn(&Flat) -> bool) -> Vec<usize> {
    flat.iter()
        .enumerate()
        .filter(|(_, f)| keep(f))
        .map(|(i, _)| i)
        .collect()
}

fn literal_tokens(text: &str) -> Vec<Flat> {
    let stream: TokenStream = text.parse().expect("pool literals lex");
    let mut out = Vec::new();
    flatten(stream, &mut out);
    out
}

fn apply(flat: &mut Vec<Flat>, mutation: &Mutation) {
    if flat.is_empty() {
        return;
    }
    match mutation {
        Mutation::Delete(i) => {
            flat.remove(i.index(flat.len()));
        }
        Mutation::Duplicate(i) => {
            let i = i.index(flat.len());
            flat.insert(i, flat[i].clone());
        }
        Mutation::Swap(a, b) => {
            let (a, b) = (a.index(flat.len()), b.index(flat.len()));
            flat.swap(a, b);
        }
        Mutation::ReplaceIdent(i, name) => {
            let at = positions(flat, |f| matches!(f, Flat::Leaf(TokenTree::Ident(_))));
            if !at.is_empty() {
                let ident = Ident::new(name, Span::call_site());
                flat[at[i.index(at.len())]] = Flat::Leaf(ident.into());
            }
        }
        Mutation::ReplaceLiteral(i, text) => {
            let at = positions(flat, |f| matches!(f, Flat::Leaf(TokenTree::Literal(_))));
            if !at.is_empty() {
                let at = at[i.index(at.len())];
                flat.splice(at..=at, literal_tokens(text));
            }
        }
        Mutation::ReplaceOperator(i, c) => {
            let at = positions(flat, |f| matches!(f, Flat::Leaf(TokenTree::Punct(_))));
            if !at.is_empty() {
                flat[at[i.index(at.len())]] = Flat::Leaf(Punct::new(*c, Spacing::Alone).into());
            }
        }
        Mutation::WrapParens(i, len) => {
            let start = i.index(flat.len());
            let end = (start + len).min(flat.len());
            flat.insert(end, Flat::Close);
            flat.insert(start, Flat::Open(Delimiter::Parenthesis));
        }
        Mutation::Insert(i, tok) => {
            let at = i.index(flat.len() + 1);
            let mut inserted = Vec::new();
            flatten(std::iter::once(to_tree(tok)).collect(), &mut inserted);
            flat.splice(at..at, inserted);
        }
    }
}

fn mutated_model() -> impl Strategy<Value = TokenStream> {
    let models = mutation_seeds();
    (0..models.len(), prop::collection::vec(mutation(), 1..5)).prop_map(move |(m, mutations)| {
        let mut flat = Vec::new();
        flatten(models[m].clone(), &mut flat);
        for mutation in &mutations {
            apply(&mut flat, mutation);
        }
        rebuild(&flat)
    })
}

proptest! {
    #![proptest_config(cases(192))]

    /// Random mutations of valid models: an expansion or spanned errors, never a panic.
    #[test]
    fn mutated_models_never_panic(model in mutated_model()) {
        check(model);
    }
}

#[test]
fn flatten_and_rebuild_round_trip() {
    for model in valid_models() {
        let mut flat = Vec::new();
        flatten(model.clone(), &mut flat);
        assert_eq!(rebuild(&flat).to_string(), model.to_string());
    }
}

// ---------------------------------------------------------------------------------------------
// Edge cases.
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Mutations of valid models into each class of ill-posed model (issue 9): every one is an
// error with the class's message, never a panic and never an expansion.
// ---------------------------------------------------------------------------------------------

/// A model split into its header (`/// docs pub struct Name`) and its sections, as tokens.
struct Split {
    header: TokenStream,
    sections: Vec<(Ident, TokenStream)>,
}

impl Split {
    fn new(model: TokenStream) -> Split {
        let mut header = Vec::new();
        let mut body = TokenStream::new();
        for tree in model {
            match tree {
                TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => body = g.stream(),
                other => header.push(other),
            }
        }
        let mut sections = Vec::new();
        let mut current: Vec<TokenTree> = Vec::new();
        let mut push = |current: &mut Vec<TokenTree>| {
            // Attributes (doc comments) before a row's name are dropped: `#` `[…]`.
            while matches!(current.first(), Some(TokenTree::Punct(p)) if p.as_char() == '#') {
                current.drain(..2.min(current.len()));
            }
            if let Some(TokenTree::Ident(keyword)) = current.first().cloned() {
                // `keyword : value…`
                let value: TokenStream = current.drain(..).skip(2).collect();
                sections.push((keyword, value));
            }
            current.clear();
        };
        for tree in body {
            match &tree {
                TokenTree::Punct(p) if p.as_char() == ',' => push(&mut current),
                _ => current.push(tree),
            }
        }
        push(&mut current);
        Split {
            header: header.into_iter().collect(),
            sections,
        }
    }

    fn get(&self, keyword: &str) -> Option<&TokenStream> {
        self.sections
            .iter()
            .find(|(k, _)| k == keyword)
            .map(|(_, v)| v)
    }

    fn set(&mut self, keyword: &str, value: TokenStream) {
        match self.sections.iter_mut().find(|(k, _)| k == keyword) {
            Some((_, v)) => *v = value,
            None => self
                .sections
                .push((Ident::new(keyword, Span::call_site()), value)),
        }
    }

    fn remove(&mut self, keyword: &str) {
        self.sections.retain(|(k, _)| k != keyword);
    }

    /// The energy section to append a term to: the potential, else the Lagrangian, else the
    /// kinetic energy.
    fn energy(&self) -> &'static str {
        ["potential", "lagrangian", "kinetic"]
            .into_iter()
            .find(|k| self.get(k).is_some())
            .unwrap_or("kinetic")
    }

    fn coordinates(&self) -> Vec<Ident> {
        self.get("coordinates")
            .and_then(|v| v.clone().into_iter().next())
            .map(|g| match g {
                TokenTree::Group(g) => g
                    .stream()
                    .into_iter()
                    .filter_map(|t| match t {
                        TokenTree::Ident(i) => Some(i),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            })
            .unwrap_or_default()
    }

    fn join(&self) -> TokenStream {
        let header = &self.header;
        let sections = self.sections.iter().map(|(k, v)| quote!(#k: #v,));
        quote!(#header { #(#sections)* })
    }
}

/// One ill-posed class, applied to a valid model, with a part of its expected message.
#[derive(Clone, Debug)]
enum Class {
    /// Scale the kinetic energy (or Lagrangian) by a negative factor.
    NegativeKinetic(&'static str),
    /// Multiply the kinetic energy by zero.
    ZeroKinetic,
    /// A new coordinate that only the potential mentions, with the default integrator set.
    MasslessCoordinate,
    /// Divide an energy term by `q − q` for a coordinate `q`.
    DivisionByZero(usize),
    /// Add a constant that is not a finite number.
    NonFinite(&'static str),
    /// Square (or raise to the fourth power) a holonomic row.
    SquaredConstraint(usize, i32),
    /// Misspell the keyword of a section whose value is `{ … }`.
    MisspelledSection(usize, usize),
    /// Name a runtime scheme or tableau instead of its family in `integrators: [..]`.
    SchemeName(&'static str),
}

impl Class {
    /// Applies the class; `None` if the model has nothing to apply it to.
    fn apply(&self, model: TokenStream) -> Option<(TokenStream, &'static str)> {
        let mut m = Split::new(model);
        let expected = match self {
            Class::NegativeKinetic(factor) => {
                let factor: TokenStream = factor.parse().ok()?;
                let key = if m.get("kinetic").is_some() {
                    "kinetic"
                } else {
                    "lagrangian"
                };
                let value = m.get(key)?.clone();
                m.set(key, quote!(#factor * (#value)));
                "not positive semidefinite"
            }
            Class::ZeroKinetic => {
                let value = m.get("kinetic")?.clone();
                m.set("kinetic", quote!(0.0 * (#value)));
                "identically zero"
            }
            Class::MasslessCoordinate => {
                let first = m.coordinates().first()?.clone();
                let coordinates = m.coordinates();
                m.set("coordinates", quote!([#(#coordinates,)* zz]));
                let key = if m.get("lagrangian").is_some() {
                    "lagrangian"
                } else {
                    "potential"
                };
                let value = m.get(key).cloned().unwrap_or_else(|| quote!(0.0));
                let term = quote!((zz - #first).powi(2));
                m.set(
                    key,
                    if key == "lagrangian" {
                        quote!(#value - #term)
                    } else {
                        quote!(#value + #term)
                    },
                );
                m.remove("integrators");
                "no constraint fixes `zz`"
            }
            Class::DivisionByZero(i) => {
                let coordinates = m.coordinates();
                let q = coordinates.get(i % coordinates.len().max(1))?.clone();
                let key = m.energy();
                let value = m.get(key)?.clone();
                m.set(key, quote!(#value + 1.0 / (#q - #q)));
                "division by zero"
            }
            Class::NonFinite(constant) => {
                let constant: TokenStream = constant.parse().ok()?;
                let key = m.energy();
                let value = m.get(key)?.clone();
                m.set(key, quote!(#value + #constant));
                "not a finite number"
            }
            Class::SquaredConstraint(i, power) => {
                let rows = m.get("holonomic")?.clone();
                let TokenTree::Group(group) = rows.into_iter().next()? else {
                    return None;
                };
                // Rows look like sections (`name: expr`); `Split::new` drops their doc comments.
                let rows = group.stream();
                let mut rows = Split::new(quote!(rows { #rows }));
                let k = i % rows.sections.len().max(1);
                let (_, value) = rows.sections.get_mut(k)?;
                let squared = quote!((#value).powi(#power));
                *value = squared;
                let body = rows.sections.iter().map(|(k, v)| quote!(#k: #v,));
                m.set("holonomic", quote!({ #(#body)* }));
                "vanishes wherever"
            }
            Class::MisspelledSection(i, j) => {
                let braced: Vec<usize> = m
                    .sections
                    .iter()
                    .enumerate()
                    .filter(|(_, (_, v))| {
                        matches!(v.clone().into_iter().next(),
                                 Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace)
                    })
                    .map(|(k, _)| k)
                    .collect();
                let k = *braced.get(i % braced.len().max(1))?;
                let keyword = m.sections[k].0.to_string();
                let drop = j % keyword.len();
                let misspelled: String = keyword
                    .char_indices()
                    .filter(|&(c, _)| c != drop)
                    .map(|(_, ch)| ch)
                    .collect();
                m.sections[k].0 = Ident::new(&misspelled, Span::call_site());
                "unknown section"
            }
            Class::SchemeName(name) => {
                let name = Ident::new(name, Span::call_site());
                m.set("integrators", quote!([#name]));
                "is part of"
            }
        };
        Some((m.join(), expected))
    }
}

fn class() -> impl Strategy<Value = Class> {
    prop_oneof![
        prop::sample::select(&["-1.0", "-0.5", "-2.0"][..]).prop_map(Class::NegativeKinetic),
        Just(Class::ZeroKinetic),
        Just(Class::MasslessCoordinate),
        any::<usize>().prop_map(Class::DivisionByZero),
        prop::sample::select(
            &[
                "(-1.0).ln()",
                "ln(0.0)",
                "(-1.0).sqrt()",
                "0.0.powf(-1.0)",
                "1e308 * 10.0"
            ][..]
        )
        .prop_map(Class::NonFinite),
        (any::<usize>(), prop::sample::select(&[2, 4][..]))
            .prop_map(|(i, p)| Class::SquaredConstraint(i, p)),
        (any::<usize>(), any::<usize>()).prop_map(|(i, j)| Class::MisspelledSection(i, j)),
        prop::sample::select(
            &[
                "dopri5",
                "rk4",
                "stabilized_rk",
                "adaptive_rk",
                "cortes_martinez",
                "zhang_skeel"
            ][..]
        )
        .prop_map(Class::SchemeName),
    ]
}

proptest! {
    #![proptest_config(cases(64))]

    /// A valid model turned into one ill-posed class is an error with that class's message.
    #[test]
    fn each_ill_posed_class_is_an_error(m in 0..valid_models().len(), class in class()) {
        let Some((model, expected)) = class.apply(valid_models()[m].clone()) else {
            return Ok(());
        };
        let shown = model.to_string();
        let found = messages(model);
        prop_assert!(
            found.iter().any(|message| message.contains(expected)),
            "{class:?} on model {m}: expected an error containing {expected:?}, got {found:?} for\n{shown}"
        );
    }
}

#[test]
fn every_class_applies_to_some_seed_model() {
    let classes = [
        Class::NegativeKinetic("-1.0"),
        Class::ZeroKinetic,
        Class::MasslessCoordinate,
        Class::DivisionByZero(0),
        Class::NonFinite("ln(0.0)"),
        Class::SquaredConstraint(0, 2),
        Class::MisspelledSection(0, 0),
        Class::SchemeName("dopri5"),
    ];
    for class in classes {
        let applied: Vec<_> = valid_models()
            .into_iter()
            .filter_map(|model| class.apply(model))
            .collect();
        assert!(!applied.is_empty(), "{class:?} applies to no seed model");
        for (model, expected) in applied {
            let shown = model.to_string();
            let found = messages(model);
            assert!(
                found.iter().any(|message| message.contains(expected)),
                "{class:?}: expected {expected:?}, got {found:?} for\n{shown}"
            );
        }
    }
}
