//! The unrolled block `LDLᵀ` factorization and solve behind the linear solves specialized to
//! a model's structural nonzeros ([`ldlt_solve`]).
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
//! reciprocal (`factor::Factor::defer_where_faster`): the double pendulum's Z&Ss step then
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

use proc_macro2::{Ident, TokenStream};
use quote::{format_ident, quote};

use super::factor::Factor;
use super::runtime;

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
pub(super) fn all_finite_by_fours<T: quote::ToTokens>(
    values: impl IntoIterator<Item = T>,
) -> TokenStream {
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
pub(super) fn ldlt_solve(
    order: &[usize],
    factor: &Factor,
    a: &dyn Fn(usize, usize) -> TokenStream,
    b: &dyn Fn(usize) -> TokenStream,
    rt_solve: &TokenStream,
) -> TokenStream {
    let factorization = factorization(order, factor, a, Some(b), rt_solve);
    let back = back_substitution(order, factor);
    quote! {
        #factorization
        #back
    }
}

/// Returns the statements of [`ldlt_solve`]'s factorization alone, for a `factor` without
/// deferred blocks: the pivots (with their tests), `L` and the inverses `__i_s` of the pivots
/// (of the determinants of `2 × 2` pivots), which [`ldlt_substitute`] then solves with for as
/// many right-hand sides as the caller has.
pub(super) fn ldlt_factor(
    order: &[usize],
    factor: &Factor,
    a: &dyn Fn(usize, usize) -> TokenStream,
    rt_solve: &TokenStream,
) -> TokenStream {
    debug_assert!(factor.deferred.iter().all(Option::is_none));
    factorization(order, factor, a, None, rt_solve)
}

/// Returns the statements that solve `A x = b` (entries `b(i)`) into `__x_0 … __x_{n−1}` with
/// the factor [`ldlt_factor`] emitted before them: the forward substitution, `z_J = D_J⁻¹ y_J`
/// and the back substitution, as [`ldlt_solve`] does them.
pub(super) fn ldlt_substitute(
    order: &[usize],
    factor: &Factor,
    b: &dyn Fn(usize) -> TokenStream,
) -> TokenStream {
    debug_assert!(factor.deferred.iter().all(Option::is_none));
    let forward = factor.blocks.iter().map(|&(s, size)| {
        let rhs = |j: usize| forward_update(factor, j, b(order[j]), false);
        let second = (size == 2).then(|| rhs(s + 1));
        pivot_solve(s, rhs(s), second, &|j| format_ident!("__y_{}", j))
    });
    let back = back_substitution(order, factor);
    quote! {
        #(#forward)*
        #back
    }
}

/// Returns `y` (from `forward_s`, and `forward_t` for a `2 × 2` pivot) and `z_J = D_J⁻¹ y_J`
/// of the block starting at `s`, whose pivots are `__d_s` (`1 × 1`; its inverse `__i_s`) or
/// `[p q; q r] = [__d_s __q_s; __q_s __d_t]` (`2 × 2`, `t = s + 1`; `__i_s = 1/(pr − q²)`):
/// `y` named by `own_y`, `z` as `__z_s` (and `__z_t`).
fn pivot_solve(
    s: usize,
    forward_s: TokenStream,
    forward_t: Option<TokenStream>,
    own_y: &dyn Fn(usize) -> Ident,
) -> TokenStream {
    let ident = |name: &str, j: usize| format_ident!("__{}_{}", name, j);
    let inverse = ident("i", s);
    let Some(forward_t) = forward_t else {
        let (y, z) = (own_y(s), ident("z", s));
        return quote! {
            let #y: f64 = #forward_s;
            let #z: f64 = #y * #inverse;
        };
    };
    let rt = runtime();
    let t = s + 1;
    let (p, q, r) = (ident("d", s), ident("q", s), ident("d", t));
    let (ys, yt, zs, zt) = (own_y(s), own_y(t), ident("z", s), ident("z", t));
    quote! {
        let #ys: f64 = #forward_s;
        let #yt: f64 = #forward_t;
        let #zs: f64 = #rt::fma::mul_add(-#q, #yt, #r * #ys) * #inverse;
        let #zt: f64 = #rt::fma::mul_add(-#q, #ys, #p * #yt) * #inverse;
    }
}

/// Returns `y_j = b_j − Σ_k L_jk y_k` from `start = b_j`, or with the numerators
/// `ln_jk = L_jk · det_K` of a deferred block's single predecessor `K` in place of `L_jk`.
fn forward_update(factor: &Factor, j: usize, start: TokenStream, numerators: bool) -> TokenStream {
    let factor_of = if numerators { ln } else { l };
    subtract_products(
        start,
        factor.rows[j]
            .iter()
            .map(|&k| (factor_of(j, k), format_ident!("__y_{}", k)))
            .collect(),
    )
}

/// The factorization of [`ldlt_solve`], with its forward substitution and `z = D⁻¹ y`
/// interleaved where `b` is given (see there).
fn factorization(
    order: &[usize],
    factor: &Factor,
    a: &dyn Fn(usize, usize) -> TokenStream,
    b: Option<&dyn Fn(usize) -> TokenStream>,
    rt_solve: &TokenStream,
) -> TokenStream {
    // Entry (i, j) and b_i of the permuted system P A Pᵀ (P b), from the lower triangle of A.
    let a = |i: usize, j: usize| {
        let (p, q) = (order[i], order[j]);
        a(p.max(q), p.min(q))
    };
    let b = |i: usize| b.map(|b| b(order[i]));
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
            let d = ident("d", s);
            let (diagonal, pivot) = (a(s, s), updated(s, s, scale(quote!(__a)), by.is_some()));
            let test = bound(quote!(__tolerance * __a.abs()));
            let solve = b(s).map(|b_s| {
                let forward = forward_update(factor, s, scale(b_s), by.is_some());
                let solve = pivot_solve(s, forward, None, &own_y);
                let true_y = unscale(own_y(s), ident("y", s));
                quote!(#solve #true_y)
            });
            factorization.push(quote! {
                let __a: f64 = #diagonal;
                let #d: f64 = #pivot;
                if !(#d > #test && #d < f64::INFINITY) {
                    return #rt_solve::Declined;
                }
                let #inverse = 1.0 / #d;
                #solve
            });
        } else {
            // The 2 × 2 pivot [p q; q r] = [d_s q_s; q_s d_t], t = s + 1, through its
            // determinant: D⁻¹ = [r −q; −q p] / (pr − q²). Its test is the scalar pivots'
            // (p, then r − q²/p) on the same scale: p > tol·|A_ss|, pr − q² > tol·|A_tt|·p.
            let t = s + 1;
            let (p, q, r, det) = (ident("d", s), ident("q", s), ident("d", t), ident("det", s));
            let (first, second) = (a(s, s), a(t, t));
            let (p_value, r_value, q_value) = (
                updated(s, s, scale(quote!(__a)), by.is_some()),
                updated(t, t, scale(quote!(__b)), by.is_some()),
                updated(t, s, scale(a(t, s)), by.is_some()),
            );
            let (test_p, test_det) = (
                bound(quote!(__tolerance * __a.abs())),
                bound(quote!(__tolerance * __b.abs() * #p)),
            );
            let solve = b(s).zip(b(t)).map(|(b_s, b_t)| {
                let (forward_s, forward_t) = (
                    forward_update(factor, s, scale(b_s), by.is_some()),
                    forward_update(factor, t, scale(b_t), by.is_some()),
                );
                let solve = pivot_solve(s, forward_s, Some(forward_t), &own_y);
                let (true_ys, true_yt) = (
                    unscale(own_y(s), ident("y", s)),
                    unscale(own_y(t), ident("y", t)),
                );
                quote!(#solve #true_ys #true_yt)
            });
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
                #solve
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
    quote!(#(#factorization)*)
}

/// Returns the back substitution `x_k = z_k − Σ_i L_ik x_i` (`i` descending) of
/// [`ldlt_solve`] and the unpermuted unknowns `__x_0 … __x_{n−1}`.
fn back_substitution(order: &[usize], factor: &Factor) -> TokenStream {
    let n = order.len();
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
        #(#back)*
        #(#unpermute)*
    }
}
