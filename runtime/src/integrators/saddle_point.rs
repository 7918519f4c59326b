//! The sparse saddle-point system shared by the sparse tier's constrained integrators.
//!
//! SPOOK's step (Lacoursière 2007, eq. 29) and the index-1 acceleration of Ascher et al. (1995,
//! eq. 1.5) solve the same kind of linear system: with the mass matrix `M` (block diagonal, one
//! block per body), the holonomic Jacobian `G`, the nonholonomic matrix `A` and non-negative
//! diagonals `Σ`, `Γ`,
//!
//! ```text
//! [ M   Gᵀ   Aᵀ ] [ x ]   [ r ]
//! [ G   −Σ   0  ] [ y ] = [ t ]
//! [ A   0    −Γ ] [ z ]   [ s ]
//! ```
//!
//! symmetric quasi-definite as soon as `M ≻ 0`, `Σ ≻ 0`, `Γ ≻ 0`, and still factorable with a
//! diagonal `D` when `Σ = 0` (ideal rows, the index-1 system) as long as the rows are
//! independent and each is eliminated after the coordinates it touches. [`SaddlePoint`] numbers
//! the unknowns body by body, each row right after the last body it touches (banded for chains
//! and ladders, accurate as `Σ → 0`, see [`SparseLdlt`]), analyses the pattern once, and then
//! refills values, factors and solves at every step without allocating.

use crate::error::StepError;
use crate::integrators::checks::check_body_sizes;
use crate::linalg::{Inertia, LinalgError, LinearSolver, PivotSign, SparseLdlt};

/// Returns the upper triangles of the diagonal mass blocks of bodies with `body_sizes`
/// coordinates, as `(unknown_of(i), unknown_of(j))` entries of a matrix whose unknowns number
/// coordinate `i` as `unknown_of(i)`, and for each entry its index in the concatenated
/// row-major blocks of [`SparseInertia::mass_blocks`](crate::model::SparseInertia::mass_blocks).
pub(crate) fn mass_block_pattern(
    body_sizes: &[usize],
    unknown_of: impl Fn(usize) -> usize,
) -> (Vec<(usize, usize)>, Vec<usize>) {
    let (mut entries, mut indices) = (Vec::new(), Vec::new());
    let (mut first, mut offset) = (0, 0);
    for &size in body_sizes {
        for a in 0..size {
            for c in a..size {
                entries.push((unknown_of(first + a), unknown_of(first + c)));
                indices.push(offset + a * size + c);
            }
        }
        first += size;
        offset += size * size;
    }
    (entries, indices)
}

/// The saddle-point matrix of one sparse-tier model on a pattern analysed once, with its value,
/// right-hand-side and solution buffers.
#[derive(Debug)]
pub(crate) struct SaddlePoint {
    /// The sizes of the model's bodies, as when the system was built.
    body_sizes: Vec<usize>,
    /// Position of coordinate `i`, holonomic row `j`, nonholonomic row `j` among the unknowns.
    coordinate_unknown: Vec<usize>,
    row_unknown: Vec<usize>,
    nonholonomic_unknown: Vec<usize>,
    /// Value slot of each upper entry of the mass blocks, and its index in the blocks array.
    mass_slots: Vec<(usize, usize)>,
    /// Value slot of each entry of the coordinate block's coupling pattern (empty for the
    /// integrators; the stiffness `K` of [`crate::linearization`]).
    coupling_slots: Vec<usize>,
    /// Value slot of each entry of `G`'s and `A`'s patterns, and of each row's diagonal.
    jacobian_slots: Vec<usize>,
    nonholonomic_slots: Vec<usize>,
    sigma_slots: Vec<usize>,
    gamma_slots: Vec<usize>,
    ldlt: SparseLdlt,
    /// The matrix's values on the analysed pattern, the right-hand side and the solution.
    values: Vec<f64>,
    rhs: Vec<f64>,
    unknowns: Vec<f64>,
}

impl SaddlePoint {
    /// Numbers the unknowns and analyses the pattern of a model with `body_sizes`, `G`'s pattern
    /// (`m` rows) and `A`'s pattern (`k` rows).
    ///
    /// Fails with `InvalidModel` if the body sizes do not add up to `n`, a pattern entry lies
    /// outside the model, or a row has no entry (it cannot depend on the coordinates).
    pub(crate) fn new(
        n: usize,
        body_sizes: &[usize],
        rows: (usize, &[(usize, usize)]),
        nonholonomic: (usize, &[(usize, usize)]),
        matrix: &'static str,
    ) -> Result<Self, StepError> {
        Self::with_coupling(n, body_sizes, &[], rows, nonholonomic, matrix)
    }

    /// As [`new`](Self::new), with a symmetric `coupling` pattern added to the coordinate block
    /// (`(i, j)` coordinate pairs in either triangle, each unordered pair once): the block is
    /// then `a M + C` ([`factor_with_coupling`](Self::factor_with_coupling)), e.g. a shifted
    /// stiffness `K − σ M` whose entries couple bodies that share no row.
    pub(crate) fn with_coupling(
        n: usize,
        body_sizes: &[usize],
        coupling: &[(usize, usize)],
        (m, jacobian_pattern): (usize, &[(usize, usize)]),
        (k, nonholonomic_pattern): (usize, &[(usize, usize)]),
        matrix: &'static str,
    ) -> Result<Self, StepError> {
        check_body_sizes(body_sizes, n)?;
        if let Some(entry) = coupling.iter().position(|&(i, j)| i >= n || j >= n) {
            return Err(StepError::InvalidModel {
                what: "coupling pattern",
                index: entry,
                reason: "the entry lies outside the model's coordinates",
            });
        }
        let mut body_of = Vec::with_capacity(n);
        for (body, &size) in body_sizes.iter().enumerate() {
            body_of.extend(std::iter::repeat_n(body, size));
        }
        let last_body = |pattern: &[(usize, usize)], rows: usize, what| {
            let mut last: Vec<Option<usize>> = vec![None; rows];
            for (entry, &(row, col)) in pattern.iter().enumerate() {
                if row >= rows || col >= n {
                    return Err(StepError::InvalidModel {
                        what,
                        index: entry,
                        reason: "the entry lies outside the model's rows or coordinates",
                    });
                }
                last[row] = last[row].max(Some(body_of[col]));
            }
            last.iter()
                .enumerate()
                .map(|(row, body)| {
                    body.ok_or(StepError::InvalidModel {
                        what,
                        index: row,
                        reason: "the row has no entry, so it does not depend on the coordinates",
                    })
                })
                .collect::<Result<Vec<usize>, StepError>>()
        };
        let row_body = last_body(jacobian_pattern, m, "constraint jacobian pattern")?;
        let nonholonomic_body = last_body(nonholonomic_pattern, k, "nonholonomic pattern")?;

        // Number the unknowns: each body's coordinates, then the rows whose last body it is.
        let mut rows_of_body: Vec<Vec<(bool, usize)>> = vec![Vec::new(); body_sizes.len()];
        for (row, &body) in row_body.iter().enumerate() {
            rows_of_body[body].push((true, row));
        }
        for (row, &body) in nonholonomic_body.iter().enumerate() {
            rows_of_body[body].push((false, row));
        }
        let (mut coordinate_unknown, mut row_unknown, mut nonholonomic_unknown) =
            (vec![0; n], vec![0; m], vec![0; k]);
        let mut signs = Vec::with_capacity(n + m + k);
        let mut coordinate = 0;
        for (body, &size) in body_sizes.iter().enumerate() {
            for _ in 0..size {
                coordinate_unknown[coordinate] = signs.len();
                signs.push(PivotSign::Positive);
                coordinate += 1;
            }
            for &(holonomic, row) in &rows_of_body[body] {
                let unknowns = if holonomic {
                    &mut row_unknown
                } else {
                    &mut nonholonomic_unknown
                };
                unknowns[row] = signs.len();
                signs.push(PivotSign::Negative);
            }
        }

        // The pattern: the mass blocks' upper triangles, G, A, and the rows' diagonals.
        let (mut entries, mass_entries) =
            mass_block_pattern(body_sizes, |coordinate| coordinate_unknown[coordinate]);
        let mass_end = entries.len();
        entries.extend(
            coupling
                .iter()
                .map(|&(i, j)| (coordinate_unknown[i], coordinate_unknown[j])),
        );
        let coupling_end = entries.len();
        entries.extend(
            jacobian_pattern
                .iter()
                .map(|&(row, col)| (coordinate_unknown[col], row_unknown[row])),
        );
        let jacobian_end = entries.len();
        entries.extend(
            nonholonomic_pattern
                .iter()
                .map(|&(row, col)| (coordinate_unknown[col], nonholonomic_unknown[row])),
        );
        let nonholonomic_end = entries.len();
        entries.extend(row_unknown.iter().map(|&u| (u, u)));
        entries.extend(nonholonomic_unknown.iter().map(|&u| (u, u)));
        let (ldlt, slots) = SparseLdlt::analyse(signs.len(), &entries, &signs)
            .map_err(StepError::linear_algebra(matrix, 0.0))?;
        let mass_slots = slots[..mass_end]
            .iter()
            .copied()
            .zip(mass_entries)
            .collect();
        let unknowns = signs.len();
        Ok(SaddlePoint {
            body_sizes: body_sizes.to_vec(),
            coordinate_unknown,
            row_unknown,
            nonholonomic_unknown,
            mass_slots,
            coupling_slots: slots[mass_end..coupling_end].to_vec(),
            jacobian_slots: slots[coupling_end..jacobian_end].to_vec(),
            nonholonomic_slots: slots[jacobian_end..nonholonomic_end].to_vec(),
            sigma_slots: slots[nonholonomic_end..nonholonomic_end + m].to_vec(),
            gamma_slots: slots[nonholonomic_end + m..].to_vec(),
            values: vec![0.0; ldlt.value_count()],
            ldlt,
            rhs: vec![0.0; unknowns],
            unknowns: vec![0.0; unknowns],
        })
    }

    /// Returns the body sizes the system was built for.
    pub(crate) fn body_sizes(&self) -> &[usize] {
        &self.body_sizes
    }

    /// Returns the number of mass-block values (`Σ sᵦ²`).
    pub(crate) fn mass_value_count(&self) -> usize {
        self.body_sizes.iter().map(|s| s * s).sum()
    }

    /// Returns the number of unknowns, `n + m + k`.
    pub(crate) fn unknown_count(&self) -> usize {
        self.unknowns.len()
    }

    /// Returns the number of stored entries of the factor `L` (the fill of the numbering).
    pub(crate) fn factor_entry_count(&self) -> usize {
        self.ldlt.factor_entry_count()
    }

    /// Refills the matrix from the mass blocks (row-major per body), `G`'s and `A`'s values on
    /// their patterns and the diagonals `Σ`, `Γ`, and factors it.
    pub(crate) fn factor(
        &mut self,
        mass_blocks: &[f64],
        jacobian: &[f64],
        nonholonomic: &[f64],
        sigma: &[f64],
        gamma: &[f64],
    ) -> Result<(), LinalgError> {
        self.fill(
            (1.0, mass_blocks, &[]),
            jacobian,
            nonholonomic,
            (sigma, gamma),
        );
        self.ldlt.factor(&self.values)
    }

    /// Refills the matrix with the coordinate block `a M + C` (`C`'s values on the coupling
    /// pattern of [`with_coupling`](Self::with_coupling)), `G`, `A` and the diagonals, and
    /// factors it whatever its pivots' signs: returns its inertia
    /// ([`SparseLdlt::factor_with_inertia`]).
    pub(crate) fn factor_with_coupling(
        &mut self,
        coordinate_block: (f64, &[f64], &[f64]),
        jacobian: &[f64],
        nonholonomic: &[f64],
        (sigma, gamma): (&[f64], &[f64]),
    ) -> Result<Inertia, LinalgError> {
        self.fill(coordinate_block, jacobian, nonholonomic, (sigma, gamma));
        self.ldlt.factor_with_inertia(&self.values)
    }

    /// Writes the matrix's values (see [`factor_with_coupling`](Self::factor_with_coupling)).
    fn fill(
        &mut self,
        (mass_scale, mass_blocks, coupling): (f64, &[f64], &[f64]),
        jacobian: &[f64],
        nonholonomic: &[f64],
        (sigma, gamma): (&[f64], &[f64]),
    ) {
        let values = &mut self.values;
        values.fill(0.0);
        for &(slot, entry) in &self.mass_slots {
            values[slot] += mass_scale * mass_blocks[entry];
        }
        for (&slot, value) in self.coupling_slots.iter().zip(coupling) {
            values[slot] += value;
        }
        for (&slot, value) in self.jacobian_slots.iter().zip(jacobian) {
            values[slot] += value;
        }
        for (&slot, value) in self.nonholonomic_slots.iter().zip(nonholonomic) {
            values[slot] += value;
        }
        for (&slot, sigma) in self.sigma_slots.iter().zip(sigma) {
            values[slot] -= sigma;
        }
        for (&slot, gamma) in self.gamma_slots.iter().zip(gamma) {
            values[slot] -= gamma;
        }
    }

    /// Solves the last factored system for the right-hand side `(r, t, s)`; writes `x`, `y`,
    /// `z`.
    pub(crate) fn solve(
        &mut self,
        (r, t, s): (&[f64], &[f64], &[f64]),
        (x, y, z): (&mut [f64], &mut [f64], &mut [f64]),
    ) -> Result<(), LinalgError> {
        for (&unknown, r) in self.coordinate_unknown.iter().zip(r) {
            self.rhs[unknown] = *r;
        }
        for (&unknown, t) in self.row_unknown.iter().zip(t) {
            self.rhs[unknown] = *t;
        }
        for (&unknown, s) in self.nonholonomic_unknown.iter().zip(s) {
            self.rhs[unknown] = *s;
        }
        self.unknowns.copy_from_slice(&self.rhs);
        self.ldlt.solve_in_place(&mut self.unknowns)?;
        self.unpack((x, y, z));
        Ok(())
    }

    /// Improves the last solve by `steps` rounds of iterative refinement in working precision
    /// (`u ← u + K⁻¹ (b − K u)`, Higham, *Accuracy and Stability of Numerical Algorithms*,
    /// §12.2), writing `x`, `y`, `z` again: what an analysis needs of a matrix without a
    /// regularization (`Σ = 0`), whose factorization without pivoting leaves a residual above
    /// round-off. Allocates; not part of a step.
    pub(crate) fn refine(
        &mut self,
        steps: usize,
        (x, y, z): (&mut [f64], &mut [f64], &mut [f64]),
    ) -> Result<(), LinalgError> {
        let mut product = vec![0.0; self.unknowns.len()];
        for _ in 0..steps {
            self.ldlt
                .multiply(&self.values, &self.unknowns, &mut product)?;
            let mut correction: Vec<f64> =
                self.rhs.iter().zip(&product).map(|(b, p)| b - p).collect();
            self.ldlt.solve_in_place(&mut correction)?;
            for (u, c) in self.unknowns.iter_mut().zip(&correction) {
                *u += c;
            }
        }
        self.unpack((x, y, z));
        Ok(())
    }

    /// Writes the solution's coordinates, rows and nonholonomic rows into `x`, `y`, `z`.
    fn unpack(&self, (x, y, z): (&mut [f64], &mut [f64], &mut [f64])) {
        for (x, &unknown) in x.iter_mut().zip(&self.coordinate_unknown) {
            *x = self.unknowns[unknown];
        }
        for (y, &unknown) in y.iter_mut().zip(&self.row_unknown) {
            *y = self.unknowns[unknown];
        }
        for (z, &unknown) in z.iter_mut().zip(&self.nonholonomic_unknown) {
            *z = self.unknowns[unknown];
        }
    }

    /// Returns the relative residual `‖K u − b‖∞ / ‖b‖∞` of the last solve: the accuracy of the
    /// factorization for this matrix. Allocates; a diagnostic, not part of a step.
    pub(crate) fn relative_residual(&self) -> Result<f64, LinalgError> {
        let mut product = vec![0.0; self.unknowns.len()];
        self.ldlt
            .multiply(&self.values, &self.unknowns, &mut product)?;
        let scale = self.rhs.iter().fold(0.0f64, |a, b| a.max(b.abs()));
        let error = product
            .iter()
            .zip(&self.rhs)
            .fold(0.0f64, |a, (p, b)| a.max((p - b).abs()));
        Ok(error / scale)
    }
}
