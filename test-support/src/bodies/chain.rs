//! The unrolled chain of `n` pendula of Tao–Owhadi (2014), §4.2, as a `mechanism!` body.
//!
//! Shared by the dsl's tests (`macros/dsl/tests/dsl/robustness/`) and its
//! `examples/chains.rs`.
//!
//! The paper's model: `n` unit point masses in the plane with Cartesian coordinates
//! `(x_i, y_i)`, `M = I`, potential `V = −Σ y_i`, and one holonomic constraint per link,
//! `|p_i − p_{i−1}|² − L_i² = 0` with `p_0` the fixed origin and `L_i = √5` (Figure 3, with
//! `x_i(0) = i`, `y_i(0) = −2i`). The link lengths are run-time parameters `l1 … ln`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

/// `L_i = √5` of the paper's Figure 3.
pub const LINK_LENGTH: f64 = 2.23606797749979;

/// Returns the tokens of `pub struct ChainN { … }` for an `n`-link chain: `2n` coordinates
/// and `n` constraint rows, every sum written out.
pub fn chain(n: usize) -> TokenStream {
    assert!(n >= 1, "a chain has at least one link");
    let name = format_ident!("Chain{}", n);
    let x: Vec<_> = (1..=n).map(|i| format_ident!("x{}", i)).collect();
    let y: Vec<_> = (1..=n).map(|i| format_ident!("y{}", i)).collect();
    let l: Vec<_> = (1..=n).map(|i| format_ident!("l{}", i)).collect();
    let link: Vec<_> = (1..=n).map(|i| format_ident!("link{}", i)).collect();
    let length = proc_macro2::Literal::f64_unsuffixed(LINK_LENGTH);
    let coordinates = x.iter().zip(&y).map(|(x, y)| quote!(#x, #y));
    let rows = (0..n).map(|i| {
        let (xi, yi, li, name) = (&x[i], &y[i], &l[i], &link[i]);
        if i == 0 {
            quote!(#name: #xi.powi(2) + #yi.powi(2) - #li.powi(2))
        } else {
            let (xp, yp) = (&x[i - 1], &y[i - 1]);
            quote!(#name: (#xi - #xp).powi(2) + (#yi - #yp).powi(2) - #li.powi(2))
        }
    });
    let doc = format!(
        "Unrolled chain of {n} pendula (Tao–Owhadi 2014, §4.2): {} coordinates, {n} links.",
        2 * n
    );
    quote! {
        #[doc = #doc]
        pub struct #name {
            coordinates: [#(#coordinates),*],
            parameters: { #(#l = #length),* },
            kinetic: 0.5 * (#(dot(#x).powi(2) + dot(#y).powi(2))+*),
            potential: -(#(#y)+*),
            holonomic: { #(#rows),* },
        }
    }
}
