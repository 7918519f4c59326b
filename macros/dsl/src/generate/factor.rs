//! The pivot blocks and structural nonzeros of an unrolled block `LDLᵀ` in a given elimination
//! order ([`Factor`]), and the estimate of its cost that [`super::ordering`] chooses the order
//! by: the longer of its chain of dependent operations ([`critical_path`]) and its work.
//!
//! Straight-line code for a small factorization is bound by latency, not by the number of
//! operations: each pivot waits for a division, each multiply-add for its operands.

use std::collections::{BTreeMap, BTreeSet};

/// Per row, the cycle at which each of its entries (by column) is ready.
type Ready = Vec<BTreeMap<usize, u32>>;

/// Latency of an addition, multiplication or fused multiply-add, in cycles (the estimate's unit).
pub(super) const FLOP: u32 = 4;
/// Latency of a division.
pub(super) const DIVISION: u32 = 14;
/// Cycles per multiply-add of straight-line code at the throughput it reaches, as the ratio
/// `(numerator, denominator)`: ¾. Fitted to the peer benchmark's penalized chains (Z&Ss steps,
/// portable build, ns per step for the natural order / from both ends / dissected one level /
/// two levels), first with `1 × 1` pivots only: 278 / 204 / 182 / 179 at 10 links,
/// 1 695 / 1 433 / 2 012 / 2 500 at 50, where ¾ picks the fastest order of both (any weight
/// from 0.69 to 0.86 would). With the `2 × 2` pivots of [`paired`]: 233 / 190 / 193 / 196 at
/// 10 links, 1 073 / 857 / 1 184 / 1 620 at 50; ¾ picks both ends for both, the fastest.
const CYCLES_PER_OPERATION: (u32, u32) = (3, 4);

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
    pub(super) fn operations(&self) -> usize {
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
pub(super) fn estimated_cycles(factor: &Factor) -> u32 {
    let (numerator, denominator) = CYCLES_PER_OPERATION;
    let work = u32::try_from(factor.operations()).unwrap_or(u32::MAX);
    critical_path(factor).max(work.saturating_mul(numerator) / denominator)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_critical_path_of_a_diagonal_is_one_division_and_one_product() {
        let factor = Factor::analyse(3, &BTreeSet::new());
        assert_eq!(critical_path(&factor), DIVISION + FLOP);
    }
}
