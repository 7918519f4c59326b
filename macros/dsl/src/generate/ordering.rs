//! The elimination order of an unrolled `LDLᵀ`, chosen at expansion time for the length of its
//! chain of dependent operations.
//!
//! Straight-line code for a small factorization is bound by latency, not by the number of
//! operations: each pivot waits for a division, and in the coordinates' order a banded matrix
//! (a chain of links) eliminates one pivot after the other, `n` divisions deep. Eliminating
//! from both ends toward the middle (a "twisted" order) halves that depth with no fill; a
//! nested dissection order (George 1973; for a path, eliminate the two halves first and the
//! middle last, recursively) makes the elimination tree about `log₂ n` levels deep, so
//! independent pivots overlap, at the cost of some fill. Independent parts are interleaved in
//! the order, so that their code sits side by side within the processor's out-of-order
//! window. [`elimination_order`] builds these orders from level structures of the matrix graph
//! and keeps the best only where the unrolled code's estimated cycles (the longer of its
//! critical path, [`critical_path`], and its work) are clearly fewer than in the natural
//! order; otherwise (dense or small matrices, such as the double pendulum's) the natural order
//! is kept, and with it the generic kernels' bits.

use std::collections::BTreeSet;

/// Latency of an addition, multiplication or fused multiply-add, in cycles (the estimate's unit).
const FLOP: u32 = 4;
/// Latency of a division.
const DIVISION: u32 = 14;
/// Cycles per multiply-add of straight-line code at the throughput it reaches, as the ratio
/// `(numerator, denominator)`: ¾. Fitted to the peer benchmark's penalized chains (Z&Ss steps,
/// portable build, ns per step for the natural order / from both ends / dissected one level /
/// fully): 278 / 204 / 182 / 179 at 10 links, 1 695 / 1 433 / 2 012 / 2 500 at 50. With
/// ¾ the estimate picks the fastest order of both (one level of dissection at 10 links, both
/// ends at 50); any weight from 0.69 to 0.86 would.
const CYCLES_PER_OPERATION: (u32, u32) = (3, 4);
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
    let (numerator, denominator) = CYCLES_PER_OPERATION;
    let work = u32::try_from(factor.operations()).unwrap_or(u32::MAX);
    critical_path(factor).max(work.saturating_mul(numerator) / denominator)
}

/// Returns the elimination order for the symmetric `n × n` pattern with strictly lower
/// entries `lower` (`order[k]` is the unknown eliminated `k`-th) and the factor's pattern in
/// that order: of the candidates — the natural order, the order [`from_both_ends`] and the
/// nested dissections ([`dissect`]) one level deep, two levels deep, … — the one with the
/// fewest [`estimated_cycles`], where it makes them a fifth fewer or less than the natural
/// order's; else the natural order.
///
/// The estimate is the longer of the dependency chain and the work, because a dissection's
/// fill adds work: on the peer benchmark's chains one level of dissection shortens the chain
/// from 512 to 208 cycles at 10 links, and the order from both ends to 304 with no fill; at 50
/// links the dissection's work grows from 1 280 to 1 952 multiply-adds and more with each
/// level, while the order from both ends halves the chain (2 592 → 1 344) at the natural
/// order's work (measurements at [`CYCLES_PER_OPERATION`]).
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
    let natural_cycles = estimated_cycles(&natural_factor);
    let mut best = (natural.clone(), natural_factor, natural_cycles);
    let mut previous = natural.clone();
    for depth in 0..=usize::BITS - n.leading_zeros() {
        let mut candidate = Vec::with_capacity(n);
        dissect(&natural, &adjacent, depth, &mut candidate);
        if depth > 0 && candidate == previous {
            break;
        }
        let factor = Factor::analyse(n, &permuted(lower, &candidate));
        let cycles = estimated_cycles(&factor);
        if 5 * cycles <= 4 * natural_cycles && cycles < best.2 {
            best = (candidate.clone(), factor, cycles);
        }
        previous = candidate;
    }
    (best.0, best.1)
}

/// Appends to `order` the unknowns `part` (ascending) of the graph `adjacent` eliminated from
/// both ends of a breadth-first level structure toward its middle level, which comes last:
/// the levels before the middle from the first inward, those after it from the last inward,
/// alternating level by level so that the two independent halves of the work sit side by side
/// in the emitted code, where the processor can overlap them. Each unknown is eliminated after
/// the outer of its two neighbouring levels, so a band gains no fill, and its chain of
/// dependent pivots is half as long as in the natural order. Each connected component is
/// ordered on its own; a component of fewer than three levels keeps its natural order.
fn from_both_ends(part: &[usize], adjacent: &[BTreeSet<usize>], order: &mut Vec<usize>) {
    let Some((levels, rest)) = separate(part, adjacent) else {
        order.extend_from_slice(part);
        return;
    };
    if levels.len() < 3 {
        order.extend(levels.iter().flatten());
    } else {
        let middle = levels.len() / 2;
        let (before, after) = (&levels[..middle], &levels[middle + 1..]);
        for k in 0..before.len().max(after.len()) {
            if let Some(level) = before.get(k) {
                order.extend_from_slice(level);
            }
            if let Some(level) = after.len().checked_sub(k + 1).map(|i| &after[i]) {
                order.extend_from_slice(level);
            }
        }
        order.extend_from_slice(&levels[middle]);
    }
    if !rest.is_empty() {
        from_both_ends(&rest, adjacent, order);
    }
}

/// Returns the breadth-first level structure of the connected component of `part[0]` within
/// `part` from a pseudo-peripheral unknown (from the first unknown, the farthest one, twice),
/// each level ascending, and the unknowns of `part` outside that component (ascending); `None`
/// for an empty part.
fn separate(part: &[usize], adjacent: &[BTreeSet<usize>]) -> Option<(Vec<Vec<usize>>, Vec<usize>)> {
    let &first = part.first()?;
    let inside: BTreeSet<usize> = part.iter().copied().collect();
    let mut levels = level_structure(first, adjacent, &inside);
    for _ in 0..2 {
        let far = *levels.last().and_then(|l| l.first()).unwrap_or(&first);
        levels = level_structure(far, adjacent, &inside);
    }
    let reached: BTreeSet<usize> = levels.iter().flatten().copied().collect();
    let rest = part
        .iter()
        .copied()
        .filter(|u| !reached.contains(u))
        .collect();
    Some((levels, rest))
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
/// pseudo-peripheral unknown ([`separate`]) separates the part; the unknowns before it and
/// after it are ordered recursively and [`interleaved`], then the separator. Parts that are
/// small, or too connected to have three levels, keep their natural order; disconnected
/// components are ordered each on its own and interleaved.
fn dissect(part: &[usize], adjacent: &[BTreeSet<usize>], depth: u32, order: &mut Vec<usize>) {
    if depth == 0 {
        from_both_ends(part, adjacent, order);
        return;
    }
    if part.len() < SMALLEST_PART {
        order.extend_from_slice(part);
        return;
    }
    let Some((levels, rest)) = separate(part, adjacent) else {
        return;
    };
    let sorted = |units: Vec<usize>| -> Vec<usize> {
        let mut units = units;
        units.sort_unstable();
        units
    };
    let (first, second, separator) = if !rest.is_empty() {
        (sorted(levels.concat()), rest, Vec::new())
    } else if levels.len() < 3 {
        order.extend_from_slice(part);
        return;
    } else {
        let middle = levels.len() / 2;
        (
            sorted(levels[..middle].concat()),
            sorted(levels[middle + 1..].concat()),
            levels[middle].clone(),
        )
    };
    let (mut a, mut b) = (Vec::new(), Vec::new());
    dissect(&first, adjacent, depth - 1, &mut a);
    dissect(&second, adjacent, depth - 1, &mut b);
    interleaved(&a, &b, order);
    order.extend(separator);
}

/// Appends the orders `a` and `b` of two parts with no edge between them to `order`,
/// alternating one unknown of each: the fill and the dependencies are those of `a` then `b`,
/// but the emitted code of the two independent parts sits side by side, within reach of the
/// processor's out-of-order window.
fn interleaved(a: &[usize], b: &[usize], order: &mut Vec<usize>) {
    for k in 0..a.len().max(b.len()) {
        order.extend(a.get(k));
        order.extend(b.get(k));
    }
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

    /// Returns whether `order` is a permutation of `0..n`.
    fn is_permutation(order: &[usize], n: usize) -> bool {
        let mut sorted = order.to_vec();
        sorted.sort_unstable();
        sorted == (0..n).collect::<Vec<_>>()
    }

    #[test]
    fn a_short_chain_is_dissected_and_a_long_one_eliminated_from_both_ends() {
        let (n, lower) = chain(10);
        let natural = Factor::analyse(n, &lower);
        let (order, factor) = elimination_order(n, &lower);
        assert!(is_permutation(&order, n));
        let (before, after) = (critical_path(&natural), critical_path(&factor));
        println!(
            "10 links: critical path {before} → {after}, operations {} → {}",
            natural.operations(),
            factor.operations()
        );
        assert!(2 * after <= before, "{before} → {after}");
        assert!(
            factor.operations() > natural.operations(),
            "dissected: some fill"
        );

        let (n, lower) = chain(50);
        let natural = Factor::analyse(n, &lower);
        let (order, factor) = elimination_order(n, &lower);
        assert!(is_permutation(&order, n));
        // From both ends: the two end blocks first, no fill, half the chain.
        assert_eq!(&order[..4], &[0, n - 2, n - 1, 1]);
        assert_eq!(factor.operations(), natural.operations(), "no fill");
        let (before, after) = (critical_path(&natural), critical_path(&factor));
        println!("50 links: critical path {before} → {after}");
        assert!(100 * after <= 55 * before, "{before} → {after}");
    }

    #[test]
    fn from_both_ends_orders_each_component_and_adds_no_fill_to_a_path() {
        // Two paths, 0–1–…–6 and 7–…–9, as one pattern.
        let n = 10;
        let lower: BTreeSet<(usize, usize)> =
            (1..n).filter(|&i| i != 7).map(|i| (i, i - 1)).collect();
        let mut adjacent = vec![BTreeSet::new(); n];
        for &(i, j) in &lower {
            adjacent[i].insert(j);
            adjacent[j].insert(i);
        }
        let mut order = Vec::new();
        from_both_ends(&(0..n).collect::<Vec<_>>(), &adjacent, &mut order);
        assert_eq!(order, vec![0, 6, 1, 5, 2, 4, 3, 7, 9, 8]);
        let factor = Factor::analyse(n, &permuted(&lower, &order));
        assert_eq!(factor.operations(), Factor::analyse(n, &lower).operations());
    }

    #[test]
    fn the_critical_path_of_a_diagonal_is_one_division_and_one_product() {
        let factor = Factor::analyse(3, &BTreeSet::new());
        assert_eq!(critical_path(&factor), DIVISION + FLOP);
    }
}
