//! Random token streams: token soup on its own, after a struct header, as the values of
//! sections, and as the ranges, member indices and row family headers of a model with
//! families.

use proc_macro2::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};
use proptest::prelude::*;
use quote::quote;

use super::{cases, check};

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
pub(super) const LITERALS: &[&str] = &[
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
pub(super) enum Tok {
    Ident(&'static str),
    Punct(char, bool),
    Literal(&'static str),
    Float(f64),
    Group(Delimiter, Vec<Tok>),
}

pub(super) fn to_tree(tok: &Tok) -> TokenTree {
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

pub(super) fn leaf() -> impl Strategy<Value = Tok> {
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
