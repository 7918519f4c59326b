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
