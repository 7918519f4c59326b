//! A plain hand-written all-pairs loop of the TIP3P water cluster's potential (Tao–Owhadi 2014
//! eq. 24: 9 Coulomb site pairs and the O–O Lennard-Jones per molecule pair), sharing nothing
//! with the generated `mechanism::models::WaterCluster` but the parameter values: the reference
//! of the root package's water tests and of `benches/water_forces.rs`, with and without a
//! smooth cutoff.
//!
//! Coordinates are 9 per molecule (O, H, H, each `x, y, z`); the loops use the first
//! `9 n` entries with `n = min(q.len(), grad.len()) / 9`, so a short gradient shortens the
//! cluster instead of panicking.

/// The Coulomb constant of the TIP3P parameters (kcal Å / (mol e²)), written again here so that
/// the hand-written loop shares nothing with the model but the values.
pub const KC: f64 = 332.0636;
const CHARGES: [f64; 3] = [-0.834, 0.417, 0.417];
const A: f64 = 582000.0;
const C: f64 = 595.0;

/// A plain all-pairs loop: `V` and `∇V` of the 9 Coulomb site pairs and the O–O
/// Lennard-Jones pair of every molecule pair, in closed form (`∂(1/r)/∂x = −d/r³`,
/// `∂(A/r¹² − C/r⁶)/∂x = (−12A/r¹⁴ + 6C/r⁸) d`); returns `V` and writes `∇V` to `grad`.
pub fn hand_written(q: &[f64], grad: &mut [f64]) -> f64 {
    grad.fill(0.0);
    let n = q.len().min(grad.len()) / 9;
    let mut energy = 0.0;
    for a in 0..n {
        for b in a + 1..n {
            for (s, qs) in CHARGES.iter().enumerate() {
                for (t, qt) in CHARGES.iter().enumerate() {
                    let (i, j) = (9 * a + 3 * s, 9 * b + 3 * t);
                    let d = [q[i] - q[j], q[i + 1] - q[j + 1], q[i + 2] - q[j + 2]];
                    let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                    let r = r2.sqrt();
                    let k = KC * qs * qt;
                    energy += k / r;
                    let mut scale = -k / (r2 * r);
                    if s == 0 && t == 0 {
                        let r6 = r2 * r2 * r2;
                        energy += A / (r6 * r6) - C / r6;
                        scale += -12.0 * A / (r6 * r6 * r2) + 6.0 * C / (r6 * r2);
                    }
                    for c in 0..3 {
                        grad[i + c] += scale * d[c];
                        grad[j + c] -= scale * d[c];
                    }
                }
            }
        }
    }
    energy
}

/// One molecule pair's `E` (9 Coulomb site pairs and the O–O Lennard-Jones) and its gradient
/// with respect to the pair's 18 coordinates (molecule `a`'s 9, then `b`'s), in closed form.
fn pair(q: &[f64], a: usize, b: usize, grad: &mut [f64; 18]) -> f64 {
    grad.fill(0.0);
    let mut energy = 0.0;
    for (s, qs) in CHARGES.iter().enumerate() {
        for (t, qt) in CHARGES.iter().enumerate() {
            let (i, j) = (9 * a + 3 * s, 9 * b + 3 * t);
            let d = [q[i] - q[j], q[i + 1] - q[j + 1], q[i + 2] - q[j + 2]];
            let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            let r = r2.sqrt();
            let k = KC * qs * qt;
            energy += k / r;
            let mut scale = -k / (r2 * r);
            if s == 0 && t == 0 {
                let r6 = r2 * r2 * r2;
                energy += A / (r6 * r6) - C / r6;
                scale += -12.0 * A / (r6 * r6 * r2) + 6.0 * C / (r6 * r2);
            }
            for c in 0..3 {
                grad[3 * s + c] += scale * d[c];
                grad[9 + 3 * t + c] -= scale * d[c];
            }
        }
    }
    energy
}

/// The all-pairs loop with a smooth cutoff on the O–O distance `r`, written independently of
/// the model and of `mechanism::runtime::switch`: each molecule pair's `E` times the quintic
/// switch `S = 1 − 10x³ + 15x⁴ − 6x⁵`, `x = (r − on)/(off − on)` (`S = 1` below `on`, pairs
/// at `r ≥ off` skipped), its gradient `S ∇E + E S'(r) ∇r` with `∇r = ±d/r` on the oxygens.
/// Returns `V` and writes `∇V` to `grad`.
pub fn hand_written_switched(q: &[f64], grad: &mut [f64], on: f64, off: f64) -> f64 {
    grad.fill(0.0);
    let n = q.len().min(grad.len()) / 9;
    let mut energy = 0.0;
    let mut local = [0.0; 18];
    for a in 0..n {
        for b in a + 1..n {
            let (i, j) = (9 * a, 9 * b);
            let d = [q[i] - q[j], q[i + 1] - q[j + 1], q[i + 2] - q[j + 2]];
            let r = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
            if r >= off {
                continue;
            }
            let e = pair(q, a, b, &mut local);
            let (s, ds) = if r <= on {
                (1.0, 0.0)
            } else {
                let w = off - on;
                let x = (r - on) / w;
                (
                    1.0 - 10.0 * x.powi(3) + 15.0 * x.powi(4) - 6.0 * x.powi(5),
                    (-30.0 * x.powi(2) + 60.0 * x.powi(3) - 30.0 * x.powi(4)) / w,
                )
            };
            energy += s * e;
            for k in 0..9 {
                grad[i + k] += s * local[k];
                grad[j + k] += s * local[9 + k];
            }
            for c in 0..3 {
                grad[i + c] += e * ds * d[c] / r;
                grad[j + c] -= e * ds * d[c] / r;
            }
        }
    }
    energy
}
