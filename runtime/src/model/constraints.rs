use nalgebra::{SMatrix, SVector};

use super::GeneratedSolve;

/// How strongly a constraint row is enforced by SPOOK: compliance `ε` and relaxation `τ`.
///
/// SPOOK's stability guarantee needs `ε > 0` and `τ > 0` (Lacoursière 2007, Theorem 5.1);
/// `ε = 0` with `τ > 0` is an ideal (infinitely stiff) row that is still stable, and `ε = τ = 0`
/// is refused, because its violations grow without bound (see [`Spook`](crate::Spook),
/// "Parameters").
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Regularization {
    /// Compliance `ε` (inverse stiffness) of the row.
    pub epsilon: f64,
    /// Relaxation time `τ` of the row's stabilization.
    pub tau: Relaxation,
}

/// A relaxation time, either absolute or as a multiple of the step size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Relaxation {
    /// `τ` in units of time.
    Seconds(f64),
    /// `τ = k·h`, re-evaluated for every step size.
    Steps(f64),
}

impl Relaxation {
    /// Returns `τ` for the step size `h`.
    pub fn at_step(self, h: f64) -> f64 {
        match self {
            Relaxation::Seconds(tau) => tau,
            Relaxation::Steps(k) => k * h,
        }
    }
}

impl Regularization {
    /// Returns `(Σᵢᵢ, Υᵢᵢ)` of SPOOK's eq. 27 for this row at step size `h`:
    /// `Υᵢᵢ = 1 / (1 + 4τᵢ/h)` and `Σᵢᵢ = (4/h²) εᵢ Υᵢᵢ` (Lacoursière 2007). The one formula of
    /// both tiers' generic step and of the coefficients the fixed-size tier keeps for
    /// [`Holonomic::spook_step`].
    #[inline]
    pub fn spook_coefficients(&self, h: f64) -> (f64, f64) {
        let upsilon = 1.0 / (1.0 + 4.0 * self.tau.at_step(h) / h);
        (4.0 / (h * h) * self.epsilon * upsilon, upsilon)
    }

    /// Returns whether `self` and `other` are the same bit for bit (so `−0.0 ≠ 0.0` and
    /// `NaN = NaN`): the test for "are coefficients computed from `other` still valid".
    pub(crate) fn same_bits(&self, other: &Regularization) -> bool {
        let tau = match (self.tau, other.tau) {
            (Relaxation::Seconds(a), Relaxation::Seconds(b))
            | (Relaxation::Steps(a), Relaxation::Steps(b)) => a.to_bits() == b.to_bits(),
            _ => false,
        };
        tau && self.epsilon.to_bits() == other.epsilon.to_bits()
    }
}

/// Returns the holonomic right-hand side of row `i` of SPOOK's eq. 29,
/// `tᵢ = Υᵢᵢ ((G v_k)ᵢ − (4/h) gᵢ(q_k))`, from `Υᵢᵢ`, `(G v_k)ᵢ`, `gᵢ(q_k)` and `4/h` (computed
/// once per step size, [`SpookCoefficients::four_over_h`]): the one formula of the generic
/// step and of the step `mechanism!` generates ([`Holonomic::spook_step`]).
#[inline(always)]
pub fn spook_rhs(upsilon: f64, jac_v: f64, g: f64, four_over_h: f64) -> f64 {
    upsilon * (jac_v - four_over_h * g)
}

/// SPOOK's coefficients of eq. 27 for the holonomic rows at one step size: the diagonals of
/// `Σ` and `Υ` ([`Regularization::spook_coefficients`] row by row), the input of
/// [`Holonomic::spook_step`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpookCoefficients<const M: usize> {
    /// The diagonal of `Σ = (4/h²) diag(εᵢ / (1 + 4τᵢ/h))`.
    pub sigma: SVector<f64, M>,
    /// The diagonal of `Υ = diag(1 / (1 + 4τᵢ/h))`.
    pub upsilon: SVector<f64, M>,
    /// `4/h`, the factor of `g` in [`spook_rhs`].
    pub four_over_h: f64,
}

impl<const M: usize> SpookCoefficients<M> {
    /// Returns the coefficients for step size `h` and each row's regularization
    /// ([`Regularization::spook_coefficients`], and `4/h`).
    pub fn new(h: f64, regularizations: &[Regularization; M]) -> Self {
        let coefficients = regularizations.map(|r| r.spook_coefficients(h));
        SpookCoefficients {
            sigma: SVector::from(coefficients.map(|(sigma, _)| sigma)),
            upsilon: SVector::from(coefficients.map(|(_, upsilon)| upsilon)),
            four_over_h: 4.0 / h,
        }
    }
}

impl<const M: usize> Default for SpookCoefficients<M> {
    /// Returns zero coefficients.
    fn default() -> Self {
        SpookCoefficients {
            sigma: SVector::zeros(),
            upsilon: SVector::zeros(),
            four_over_h: 0.0,
        }
    }
}

/// What one SPOOK step from `(q_k, v_k, t_k)` computes: the new state and multipliers, and
/// what the [`DivergenceGuard`](crate::guard::DivergenceGuard) reads. Written by the generic step of
/// [`Spook`](crate::Spook).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpookStep<const N: usize, const M: usize> {
    /// `q_{k+1} = q_k + h v_{k+1}`.
    pub q: SVector<f64, N>,
    /// `v_{k+1}`.
    pub v: SVector<f64, N>,
    /// The multipliers `λ` of eq. 29 (an impulse over the step).
    pub lambda: SVector<f64, M>,
    /// `g(q_k, t_k)`.
    pub g: SVector<f64, M>,
    /// The row norms `|Gᵢ(q_k)|₁`.
    pub row_norms: SVector<f64, M>,
    /// `g(q_{k+1}, t_k + h)`.
    pub g_next: SVector<f64, M>,
}

impl<const N: usize, const M: usize> Default for SpookStep<N, M> {
    /// Returns a step of zeros.
    fn default() -> Self {
        SpookStep {
            q: SVector::zeros(),
            v: SVector::zeros(),
            lambda: SVector::zeros(),
            g: SVector::zeros(),
            row_norms: SVector::zeros(),
            g_next: SVector::zeros(),
        }
    }
}

impl Default for Regularization {
    /// Returns Lacoursière's defaults: `ε = 1e-8`, `τ = 2h` (§6 of the SPOOK paper).
    fn default() -> Self {
        Regularization {
            epsilon: 1e-8,
            tau: Relaxation::Steps(2.0),
        }
    }
}

/// `M` holonomic constraints `g(q, t) = 0` and their Jacobian `G = ∂g/∂q`.
///
/// The time `t` is passed so that rheonomic constraints fit the same trait; scleronomic models
/// ignore it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not compiled for an integrator that steps with `Holonomic`",
    label = "the model lacks `Holonomic`",
    note = "add the integrator to `integrators: [..]` in the `mechanism!` of the model (the names and the runtime types they cover: `mechanism::runtime::capabilities::Family`)"
)]
pub trait Holonomic<const N: usize, const M: usize> {
    /// The constraint names, in row order.
    const CONSTRAINTS: [&'static str; M];

    /// Which coordinates each constraint row depends on: `false` at `[k][i]` promises that
    /// `g_k(q, t)` does not depend on `q_i`.
    ///
    /// Gonzalez's discrete gradient of `g_k` is then formed in the coordinates `g_k` depends on
    /// only, so its component along `q_i` is exactly zero (see
    /// [`discrete_gradient`](crate::discrete_gradient), "Masks"). All `true` by default, which
    /// is always correct; `mechanism!` emits the symbolic dependencies.
    const CONSTRAINT_DEPENDS_ON: [[bool; N]; M] = [[true; N]; M];

    /// Writes `g(q, t)` into `g`.
    fn constraints(&self, q: &SVector<f64, N>, t: f64, g: &mut SVector<f64, M>);

    /// Writes `G(q, t) = ∂g/∂q` into `jac`.
    fn constraint_jacobian(&self, q: &SVector<f64, N>, t: f64, jac: &mut SMatrix<f64, M, N>);

    /// Writes `g` and `G` together; generated models override this to share work.
    fn constraints_and_jacobian(
        &self,
        q: &SVector<f64, N>,
        t: f64,
        g: &mut SVector<f64, M>,
        jac: &mut SMatrix<f64, M, N>,
    ) {
        self.constraints(q, t, g);
        self.constraint_jacobian(q, t, jac);
    }

    /// Returns row `i`'s default SPOOK regularization; integrators may override it.
    fn regularization(&self, _row: usize) -> Regularization {
        Regularization::default()
    }

    /// Solves SPOOK's eq. 29 without nonholonomic rows through the Schur complement
    /// `S = G M⁻¹ Gᵀ + Σ` (Lacoursière 2007, eq. 30): `λ = S⁻¹ (t − G M⁻¹ r)`,
    /// `v = M⁻¹ (r + Gᵀ λ)`, with `mass`, `jac` the values at `q_k` and `sigma` the diagonal
    /// of `Σ`; code `mechanism!` specializes to a constant diagonal `M` and the structural
    /// nonzeros of `G` (an `LDLᵀ` of `S` unrolled over its nonzeros and their fill), or says
    /// why not ([`GeneratedSolve`]). `v` and `lambda` are written only when the result is
    /// [`GeneratedSolve::Solved`]. The default has no such code.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn spook_solve(
        &self,
        mass: &SMatrix<f64, N, N>,
        jac: &SMatrix<f64, M, N>,
        r: &SVector<f64, N>,
        sigma: &SVector<f64, M>,
        rhs: &SVector<f64, M>,
        v: &mut SVector<f64, N>,
        lambda: &mut SVector<f64, M>,
    ) -> GeneratedSolve {
        let _ = (mass, jac, r, sigma, rhs, v, lambda);
        GeneratedSolve::NotGenerated
    }

    /// Computes one whole SPOOK step without nonholonomic rows from `(q_k, v_k, t_k)` with
    /// step size `h` and the coefficients `Σ`, `Υ` of eq. 27 and `4/h` for that `h`
    /// ([`SpookCoefficients::new`]) (Lacoursière 2007, eq. 27–30):
    ///
    /// ```text
    /// r = M v_k − h ∇V(q_k) + h f(q_k, v_k, t_k),     t = Υ (G v_k − (4/h) g(q_k))
    /// S = G M⁻¹ Gᵀ + Σ,   λ = S⁻¹ (t − G M⁻¹ r),   v_{k+1} = M⁻¹ (r + Gᵀ λ)
    /// q_{k+1} = q_k + h v_{k+1}
    /// ```
    ///
    /// with `M`, `G` at `q_k`, then the divergence guard `guard`
    /// ([`DivergenceGuard::accepts`](crate::guard::DivergenceGuard::accepts), from `g(q_k)`, the row
    /// norms `|Gᵢ(q_k)|₁` and `g(q_{k+1}, t_k + h)`), and writes `q_{k+1}` into `q`, `v_{k+1}`
    /// into `v` and `λ` into `lambda`. It is the generic step of [`Spook`](crate::Spook) (its
    /// `evaluate`, [`spook_solve`](Self::spook_solve), `configuration_after` and guard) as one
    /// function, with the same operations in the same order, and without the run-time checks
    /// between them: it returns [`GeneratedSolve::Declined`] on a mass or Schur pivot that is
    /// not clearly positive (`d_j ≤ n·ε·|A_jj|`, the generic Cholesky's test), on any
    /// non-finite output or where the guard rejects the step, and then writes nothing; the
    /// integrator then runs its generic step, which reports the culprit.
    ///
    /// `mechanism!` generates it where it generates `spook_solve` (a constant diagonal `M`,
    /// no nonholonomic rows, SPOOK among the model's integrators), with `∇V`, `f` (dissipation
    /// and the `forces` section), `M`, `g` and `G` at `q_k` from one emission that shares
    /// their subexpressions. The default has no such code.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn spook_step(
        &self,
        q: &mut SVector<f64, N>,
        v: &mut SVector<f64, N>,
        t: f64,
        h: f64,
        coefficients: &SpookCoefficients<M>,
        guard: &crate::guard::DivergenceGuard,
        lambda: &mut SVector<f64, M>,
    ) -> GeneratedSolve {
        let _ = (q, v, t, h, coefficients, guard, lambda);
        GeneratedSolve::NotGenerated
    }
}

/// Time derivatives of holonomic constraints, for index reduction (Ascher et al. 1995, eq. 1.5)
/// and for rheonomic constraints `g(q, t)`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not compiled for an integrator that steps with `HolonomicKinematics`",
    label = "the model lacks `HolonomicKinematics`",
    note = "add the integrator to `integrators: [..]` in the `mechanism!` of the model (the names and the runtime types they cover: `mechanism::runtime::capabilities::Family`)"
)]
pub trait HolonomicKinematics<const N: usize, const M: usize>: Holonomic<N, M> {
    /// Writes `g_t = ∂g/∂t`, so that `ġ = G v + g_t`.
    fn constraint_time_derivative(&self, q: &SVector<f64, N>, t: f64, out: &mut SVector<f64, M>);

    /// Writes `(G v)_q v + 2 G_t v + g_tt`, so that `g̈ = G q̈ + (this)`.
    fn constraint_acceleration_bias(
        &self,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        t: f64,
        out: &mut SVector<f64, M>,
    );
}

/// The derivatives of [`HolonomicKinematics`] in `q`: what the variational equations of the
/// index-1 system (Ascher et al. 1995, eq. 1.5) need besides the second derivatives of
/// [`HolonomicHessians`], for the step Jacobians of the stabilized Runge–Kutta methods.
///
/// The acceleration bias `b(q, v, t) = (G v)_q v + 2 G_t v + g_tt` is quadratic in `v`, with
/// `∂b/∂v = 2((G v)_q + G_t)`, which the Hessians and [`time_derivative_jacobian`] give; its
/// `q`-derivative contains the third derivatives of `g`, which nothing else provides.
/// `mechanism!` generates this trait for `derivatives: [step_jacobians]` on a model compiled for
/// an index-1 integrator (`rk`), with [`KinematicsParameterDerivatives`] beside it.
///
/// [`time_derivative_jacobian`]: Self::time_derivative_jacobian
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no derivatives of its constraints' acceleration bias",
    label = "the model lacks `KinematicsJacobians`",
    note = "add `derivatives: [step_jacobians]` and `rk` in `integrators: [..]` to the `mechanism!` of the model"
)]
pub trait KinematicsJacobians<const N: usize, const M: usize>: HolonomicKinematics<N, M> {
    /// Writes `∂b(q, v, t)/∂q` (`M×N`) into `out`.
    fn acceleration_bias_jacobian(
        &self,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        t: f64,
        out: &mut SMatrix<f64, M, N>,
    );

    /// Writes `G_t = ∂g_t(q, t)/∂q` (`M×N`) into `out`.
    fn time_derivative_jacobian(&self, q: &SVector<f64, N>, t: f64, out: &mut SMatrix<f64, M, N>);
}

/// The derivatives of [`HolonomicKinematics`] in the model's `P` run-time parameters, for the
/// parameter Jacobians of the stabilized Runge–Kutta methods; generated with
/// [`KinematicsJacobians`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no parameter derivatives of its constraints' acceleration bias",
    label = "the model lacks `KinematicsParameterDerivatives`",
    note = "add `derivatives: [step_jacobians]` and `rk` in `integrators: [..]` to the `mechanism!` of the model"
)]
pub trait KinematicsParameterDerivatives<const N: usize, const M: usize, const P: usize>:
    HolonomicKinematics<N, M>
{
    /// Writes `∂b(q, v, t)/∂p` (`M×P`) into `out`.
    fn acceleration_bias_parameter_jacobian(
        &self,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        t: f64,
        out: &mut SMatrix<f64, M, P>,
    );

    /// Writes `∂g_t(q, t)/∂p` (`M×P`) into `out`.
    fn time_derivative_parameter_jacobian(
        &self,
        q: &SVector<f64, N>,
        t: f64,
        out: &mut SMatrix<f64, M, P>,
    );
}

/// The Hessian of every constraint row, for Newton Jacobians of constrained implicit schemes.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not compiled for an integrator that steps with `HolonomicHessians`",
    label = "the model lacks `HolonomicHessians`",
    note = "add the integrator to `integrators: [..]` in the `mechanism!` of the model (the names and the runtime types they cover: `mechanism::runtime::capabilities::Family`)",
    note = "for `mechanism::runtime::linearization` (equilibria and modes), add `derivatives: [hessians]` to the `mechanism!` of the model instead, or `derivatives: [step_jacobians]` for step Jacobians (`DifferentiableStep`)"
)]
pub trait HolonomicHessians<const N: usize, const M: usize>: Holonomic<N, M> {
    /// Writes `Hess g_k(q, t)` into `out[k]` for every row `k`.
    fn constraint_hessians(&self, q: &SVector<f64, N>, t: f64, out: &mut [SMatrix<f64, N, N>; M]);

    /// Writes the Jacobian of a SPOOK step without nonholonomic rows from `(q_k, v_k, t_k)`
    /// with step size `h` and the coefficients of eq. 27 (`coefficients`), whose new velocity
    /// is `v_next` and multipliers `lambda`: `v_q = ∂v_{k+1}/∂q_k` and `v_v = ∂v_{k+1}/∂v_k`
    /// from eq. 29 differentiated (`SpookDense`'s
    /// [`DifferentiableStep`](crate::integrators::DifferentiableStep), whose module derives
    /// it), with `M`, `G`, the Hessians and the force Jacobians specialized to their structural
    /// nonzeros and one factor of the step's matrix for the `2N` directions.
    ///
    /// `mechanism!` generates it where it generates [`Holonomic::spook_step`] (a constant
    /// diagonal `M`) and the model asks for `derivatives: [step_jacobians]`; returns
    /// [`GeneratedSolve::Declined`] on a pivot that is not clearly positive or a non-finite
    /// entry (the generic Jacobian then runs and names the culprit), and
    /// [`GeneratedSolve::Solved`] after writing both. The default has no such code.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn spook_velocity_jacobian(
        &self,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        t: f64,
        h: f64,
        coefficients: &SpookCoefficients<M>,
        v_next: &SVector<f64, N>,
        lambda: &SVector<f64, M>,
        v_q: &mut SMatrix<f64, N, N>,
        v_v: &mut SMatrix<f64, N, N>,
    ) -> GeneratedSolve {
        let _ = (q, v, t, h, coefficients, v_next, lambda, v_q, v_v);
        GeneratedSolve::NotGenerated
    }
}
