//! The chain and the ladder written with families, read from the library's
//! `src/models/families.rs` (`mechanism::models::{PendulumChain, Ladder}`, which
//! `tests/it/families/` checks against the hand-written references and `benches/families.rs`
//! times), as `mechanism!` bodies with other default sizes.
//!
//! Shared by the dsl's tests (`macros/dsl/tests/dsl/`) and its `examples/chains.rs`.

use proc_macro2::{Group, Literal, TokenStream, TokenTree};

/// The workspace's family models: two `mechanism::mechanism! { … }` invocations.
const SOURCE: &str = include_str!("../../../src/models/families.rs");

/// Returns the bodies of the chain with default size `N = n` and the ladder with default size
/// `L = links`.
pub fn family_models(n: usize, links: usize) -> [TokenStream; 2] {
    let bodies = mechanism_bodies(SOURCE);
    let [chain, ladder] = <[TokenStream; 2]>::try_from(bodies).expect("two mechanism! invocations");
    [
        with_default_size(chain, n),
        with_default_size(ladder, links),
    ]
}

/// Returns the bodies of the top-level macro invocations (the `mechanism! { … }`s) of the Rust
/// file `source`, in order.
pub fn mechanism_bodies(source: &str) -> Vec<TokenStream> {
    let file = syn::parse_file(source).expect("a model file of the library parses");
    file.items
        .into_iter()
        .filter_map(|item| match item {
            syn::Item::Macro(item) => Some(item.mac.tokens),
            _ => None,
        })
        .collect()
}

/// Returns `tokens` with the first literal of the `sizes: { … }` section, the first size's
/// default, replaced by `size`.
fn with_default_size(tokens: TokenStream, size: usize) -> TokenStream {
    let mut previous: Vec<TokenTree> = Vec::new();
    tokens
        .into_iter()
        .map(|tree| {
            let tree = match tree {
                TokenTree::Group(group) => {
                    let sizes = matches!(
                        previous.as_slice(),
                        [.., TokenTree::Ident(name), TokenTree::Punct(colon)]
                            if name == "sizes" && colon.as_char() == ':'
                    );
                    let stream = if sizes {
                        first_literal_replaced(group.stream(), size)
                    } else {
                        with_default_size(group.stream(), size)
                    };
                    let mut replaced = Group::new(group.delimiter(), stream);
                    replaced.set_span(group.span());
                    TokenTree::Group(replaced)
                }
                other => other,
            };
            previous.push(tree.clone());
            tree
        })
        .collect()
}

/// Returns `tokens` with its first literal replaced by `size`.
fn first_literal_replaced(tokens: TokenStream, size: usize) -> TokenStream {
    let mut done = false;
    tokens
        .into_iter()
        .map(|tree| match tree {
            TokenTree::Literal(_) if !done => {
                done = true;
                TokenTree::Literal(Literal::usize_unsuffixed(size))
            }
            other => other,
        })
        .collect()
}
