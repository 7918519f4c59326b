use nalgebra::{SMatrix, SVector};

/// The kinetic energy `T = ½ vᵀ M(q) v`, given by its mass matrix.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not compiled for an integrator that steps with `Inertia`",
    label = "the model lacks `Inertia`",
    note = "add the integrator to `integrators: [..]` in the `mechanism!` of the model (the names and the runtime types they cover: `mechanism::runtime::capabilities::Family`)"
)]
pub trait Inertia<const N: usize> {
    /// Whether `M` does not depend on `q`: integrators may then factor it once.
    const CONSTANT_MASS: bool;

    /// Which coordinates the mass matrix depends on: `false` at `i` promises that `M(q)` (and
    /// so `T(q, v)` at fixed `v`) does not depend on `q_i`, e.g. a cyclic coordinate.
    ///
    /// Gonzalez's discrete gradient of `T` in `q` is then formed in the coordinates `M` depends
    /// on only, so its component along a cyclic coordinate is exactly zero and the conjugate
    /// momentum is conserved (see [`discrete_gradient`](crate::discrete_gradient), "Masks").
    /// All `true` by default, which is always correct; `mechanism!` emits the symbolic
    /// dependencies.
    const MASS_DEPENDS_ON: [bool; N] = [true; N];

    /// Writes the symmetric mass matrix `M(q)` into `m`.
    fn mass_matrix(&self, q: &SVector<f64, N>, m: &mut SMatrix<f64, N, N>);

    /// Returns the name and value of the first model parameter that is not finite, if any.
    ///
    /// Every integrator asks before a step, so that a NaN or infinite parameter is reported as
    /// that parameter ([`StepError::BadParameter`](crate::StepError::BadParameter)) rather than
    /// as the non-finite output or the failed Newton iteration it causes. `mechanism!` checks
    /// every parameter of the model; the default (hand-written models) reports none.
    fn non_finite_parameter(&self) -> Option<(&'static str, f64)> {
        None
    }

    /// Overwrites `b` with `M(q)⁻¹ b` with the code `mechanism!` specializes to a constant
    /// diagonal mass matrix (point masses): `b_i · (1/M_ii)`, the generic root-free Cholesky's
    /// operations on the diagonal, so the result is the generic one bit for bit, with no factor
    /// to cache and compare. `b` is written only when the result is
    /// [`GeneratedSolve::Solved`](super::GeneratedSolve::Solved); a pivot that is not positive
    /// and finite is [`Declined`](super::GeneratedSolve::Declined), and the integrator's
    /// generic Cholesky then reports it. The default has no such code and returns
    /// [`NotGenerated`](super::GeneratedSolve::NotGenerated).
    #[inline]
    fn mass_solve(&self, q: &SVector<f64, N>, b: &mut SVector<f64, N>) -> super::GeneratedSolve {
        let _ = (q, b);
        super::GeneratedSolve::NotGenerated
    }

    /// Returns the kinetic energy `½ vᵀ M(q) v`.
    fn kinetic_energy(&self, q: &SVector<f64, N>, v: &SVector<f64, N>) -> f64 {
        let mut m = SMatrix::<f64, N, N>::zeros();
        self.mass_matrix(q, &mut m);
        0.5 * v.dot(&(m * v))
    }
}

/// A mass matrix that does not depend on the configuration: what every scheme that freezes `M`
/// over a step needs (SPOOK, Zhang–Skeel, Newmark, SHAKE, RATTLE, the explicit ones, Cuell's).
///
/// Those schemes have no velocity terms `∂T/∂q − Ṁv`, so with a configuration-dependent `M`
/// they would integrate other equations; their `Integrator` impls are bounded on this trait, so
/// that stepping such a model with them does not type-check (its message names the integrators
/// that can). `mechanism!` implements it exactly when the model's mass matrix is constant
/// ([`Inertia::CONSTANT_MASS`] true); a hand-written model implements it when its `M` is
/// constant and must then say `CONSTANT_MASS = true` too (the schemes still check the constant
/// at run time and refuse a model whose two declarations disagree with
/// [`StepError::Unsupported`](crate::StepError::Unsupported)). Which families need it is
/// [`Capabilities::varying_mass`](crate::capabilities::Capabilities::varying_mass); a unit test
/// checks the note below against that table.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has a configuration-dependent mass matrix, which this integrator cannot step",
    label = "the mass matrix of `{Self}` depends on the coordinates",
    note = "this integrator freezes the mass matrix over a step (it has no velocity terms ∂T/∂q − Ṁv); step the model with `livens`, `rk` or `dlda_midpoint` (`Livens`, `StabilizedRk` or `AdaptiveRk`, `MidpointLagrangeDAlembert`) instead (`integrators: [..]` of `mechanism!`)"
)]
pub trait ConstantMass<const N: usize>: Inertia<N> {}

/// Derivatives of the kinetic energy with respect to the configuration, for schemes that handle
/// a configuration-dependent mass matrix (the Livens/Gonzalez scheme) and for their Newton
/// Jacobians.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not compiled for an integrator that steps with `InertiaGradient`",
    label = "the model lacks `InertiaGradient`",
    note = "add the integrator to `integrators: [..]` in the `mechanism!` of the model (the names and the runtime types they cover: `mechanism::runtime::capabilities::Family`)"
)]
pub trait InertiaGradient<const N: usize>: Inertia<N> {
    /// Writes `∂T/∂q (q, v) = ½ vᵀ (∂M/∂q) v` into `out`.
    fn kinetic_gradient(&self, q: &SVector<f64, N>, v: &SVector<f64, N>, out: &mut SVector<f64, N>);

    /// Writes `∂²T/∂q²` into `qq` and the mixed `∂²T/∂q∂v` into `qv` (`qv[(i, j)] = ∂²T/∂q_i∂v_j`).
    fn kinetic_hessians(
        &self,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        qq: &mut SMatrix<f64, N, N>,
        qv: &mut SMatrix<f64, N, N>,
    );
}

/// The derivatives of the velocity terms `c(q, v) = ∂T/∂q − Ṁ v` of a configuration-dependent
/// mass matrix (`Ṁ v = (∂²T/∂q∂v)ᵀ v`, [`InertiaGradient::kinetic_hessians`]), for the exact step
/// Jacobians of the index-1 methods ([`StabilizedRk`](crate::StabilizedRk),
/// [`AdaptiveRk`](crate::AdaptiveRk)), whose variational equations differentiate
/// `M(q) a = −∇V + f_a + c(q, v) − Gᵀλ`. They hold third derivatives of `T`; a constant `M` has
/// none and writes zeros.
///
/// `mechanism!` implements it for a model compiled for `rk` with
/// `derivatives: [step_jacobians]`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` lacks the derivatives of its velocity terms `∂T/∂q − Ṁv`",
    label = "the model lacks `VelocityTermJacobians`",
    note = "for a model written with `mechanism!`, add `rk` to `integrators: [..]` and `derivatives: [step_jacobians]`"
)]
pub trait VelocityTermJacobians<const N: usize>: InertiaGradient<N> {
    /// Writes `∂c/∂q` into `cq` and `∂c/∂v` into `cv` (`cq[(i, j)] = ∂c_i/∂q_j`).
    fn velocity_term_jacobians(
        &self,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        cq: &mut SMatrix<f64, N, N>,
        cv: &mut SMatrix<f64, N, N>,
    );
}

/// The derivatives in the model's `P` run-time parameters of the velocity terms
/// `c(q, v) = ∂T/∂q − Ṁ v` ([`VelocityTermJacobians`]), for the parameter Jacobians of the
/// index-1 methods; zero for a constant `M`. `mechanism!` implements it beside
/// [`VelocityTermJacobians`].
#[diagnostic::on_unimplemented(
    message = "`{Self}` lacks the parameter derivatives of its velocity terms `∂T/∂q − Ṁv`",
    label = "the model lacks `VelocityTermParameterJacobian`",
    note = "for a model written with `mechanism!`, add `rk` to `integrators: [..]` and `derivatives: [step_jacobians]`"
)]
pub trait VelocityTermParameterJacobian<const N: usize, const P: usize> {
    /// Writes `∂c/∂p` (`N × P`) into `out`.
    fn velocity_term_parameter_jacobian(
        &self,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        out: &mut SMatrix<f64, N, P>,
    );
}
