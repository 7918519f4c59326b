use nalgebra::{SMatrix, SVector};

/// Rayleigh dissipation `R(q, v)`, acting through the force `−∂R/∂v`.
pub trait Dissipation<const N: usize> {
    /// Writes the dissipative force `−∂R/∂v (q, v)` into `out`.
    fn dissipation_force(
        &self,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        out: &mut SVector<f64, N>,
    );

    /// Writes the Jacobians of the dissipative force: `∂/∂q` into `dq`, `∂/∂v` into `dv`.
    fn dissipation_jacobians(
        &self,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        dq: &mut SMatrix<f64, N, N>,
        dv: &mut SMatrix<f64, N, N>,
    );
}

/// Generalized non-potential forces `f(q, v, t)`.
pub trait Forces<const N: usize> {
    /// Writes `f(q, v, t)` into `out`.
    fn force(&self, q: &SVector<f64, N>, v: &SVector<f64, N>, t: f64, out: &mut SVector<f64, N>);

    /// Writes the Jacobians of the force: `∂f/∂q` into `dq`, `∂f/∂v` into `dv`.
    fn force_jacobians(
        &self,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        t: f64,
        dq: &mut SMatrix<f64, N, N>,
        dv: &mut SMatrix<f64, N, N>,
    );
}

/// The non-potential generalized force an integrator applies, `f_a(q, v, t) = −∂R/∂v + f`:
/// Rayleigh dissipation plus the model's `forces` section, or zero.
///
/// Every generated model implements it — with the zero defaults when the model has neither
/// `dissipation` nor `forces` — so that an integrator that applies forces (SPOOK's `f⁽⁺⁾` of
/// eq. 29, the index-1 formulation of Ascher et al.) can require it without silently dropping a
/// model's forces. A hand-written model without such forces opts in with an empty impl:
///
/// ```
/// use mechanism_runtime::{AppliedForces, SVector};
/// struct Free;
/// impl AppliedForces<2> for Free {}
/// let zero = SVector::<f64, 2>::zeros();
/// let mut f = SVector::<f64, 2>::repeat(7.0);
/// Free.applied_force(&zero, &zero, 0.0, &mut f);
/// assert_eq!(f, zero);
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not compiled for an integrator that steps with `AppliedForces`",
    label = "the model lacks `AppliedForces`",
    note = "add the integrator to `integrators: [..]` in the `mechanism!` of the model (the names and the runtime types they cover: `mechanism::runtime::capabilities::Family`)"
)]
pub trait AppliedForces<const N: usize> {
    /// Writes `f_a(q, v, t)` into `out` (zero by default).
    fn applied_force(
        &self,
        _q: &SVector<f64, N>,
        _v: &SVector<f64, N>,
        _t: f64,
        out: &mut SVector<f64, N>,
    ) {
        out.fill(0.0);
    }

    /// Writes `∂f_a/∂q` into `dq` and `∂f_a/∂v` into `dv` (zero by default), for implicit
    /// treatment of stiff damping.
    fn applied_force_jacobians(
        &self,
        _q: &SVector<f64, N>,
        _v: &SVector<f64, N>,
        _t: f64,
        dq: &mut SMatrix<f64, N, N>,
        dv: &mut SMatrix<f64, N, N>,
    ) {
        dq.fill(0.0);
        dv.fill(0.0);
    }
}
