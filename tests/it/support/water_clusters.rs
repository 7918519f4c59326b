//! The water tests' starting clusters (`tests/it/water.rs`, `tests/it/water_cutoff.rs`): the
//! generated model's own seeded start, perturbed off its rigid geometry.
#![allow(dead_code)]

use mechanism::models::WaterCluster;

/// Inverse temperature of Tao–Owhadi §4.3 (AKMA units: 10.1 K).
pub const BETA_T: f64 = 50.0;

/// A cluster of `n` molecules at the exact TIP3P geometry with every coordinate then moved by
/// up to `shake` Å, so that the constraint rows are not zero (`seed` picks both).
pub fn perturbed_cluster(model: &WaterCluster, shake: f64, seed: u64) -> Vec<f64> {
    let (mut q, _) = model.initial_cluster(BETA_T, seed);
    let mut state = seed ^ 0x5DEE_CE66;
    for x in &mut q {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *x += shake * (((state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0);
    }
    q
}

/// Returns the largest absolute component of `x`.
pub fn max_abs(x: &[f64]) -> f64 {
    x.iter().fold(0.0, |m, v| m.max(v.abs()))
}
