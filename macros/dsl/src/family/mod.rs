//! Models with families (`sizes`, `x[N]`, `sum(0..N, |i| …)`, row families): sizes are
//! run-time values, every family's body is differentiated once in its local slots, and the
//! generated code implements the sparse tier's traits with loops over instances, so that the
//! macro's work and the emitted code do not depend on `N`.
//!
//! Such a model runs the same stages as every other ([`crate::expand_model`]); these modules
//! are what the stages call when the [`Ir`](crate::ir::Ir) has run-time sizes:
//!
//! ```text
//! lower:    resolve → FamilyModel (sizes, coordinates, parameter families, kernels)
//! validate: checks::inertia, checks::terms
//! derive:   derive::derive → FamilyDerived (each kernel's derivatives, in its own store)
//! simplify: FamilyDerived::simplify (each output group of each kernel)
//! generate: emit::generate → tokens
//! ```
//!
//! `resolve` resolves names and extracts each term's and row's kernel in its local slots into
//! the data of `model`; `checks` tests the inertia at sample points and the terms and rows
//! against the default sizes and the integrators; the integrators' needs are the
//! [`crate::plan::Plan`] of a model with holonomic rows only; `derive` differentiates every
//! kernel into what the plan asks for; `emit` emits the struct, `new` (instance tables,
//! patterns) and the traits, by output, with `kernel_code` emitting one kernel's straight-line
//! code and `assembly` summing scalar kernels into energies, gradients, `a·V‴·a` and Hessians
//! on patterns built once. `sums` recognizes a term's shape (`sum(…)`, a pair sum, a pair sum with a cutoff),
//! `cutoff` parses and checks a pair sum's smooth cutoff, and `switch` emits its switching
//! distance's kernel and the product rule around the unchanged body kernel.

pub mod assembly;
pub mod checks;
pub mod cutoff;
pub mod derive;
pub mod emit;
pub mod fields;
pub mod index;
pub mod kernel_code;
pub mod kernels;
pub mod model;
pub mod resolve;
pub mod sums;
pub mod switch;
