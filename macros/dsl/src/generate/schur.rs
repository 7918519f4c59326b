//! The Schur complement `S = G M⁻¹ Gᵀ + Σ` of SPOOK's eq. 30 (Lacoursière 2007) for a
//! constant diagonal `M`, unrolled over the Jacobian's structural nonzeros and their fill: the
//! solve of eq. 29 without nonholonomic rows that the specialized step (`spook.rs`) and its
//! Jacobian (`spook_jacobian.rs`) emit.

use std::collections::BTreeSet;

use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};

use super::ldlt::{ldlt_factor, ldlt_solve, ldlt_substitute};
use super::ordering::elimination_order;

/// Where [`schur_solve`] reads its inputs: each an expression of the generated code for the
/// given indices.
pub(super) struct SchurInputs<'a> {
    /// `M_jj` of the constant diagonal mass matrix.
    pub mass: &'a dyn Fn(usize) -> TokenStream,
    /// `G_aj`, at a structural nonzero of the Jacobian.
    pub jac: &'a dyn Fn(usize, usize) -> TokenStream,
    /// `r_j = (M v_k − h ∇V + h f)_j`.
    pub r: &'a dyn Fn(usize) -> TokenStream,
    /// `Σ_aa`.
    pub sigma: &'a dyn Fn(usize) -> TokenStream,
    /// `t_a` of eq. 29.
    pub rhs: &'a dyn Fn(usize) -> TokenStream,
}

/// Returns the statements that solve SPOOK's eq. 29 without nonholonomic rows through the Schur
/// complement of eq. 30 for a constant diagonal `M` and a Jacobian with the structural nonzeros
/// `pattern` (columns per row, `n` coordinates), into `__v_0 … __v_{n−1}` (`v_{k+1}`) and
/// `__x_0 …` (`λ`): the generic Cholesky of the diagonal `M` (its pivots, with their test),
/// `M⁻¹ Gᵀ` row by row, `S = G M⁻¹ Gᵀ + Σ` on its nonzeros, an `LDLᵀ` of `S` unrolled over them
/// and their fill ([`ldlt_solve`]), `λ = S⁻¹ (t − G M⁻¹ r)` and `v = M⁻¹ r + M⁻¹ Gᵀ λ` —
/// `SpookDense`'s Schur complement without its structural zeros. A pivot that is not clearly
/// positive returns `Declined` from the enclosing function.
pub(super) fn schur_solve(
    pattern: &[Vec<usize>],
    n: usize,
    inputs: &SchurInputs,
    rt_solve: &TokenStream,
) -> TokenStream {
    let schur = Schur::new(pattern, n);
    let (order, factor) = elimination_order(pattern.len(), &schur.lower);
    let prelude = schur.prelude(inputs, rt_solve);
    let (minv_r, velocity) = (schur.minv_r(inputs), schur.velocity());
    let solve = ldlt_solve(
        &order,
        &factor,
        &|a, b| schur.entry(a, b),
        &|a| schur.b(inputs, a),
        rt_solve,
    );
    quote! {
        #prelude
        #minv_r
        #solve
        #velocity
    }
}

/// [`schur_solve`]'s factorization alone (the same statements up to the `LDLᵀ`, whose
/// factor is not deferred: [`ldlt_factor`]) and its solve for one right-hand side, emitted
/// apart so that the caller solves for as many as it has with one factor: into `__v_j` and
/// `__x_a` as [`schur_solve`], with `inputs.r` and `inputs.rhs` read in the solve only.
pub(super) fn schur_factor_and_substitute(
    pattern: &[Vec<usize>],
    n: usize,
    inputs: &SchurInputs,
    rt_solve: &TokenStream,
) -> (TokenStream, TokenStream) {
    let schur = Schur::new(pattern, n);
    let (order, mut factor) = elimination_order(pattern.len(), &schur.lower);
    factor.deferred.fill(None);
    let prelude = schur.prelude(inputs, rt_solve);
    let entry = |a, b| schur.entry(a, b);
    let factorization = ldlt_factor(&order, &factor, &entry, rt_solve);
    let (minv_r, velocity) = (schur.minv_r(inputs), schur.velocity());
    let substitution = ldlt_substitute(&order, &factor, &|a| schur.b(inputs, a));
    (
        quote! {
            #prelude
            #factorization
        },
        quote! {
            #minv_r
            #substitution
            #velocity
        },
    )
}

/// The structure of `S = G M⁻¹ Gᵀ + Σ` for a Jacobian pattern, and the pieces of
/// [`schur_solve`] emitted from it.
struct Schur<'a> {
    pattern: &'a [Vec<usize>],
    n: usize,
    /// The structurally nonzero entries `(a, b)`, `a > b`, of `S`.
    lower: BTreeSet<(usize, usize)>,
}

impl<'a> Schur<'a> {
    fn new(pattern: &'a [Vec<usize>], n: usize) -> Self {
        let rows = pattern.len();
        let mut schur = Schur {
            pattern,
            n,
            lower: BTreeSet::new(),
        };
        schur.lower = (0..rows)
            .flat_map(|a| (0..a).map(move |b| (a, b)))
            .filter(|&(a, b)| !schur.common(a, b).is_empty())
            .collect();
        schur
    }

    /// The columns where rows `a` and `b` of `G` are both structurally nonzero.
    fn common(&self, a: usize, b: usize) -> Vec<usize> {
        self.pattern[a]
            .iter()
            .copied()
            .filter(|j| self.pattern[b].contains(j))
            .collect()
    }

    /// `(M⁻¹ Gᵀ)_ja`, as the local `__ym_a_j`.
    fn y(a: usize, j: usize) -> Ident {
        format_ident!("__ym_{}_{}", a, j)
    }

    /// `S_ab`, as the local `__s_a_b`.
    fn s(a: usize, b: usize) -> Ident {
        format_ident!("__s_{}_{}", a, b)
    }

    /// The entry `(a, b)`, `a ≥ b`, of `S`: its local, or zero.
    fn entry(&self, a: usize, b: usize) -> TokenStream {
        if a == b || self.lower.contains(&(a, b)) {
            let target = Self::s(a, b);
            quote!(#target)
        } else {
            quote!(0.0f64)
        }
    }

    /// The pivots of the diagonal `M` with their test, `M⁻¹ Gᵀ`, `S` on its nonzeros, and
    /// the tolerances of both factorizations.
    fn prelude(&self, inputs: &SchurInputs, rt_solve: &TokenStream) -> TokenStream {
        let (n, rows) = (self.n, self.pattern.len());
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
        let minv_jac = self.pattern.iter().enumerate().flat_map(|(a, row)| {
            row.iter().map(move |&j| {
                let (target, inverse, entry) = (
                    Self::y(a, j),
                    format_ident!("__im_{}", j),
                    (inputs.jac)(a, j),
                );
                quote!(let #target: f64 = #entry * #inverse;)
            })
        });
        let schur = (0..rows)
            .flat_map(|a| (0..=a).map(move |b| (a, b)))
            .filter(|&(a, b)| a == b || self.lower.contains(&(a, b)))
            .map(|(a, b)| {
                let target = Self::s(a, b);
                let terms: Vec<TokenStream> = self
                    .common(a, b)
                    .into_iter()
                    .map(|j| {
                        let (entry, yb) = ((inputs.jac)(a, j), Self::y(b, j));
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
        let (size, count) = (lit(n), lit(rows));
        quote! {
            let __tolerance_mass = (#size as f64) * f64::EPSILON;
            #(#mass_pivots)*
            #(#minv_jac)*
            #(#schur)*
            let __tolerance = (#count as f64) * f64::EPSILON;
        }
    }

    /// `M⁻¹ r`, as the locals `__mr_j`.
    fn minv_r(&self, inputs: &SchurInputs) -> TokenStream {
        let minv_r = (0..self.n).map(|j| {
            let (target, inverse, r) = (
                format_ident!("__mr_{}", j),
                format_ident!("__im_{}", j),
                (inputs.r)(j),
            );
            quote!(let #target: f64 = #r * #inverse;)
        });
        quote!(#(#minv_r)*)
    }

    /// `(t − G M⁻¹ r)_a`, the right-hand side of `S λ = …`.
    fn b(&self, inputs: &SchurInputs, a: usize) -> TokenStream {
        let rhs = (inputs.rhs)(a);
        let terms = self.pattern[a].iter().map(|&j| {
            let (entry, mr) = ((inputs.jac)(a, j), format_ident!("__mr_{}", j));
            quote!(- #entry * #mr)
        });
        quote!((#rhs #(#terms)*))
    }

    /// `v = M⁻¹ r + M⁻¹ Gᵀ λ`, as the locals `__v_j`.
    fn velocity(&self) -> TokenStream {
        let rows = self.pattern.len();
        let velocity = (0..self.n).map(|j| {
            let (target, mr) = (format_ident!("__v_{}", j), format_ident!("__mr_{}", j));
            let terms = (0..rows)
                .filter(|&a| self.pattern[a].contains(&j))
                .map(|a| {
                    let (ya, x) = (Self::y(a, j), format_ident!("__x_{}", a));
                    quote!(+ #ya * #x)
                });
            quote!(let #target: f64 = #mr #(#terms)*;)
        });
        quote!(#(#velocity)*)
    }
}
