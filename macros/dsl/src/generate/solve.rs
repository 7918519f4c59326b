//! Linear solves specialized to a model's structural nonzeros: the acceleration
//! `a = −(M + c H)⁻¹ g` of the Zhang–Skeel family (Tao–Owhadi 2014, eq. 18–19), with `g` a
//! gradient and `H` a Hessian the macro has already derived.
//!
//! The macro knows which entries of `M + c H` can be nonzero. It computes, once at expansion
//! time, the pattern of the factor `L` of `M + c H = L D Lᵀ` (the nonzeros and their fill,
//! eliminating in the coordinates' order), and emits straight-line code over exactly those
//! entries: `g`, `H` and `M` evaluated together (shared subexpressions), the `LDLᵀ` without
//! pivoting, the two triangular solves — no index arithmetic, no work on structural zeros.
//!
//! The emitted factorization is the runtime's root-free Cholesky (`linalg::Cholesky`) with the
//! structural zeros left out: the same operations in the same order (`w_k = L_jk d_k`,
//! `d_j = A_jj − Σ_k w_k L_jk`, `L_ij = (A_ij − Σ_k L_ik w_k) · (1/d_j)`, forward and back
//! substitution with the reciprocal pivots), so where it succeeds its result equals the
//! generic one. Where a pivot is not clearly positive (`d_j ≤ N·ε·|A_jj|`, the generic test)
//! or a value is not finite it returns `GeneratedSolve::Declined` and the integrator runs its
//! generic kernels, which fall back to pivoted LU or report the culprit.

use std::collections::BTreeSet;

use mechanism_cas::{Id, Output};
use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};

use super::{runtime, Code};

/// The structural nonzeros of the factor `L` of a symmetric `n × n` pattern, row by row.
struct Factor {
    /// `rows[i]`: the columns `j < i` with `L_ij` structurally nonzero, ascending.
    rows: Vec<Vec<usize>>,
    /// `columns[j]`: the rows `i > j` with `L_ij` structurally nonzero, ascending.
    columns: Vec<Vec<usize>>,
}

impl Factor {
    /// Computes the pattern of `L` for the strictly lower entries `lower` (`i > j`):
    /// `L_ij ≠ 0` if `A_ij ≠ 0` or `L_ik ≠ 0 ≠ L_jk` for some `k < j`.
    fn analyse(n: usize, lower: &BTreeSet<(usize, usize)>) -> Factor {
        let mut rows: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
        for &(i, j) in lower {
            rows[i].insert(j);
        }
        for j in 0..n {
            let above: Vec<usize> = rows[j].iter().copied().collect();
            for row in rows.iter_mut().skip(j + 1) {
                if !row.contains(&j) && above.iter().any(|k| row.contains(k)) {
                    row.insert(j);
                }
            }
        }
        let mut columns = vec![Vec::new(); n];
        for (i, row) in rows.iter().enumerate() {
            for &j in row {
                columns[j].push(i);
            }
        }
        Factor {
            rows: rows.into_iter().map(|r| r.into_iter().collect()).collect(),
            columns,
        }
    }

    /// Returns the columns `k < j` where both rows `i` and `j` of `L` are nonzero, ascending.
    fn common(&self, i: usize, j: usize) -> Vec<usize> {
        let other: BTreeSet<usize> = self.rows[j].iter().copied().collect();
        self.rows[i]
            .iter()
            .copied()
            .filter(|k| *k < j && other.contains(k))
            .collect()
    }
}

fn l(i: usize, j: usize) -> Ident {
    format_ident!("__l_{}_{}", i, j)
}

fn w(j: usize, k: usize) -> Ident {
    format_ident!("__w_{}_{}", j, k)
}

impl Code<'_> {
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
        let factor = Factor::analyse(n, &lower);
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
        // A = M + c H, exactly as the generic `mass + hess * c`.
        let a = |i: usize, j: usize| -> TokenStream {
            match slot(i, j) {
                Some(k) => {
                    let k = Literal::usize_unsuffixed(k);
                    quote!((__m[#k] + __h[#k] * c))
                }
                None => quote!(0.0f64),
            }
        };

        let mut factorization = Vec::new();
        for j in 0..n {
            let (d, inverse) = (format_ident!("__d_{}", j), format_ident!("__i_{}", j));
            let ws: Vec<TokenStream> = factor.rows[j]
                .iter()
                .map(|&k| {
                    let (w, l, dk) = (w(j, k), l(j, k), format_ident!("__d_{}", k));
                    quote!(let #w = #l * #dk;)
                })
                .collect();
            let terms = factor.rows[j].iter().map(|&k| {
                let (w, l) = (w(j, k), l(j, k));
                quote!(- #w * #l)
            });
            let diagonal = a(j, j);
            factorization.push(quote! {
                #(#ws)*
                let __a: f64 = #diagonal;
                let #d: f64 = __a #(#terms)*;
                if !(#d.is_finite() && #d > __tolerance * __a.abs()) {
                    return #rt_solve::Declined;
                }
                let #inverse = 1.0 / #d;
            });
            for &i in &factor.columns[j] {
                let entry = a(i, j);
                let terms = factor.common(i, j).into_iter().map(|k| {
                    let (l, w) = (l(i, k), w(j, k));
                    quote!(- #l * #w)
                });
                let target = l(i, j);
                factorization.push(quote!(let #target: f64 = (#entry #(#terms)*) * #inverse;));
            }
        }

        let forward = (0..n).map(|i| {
            let y = format_ident!("__y_{}", i);
            let i_lit = Literal::usize_unsuffixed(i);
            let terms = factor.rows[i].iter().map(|&k| {
                let (l, yk) = (l(i, k), format_ident!("__y_{}", k));
                quote!(- #l * #yk)
            });
            quote!(let #y: f64 = __g[#i_lit] #(#terms)*;)
        });
        let scale = (0..n).map(|i| {
            let (z, y, inverse) = (
                format_ident!("__z_{}", i),
                format_ident!("__y_{}", i),
                format_ident!("__i_{}", i),
            );
            quote!(let #z: f64 = #y * #inverse;)
        });
        let back = (0..n).rev().map(|k| {
            let (x, z) = (format_ident!("__x_{}", k), format_ident!("__z_{}", k));
            let terms = factor.columns[k].iter().map(|&i| {
                let (l, xi) = (l(i, k), format_ident!("__x_{}", i));
                quote!(- #l * #xi)
            });
            quote!(let #x: f64 = #z #(#terms)*;)
        });
        let xs: Vec<Ident> = (0..n).map(|i| format_ident!("__x_{}", i)).collect();
        let indices = (0..n).map(Literal::usize_unsuffixed);
        quote! {
            let mut __g = [0.0f64; #size];
            let mut __m = [0.0f64; #count];
            let mut __h = [0.0f64; #count];
            #evaluate
            let __tolerance = (#size as f64) * f64::EPSILON;
            #(#factorization)*
            #(#forward)*
            #(#scale)*
            #(#back)*
            if !(true #(&& #xs.is_finite())*) {
                return #rt_solve::Declined;
            }
            #(a[#indices] = -#xs;)*
            #rt_solve::Solved
        }
    }
}
