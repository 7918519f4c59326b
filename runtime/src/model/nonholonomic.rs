use nalgebra::{SMatrix, SVector};

/// The default compliance `γ` of a nonholonomic row in SPOOK (Lacoursière 2007, eq. 27).
pub const DEFAULT_GAMMA: f64 = 1e-8;

/// `K` nonholonomic constraints linear in the velocities, `A(q) v = w(t)` (Pfaffian form with a
/// driving term).
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not compiled for an integrator that steps with `Nonholonomic`",
    label = "the model lacks `Nonholonomic`",
    note = "add the integrator to `integrators: [..]` in the `mechanism!` of the model (the names and the runtime types they cover: `mechanism::runtime::capabilities::Family`)"
)]
pub trait Nonholonomic<const N: usize, const K: usize> {
    /// The row names, in row order.
    const NONHOLONOMIC: [&'static str; K];

    /// Writes `A(q)` into `a`.
    fn nonholonomic_matrix(&self, q: &SVector<f64, N>, a: &mut SMatrix<f64, K, N>);

    /// Writes the driving term `w(t)` into `w`.
    fn nonholonomic_drive(&self, t: f64, w: &mut SVector<f64, K>);

    /// Returns row `row`'s SPOOK compliance `γ`; integrators may override it.
    fn nonholonomic_compliance(&self, _row: usize) -> f64 {
        DEFAULT_GAMMA
    }
}

/// The derivative of the constraint velocity `A(q) v` with respect to `q`, with `v` held fixed:
/// the term of the Newton Jacobian of [`CortesMartinez`](crate::CortesMartinez) that `A(q)` alone cannot give.
///
/// For a row `a_i(q)·v` this is the row `vᵀ ∂a_i/∂q`. It is the Jacobian of `K` expressions
/// that are linear in `v`, so `mechanism!` can emit it at the cost of one symbolic derivative of
/// the `nonholonomic:` rows.
///
/// ```
/// use mechanism_runtime::{Nonholonomic, NonholonomicDerivative, SMatrix, SVector};
/// /// ż = y ẋ, written as (−y, 0, 1)·v = 0.
/// struct Particle;
/// impl Nonholonomic<3, 1> for Particle {
///     const NONHOLONOMIC: [&'static str; 1] = ["z_dot"];
///     fn nonholonomic_matrix(&self, q: &SVector<f64, 3>, a: &mut SMatrix<f64, 1, 3>) {
///         *a = SMatrix::<f64, 1, 3>::new(-q[1], 0.0, 1.0);
///     }
///     fn nonholonomic_drive(&self, _t: f64, w: &mut SVector<f64, 1>) {
///         w.fill(0.0);
///     }
/// }
/// impl NonholonomicDerivative<3, 1> for Particle {
///     fn nonholonomic_velocity_jacobian(
///         &self,
///         _q: &SVector<f64, 3>,
///         v: &SVector<f64, 3>,
///         out: &mut SMatrix<f64, 1, 3>,
///     ) {
///         // ∂(−y ẋ + ż)/∂(x, y, z)
///         *out = SMatrix::<f64, 1, 3>::new(0.0, -v[0], 0.0);
///     }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not compiled for an integrator that steps with `NonholonomicDerivative`",
    label = "the model lacks `NonholonomicDerivative`",
    note = "add the integrator to `integrators: [..]` in the `mechanism!` of the model (the names and the runtime types they cover: `mechanism::runtime::capabilities::Family`)"
)]
pub trait NonholonomicDerivative<const N: usize, const K: usize>: Nonholonomic<N, K> {
    /// Writes `∂(A(q) v)/∂q` (`K×N`, entry `(i, j)` = `Σ_l ∂A_il/∂q_j v_l`) into `out`.
    fn nonholonomic_velocity_jacobian(
        &self,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        out: &mut SMatrix<f64, K, N>,
    );

    /// Writes `∂(A(q)ᵀ α)/∂q` (`N×N`, entry `(l, j)` = `Σ_i α_i ∂A_il/∂q_j`), the derivative of
    /// the reaction of multipliers `α` held fixed, into `out`. The default takes column `l` of
    /// `Aᵀ` at a time, `∂(A e_l)/∂q` from
    /// [`nonholonomic_velocity_jacobian`](Self::nonholonomic_velocity_jacobian) at the unit
    /// velocity `e_l`: exact, since `A v` is linear in `v`, for `N` evaluations.
    fn nonholonomic_reaction_jacobian(
        &self,
        q: &SVector<f64, N>,
        alpha: &SVector<f64, K>,
        out: &mut SMatrix<f64, N, N>,
    ) {
        let mut unit = SVector::<f64, N>::zeros();
        let mut column = SMatrix::<f64, K, N>::zeros();
        for l in 0..N {
            unit[l] = 1.0;
            self.nonholonomic_velocity_jacobian(q, &unit, &mut column);
            unit[l] = 0.0;
            out.set_row(l, &alpha.tr_mul(&column));
        }
    }
}
