//! The run-time product rule of a pair sum's smooth cutoff, `sum(0..N, |i, j| body,
//! cutoff(r = …, on = r_on, off = r_off))` (parsed and checked by [`super::cutoff`]).
//!
//! The switching distance `r` is a kernel of its own (lowered beside the body, so that both
//! read the same slots and one instance table), never multiplied into the body's kernel: the
//! body's value, gradient and Hessian are emitted exactly as without a cutoff, and a pair's
//! loop iteration evaluates `r` first (or `u` for `r = sqrt(u)`, compared with the squared
//! bounds), skips the pair for `r ≥ off` (it contributes exactly
//! zero, and the body is not evaluated), adds the body's contributions unchanged for
//! `r ≤ on`, and in between applies the product rule with the quintic switch `S(r)` of
//! `mechanism::runtime::switch::quintic`:
//!
//! ```text
//! V = S E,   ∇V = S ∇E + E S' ∇r,
//! Hess V = S Hess E + S' (∇r ∇Eᵀ + ∇E ∇rᵀ) + E (S'' ∇r ∇rᵀ + S' Hess r).
//! ```
//!
//! The contraction `a·V‴·a` of full Z&S is not provided with a cutoff; the generator refuses
//! that combination at the cutoff's tokens.

use mechanism_cas::{gradient, Id, Math, Output};
use proc_macro2::{Literal, TokenStream};
use quote::quote;
use syn::Ident;

use crate::family::kernel_code::{kernel_copy, Emitter, KernelCopy};
use crate::family::model::{Cutoff, FamilyModel, Kernel};

/// The switching distance's kernel and the parameters of a cutoff, ready to emit.
pub struct Switch {
    /// The kernel copy whose value is `r`.
    kernel: KernelCopy,
    /// The switching distance.
    r: Id,
    /// What the bounds are compared with: `u` for a distance written `sqrt(u)` (so that a pair
    /// beyond `off` or inside `on` costs no square root), else `r`.
    measure: Id,
    /// Whether `measure` is the square of `r`.
    squared: bool,
    /// The `on` parameter's field.
    on: Ident,
    /// The `off` parameter's field.
    off: Ident,
    /// `∇r` by slot: every slot once derived, the structurally nonzero ones once simplified.
    gradient: Vec<(usize, Id)>,
    /// `Hess r` by slot pair `(a, b)`, `a ≤ b`, if the body's Hessian is assembled (nonzero
    /// entries once simplified).
    hessian: Option<Vec<((usize, usize), Id)>>,
}

impl Switch {
    /// The switch of a pair term whose `kernel` holds the body and then `r`.
    pub fn new(kernel: &Kernel, cutoff: &Cutoff) -> Switch {
        let copy = kernel_copy(kernel);
        let r = copy.values[1];
        let (measure, squared) = match copy.store.node(r) {
            Math::Sqrt(u) => (*u, true),
            _ => (r, false),
        };
        Switch {
            kernel: copy,
            r,
            measure,
            squared,
            on: cutoff.on.clone(),
            off: cutoff.off.clone(),
            gradient: Vec::new(),
            hessian: None,
        }
    }

    /// Returns the bound `b` for the comparison of `measure` with the parameter `bound`:
    /// `b·|b|` for a squared measure (`r ≥ b ⟺ u ≥ b|b|` for `r = √u ≥ 0`), else `b`.
    fn bound(&self, bound: &Ident) -> TokenStream {
        if self.squared {
            quote!((self.#bound * self.#bound.abs()))
        } else {
            quote!(self.#bound)
        }
    }

    /// Returns the statements that bind `__u` (the compared measure: `r`, or `r²` for a
    /// distance written as a square root) and skip the pair (`continue`) beyond `off`.
    pub fn distance_and_skip(&self, model: &FamilyModel) -> TokenStream {
        let statements = Emitter::new(model, &self.kernel).emit(&[Output {
            target: quote!(__u),
            value: self.measure,
        }]);
        let off = self.bound(&self.off);
        quote! {
            let __u: f64;
            { #statements }
            if __u >= #off { continue; }
        }
    }

    /// Returns the condition that the pair lies inside `on` (its body's terms unchanged).
    pub fn inside(&self) -> TokenStream {
        let on = self.bound(&self.on);
        quote!(__u <= #on)
    }

    /// Returns the statements binding `__r` and `(S, S', S'')` at it,
    /// `let (__s, __ds, __dds) = …;`.
    pub fn factors(&self) -> TokenStream {
        let (on, off) = (&self.on, &self.off);
        let r = if self.squared {
            quote!(__u.sqrt())
        } else {
            quote!(__u)
        };
        quote! {
            let __r: f64 = #r;
            let (__s, __ds, __dds) = ::mechanism::runtime::switch::quintic(__r, self.#on, self.#off);
        }
    }

    /// Differentiates the switching distance (the derive stage): `∇r`, and `Hess r` if
    /// `hessian` (the body's Hessian is assembled).
    pub fn derive(&mut self, hessian: bool) {
        let q = self.kernel.symbols.q.clone();
        self.gradient = gradient(&mut self.kernel.store, self.r, &q)
            .into_iter()
            .enumerate()
            .collect();
        if hessian {
            let h = mechanism_cas::hessian(&mut self.kernel.store, self.r, &q);
            self.hessian = Some(
                (0..q.len())
                    .flat_map(|b| (0..=b).map(move |a| (a, b)))
                    .map(|(a, b)| ((a, b), h[a][b]))
                    .collect(),
            );
        }
    }

    /// Simplifies `∇r` and `Hess r` (the simplify stage), each as one group, and drops their
    /// structurally zero entries.
    pub fn simplify(&mut self) {
        self.gradient = self.kernel.simplified_nonzero(&self.gradient);
        if let Some(hessian) = &self.hessian {
            self.hessian = Some(self.kernel.simplified_nonzero(hessian));
        }
    }

    /// Returns the slots of `∇r` and the statements that fill `__dr` with its entries.
    pub fn gradient(&self, model: &FamilyModel) -> (Vec<usize>, TokenStream) {
        let entries = &self.gradient;
        let count = Literal::usize_unsuffixed(entries.len());
        let outputs = indexed(quote!(__dr), entries.iter().map(|&(_, e)| e));
        let statements = Emitter::new(model, &self.kernel).emit(&outputs);
        let slots = entries.iter().map(|&(s, _)| s).collect();
        (
            slots,
            quote! {
                let mut __dr = [0.0f64; #count];
                { #statements }
            },
        )
    }

    /// Returns the slots of `∇r`, the nonzero entries `(a, b)` (`a ≤ b`, as slot pairs) of
    /// `Hess r`, and the statements that fill `__dr` and `__hr` with them.
    pub fn hessian(&self, model: &FamilyModel) -> (Vec<usize>, Vec<(usize, usize)>, TokenStream) {
        let gradient = &self.gradient;
        let entries = self.hessian.as_deref().unwrap_or_default();
        let outputs: Vec<Output> = indexed(quote!(__dr), gradient.iter().map(|&(_, e)| e))
            .into_iter()
            .chain(indexed(quote!(__hr), entries.iter().map(|&(_, e)| e)))
            .collect();
        let statements = Emitter::new(model, &self.kernel).emit(&outputs);
        let (dr, hr) = (
            Literal::usize_unsuffixed(gradient.len()),
            Literal::usize_unsuffixed(entries.len()),
        );
        (
            gradient.iter().map(|&(s, _)| s).collect(),
            entries.iter().map(|&(ab, _)| ab).collect(),
            quote! {
                let mut __dr = [0.0f64; #dr];
                let mut __hr = [0.0f64; #hr];
                { #statements }
            },
        )
    }
}

/// Returns the outputs `target[j] = value_j`.
pub fn indexed(target: TokenStream, values: impl Iterator<Item = Id>) -> Vec<Output> {
    values
        .enumerate()
        .map(|(j, value)| {
            let j = Literal::usize_unsuffixed(j);
            Output {
                target: quote!(#target[#j]),
                value,
            }
        })
        .collect()
}

/// The switched Hessian's entries: for the slot pairs `pairs` (`a ≤ b`), the expression of
/// `S H_ab + S'(r_a E_b + E_a r_b) + E(S'' r_a r_b + S' Hr_ab)` over the arrays `__h` (the
/// body's Hessian entries `body`), `__g` (its gradient at `grad`), `__dr` (`∇r` at `dr`) and
/// `__hr` (`Hess r` at `hr`), each term present only where its factors are nonzero.
pub fn switched_entries(
    pairs: &[(usize, usize)],
    body: &[(usize, usize)],
    grad: &[usize],
    dr: &[usize],
    hr: &[(usize, usize)],
) -> Vec<TokenStream> {
    let at = |list: &[usize], s: usize| {
        list.iter()
            .position(|&x| x == s)
            .map(Literal::usize_unsuffixed)
    };
    let at2 = |list: &[(usize, usize)], p: (usize, usize)| {
        list.iter()
            .position(|&x| x == p)
            .map(Literal::usize_unsuffixed)
    };
    pairs
        .iter()
        .map(|&(a, b)| {
            let mut terms = Vec::new();
            if let Some(k) = at2(body, (a, b)) {
                terms.push(quote!(__s * __h[#k]));
            }
            if let (Some(ra), Some(gb)) = (at(dr, a), at(grad, b)) {
                terms.push(quote!(__ds * __dr[#ra] * __g[#gb]));
            }
            if let (Some(ga), Some(rb)) = (at(grad, a), at(dr, b)) {
                terms.push(quote!(__ds * __g[#ga] * __dr[#rb]));
            }
            if let (Some(ra), Some(rb)) = (at(dr, a), at(dr, b)) {
                terms.push(quote!(__value * __dds * __dr[#ra] * __dr[#rb]));
            }
            if let Some(k) = at2(hr, (a, b)) {
                terms.push(quote!(__value * __ds * __hr[#k]));
            }
            if terms.is_empty() {
                quote!(0.0)
            } else {
                quote!(#(#terms)+*)
            }
        })
        .collect()
}

/// Returns the statements of the generated `parameter_violation` that check the `on`/`off`
/// parameters of `cutoffs` (`switch::violation`), returning the culprit from the function.
pub fn parameter_checks(cutoffs: &[&Cutoff]) -> TokenStream {
    let rt = quote!(::mechanism::runtime);
    let checks = cutoffs.iter().map(|c| {
        let (on, off) = (&c.on, &c.off);
        let (on_name, off_name) = (on.to_string(), off.to_string());
        quote! {
            if let ::core::option::Option::Some((__on, __requirement)) =
                #rt::switch::violation(self.#on, self.#off)
            {
                return ::core::option::Option::Some(if __on {
                    (#on_name, self.#on, __requirement)
                } else {
                    (#off_name, self.#off, __requirement)
                });
            }
        }
    });
    quote!(#(#checks)*)
}
