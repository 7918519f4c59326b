//! The linearized equations at an equilibrium, in the tangent space of the constraint manifold.

use nalgebra::{DMatrix, SMatrix, SVector};

use super::equilibrium::{residual, Equilibrium};
use super::stiffness::Stiffness;
use super::{finite, LinearizationError};
use crate::model::{AppliedForces, HolonomicHessians, Inertia, PotentialHessian};

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
            damping,
            jacobian,
            tangent,
        } = Stiffness::new(model, q, lambda, t)?;
        let mut mass = SMatrix::<f64, N, N>::zeros();
        model.mass_matrix(q, &mut mass);
        finite("M", mass.iter(), q.as_slice())?;
        Ok(Linearization {
            q: *q,
            lambda: *lambda,
            t,
            mass,
            stiffness,
            damping,
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
        descriptor(&self.mass, &self.stiffness, &self.damping, &self.jacobian)
    }
}

/// The descriptor pair `(E, A)` of `M δv̇ = −K δq − D δv − Gᵀ δλ`, `δq̇ = δv`, `G δq = 0` in
/// `x = (δq, δv, δλ)`.
pub(super) fn descriptor<const N: usize, const M: usize>(
    mass: &SMatrix<f64, N, N>,
    stiffness: &SMatrix<f64, N, N>,
    damping: &SMatrix<f64, N, N>,
    jacobian: &SMatrix<f64, M, N>,
) -> (DMatrix<f64>, DMatrix<f64>) {
    let size = 2 * N + M;
    let mut e = DMatrix::<f64>::zeros(size, size);
    let mut a = DMatrix::<f64>::zeros(size, size);
    e.view_mut((0, 0), (N, N)).fill_with_identity();
    e.view_mut((N, N), (N, N)).copy_from(mass);
    a.view_mut((0, N), (N, N)).fill_with_identity();
    a.view_mut((N, 0), (N, N)).copy_from(&(-stiffness));
    a.view_mut((N, N), (N, N)).copy_from(&(-damping));
    a.view_mut((N, 2 * N), (N, M))
        .copy_from(&(-jacobian.transpose()));
    a.view_mut((2 * N, 0), (M, N)).copy_from(jacobian);
    (e, a)
}
