//! Linear solves specialized to a model's structural nonzeros: the acceleration
//! `a = −(M + c H)⁻¹ g` of the Zhang–Skeel family (Tao–Owhadi 2014, eq. 18–19), with `g` a
//! gradient and `H` a Hessian the macro has already derived.
//!
//! The factorization itself, its pivots and when it declines are in `ldlt`.

use std::collections::BTreeSet;

use mechanism_cas::{Id, Output};
use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};

use super::ldlt::{all_finite_by_fours, ldlt_solve};
use super::ordering::elimination_order;
use super::{runtime, Code};
impl Code<'_> {
    /// Returns the provided method `name(&self, [omega: f64,] q, c, a) -> GeneratedSolve` of a
    /// runtime trait (`implicit_acceleration`, `penalized_implicit_acceleration`,
    /// `penalty_implicit_acceleration`) with the body of [`Code::implicit_solve`].
    pub(super) fn implicit_solve_method(
        &self,
        name: TokenStream,
        omega: bool,
        mass: &[Vec<Id>],
        gradient: &[Id],
        hessian: &[Vec<Id>],
    ) -> TokenStream {
        let rt = runtime();
        let n = Literal::usize_unsuffixed(gradient.len());
        let omega = omega.then(|| quote!(omega: f64,));
        let body = self.implicit_solve(mass, gradient, hessian);
        // Always inlined: called from a stepper's fast path, the solve keeps `q` and `a` in
        // registers instead of passing them through memory (the 10-link chain's Z&Ss step
        // 150 → 134 ns).
        quote! {
            #[inline(always)]
            #[allow(unused_mut)]
            fn #name(
                &self,
                #omega
                q: &#rt::SVector<f64, #n>,
                c: f64,
                a: &mut #rt::SVector<f64, #n>,
            ) -> #rt::GeneratedSolve {
                #body
            }
        }
    }

    /// Returns the body of a function that writes `a = −(M + c H)⁻¹ g` into `a` and returns
    /// `GeneratedSolve::Solved`, with `M = mass`, `H = hessian` (symmetric, both `n × n`) and
    /// `g = gradient` evaluated at `q` (and `omega`), `c` an `f64` in scope.
    pub(super) fn implicit_solve(
        &self,
        mass: &[Vec<Id>],
        gradient: &[Id],
        hessian: &[Vec<Id>],
    ) -> TokenStream {
        let n = gradient.len();
        let store = self.store();
        let nonzero =
            |i: usize, j: usize| !store.is_zero(mass[i][j]) || !store.is_zero(hessian[i][j]);
        let lower: BTreeSet<(usize, usize)> = (0..n)
            .flat_map(|i| (0..i).map(move |j| (i, j)))
            .filter(|&(i, j)| nonzero(i, j))
            .collect();
        let (order, factor) = elimination_order(n, &lower);
        let rt = runtime();
        let rt_solve = quote!(#rt::GeneratedSolve);

        // g, H and M on the lower triangle, in one emission so that they share work.
        let entries: Vec<(usize, usize)> = (0..n)
            .flat_map(|i| (0..=i).map(move |j| (i, j)))
            .filter(|&(i, j)| i == j || lower.contains(&(i, j)))
            .collect();
        let slot = |i: usize, j: usize| entries.iter().position(|&e| e == (i, j));
        let count = Literal::usize_unsuffixed(entries.len());
        let size = Literal::usize_unsuffixed(n);
        let mut outputs = Vec::new();
        for (i, &value) in gradient.iter().enumerate() {
            if !store.is_zero(value) {
                let i = Literal::usize_unsuffixed(i);
                outputs.push(Output {
                    target: quote!(__g[#i]),
                    value,
                });
            }
        }
        for (k, &(i, j)) in entries.iter().enumerate() {
            let k = Literal::usize_unsuffixed(k);
            if !store.is_zero(mass[i][j]) {
                outputs.push(Output {
                    target: quote!(__m[#k]),
                    value: mass[i][j],
                });
            }
            if !store.is_zero(hessian[i][j]) {
                outputs.push(Output {
                    target: quote!(__h[#k]),
                    value: hessian[i][j],
                });
            }
        }
        let evaluate = self.body(outputs, &[]);
        // A = M + c H, as the generic `mass + hess * c`, without the terms that are structurally
        // zero: `m + 0·c` is `m` (`c = βh²` is finite) and `0 + h·c` is `h·c` but for the sign
        // of a zero, which no later sum or product can tell apart from the other zero (pivots
        // are never zero).
        let a = |i: usize, j: usize| -> TokenStream {
            let Some(k) = slot(i, j) else {
                return quote!(0.0f64);
            };
            let (has_mass, has_hessian) =
                (!store.is_zero(mass[i][j]), !store.is_zero(hessian[i][j]));
            let k = Literal::usize_unsuffixed(k);
            match (has_mass, has_hessian) {
                (true, true) => quote!((__m[#k] + __h[#k] * c)),
                (true, false) => quote!(__m[#k]),
                (false, true) => quote!((__h[#k] * c)),
                (false, false) => quote!(0.0f64),
            }
        };

        let rhs = |i: usize| {
            let i = Literal::usize_unsuffixed(i);
            quote!(__g[#i])
        };
        let solve = ldlt_solve(&order, &factor, &a, &rhs, &rt_solve);
        let xs: Vec<Ident> = (0..n).map(|i| format_ident!("__x_{}", i)).collect();
        let all_finite = all_finite_by_fours(&xs);
        let indices = (0..n).map(Literal::usize_unsuffixed);
        quote! {
            let mut __g = [0.0f64; #size];
            let mut __m = [0.0f64; #count];
            let mut __h = [0.0f64; #count];
            #evaluate
            let __tolerance = (#size as f64) * f64::EPSILON;
            #solve
            if !(#all_finite) {
                return #rt_solve::Declined;
            }
            #(a[#indices] = -#xs;)*
            #rt_solve::Solved
        }
    }

    /// Returns the provided method `Inertia::mass_solve` for a constant diagonal mass matrix
    /// `mass`: `b_i · (1/M_ii)`, as the generic Cholesky of a diagonal computes it, with its
    /// pivot test (`Declined` on a pivot that is not positive and finite).
    pub(super) fn mass_solve_method(&self, mass: &[Vec<Id>]) -> TokenStream {
        let rt = runtime();
        let n = mass.len();
        let lit = Literal::usize_unsuffixed;
        let outputs = (0..n)
            .map(|i| {
                let il = lit(i);
                Output {
                    target: quote!(__m[#il]),
                    value: mass[i][i],
                }
            })
            .collect();
        let evaluate = self.body(outputs, &[]);
        let scale = (0..n).map(|i| {
            let il = lit(i);
            quote! {
                let __d: f64 = __m[#il];
                if !(__d > __tolerance * __d.abs() && __d < f64::INFINITY) {
                    return #rt::GeneratedSolve::Declined;
                }
                b[#il] *= 1.0 / __d;
            }
        });
        let size = lit(n);
        quote! {
            #[inline]
            #[allow(unused_mut)]
            fn mass_solve(
                &self,
                q: &#rt::SVector<f64, #size>,
                b: &mut #rt::SVector<f64, #size>,
            ) -> #rt::GeneratedSolve {
                let mut __m = [0.0f64; #size];
                #evaluate
                let __tolerance = (#size as f64) * f64::EPSILON;
                #(#scale)*
                #rt::GeneratedSolve::Solved
            }
        }
    }
}
