//! Dense linear algebra for fixed-size models: factorizations that fail with a typed error.
//!
//! Every factorization here checks its input and its pivots and returns
//! [`StepError`](crate::StepError) instead of nalgebra's `bool`-plus-garbage convention, so a
//! successful factorization always yields finite solves for finite right-hand sides. All types
//! are fixed-size (`SMatrix<f64, N, N>`) and never touch the heap.

mod dense;

pub use dense::{Cholesky, Lu, SymmetricFactor};
