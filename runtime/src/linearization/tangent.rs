//! The linearized equations at an equilibrium, in the tangent space of the constraint manifold.

use nalgebra::{DMatrix, SMatrix, SVector, SymmetricEigen};

use super::equilibrium::{residual, Equilibrium, Stability};
use super::{finite, LinearizationError};
use crate::model::{AppliedForces, HolonomicHessians, Inertia, PotentialHessian};

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

/// The stiffness of the linearized equations at `(q, λ)`: `K = ∇²V + Σₖ λₖ ∇²gₖ − ∂f_a/∂q`
/// and `G`, with the tangent basis `T` of `G`'s null space.
pub(super) struct Stiffness<const N: usize, const M: usize> {
    /// `K`.
    pub stiffness: SMatrix<f64, N, N>,
    /// `G = ∂g/∂q`.
    pub jacobian: SMatrix<f64, M, N>,
    /// `T`, `N × d`, orthonormal columns spanning `ker G`.
    pub tangent: DMatrix<f64>,
}

impl<const N: usize, const M: usize> Stiffness<N, M> {
    /// Evaluates `K`, `G` and `T` of `model` at `(q, λ)` and time `t`.
    pub fn new<S>(
        model: &S,
        q: &SVector<f64, N>,
        lambda: &SVector<f64, M>,
        t: f64,
    ) -> Result<Self, LinearizationError>
    where
        S: PotentialHessian<N> + HolonomicHessians<N, M> + AppliedForces<N>,
    {
        let mut stiffness = SMatrix::<f64, N, N>::zeros();
        model.potential_hessian(q, &mut stiffness);
        finite("∇²V", stiffness.iter(), q.as_slice())?;
        // On the heap: `M` Hessians of `N × N` may not fit a thread's stack.
        let mut hessians: Box<[SMatrix<f64, N, N>; M]> =
            match vec![SMatrix::<f64, N, N>::zeros(); M]
                .into_boxed_slice()
                .try_into()
            {
                Ok(hessians) => hessians,
                Err(_) => unreachable!("a vector of M entries converts to an array of M"),
            };
        model.constraint_hessians(q, t, &mut hessians);
        for (k, hessian) in hessians.iter().enumerate() {
            finite("∇²g", hessian.iter(), q.as_slice())?;
            stiffness += lambda[k] * hessian;
        }
        let (mut dq, mut dv) = (SMatrix::zeros(), SMatrix::zeros());
        model.applied_force_jacobians(q, &SVector::zeros(), t, &mut dq, &mut dv);
        finite("∂f_a/∂q", dq.iter(), q.as_slice())?;
        stiffness -= dq;
        let mut jacobian = SMatrix::<f64, M, N>::zeros();
        model.constraint_jacobian(q, t, &mut jacobian);
        finite("G", jacobian.iter(), q.as_slice())?;
        let tangent = null_space(&DMatrix::from_column_slice(M, N, jacobian.as_slice()));
        Ok(Stiffness {
            stiffness,
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

/// The linearized equations of motion at an equilibrium `(q, λ)`:
///
/// ```text
/// M δq̈ + D δq̇ + K δq + Gᵀ δλ = 0,    G δq = 0,
/// M = M(q),  K = ∇²V + Σₖ λₖ ∇²gₖ − ∂f_a/∂q,  D = −∂f_a/∂v,
/// ```
///
/// with `f_a` the model's dissipation and forces ([`AppliedForces`]) at `v = 0`, and in the
/// tangent space of the manifold, `δq = T y` with `T` an orthonormal basis of `ker G`: the
/// reduced matrices `Tᵀ M T`, `Tᵀ K T`, `Tᵀ D T` of [`dof`](Linearization::dof) rows. At a
/// minimum `Tᵀ K T` is positive definite; the undamped modes solve
/// `Tᵀ K T y = ω² Tᵀ M T y` ([`modes`](Linearization::modes)).
#[derive(Clone, Debug, PartialEq)]
pub struct Linearization<const N: usize, const M: usize> {
    /// The equilibrium configuration.
    pub q: SVector<f64, N>,
    /// Its multipliers.
    pub lambda: SVector<f64, M>,
    /// The time.
    pub t: f64,
    /// `M(q)`.
    pub mass: SMatrix<f64, N, N>,
    /// `K`, with the geometric stiffness `Σₖ λₖ ∇²gₖ` of the loaded rows.
    pub stiffness: SMatrix<f64, N, N>,
    /// `D = −∂f_a/∂v` at `v = 0`.
    pub damping: SMatrix<f64, N, N>,
    /// `G = ∂g/∂q`.
    pub jacobian: SMatrix<f64, M, N>,
    /// `T`: `N × d`, orthonormal columns spanning `ker G`.
    pub tangent: DMatrix<f64>,
}

impl<const N: usize, const M: usize> Linearization<N, M> {
    /// Linearizes `model` at an equilibrium found by [`equilibrium`](super::equilibrium).
    pub fn at<S>(model: &S, equilibrium: &Equilibrium<N, M>) -> Result<Self, LinearizationError>
    where
        S: Inertia<N> + PotentialHessian<N> + HolonomicHessians<N, M> + AppliedForces<N>,
    {
        Self::evaluate(model, &equilibrium.q, &equilibrium.lambda, equilibrium.t)
    }

    /// Linearizes `model` at a configuration `q` with multipliers `λ` at time `t` given by the
    /// caller, after checking that they are an equilibrium to the relative `tolerance`
    /// ([`Equilibrium::residual`]); [`LinearizationError::NotAnEquilibrium`] otherwise.
    pub fn at_point<S>(
        model: &S,
        q: &SVector<f64, N>,
        lambda: &SVector<f64, M>,
        t: f64,
        tolerance: f64,
    ) -> Result<Self, LinearizationError>
    where
        S: Inertia<N> + PotentialHessian<N> + HolonomicHessians<N, M> + AppliedForces<N>,
    {
        finite("q", q.iter(), q.as_slice())?;
        finite("λ", lambda.iter(), q.as_slice())?;
        let (_, relative) = residual(model, q, lambda, t, 0.0)?;
        if relative.is_nan() || relative > tolerance {
            return Err(LinearizationError::NotAnEquilibrium {
                residual: relative,
                tolerance,
            });
        }
        Self::evaluate(model, q, lambda, t)
    }

    fn evaluate<S>(
        model: &S,
        q: &SVector<f64, N>,
        lambda: &SVector<f64, M>,
        t: f64,
    ) -> Result<Self, LinearizationError>
    where
        S: Inertia<N> + PotentialHessian<N> + HolonomicHessians<N, M> + AppliedForces<N>,
    {
        let Stiffness {
            stiffness,
            jacobian,
            tangent,
        } = Stiffness::new(model, q, lambda, t)?;
        let mut mass = SMatrix::<f64, N, N>::zeros();
        model.mass_matrix(q, &mut mass);
        finite("M", mass.iter(), q.as_slice())?;
        let (mut dq, mut dv) = (SMatrix::zeros(), SMatrix::zeros());
        model.applied_force_jacobians(q, &SVector::zeros(), t, &mut dq, &mut dv);
        finite("∂f_a/∂v", dv.iter(), q.as_slice())?;
        Ok(Linearization {
            q: *q,
            lambda: *lambda,
            t,
            mass,
            stiffness,
            damping: -dv,
            jacobian,
            tangent,
        })
    }

    /// The degrees of freedom at `q`: `N` minus the rank of `G`.
    pub fn dof(&self) -> usize {
        self.tangent.ncols()
    }

    /// `Tᵀ A T` of an `N × N` matrix.
    fn reduce(&self, a: &SMatrix<f64, N, N>) -> DMatrix<f64> {
        let a = DMatrix::from_column_slice(N, N, a.as_slice());
        self.tangent.transpose() * a * &self.tangent
    }

    /// The reduced mass matrix `Tᵀ M T`.
    pub fn reduced_mass(&self) -> DMatrix<f64> {
        self.reduce(&self.mass)
    }

    /// The reduced stiffness `Tᵀ K T`.
    pub fn reduced_stiffness(&self) -> DMatrix<f64> {
        self.reduce(&self.stiffness)
    }

    /// The reduced damping `Tᵀ D T`.
    pub fn reduced_damping(&self) -> DMatrix<f64> {
        self.reduce(&self.damping)
    }

    /// The descriptor form `E ẋ = A x` of the linearized equations in the model's own
    /// coordinates, with `x = (δq, δv, δλ)` of `2N + M` entries:
    ///
    /// ```text
    /// E = [ I  0  0 ]      A = [  0   I   0  ]
    ///     [ 0  M  0 ]          [ −K  −D  −Gᵀ ]
    ///     [ 0  0  0 ]          [  G   0   0  ]
    /// ```
    ///
    /// (the index-2 form; a control user reduces it, or takes the tangent-space matrices).
    pub fn descriptor(&self) -> (DMatrix<f64>, DMatrix<f64>) {
        let size = 2 * N + M;
        let mut e = DMatrix::<f64>::zeros(size, size);
        let mut a = DMatrix::<f64>::zeros(size, size);
        e.view_mut((0, 0), (N, N)).fill_with_identity();
        e.view_mut((N, N), (N, N)).copy_from(&self.mass);
        a.view_mut((0, N), (N, N)).fill_with_identity();
        a.view_mut((N, 0), (N, N)).copy_from(&(-self.stiffness));
        a.view_mut((N, N), (N, N)).copy_from(&(-self.damping));
        a.view_mut((N, 2 * N), (N, M))
            .copy_from(&(-self.jacobian.transpose()));
        a.view_mut((2 * N, 0), (M, N)).copy_from(&self.jacobian);
        (e, a)
    }
}
