//! A plain hand-written all-pairs loop of the TIP3P cluster's potential (Tao–Owhadi 2014 eq. 24:
//! 9 Coulomb site pairs and the O–O Lennard-Jones per molecule pair), sharing nothing with the
//! generated `models::WaterCluster` but the parameter values: the reference of `tests/water.rs`
//! and `benches/water_forces.rs`.

/// The TIP3P parameters, written again here so that the hand-written loop shares nothing with
/// the model but the values.
pub const KC: f64 = 332.0636;
const CHARGES: [f64; 3] = [-0.834, 0.417, 0.417];
const A: f64 = 582000.0;
const C: f64 = 595.0;

/// A plain all-pairs loop: `V` and `∇V` of the 9 Coulomb site pairs and the O–O
/// Lennard-Jones pair of every molecule pair, in closed form (`∂(1/r)/∂x = −d/r³`,
/// `∂(A/r¹² − C/r⁶)/∂x = (−12A/r¹⁴ + 6C/r⁸) d`).
pub fn hand_written(q: &[f64], grad: &mut [f64]) -> f64 {
    grad.fill(0.0);
    let n = q.len() / 9;
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
