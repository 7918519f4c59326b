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

/// The Hessian of every constraint row, for Newton Jacobians of constrained implicit schemes.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not compiled for an integrator that steps with `HolonomicHessians`",
    label = "the model lacks `HolonomicHessians`",
    note = "add the integrator to `integrators: [..]` in the `mechanism!` of the model (the names and the runtime types they cover: `mechanism::runtime::capabilities::Family`)"
)]
pub trait HolonomicHessians<const N: usize, const M: usize>: Holonomic<N, M> {
    /// Writes `Hess g_k(q, t)` into `out[k]` for every row `k`.
    fn constraint_hessians(&self, q: &SVector<f64, N>, t: f64, out: &mut [SMatrix<f64, N, N>; M]);
}
