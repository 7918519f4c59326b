//! The variational linearized `SO(3)` integrator (Tao–Owhadi 2014, eqs. 36–37): Z&S's force on
//! the penalized rotation in `ℝ³ˣ³`, with a symplectic-Euler (first order) or trapezoidal
//! (second order, Z&S itself) update.

use nalgebra::{Matrix3, SMatrix, SVector};

use super::{rotation, row_major, ROTATION_COORDINATES};
use crate::error::StepError;
use crate::integrators::checks::{
    check_finite_slice, check_parameters, check_state, check_step_size,
};
use crate::integrators::linearly_implicit::carried::{AccelerationRule, CarriedDense};
use crate::integrators::linearly_implicit::FullAcceleration;
use crate::integrators::linearly_implicit::ZhangSkeel;
use crate::integrators::{Integrator, StepReport};
use crate::model::{
    Configuration, ConstantMass, Inertia, Potential, PotentialHessian, PotentialThirdDerivative,
    RigidBody, RigidBodyHessians,
};
use crate::state::State;

/// A rigid body relaxed from `SO(3)` to `ℝ³ˣ³` with the penalty `½ω²‖RᵀR − I‖²_F`: a
/// fixed-size model on `ℝ⁹` (`q = R`, `v = Ṙ`, row by row) that any integrator of the
/// fixed-size tier with the matching capabilities can step.
///
/// Its Lagrangian is Tao–Owhadi's penalized action (2014, after eq. 35, with the penalty's sign
/// corrected as in their eq. 36; `shared/EXPERIMENTS-M2.md` §F.3):
///
/// ```text
/// L(R, Ṙ) = ½ tr(Ṙ J_d Ṙᵀ) − U(R),   U(R) = V(R) + ½ ω² ‖RᵀR − I‖²_F,   J_d = ½ tr(J) I − J
/// ```
///
/// so the mass matrix is the constant `M = I₃ ⊗ J_d` (`¼ tr(ṘᵀṘ)` for `J = I`, the paper's
/// case; `J_d` is positive definite when `J`'s principal moments satisfy the strict triangle
/// inequality). The derivatives of the penalty `P`, with `C = RᵀR − I`, are
///
/// ```text
/// ∇P = 2ω² R C,   ∇²P[A] = 2ω² (A RᵀR + R AᵀR + R RᵀA − A),
/// ∇³P[A, A] = 4ω² (A AᵀR + A RᵀA + R AᵀA)
/// ```
///
/// and `V`'s come from [`RigidBody`] and [`RigidBodyHessians`]. On `SO(3)` the energy
/// `½ vᵀMv + U` is the rigid body's `½ ΩᵀJΩ + V`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PenalizedRotation<B> {
    /// The rigid body.
    pub body: B,
    /// The penalty frequency `ω` (the paper: 10).
    pub omega: f64,
}

impl<B> PenalizedRotation<B> {
    /// Returns the body `body` with penalty frequency `omega`.
    pub fn new(body: B, omega: f64) -> Self {
        PenalizedRotation { body, omega }
    }
}

impl<B> Configuration<9> for PenalizedRotation<B> {
    const COORDINATES: [&'static str; 9] = ROTATION_COORDINATES;
}

/// The relaxed body's mass matrix is its constant inertia (`MASS_DEPENDS_ON` all false).
#[diagnostic::do_not_recommend]
impl<B: RigidBody> ConstantMass<9> for PenalizedRotation<B> {}

impl<B: RigidBody> Inertia<9> for PenalizedRotation<B> {
    const CONSTANT_MASS: bool = true;
    const MASS_DEPENDS_ON: [bool; 9] = [false; 9];

    fn mass_matrix(&self, _q: &SVector<f64, 9>, m: &mut SMatrix<f64, 9, 9>) {
        let j = self.body.inertia();
        let j_d = Matrix3::from_diagonal_element(0.5 * j.trace()) - j;
        m.fill(0.0);
        for block in 0..3 {
            m.fixed_view_mut::<3, 3>(3 * block, 3 * block)
                .copy_from(&j_d);
        }
    }

    fn non_finite_parameter(&self) -> Option<(&'static str, f64)> {
        self.body
            .non_finite_parameter()
            .or_else(|| (!self.omega.is_finite()).then_some(("penalty frequency ω", self.omega)))
    }
}

impl<B: RigidBody> Potential<9> for PenalizedRotation<B> {
    fn potential(&self, q: &SVector<f64, 9>) -> f64 {
        let r = rotation(q);
        let c = r.transpose() * r - Matrix3::identity();
        self.body.potential(&r) + 0.5 * self.omega * self.omega * c.norm_squared()
    }

    fn potential_gradient(&self, q: &SVector<f64, 9>, grad: &mut SVector<f64, 9>) {
        let r = rotation(q);
        let c = r.transpose() * r - Matrix3::identity();
        let g = self.body.potential_gradient(&r) + r * c * (2.0 * self.omega * self.omega);
        *grad = row_major(&g);
    }
}

impl<B: RigidBodyHessians> PotentialHessian<9> for PenalizedRotation<B> {
    fn potential_hessian(&self, q: &SVector<f64, 9>, hess: &mut SMatrix<f64, 9, 9>) {
        let r = rotation(q);
        let (rtr, rrt) = (r.transpose() * r, r * r.transpose());
        let w2 = 2.0 * self.omega * self.omega;
        for k in 0..9 {
            let mut e = Matrix3::zeros();
            e[(k / 3, k % 3)] = 1.0;
            let column = self.body.potential_hessian_product(&r, &e)
                + (e * rtr + r * e.transpose() * r + rrt * e - e) * w2;
            hess.set_column(k, &row_major(&column));
        }
    }
}

impl<B: RigidBodyHessians> PotentialThirdDerivative<9> for PenalizedRotation<B> {
    fn potential_third_contraction(
        &self,
        q: &SVector<f64, 9>,
        a: &SVector<f64, 9>,
        out: &mut SVector<f64, 9>,
    ) {
        let (r, a) = (rotation(q), rotation(a));
        let w4 = 4.0 * self.omega * self.omega;
        let third = self.body.potential_third_derivative(&r, &a)
            + (a * a.transpose() * r + a * r.transpose() * a + r * a.transpose() * a) * w4;
        *out = row_major(&third);
    }
}

/// Returns `j` of an isotropic inertia `J = j I` (`j > 0`), else `Unsupported` for `integrator`.
fn isotropic_inertia(inertia: &Matrix3<f64>, integrator: &'static str) -> Result<f64, StepError> {
    let j = inertia[(0, 0)];
    if j.is_finite() && j > 0.0 && *inertia == Matrix3::from_diagonal_element(j) {
        Ok(j)
    } else {
        Err(StepError::Unsupported {
            integrator,
            requirement: "an isotropic inertia J = j I with j > 0 (Tao–Owhadi's β weights the \
                          force with mass 1, Z&S's with M = (j/2) I); for a general J step \
                          PenalizedRotation with ZhangSkeel::<9> and its own β",
        })
    }
}

/// Returns Tao–Owhadi's `β` of eq. 36 as Z&S's `β' = jβ/2` for `M = (j/2) I`, checked.
fn zhang_skeel_beta(beta: f64, j: f64) -> Result<f64, StepError> {
    if beta.is_finite() && beta >= 0.0 {
        Ok(0.5 * j * beta)
    } else {
        Err(StepError::BadParameter {
            name: "beta",
            value: beta,
            requirement: "must be finite and nonnegative",
        })
    }
}

/// Tao–Owhadi's variational linearized `SO(3)` integrator, first order (2014, §4.5, eqs.
/// 36–37, with the force `f_k` corrected as in `shared/EXPERIMENTS-M2.md` §F.3):
///
/// ```text
/// a_k     = −Bμ e₃e₃ᵀ − 2ω² (R_k R_kᵀ R_k − R_k + βh² (a_k R_kᵀR_k + R_k a_kᵀ R_k + R_k R_kᵀ a_k − a_k))
/// f_k     = a_k − 2ω² β² h⁴ (R_k a_kᵀ a_k + a_k R_kᵀ a_k + a_k a_kᵀ R_k)
/// p_{k+1} = p_k + h f_k,    R_{k+1} = R_k + 2h p_{k+1},    p = ½ Ṙ
/// ```
///
/// for the magnetized body (`J = I`). In general, `a_k = −(I + βh² ∇²U(R_k))⁻¹ ∇U(R_k)` and
/// `f_k = a_k − ½β²h⁴ ∇³U(R_k)[a_k, a_k]` for the penalized potential `U` of
/// [`PenalizedRotation`] (eq. 37 is the stationarity of the truncated discrete Lagrangian in
/// `a_k`; the paper's printed `f_k` is the transpose of these terms with the wrong sign, and
/// makes the scheme blow up). For `J = j I`, `p = (j/2) Ṙ`, and in terms of `Ṙ` this is
/// Zhang–Skeel's force `f' = (2/j) f_k` with the mass `M = (j/2) I` and `β' = jβ/2`, so the
/// step is
///
/// ```text
/// Ṙ_{k+1} = Ṙ_k + h f'_k,    R_{k+1} = R_k + h Ṙ_{k+1}
/// ```
///
/// with `f'` computed by the one implementation of Z&S's force (`FullAcceleration`; one
/// factorization of `M + β'h² Hess U`, Cholesky or, if indefinite, LU, through
/// [`LinearSolver`](crate::linalg::LinearSolver), plus one solve with `M`). Its second-order
/// trapezoidal variant is Z&S itself: [`linearized_trapezoidal`].
///
/// First order and variational (symplectic Euler on the penalized system). `R` stays near
/// `SO(3)` only to `O(Bμ/ω²)`: not to round-off as [`LieGroupEuler`](super::LieGroupEuler).
/// It is linearly stable only conditionally: the effective Newmark parameter `β' = β/2 = 0.2`
/// (for `J = I`) is below `¼`, and the stiffest penalty mode, of frequency `2√2 ω`, is stable
/// when `h²·8ω²·(1 − 4β') < 4` (`shared/EXPERIMENTS-M2.md` §F.5): at `h = 0.1` and `β = 0.4`,
/// `ω = 10` is stable and `ω = 20` diverges. The limit `ω < 15.8` there is necessary, not
/// sufficient: along the paper's tumbling motion (`Bμ = 1`, `Ω(0) = (1, 0.2, 0.1)`, `T = 100`)
/// this scheme diverges from `ω ≈ 13.75` and the trapezoidal one from `ω ≈ 14` (measured in
/// steps of 0.25), while a body slightly perturbed from rest follows the linear analysis.
///
/// # Example
///
/// ```
/// use mechanism_runtime::integrators::lie_group::{rotation_state, LinearizedSo3, PenalizedRotation};
/// use mechanism_runtime::reference::MagnetizedBody;
/// use mechanism_runtime::Integrator;
/// use nalgebra::Matrix3;
/// let model = PenalizedRotation::new(MagnetizedBody::default(), 10.0);
/// let mut linearized = LinearizedSo3::new(0.1, 0.4)?;
/// let mut state = rotation_state(0.0, &Matrix3::identity(), &MagnetizedBody::initial_body_rate());
/// for _ in 0..100 {
///     linearized.step(&model, &mut state)?;
/// }
/// assert!((state.t - 10.0).abs() < 1e-12);
/// # Ok::<(), mechanism_runtime::StepError>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct LinearizedSo3 {
    h: f64,
    beta: f64,
    rule: FullAcceleration,
    system: CarriedDense<9>,
    force: [f64; 9],
    scratch: [f64; 9],
}

/// The name of the first-order scheme in errors.
const NAME: &str = "variational linearized SO(3) integrator";

impl LinearizedSo3 {
    /// Creates the first-order stepper with step size `h` and Tao–Owhadi's `β` (the paper:
    /// `h = 0.1`, `β = 0.4`); fails unless `h` is positive and finite and `β ≥ 0` finite.
    pub fn new(h: f64, beta: f64) -> Result<Self, StepError> {
        zhang_skeel_beta(beta, 1.0)?;
        Ok(LinearizedSo3 {
            h: check_step_size(h)?,
            beta,
            rule: FullAcceleration,
            system: CarriedDense::default(),
            force: [0.0; 9],
            scratch: [0.0; 9],
        })
    }

    /// Returns the step size `h`.
    pub fn step_size(&self) -> f64 {
        self.h
    }

    /// Returns Tao–Owhadi's `β`.
    pub fn beta(&self) -> f64 {
        self.beta
    }
}

#[diagnostic::do_not_recommend]
impl<B: RigidBodyHessians> Integrator<PenalizedRotation<B>, 9> for LinearizedSo3 {
    fn step(
        &mut self,
        model: &PenalizedRotation<B>,
        state: &mut State<9>,
    ) -> Result<StepReport, StepError> {
        check_parameters(model)?;
        check_state(state)?;
        let t = state.t;
        let j = isotropic_inertia(&model.body.inertia(), NAME)?;
        let h = self.h;
        let beta_h2 = zhang_skeel_beta(self.beta, j)? * h * h;
        let report = self.rule.acceleration(
            &mut self.system,
            model,
            state.q.as_slice(),
            None,
            beta_h2,
            &mut self.force,
            &mut self.scratch,
            t,
        )?;
        let mut v = state.v;
        let mut q = state.q;
        for ((q, v), f) in q.iter_mut().zip(v.iter_mut()).zip(&self.force) {
            *v += h * f;
            *q += h * *v;
        }
        check_finite_slice(q.as_slice(), "q", t)?;
        check_finite_slice(v.as_slice(), "v", t)?;
        state.q = q;
        state.v = v;
        state.t += h;
        Ok(report)
    }
}

/// Returns Tao–Owhadi's second-order ("trapezoidal") variational linearized `SO(3)` integrator
/// for `body` (isotropic `J = j I`) with step size `h` and their `β`: Zhang–Skeel
/// ([`ZhangSkeel<9>`](crate::ZhangSkeel)) on [`PenalizedRotation`] with `β' = jβ/2`.
///
/// The paper prints the variant with index typos; as corrected in `shared/EXPERIMENTS-M2.md`
/// §F.3 it is
///
/// ```text
/// p_{k+1/2} = p_k + (h/2) f_k,   R_{k+1} = R_k + 2h p_{k+1/2},   p_{k+1} = p_{k+1/2} + (h/2) f_{k+1}
/// ```
///
/// with `f_k` of [`LinearizedSo3`], `p = (j/2) Ṙ`: in `Ṙ` and `f' = (2/j) f` this is
/// `R_{k+1} = R_k + hṘ_k + ½h² f'_k`, `Ṙ_{k+1} = Ṙ_k + ½h (f'_k + f'_{k+1})`, exactly Z&S. Second
/// order, symmetric and variational, with the same stability limit as [`LinearizedSo3`]. The
/// returned stepper is tied to `body`'s `j` through `β'`; its force `f'_{k+1}` is carried to
/// the next step (see [`ZhangSkeel`](crate::ZhangSkeel)).
///
/// ```
/// use mechanism_runtime::integrators::lie_group::{linearized_trapezoidal, rotation_state, PenalizedRotation};
/// use mechanism_runtime::reference::MagnetizedBody;
/// use mechanism_runtime::Integrator;
/// use nalgebra::Matrix3;
/// let model = PenalizedRotation::new(MagnetizedBody::default(), 10.0);
/// let mut trapezoidal = linearized_trapezoidal(&model.body, 0.1, 0.4)?;
/// assert_eq!(trapezoidal.beta(), 0.2);
/// let mut state = rotation_state(0.0, &Matrix3::identity(), &MagnetizedBody::initial_body_rate());
/// trapezoidal.step(&model, &mut state)?;
/// # Ok::<(), mechanism_runtime::StepError>(())
/// ```
pub fn linearized_trapezoidal<B: RigidBody>(
    body: &B,
    h: f64,
    beta: f64,
) -> Result<ZhangSkeel<9>, StepError> {
    let j = isotropic_inertia(
        &body.inertia(),
        "trapezoidal variational linearized SO(3) integrator",
    )?;
    ZhangSkeel::<9>::new(h)?.with_beta(zhang_skeel_beta(beta, j)?)
}
