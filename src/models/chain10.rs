//! The penalized chain of 10 links of the peer benchmark as a fixed-size model: Tao–Owhadi's
//! chain of pendula (2014, §4.2) with every bob, sum and rod written out, because the library's
//! `models::PendulumChain` is a family (sizes at run time, the sparse tier). Bob `i` hangs from
//! bob `i − 1` (bob 1 from the origin) on a rod with `|p_i − p_{i−1}|² − 5 = 0`; `M = I` and
//! `V = Σ y_i`, the signs of `models::PendulumChain` with `m = g = 1` and `l² = 5`. Shared by
//! the peer benchmark (`benches/peer/ours.rs`) and `tests/it/generated_solves/`.

use mechanism::mechanism;

mechanism! {
    /// The chain of 10 unit-mass pendula of Tao–Owhadi §4.2 (`g = 1`, `L² = 5`), unrolled:
    /// 20 coordinates and 10 rods, for penalized Z&Ss (and stiff Z&Ss and SPOOK, which
    /// `tests/it/generated_solves/` checks) on the fixed-size tier.
    pub struct Chain10 {
        coordinates: [
            x1, y1, x2, y2, x3, y3, x4, y4, x5, y5, x6, y6, x7, y7, x8, y8, x9, y9, x10, y10
        ],
        kinetic: 0.5
            * (dot(x1).powi(2) + dot(y1).powi(2) + dot(x2).powi(2) + dot(y2).powi(2) +
                dot(x3).powi(2) + dot(y3).powi(2) + dot(x4).powi(2) + dot(y4).powi(2) +
                dot(x5).powi(2) + dot(y5).powi(2) + dot(x6).powi(2) + dot(y6).powi(2) +
                dot(x7).powi(2) + dot(y7).powi(2) + dot(x8).powi(2) + dot(y8).powi(2) +
                dot(x9).powi(2) + dot(y9).powi(2) + dot(x10).powi(2) + dot(y10).powi(2)),
        potential: y1 + y2 + y3 + y4 + y5 + y6 + y7 + y8 + y9 + y10,
        holonomic: {
            rod1: x1.powi(2) + y1.powi(2) - 5.0,
            rod2: (x2 - x1).powi(2) + (y2 - y1).powi(2) - 5.0,
            rod3: (x3 - x2).powi(2) + (y3 - y2).powi(2) - 5.0,
            rod4: (x4 - x3).powi(2) + (y4 - y3).powi(2) - 5.0,
            rod5: (x5 - x4).powi(2) + (y5 - y4).powi(2) - 5.0,
            rod6: (x6 - x5).powi(2) + (y6 - y5).powi(2) - 5.0,
            rod7: (x7 - x6).powi(2) + (y7 - y6).powi(2) - 5.0,
            rod8: (x8 - x7).powi(2) + (y8 - y7).powi(2) - 5.0,
            rod9: (x9 - x8).powi(2) + (y9 - y8).powi(2) - 5.0,
            rod10: (x10 - x9).powi(2) + (y10 - y9).powi(2) - 5.0,
        },
        integrators: [zss, zss_stiff, spook],
        derivatives: [step_jacobians],
    }
}
