//! Mutations of valid models into each class of ill-posed model (issue 9): every one is an
//! error with the class's message, never a panic and never an expansion.

use proc_macro2::{Delimiter, Ident, Span, TokenStream, TokenTree};
use proptest::prelude::*;
use quote::quote;

use super::seeds::valid_models;
use super::{cases, messages};

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
