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
