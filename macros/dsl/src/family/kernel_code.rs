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
    pub symbols: crate::lower::Symbols,
    /// The kernel's values, one per component.
    pub values: Vec<Id>,
    /// The number of slots.
    pub slots: usize,
}

/// Returns a copy of `kernel` with a store of its own.
pub fn kernel_copy(kernel: &Kernel) -> KernelCopy {
    KernelCopy {
        store: kernel.store.clone(),
        symbols: crate::lower::Symbols {
            q: kernel.symbols.q.clone(),
            v: kernel.symbols.v.clone(),
            p: kernel.symbols.p.clone(),
            a: kernel.symbols.a.clone(),
            omega: kernel.symbols.omega,
            t: kernel.symbols.t,
        },
        values: kernel.values.clone(),
        slots: kernel.slots.len(),
    }
}

/// Emits a kernel's outputs with slot `k` read as `q[__ix[k]]` (`v[__ix[k]]`) and parameters
/// as fields of `self`.
pub struct Emitter<'a> {
    store: &'a mechanism_cas::Store,
    symbols: HashMap<Symbol, TokenStream>,
}

/// A kernel or a copy of one, whichever holds the store to emit from.
pub trait KernelLike {
    /// Returns the store, the symbols and the number of slots.
    fn parts(&self) -> (&mechanism_cas::Store, &crate::lower::Symbols, usize);
}

impl KernelLike for Kernel {
    fn parts(&self) -> (&mechanism_cas::Store, &crate::lower::Symbols, usize) {
        (&self.store, &self.symbols, self.slots.len())
    }
}

impl KernelLike for KernelCopy {
    fn parts(&self) -> (&mechanism_cas::Store, &crate::lower::Symbols, usize) {
        (&self.store, &self.symbols, self.slots)
    }
}

impl<'a> Emitter<'a> {
    /// Prepares the emission of `kernel`'s nodes.
    pub fn new(model: &FamilyModel, kernel: &'a impl KernelLike) -> Self {
        let (store, symbols, slots) = kernel.parts();
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
        Emitter {
            store,
            symbols: map,
        }
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
