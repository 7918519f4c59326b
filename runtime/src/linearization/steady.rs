//! The linearization about a steady motion (a relative equilibrium), in its co-rotating frame:
//! [`SteadyLinearization`].

use nalgebra::{Complex, DMatrix, SMatrix, SVector};

use super::equilibrium::least_squares_multipliers;
use super::stiffness::{constraint_hessians, tangent_space};
use super::{finite, LinearizationError};
use crate::model::{AppliedForces, ConstantMass, HolonomicHessians, PotentialHessian};

/// A steady motion `q(t) = exp(t Ω S) q*` of a model invariant under `exp(θ S)`.
#[derive(Clone, Debug, PartialEq)]
pub struct SteadyMotion<const N: usize> {
    /// The generator `S` of the symmetry, acting linearly on the coordinates.
    pub generator: SMatrix<f64, N, N>,
    /// The rate `Ω`: `v = Ω S q` along the motion.
    pub rate: f64,
}

/// Whether a steady motion is spectrally stable ([`SteadyLinearization::stability`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SteadyStability {
    /// Every eigenvalue is imaginary (to `1e-6` of the largest `|s|`): small motions stay
    /// small (to the linear order).
    Stable,
    /// Some eigenvalue has a positive real part: small motions grow as `e^{rate t}`.
    Unstable {
        /// The largest real part.
        rate: f64,
    },
}

/// The linearized equations about a steady motion, in its co-rotating frame.
///
/// A model whose energy and rows are invariant under a one-parameter group of linear maps
/// `q ↦ exp(θ S) q` (a rotation about a fixed axis acting on a rotation matrix's entries or a
/// quaternion, a translation, …) can move steadily along an orbit of the group,
/// `q(t) = exp(t Ω S) q*`, `v = Ω S q`: a heavy top spinning upright, a rotor turning at a
/// constant rate. In the frame that turns with it, `q = exp(t Ω S) q̃`, a constant mass matrix
/// `M` with `Sᵀ M + M S = 0` (the group preserves the kinetic energy) turns the Lagrangian
/// into the time-independent
///
/// ```text
/// L̃ = ½ (q̃̇ + Ω S q̃)ᵀ M (q̃̇ + Ω S q̃) − V(q̃),
/// ```
///
/// whose Euler–Lagrange equations about `q̃ = q*` are (Marsden & Ratiu, *Introduction to
/// Mechanics and Symmetry*, §1.10 and the energy–momentum method of Simo, Lewis & Marsden 1991;
/// Meirovitch, *Methods of Analytical Dynamics*, §6.7 for the gyroscopic form)
///
/// ```text
/// M δq̈ + C δq̇ + K_Ω δq + Gᵀ δλ = 0,    G δq = 0,
/// C   = Ω (M S − Sᵀ M)                         (gyroscopic, skew-symmetric),
/// K_Ω = ∇²V − Ω² Sᵀ M S + Σₖ λₖ ∇²gₖ           (∇² of the amended potential V − ½ Ω² |S q|²_M),
/// ```
///
/// with `λ` the steady motion's multipliers, `∇V − Ω² Sᵀ M S q* + Gᵀ λ = 0` (the centrifugal
/// force balanced by gravity and the rows). In the tangent space, `δq = T y`, the eigenvalues
/// `s` of `Tᵀ M T ÿ + Tᵀ C T ẏ + Tᵀ K_Ω T y = 0` come in quadruples `±s, ±s̄` (a gyroscopic
/// conservative system is Hamiltonian), so the steady motion is spectrally stable exactly when
/// every `s` is imaginary ([`stability`](Self::stability)). The symmetry's own direction
/// `S q*` adds zero eigenvalues (moving along the orbit, changing the rate), which are neutral.
#[derive(Clone, Debug, PartialEq)]
pub struct SteadyLinearization<const N: usize, const M: usize> {
    /// The configuration `q*` on the orbit.
    pub q: SVector<f64, N>,
    /// The multipliers of the steady motion.
    pub lambda: SVector<f64, M>,
    /// The rate `Ω`.
    pub rate: f64,
    /// `M`.
    pub mass: SMatrix<f64, N, N>,
    /// `C = Ω (M S − Sᵀ M)`.
    pub gyroscopic: SMatrix<f64, N, N>,
    /// `K_Ω = ∇²V − Ω² Sᵀ M S + Σₖ λₖ ∇²gₖ`.
    pub stiffness: SMatrix<f64, N, N>,
    /// `T`: `N × d`, orthonormal columns spanning `ker G`.
    pub tangent: DMatrix<f64>,
}

/// Relative tolerance of the symmetry checks.
const SYMMETRY_TOLERANCE: f64 = 1e-10;

/// The real parts at or below this fraction of the largest `|s|` count as zero.
const IMAGINARY_TOLERANCE: f64 = 1e-6;

impl<const N: usize, const M: usize> SteadyLinearization<N, M> {
    /// Linearizes `model` about the steady motion through `q` at time `t`: checks that `motion`
    /// is a symmetry there (`Sᵀ M + M S = 0`, and `V` and the rows constant along
    /// `exp(θ S) q` to second order in `θ`, else [`LinearizationError::NotASymmetry`]) and that the model is conservative at `q`
    /// (no applied force or force Jacobian, else `NotASymmetry` too), fits `λ` by least squares
    /// and checks `∇V − Ω² Sᵀ M S q + Gᵀ λ = 0` and `g = 0` to the relative `tolerance`
    /// ([`LinearizationError::NotAnEquilibrium`] otherwise).
    pub fn at<S>(
        model: &S,
        q: &SVector<f64, N>,
        motion: &SteadyMotion<N>,
        t: f64,
        tolerance: f64,
    ) -> Result<Self, LinearizationError>
    where
        S: ConstantMass<N> + PotentialHessian<N> + HolonomicHessians<N, M> + AppliedForces<N>,
    {
        finite("q", q.iter(), q.as_slice())?;
        let (s, rate) = (&motion.generator, motion.rate);
        if !rate.is_finite() || !s.iter().all(|x| x.is_finite()) {
            return Err(LinearizationError::BadSetting {
                name: "the steady motion's rate or generator",
                value: rate,
                requirement: "finite",
            });
        }
        let mut mass = SMatrix::<f64, N, N>::zeros();
        model.mass_matrix(q, &mut mass);
        finite("M", mass.iter(), q.as_slice())?;
        let not_symmetric = |what| LinearizationError::NotASymmetry { what };
        let scale = mass.amax() * s.amax();
        if (s.transpose() * mass + mass * s).amax() > SYMMETRY_TOLERANCE * scale {
            return Err(not_symmetric(
                "Sᵀ M + M S ≠ 0: the group does not preserve the kinetic energy",
            ));
        }
        let orbit = s * q;
        let (jacobian, tangent) = tangent_space(model, q, t)?;
        if (jacobian * orbit).amax() > SYMMETRY_TOLERANCE * jacobian.amax() * orbit.amax() {
            return Err(not_symmetric(
                "G S q ≠ 0: the orbit leaves the constraint rows",
            ));
        }
        let mut gradient = SVector::<f64, N>::zeros();
        model.potential_gradient(q, &mut gradient);
        finite("∇V", gradient.iter(), q.as_slice())?;
        let mut potential_hessian = SMatrix::<f64, N, N>::zeros();
        model.potential_hessian(q, &mut potential_hessian);
        finite("∇²V", potential_hessian.iter(), q.as_slice())?;
        // V(exp(θS) q) constant to second order in θ: ∇V · S q = 0 and
        // (S q)ᵀ ∇²V (S q) + ∇V · S² q = 0 (a first-order check alone passes any axis through
        // a stationary point of V).
        let curve = s * orbit;
        let size = gradient.norm() * (orbit.norm() + curve.norm())
            + potential_hessian.amax() * orbit.norm_squared();
        if gradient.dot(&orbit).abs() > SYMMETRY_TOLERANCE * size
            || (orbit.dot(&(potential_hessian * orbit)) + gradient.dot(&curve)).abs()
                > SYMMETRY_TOLERANCE * size
        {
            return Err(not_symmetric("V changes along the orbit exp(θS) q"));
        }
        let velocity = orbit * rate;
        let mut applied = SVector::<f64, N>::zeros();
        model.applied_force(q, &velocity, t, &mut applied);
        let (mut dq, mut dv) = (SMatrix::zeros(), SMatrix::zeros());
        model.applied_force_jacobians(q, &velocity, t, &mut dq, &mut dv);
        if applied.amax() != 0.0 || dq.amax() != 0.0 || dv.amax() != 0.0 {
            return Err(not_symmetric(
                "the model has applied forces or dissipation, which a steady motion of a \
                 conservative model does not",
            ));
        }
        // The amended potential's gradient, balanced by the rows: least squares for λ.
        let centrifugal = s.transpose() * mass * s;
        let amended = gradient - centrifugal * q * (rate * rate);
        let lambda = least_squares_multipliers(&jacobian, &amended).ok_or_else(|| {
            LinearizationError::Singular {
                what: "G Gᵀ (redundant constraint rows)",
                q: q.as_slice().to_vec(),
            }
        })?;
        let mut g = SVector::<f64, M>::zeros();
        model.constraints(q, t, &mut g);
        finite("g", g.iter(), q.as_slice())?;
        let reaction = jacobian.transpose() * lambda;
        let force_scale = gradient
            .amax()
            .max(reaction.amax())
            .max((centrifugal * q).amax() * rate * rate)
            .max(f64::MIN_POSITIVE);
        let length = (jacobian.amax() * q.amax().max(1.0)).max(f64::MIN_POSITIVE);
        let residual = ((amended + reaction).amax() / force_scale).max(g.amax() / length);
        if residual > tolerance {
            return Err(LinearizationError::NotAnEquilibrium {
                residual,
                tolerance,
            });
        }
        let mut stiffness = potential_hessian;
        let curve_rows = jacobian * s * orbit;
        for (k, hessian) in constraint_hessians(model, q, t)?.iter().enumerate() {
            // The rows stay satisfied along the orbit to second order too.
            let second = orbit.dot(&(hessian * orbit)) + curve_rows[k];
            let size = (hessian.amax() + jacobian.amax()) * orbit.norm_squared().max(1.0);
            if second.abs() > SYMMETRY_TOLERANCE * size {
                return Err(not_symmetric("the rows change along the orbit exp(θS) q"));
            }
            stiffness += lambda[k] * hessian;
        }
        stiffness -= centrifugal * (rate * rate);
        Ok(SteadyLinearization {
            q: *q,
            lambda,
            rate,
            mass,
            gyroscopic: (mass * s - s.transpose() * mass) * rate,
            stiffness,
            tangent,
        })
    }

    /// `Tᵀ A T` of an `N × N` matrix.
    fn reduce(&self, a: &SMatrix<f64, N, N>) -> DMatrix<f64> {
        let a = DMatrix::from_column_slice(N, N, a.as_slice());
        self.tangent.transpose() * a * &self.tangent
    }

    /// The eigenvalues `s` of `(s² Tᵀ M T + s Tᵀ C T + Tᵀ K_Ω T) y = 0`, from the first-order
    /// form `[0, I; −Mᵣ⁻¹Kᵣ, −Mᵣ⁻¹Cᵣ]` (real Schur form), all `2d` of them, by real part
    /// (largest first). They are the co-rotating frame's: a motion `e^{s t}` there is
    /// `exp(tΩS) e^{st}` in the inertial frame, so the imaginary parts differ from the inertial
    /// ones by the frame's rate (a tilt of the sleeping top: `s − iΩ`); the real parts, and so
    /// the stability, are the same.
    pub fn eigenvalues(&self) -> Result<Vec<Complex<f64>>, LinearizationError> {
        let mass = self.reduce(&self.mass);
        let d = mass.nrows();
        if d == 0 {
            return Ok(Vec::new());
        }
        let lu = mass.lu();
        let singular = || LinearizationError::Singular {
            what: "the reduced mass matrix Tᵀ M T (a direction of motion without inertia)",
            q: self.q.as_slice().to_vec(),
        };
        let stiffness = lu
            .solve(&self.reduce(&self.stiffness))
            .ok_or_else(singular)?;
        let gyroscopic = lu
            .solve(&self.reduce(&self.gyroscopic))
            .ok_or_else(singular)?;
        let mut first_order = DMatrix::<f64>::zeros(2 * d, 2 * d);
        first_order.view_mut((0, d), (d, d)).fill_with_identity();
        first_order
            .view_mut((d, 0), (d, d))
            .copy_from(&(-stiffness));
        first_order
            .view_mut((d, d), (d, d))
            .copy_from(&(-gyroscopic));
        let mut eigenvalues: Vec<Complex<f64>> =
            first_order.complex_eigenvalues().iter().copied().collect();
        eigenvalues.sort_by(|a, b| b.re.total_cmp(&a.re));
        Ok(eigenvalues)
    }

    /// Stable when every eigenvalue's real part is at most `1e-6` of the largest `|s|` (the
    /// eigenvalues of a gyroscopic conservative system are `±s, ±s̄`: any real part is an
    /// instability), else unstable with the largest real part as its rate.
    pub fn stability(&self) -> Result<SteadyStability, LinearizationError> {
        let eigenvalues = self.eigenvalues()?;
        let scale = eigenvalues.iter().fold(0.0f64, |a, s| a.max(s.norm()));
        let rate = eigenvalues.first().map_or(0.0, |s| s.re);
        Ok(if rate > IMAGINARY_TOLERANCE * scale {
            SteadyStability::Unstable { rate }
        } else {
            SteadyStability::Stable
        })
    }
}
