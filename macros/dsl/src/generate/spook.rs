//! SPOOK's step specialized to a model's structural nonzeros: for a constant diagonal mass
//! matrix, the Schur complement of eq. 30 (Lacoursière 2007) unrolled over the Jacobian's
//! nonzeros and their fill, emitted as `Holonomic::spook_solve` and `Holonomic::spook_step`.

use std::collections::BTreeSet;

use mechanism_cas::{Id, Output};
use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};

use super::ldlt::{all_finite_by_fours, ldlt_solve};
use super::ordering::elimination_order;
use super::{runtime, Code};
use crate::derive::Derived;
impl Code<'_> {
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
/// `SpookDense`'s Schur complement without its structural zeros. A pivot that is not clearly
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
