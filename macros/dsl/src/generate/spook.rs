//! SPOOK's step specialized to a model's structural nonzeros: for a constant diagonal mass
//! matrix, the Schur complement of eq. 30 (Lacoursière 2007) unrolled over the Jacobian's
//! nonzeros and their fill (`schur.rs`), emitted as `Holonomic::spook_solve` and
//! `Holonomic::spook_step`.

use mechanism_cas::{Id, Output};
use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};

use super::ldlt::all_finite_by_fours;
use super::schur::{schur_solve, SchurInputs};
use super::{runtime, Code};
use crate::derive::Derived;

impl Code<'_> {
    /// Returns, row by row, the columns where the Jacobian `jacobian` (rows × `n`) has a
    /// structural nonzero.
    pub(super) fn jacobian_pattern(&self, jacobian: &[Vec<Id>], n: usize) -> Vec<Vec<usize>> {
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
    /// generic SPOOK step (`SpookDense`'s `evaluate`, `solve` and `configuration_after`) in
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
