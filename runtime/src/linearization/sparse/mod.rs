//! Equilibria and the lowest modes of a constrained model of the sparse tier.
//!
//! A chain of a thousand pendula has no dense `n × n` matrix worth forming, let alone a dense
//! null-space basis of `G`. The sparse path therefore never leaves the full coordinates: every
//! linear system is the saddle-point matrix
//!
//! ```text
//! [ a M + b K   Gᵀ ] [ x ]   [ r ]        K = ∇²V + Σₖ λₖ ∇²gₖ,
//! [ G           0  ] [ y ] = [ s ]
//! ```
//!
//! on the pattern of the model's mass blocks, Hessians and Jacobian, numbered and analysed
//! once as for the sparse integrators and factored by [`SparseLdlt`](crate::linalg::SparseLdlt)
//! without fill-reducing permutation (chains and ladders stay banded), each solve refined
//! twice. `K` alone is indefinite off `ker G` (a unit row's multiplier may be negative, a
//! point mass has no stiffness), which a factorization without pivoting does not survive; the
//! coordinate block is therefore the augmented `a M + b K + ρ GᵀG` (Hestenes 1969), with `ρ`
//! of the size of the block's diagonal over `G`'s: on `ker G` it is the same matrix, the
//! solution `x` of a system with `s = 0` is the same, `y` shifts by `ρ s`, and the inertia is
//! the same (the two matrices are congruent). Its inertia counts what
//! a dense analysis reads off the eigenvalues of `Tᵀ K T`: with `G` of full row rank `m`, the
//! matrix `[K − σM, Gᵀ; G, 0]` has `m` negative eigenvalues plus one per eigenvalue `ω² < σ`
//! of the constrained problem (Gould 1985, *Math. Programming* 32; Sylvester's law of inertia
//! on `L D Lᵀ`).
//!
//! - [`sparse_equilibrium`]: the descent of [`equilibrium`](super::equilibrium) with the
//!   saddle-point matrix in place of the null-space basis: a Newton step of the potential on
//!   the manifold, shifted by `μ M` (Levenberg–Marquardt) until the inertia says `K + μ M` is
//!   positive definite on `ker G`, projected back onto the rows, halved until `V` decreases;
//!   or Newton on the equilibrium equations for any stationary point ([`Seek::Any`]).
//! - [`sparse_modes`]: the lowest `k` undamped modes by shift-invert Lanczos in the `M` inner
//!   product (Ericsson & Ruhe 1980, *Math. Comp.* 35; Grimes, Lewis & Simon 1994, *SIAM J.
//!   Matrix Anal. Appl.* 15): the operator `x = S(σ) M y`, `S(σ)` the coordinate block of the
//!   inverse saddle-point matrix of `K − σM`, maps into `ker G`, is self-adjoint in `⟨x, y⟩_M`
//!   and has the eigenvalues `θ = 1 / (ω² − σ)`; with the shift below the spectrum (checked by
//!   the inertia, lowered until it is) the largest `θ` are the lowest `ω²`.
//!
//! The model needs `∇²V` ([`SparsePotentialHessian`]) and the rows' weighted Hessians
//! ([`SparseHolonomicHessians`]): a `mechanism!` model with families has both with
//! `derivatives: [hessians]`. Applied forces must vanish at rest (the sparse tier has no force
//! Jacobian); the modes are the undamped ones.

mod equilibrium;
mod lanczos;

pub use equilibrium::{sparse_equilibrium, SparseEquilibrium};
pub use lanczos::{sparse_modes, SparseModeSettings};

use super::stiffness::ZERO_TOLERANCE;
use super::{finite, LinearizationError};
use crate::integrators::saddle_point::SaddlePoint;
use crate::linalg::products::{
    add_pattern_transpose_times, add_symmetric_pattern_times, block_diagonal_times,
};
use crate::linalg::{Inertia, LinalgError};
use crate::model::{
    SparseAppliedForces, SparseHolonomicHessians, SparseInertia, SparsePotentialHessian,
};

/// What the sparse analysis needs of a model: its mass blocks, `∇²V`, the rows' weighted
/// Hessians and its applied forces (checked to vanish at rest). Implemented for every type
/// with these.
#[diagnostic::on_unimplemented(
    message = "`{Self}` lacks what the sparse linearization needs: the potential's and the rows' Hessians (`SparsePotentialHessian`, `SparseHolonomicHessians`)",
    label = "the model lacks its Hessians",
    note = "add `derivatives: [hessians]` to the `mechanism!` of the model (a model with families)"
)]
pub trait SparseLinearizable:
    SparseInertia + SparsePotentialHessian + SparseHolonomicHessians + SparseAppliedForces
{
}

impl<S> SparseLinearizable for S where
    S: SparseInertia + SparsePotentialHessian + SparseHolonomicHessians + SparseAppliedForces
{
}

/// The saddle-point system of one model at one time, with the model's values at the last
/// point evaluated.
struct System<'a, S> {
    model: &'a S,
    t: f64,
    /// Coordinates `n` and rows `m`.
    n: usize,
    m: usize,
    saddle: SaddlePoint,
    /// `M`'s blocks, row-major per body.
    mass: Vec<f64>,
    /// `G`'s pattern and values, and `g`.
    pattern: Vec<(usize, usize)>,
    jacobian: Vec<f64>,
    g: Vec<f64>,
    /// `K`'s pattern (`∇²V`'s entries, then the rows' Hessians') and its values.
    stiffness_pattern: Vec<(usize, usize)>,
    potential_entries: usize,
    stiffness: Vec<f64>,
    /// For each entry of `GᵀG`'s pattern (after `K`'s in the coupling), the two entries of
    /// `G`'s values whose product it adds.
    gram: Vec<(usize, usize)>,
    /// The coupling's values: `b K` then `ρ GᵀG`.
    coupling: Vec<f64>,
    /// `m` zeros: the saddle point's `−Σ` block.
    no_compliance: Vec<f64>,
    /// The `ρ` of the last factorization.
    rho: f64,
}

impl<'a, S: SparseLinearizable> System<'a, S> {
    /// Analyses the saddle-point pattern of `model`.
    fn new(model: &'a S, t: f64) -> Result<Self, LinearizationError> {
        let n = model.coordinate_count();
        let m = model.constraint_count();
        let mut stiffness_pattern = model.hessian_pattern().to_vec();
        let potential_entries = stiffness_pattern.len();
        stiffness_pattern.extend_from_slice(model.constraint_hessian_pattern());
        let pattern = model.jacobian_pattern().to_vec();
        // GᵀG: every pair of entries of one row.
        let mut by_row: Vec<Vec<usize>> = vec![Vec::new(); m];
        for (entry, &(row, _)) in pattern.iter().enumerate() {
            if let Some(entries) = by_row.get_mut(row) {
                entries.push(entry);
            }
        }
        let mut gram = Vec::new();
        let mut coupling_pattern = stiffness_pattern.clone();
        for entries in &by_row {
            for (a, &first) in entries.iter().enumerate() {
                for &second in &entries[a..] {
                    gram.push((first, second));
                    coupling_pattern.push((pattern[first].1, pattern[second].1));
                }
            }
        }
        let saddle = SaddlePoint::with_coupling(
            n,
            model.body_sizes(),
            &coupling_pattern,
            (m, &pattern),
            (0, &[]),
            "the linearization's saddle-point matrix",
        )
        .map_err(|error| LinearizationError::InvalidModel {
            reason: error.to_string(),
        })?;
        let blocks = model.body_sizes().iter().map(|s| s * s).sum();
        Ok(System {
            model,
            t,
            n,
            m,
            saddle,
            mass: vec![0.0; blocks],
            jacobian: vec![0.0; pattern.len()],
            pattern,
            g: vec![0.0; m],
            stiffness: vec![0.0; stiffness_pattern.len()],
            coupling: vec![0.0; coupling_pattern.len()],
            gram,
            stiffness_pattern,
            potential_entries,
            no_compliance: vec![0.0; m],
            rho: 0.0,
        })
    }

    /// Evaluates `M`, `g` and `G` at `q`.
    fn evaluate(&mut self, q: &[f64]) -> Result<(), LinearizationError> {
        self.model.mass_blocks(q, &mut self.mass);
        finite("M", &self.mass, q)?;
        self.model
            .constraints_and_jacobian(q, self.t, &mut self.g, &mut self.jacobian);
        finite("g", &self.g, q)?;
        finite("G", &self.jacobian, q)
    }

    /// Evaluates `K = ∇²V + Σₖ λₖ ∇²gₖ` at `q` (besides [`evaluate`](Self::evaluate)).
    fn evaluate_stiffness(&mut self, q: &[f64], lambda: &[f64]) -> Result<(), LinearizationError> {
        let (potential, rows) = self.stiffness.split_at_mut(self.potential_entries);
        self.model.potential_hessian(q, potential);
        finite("∇²V", potential.iter(), q)?;
        self.model
            .weighted_constraint_hessian(q, self.t, lambda, rows);
        finite("Σλₖ∇²gₖ", rows.iter(), q)
    }

    /// Factors `[a M + b K + ρ GᵀG, Gᵀ; G, 0]` (`b` is 0 or 1, `ρ` as in the
    /// module docs) with the values evaluated last and returns its inertia, that of
    /// `[a M + b K, Gᵀ; G, 0]`; a zero pivot is the error `Singular` naming `what` at `q`.
    fn factor(
        &mut self,
        a: f64,
        with_stiffness: bool,
        what: &'static str,
        q: &[f64],
    ) -> Result<Inertia, LinearizationError> {
        let b = if with_stiffness { 1.0 } else { 0.0 };
        let (stiffness, gram) = self.coupling.split_at_mut(self.stiffness.len());
        for (c, k) in stiffness.iter_mut().zip(&self.stiffness) {
            *c = b * k;
        }
        // ρ: the largest diagonal entry of a M + b K over the largest |G|².
        let mut diagonal = 0.0f64;
        for (&(i, j), k) in self.stiffness_pattern.iter().zip(stiffness.iter()) {
            if i == j {
                diagonal = diagonal.max(k.abs());
            }
        }
        diagonal = diagonal.max(a.abs() * amax(&self.mass));
        let largest = amax(&self.jacobian);
        let rho = if largest > 0.0 {
            diagonal.max(f64::MIN_POSITIVE) / (largest * largest)
        } else {
            0.0
        };
        for (c, &(first, second)) in gram.iter_mut().zip(&self.gram) {
            *c = rho * self.jacobian[first] * self.jacobian[second];
        }
        self.rho = rho;
        self.saddle
            .factor_with_coupling(
                (a, &self.mass, &self.coupling),
                &self.jacobian,
                &[],
                (&self.no_compliance, &[]),
            )
            .map_err(|error| match error {
                LinalgError::NonFinite { .. } => LinearizationError::NonFinite {
                    quantity: "the saddle-point matrix",
                    q: q.to_vec(),
                },
                _ => LinearizationError::Singular {
                    what,
                    q: q.to_vec(),
                },
            })
    }

    /// Solves the last factored matrix for `(r, s)`, refined twice, writing `x` and the
    /// multipliers `y` of the matrix without `ρ GᵀG`: from `(A + ρGᵀG) x + Gᵀ y' = r` and
    /// `G x = s`, `A x + Gᵀ (y' + ρ s) = r`, so `y = y' + ρ s`.
    fn solve(
        &mut self,
        (r, s): (&[f64], &[f64]),
        (x, y): (&mut [f64], &mut [f64]),
        q: &[f64],
    ) -> Result<(), LinearizationError> {
        let failed = |_| LinearizationError::NonFinite {
            quantity: "the solution of the saddle-point system",
            q: q.to_vec(),
        };
        self.saddle
            .solve((r, s, &[]), (&mut *x, &mut *y, &mut []))
            .map_err(failed)?;
        self.saddle
            .refine(2, (x, &mut *y, &mut []))
            .map_err(failed)?;
        for (y, s) in y.iter_mut().zip(s) {
            *y += self.rho * s;
        }
        Ok(())
    }

    /// `out = Gᵀ λ`.
    fn jacobian_transpose_times(&self, lambda: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        add_pattern_transpose_times(&self.pattern, &self.jacobian, lambda, out);
    }

    /// `out = M x`.
    fn mass_times(&self, x: &[f64], out: &mut [f64]) {
        block_diagonal_times(self.model.body_sizes(), &self.mass, x, out);
    }

    /// `out = K x` on `K`'s symmetric pattern (each unordered pair once).
    fn stiffness_times(&self, x: &[f64], out: &mut [f64]) {
        out.fill(0.0);
        add_symmetric_pattern_times(&self.stiffness_pattern, &self.stiffness, 1.0, x, out);
    }

    /// `(‖M‖_F, ‖K‖_F)` of the values evaluated last.
    fn norms(&self) -> (f64, f64) {
        let mass = self.mass.iter().map(|x| x * x).sum::<f64>().sqrt();
        let stiffness = self
            .stiffness_pattern
            .iter()
            .zip(&self.stiffness)
            .map(|(&(i, j), x)| if i == j { x * x } else { 2.0 * x * x })
            .sum::<f64>()
            .sqrt();
        (mass, stiffness)
    }

    /// An estimate of the largest `|ω²|`: the largest `|Kᵢᵢ| / Mᵢᵢ` (`1` when `K` vanishes),
    /// the scale of the zero test and of the shifts.
    fn spectral_scale(&self) -> f64 {
        let mut diagonal = vec![0.0; self.n];
        for (&(i, j), value) in self.stiffness_pattern.iter().zip(&self.stiffness) {
            if i == j {
                diagonal[i] += value;
            }
        }
        let (mut first, mut offset, mut scale) = (0, 0, 0.0f64);
        for &size in self.model.body_sizes() {
            for a in 0..size {
                let mass = self.mass[offset + a * size + a];
                if mass > 0.0 {
                    scale = scale.max(diagonal[first + a].abs() / mass);
                }
            }
            first += size;
            offset += size * size;
        }
        // Without any stiffness every ω² is zero; a unit scale keeps the shifts away from it.
        if scale > 0.0 {
            scale
        } else {
            1.0
        }
    }

    /// How many eigenvalues `ω²` of the constrained problem lie below `shift`, from the inertia
    /// of `[K − shift M, Gᵀ; G, 0]` (the values evaluated last).
    fn count_below(
        &mut self,
        shift: f64,
        what: &'static str,
        q: &[f64],
    ) -> Result<usize, LinearizationError> {
        let inertia = self.factor(-shift, true, what, q)?;
        Ok(inertia.negative.saturating_sub(self.m))
    }
}

/// `xᵀ y`.
fn dot(x: &[f64], y: &[f64]) -> f64 {
    x.iter().zip(y).map(|(a, b)| a * b).sum()
}

/// `|x|∞`.
fn amax(x: &[f64]) -> f64 {
    x.iter().fold(0.0f64, |a, b| a.max(b.abs()))
}

/// The zero test's relative tolerance, shared with the dense path.
const ZERO: f64 = ZERO_TOLERANCE;
