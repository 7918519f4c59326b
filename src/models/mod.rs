//! Reference mechanisms from the papers, written with [`mechanism!`](macro@crate::mechanism) and
//! shared by the examples, tests and benchmarks.

mod double_pendulum;

pub use double_pendulum::DoublePendulum;
