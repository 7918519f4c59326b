//! Scalar kernels summed over their instances and assembled into global quantities: an energy,
//! its gradient, the contraction `a·V‴·a` (Tao–Owhadi 2014, eq. 3), and a symmetric Hessian on
//! a sparsity pattern that the model's `new` builds once.
//!
//! A [`Part`] is one kernel `k(s_1, …, s_m)` of slots `s_j = q[ix_j]`, summed over the rows
//! `ix` of its instance table and scaled at run time (`1`, or `ω²` for a penalty; a row
//! family's `Σ_c λ_c g_c` reads its multipliers `λ` per instance instead). Its
//! contribution to a global quantity follows from `f(q) = Σ_ix k(S_ix q)` with the selection
//! `S_ix`: the gradient and `a·f‴·a` are scatter-adds `Sᵀ ∇k` over the slots, and the Hessian
//! `Sᵀ Hess k S` adds the slot pair `(a, b)`'s entry to the coordinate pair
//! `(ix_a, ix_b)`. The Hessian is stored one entry per unordered coordinate pair (the sparse
//! tier's convention), so a slot pair `a < b` stands for both `(a, b)` and `(b, a)` and is
//! added once — twice where both slots name the same coordinate, which lands on the diagonal.

use mechanism_cas::{gradient, hessian, third_contraction, Id, Output, Symbol};
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
use syn::Ident;

use crate::family::kernel_code::{kernel_copy, Emitter, KernelCopy};
use crate::family::model::{Cutoff, FamilyModel, Kernel};
use crate::family::switch::{indexed, switched_entries, Switch};

/// A scalar kernel summed over the instances of its table, times a run-time scale.
pub struct Part {
    /// The field holding the part's instance table (`__potential0`, `__row1`).
    pub table: Ident,
    /// The kernel, in a store of its own to which derivatives are added.
    kernel: KernelCopy,
    /// The kernel's scalar value.
    value: Id,
    /// The run-time factor: `1.0`, or `omega * omega` for a penalty.
    scale: TokenStream,
    /// `∇k` by slot, if derived.
    gradient: Option<Vec<Id>>,
    /// The entries `(a, b, ∂²k/∂s_a∂s_b)` with `a ≤ b`, if derived (the structurally nonzero
    /// ones once simplified).
    hessian: Option<Vec<(usize, usize, Id)>>,
    /// `a·k‴·a = ∇(aᵀ Hess k a)` by slot, if derived.
    third: Option<Vec<Id>>,
    /// A pair sum's cutoff: the switching distance's kernel, applied by the product rule.
    switch: Option<Switch>,
    /// A row family's multipliers, which its kernel reads per instance.
    multipliers: Option<Multipliers>,
}

/// Which derivatives of a [`Part`] its model's integrators need.
#[derive(Clone, Copy, Debug, Default)]
pub struct PartNeeds {
    /// `∇k` (the gradient of the energy it is part of).
    pub gradient: bool,
    /// `Hess k` (a Hessian it is assembled into).
    pub hessian: bool,
    /// `a·k‴·a` (full Z&S).
    pub third: bool,
}

/// The multipliers `λ` of a row family's instance, symbols of its weighted kernel
/// `Σ_c λ_c g_c`: component `c` of instance `i` is row `start + i·width + c`, the order of
/// `constraints_and_jacobian`, and reads `weights` there.
struct Multipliers {
    /// The field holding the family's first row.
    start: Ident,
    /// One symbol per component.
    symbols: Vec<Symbol>,
}

impl Multipliers {
    /// Returns `emitter` reading the multipliers from `weights` at the rows of the instance
    /// `__instance` (the loop's counter).
    fn bind<'a>(&self, emitter: Emitter<'a>) -> Emitter<'a> {
        let (start, width) = (&self.start, Literal::usize_unsuffixed(self.symbols.len()));
        self.symbols
            .iter()
            .enumerate()
            .fold(emitter, |emitter, (c, &symbol)| {
                let c = Literal::usize_unsuffixed(c);
                emitter.bind(
                    symbol,
                    quote!(weights[self.#start + __instance * #width + #c]),
                )
            })
    }
}

impl Part {
    /// The potential term `kernel` (its first component), with its instance table `table`
    /// and, for a pair sum with a cutoff, its switch (the kernel's second component is `r`).
    pub fn potential(table: Ident, kernel: &Kernel, cutoff: Option<&Cutoff>) -> Part {
        let copy = kernel_copy(kernel);
        let value = copy.values[0];
        Part {
            table,
            kernel: copy,
            value,
            scale: quote!(1.0),
            gradient: None,
            hessian: None,
            third: None,
            switch: cutoff.map(|c| Switch::new(kernel, c)),
            multipliers: None,
        }
    }

    /// The penalty `½ |g|²` of the constraint row `kernel` (its components summed), scaled by
    /// `ω²` at run time: the row's share of `½ ω² |g(q)|²` (Tao–Owhadi 2014, eq. 7).
    pub fn penalty(table: Ident, kernel: &Kernel) -> Part {
        let mut copy = kernel_copy(kernel);
        let squares: Vec<Id> = copy
            .values
            .clone()
            .into_iter()
            .map(|g| copy.store.mul(g, g))
            .collect();
        let sum = copy.store.sum(squares);
        let half = copy.store.num(0.5);
        let value = copy.store.mul(half, sum);
        Part {
            table,
            kernel: copy,
            value,
            scale: quote!(omega * omega),
            gradient: None,
            hessian: None,
            third: None,
            switch: None,
            multipliers: None,
        }
    }

    /// The weighted sum `Σ_c λ_c g_c` of the constraint row `kernel`'s components, whose
    /// family's first row is the field `start`: the row family's share of `Σ_k λ_k g_k`, whose
    /// Hessian is the rows' `Σ_k λ_k Hess g_k` that `derivatives: [hessians]` asks for, with
    /// the multipliers `λ` read from `weights` (only [`assemble_hessian`] takes it).
    pub fn weighted(table: Ident, kernel: &Kernel, start: Ident) -> Part {
        let mut copy = kernel_copy(kernel);
        let symbols: Vec<Symbol> = (0..copy.values.len())
            .map(|c| Symbol::from(format!("multiplier.{c}")))
            .collect();
        let terms: Vec<Id> = copy
            .values
            .clone()
            .into_iter()
            .zip(&symbols)
            .map(|(g, &lambda)| {
                let lambda = copy.store.symbol(lambda);
                copy.store.mul(lambda, g)
            })
            .collect();
        let value = copy.store.sum(terms);
        Part {
            table,
            kernel: copy,
            value,
            scale: quote!(1.0),
            gradient: None,
            hessian: None,
            third: None,
            switch: None,
            multipliers: Some(Multipliers { start, symbols }),
        }
    }

    /// Differentiates the kernel (the derive stage): `∇k` if `needs.gradient`, `Hess k` if
    /// `needs.hessian`, `a·k‴·a` if `needs.third`, and for a pair sum with a cutoff the
    /// switching distance's derivatives that the product rule takes.
    pub fn derive(&mut self, needs: PartNeeds) {
        let (q, a) = (self.kernel.symbols.q.clone(), self.kernel.symbols.a.clone());
        let store = &mut self.kernel.store;
        if needs.gradient {
            self.gradient = Some(gradient(store, self.value, &q));
        }
        if needs.hessian {
            let h = hessian(store, self.value, &q);
            self.hessian = Some(
                (0..q.len())
                    .flat_map(|b| (0..=b).map(move |a| (a, b)))
                    .map(|(a, b)| (a, b, h[a][b]))
                    .collect(),
            );
        }
        if needs.third {
            self.third = Some(third_contraction(store, self.value, &q, &a));
        }
        if let Some(switch) = &mut self.switch {
            switch.derive(needs.hessian);
        }
    }

    /// Simplifies what [`Part::derive`] added (the simplify stage): the gradient, the Hessian
    /// and the contraction each as one group (each is emitted as one loop body), dropping the
    /// Hessian's structurally zero entries.
    pub fn simplify(&mut self) {
        if let Some(gradient) = &self.gradient {
            self.gradient = Some(self.kernel.simplified(gradient));
        }
        if let Some(hessian) = &self.hessian {
            let entries: Vec<((usize, usize), Id)> =
                hessian.iter().map(|&(a, b, h)| ((a, b), h)).collect();
            self.hessian = Some(
                self.kernel
                    .simplified_nonzero(&entries)
                    .into_iter()
                    .map(|((a, b), h)| (a, b, h))
                    .collect(),
            );
        }
        if let Some(third) = &self.third {
            self.third = Some(self.kernel.simplified(third));
        }
        if let Some(switch) = &mut self.switch {
            switch.simplify();
        }
    }

    /// Returns the emitter of the part's kernel (with its multipliers, if it has any).
    fn emitter<'a>(
        model: &FamilyModel,
        kernel: &'a KernelCopy,
        multipliers: Option<&Multipliers>,
    ) -> Emitter<'a> {
        let emitter = Emitter::new(model, kernel);
        match multipliers {
            Some(multipliers) => multipliers.bind(emitter),
            None => emitter,
        }
    }

    /// Returns the loop that adds the part's scaled value to `__energy`.
    pub fn energy(&self, model: &FamilyModel) -> TokenStream {
        let statements = Emitter::new(model, &self.kernel).emit(&[Output {
            target: quote!(__value),
            value: self.value,
        }]);
        let (table, scale) = (&self.table, &self.scale);
        match &self.switch {
            None => quote! {
                for __ix in &self.#table {
                    let __value: f64;
                    #statements
                    __energy += #scale * __value;
                }
            },
            Some(switch) => {
                let (skip, inside, factors) = (
                    switch.distance_and_skip(model),
                    switch.inside(),
                    switch.factors(),
                );
                quote! {
                    for __ix in &self.#table {
                        #skip
                        let __value: f64;
                        { #statements }
                        if #inside {
                            __energy += #scale * __value;
                        } else {
                            #factors
                            __energy += #scale * (__s * __value);
                        }
                    }
                }
            }
        }
    }

    /// Returns the loop that adds the part's scaled gradient to the slice `target`.
    pub fn gradient(&self, model: &FamilyModel, target: TokenStream) -> TokenStream {
        self.scatter(model, self.gradient.as_deref().unwrap_or_default(), target)
    }

    /// Returns the loop that adds the part's scaled `a·k‴·a = ∇(aᵀ Hess k a)` to `out`.
    pub fn third_contraction(&self, model: &FamilyModel) -> TokenStream {
        self.scatter(
            model,
            self.third.as_deref().unwrap_or_default(),
            quote!(out),
        )
    }

    /// Returns the loop that adds `scale · entries[s]` to `target[ix_s]` for every slot `s`
    /// whose entry is not structurally zero (nothing when none is).
    fn scatter(&self, model: &FamilyModel, entries: &[Id], target: TokenStream) -> TokenStream {
        let nonzero: Vec<usize> = (0..entries.len())
            .filter(|&s| !self.kernel.store.is_zero(entries[s]))
            .collect();
        if nonzero.is_empty() {
            return TokenStream::new();
        }
        let count = Literal::usize_unsuffixed(nonzero.len());
        let outputs: Vec<Output> = nonzero
            .iter()
            .enumerate()
            .map(|(j, &s)| {
                let j = Literal::usize_unsuffixed(j);
                Output {
                    target: quote!(__d[#j]),
                    value: entries[s],
                }
            })
            .collect();
        let slots = nonzero.iter().map(|&s| Literal::usize_unsuffixed(s));
        let statements = Emitter::new(model, &self.kernel).emit(&outputs);
        let (table, scale) = (&self.table, &self.scale);
        if let Some(switch) = &self.switch {
            // Inside `on` the body's gradient unchanged; in the shell S ∇E + E S' ∇r.
            let (skip, factors, inside) = (
                switch.distance_and_skip(model),
                switch.factors(),
                switch.inside(),
            );
            let (r_slots, r_statements) = switch.gradient(model);
            let r_count = Literal::usize_unsuffixed(r_slots.len());
            let r_slots = r_slots.into_iter().map(Literal::usize_unsuffixed);
            let value = Emitter::new(model, &self.kernel).emit(&[Output {
                target: quote!(__value),
                value: self.value,
            }]);
            return quote! {
                for __ix in &self.#table {
                    #skip
                    let mut __d = [0.0f64; #count];
                    { #statements }
                    let __slots: [usize; #count] = [#(#slots),*];
                    if #inside {
                        for (__j, &__s) in __slots.iter().enumerate() {
                            #target[__ix[__s]] += #scale * __d[__j];
                        }
                    } else {
                        let __value: f64;
                        { #value }
                        #r_statements
                        #factors
                        for (__j, &__k) in __slots.iter().enumerate() {
                            #target[__ix[__k]] += #scale * (__s * __d[__j]);
                        }
                        let __e = #scale * (__value * __ds);
                        let __r_slots: [usize; #r_count] = [#(#r_slots),*];
                        for (__j, &__k) in __r_slots.iter().enumerate() {
                            #target[__ix[__k]] += __e * __dr[__j];
                        }
                    }
                }
            };
        }
        quote! {
            for __ix in &self.#table {
                let mut __d = [0.0f64; #count];
                #statements
                let __slots: [usize; #count] = [#(#slots),*];
                for (__j, &__s) in __slots.iter().enumerate() {
                    #target[__ix[__s]] += #scale * __d[__j];
                }
            }
        }
    }

    /// Returns the slot pairs `(a, b)`, `a ≤ b`, of the part's Hessian entries and the
    /// statements of an instance's loop iteration that fill `__d` with them (which may
    /// `continue` past a pair beyond its cutoff); `None` if the Hessian is structurally zero.
    fn hessian_fill(&self, model: &FamilyModel) -> Option<(Vec<(usize, usize)>, TokenStream)> {
        let entries = self.hessian.as_deref().unwrap_or_default();
        let body: Vec<(usize, usize)> = entries.iter().map(|&(a, b, _)| (a, b)).collect();
        let outputs = indexed(quote!(__h), entries.iter().map(|&(_, _, v)| v));
        let statements = Emitter::new(model, &self.kernel).emit(&outputs);
        let h_count = Literal::usize_unsuffixed(entries.len());
        let Some(switch) = self.switch.as_ref() else {
            if entries.is_empty() {
                return None;
            }
            let outputs = indexed(quote!(__d), entries.iter().map(|&(_, _, v)| v));
            let statements =
                Part::emitter(model, &self.kernel, self.multipliers.as_ref()).emit(&outputs);
            return Some((
                body,
                quote! {
                    let mut __d = [0.0f64; #h_count];
                    #statements
                },
            ));
        };
        // The switched entries: the body's, and those of ∇r with ∇E and with itself.
        let grad: Vec<(usize, Id)> = self
            .gradient
            .iter()
            .flatten()
            .copied()
            .enumerate()
            .filter(|&(_, g)| !self.kernel.store.is_zero(g))
            .collect();
        let grad_slots: Vec<usize> = grad.iter().map(|&(s, _)| s).collect();
        let (skip, factors, inside) = (
            switch.distance_and_skip(model),
            switch.factors(),
            switch.inside(),
        );
        let (dr, hr, r_statements) = switch.hessian(model);
        let mut pairs = body.clone();
        for &a in &dr {
            for &b in grad_slots.iter().chain(&dr) {
                let pair = (a.min(b), a.max(b));
                if !pairs.contains(&pair) {
                    pairs.push(pair);
                }
            }
        }
        pairs.extend(
            hr.iter()
                .filter(|p| !body.contains(p))
                .copied()
                .collect::<Vec<_>>(),
        );
        pairs.dedup();
        let unchanged = body
            .iter()
            .enumerate()
            .map(|(k, pair)| {
                let at = pairs.iter().position(|p| p == pair).unwrap_or_default();
                let (k, at) = (Literal::usize_unsuffixed(k), Literal::usize_unsuffixed(at));
                quote!(__d[#at] = __h[#k];)
            })
            .collect::<Vec<_>>();
        let switched = switched_entries(&pairs, &body, &grad_slots, &dr, &hr);
        let positions = (0..pairs.len()).map(Literal::usize_unsuffixed);
        let value = Emitter::new(model, &self.kernel).emit(&[Output {
            target: quote!(__value),
            value: self.value,
        }]);
        let g_count = Literal::usize_unsuffixed(grad.len());
        let g_statements = Emitter::new(model, &self.kernel)
            .emit(&indexed(quote!(__g), grad.iter().map(|&(_, g)| g)));
        let count = Literal::usize_unsuffixed(pairs.len());
        Some((
            pairs,
            quote! {
                #skip
                let mut __h = [0.0f64; #h_count];
                { #statements }
                let mut __d = [0.0f64; #count];
                if #inside {
                    #(#unchanged)*
                } else {
                    let __value: f64;
                    { #value }
                    let mut __g = [0.0f64; #g_count];
                    { #g_statements }
                    #r_statements
                    #factors
                    #(__d[#positions] = #switched;)*
                }
            },
        ))
    }
}

/// A symmetric Hessian assembled from parts: the fields that hold its pattern and each part's
/// positions in it, the code of `new` that builds them, and the loops that fill the values.
pub struct Hessian {
    /// The field holding the pattern, `Vec<(usize, usize)>`, each unordered pair once.
    pub pattern: Ident,
    /// The field declarations (pattern and positions).
    pub fields: Vec<TokenStream>,
    /// The field names, for the struct literal in `new`.
    pub names: Vec<Ident>,
    /// The statements of `new` that build the pattern and the positions from the instance
    /// tables (which must be in scope as locals of the same names as their fields).
    pub builder: TokenStream,
    /// The loops that add the parts' scaled Hessians into `hess` (zeroed before).
    pub code: TokenStream,
}

/// Assembles the Hessian named `name` of the sum of `parts`.
pub fn assemble_hessian(model: &FamilyModel, name: &str, parts: &[&Part]) -> Hessian {
    let pattern = format_ident!("__hessian_{}_pattern", name);
    let map = format_ident!("__hessian_{}_map", name);
    let mut fields = vec![quote!(#pattern: ::std::vec::Vec<(usize, usize)>)];
    let mut names = vec![pattern.clone()];
    let mut builders = Vec::new();
    let mut code = Vec::new();
    for part in parts {
        let Some((entries, fill)) = part.hessian_fill(model) else {
            continue;
        };
        let table = part.table.clone();
        let positions = format_ident!("__hessian_{}_{}", name, table);
        let count = Literal::usize_unsuffixed(entries.len());
        fields.push(quote!(#positions: ::std::vec::Vec<[usize; #count]>));
        names.push(positions.clone());
        let pairs = entries.iter().map(|&(a, b)| {
            let (a, b) = (Literal::usize_unsuffixed(a), Literal::usize_unsuffixed(b));
            quote!((#a, #b))
        });
        builders.push(quote! {
            let #positions: ::std::vec::Vec<[usize; #count]> = #table
                .iter()
                .map(|__ix| {
                    let __pairs: [(usize, usize); #count] = [#(#pairs),*];
                    let mut __at = [0usize; #count];
                    for (__j, &(__a, __b)) in __pairs.iter().enumerate() {
                        let __key = (__ix[__a].min(__ix[__b]), __ix[__a].max(__ix[__b]));
                        __at[__j] = *#map.entry(__key).or_insert_with(|| {
                            #pattern.push(__key);
                            #pattern.len() - 1
                        });
                    }
                    __at
                })
                .collect();
        });
        // A slot pair a < b naming one coordinate adds both (a, b) and (b, a) to the diagonal.
        let doubling = entries
            .iter()
            .enumerate()
            .filter(|&(_, &(a, b))| a < b)
            .map(|(j, &(a, b))| {
                let (j, a, b) = (
                    Literal::usize_unsuffixed(j),
                    Literal::usize_unsuffixed(a),
                    Literal::usize_unsuffixed(b),
                );
                quote!(if __ix[#a] == __ix[#b] { __d[#j] *= 2.0; })
            });
        let scale = &part.scale;
        // A row family's multipliers are read at its instance's rows.
        let instances = match part.multipliers {
            Some(_) => {
                quote!((__instance, (__ix, __at)) in self.#table.iter().zip(&self.#positions).enumerate())
            }
            None => quote!((__ix, __at) in self.#table.iter().zip(&self.#positions)),
        };
        code.push(quote! {
            for #instances {
                #fill
                #(#doubling)*
                for (__j, &__p) in __at.iter().enumerate() {
                    hess[__p] += #scale * __d[__j];
                }
            }
        });
    }
    let builder = quote! {
        let mut #pattern: ::std::vec::Vec<(usize, usize)> = ::std::vec::Vec::new();
        let mut #map: ::std::collections::HashMap<(usize, usize), usize> =
            ::std::collections::HashMap::new();
        #(#builders)*
    };
    Hessian {
        pattern,
        fields,
        names,
        builder,
        code: quote!(#(#code)*),
    }
}
