//! The model's identity for checkpoints: `impl ModelIdentity` with a structural hash of the
//! invocation and the list of its parameters.
//!
//! The hash is FNV-1a (64 bits) of the invocation's tokens printed as text, with every doc
//! attribute removed: the same model text gives the same hash in every build (no random state,
//! no addresses), and any change to a coordinate, a parameter's default, an energy, a
//! constraint or the integrator list changes it, while rewording a doc comment does not. A
//! checkpoint written for one model is then refused by another
//! (`mechanism_runtime::checkpoint::CheckpointError::ModelMismatch`).

use proc_macro2::{Group, TokenStream, TokenTree};
use quote::quote;

use crate::ast::{Index, Mechanism, SectionBody};

/// Returns `impl ModelIdentity for Name` for the model `ast`, parsed from `input`.
pub fn emit(input: &TokenStream, ast: &Mechanism) -> TokenStream {
    let text = without_docs(input.clone()).to_string();
    let hash = fnv1a(text.as_bytes());
    let name = &ast.name;
    let parameters = ast
        .sections
        .iter()
        .filter(|section| section.keyword == "parameters")
        .flat_map(|section| match &section.body {
            SectionBody::Assignments(assignments) => assignments.iter().collect(),
            _ => Vec::new(),
        })
        .map(|parameter| {
            let field = &parameter.name;
            let label = field.to_string();
            match parameter.index {
                Some(Index::Size { .. }) => {
                    quote!((::std::string::String::from(#label), self.#field.clone()))
                }
                _ => quote!((::std::string::String::from(#label), ::std::vec![self.#field])),
            }
        });
    quote! {
        impl ::mechanism::runtime::checkpoint::ModelIdentity for #name {
            const STRUCTURE: u64 = #hash;

            fn parameters(&self) -> ::std::vec::Vec<(::std::string::String, ::std::vec::Vec<f64>)> {
                ::std::vec![#(#parameters),*]
            }
        }
    }
}

/// Returns `tokens` without doc attributes (`#[doc = "…"]`, which `///` comments are), at
/// every depth.
fn without_docs(tokens: TokenStream) -> TokenStream {
    let mut out = Vec::new();
    let mut iter = tokens.into_iter().peekable();
    while let Some(token) = iter.next() {
        match token {
            TokenTree::Punct(ref punct) if punct.as_char() == '#' => {
                if let Some(TokenTree::Group(group)) = iter.peek() {
                    let is_doc = matches!(
                        group.stream().into_iter().next(),
                        Some(TokenTree::Ident(ident)) if ident == "doc"
                    );
                    if is_doc {
                        iter.next();
                        continue;
                    }
                }
                out.push(token);
            }
            TokenTree::Group(group) => {
                let mut inner = Group::new(group.delimiter(), without_docs(group.stream()));
                inner.set_span(group.span());
                out.push(TokenTree::Group(inner));
            }
            other => out.push(other),
        }
    }
    out.into_iter().collect()
}

/// Returns the 64-bit FNV-1a hash of `bytes` (the runtime's `checkpoint::fnv1a` from a fresh
/// state).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hash(text: &str) -> u64 {
        let tokens: TokenStream = text.parse().unwrap();
        fnv1a(without_docs(tokens).to_string().as_bytes())
    }

    #[test]
    fn docs_do_not_change_the_hash_and_the_model_does() {
        let plain = "pub struct P { coordinates: [x], parameters: { k = 1.0 }, potential: 0.5 * k * x.powi(2) }";
        let documented = "/// A spring.\npub struct P { coordinates: [x], parameters: { /// Stiffness.\n k = 1.0 }, potential: 0.5 * k * x.powi(2) }";
        let stiffer = "pub struct P { coordinates: [x], parameters: { k = 2.0 }, potential: 0.5 * k * x.powi(2) }";
        assert_eq!(hash(plain), hash(documented));
        assert_ne!(hash(plain), hash(stiffer));
        assert_eq!(hash(plain), hash(plain));
    }
}
