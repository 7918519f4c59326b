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

use std::collections::{BTreeMap, BTreeSet};

/// Per row, the cycle at which each of its entries (by column) is ready.
type Ready = Vec<BTreeMap<usize, u32>>;

/// Latency of an addition, multiplication or fused multiply-add, in cycles (the estimate's unit).
const FLOP: u32 = 4;
/// Latency of a division.
const DIVISION: u32 = 14;
/// Cycles per multiply-add of straight-line code at the throughput it reaches, as the ratio
/// `(numerator, denominator)`: ¾. Fitted to the peer benchmark's penalized chains (Z&Ss steps,
/// portable build, ns per step for the natural order / from both ends / dissected one level /
/// two levels), first with `1 × 1` pivots only: 278 / 204 / 182 / 179 at 10 links,
/// 1 695 / 1 433 / 2 012 / 2 500 at 50, where ¾ picks the fastest order of both (any weight
/// from 0.69 to 0.86 would). With the `2 × 2` pivots of [`paired`]: 233 / 190 / 193 / 196 at
/// 10 links, 1 073 / 857 / 1 184 / 1 620 at 50; ¾ picks both ends for both, the fastest.
const CYCLES_PER_OPERATION: (u32, u32) = (3, 4);
/// Below this many unknowns a part is eliminated in its natural order.
const SMALLEST_PART: usize = 4;

/// The pivot blocks and the structural nonzeros of the factor of a symmetric `n × n` pattern
/// in the elimination order (index `k` is the `k`-th unknown eliminated): the block `LDLᵀ`
/// `P A Pᵀ = L D Lᵀ` with `D` block diagonal, of `1 × 1` pivots and `2 × 2` pivots (an unknown
/// and its parent in the elimination tree, eliminated together: [`paired`]).
#[derive(Clone)]
pub(super) struct Factor {
    /// The pivot blocks in order, as `(first position, size)` with size 1 or 2.
    pub blocks: Vec<(usize, usize)>,
    /// `rows[i]`: the columns `j` of earlier blocks with `L_ij` structurally nonzero, ascending.
    pub rows: Vec<Vec<usize>>,
    /// `columns[j]`: the rows `i` below `j`'s block with `L_ij` structurally nonzero,
    /// ascending (for both columns of a `2 × 2` pivot, the rows where either is nonzero).
    pub columns: Vec<Vec<usize>>,
    /// `unscaled[j]`: the rows `i` below `j`'s block whose updated entry `u_ij` (the entry
    /// after the elimination of the earlier blocks, `L_iJ = U_iJ D_J⁻¹`) is structurally
    /// nonzero, ascending; `columns[j]` itself for a `1 × 1` pivot.
    pub unscaled: Vec<Vec<usize>>,
    /// `deferred[b]`: for a block whose division is deferred, the one earlier block `K` that
    /// updates it (its index in `blocks`); see [`Factor::defer_where_faster`].
    pub deferred: Vec<Option<usize>>,
    /// `block_of[k]`: the index in `blocks` of position `k`'s block.
    block_of: Vec<usize>,
}

impl Factor {
    /// Computes the pattern of the scalar `L` (every pivot `1 × 1`) for the strictly lower
    /// entries `lower` (`i > j`): `L_ij ≠ 0` if `A_ij ≠ 0` or `L_ik ≠ 0 ≠ L_jk` for some `k < j`.
    pub fn analyse(n: usize, lower: &BTreeSet<(usize, usize)>) -> Factor {
        Factor::analyse_blocks(&vec![1; n], lower)
    }

    /// Computes the pattern of the block `L` with pivot blocks of the sizes `sizes` (in
    /// order, summing to `n`) for the strictly lower entries `lower`: a block's rows below it
    /// are those where any of its columns is nonzero after the earlier blocks' fill, and its
    /// elimination fills every pair of them.
    pub fn analyse_blocks(sizes: &[usize], lower: &BTreeSet<(usize, usize)>) -> Factor {
        let n = sizes.iter().sum();
        let mut pattern: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
        for &(i, j) in lower {
            pattern[j].insert(i);
        }
        let (mut blocks, mut block_of) = (Vec::new(), Vec::with_capacity(n));
        let mut columns = vec![Vec::new(); n];
        let mut unscaled = vec![Vec::new(); n];
        let mut start = 0;
        for &size in sizes {
            let end = start + size;
            let below: BTreeSet<usize> = (start..end)
                .flat_map(|k| pattern[k].range(end..).copied().collect::<Vec<_>>())
                .collect();
            for k in start..end {
                unscaled[k] = pattern[k].range(end..).copied().collect();
                columns[k] = below.iter().copied().collect();
                block_of.push(blocks.len());
            }
            for &i in &below {
                for &lower_row in below.range(..i) {
                    pattern[lower_row].insert(i);
                }
            }
            blocks.push((start, size));
            start = end;
        }
        let mut rows = vec![Vec::new(); n];
        for (j, column) in columns.iter().enumerate() {
            for &i in column {
                rows[i].push(j);
            }
        }
        let deferred = vec![None; blocks.len()];
        Factor {
            blocks,
            rows,
            columns,
            unscaled,
            deferred,
            block_of,
        }
    }

    /// Defers the division of every block updated by a single earlier block that is not
    /// deferred itself, where that makes the [`estimated_cycles`] fewer; else defers none.
    ///
    /// A block `J` updated only by `K` (pivot block `D_K`, determinant `det_K`, for a `1 × 1`
    /// pivot `d_K`) can be factored scaled by `det_K`, from the numerators `ln_iK = L_iK det_K`
    /// of `K`'s column (`U_iK adj(D_K)`) instead of `L_iK = ln_iK / det_K`:
    ///
    /// ```text
    /// u'_ij = det_K A_ij − Σ_k ln_ik u_jk = det_K u_ij,    y'_j = det_K b_j − Σ_k ln_jk y_k
    /// L_iJ = U'_iJ adj(D'_J) / det D'_J,    z_J = adj(D'_J) y'_J / det D'_J
    /// ```
    ///
    /// where the scale cancels (`D'_J = det_K D_J`), so `J` waits for `det_K`, not for its
    /// reciprocal: one division fewer on the chain of dependent operations. `J`'s pivot tests
    /// are the same tests scaled by `det_K > 0`, and its `u` and `y` that later blocks read are
    /// the scaled ones times `1/det_K`, computed beside the chain. Along a chain of blocks this
    /// defers every second division; it costs a multiplication per entry of `J`, so it pays
    /// only where the factorization is bound by its chain rather than its work (the double
    /// pendulum's two `2 × 2` pivots, not the chains of the peer benchmark).
    pub fn defer_where_faster(&mut self) {
        let mut deferred: Vec<Option<usize>> = Vec::with_capacity(self.blocks.len());
        for block in 0..self.blocks.len() {
            let by = self
                .single_predecessor(block)
                .filter(|&k| deferred[k].is_none());
            deferred.push(by);
        }
        if deferred.iter().all(Option::is_none) {
            return;
        }
        let before = estimated_cycles(self);
        let undeferred = std::mem::replace(&mut self.deferred, deferred);
        if estimated_cycles(self) >= before {
            self.deferred = undeferred;
        }
    }

    /// Returns the one earlier block (its index in `blocks`) that the block `block` is updated
    /// by, where there is exactly one: every `L_jk` in the rows `j` of `block` has its column
    /// `k` in that block. `None` for a block updated by none or by several.
    pub fn single_predecessor(&self, block: usize) -> Option<usize> {
        let (start, size) = self.blocks[block];
        let mut predecessors =
            (start..start + size).flat_map(|j| self.rows[j].iter().map(|&k| self.block_of[k]));
        let first = predecessors.next()?;
        predecessors.all(|k| k == first).then_some(first)
    }

    /// Returns the columns `k` of blocks before `j`'s where `L_ik` and the updated entry
    /// `u_jk` are both nonzero, ascending: the terms `L_ik u_jk` of the update of entry
    /// `(i, j)` (`i ≥ j`) by the earlier blocks.
    pub fn common(&self, i: usize, j: usize) -> Vec<usize> {
        self.rows[i]
            .iter()
            .copied()
            .filter(|&k| {
                self.block_of[k] < self.block_of[j] && self.unscaled[k].binary_search(&j).is_ok()
            })
            .collect()
    }

    /// Returns the multiply-adds of the factorization and both substitutions.
    fn operations(&self) -> usize {
        let pivots: usize = self
            .blocks
            .iter()
            .map(|&(start, size)| {
                if size == 2 {
                    8 + self.common(start + 1, start).len()
                } else {
                    1
                }
            })
            .sum();
        let factor: usize = (0..self.rows.len())
            .map(|j| {
                let scaling = if self.blocks[self.block_of[j]].1 == 2 {
                    3
                } else {
                    1
                };
                self.common(j, j).len()
                    + self.unscaled[j]
                        .iter()
                        .map(|&i| self.common(i, j).len())
                        .sum::<usize>()
                    + scaling * self.columns[j].len()
            })
            .sum();
        let substitutions: usize = self.rows.iter().map(|r| 2 * r.len()).sum();
        // A deferred block scales its entries, `b` and its tests, and unscales `u` and `y`.
        let deferral: usize = self
            .blocks
            .iter()
            .zip(&self.deferred)
            .filter(|(_, by)| by.is_some())
            .map(|(&(start, size), _)| {
                let unscaled: usize = (start..start + size).map(|j| self.unscaled[j].len()).sum();
                size * (size + 1) / 2 + 2 * unscaled + 2 * size + 2
            })
            .sum();
        pivots + factor + substitutions + deferral
    }
}

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

/// Returns the estimated length, in cycles, of the longest chain of dependent operations of
/// the unrolled factorization and solve that [`super::solve`] emits for `factor`: each
/// multiply-add waits for its operands, each pivot block's reciprocal for a division, in the
/// order the emitted sums run (ascending in the factorization and the forward substitution,
/// descending in the back substitution).
pub(super) fn critical_path(factor: &Factor) -> u32 {
    let n = factor.rows.len();
    // `l` and `ln` (the numerators of a deferred block's predecessor), `u` as later blocks
    // read it.
    let (mut l, mut ln, mut u): (Ready, Ready, Ready) = (
        vec![BTreeMap::new(); n],
        vec![BTreeMap::new(); n],
        vec![BTreeMap::new(); n],
    );
    let mut inverse = vec![0u32; n];
    let mut pivot = vec![0u32; n];
    // Per block, when its determinant (its pivot for `1 × 1`) is ready, before the division.
    let mut determinant = vec![0u32; factor.blocks.len()];
    for (block, &(start, size)) in factor.blocks.iter().enumerate() {
        // The update of entry (i, j): by `L_ik`, or in a deferred block by `ln_ik`, from
        // `det_K · A_ij`.
        let by = factor.deferred[block];
        let scaled_from = by.map(|k| determinant[k] + FLOP);
        let update = |i: usize, j: usize, l: &Ready, ln: &Ready, u: &Ready| {
            let (factors, start) = match scaled_from {
                Some(start) => (ln, start),
                None => (l, 0),
            };
            factor
                .common(i, j)
                .into_iter()
                .fold(start, |acc, k| acc.max(factors[i][&k]).max(u[j][&k]) + FLOP)
        };
        let members = start..start + size;
        for j in members.clone() {
            pivot[j] = update(j, j, &l, &ln, &u);
        }
        let ready = if size == 2 {
            // q, then the determinant pr − q² (a product and a multiply-add).
            let q = update(start + 1, start, &l, &ln, &u);
            pivot[start].max(pivot[start + 1]).max(q) + 2 * FLOP
        } else {
            pivot[start]
        };
        determinant[block] = ready;
        for j in members.clone() {
            inverse[j] = ready + DIVISION;
        }
        // The block's own `u` (scaled where deferred), then `u` as later blocks read it.
        let mut own: Ready = vec![BTreeMap::new(); n];
        for j in members.clone() {
            for &i in &factor.unscaled[j] {
                let unscaled = update(i, j, &l, &ln, &u);
                own[i].insert(j, unscaled);
                let later = match by {
                    Some(k) => unscaled.max(inverse[factor.blocks[k].0]) + FLOP,
                    None => unscaled,
                };
                u[i].insert(j, later);
            }
        }
        for j in members {
            for &i in &factor.columns[j] {
                let numerator = if size == 2 {
                    // (r u_i0 − q u_i1) or (p u_i1 − q u_i0): a product and a multiply-add.
                    let both = members_max(&own[i], start, size)
                        .max(pivot[start])
                        .max(pivot[start + 1]);
                    both + 2 * FLOP
                } else {
                    own[i].get(&j).copied().unwrap_or(0)
                };
                ln[i].insert(j, numerator);
                l[i].insert(j, numerator.max(inverse[j]) + FLOP);
            }
        }
    }
    // The forward substitution: `y'` (scaled where deferred) for the block's own solve, `y`
    // for the later rows.
    let (mut y, mut own_y) = (vec![0u32; n], vec![0u32; n]);
    for i in 0..n {
        let by = factor.deferred[factor.block_of[i]];
        let (factors, start) = match by {
            Some(k) => (&ln, determinant[k] + FLOP),
            None => (&l, 0),
        };
        own_y[i] = factor.rows[i]
            .iter()
            .fold(start, |acc, &k| acc.max(factors[i][&k]).max(y[k]) + FLOP);
        y[i] = match by {
            Some(k) => own_y[i].max(inverse[factor.blocks[k].0]) + FLOP,
            None => own_y[i],
        };
    }
    let mut z = vec![0u32; n];
    for &(start, size) in &factor.blocks {
        let members = start..start + size;
        let solved = if size == 2 {
            members.clone().map(|k| own_y[k]).max().unwrap_or(0) + 2 * FLOP
        } else {
            own_y[start]
        };
        for k in members {
            z[k] = solved.max(inverse[k]) + FLOP;
        }
    }
    let mut x = vec![0u32; n];
    for k in (0..n).rev() {
        x[k] = factor.columns[k]
            .iter()
            .rev()
            .fold(z[k], |acc, &i| acc.max(l[i][&k]).max(x[i]) + FLOP);
    }
    x.into_iter().max().unwrap_or(0)
}

/// Returns the latest of the updated entries `u_ik` of row `i` in the columns of a pivot
/// block (`start`, `size`), zero where none is structurally nonzero.
fn members_max(u: &BTreeMap<usize, u32>, start: usize, size: usize) -> u32 {
    (start..start + size)
        .filter_map(|k| u.get(&k).copied())
        .max()
        .unwrap_or(0)
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

    #[test]
    fn the_critical_path_of_a_diagonal_is_one_division_and_one_product() {
        let factor = Factor::analyse(3, &BTreeSet::new());
        assert_eq!(critical_path(&factor), DIVISION + FLOP);
    }
}
