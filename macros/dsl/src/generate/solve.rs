//! Linear solves specialized to a model's structural nonzeros: the acceleration
//! `a = −(M + c H)⁻¹ g` of the Zhang–Skeel family (Tao–Owhadi 2014, eq. 18–19), with `g` a
//! gradient and `H` a Hessian the macro has already derived.
//!
//! The macro knows which entries of `M + c H` can be nonzero. It computes, once at expansion
//! time, an elimination order (the coordinates' own, or one from both ends or a nested
//! dissection where that shortens the chain of dependent operations: `ordering`), its pivot
//! blocks (each unknown with its parent in the elimination tree where the parent has no other
//! child: `ordering::paired`) and the pattern of the block factor `L` of
//! `P (M + c H) Pᵀ = L D Lᵀ` (`D` block diagonal, `1 × 1` and `2 × 2` blocks; the nonzeros and
//! their fill), and emits straight-line code over exactly those entries: `g`, `H` and `M`
//! evaluated together (shared subexpressions), the block `LDLᵀ` without pivoting, the two
//! triangular solves — no index arithmetic, no work on structural zeros.
//!
//! Straight-line code of this size is bound by the latency of its chain of dependent
//! operations, and there each pivot waits for a division. A `2 × 2` pivot `[p q; q r]` is
//! inverted through its determinant, `D⁻¹ = [r −q; −q p] / (pr − q²)`: one division where two
//! `1 × 1` pivots need two in sequence. On the double pendulum (two such pivots) that takes a
//! Z&Ss step from 49.5 to 38.6 ns. Where the chain of divisions is longer than the work, a
//! block updated by a single earlier block waits for that block's determinant instead of its
//! reciprocal (`ordering::Factor::defer_where_faster`): the double pendulum's Z&Ss step then
//! holds one division in its chain, 33.9 → 30.5 ns (portable build). The determinant carries
//! the same rounding as the second scalar pivot `r − q²/p = (pr − q²)/p`, and block LU
//! factorization of a symmetric positive definite matrix is stable (Higham, *Accuracy and
//! Stability of Numerical Algorithms*, 2nd ed., 2002, ch. 13, block LU factorization), so the
//! result agrees with the generic kernels' Cholesky to the conditioning, not bit for bit (see
//! [`ldlt_solve`]). Where a pivot is not
//! clearly positive (`d ≤ N·ε·|A_jj|`, the generic test, for a `2 × 2` pivot on both its
//! scalar pivots) or a value is not finite it returns `GeneratedSolve::Declined` and the
//! integrator runs its generic kernels, which fall back to pivoted LU or report the culprit.
//!
//! The pivot tests are emitted as `d > bound && d < ∞` (`bound = tol·|A_jj|`, not negative, or
//! NaN): the generic `d.is_finite() && d > bound`, since NaN fails both comparisons, −∞ the
//! first and +∞ the second, in two floating-point comparisons where `is_finite()` is an integer
//! test of the bits that moves `d` into a general-purpose register.

use std::collections::BTreeSet;

use mechanism_cas::{Id, Output};
use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};

use super::ordering::{elimination_order, Factor};
use super::{runtime, Code};
use crate::derive::Derived;

fn l(i: usize, j: usize) -> Ident {
    format_ident!("__l_{}_{}", i, j)
}

/// The numerator `ln_ij = L_ij · det_J` of `L_ij`, before the multiplication by `1/det_J`
/// (`det_J` the determinant of `j`'s `2 × 2` pivot block, or its `1 × 1` pivot).
fn ln(i: usize, j: usize) -> Ident {
    format_ident!("__ln_{}_{}", i, j)
}

/// The unscaled entry `u_ij = L_ij d_j` of column `j`, before the division by the pivot.
fn u(i: usize, j: usize) -> Ident {
    format_ident!("__u_{}_{}", i, j)
}

/// Returns `start − Σ x_k y_k` over `terms` in their order, as the runtime's kernels compute
/// it: one `mul_add(−x, y, ·)` per term (fused where the target has FMA).
fn subtract_products(start: TokenStream, terms: Vec<(Ident, Ident)>) -> TokenStream {
    let rt = runtime();
    terms.into_iter().fold(
        start,
        |acc, (x, y)| quote!(#rt::fma::mul_add(-#x, #y, #acc)),
    )
}

/// Returns the test that every one of `values` is finite, as groups of four tests `x · 0 == 0`
/// (the runtime's `all_finite`) joined by `&` and the groups by `&&`: LLVM vectorizes a group
/// into one 256-bit compare, but fuses longer runs into 512-bit instructions where the target
/// has AVX-512, and those made the `-C target-cpu=native` build of a SPOOK step twice as slow
/// as the portable one.
fn all_finite_by_fours<T: quote::ToTokens>(values: impl IntoIterator<Item = T>) -> TokenStream {
    let values: Vec<T> = values.into_iter().collect();
    let groups = values
        .chunks(4)
        .map(|group| quote!((true #(& (#group * 0.0 == 0.0))*)));
    quote!(true #(&& #groups)*)
}

/// Returns the statements that factor the symmetric `A = L D Lᵀ` (entries `a(i, j)`, `i ≥ j`,
/// on the block pattern of `factor`) and solve `A x = b` (entries `b(i)`) into
/// `__x_0 … __x_{n−1}`: a left-looking block `LDLᵀ` with the pivot blocks of `factor`, without
/// the structural zeros. With `u_ik` the entry `(i, k)` updated by the blocks before `k`'s (for
/// a `1 × 1` pivot `u_ik = L_ik d_k`, for a `2 × 2` pivot `U_iJ = L_iJ D_J`):
///
/// ```text
/// u_ij = A_ij − Σ_k L_ik u_jk   (k in earlier blocks; i ≥ j, the pivots on the diagonal)
/// 1 × 1:  L_ij = u_ij · (1/d_j)
/// 2 × 2:  [L_is L_it] = [r u_is − q u_it,  p u_it − q u_is] · 1/(pr − q²),  [p q; q r] = D_J
/// y_i  = b_i − Σ_k L_ik y_k,    z_J = D_J⁻¹ y_J,    x_k = z_k − Σ_i L_ik x_i
/// ```
///
/// with `k` ascending in the sums of the factorization and the forward substitution and `i`
/// descending in the back substitution. With only `1 × 1` pivots these are the runtime's
/// root-free Cholesky (`linalg::Cholesky`) and its substitutions, step for step. A pivot that
/// is not finite or not above `__tolerance · |A_jj|` (a local the caller defines; for a
/// `2 × 2` pivot, `p` and `pr − q² > __tolerance · |A_tt| · p`) returns `Declined` from the
/// enclosing function.
///
/// A block `J` that `factor` defers ([`Factor::defer_where_faster`]) is factored scaled by its
/// one predecessor's determinant `det_K`, from `K`'s numerators `ln_iK = L_iK · det_K`: its
/// entries `u'_ij = det_K A_ij − Σ_k ln_ik u_jk` (`__us`), pivot and `y'_j` (`__ys`) carry the
/// factor `det_K`, which cancels in `L_iJ` and `z_J` (the same formulas on the scaled values),
/// and its tests are the same tests with their bounds times `det_K`; the `u` and `y` that later
/// blocks read are `u'`, `y'` times `1/det_K`.
fn ldlt_solve(
    order: &[usize],
    factor: &Factor,
    a: &dyn Fn(usize, usize) -> TokenStream,
    b: &dyn Fn(usize) -> TokenStream,
    rt_solve: &TokenStream,
) -> TokenStream {
    let n = order.len();
    // Entry (i, j) and b_i of the permuted system P A Pᵀ (P b), from the lower triangle of A.
    let a = |i: usize, j: usize| {
        let (p, q) = (order[i], order[j]);
        a(p.max(q), p.min(q))
    };
    let b = |i: usize| b(order[i]);
    let rt = runtime();
    // The forward substitution and the scaling of a block's rows are emitted right after its
    // pivot, where their operands are ready: the same operations in the same order as after
    // the whole factorization, but the compiler sees them beside the factorization (which
    // splits into a block per pivot test), so their chain overlaps it and `b` dies early.
    // `start − Σ_k L_ik u_jk`, or with the numerators `ln_ik = L_ik · det_K` of a deferred
    // block's single predecessor `K` in place of `L_ik`.
    let updated = |i: usize, j: usize, start: TokenStream, numerators: bool| {
        let factor_of = if numerators { ln } else { l };
        subtract_products(
            start,
            factor
                .common(i, j)
                .into_iter()
                .map(|k| (factor_of(i, k), u(j, k)))
                .collect(),
        )
    };
    // `y_j = b_j − Σ_k L_jk y_k` from `start = b_j`, or with the numerators as in `updated`.
    let forward = |j: usize, start: TokenStream, numerators: bool| {
        let factor_of = if numerators { ln } else { l };
        subtract_products(
            start,
            factor.rows[j]
                .iter()
                .map(|&k| (factor_of(j, k), format_ident!("__y_{}", k)))
                .collect(),
        )
    };
    let ident = |name: &str, j: usize| format_ident!("__{}_{}", name, j);
    // Per block deferred by `K` ([`Factor::defer_where_faster`]): `K`'s determinant (or pivot)
    // `det_K` and its reciprocal `i_K`.
    let deferred: Vec<Option<(Ident, Ident)>> = factor
        .deferred
        .iter()
        .map(|by| {
            by.map(|k| {
                let (first, size) = factor.blocks[k];
                let det = if size == 1 { "d" } else { "det" };
                (ident(det, first), ident("i", first))
            })
        })
        .collect();
    let mut factorization = Vec::new();
    for (&(s, size), by) in factor.blocks.iter().zip(&deferred) {
        let inverse = ident("i", s);
        // The block's updated entries, forward substitution and stored `u`: scaled by
        // `det_K` where the block is deferred (`us`, `ys`), with the true values for the
        // later blocks (`u`, `y`) one multiplication by `i_K` away.
        let scale = |start: TokenStream| match by {
            Some((det, _)) => quote!(#det * #start),
            None => start,
        };
        let (u_name, y_name) = if by.is_some() {
            ("us", "ys")
        } else {
            ("u", "y")
        };
        let own_u = |i: usize, j: usize| format_ident!("__{}_{}_{}", u_name, i, j);
        let own_y = |j: usize| ident(y_name, j);
        let bound = |start: TokenStream| match by {
            Some((det, _)) => quote!(#start * #det),
            None => start,
        };
        let unscale = |scaled: Ident, target: Ident| {
            by.as_ref()
                .map(|(_, inverse)| quote!(let #target: f64 = #scaled * #inverse;))
        };
        if size == 1 {
            let (d, y, z) = (ident("d", s), own_y(s), ident("z", s));
            let (diagonal, pivot, forward) = (
                a(s, s),
                updated(s, s, scale(quote!(__a)), by.is_some()),
                forward(s, scale(b(s)), by.is_some()),
            );
            let test = bound(quote!(__tolerance * __a.abs()));
            let true_y = unscale(y.clone(), ident("y", s));
            factorization.push(quote! {
                let __a: f64 = #diagonal;
                let #d: f64 = #pivot;
                if !(#d > #test && #d < f64::INFINITY) {
                    return #rt_solve::Declined;
                }
                let #inverse = 1.0 / #d;
                let #y: f64 = #forward;
                let #z: f64 = #y * #inverse;
                #true_y
            });
        } else {
            // The 2 × 2 pivot [p q; q r] = [d_s q_s; q_s d_t], t = s + 1, through its
            // determinant: D⁻¹ = [r −q; −q p] / (pr − q²). Its test is the scalar pivots'
            // (p, then r − q²/p) on the same scale: p > tol·|A_ss|, pr − q² > tol·|A_tt|·p.
            let t = s + 1;
            let (p, q, r) = (ident("d", s), ident("q", s), ident("d", t));
            let (det, ys, yt, zs, zt) = (
                ident("det", s),
                own_y(s),
                own_y(t),
                ident("z", s),
                ident("z", t),
            );
            let (first, second) = (a(s, s), a(t, t));
            let (p_value, r_value, q_value) = (
                updated(s, s, scale(quote!(__a)), by.is_some()),
                updated(t, t, scale(quote!(__b)), by.is_some()),
                updated(t, s, scale(a(t, s)), by.is_some()),
            );
            let (forward_s, forward_t) = (
                forward(s, scale(b(s)), by.is_some()),
                forward(t, scale(b(t)), by.is_some()),
            );
            let (test_p, test_det) = (
                bound(quote!(__tolerance * __a.abs())),
                bound(quote!(__tolerance * __b.abs() * #p)),
            );
            let (true_ys, true_yt) = (
                unscale(ys.clone(), ident("y", s)),
                unscale(yt.clone(), ident("y", t)),
            );
            factorization.push(quote! {
                let __a: f64 = #first;
                let __b: f64 = #second;
                let #p: f64 = #p_value;
                let #r: f64 = #r_value;
                let #q: f64 = #q_value;
                let #det: f64 = #rt::fma::mul_add(-#q, #q, #p * #r);
                if !(#p > #test_p
                    && #p < f64::INFINITY
                    && #det > #test_det
                    && #det < f64::INFINITY)
                {
                    return #rt_solve::Declined;
                }
                let #inverse = 1.0 / #det;
                let #ys: f64 = #forward_s;
                let #yt: f64 = #forward_t;
                let #zs: f64 = #rt::fma::mul_add(-#q, #yt, #r * #ys) * #inverse;
                let #zt: f64 = #rt::fma::mul_add(-#q, #ys, #p * #yt) * #inverse;
                #true_ys
                #true_yt
            });
        }
        for j in s..s + size {
            for &i in &factor.unscaled[j] {
                let (stored, value) = (own_u(i, j), updated(i, j, scale(a(i, j)), by.is_some()));
                factorization.push(quote!(let #stored: f64 = #value;));
                factorization.extend(unscale(stored, u(i, j)));
            }
        }
        for j in s..s + size {
            for &i in &factor.columns[j] {
                let (target, numerator) = (l(i, j), ln(i, j));
                let has = |k: usize| factor.unscaled[k].binary_search(&i).is_ok();
                let value = if size == 1 {
                    let stored = own_u(i, j);
                    quote!(#stored)
                } else {
                    // L_iJ = U_iJ D⁻¹: (r u_is − q u_it) for column s, (p u_it − q u_is) for t.
                    let (own, other, diagonal, q) = if j == s {
                        (s, s + 1, ident("d", s + 1), ident("q", s))
                    } else {
                        (s + 1, s, ident("d", s), ident("q", s))
                    };
                    let (u_own, u_other) = (own_u(i, own), own_u(i, other));
                    match (has(own), has(other)) {
                        (true, true) => {
                            quote!(#rt::fma::mul_add(-#q, #u_other, #diagonal * #u_own))
                        }
                        (true, false) => quote!((#diagonal * #u_own)),
                        (false, true) => quote!((-#q * #u_other)),
                        (false, false) => quote!(0.0f64),
                    }
                };
                factorization.push(quote! {
                    let #numerator: f64 = #value;
                    let #target: f64 = #numerator * #inverse;
                });
            }
        }
    }
    let back = (0..n).rev().map(|k| {
        let (x, z) = (format_ident!("__xp_{}", k), format_ident!("__z_{}", k));
        let value = subtract_products(
            quote!(#z),
            factor.columns[k]
                .iter()
                .rev()
                .map(|&i| (l(i, k), format_ident!("__xp_{}", i)))
                .collect(),
        );
        quote!(let #x: f64 = #value;)
    });
    let unpermute = order.iter().enumerate().map(|(k, &unknown)| {
        let (x, xp) = (
            format_ident!("__x_{}", unknown),
            format_ident!("__xp_{}", k),
        );
        quote!(let #x: f64 = #xp;)
    });
    quote! {
        #(#factorization)*
        #(#back)*
        #(#unpermute)*
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

    /// Returns, row by row, the columns where the Jacobian `jacobian` (rows × `n`) has a
    /// structural nonzero.
    fn jacobian_pattern(&self, jacobian: &[Vec<Id>], n: usize) -> Vec<Vec<usize>> {
        let store = self.store();
        jacobian
            .iter()
            .map(|row| (0..n).filter(|&j| !store.is_zero(row[j])).collect())
            .collect()
    }

    /// Returns the body of `Holonomic::spook_solve` for a constant diagonal mass matrix and a
    /// Jacobian with the structural nonzeros of `jacobian` (rows × `n`): [`schur_solve`] on the
    /// values that come in as `mass`, `jac`, `r`, `sigma` and `rhs` (nothing is evaluated
    /// again), then `v` and `lambda` written if every unknown is finite.
    pub(super) fn spook_solve(&self, jacobian: &[Vec<Id>], n: usize) -> TokenStream {
        let rows = jacobian.len();
        let rt = runtime();
        let rt_solve = quote!(#rt::GeneratedSolve);
        let lit = Literal::usize_unsuffixed;
        let pattern = self.jacobian_pattern(jacobian, n);
        let solve = schur_solve(
            &pattern,
            n,
            &SchurInputs {
                mass: &|j| {
                    let j = lit(j);
                    quote!(mass[(#j, #j)])
                },
                jac: &|a, j| {
                    let (a, j) = (lit(a), lit(j));
                    quote!(jac[(#a, #j)])
                },
                r: &|j| {
                    let j = lit(j);
                    quote!(r[#j])
                },
                sigma: &|a| {
                    let a = lit(a);
                    quote!(sigma[#a])
                },
                rhs: &|a| {
                    let a = lit(a);
                    quote!(rhs[#a])
                },
            },
            &rt_solve,
        );
        let vs: Vec<Ident> = (0..n).map(|j| format_ident!("__v_{}", j)).collect();
        let xs: Vec<Ident> = (0..rows).map(|a| format_ident!("__x_{}", a)).collect();
        let (v_index, x_index) = ((0..n).map(lit), (0..rows).map(lit));
        quote! {
            #solve
            if !(true #(&& #vs.is_finite())* #(&& #xs.is_finite())*) {
                return #rt_solve::Declined;
            }
            #(v[#v_index] = #vs;)*
            #(lambda[#x_index] = #xs;)*
            #rt_solve::Solved
        }
    }

    /// Returns the body of `Holonomic::spook_step` for a constant diagonal mass matrix: the
    /// generic SPOOK step (`DenseSpook`'s `evaluate`, `solve` and `configuration_after`) in
    /// one function, with its operations in its order.
    ///
    /// `M`, `∇V`, the applied force `f` (dissipation and `forces`, where the model has them),
    /// `g` and `G` at `(q_k, v_k, t_k)` come from one emission, so that they share their
    /// subexpressions; then `r = M v − h ∇V + h f`, `G v` (a multiply-add per structural
    /// nonzero, from zero, as the generic `mat_vec`) and `t` (`spook_rhs`), [`schur_solve`],
    /// `q_{k+1} = q + h v_{k+1}`, the row norms `|Gᵢ|₁`, and `g` at `(q_{k+1}, t + h)` from a
    /// second emission in a block where `q` and `t` name the new configuration and time, then
    /// the divergence guard (`DivergenceGuard::accepts`). `Declined` on a pivot of
    /// [`schur_solve`], any non-finite output or a rejection by the guard, before `q`, `v` and
    /// `lambda` are written.
    pub(super) fn spook_step(&self, derived: &Derived) -> TokenStream {
        let (n, rows) = (self.model.dof(), derived.jacobian.len());
        let rt = runtime();
        let rt_solve = quote!(#rt::GeneratedSolve);
        let lit = Literal::usize_unsuffixed;
        let pattern = self.jacobian_pattern(&derived.jacobian, n);
        // The slot of each structural nonzero of G in `__jac`, row by row.
        let slots: Vec<(usize, usize)> = pattern
            .iter()
            .enumerate()
            .flat_map(|(a, row)| row.iter().map(move |&j| (a, j)))
            .collect();
        let slot = |a: usize, j: usize| -> TokenStream {
            let k = lit(slots.iter().position(|&e| e == (a, j)).unwrap_or(0));
            quote!(__jac[#k])
        };
        let (mass, grad, g, jac) = (quote!(__m), quote!(__grad), quote!(__g), quote!(__jac));
        let (dissipation, forces) = (quote!(__fd), quote!(__ff));
        let diagonal: Vec<Id> = (0..n).map(|j| derived.mass[j][j]).collect();
        let mut outputs = self.vector(&mass, &diagonal);
        outputs.extend(self.vector(&grad, &derived.potential.gradient));
        outputs.extend(self.vector(&g, &derived.constraints));
        outputs.extend(slots.iter().map(|&(a, j)| Output {
            target: slot(a, j),
            value: derived.jacobian[a][j],
        }));
        if let Some(d) = &derived.dissipation {
            outputs.extend(self.vector(&dissipation, &d.value));
        }
        if let Some(f) = &derived.forces {
            outputs.extend(self.vector(&forces, &f.value));
        }
        let evaluate = self.body(outputs, &[]);
        // f as the generic `applied_force` sums it: the dissipative force, then `forces`.
        let force = |j: usize| -> Option<TokenStream> {
            let j = lit(j);
            match (&derived.dissipation, &derived.forces) {
                (Some(_), Some(_)) => Some(quote!((#dissipation[#j] + #forces[#j]))),
                (Some(_), None) => Some(quote!(#dissipation[#j])),
                (None, Some(_)) => Some(quote!(#forces[#j])),
                (None, None) => None,
            }
        };
        let r = (0..n).map(|j| {
            let (target, jl) = (format_ident!("__r_{}", j), lit(j));
            let applied = force(j).map(|f| quote!(+ #f * h));
            quote!(let #target: f64 = #mass[#jl] * v[#jl] - #grad[#jl] * h #applied;)
        });
        let rhs = (0..rows).map(|a| {
            let (target, al) = (format_ident!("__t_{}", a), lit(a));
            let jac_v = pattern[a].iter().fold(quote!(0.0f64), |acc, &j| {
                let (entry, jl) = (slot(a, j), lit(j));
                quote!(#rt::fma::mul_add(#entry, v[#jl], #acc))
            });
            quote! {
                let #target: f64 =
                    #rt::model::spook_rhs(
                        coefficients.upsilon[#al], #jac_v, #g[#al], coefficients.four_over_h,
                    );
            }
        });
        let solve = schur_solve(
            &pattern,
            n,
            &SchurInputs {
                mass: &|j| {
                    let j = lit(j);
                    quote!(#mass[#j])
                },
                jac: &slot,
                r: &|j| {
                    let r = format_ident!("__r_{}", j);
                    quote!(#r)
                },
                sigma: &|a| {
                    let a = lit(a);
                    quote!(coefficients.sigma[#a])
                },
                rhs: &|a| {
                    let t = format_ident!("__t_{}", a);
                    quote!(#t)
                },
            },
            &rt_solve,
        );
        let vs: Vec<Ident> = (0..n).map(|j| format_ident!("__v_{}", j)).collect();
        let xs: Vec<Ident> = (0..rows).map(|a| format_ident!("__x_{}", a)).collect();
        let q_next: Vec<Ident> = (0..n).map(|j| format_ident!("__qn_{}", j)).collect();
        let norms: Vec<Ident> = (0..rows).map(|a| format_ident!("__n_{}", a)).collect();
        let norm_values = pattern.iter().enumerate().map(|(a, row)| {
            let entries = row.iter().map(|&j| slot(a, j));
            quote!(0.0f64 #(+ #entries.abs())*)
        });
        let g_next = quote!(__gn);
        let evaluate_next = self.body(self.vector(&g_next, &derived.constraints), &[]);
        let (size, count, nonzeros) = (lit(n), lit(rows), lit(slots.len()));
        let indices = (0..n).map(lit);
        let applied = [
            derived.dissipation.as_ref().map(|_| &dissipation),
            derived.forces.as_ref().map(|_| &forces),
        ];
        let applied = applied.iter().flatten();
        let entries = |array: &TokenStream, count: usize| -> Vec<TokenStream> {
            (0..count)
                .map(|a| {
                    let a = lit(a);
                    quote!(#array[#a])
                })
                .collect()
        };
        let finite = all_finite_by_fours(
            vs.iter()
                .chain(&xs)
                .chain(&q_next)
                .chain(&norms)
                .map(|value| quote!(#value))
                .chain(entries(&g, rows))
                .chain(entries(&g_next, rows)),
        );
        quote! {
            let mut #mass = [0.0f64; #size];
            let mut #grad = [0.0f64; #size];
            let mut #g = [0.0f64; #count];
            let mut #jac = [0.0f64; #nonzeros];
            #(let mut #applied = [0.0f64; #size];)*
            #evaluate
            #(#r)*
            #(#rhs)*
            #solve
            #(let #q_next: f64 = q[#indices] + #vs * h;)*
            #(let #norms: f64 = #norm_values;)*
            let __q_next = [#(#q_next),*];
            let mut #g_next = [0.0f64; #count];
            {
                let q = &__q_next;
                let t = t + h;
                #evaluate_next
            }
            if !(#finite) {
                return #rt_solve::Declined;
            }
            if !guard.accepts(q.as_slice(), &__q_next, &#g, &[#(#norms),*], &#g_next) {
                return #rt_solve::Declined;
            }
            *q = #rt::SVector::from(__q_next);
            *v = #rt::SVector::from([#(#vs),*]);
            *lambda = #rt::SVector::from([#(#xs),*]);
            #rt_solve::Solved
        }
    }
}

/// Where [`schur_solve`] reads its inputs: each an expression of the generated code for the
/// given indices.
struct SchurInputs<'a> {
    /// `M_jj` of the constant diagonal mass matrix.
    mass: &'a dyn Fn(usize) -> TokenStream,
    /// `G_aj`, at a structural nonzero of the Jacobian.
    jac: &'a dyn Fn(usize, usize) -> TokenStream,
    /// `r_j = (M v_k − h ∇V + h f)_j`.
    r: &'a dyn Fn(usize) -> TokenStream,
    /// `Σ_aa`.
    sigma: &'a dyn Fn(usize) -> TokenStream,
    /// `t_a` of eq. 29.
    rhs: &'a dyn Fn(usize) -> TokenStream,
}

/// Returns the statements that solve SPOOK's eq. 29 without nonholonomic rows through the Schur
/// complement of eq. 30 for a constant diagonal `M` and a Jacobian with the structural nonzeros
/// `pattern` (columns per row, `n` coordinates), into `__v_0 … __v_{n−1}` (`v_{k+1}`) and
/// `__x_0 …` (`λ`): the generic Cholesky of the diagonal `M` (its pivots, with their test),
/// `M⁻¹ Gᵀ` row by row, `S = G M⁻¹ Gᵀ + Σ` on its nonzeros, an `LDLᵀ` of `S` unrolled over them
/// and their fill ([`ldlt_solve`]), `λ = S⁻¹ (t − G M⁻¹ r)` and `v = M⁻¹ r + M⁻¹ Gᵀ λ` —
/// `DenseSpook`'s Schur complement without its structural zeros. A pivot that is not clearly
/// positive returns `Declined` from the enclosing function.
fn schur_solve(
    pattern: &[Vec<usize>],
    n: usize,
    inputs: &SchurInputs,
    rt_solve: &TokenStream,
) -> TokenStream {
    let rows = pattern.len();
    let lit = Literal::usize_unsuffixed;
    // The generic Cholesky of the diagonal M: its pivots are the diagonal.
    let mass_pivots = (0..n).map(|j| {
        let (d, inverse, mass) = (
            format_ident!("__dm_{}", j),
            format_ident!("__im_{}", j),
            (inputs.mass)(j),
        );
        quote! {
            let #d: f64 = #mass;
            if !(#d > __tolerance_mass * #d.abs() && #d < f64::INFINITY) {
                return #rt_solve::Declined;
            }
            let #inverse = 1.0 / #d;
        }
    });
    let y = |a: usize, j: usize| format_ident!("__ym_{}_{}", a, j);
    let minv_jac = pattern.iter().enumerate().flat_map(|(a, row)| {
        row.iter().map(move |&j| {
            let (target, inverse, entry) =
                (y(a, j), format_ident!("__im_{}", j), (inputs.jac)(a, j));
            quote!(let #target: f64 = #entry * #inverse;)
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
            let target = s(a, b);
            let terms: Vec<TokenStream> = common(a, b)
                .into_iter()
                .map(|j| {
                    let (entry, yb) = ((inputs.jac)(a, j), y(b, j));
                    quote!(#entry * #yb)
                })
                .collect();
            let sum = if terms.is_empty() {
                quote!(0.0f64)
            } else {
                quote!(#(#terms)+*)
            };
            if a == b {
                let sigma = (inputs.sigma)(a);
                quote!(let #target: f64 = #sum + #sigma;)
            } else {
                quote!(let #target: f64 = #sum;)
            }
        });
    let (order, factor) = elimination_order(rows, &lower);
    let entry = |a: usize, b: usize| -> TokenStream {
        if a == b || lower.contains(&(a, b)) {
            let target = s(a, b);
            quote!(#target)
        } else {
            quote!(0.0f64)
        }
    };
    let minv_r = (0..n).map(|j| {
        let (target, inverse, r) = (
            format_ident!("__mr_{}", j),
            format_ident!("__im_{}", j),
            (inputs.r)(j),
        );
        quote!(let #target: f64 = #r * #inverse;)
    });
    let b = |a: usize| -> TokenStream {
        let rhs = (inputs.rhs)(a);
        let terms = pattern[a].iter().map(|&j| {
            let (entry, mr) = ((inputs.jac)(a, j), format_ident!("__mr_{}", j));
            quote!(- #entry * #mr)
        });
        quote!((#rhs #(#terms)*))
    };
    let solve = ldlt_solve(&order, &factor, &entry, &b, rt_solve);
    let velocity = (0..n).map(|j| {
        let (target, mr) = (format_ident!("__v_{}", j), format_ident!("__mr_{}", j));
        let terms = (0..rows).filter(|&a| pattern[a].contains(&j)).map(|a| {
            let (ya, x) = (y(a, j), format_ident!("__x_{}", a));
            quote!(+ #ya * #x)
        });
        quote!(let #target: f64 = #mr #(#terms)*;)
    });
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
    }
}
