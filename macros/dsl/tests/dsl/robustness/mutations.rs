//! Random mutations of the valid models (tokens deleted, duplicated, swapped, replaced or
//! inserted, one bracket of a pair, parentheses around a run): an expansion or spanned errors,
//! never a panic.

use proc_macro2::{Delimiter, Group, Ident, Punct, Spacing, Span, TokenStream, TokenTree};
use proptest::prelude::*;
use proptest::sample::Index;

use super::seeds::{mutation_seeds, valid_models};
use super::token_soup::{leaf, to_tree, Tok};
use super::{cases, check};

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
