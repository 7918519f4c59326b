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
//! is kept. In every order, an unknown and its parent in the elimination tree are eliminated
//! together as one `2 × 2` pivot where the parent has no other child ([`paired`]): one
//! division instead of two in sequence.

use std::collections::BTreeSet;

use super::factor::{estimated_cycles, Factor};

/// Below this many unknowns a part is eliminated in its natural order.
const SMALLEST_PART: usize = 4;

/// Returns `order` with each unknown followed by its parent in the elimination tree where the
/// parent has no other child, and the sizes of the pivot blocks those pairs make (2, else 1).
///
/// A `2 × 2` pivot `[p q; q r]` costs one division (of its determinant `pr − q²`) where the
/// two `1 × 1` pivots it replaces cost two in sequence: in straight-line code, which waits for
/// each division, that halves the chain along a path of the elimination tree. Moving a parent
/// whose only child is the unknown just before it up to that child keeps the order a
/// topological order of the tree, so the fill is that of `order`.
pub(super) fn paired(
    order: &[usize],
    lower: &BTreeSet<(usize, usize)>,
) -> (Vec<usize>, Vec<usize>) {
    let n = order.len();
    let scalar = Factor::analyse(n, &permuted(lower, order));
    let parent: Vec<Option<usize>> = scalar.columns.iter().map(|c| c.first().copied()).collect();
    let mut children = vec![0usize; n];
    for p in parent.iter().flatten() {
        children[*p] += 1;
    }
    let mut taken = vec![false; n];
    let (mut paired, mut sizes) = (Vec::with_capacity(n), Vec::new());
    for j in 0..n {
        if taken[j] {
            continue;
        }
        taken[j] = true;
        paired.push(order[j]);
        match parent[j] {
            Some(p) if children[p] == 1 && !taken[p] => {
                taken[p] = true;
                paired.push(order[p]);
                sizes.push(2);
            }
            _ => sizes.push(1),
        }
    }
    (paired, sizes)
}

/// Returns the elimination order for the symmetric `n × n` pattern with strictly lower
/// entries `lower` (`order[k]` is the unknown eliminated `k`-th) and the factor's pattern in
/// that order: of the candidates — the natural order, the order [`from_both_ends`] and the
/// nested dissections ([`dissect`]) one level deep, two levels deep, … — the one with the
/// fewest [`estimated_cycles`], where it makes them a fifth fewer or less than the natural
/// order's; else the natural order.
///
/// Each candidate is [`paired`] into `2 × 2` pivots before it is estimated. The estimate is the
/// longer of the dependency chain and the work, because a dissection's fill adds work: on the
/// peer benchmark's chains, paired, the order from both ends shortens the chain from 512
/// cycles (natural, scalar) to 236 at 10 links and from 2 592 to 1 076 at 50 with no fill,
/// while at 50 links a dissection's fill adds half the work again with each level
/// (measurements at [`CYCLES_PER_OPERATION`]).
pub(super) fn elimination_order(
    n: usize,
    lower: &BTreeSet<(usize, usize)>,
) -> (Vec<usize>, Factor) {
    let natural: Vec<usize> = (0..n).collect();
    let analysed = |order: &[usize]| -> (Vec<usize>, Factor, u32) {
        let (order, sizes) = paired(order, lower);
        let factor = Factor::analyse_blocks(&sizes, &permuted(lower, &order));
        let cycles = estimated_cycles(&factor);
        (order, factor, cycles)
    };
    let mut adjacent = vec![BTreeSet::new(); n];
    for &(i, j) in lower {
        adjacent[i].insert(j);
        adjacent[j].insert(i);
    }
    let mut best = analysed(&natural);
    let natural_cycles = best.2;
    let mut previous = natural.clone();
    for depth in 0..=usize::BITS - n.leading_zeros() {
        let mut candidate = Vec::with_capacity(n);
        dissect(&natural, &adjacent, depth, &mut candidate);
        if depth > 0 && candidate == previous {
            break;
        }
        let found = analysed(&candidate);
        if 5 * found.2 <= 4 * natural_cycles && found.2 < best.2 {
            best = found;
        }
        previous = candidate;
    }
    let (order, mut factor, _) = best;
    factor.defer_where_faster();
    (order, factor)
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
    use super::super::factor::{critical_path, DIVISION, FLOP};
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
    fn a_division_is_deferred_where_the_chain_is_longer_than_the_work() {
        // The double pendulum's dense 4 × 4 matrix: two 2 × 2 pivots, the second updated by
        // the first only; deferred, its chain holds one division instead of two.
        let n = 4;
        let lower = (0..n).flat_map(|i| (0..i).map(move |j| (i, j))).collect();
        let (_, factor) = elimination_order(n, &lower);
        assert_eq!(factor.blocks, vec![(0, 2), (2, 2)]);
        assert_eq!(factor.deferred, vec![None, Some(0)]);
        let mut undeferred = factor.clone();
        undeferred.deferred = vec![None; 2];
        let (before, after) = (critical_path(&undeferred), critical_path(&factor));
        assert_eq!(before - after, DIVISION, "{before} → {after}");
        // The chains of the peer benchmark are bound by their work: nothing deferred.
        for links in [10, 50] {
            let (n, lower) = chain(links);
            let (_, factor) = elimination_order(n, &lower);
            assert!(factor.deferred.iter().all(Option::is_none), "{links} links");
        }
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

    /// Asserts that the block factor of `order` has the fill of the scalar factor of the same
    /// order: each column's rows below its block are the scalar column's, without the partner
    /// of a `2 × 2` pivot.
    fn assert_scalar_fill(
        n: usize,
        lower: &BTreeSet<(usize, usize)>,
        order: &[usize],
        factor: &Factor,
    ) {
        let scalar = Factor::analyse(n, &permuted(lower, order));
        for &(start, size) in &factor.blocks {
            for k in start..start + size {
                let expected: Vec<usize> = scalar.columns[k]
                    .iter()
                    .copied()
                    .filter(|&i| i >= start + size)
                    .collect();
                let union: BTreeSet<usize> = (start..start + size)
                    .flat_map(|j| scalar.columns[j].iter().copied())
                    .filter(|&i| i >= start + size)
                    .collect();
                assert_eq!(factor.unscaled[k], expected, "column {k}");
                assert_eq!(
                    factor.columns[k],
                    union.into_iter().collect::<Vec<_>>(),
                    "column {k}"
                );
            }
        }
    }

    #[test]
    fn chains_are_eliminated_from_both_ends_in_pairs() {
        for links in [10, 50] {
            let (n, lower) = chain(links);
            let natural = Factor::analyse(n, &lower);
            let (order, factor) = elimination_order(n, &lower);
            assert!(is_permutation(&order, n));
            assert_scalar_fill(n, &lower, &order, &factor);
            let pairs = factor.blocks.iter().filter(|b| b.1 == 2).count();
            let (before, after) = (critical_path(&natural), critical_path(&factor));
            println!(
                "{links} links: {pairs} pairs, critical path {before} → {after}, order {order:?}"
            );
            // Each end of the band is a path of the elimination tree: all but the middle
            // level's unknowns pair up.
            assert!(2 * pairs + 4 >= n, "{pairs} pairs of {n}");
            assert!(2 * after <= before, "{before} → {after}");
        }
    }

    #[test]
    fn a_path_of_the_elimination_tree_pairs_up_and_halves_the_divisions() {
        // Dense 4 × 4 (the double pendulum's M + βh² H): the tree is the path 0–1–2–3.
        let n = 4;
        let lower: BTreeSet<(usize, usize)> =
            (0..n).flat_map(|i| (0..i).map(move |j| (i, j))).collect();
        let (order, sizes) = paired(&(0..n).collect::<Vec<_>>(), &lower);
        assert_eq!((order, sizes.clone()), (vec![0, 1, 2, 3], vec![2, 2]));
        let (scalar, blocks) = (
            Factor::analyse(n, &lower),
            Factor::analyse_blocks(&sizes, &lower),
        );
        assert_eq!(blocks.blocks, vec![(0, 2), (2, 2)]);
        assert_eq!(
            (blocks.columns[0].clone(), blocks.unscaled[1].clone()),
            (vec![2, 3], vec![2, 3])
        );
        assert!(blocks.unscaled[2].is_empty() && blocks.columns[3].is_empty());
        // Two divisions on the chain instead of four.
        let (before, after) = (critical_path(&scalar), critical_path(&blocks));
        assert!(
            after + 2 * DIVISION <= before + 4 * FLOP,
            "{before} → {after}"
        );
        // A star (0 joined to 1, 2, 3): the centre, last, has three children and pairs with
        // none; the leaves have no edge between them.
        let star: BTreeSet<(usize, usize)> = [(3, 0), (3, 1), (3, 2)].into_iter().collect();
        assert_eq!(paired(&[0, 1, 2, 3], &star).1, vec![1, 1, 1, 1]);
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
}
