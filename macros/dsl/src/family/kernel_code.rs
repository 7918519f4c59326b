//! A kernel's straight-line code: its store copied so that derivatives can be added to it, and
//! emitted with slot `k` read as `q[__ix[k]]` (`v[__ix[k]]`, `a[__ix[k]]`) through the instance's
//! index array `__ix`, and parameters read as fields of `self`.

use std::collections::HashMap;

use mechanism_cas::{emit, EmitOptions, Id, Output, Symbol};
use proc_macro2::{Literal, TokenStream};
use quote::quote;

use crate::family::model::{FamilyModel, Kernel};

/// A kernel with a store of its own, to which derivatives are added.
pub struct KernelCopy {
    /// The store, a copy of the kernel's.
    pub store: mechanism_cas::Store,
    /// The kernel's symbols.
    pub symbols: crate::symbols::Symbols,
    /// The kernel's values, one per component.
    pub values: Vec<Id>,
    /// The number of slots.
    pub slots: usize,
    /// The parameter family of each parameter slot.
    pub parameter_families: Vec<usize>,
}

/// Returns a copy of `kernel` with a store of its own.
pub fn kernel_copy(kernel: &Kernel) -> KernelCopy {
    KernelCopy {
        store: kernel.store.clone(),
        symbols: crate::symbols::Symbols {
            q: kernel.symbols.q.clone(),
            v: kernel.symbols.v.clone(),
            p: kernel.symbols.p.clone(),
            a: kernel.symbols.a.clone(),
            omega: kernel.symbols.omega,
            t: kernel.symbols.t,
        },
        values: kernel.values.clone(),
        slots: kernel.slots.len(),
        parameter_families: kernel.parameter_slots.iter().map(|p| p.family).collect(),
    }
}

impl KernelCopy {
    /// Returns `outputs` after the bounded e-graph clean-up of [`crate::simplify`], run over
    /// them together so that it sees what they share (the same limits as for fixed-size
    /// models; the kernel's size, not the family's, bounds the work).
    pub fn simplified(&mut self, outputs: &[Id]) -> Vec<Id> {
        mechanism_cas::simplify(&mut self.store, outputs, &crate::simplify::limits()).0
    }

    /// Returns `entries` with their values simplified as one group ([`Self::simplified`]) and
    /// the structurally zero ones dropped.
    pub fn simplified_nonzero<K: Copy>(&mut self, entries: &[(K, Id)]) -> Vec<(K, Id)> {
        let values: Vec<Id> = entries.iter().map(|&(_, value)| value).collect();
        let values = self.simplified(&values);
        entries
            .iter()
            .zip(values)
            .filter(|&(_, value)| !self.store.is_zero(value))
            .map(|(&(key, _), value)| (key, value))
            .collect()
    }
}

/// Emits a kernel's outputs with slot `k` read as `q[__ix[k]]` (`v[__ix[k]]`), parameters as
/// fields of `self`, and parameter slot `k` as `self.m[__ix[slots + k]]`.
pub struct Emitter<'a> {
    store: &'a mechanism_cas::Store,
    symbols: HashMap<Symbol, TokenStream>,
}

/// A kernel or a copy of one, whichever holds the store to emit from.
pub trait KernelLike {
    /// Returns the store, the symbols, the number of slots and the family of each parameter
    /// slot.
    fn parts(
        &self,
    ) -> (
        &mechanism_cas::Store,
        &crate::symbols::Symbols,
        usize,
        Vec<usize>,
    );
}

impl KernelLike for Kernel {
    fn parts(
        &self,
    ) -> (
        &mechanism_cas::Store,
        &crate::symbols::Symbols,
        usize,
        Vec<usize>,
    ) {
        let families = self.parameter_slots.iter().map(|p| p.family).collect();
        (&self.store, &self.symbols, self.slots.len(), families)
    }
}

impl KernelLike for KernelCopy {
    fn parts(
        &self,
    ) -> (
        &mechanism_cas::Store,
        &crate::symbols::Symbols,
        usize,
        Vec<usize>,
    ) {
        let families = self.parameter_families.clone();
        (&self.store, &self.symbols, self.slots, families)
    }
}

impl<'a> Emitter<'a> {
    /// Prepares the emission of `kernel`'s nodes.
    pub fn new(model: &FamilyModel, kernel: &'a impl KernelLike) -> Self {
        let (store, symbols, slots, parameter_families) = kernel.parts();
        let mut map = HashMap::new();
        for k in 0..slots {
            let k_lit = Literal::usize_unsuffixed(k);
            map.insert(symbols.q[k], quote!(q[__ix[#k_lit]]));
            map.insert(symbols.v[k], quote!(v[__ix[#k_lit]]));
            map.insert(symbols.a[k], quote!(a[__ix[#k_lit]]));
        }
        for (symbol, parameter) in symbols.p.iter().zip(&model.parameters) {
            let name = &parameter.name;
            map.insert(*symbol, quote!(self.#name));
        }
        let scalars = model.parameters.len();
        for (k, &family) in parameter_families.iter().enumerate() {
            let name = &model.parameter_families[family].name;
            let position = Literal::usize_unsuffixed(slots + k);
            // A family resized after `new` reads NaN rather than panicking out of bounds; the
            // step reports it first (`SparseInertia::parameter_violation`).
            map.insert(
                symbols.p[scalars + k],
                quote!(self.#name.get(__ix[#position]).copied().unwrap_or(f64::NAN)),
            );
        }
        Emitter {
            store,
            symbols: map,
        }
    }

    /// Reads `symbol`, which is none of the kernel's own, as `tokens` (a row's multiplier).
    pub fn bind(mut self, symbol: Symbol, tokens: TokenStream) -> Self {
        self.symbols.insert(symbol, tokens);
        self
    }

    /// Emits the statements that assign `outputs`.
    pub fn emit(&self, outputs: &[Output]) -> TokenStream {
        let symbol = |s: Symbol| {
            self.symbols
                .get(&s)
                .cloned()
                .unwrap_or_else(|| quote!(::core::f64::NAN))
        };
        let rt = quote!(::mechanism::runtime);
        emit(
            self.store,
            outputs,
            &symbol,
            &EmitOptions {
                fma: Some(quote!(#rt::fma::mul_add)),
            },
        )
    }
}
