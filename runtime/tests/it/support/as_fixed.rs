//! A sparse-tier model seen through the fixed-size traits, so that a test can step the same
//! equations on both tiers and compare.

use mechanism_runtime::model::{
    AppliedForces, ConstantMass, Holonomic, Inertia, Nonholonomic, Potential, SparseConstantMass,
    SparseHolonomic, SparseInertia, SparseNonholonomic, SparsePotential,
};
use mechanism_runtime::model::{
    HolonomicHessians, PotentialHessian, PotentialThirdDerivative, SparseHolonomicHessians,
    SparsePotentialHessian, SparsePotentialThirdDerivative, SparseSplitPotential,
};
use mechanism_runtime::{SMatrix, SVector, SplitPotential};

/// A sparse-tier model seen through the fixed-size traits (dense `M` and `G`), so that the
/// fixed-size SPOOK can step exactly the same equations.
pub struct AsFixed<'a, Model>(pub &'a Model);

impl<Model: SparseConstantMass, const N: usize> ConstantMass<N> for AsFixed<'_, Model> {}

impl<Model: SparseInertia, const N: usize> Inertia<N> for AsFixed<'_, Model> {
    const CONSTANT_MASS: bool = true;
    fn mass_matrix(&self, q: &SVector<f64, N>, m: &mut SMatrix<f64, N, N>) {
        let sizes = self.0.body_sizes();
        let mut blocks = vec![0.0; sizes.iter().map(|s| s * s).sum()];
        self.0.mass_blocks(q.as_slice(), &mut blocks);
        m.fill(0.0);
        let (mut first, mut offset) = (0, 0);
        for &s in sizes {
            for a in 0..s {
                for c in 0..s {
                    m[(first + a, first + c)] = blocks[offset + a * s + c];
                }
            }
            first += s;
            offset += s * s;
        }
    }
}

impl<Model: SparsePotential, const N: usize> Potential<N> for AsFixed<'_, Model> {
    fn potential(&self, q: &SVector<f64, N>) -> f64 {
        self.0.potential(q.as_slice())
    }
    fn potential_gradient(&self, q: &SVector<f64, N>, grad: &mut SVector<f64, N>) {
        self.0.potential_gradient(q.as_slice(), grad.as_mut_slice());
    }
}

impl<Model: SparseHolonomic, const N: usize, const M: usize> Holonomic<N, M>
    for AsFixed<'_, Model>
{
    const CONSTRAINTS: [&'static str; M] = ["row"; M];
    fn constraints(&self, q: &SVector<f64, N>, t: f64, g: &mut SVector<f64, M>) {
        let mut jac = SMatrix::zeros();
        self.constraints_and_jacobian(q, t, g, &mut jac);
    }
    fn constraint_jacobian(&self, q: &SVector<f64, N>, t: f64, jac: &mut SMatrix<f64, M, N>) {
        let mut g = SVector::zeros();
        self.constraints_and_jacobian(q, t, &mut g, jac);
    }
    fn constraints_and_jacobian(
        &self,
        q: &SVector<f64, N>,
        t: f64,
        g: &mut SVector<f64, M>,
        jac: &mut SMatrix<f64, M, N>,
    ) {
        let mut values = vec![0.0; self.0.jacobian_pattern().len()];
        self.0
            .constraints_and_jacobian(q.as_slice(), t, g.as_mut_slice(), &mut values);
        jac.fill(0.0);
        for (&(row, col), value) in self.0.jacobian_pattern().iter().zip(&values) {
            jac[(row, col)] += value;
        }
    }
}

impl<Model: SparseNonholonomic, const N: usize, const K: usize> Nonholonomic<N, K>
    for AsFixed<'_, Model>
{
    const NONHOLONOMIC: [&'static str; K] = ["row"; K];
    fn nonholonomic_matrix(&self, q: &SVector<f64, N>, a: &mut SMatrix<f64, K, N>) {
        let mut values = vec![0.0; self.0.nonholonomic_pattern().len()];
        self.0.nonholonomic_matrix(q.as_slice(), &mut values);
        a.fill(0.0);
        for (&(row, col), value) in self.0.nonholonomic_pattern().iter().zip(&values) {
            a[(row, col)] += value;
        }
    }
    fn nonholonomic_drive(&self, t: f64, w: &mut SVector<f64, K>) {
        self.0.nonholonomic_drive(t, w.as_mut_slice());
    }
    fn nonholonomic_compliance(&self, row: usize) -> f64 {
        self.0.nonholonomic_compliance(row)
    }
}

impl<Model, const N: usize> AppliedForces<N> for AsFixed<'_, Model> {}

/// Returns the largest `|a − b| / max(1, |b|)`.
pub fn relative_distance(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(a, b)| (a - b).abs() / b.abs().max(1.0))
        .fold(0.0, f64::max)
}

/// The sparse tier's mass matrix is constant, so `∂T/∂q = 0` and `∂²T/∂q² = ∂²T/∂q∂v = 0`.
impl<Model: mechanism_runtime::model::SparseInertia, const N: usize>
    mechanism_runtime::model::InertiaGradient<N> for AsFixed<'_, Model>
{
    fn kinetic_gradient(
        &self,
        _: &SVector<f64, N>,
        _: &SVector<f64, N>,
        out: &mut SVector<f64, N>,
    ) {
        out.fill(0.0);
    }
    fn kinetic_hessians(
        &self,
        _: &SVector<f64, N>,
        _: &SVector<f64, N>,
        qq: &mut SMatrix<f64, N, N>,
        qv: &mut SMatrix<f64, N, N>,
    ) {
        qq.fill(0.0);
        qv.fill(0.0);
    }
}

impl<Model, const N: usize, const M: usize> mechanism_runtime::model::HolonomicKinematics<N, M>
    for AsFixed<'_, Model>
where
    Model: mechanism_runtime::model::SparseHolonomicKinematics,
{
    fn constraint_time_derivative(&self, q: &SVector<f64, N>, t: f64, out: &mut SVector<f64, M>) {
        self.0
            .constraint_time_derivative(q.as_slice(), t, out.as_mut_slice());
    }
    fn constraint_acceleration_bias(
        &self,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        t: f64,
        out: &mut SVector<f64, M>,
    ) {
        self.0
            .constraint_acceleration_bias(q.as_slice(), v.as_slice(), t, out.as_mut_slice());
    }
}

/// Writes the dense symmetric matrix of values given on a sparse-tier pattern (each unordered
/// pair once).
fn symmetric_from_pattern<const N: usize>(
    pattern: &[(usize, usize)],
    values: &[f64],
    out: &mut SMatrix<f64, N, N>,
) {
    out.fill(0.0);
    for (&(i, j), value) in pattern.iter().zip(values) {
        out[(i, j)] = *value;
        out[(j, i)] = *value;
    }
}

impl<Model: SparsePotentialHessian, const N: usize> PotentialHessian<N> for AsFixed<'_, Model> {
    fn potential_hessian(&self, q: &SVector<f64, N>, hess: &mut SMatrix<f64, N, N>) {
        let pattern = self.0.hessian_pattern();
        let mut values = vec![0.0; pattern.len()];
        self.0.potential_hessian(q.as_slice(), &mut values);
        symmetric_from_pattern(pattern, &values, hess);
    }
}

impl<Model: SparseHolonomicHessians, const N: usize, const M: usize> HolonomicHessians<N, M>
    for AsFixed<'_, Model>
{
    fn constraint_hessians(&self, q: &SVector<f64, N>, t: f64, out: &mut [SMatrix<f64, N, N>; M]) {
        let pattern = self.0.constraint_hessian_pattern();
        let mut values = vec![0.0; pattern.len()];
        let mut weights = [0.0; M];
        for (k, hessian) in out.iter_mut().enumerate() {
            weights.fill(0.0);
            weights[k] = 1.0;
            self.0
                .weighted_constraint_hessian(q.as_slice(), t, &weights, &mut values);
            symmetric_from_pattern(pattern, &values, hessian);
        }
    }
}

impl<Model: SparsePotentialThirdDerivative, const N: usize> PotentialThirdDerivative<N>
    for AsFixed<'_, Model>
{
    fn potential_third_contraction(
        &self,
        q: &SVector<f64, N>,
        a: &SVector<f64, N>,
        out: &mut SVector<f64, N>,
    ) {
        self.0
            .potential_third_contraction(q.as_slice(), a.as_slice(), out.as_mut_slice());
    }
}

impl<Model: SparseSplitPotential, const N: usize> SplitPotential<N> for AsFixed<'_, Model> {
    fn stiff_hessian(&self, q: &SVector<f64, N>, hess: &mut SMatrix<f64, N, N>) {
        let pattern = self.0.stiff_hessian_pattern();
        let mut values = vec![0.0; pattern.len()];
        self.0.stiff_hessian(q.as_slice(), &mut values);
        symmetric_from_pattern(pattern, &values, hess);
    }
}
