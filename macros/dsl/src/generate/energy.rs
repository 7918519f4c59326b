//! The scalar energies: the potential `V` and the penalized potential `W = V + ½ω²|g|²`, each
//! at the derivative levels the integrators need, emitted by one emitter over their names.

use mechanism_cas::Id;
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
use syn::Ident;

use super::{allow_lints, runtime, Code};
use crate::derive::ScalarDerivatives;

/// The names under which a scalar energy and its derivatives are emitted: the potential `V`
/// or the penalized potential `W = V + ½ω²|g|²`, which takes `ω` as its first argument.
struct Energy {
    /// The traits of the value and gradient, the Hessian, and the third-derivative contraction.
    traits: [Ident; 3],
    /// The methods of the value, the gradient, the Hessian, the fused gradient and Hessian,
    /// and the third-derivative contraction.
    methods: [Ident; 5],
    /// The specialized implicit solve's method.
    solve_fn: Ident,
    /// Items at the head of the value trait's implementation.
    header: TokenStream,
    /// Whether the energy is the penalized one, whose methods take `omega: f64` first.
    penalized: bool,
}

impl Energy {
    /// Returns the potential `V` of a model with `n` coordinates, whose value trait declares
    /// `depends_on`, the mask of the coordinates it reads.
    fn potential(n: &Literal, depends_on: TokenStream) -> Energy {
        Energy::named(
            ["Potential", "PotentialHessian", "PotentialThirdDerivative"],
            "potential",
            "implicit_acceleration",
            quote!(const POTENTIAL_DEPENDS_ON: [bool; #n] = #depends_on;),
            false,
        )
    }

    /// Returns the penalized potential `W = V + ½ω²|g|²`.
    fn penalized() -> Energy {
        Energy::named(
            [
                "PenalizedPotential",
                "PenalizedHessian",
                "PenalizedThirdDerivative",
            ],
            "penalized_potential",
            "penalized_implicit_acceleration",
            quote!(),
            true,
        )
    }

    /// Returns the energy with these trait names, method prefix and solve method.
    fn named(
        traits: [&str; 3],
        prefix: &str,
        solve: &str,
        header: TokenStream,
        penalized: bool,
    ) -> Energy {
        let method = |suffix: &str| format_ident!("{prefix}{suffix}");
        Energy {
            traits: traits.map(|name| format_ident!("{name}")),
            methods: [
                method(""),
                method("_gradient"),
                method("_hessian"),
                method("_gradient_hessian"),
                method("_third_contraction"),
            ],
            solve_fn: format_ident!("{solve}"),
            header,
            penalized,
        }
    }
}

impl Code<'_> {
    /// Emits the potential `V` at the levels planned: `Potential`, then `PotentialHessian` and
    /// `PotentialThirdDerivative` when the integrators need them.
    pub(super) fn potential(
        &self,
        v: &ScalarDerivatives,
        solve_mass: Option<&[Vec<Id>]>,
    ) -> TokenStream {
        let n = Literal::usize_unsuffixed(self.model.dof());
        let energy = Energy::potential(&n, self.dependency_mask(&[v.value]));
        self.energy(&energy, v, solve_mass)
    }

    /// Emits a scalar energy and its derivatives at the levels in `derivatives`: the value and
    /// gradient, then the Hessian (with the fused gradient-and-Hessian and, given the mass, the
    /// specialized implicit solve) and the third-derivative contraction when present.
    fn energy(
        &self,
        energy: &Energy,
        derivatives: &ScalarDerivatives,
        solve_mass: Option<&[Vec<Id>]>,
    ) -> TokenStream {
        let (rt, allow, name) = (runtime(), allow_lints(), &self.model.name);
        let n = Literal::usize_unsuffixed(self.model.dof());
        let (grad, hess, out) = (quote!(grad), quote!(hess), quote!(out));
        let Energy {
            traits: [value_trait, hessian_trait, third_trait],
            methods: [value_fn, gradient_fn, hessian_fn, fused_fn, third_fn],
            solve_fn,
            header,
            penalized,
        } = energy;
        let omega = if *penalized {
            quote!(omega: f64,)
        } else {
            quote!()
        };
        let value = self.scalar_body(derivatives.value);
        let gradient = self.body(self.vector(&grad, &derivatives.gradient), &[&grad]);
        let mut tokens = quote! {
            #allow
            impl #rt::#value_trait<#n> for #name {
                #header

                #[inline]
                fn #value_fn(&self, #omega q: &#rt::SVector<f64, #n>) -> f64 {
                    #value
                }

                #[inline]
                fn #gradient_fn(&self, #omega q: &#rt::SVector<f64, #n>, grad: &mut #rt::SVector<f64, #n>) {
                    #gradient
                }
            }
        };
        if let Some(h) = &derivatives.hessian {
            let hessian = self.body(self.matrix(&hess, h), &[&hess]);
            let mut fused = self.vector(&grad, &derivatives.gradient);
            fused.extend(self.matrix(&hess, h));
            let fused = self.body(fused, &[&grad, &hess]);
            let solve = solve_mass.map(|mass| {
                self.implicit_solve_method(
                    quote!(#solve_fn),
                    *penalized,
                    mass,
                    &derivatives.gradient,
                    h,
                )
            });
            tokens.extend(quote! {
                #allow
                impl #rt::#hessian_trait<#n> for #name {
                    #solve

                    #[inline]
                    fn #hessian_fn(&self, #omega q: &#rt::SVector<f64, #n>, hess: &mut #rt::SMatrix<f64, #n, #n>) {
                        #hessian
                    }

                    #[inline]
                    fn #fused_fn(
                        &self,
                        #omega
                        q: &#rt::SVector<f64, #n>,
                        grad: &mut #rt::SVector<f64, #n>,
                        hess: &mut #rt::SMatrix<f64, #n, #n>,
                    ) {
                        #fused
                    }
                }
            });
        }
        if let Some(t) = &derivatives.third {
            let third = self.body(self.vector(&out, t), &[&out]);
            tokens.extend(quote! {
                #allow
                impl #rt::#third_trait<#n> for #name {
                    #[inline]
                    fn #third_fn(
                        &self,
                        #omega
                        q: &#rt::SVector<f64, #n>,
                        a: &#rt::SVector<f64, #n>,
                        out: &mut #rt::SVector<f64, #n>,
                    ) {
                        #third
                    }
                }
            });
        }
        tokens
    }

    /// Emits the penalized potential `W = V + ½ω²|g|²` at the levels planned:
    /// `PenalizedPotential`, then `PenalizedHessian` and `PenalizedThirdDerivative` when the
    /// integrators need them, and `PenaltyHessian` (the stiff part alone) for stiff Z&Ss.
    pub(super) fn penalty(
        &self,
        w: &ScalarDerivatives,
        penalty_hessian: Option<&Vec<Vec<Id>>>,
        solve_mass: Option<&[Vec<Id>]>,
    ) -> TokenStream {
        let (rt, allow, name) = (runtime(), allow_lints(), &self.model.name);
        let n = Literal::usize_unsuffixed(self.model.dof());
        let hess = quote!(hess);
        let mut tokens = self.energy(&Energy::penalized(), w, solve_mass);
        if let Some(h) = penalty_hessian {
            let hessian = self.body(self.matrix(&hess, h), &[&hess]);
            let solve = solve_mass.map(|mass| {
                self.implicit_solve_method(
                    quote!(penalty_implicit_acceleration),
                    true,
                    mass,
                    &w.gradient,
                    h,
                )
            });
            tokens.extend(quote! {
                #allow
                impl #rt::PenaltyHessian<#n> for #name {
                    #solve

                    #[inline]
                    fn penalty_hessian(&self, omega: f64, q: &#rt::SVector<f64, #n>, hess: &mut #rt::SMatrix<f64, #n, #n>) {
                        #hessian
                    }
                }
            });
        }
        tokens
    }
}
