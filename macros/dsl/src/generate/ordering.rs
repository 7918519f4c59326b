//! The elimination order of an unrolled `LDLᵀ`, chosen at expansion time for the length of its
//! chain of dependent operations.
//!
//! Straight-line code for a small factorization is bound by latency, not by the number of
//! operations: each pivot waits for a division, and in the coordinates' order a banded matrix
//! (a chain of links) eliminates one pivot after the other, `n` divisions deep. A nested
//! dissection order (George 1973; for a path, eliminate the two halves first and the middle
//! last, recursively) makes the elimination tree about `log₂ n` levels deep, so independent
//! pivots overlap, at the cost of a little fill. [`elimination_order`] builds that order from
//! level structures of the matrix graph and keeps it only where the critical path of the
//! unrolled code, estimated with [`critical_path`], is clearly shorter than in the natural
//! order without much more work; otherwise (dense or small matrices, such as the double
//! pendulum's) the natural order is kept, and with it the generic kernels' bits.

use std::collections::BTreeSet;

/// Latency of an addition, multiplication or fused multiply-add, in cycles (the estimate's unit).
const FLOP: u32 = 4;
/// Latency of a division.
const DIVISION: u32 = 14;
/// Cycles per multiply-add of straight-line code at the throughput it reaches (a `mul_add`
/// is two instructions without FMA, plus register moves on x86-64's two-operand SSE2).
const CYCLES_PER_OPERATION: u32 = 1;
/// Below this many unknowns a part is eliminated in its natural order.
const SMALLEST_PART: usize = 4;

/// The structural nonzeros of the factor `L` of a symmetric `n × n` pattern, row by row, in
/// the elimination order (index `k` is the `k`-th unknown eliminated).
pub(super) struct Factor {
    /// `rows[i]`: the columns `j < i` with `L_ij` structurally nonzero, ascending.
    pub rows: Vec<Vec<usize>>,
    /// `columns[j]`: the rows `i > j` with `L_ij` structurally nonzero, ascending.
    pub columns: Vec<Vec<usize>>,
}

impl Factor {
    /// Computes the pattern of `L` for the strictly lower entries `lower` (`i > j`):
    /// `L_ij ≠ 0` if `A_ij ≠ 0` or `L_ik ≠ 0 ≠ L_jk` for some `k < j`.
    pub fn analyse(n: usize, lower: &BTreeSet<(usize, usize)>) -> Factor {
        let mut rows: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
        for &(i, j) in lower {
            rows[i].insert(j);
        }
        for j in 0..n {
            let above: Vec<usize> = rows[j].iter().copied().collect();
            for row in rows.iter_mut().skip(j + 1) {
                if !row.contains(&j) && above.iter().any(|k| row.contains(k)) {
                    row.insert(j);
                }
            }
        }
        let mut columns = vec![Vec::new(); n];
        for (i, row) in rows.iter().enumerate() {
            for &j in row {
                columns[j].push(i);
            }
        }
        Factor {
            rows: rows.into_iter().map(|r| r.into_iter().collect()).collect(),
            columns,
        }
    }

    /// Returns the columns `k < j` where both rows `i` and `j` of `L` are nonzero, ascending.
    pub fn common(&self, i: usize, j: usize) -> Vec<usize> {
        let other: BTreeSet<usize> = self.rows[j].iter().copied().collect();
        self.rows[i]
            .iter()
            .copied()
            .filter(|k| *k < j && other.contains(k))
            .collect()
    }

    /// Returns the multiply-adds of the factorization and both substitutions.
    fn operations(&self) -> usize {
        let factor: usize = (0..self.rows.len())
            .map(|j| {
                self.rows[j].len()
                    + self.columns[j]
                        .iter()
                        .map(|&i| self.common(i, j).len() + 1)
                        .sum::<usize>()
            })
            .sum();
        let substitutions: usize = self.rows.iter().map(|r| 2 * r.len() + 1).sum();
        factor + substitutions
    }
}

/// Returns the estimated length, in cycles, of the longest chain of dependent operations of
/// the unrolled factorization and solve that [`super::solve`] emits for `factor`: each
/// multiply-add waits for its operands, each pivot's reciprocal for a division, in the order
/// the emitted sums run (ascending in the factorization and the forward substitution,
/// descending in the back substitution).
pub(super) fn critical_path(factor: &Factor) -> u32 {
    let n = factor.rows.len();
    let mut l = vec![std::collections::BTreeMap::<usize, u32>::new(); n];
    let mut u = vec![std::collections::BTreeMap::<usize, u32>::new(); n];
    let mut inverse = vec![0u32; n];
    for j in 0..n {
        let pivot = factor.rows[j]
            .iter()
            .fold(0, |acc, &k| acc.max(u[j][&k]).max(l[j][&k]) + FLOP);
        inverse[j] = pivot + DIVISION;
        for &i in &factor.columns[j] {
            let unscaled = factor
                .common(i, j)
                .into_iter()
                .fold(0, |acc, k| acc.max(l[i][&k]).max(u[j][&k]) + FLOP);
            u[i].insert(j, unscaled);
            l[i].insert(j, unscaled.max(inverse[j]) + FLOP);
        }
    }
    let mut y = vec![0u32; n];
    for i in 0..n {
        y[i] = factor.rows[i]
            .iter()
            .fold(0, |acc, &k| acc.max(l[i][&k]).max(y[k]) + FLOP);
    }
    let mut x = vec![0u32; n];
    for k in (0..n).rev() {
        let z = y[k].max(inverse[k]) + FLOP;
        x[k] = factor.columns[k]
            .iter()
            .rev()
            .fold(z, |acc, &i| acc.max(l[i][&k]).max(x[i]) + FLOP);
    }
    x.into_iter().max().unwrap_or(0)
}

/// Returns the estimated cycles of the unrolled factorization and solve: the longer of its
/// critical path and its work, at [`CYCLES_PER_OPERATION`] per multiply-add.
fn estimated_cycles(factor: &Factor) -> u32 {
    let work = u32::try_from(factor.operations()).unwrap_or(u32::MAX);
    critical_path(factor).max(work.saturating_mul(CYCLES_PER_OPERATION))
}

/// Returns the elimination order for the symmetric `n × n` pattern with strictly lower
/// entries `lower` (`order[k]` is the unknown eliminated `k`-th) and the factor's pattern in
/// that order: nested dissection where it makes the [`estimated_cycles`] a fifth fewer or
/// less, else the natural order.
///
/// The estimate is the longer of the dependency chain and the work, because the dissection's
/// fill adds work: on the peer benchmark's chains it shortened the chain from 512 to 240
/// cycles at 10 links (measured 277 → 193 ns per Z&Ss step) but at 50 links the doubled work
/// (1 280 → 2 400 multiply-adds) outweighed the shorter chain (measured 1.73 → 2.06 µs).
pub(super) fn elimination_order(
    n: usize,
    lower: &BTreeSet<(usize, usize)>,
) -> (Vec<usize>, Factor) {
    let natural: Vec<usize> = (0..n).collect();
    let natural_factor = Factor::analyse(n, lower);
    let mut adjacent = vec![BTreeSet::new(); n];
    for &(i, j) in lower {
        adjacent[i].insert(j);
        adjacent[j].insert(i);
    }
    let mut dissected = Vec::with_capacity(n);
    dissect(&natural, &adjacent, &mut dissected);
    if dissected == natural {
        return (natural, natural_factor);
    }
    let dissected_factor = Factor::analyse(n, &permuted(lower, &dissected));
    if 5 * estimated_cycles(&dissected_factor) <= 4 * estimated_cycles(&natural_factor) {
        (dissected, dissected_factor)
    } else {
        (natural, natural_factor)
    }
}

/// Returns the strictly lower entries of `P A Pᵀ` for the order `order` (entry `(i, j)` of
/// `A` moves to the positions of `i` and `j` in `order`).
fn permuted(lower: &BTreeSet<(usize, usize)>, order: &[usize]) -> BTreeSet<(usize, usize)> {
    let mut position = vec![0; order.len()];
    for (k, &unknown) in order.iter().enumerate() {
        position[unknown] = k;
    }
    lower
        .iter()
        .map(|&(i, j)| {
            let (a, b) = (position[i], position[j]);
            (a.max(b), a.min(b))
        })
        .collect()
}

/// Appends the nested dissection order of the unknowns `part` (ascending) of the graph
/// `adjacent` to `order`: a middle level of a breadth-first level structure from a
/// pseudo-peripheral unknown separates the part; the unknowns before it and after it are
/// ordered recursively, then the separator. Parts that are small, or too connected to have
/// three levels, keep their natural order.
fn dissect(part: &[usize], adjacent: &[BTreeSet<usize>], order: &mut Vec<usize>) {
    if part.len() < SMALLEST_PART {
        order.extend_from_slice(part);
        return;
    }
    let inside: BTreeSet<usize> = part.iter().copied().collect();
    // From the first unknown, go to the farthest one twice (a pseudo-peripheral start).
    let mut levels = level_structure(part[0], adjacent, &inside);
    for _ in 0..2 {
        let far = *levels.last().and_then(|l| l.first()).unwrap_or(&part[0]);
        levels = level_structure(far, adjacent, &inside);
    }
    let reached: usize = levels.iter().map(Vec::len).sum();
    if levels.len() < 3 || reached < part.len() {
        // Too connected to separate, or disconnected (order each component on its own).
        if reached < part.len() {
            let first: BTreeSet<usize> = levels.iter().flatten().copied().collect();
            let (a, b): (Vec<usize>, Vec<usize>) = part.iter().partition(|u| first.contains(u));
            dissect(&a, adjacent, order);
            dissect(&b, adjacent, order);
        } else {
            order.extend_from_slice(part);
        }
        return;
    }
    let middle = levels.len() / 2;
    let sorted = |units: Vec<usize>| -> Vec<usize> {
        let mut units = units;
        units.sort_unstable();
        units
    };
    let before = sorted(levels[..middle].iter().flatten().copied().collect());
    let after = sorted(levels[middle + 1..].iter().flatten().copied().collect());
    let separator = sorted(levels[middle].clone());
    dissect(&before, adjacent, order);
    dissect(&after, adjacent, order);
    order.extend(separator);
}

/// Returns the breadth-first levels from `root` within `inside`, each ascending.
fn level_structure(
    root: usize,
    adjacent: &[BTreeSet<usize>],
    inside: &BTreeSet<usize>,
) -> Vec<Vec<usize>> {
    let mut seen = BTreeSet::from([root]);
    let mut levels = Vec::new();
    let mut current = vec![root];
    loop {
        let mut next: BTreeSet<usize> = BTreeSet::new();
        for &u in &current {
            for &w in &adjacent[u] {
                if inside.contains(&w) && !seen.contains(&w) {
                    next.insert(w);
                }
            }
        }
        levels.push(std::mem::replace(
            &mut current,
            next.iter().copied().collect(),
        ));
        if next.is_empty() {
            return levels;
        }
        seen.extend(next);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lower pattern of a chain of `links` 2 × 2 blocks coupled to their neighbours.
    fn chain(links: usize) -> (usize, BTreeSet<(usize, usize)>) {
        let n = 2 * links;
        let lower = (0..n)
            .flat_map(|i| (0..i).map(move |j| (i, j)))
            .filter(|&(i, j)| i / 2 - j / 2 <= 1)
            .collect();
        (n, lower)
    }

    #[test]
    fn a_dense_matrix_keeps_the_natural_order() {
        let n = 4;
        let lower = (0..n).flat_map(|i| (0..i).map(move |j| (i, j))).collect();
        let (order, _) = elimination_order(n, &lower);
        assert_eq!(order, vec![0, 1, 2, 3]);
    }

    #[test]
    fn a_short_chain_is_dissected_and_a_long_one_where_work_dominates_is_not() {
        let (n, lower) = chain(10);
        let natural = Factor::analyse(n, &lower);
        let (order, factor) = elimination_order(n, &lower);
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..n).collect::<Vec<_>>(), "a permutation");
        assert_ne!(order, sorted, "dissected");
        let (before, after) = (critical_path(&natural), critical_path(&factor));
        println!(
            "10 links: critical path {before} → {after}, operations {} → {}",
            natural.operations(),
            factor.operations()
        );
        assert!(2 * after <= before, "{before} → {after}");
        let (n, lower) = chain(50);
        let (order, _) = elimination_order(n, &lower);
        assert_eq!(order, (0..n).collect::<Vec<_>>(), "50 links: natural");
    }

    #[test]
    fn the_critical_path_of_a_diagonal_is_one_division_and_one_product() {
        let factor = Factor::analyse(3, &BTreeSet::new());
        assert_eq!(critical_path(&factor), DIVISION + FLOP);
    }
}
