//! Symbolic core of `mechanism`: expressions, exact structural derivatives, bounded
//! simplification and straight-line `f64` code.
//!
//! The `mechanism!` macro builds the energies and constraints of a model into one [`Store`],
//! asks this crate for the derivatives its integrators need ([`gradient`], [`hessian`],
//! [`jacobian`], [`third_contraction`]), cleans them up with [`simplify()`] and writes them as
//! Rust with [`emit()`]. Everything happens at compile time, so the design favours predictable
//! cost and exact results over generality:
//!
//! * expressions are hash-consed in a [`Store`] whose constructors fold constants and drop
//!   neutral elements, so common subexpressions are shared across all outputs of a model;
//! * derivatives are structural (one pass over the DAG, reverse mode for gradients), never
//!   found by rewriting;
//! * [`simplify()`] runs egg's equality saturation with rules valid for all real inputs, within
//!   iteration, node and time limits, and keeps its result only when it is cheaper;
//! * [`emit()`] writes one `let` per shared node and skips outputs that are structurally zero;
//! * the non-smooth functions `abs`, `signum`, `min` and `max` have derivatives that average
//!   the one-sided ones at a kink, and [`Store::non_smooth_dependencies`] tells a caller which
//!   kinks its derivatives cross (see [`Math`] for their exact semantics).
//!
//! It is not a general computer algebra system: there is no symbolic integration, no
//! equation solving, no complex numbers, no arbitrary precision, and no parser for a user
//! syntax (the DSL lives in `mechanism-dsl`). [`eval()`] is an interpreter meant as a test
//! oracle, not a fast evaluator.
//!
//! # Example
//!
//! ```
//! use mechanism_cas::{emit, eval, gradient, EmitOptions, Output, Store, Symbol};
//! use quote::{format_ident, quote};
//!
//! // Potential of a pendulum: V = -m g l cos(θ).
//! let mut store = Store::new();
//! let (theta, m) = (Symbol::from("theta"), Symbol::from("m"));
//! let (th, mass) = (store.symbol(theta), store.symbol(m));
//! let gl = store.num(9.81 * 2.0);
//! let c = store.cos(th);
//! let mgl = store.mul(mass, gl);
//! let mglc = store.mul(mgl, c);
//! let v = store.neg(mglc);
//!
//! let dv = gradient(&mut store, v, &[theta]);
//! let value = eval(&store, dv[0], &|s| Some(if s == theta { 0.5 } else { 1.0 })).unwrap();
//! assert!((value - 19.62 * 0.5_f64.sin()).abs() < 1e-12);
//!
//! let outputs = [Output { target: quote!(out[0]), value: dv[0] }];
//! let field = |s: Symbol| {
//!     let name = format_ident!("{}", s.as_str());
//!     quote!(self.#name)
//! };
//! let code = emit(&store, &outputs, &field, &EmitOptions::default());
//! assert_eq!(code.to_string(), "out [0] = 19.62f64 * self . m * self . theta . sin () ;");
//! ```

#![warn(missing_docs)]

pub mod diff;
pub mod emit;
pub mod eval;
pub mod expr;
pub mod simplify;

pub use diff::{
    derivative, directional_derivative, gradient, hessian, jacobian, third_contraction,
};
pub use egg::{Id, Symbol};
pub use emit::{emit, EmitOptions, Output};
pub use eval::{eval, EvalError, Evaluator};
pub use expr::{Constant, Math, ParseConstantError, Store};
pub use simplify::{dag_cost, simplify, SimplifyLimits, SimplifyReport, StopReason};
