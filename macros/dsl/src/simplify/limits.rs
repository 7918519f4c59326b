//! The bounds of every e-graph clean-up the macro runs: the `simplify` stage's, and the
//! kernels' of a model with families (`family/kernel_code.rs`), which simplify their own
//! stores.

use std::time::Duration;

use mechanism_cas::SimplifyLimits;

/// Returns the limits of the clean-up. The iteration and node limits are the ones meant to
/// bind, so that a model compiles to the same code on any machine and under any load; the time
/// limit is only a safety net against a pathological model (an unoptimized macro build, which
/// README warns against, is about 20× slower and may reach it).
pub fn limits() -> SimplifyLimits {
    SimplifyLimits {
        iter_limit: 8,
        node_limit: 20_000,
        time_limit: Duration::from_secs(10),
    }
}
