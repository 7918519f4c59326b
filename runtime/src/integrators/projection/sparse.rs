//! SHAKE's and RATTLE's linear algebra on the sparse tier: `G` and `M⁻¹Gᵀ` stored body by
//! body, a block-diagonal `M` factored per body, and one sparse `LU` without pivoting of the
//! Newton matrix and of `G M⁻¹ Gᵀ` on a pattern analysed once.

use super::sparse_linearization::Linearization;
use super::{
    Point, ProjectionAcceleration, ProjectionModel, ProjectionSystem, NEWTON_MATRIX,
    PROJECTION_MATRIX,
};
use crate::error::StepError;
use crate::integrators::block_mass::BlockMass;
use crate::integrators::checks::{check_body_sizes, check_built_for, check_finite_slice};
use crate::linalg::{LinearSolver, SparseLu};
use crate::model::{SparseHolonomic, SparseInertia, SparsePotential};

/// The rows that touch one body and where its data lives.
#[derive(Clone, Debug)]
struct Body {
    /// The body's first coordinate and its number of coordinates `s`.
    first: usize,
    size: usize,
    /// The range of its rows (ascending) in `ProjectionSparse::body_rows`.
    rows: (usize, usize),
    /// Offset of its `rows × s` block in the per-body arrays of `G` and `M⁻¹Gᵀ`.
    block: usize,
    /// Offset of its `rows × rows` slots in `ProjectionSparse::pair_slots`.
    pairs: usize,
}

/// What a step knows at one configuration, body by body.
#[derive(Clone, Debug)]
struct SparsePoint {
    /// `−M⁻¹∇V`.
    acceleration: Vec<f64>,
    /// For each body `b` and each row `r` touching it, `G_r` restricted to `b`'s coordinates.
    jac: Vec<f64>,
    /// The same rows of `M_b⁻¹ G_rᵀ` (`M⁻¹Gᵀ` is zero outside the bodies a row touches).
    minv_jac_t: Vec<f64>,
}

/// The [`ProjectionSystem`] of one sparse-tier model; see [`SparseShake`](super::SparseShake)
/// and [`SparseRattle`](super::SparseRattle).
///
/// # Storage
///
/// `G` is kept body by body: for body `b` with coordinates `c ∈ b` and the rows `R_b` that touch
/// it, the dense `|R_b| × s_b` block of `G`, and the same block of `M⁻¹Gᵀ` (transposed),
/// `M_b⁻¹ G_{r,b}ᵀ` for each `r ∈ R_b` from the body's Cholesky factor. Applying `G`, `M⁻¹Gᵀ`
/// and assembling `G(q⁽ⁱ⁾) M⁻¹ G(q_k)ᵀ = Σ_b G_b(q⁽ⁱ⁾) M_b⁻¹ G_b(q_k)ᵀ` are loops over bodies,
/// linear in their number.
///
/// # Factorization
///
/// Both matrices of a step, the Newton matrix `G(q⁽ⁱ⁾) M⁻¹ G(q_k)ᵀ` and the velocity
/// projection's `G M⁻¹ Gᵀ`, have the pattern of `G M⁻¹ Gᵀ`: rows `i` and `j` couple when they
/// touch a common body, a structurally symmetric pattern. The Newton matrix is **not**
/// symmetric once `q⁽ⁱ⁾ ≠ q_k`, so a symmetric `LDLᵀ` cannot factor it; faer's sparse `LU`
/// with partial pivoting could, but its fill depends on the pivots and its storage is not
/// guaranteed allocation-free. Both are factored instead by [`SparseLu`], an `LU` without
/// pivoting whose `L` and `Uᵀ` have the pattern of the Cholesky factor of `G M⁻¹ Gᵀ` (faer's
/// symbolic analysis, once, in [`SparseShake::new`](super::SparseShake)): the Newton matrix is
/// an `O(h)` perturbation of the symmetric positive definite `G M⁻¹ Gᵀ` (`q⁽ⁱ⁾ − q_k = O(h)`),
/// for which elimination without pivoting is stable, and `G M⁻¹ Gᵀ` itself is SPD (where `LU`
/// without pivoting is `LDLᵀ` with `U = D Lᵀ`). A rank-deficient `G` (redundant rows) makes a
/// pivot vanish relative to its row and column, reported as [`StepError::Singular`].
///
/// # Step size
///
/// Newton here is already exact (the Jacobian `G(q⁽ⁱ⁾) M⁻¹ G(q_k)ᵀ` is refactored at every
/// iterate) and takes 1–2 iterations per step on the chains below their limit. What stops long
/// chains is the scheme's stability: the constraint forces act along `G(q_k)`, so across a
/// taut chain SHAKE and RATTLE are Störmer–Verlet on the transverse modes, whose stiffness is
/// the tension's, and stable only for `h < √(m l / T)` (bead mass `m`, rod length `l`, tension
/// `T`; [`projection_step_limit`](crate::reference::pendulum_chain::projection_step_limit)).
/// Beyond it the highest mode grows by about `h²ω²` per step until `g(q̃ − M⁻¹ G(q_k)ᵀ μ) = 0`
/// has no solution: measured on Tao–Owhadi's chain of 10 000 at `h = 0.05`, the residual
/// stalls between 5.6e-3 and 8e-2 for 50 iterations at the third step, and a backtracking line
/// search on `|g|₂` stalls the same way at 6.0e-3 (a positive minimum of `|g|`, not a missed
/// root). The limit is `√(l / (n g))` on a hanging chain: 0.047 for 1000 pendula, 0.0150 for
/// 10 000 (runs at 0.015 to `t = 50` with one iteration per step, fails at 0.016), 0.0047 for
/// 100 000 (runs at 0.005, fails at 0.0055). The ladder of 20 at `h = 1/60` fails the same way
/// at its first whiplash (`t = 6.3`) and runs at `h = 1/600`. The failure is `NewtonDiverged`
/// with the state unchanged; a smaller step is the remedy.
///
/// Rows are eliminated body by body — each row after the last body it touches, as in the
/// sparse SPOOK system — an order computed once, so the factorization needs no permutation per
/// step: for chains and ladders it is banded and the cost per step is linear in the size.
#[derive(Clone, Debug)]
pub struct ProjectionSparse {
    /// The model's sizes, as when the system was built.
    body_sizes: Vec<usize>,
    pattern_len: usize,
    bodies: Vec<Body>,
    body_rows: Vec<usize>,
    /// For each entry of `G`'s pattern, its place in the per-body blocks.
    entry_index: Vec<usize>,
    /// For each body, the `LU` value slot of each pair of its rows, row-major.
    pair_slots: Vec<usize>,
    /// Each row's place in the elimination order.
    row_position: Vec<usize>,
    mass: BlockMass,
    /// The model's `G` values on its pattern and `g` at the last evaluation.
    jacobian: Vec<f64>,
    g: Vec<f64>,
    /// The start and end points, and the one the last evaluation wrote.
    points: [SparsePoint; 2],
    last: usize,
    lu: SparseLu,
    lu_values: Vec<f64>,
    /// A right-hand side in elimination order, and row sums for the tolerance scale.
    permuted: Vec<f64>,
    row_scale: Vec<f64>,
    /// What RATTLE's last step keeps for its Jacobian products, if it was linearized.
    pub(super) linearization: Linearization,
}

impl ProjectionSparse {
    /// Builds the system for `model`: groups the rows by body, analyses the pattern of
    /// `G M⁻¹ Gᵀ` and sizes every buffer.
    pub(super) fn new<Model>(model: &Model) -> Result<Self, StepError>
    where
        Model: SparseInertia + SparseHolonomic + ?Sized,
    {
        let n = model.coordinate_count();
        let body_sizes = model.body_sizes().to_vec();
        check_body_sizes(&body_sizes, n)?;
        let mut body_of = Vec::with_capacity(n);
        let mut firsts = Vec::with_capacity(body_sizes.len());
        for (body, &size) in body_sizes.iter().enumerate() {
            firsts.push(body_of.len());
            body_of.extend(std::iter::repeat_n(body, size));
        }
        let m = model.constraint_count();
        let pattern = model.jacobian_pattern();
        let mut touches: Vec<(usize, usize)> = Vec::with_capacity(pattern.len());
        for (entry, &(row, col)) in pattern.iter().enumerate() {
            if row >= m || col >= n {
                return Err(StepError::InvalidModel {
                    what: "constraint jacobian pattern",
                    index: entry,
                    reason: "the entry lies outside the model's rows or coordinates",
                });
            }
            touches.push((body_of[col], row));
        }
        touches.sort_unstable();
        touches.dedup();

        // Each row after the last body it touches.
        let mut last_body: Vec<Option<usize>> = vec![None; m];
        for &(body, row) in &touches {
            last_body[row] = last_body[row].max(Some(body));
        }
        let mut order = Vec::with_capacity(m);
        for (row, body) in last_body.iter().enumerate() {
            let body = body.ok_or(StepError::InvalidModel {
                what: "constraint jacobian pattern",
                index: row,
                reason: "the row has no entry, so it does not depend on the coordinates",
            })?;
            order.push((body, row));
        }
        order.sort_unstable();
        let mut row_position = vec![0; m];
        for (position, &(_, row)) in order.iter().enumerate() {
            row_position[row] = position;
        }

        // Per-body rows and blocks, and the pattern of G M⁻¹ Gᵀ.
        let mut bodies = Vec::with_capacity(body_sizes.len());
        let mut body_rows = Vec::with_capacity(touches.len());
        let mut lu_entries = Vec::new();
        let (mut block, mut cursor) = (0, 0);
        for (body, &size) in body_sizes.iter().enumerate() {
            let start = body_rows.len();
            while cursor < touches.len() && touches[cursor].0 == body {
                body_rows.push(touches[cursor].1);
                cursor += 1;
            }
            let rows = &body_rows[start..];
            for &r1 in rows {
                for &r2 in rows {
                    lu_entries.push((row_position[r1], row_position[r2]));
                }
            }
            bodies.push(Body {
                first: firsts[body],
                size,
                rows: (start, body_rows.len()),
                block,
                pairs: lu_entries.len() - rows.len() * rows.len(),
            });
            block += rows.len() * size;
        }
        let entry_index = pattern
            .iter()
            .map(|&(row, col)| {
                let body = &bodies[body_of[col]];
                let rows = &body_rows[body.rows.0..body.rows.1];
                // The row touches the body, so it is in its sorted list.
                let k = rows.partition_point(|&r| r < row);
                body.block + k * body.size + (col - body.first)
            })
            .collect();
        let (lu, pair_slots) = SparseLu::analyse(m, &lu_entries)
            .map_err(StepError::linear_algebra(NEWTON_MATRIX, 0.0))?;
        let point = || SparsePoint {
            acceleration: vec![0.0; n],
            jac: vec![0.0; block],
            minv_jac_t: vec![0.0; block],
        };
        Ok(ProjectionSparse {
            mass: BlockMass::new(&body_sizes),
            body_sizes,
            pattern_len: pattern.len(),
            bodies,
            body_rows,
            entry_index,
            pair_slots,
            row_position,
            jacobian: vec![0.0; pattern.len()],
            g: vec![0.0; m],
            points: [point(), point()],
            last: 0,
            lu_values: vec![0.0; lu.value_count()],
            lu,
            permuted: vec![0.0; m],
            row_scale: vec![0.0; m],
            linearization: Linearization::default(),
        })
    }

    /// Returns the number of stored entries of the `LU` factors below the diagonal (the fill of
    /// the row order), for each of `L` and `Uᵀ`.
    pub fn factor_entry_count(&self) -> usize {
        self.lu.factor_entry_count()
    }

    /// Returns `InvalidModel` unless `model` has the sizes this system was built for (patterns
    /// are fixed for a model's lifetime, so their lengths and the body sizes identify it).
    pub(super) fn check_model<Model>(&self, model: &Model) -> Result<(), StepError>
    where
        Model: SparseInertia + SparseHolonomic + ?Sized,
    {
        check_built_for(
            model.body_sizes() == self.body_sizes.as_slice(),
            "body sizes",
            model.body_sizes().len(),
        )?;
        let pattern = model.jacobian_pattern();
        check_built_for(
            model.constraint_count() == self.g.len() && pattern.len() == self.pattern_len,
            "constraint jacobian pattern",
            pattern.len(),
        )?;
        Ok(())
    }

    /// Overwrites `x` with `M⁻¹ x` for the mass matrix factored at the last step.
    pub(super) fn mass_solve(&mut self, x: &mut [f64], t: f64) -> Result<(), StepError> {
        self.mass.solve_in_place(x, t)
    }

    /// Factors `A = G(jac) M⁻¹ G(minv)ᵀ` and overwrites `rhs` with `A⁻¹ rhs`, or with
    /// `A⁻ᵀ rhs` when `transposed` (the adjoint of a step's Jacobian).
    pub(super) fn solve(
        &mut self,
        jac: Point,
        minv: Point,
        rhs: &mut [f64],
        matrix: &'static str,
        t: f64,
        transposed: bool,
    ) -> Result<(), StepError> {
        let (jac, minv_jac_t) = (
            &self.points[jac as usize].jac,
            &self.points[minv as usize].minv_jac_t,
        );
        self.lu_values.fill(0.0);
        for body in &self.bodies {
            let (rows, s) = (body.rows.1 - body.rows.0, body.size);
            for i in 0..rows {
                let a = &jac[body.block + i * s..body.block + (i + 1) * s];
                for j in 0..rows {
                    let b = &minv_jac_t[body.block + j * s..body.block + (j + 1) * s];
                    let product: f64 = a.iter().zip(b).map(|(a, b)| a * b).sum();
                    self.lu_values[self.pair_slots[body.pairs + i * rows + j]] += product;
                }
            }
        }
        let wrap = StepError::linear_algebra(matrix, t);
        self.lu.factor(&self.lu_values).map_err(&wrap)?;
        for (&position, value) in self.row_position.iter().zip(rhs.iter()) {
            self.permuted[position] = *value;
        }
        if transposed {
            self.lu.solve_transpose_in_place(&mut self.permuted)
        } else {
            self.lu.solve_in_place(&mut self.permuted)
        }
        .map_err(&wrap)?;
        for (&position, value) in self.row_position.iter().zip(rhs.iter_mut()) {
            *value = self.permuted[position];
        }
        Ok(())
    }
}

impl ProjectionSystem for ProjectionSparse {
    const CHECKPOINT_NAME: &'static str = "SparseProjection";
    type Coordinates = Vec<f64>;
    type Rows = Vec<f64>;

    fn zero_coordinates(&self) -> Vec<f64> {
        vec![0.0; self.mass_dimension()]
    }

    fn zero_rows(&self) -> Vec<f64> {
        vec![0.0; self.g.len()]
    }

    fn residual(&self) -> &[f64] {
        &self.g
    }

    fn first_order_scale(&mut self, point: Point, q: &[f64]) -> f64 {
        let jac = &self.points[point as usize].jac;
        self.row_scale.fill(0.0);
        for body in &self.bodies {
            let s = body.size;
            let q = &q[body.first..body.first + s];
            for (k, &row) in self.body_rows[body.rows.0..body.rows.1].iter().enumerate() {
                let a = &jac[body.block + k * s..body.block + (k + 1) * s];
                self.row_scale[row] += a.iter().zip(q).map(|(a, x)| (a * x).abs()).sum::<f64>();
            }
        }
        self.row_scale.iter().fold(0.0, |m, x| m.max(*x))
    }

    fn check_jacobian(&self, t: f64) -> Result<(), StepError> {
        check_finite_slice(&self.jacobian, "constraint jacobian", t)
    }

    fn acceleration(&self, point: Point) -> &[f64] {
        &self.points[point as usize].acceleration
    }

    fn constraint_direction(&self, point: Point, y: &[f64], out: &mut [f64]) {
        let minv_jac_t = &self.points[point as usize].minv_jac_t;
        for body in &self.bodies {
            let s = body.size;
            let rows = &self.body_rows[body.rows.0..body.rows.1];
            for (c, out) in out[body.first..body.first + s].iter_mut().enumerate() {
                *out = rows
                    .iter()
                    .enumerate()
                    .map(|(k, &row)| minv_jac_t[body.block + k * s + c] * y[row])
                    .sum();
            }
        }
    }

    fn jacobian_times(&self, point: Point, x: &[f64], out: &mut [f64]) {
        let jac = &self.points[point as usize].jac;
        out.fill(0.0);
        for body in &self.bodies {
            let s = body.size;
            let x = &x[body.first..body.first + s];
            for (k, &row) in self.body_rows[body.rows.0..body.rows.1].iter().enumerate() {
                let a = &jac[body.block + k * s..body.block + (k + 1) * s];
                out[row] += a.iter().zip(x).map(|(a, x)| a * x).sum::<f64>();
            }
        }
    }

    fn solve_newton(&mut self, rhs: &mut [f64], t: f64) -> Result<(), StepError> {
        self.solve(Point::End, Point::Start, rhs, NEWTON_MATRIX, t, false)
    }

    fn solve_projection(&mut self, rhs: &mut [f64], t: f64) -> Result<(), StepError> {
        self.solve(Point::End, Point::End, rhs, PROJECTION_MATRIX, t, false)
    }

    fn carry(&mut self) {
        self.points.swap(0, 1);
    }
}

impl ProjectionSparse {
    /// Returns the number of coordinates `n`.
    fn mass_dimension(&self) -> usize {
        self.body_sizes.iter().sum()
    }
}

impl<Model> ProjectionModel<Model> for ProjectionSparse
where
    Model: SparseInertia + SparsePotential + SparseHolonomic + ?Sized,
{
    fn evaluate(&mut self, model: &Model, point: Point, q: &[f64], t: f64) {
        model.constraints_and_jacobian(q, t, &mut self.g, &mut self.jacobian);
        self.last = point as usize;
        let jac = &mut self.points[self.last].jac;
        jac.fill(0.0);
        for (&index, value) in self.entry_index.iter().zip(&self.jacobian) {
            jac[index] += value;
        }
    }

    fn complete(
        &mut self,
        model: &Model,
        point: Point,
        q: &[f64],
        t: f64,
    ) -> Result<u32, StepError> {
        check_finite_slice(&self.jacobian, "constraint jacobian", t)?;
        let slot = &mut self.points[point as usize];
        let factorizations = self
            .mass
            .acceleration(model, q, t, &mut slot.acceleration)?;
        slot.minv_jac_t.copy_from_slice(&slot.jac);
        for (index, body) in self.bodies.iter().enumerate() {
            let (rows, s) = (body.rows.1 - body.rows.0, body.size);
            for k in 0..rows {
                let start = body.block + k * s;
                self.mass
                    .solve_body(index, &mut slot.minv_jac_t[start..start + s]);
            }
        }
        check_finite_slice(&slot.minv_jac_t, "M⁻¹ Gᵀ", t)?;
        Ok(factorizations)
    }
}

impl<Model> ProjectionAcceleration<Model> for ProjectionSparse
where
    Model: SparseInertia + SparsePotential + ?Sized,
{
    fn acceleration_at(
        &mut self,
        model: &Model,
        q: &[f64],
        t: f64,
        out: &mut [f64],
    ) -> Result<u32, StepError> {
        self.mass.acceleration(model, q, t, out)
    }
}
