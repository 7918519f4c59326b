//! Pseudo-random sample points for the checks that structure alone cannot decide (is this
//! identity true, is this matrix singular everywhere). Deterministic, so a model always
//! compiles to the same result.

use std::collections::HashMap;

use mechanism_cas::{eval, Id, Store, Symbol};

use crate::lower::Symbols;

/// Values for every symbol of a model at one point.
pub struct Point {
    values: HashMap<Symbol, f64>,
}

impl Point {
    /// Evaluates `id` at this point; `None` where it is undefined or not finite.
    pub fn eval(&self, store: &Store, id: Id) -> Option<f64> {
        eval(store, id, &|s| self.values.get(&s).copied())
            .ok()
            .filter(|x| x.is_finite())
    }

    /// Evaluates a matrix of expressions; `None` if any entry is undefined.
    pub fn eval_matrix(&self, store: &Store, rows: &[Vec<Id>]) -> Option<Vec<Vec<f64>>> {
        rows.iter()
            .map(|row| row.iter().map(|&id| self.eval(store, id)).collect())
            .collect()
    }
}

/// Returns `count` sample points. Coordinates, velocities and directions are drawn from
/// [-1.3, 1.3], time from [0, 2]; parameters take `parameters` (their defaults) when given,
/// otherwise values in [0.5, 1.5].
pub fn points(symbols: &Symbols, parameters: Option<&[f64]>, count: usize) -> Vec<Point> {
    let mut rng = SplitMix64(0x6d65_6368_616e_6973);
    (0..count)
        .map(|_| {
            let mut values = HashMap::new();
            for &s in symbols.q.iter().chain(&symbols.v).chain(&symbols.a) {
                values.insert(s, rng.uniform(-1.3, 1.3));
            }
            for (i, &s) in symbols.p.iter().enumerate() {
                let value = match parameters {
                    Some(defaults) => defaults.get(i).copied().unwrap_or(1.0),
                    None => rng.uniform(0.5, 1.5),
                };
                values.insert(s, value);
            }
            values.insert(symbols.t, rng.uniform(0.0, 2.0));
            values.insert(symbols.omega, 10.0);
            Point { values }
        })
        .collect()
}

/// Returns whether `a` and `b` agree at every sample point where both are defined.
pub fn agree(store: &Store, symbols: &Symbols, a: Id, b: Id) -> bool {
    points(symbols, None, 8).iter().all(|point| {
        match (point.eval(store, a), point.eval(store, b)) {
            (Some(x), Some(y)) => (x - y).abs() <= 1e-9 * (1.0 + x.abs().max(y.abs())),
            // No evidence against the identity where an expression is undefined.
            _ => true,
        }
    })
}

/// Returns, for the rows of `matrix` in order, whether each one is linearly independent of the
/// rows before it (Gaussian elimination with a relative tolerance).
pub fn independent_rows(matrix: &[Vec<f64>]) -> Vec<bool> {
    let scale = matrix
        .iter()
        .flatten()
        .fold(0.0f64, |m, x| m.max(x.abs()))
        .max(f64::MIN_POSITIVE);
    let tolerance = 1e-10 * scale;
    // Reduced row echelon form: every basis row has a pivot column that is zero in the others.
    let mut basis: Vec<(usize, Vec<f64>)> = Vec::new();
    matrix
        .iter()
        .map(|row| {
            let mut r = row.clone();
            for (pivot, b) in &basis {
                let factor = r[*pivot] / b[*pivot];
                for (x, y) in r.iter_mut().zip(b) {
                    *x -= factor * y;
                }
            }
            let (pivot, size) = r.iter().enumerate().fold((0, 0.0f64), |(k, m), (j, x)| {
                if x.abs() > m {
                    (j, x.abs())
                } else {
                    (k, m)
                }
            });
            if size <= tolerance {
                return false;
            }
            for (_, b) in basis.iter_mut() {
                let factor = b[pivot] / r[pivot];
                for (x, y) in b.iter_mut().zip(&r) {
                    *x -= factor * y;
                }
            }
            basis.push((pivot, r));
            true
        })
        .collect()
}

/// A small deterministic generator.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn uniform(&mut self, low: f64, high: f64) -> f64 {
        let unit = (self.next() >> 11) as f64 / (1u64 << 53) as f64;
        low + (high - low) * unit
    }
}
