//! Pseudo-random sample points for the checks that structure alone cannot decide (is this
//! identity true, is this matrix singular everywhere). Deterministic, so a model always
//! compiles to the same result.

use std::collections::HashMap;

use mechanism_cas::{eval, Id, Store, Symbol};

use crate::symbols::Symbols;

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

impl Point {
    /// Sets the value of `symbol`.
    pub fn set(&mut self, symbol: Symbol, value: f64) {
        self.values.insert(symbol, value);
    }

    /// Returns the value of `symbol` (0 if it has none).
    pub fn get(&self, symbol: Symbol) -> f64 {
        self.values.get(&symbol).copied().unwrap_or(0.0)
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

/// Returns whether the symmetric matrix `m` has a direction `x` with `xᵀ m x < 0` beyond
/// round-off: symmetric elimination with the largest diagonal pivot, which for a positive
/// semidefinite matrix never meets a negative pivot and leaves a zero block behind.
pub fn indefinite(m: &[Vec<f64>]) -> bool {
    let scale = m
        .iter()
        .flatten()
        .fold(0.0f64, |s, x| s.max(x.abs()))
        .max(f64::MIN_POSITIVE);
    let tolerance = 1e-10 * scale;
    let mut a: Vec<Vec<f64>> = m.to_vec();
    let mut left: Vec<usize> = (0..a.len()).collect();
    while !left.is_empty() {
        let mut k = 0;
        for (index, &i) in left.iter().enumerate() {
            if a[i][i] > a[left[k]][left[k]] {
                k = index;
            }
        }
        let p = left[k];
        let pivot = a[p][p];
        if pivot < -tolerance {
            return true;
        }
        if pivot <= tolerance {
            // Every remaining diagonal entry is ~0: PSD only if the whole block is.
            return left
                .iter()
                .any(|&i| left.iter().any(|&j| a[i][j].abs() > tolerance));
        }
        left.swap_remove(k);
        for &i in &left {
            let factor = a[i][p] / pivot;
            for &j in &left {
                a[i][j] -= factor * a[p][j];
            }
        }
    }
    false
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

#[cfg(test)]
mod tests {
    use super::indefinite;

    #[test]
    fn indefinite_finds_negative_directions_only() {
        assert!(!indefinite(&[vec![2.0, 0.0], vec![0.0, 0.0]]));
        assert!(!indefinite(&[vec![1.0, 1.0], vec![1.0, 1.0]]));
        assert!(indefinite(&[vec![0.0, 1.0], vec![1.0, 0.0]]));
        assert!(indefinite(&[vec![1.0, 0.0], vec![0.0, -1.0]]));
        assert!(indefinite(&[vec![1.0, 2.0], vec![2.0, 1.0]]));
        assert!(!indefinite(&[vec![0.0]]));
    }
}
