//! SPOOK's state Jacobian specialized to a model's structural nonzeros, emitted as
//! `HolonomicHessians::spook_velocity_jacobian` beside the specialized step (`spook.rs`): eq. 29
//! differentiated as the runtime's `spook/jacobian.rs` derives it, with [`Schur`]'s `LDLᵀ`
//! factored once and solved for the `2N` directions.

use mechanism_cas::{Id, Output};
use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};

use super::ldlt::all_finite_by_fours;
use super::schur::{schur_factor_and_substitute, SchurInputs};
use super::{runtime, Code};
use crate::derive::Derived;

impl Code<'_> {
    /// Returns the body of `HolonomicHessians::spook_velocity_jacobian` for a model whose SPOOK
    /// step is generated ([`spook_step`](Self::spook_step)), or `None` without the second
    /// derivatives it needs (`derivatives: [step_jacobians]`): the step's Jacobian
    /// `∂v_{k+1}/∂(q_k, v_k)` as the runtime's `spook/jacobian.rs` derives it from eq. 29,
    ///
    /// ```text
    /// r′ = (M + h f_v) δv + (−h ∇²V + h f_q + H_g(λ)) δq
    /// t′ = Υ G δv + (Υ C(v) − (4/h) Υ G − C(v')) δq
    /// ```
    ///
    /// (`H_g(λ) = Σ_c λ_c ∇²g_c`, row `c` of `C(w)` is `(∇²g_c w)ᵀ`), solved for the `2N` unit
    /// directions with one factor of the step's matrix. The model's values at `(q_k, v_k, t_k)`
    /// come from one emission over their structural nonzeros; the right-hand sides are four
    /// small arrays (a direction per column) written on those nonzeros; [`Schur`]'s factor is
    /// emitted once and its solve once, inside a loop over the `2N` columns. A pivot that is
    /// not clearly positive or a non-finite entry returns `Declined`, and the runtime's generic
    /// Jacobian then runs (and names the culprit).
    pub(super) fn spook_velocity_jacobian(&self, derived: &Derived) -> Option<TokenStream> {
        let hessian = derived.potential.hessian.as_ref()?;
        let row_hessians = &derived.second_order.as_ref()?.constraint_hessians;
        let (n, rows) = (self.model.dof(), derived.jacobian.len());
        let rt = runtime();
        let rt_solve = quote!(#rt::GeneratedSolve);
        let lit = Literal::usize_unsuffixed;
        let store = self.store();
        let pattern = self.jacobian_pattern(&derived.jacobian, n);
        let mut outputs = Vec::new();
        // One array per quantity, holding its structural nonzeros; `entry(k, i, j)` reads
        // quantity `k`'s `(i, j)`, or `None` where it is structurally zero.
        let mut slots: Vec<Vec<Option<TokenStream>>> = Vec::new();
        let mut arrays = Vec::new();
        let mut matrix = |name: String, values: &[Vec<Id>]| -> usize {
            let array = format_ident!("{}", name);
            let mut count = 0usize;
            let width = values.first().map_or(0, Vec::len);
            let mut entries = vec![None; values.len() * width];
            for (i, row) in values.iter().enumerate() {
                for (j, &value) in row.iter().enumerate() {
                    if store.is_zero(value) {
                        continue;
                    }
                    let k = lit(count);
                    let target = quote!(#array[#k]);
                    entries[i * width + j] = Some(target.clone());
                    outputs.push(Output { target, value });
                    count += 1;
                }
            }
            let size = lit(count);
            arrays.push(quote!(let mut #array = [0.0f64; #size];));
            slots.push(entries);
            slots.len() - 1
        };
        let mass_diagonal: Vec<Vec<Id>> = (0..n).map(|j| vec![derived.mass[j][j]]).collect();
        let mass = matrix("__m".into(), &mass_diagonal);
        let jac = matrix("__jac".into(), &derived.jacobian);
        let potential = matrix("__hv".into(), hessian);
        let hessians: Vec<usize> = row_hessians
            .iter()
            .enumerate()
            .map(|(c, h)| matrix(format!("__hc{c}"), h))
            .collect();
        let applied: Vec<(usize, usize)> = [&derived.dissipation, &derived.forces]
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(k, f)| {
                (
                    matrix(format!("__fq{k}"), &f.dq),
                    matrix(format!("__fv{k}"), &f.dv),
                )
            })
            .collect();
        let width = |k: usize| if k == mass { 1 } else { n };
        let entry = |k: usize, i: usize, j: usize| slots[k][i * width(k) + j].clone();
        let evaluate = self.body(outputs, &[]);
        // (H_c w)_j for w = v and v', where row j of H_c has a nonzero.
        let along = |c: usize, j: usize, w: &TokenStream| -> Option<TokenStream> {
            let terms: Vec<TokenStream> = (0..n)
                .filter_map(|b| {
                    let entry = entry(hessians[c], j, b)?;
                    let b = lit(b);
                    Some(quote!(#entry * #w[#b]))
                })
                .collect();
            (!terms.is_empty()).then(|| quote!((#(#terms)+*)))
        };
        let mut fills = Vec::new();
        for j in 0..n {
            let jl = lit(j);
            for i in 0..n {
                let il = lit(i);
                // ∂r/∂q_j, entry i: −h ∇²V + h f_q + Σ_c λ_c ∇²g_c.
                let mut terms = Vec::new();
                if let Some(e) = entry(potential, i, j) {
                    terms.push(quote!(-(h * #e)));
                }
                for &(q_part, _) in &applied {
                    if let Some(e) = entry(q_part, i, j) {
                        terms.push(quote!(h * #e));
                    }
                }
                for (c, &k) in hessians.iter().enumerate() {
                    if let Some(e) = entry(k, i, j) {
                        let c = lit(c);
                        terms.push(quote!(lambda[#c] * #e));
                    }
                }
                if !terms.is_empty() {
                    fills.push(quote!(__rq[#jl][#il] = #(#terms)+*;));
                }
                // ∂r/∂v_j, entry i: M + h f_v.
                let mut terms = Vec::new();
                if i == j {
                    let m = entry(mass, i, 0).unwrap_or_else(|| quote!(0.0f64));
                    terms.push(quote!(#m));
                }
                for &(_, v_part) in &applied {
                    if let Some(e) = entry(v_part, i, j) {
                        terms.push(quote!(h * #e));
                    }
                }
                if !terms.is_empty() {
                    fills.push(quote!(__rv[#jl][#il] = #(#terms)+*;));
                }
            }
            for c in 0..rows {
                let cl = lit(c);
                let upsilon = quote!(coefficients.upsilon[#cl]);
                let g = entry(jac, c, j);
                // ∂t/∂q_j, entry c: Υ_c ((∇²g_c v)_j − (4/h) G_cj) − (∇²g_c v')_j.
                let (v_term, next) = (along(c, j, &quote!(v)), along(c, j, &quote!(v_next)));
                if v_term.is_some() || g.is_some() || next.is_some() {
                    let v_term = v_term.unwrap_or_else(|| quote!(0.0f64));
                    let g_term = g.as_ref().map(|g| quote!(- coefficients.four_over_h * #g));
                    let next = next.map(|w| quote!(- #w));
                    fills.push(quote!(__tq[#jl][#cl] = #upsilon * (#v_term #g_term) #next;));
                }
                // ∂t/∂v_j, entry c: Υ_c G_cj.
                if let Some(g) = g {
                    fills.push(quote!(__tv[#jl][#cl] = #upsilon * #g;));
                }
            }
        }
        let (factor, solve) = schur_factor_and_substitute(
            &pattern,
            n,
            &SchurInputs {
                mass: &|j| entry(mass, j, 0).unwrap_or_else(|| quote!(0.0f64)),
                jac: &|a, j| entry(jac, a, j).unwrap_or_else(|| quote!(0.0f64)),
                r: &|j| {
                    let j = lit(j);
                    quote!(__r[#j])
                },
                sigma: &|a| {
                    let a = lit(a);
                    quote!(coefficients.sigma[#a])
                },
                rhs: &|a| {
                    let a = lit(a);
                    quote!(__t[#a])
                },
            },
            &rt_solve,
        );
        let vs: Vec<Ident> = (0..n).map(|j| format_ident!("__v_{}", j)).collect();
        let finite = all_finite_by_fours(vs.iter().map(|v| quote!(#v)));
        let (size, count) = (lit(n), lit(rows));
        Some(quote! {
            #(#arrays)*
            #evaluate
            let mut __rq = [[0.0f64; #size]; #size];
            let mut __tq = [[0.0f64; #count]; #size];
            let mut __rv = [[0.0f64; #size]; #size];
            let mut __tv = [[0.0f64; #count]; #size];
            #(#fills)*
            #factor
            // One column of ∂v'/∂(q, v): eq. 29 solved for the right-hand side (r, t).
            let __solve = |__r: &[f64; #size], __t: &[f64; #count]| -> Option<[f64; #size]> {
                #solve
                (#finite).then_some([#(#vs),*])
            };
            let mut __vq = [[0.0f64; #size]; #size];
            let mut __vv = [[0.0f64; #size]; #size];
            for __j in 0..#size {
                let (Some(__q_column), Some(__v_column)) =
                    (__solve(&__rq[__j], &__tq[__j]), __solve(&__rv[__j], &__tv[__j]))
                else {
                    return #rt_solve::Declined;
                };
                (__vq[__j], __vv[__j]) = (__q_column, __v_column);
            }
            *v_q = #rt::SMatrix::from(__vq);
            *v_v = #rt::SMatrix::from(__vv);
            #rt_solve::Solved
        })
    }
}
