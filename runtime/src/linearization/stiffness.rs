//! The stiffness of the linearized equations at a point `(q, λ)`, the tangent space of the
//! rows there, and what the stiffness says of an equilibrium's stability.

use nalgebra::{DMatrix, SMatrix, SVector, SymmetricEigen};

use super::{finite, LinearizationError};
use crate::model::{AppliedForces, HolonomicHessians, PotentialHessian};

/// Whether an equilibrium is a strict minimum of the potential on the constraint manifold,
/// read from the eigenvalues of the reduced stiffness `Tᵀ K T`
/// ([`Linearization`](super::Linearization)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stability {
    /// Every eigenvalue is positive: a strict minimum, stable.
    Minimum,
    /// Some eigenvalues vanish (to a relative `1e-9`) and none is negative: a neutral direction,
    /// e.g. a rigid motion of a free body, or a degenerate equilibrium.
    Degenerate {
        /// How many eigenvalues vanish.
        zero: usize,
    },
    /// Some eigenvalues are negative: a saddle or a maximum, unstable.
    Unstable {
        /// How many eigenvalues are negative.
        negative: usize,
        /// How many vanish.
        zero: usize,
    },
}

/// Singular values of `G` at or below this fraction of the largest count as zero: the
/// directions of the null space (rows independent to this relative precision).
const RANK_TOLERANCE: f64 = 1e-10;

/// Eigenvalues of the reduced stiffness (or `ω²` of a mode) at or below this fraction of the
/// largest in magnitude count as zero.
pub(super) const ZERO_TOLERANCE: f64 = 1e-9;

/// Returns an orthonormal basis of the null space of `g` (`m × n`), as the columns of an
/// `n × d` matrix: the right singular vectors of singular values at or below
/// [`RANK_TOLERANCE`] of the largest (all of `ℝⁿ` when `g` has no rows or vanishes).
pub(super) fn null_space(g: &DMatrix<f64>) -> DMatrix<f64> {
    let n = g.ncols();
    let largest = g.amax();
    if g.nrows() == 0 || largest == 0.0 {
        return DMatrix::identity(n, n);
    }
    // Padded to at least n rows so that the decomposition returns every right singular vector.
    let rows = g.nrows().max(n);
    let mut padded = DMatrix::<f64>::zeros(rows, n);
    padded.view_mut((0, 0), (g.nrows(), n)).copy_from(g);
    let svd = padded.svd(false, true);
    let (Some(v_t), sigma) = (svd.v_t, svd.singular_values) else {
        return DMatrix::zeros(n, 0);
    };
    let sigma_max = sigma.amax();
    let null: Vec<usize> = (0..sigma.len())
        .filter(|&k| sigma[k] <= RANK_TOLERANCE * sigma_max)
        .collect();
    let mut basis = DMatrix::<f64>::zeros(n, null.len());
    for (column, &k) in null.iter().enumerate() {
        basis.set_column(column, &v_t.row(k).transpose());
    }
    basis
}

/// The stiffness of the linearized equations at `(q, λ)`: `K = ∇²V + Σₖ λₖ ∇²gₖ − ∂f_a/∂q`,
/// with the damping `D` and `G`, and the tangent basis `T` of `G`'s null space.
pub(super) struct Stiffness<const N: usize, const M: usize> {
    /// `K`.
    pub stiffness: SMatrix<f64, N, N>,
    /// `D = −∂f_a/∂v`, from the same evaluation of the forces' Jacobians.
    pub damping: SMatrix<f64, N, N>,
    /// `G = ∂g/∂q`.
    pub jacobian: SMatrix<f64, M, N>,
    /// `T`, `N × d`, orthonormal columns spanning `ker G`.
    pub tangent: DMatrix<f64>,
}

/// The rows' Hessians `∇²gₖ` of `model` at `q` and time `t`, checked finite; on the heap, as
/// `M` Hessians of `N × N` may not fit a thread's stack.
pub(super) fn constraint_hessians<S, const N: usize, const M: usize>(
    model: &S,
    q: &SVector<f64, N>,
    t: f64,
) -> Result<Box<[SMatrix<f64, N, N>; M]>, LinearizationError>
where
    S: HolonomicHessians<N, M>,
{
    let mut hessians: Box<[SMatrix<f64, N, N>; M]> = match vec![SMatrix::<f64, N, N>::zeros(); M]
        .into_boxed_slice()
        .try_into()
    {
        Ok(hessians) => hessians,
        Err(_) => unreachable!("a vector of M entries converts to an array of M"),
    };
    model.constraint_hessians(q, t, &mut hessians);
    for hessian in hessians.iter() {
        finite("∇²g", hessian.iter(), q.as_slice())?;
    }
    Ok(hessians)
}

/// Evaluates `G = ∂g/∂q` of `model` at `q` and time `t` with the orthonormal basis `T` of its
/// null space ([`null_space`]): the tangent space of the rows at `q`.
pub(super) fn tangent_space<S, const N: usize, const M: usize>(
    model: &S,
    q: &SVector<f64, N>,
    t: f64,
) -> Result<(SMatrix<f64, M, N>, DMatrix<f64>), LinearizationError>
where
    S: HolonomicHessians<N, M>,
{
    let mut jacobian = SMatrix::<f64, M, N>::zeros();
    model.constraint_jacobian(q, t, &mut jacobian);
    finite("G", jacobian.iter(), q.as_slice())?;
    let tangent = null_space(&DMatrix::from_column_slice(M, N, jacobian.as_slice()));
    Ok((jacobian, tangent))
}

impl<const N: usize, const M: usize> Stiffness<N, M> {
    /// Evaluates `K`, `D`, `G` and `T` of `model` at `(q, λ)`, at rest, at time `t`.
    pub fn new<S>(
        model: &S,
        q: &SVector<f64, N>,
        lambda: &SVector<f64, M>,
        t: f64,
    ) -> Result<Self, LinearizationError>
    where
        S: PotentialHessian<N> + HolonomicHessians<N, M> + AppliedForces<N>,
    {
        Self::moving(model, q, &SVector::zeros(), lambda, t)
    }

    /// Evaluates `K`, `D`, `G` and `T` of `model` at `(q, λ)` moving at `v` (the forces'
    /// Jacobians at `v`), at time `t`.
    pub fn moving<S>(
        model: &S,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        lambda: &SVector<f64, M>,
        t: f64,
    ) -> Result<Self, LinearizationError>
    where
        S: PotentialHessian<N> + HolonomicHessians<N, M> + AppliedForces<N>,
    {
        let mut stiffness = SMatrix::<f64, N, N>::zeros();
        model.potential_hessian(q, &mut stiffness);
        finite("∇²V", stiffness.iter(), q.as_slice())?;
        for (k, hessian) in constraint_hessians(model, q, t)?.iter().enumerate() {
            stiffness += lambda[k] * hessian;
        }
        let (mut dq, mut dv) = (SMatrix::zeros(), SMatrix::zeros());
        model.applied_force_jacobians(q, v, t, &mut dq, &mut dv);
        finite("∂f_a/∂q", dq.iter(), q.as_slice())?;
        finite("∂f_a/∂v", dv.iter(), q.as_slice())?;
        stiffness -= dq;
        let (jacobian, tangent) = tangent_space(model, q, t)?;
        Ok(Stiffness {
            stiffness,
            damping: -dv,
            jacobian,
            tangent,
        })
    }

    /// `Tᵀ K T`, symmetrized (`K` is symmetric for conservative forces).
    pub fn reduced(&self) -> DMatrix<f64> {
        let k = DMatrix::from_column_slice(N, N, self.stiffness.as_slice());
        let reduced = self.tangent.transpose() * k * &self.tangent;
        (&reduced + reduced.transpose()) * 0.5
    }

    /// Classifies the equilibrium by the signs of the eigenvalues of `Tᵀ K T`.
    pub fn stability(&self) -> Stability {
        let reduced = self.reduced();
        if reduced.nrows() == 0 {
            return Stability::Minimum;
        }
        let eigenvalues = SymmetricEigen::new(reduced).eigenvalues;
        let scale = eigenvalues.amax();
        let zero = eigenvalues
            .iter()
            .filter(|&&e| e.abs() <= ZERO_TOLERANCE * scale)
            .count();
        let negative = eigenvalues
            .iter()
            .filter(|&&e| e < -ZERO_TOLERANCE * scale)
            .count();
        match (negative, zero) {
            (0, 0) => Stability::Minimum,
            (0, zero) => Stability::Degenerate { zero },
            (negative, zero) => Stability::Unstable { negative, zero },
        }
    }
}
