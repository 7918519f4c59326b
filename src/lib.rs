//! # mechanism
//!
//! A model compiler for constrained mechanical systems. You write a mechanism with the
//! [`mechanism!`] macro — coordinates, parameters, kinetic and potential energy (or a
//! Lagrangian), holonomic constraints — and at compile time the macro derives every quantity the
//! integrators need (mass matrix, gradients, Hessians, the third-derivative contraction
//! `a·V'''·a`, constraint Jacobians, the penalized potential `V + ½ω²|g|²`), simplifies them with
//! an e-graph, shares common subexpressions, and emits straight-line `f64` code implementing the
//! traits of [`runtime`]. The integrators there (SPOOK, Zhang–Skeel) are generic over those
//! traits, so a fixed model becomes an allocation-free stepper.
//!
//! ```
//! use mechanism::mechanism;
//! use mechanism::runtime::{observers, Integrator, Spook, State, StepError};
//!
//! mechanism! {
//!     /// A planar pendulum of length `l` in Cartesian coordinates.
//!     pub struct Pendulum {
//!         coordinates: [x, y],
//!         parameters: { m = 1.0, l = 1.0, g = 9.81 },
//!         kinetic: 0.5 * m * (dot(x).powi(2) + dot(y).powi(2)),
//!         potential: m * g * y,
//!         holonomic: { rod: x.powi(2) + y.powi(2) - l.powi(2) },
//!     }
//! }
//!
//! let model = Pendulum { l: 2.0, ..Pendulum::default() }; // parameters are run-time fields
//!
//! // One second from the horizontal with SPOOK at step h; returns max |g| at the end.
//! let residual_after_one_second = |h: f64| -> Result<f64, StepError> {
//!     let mut state = State::new(0.0, [2.0, 0.0], [0.0, 0.0]);
//!     let mut spook = Spook::new(h)?;
//!     for _ in 0..(1.0 / h).round() as usize {
//!         spook.step(&model, &mut state)?;
//!     }
//!     Ok(observers::position_residual(&model, &state))
//! };
//! let (coarse, fine) = (residual_after_one_second(1.0 / 60.0)?, residual_after_one_second(1.0 / 600.0)?);
//! assert!(coarse < 5e-2);
//! assert!(coarse / fine > 50.0, "SPOOK's constraint residual is O(h²)");
//! # Ok::<(), StepError>(())
//! ```
//!
//! ## The language
//!
//! Expressions are Rust tokens: `+ - * /`, unary `-`, parentheses, number literals, names of
//! coordinates and parameters, `dot(x)` for the velocity of coordinate `x`, `t` for time, and
//! `powi(n)`, `powf(y)`, `sqrt`, `sin`, `cos`, `tan`, `asin`, `acos`, `atan`, `atan2`, `sinh`,
//! `cosh`, `tanh`, `exp`, `ln`, `log(base)`, `abs`, `signum`, `min`, `max` as methods
//! (`x.sin()`, `y.atan2(x)`) or functions with the receiver first (`sin(x)`, `atan2(y, x)`),
//! each meaning what the `f64` method means. `^` is XOR in Rust and is rejected with a hint;
//! write `x.powi(2)`. The [`mechanism!`] reference lists the domains of the functions (e.g.
//! `asin` on `[-1, 1]`, the branch cut of `atan2`).
//!
//! | section | meaning |
//! | --- | --- |
//! | `coordinates: [x, y]` | generalized coordinates `q` |
//! | `parameters: { m = 1.0 }` | `pub f64` fields of the generated struct, with defaults |
//! | `kinetic: expr` | kinetic energy, a quadratic form in the velocities |
//! | `potential: expr` | potential energy `V(q)` |
//! | `lagrangian: expr` | instead of `kinetic` + `potential`: `L = ½ vᵀ M(q) v − V(q)` |
//! | `holonomic: { name: g(q, t) }` | constraints `g = 0`, one named row each; `#[spook(epsilon = …, tau = …)]` |
//! | `nonholonomic: { name: A(q)·v − w(t) }` | rows linear in the velocities, with a driving term; `#[spook(gamma = …)]` |
//! | `dissipation: R(q, v)` | a Rayleigh function, acting through `−∂R/∂v` |
//! | `forces: { x: f(q, v, t) }` | generalized forces on named coordinates |
//! | `integrators: [spook, zs, …]` | what to compile for: generates exactly what those need, checks the model against them |
//!
//! The [`mechanism!`] reference has a runnable example for every section.
//!
//! A mistake is a compile error at the offending tokens:
//!
//! ```compile_fail
//! mechanism::mechanism! {
//!     pub struct Broken {
//!         coordinates: [x],
//!         kinetic: 0.5 * dot(x).powi(2),
//!         potential: k * x.powi(2), // `k` is not declared
//!     }
//! }
//! # fn main() {}
//! ```
//!
//! Build the macro optimized in your workspace too (an unoptimized proc macro is 20–100× slower):
//!
//! ```toml
//! [profile.dev.build-override]
//! opt-level = 3
//! ```
#![warn(missing_docs)]

// Generated code names the runtime as `::mechanism::runtime`; this makes that path resolve
// inside this crate too, for the reference models below.
extern crate self as mechanism;

#[cfg(feature = "ensembles")]
pub mod ensemble;
pub mod identify;
pub mod models;
pub mod output;
#[cfg(feature = "parquet")]
pub mod parquet;
#[cfg(feature = "pictures")]
pub mod pictures;

#[doc = include_str!("language.md")]
pub use mechanism_macros::mechanism;
pub use mechanism_runtime as runtime;
