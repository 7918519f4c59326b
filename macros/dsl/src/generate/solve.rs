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

/// Returns the statements that factor the symmetric `A = L D Lᵀ` (entries `a(i, j)`, `i ≥ j`,
/// on the pattern of `factor`) and solve `A x = b` (entries `b(i)`) into `__x_0 … __x_{n−1}`:
/// the runtime's root-free Cholesky and its substitutions, step for step, without the
/// structural zeros. A pivot `d_j` that is not finite or not above `__tolerance · |A_jj|` (a
/// local the caller defines) returns `Declined` from the enclosing function.
fn ldlt_solve(
    n: usize,
    factor: &Factor,
    a: &dyn Fn(usize, usize) -> TokenStream,
    b: &dyn Fn(usize) -> TokenStream,
    rt_solve: &TokenStream,
) -> TokenStream {
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
        let bi = b(i);
        let terms = factor.rows[i].iter().map(|&k| {
            let (l, yk) = (l(i, k), format_ident!("__y_{}", k));
            quote!(- #l * #yk)
        });
        quote!(let #y: f64 = #bi #(#terms)*;)
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
    quote! {
        #(#factorization)*
        #(#forward)*
        #(#scale)*
        #(#back)*
    }
}

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
        quote! {
            #[inline]
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

        let rhs = |i: usize| {
            let i = Literal::usize_unsuffixed(i);
            quote!(__g[#i])
        };
        let solve = ldlt_solve(n, &factor, &a, &rhs, &rt_solve);
        let xs: Vec<Ident> = (0..n).map(|i| format_ident!("__x_{}", i)).collect();
        let indices = (0..n).map(Literal::usize_unsuffixed);
        quote! {
            let mut __g = [0.0f64; #size];
            let mut __m = [0.0f64; #count];
            let mut __h = [0.0f64; #count];
            #evaluate
            let __tolerance = (#size as f64) * f64::EPSILON;
            #solve
            if !(true #(&& #xs.is_finite())*) {
                return #rt_solve::Declined;
            }
            #(a[#indices] = -#xs;)*
            #rt_solve::Solved
        }
    }

    /// Returns the body of `Holonomic::spook_solve` for a constant diagonal mass matrix and a
    /// Jacobian with the structural nonzeros of `jacobian` (rows × `n`): `M⁻¹ Gᵀ` row by row,
    /// `S = G M⁻¹ Gᵀ + Σ` on its nonzeros, an `LDLᵀ` of `S` unrolled over them and their fill,
    /// `λ = S⁻¹ (t − G M⁻¹ r)` and `v = M⁻¹ r + M⁻¹ Gᵀ λ` — the generic Schur complement of
    /// eq. 30 (`DenseSpook`) without its structural zeros. The values come in as `mass`, `jac`,
    /// `r`, `sigma` and `rhs`; nothing is evaluated again.
    pub(super) fn spook_solve(&self, jacobian: &[Vec<Id>], n: usize) -> TokenStream {
        let store = self.store();
        let rows = jacobian.len();
        let rt = runtime();
        let rt_solve = quote!(#rt::GeneratedSolve);
        let lit = Literal::usize_unsuffixed;
        let pattern: Vec<Vec<usize>> = jacobian
            .iter()
            .map(|row| (0..n).filter(|&j| !store.is_zero(row[j])).collect())
            .collect();
        // The generic Cholesky of the diagonal M: its pivots are the diagonal.
        let mass_pivots = (0..n).map(|j| {
            let (d, inverse, jl) = (
                format_ident!("__dm_{}", j),
                format_ident!("__im_{}", j),
                lit(j),
            );
            quote! {
                let #d: f64 = mass[(#jl, #jl)];
                if !(#d.is_finite() && #d > __tolerance_mass * #d.abs()) {
                    return #rt_solve::Declined;
                }
                let #inverse = 1.0 / #d;
            }
        });
        let y = |a: usize, j: usize| format_ident!("__ym_{}_{}", a, j);
        let minv_jac = pattern.iter().enumerate().flat_map(|(a, row)| {
            row.iter().map(move |&j| {
                let (target, inverse, al, jl) =
                    (y(a, j), format_ident!("__im_{}", j), lit(a), lit(j));
                quote!(let #target: f64 = jac[(#al, #jl)] * #inverse;)
            })
        });
        let common = |a: usize, b: usize| -> Vec<usize> {
            pattern[a]
                .iter()
                .copied()
                .filter(|j| pattern[b].contains(j))
                .collect()
        };
        let lower: BTreeSet<(usize, usize)> = (0..rows)
            .flat_map(|a| (0..a).map(move |b| (a, b)))
            .filter(|&(a, b)| !common(a, b).is_empty())
            .collect();
        let s = |a: usize, b: usize| format_ident!("__s_{}_{}", a, b);
        let schur = (0..rows)
            .flat_map(|a| (0..=a).map(move |b| (a, b)))
            .filter(|&(a, b)| a == b || lower.contains(&(a, b)))
            .map(|(a, b)| {
                let (target, al) = (s(a, b), lit(a));
                let terms: Vec<TokenStream> = common(a, b)
                    .into_iter()
                    .map(|j| {
                        let (jl, yb) = (lit(j), y(b, j));
                        quote!(jac[(#al, #jl)] * #yb)
                    })
                    .collect();
                let sum = if terms.is_empty() {
                    quote!(0.0f64)
                } else {
                    quote!(#(#terms)+*)
                };
                if a == b {
                    quote!(let #target: f64 = #sum + sigma[#al];)
                } else {
                    quote!(let #target: f64 = #sum;)
                }
            });
        let factor = Factor::analyse(rows, &lower);
        let entry = |a: usize, b: usize| -> TokenStream {
            if a == b || lower.contains(&(a, b)) {
                let target = s(a, b);
                quote!(#target)
            } else {
                quote!(0.0f64)
            }
        };
        let minv_r = (0..n).map(|j| {
            let (target, inverse, jl) = (
                format_ident!("__mr_{}", j),
                format_ident!("__im_{}", j),
                lit(j),
            );
            quote!(let #target: f64 = r[#jl] * #inverse;)
        });
        let b = |a: usize| -> TokenStream {
            let al = lit(a);
            let terms = pattern[a].iter().map(|&j| {
                let (jl, mr) = (lit(j), format_ident!("__mr_{}", j));
                quote!(- jac[(#al, #jl)] * #mr)
            });
            quote!((rhs[#al] #(#terms)*))
        };
        let solve = ldlt_solve(rows, &factor, &entry, &b, &rt_solve);
        let velocity: Vec<TokenStream> = (0..n)
            .map(|j| {
                let (target, mr) = (format_ident!("__v_{}", j), format_ident!("__mr_{}", j));
                let terms = (0..rows).filter(|&a| pattern[a].contains(&j)).map(|a| {
                    let (ya, x) = (y(a, j), format_ident!("__x_{}", a));
                    quote!(+ #ya * #x)
                });
                quote!(let #target: f64 = #mr #(#terms)*;)
            })
            .collect();
        let vs: Vec<Ident> = (0..n).map(|j| format_ident!("__v_{}", j)).collect();
        let xs: Vec<Ident> = (0..rows).map(|a| format_ident!("__x_{}", a)).collect();
        let (v_index, x_index) = ((0..n).map(lit), (0..rows).map(lit));
        let (size, count) = (lit(n), lit(rows));
        quote! {
            let __tolerance_mass = (#size as f64) * f64::EPSILON;
            #(#mass_pivots)*
            #(#minv_jac)*
            #(#schur)*
            let __tolerance = (#count as f64) * f64::EPSILON;
            #(#minv_r)*
            #solve
            #(#velocity)*
            if !(true #(&& #vs.is_finite())* #(&& #xs.is_finite())*) {
                return #rt_solve::Declined;
            }
            #(v[#v_index] = #vs;)*
            #(lambda[#x_index] = #xs;)*
            #rt_solve::Solved
        }
    }
}
