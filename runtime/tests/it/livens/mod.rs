//! The Livens/Gonzalez energy-momentum scheme (Kinon–Betsch–Livens eq. 30) on the paper's two
//! examples (§6.1 singular mass-spring system, §6.2 spherical spring pendulum) and on the
//! constrained double pendulum.
//!
//! One module per example: the [`spherical`] spring pendulum (§6.2), the
//! [`singular_mass_spring`] system (§6.1) and the constrained [`double_pendulum`]; then the
//! [`errors`]. The unconstrained view of a model (`Free`) they share is here.

use mechanism_runtime::{
    ConstantMass, Holonomic, HolonomicHessians, Inertia, InertiaGradient, Potential,
    PotentialHessian, SMatrix, SVector,
};

mod double_pendulum;
mod errors;
mod singular_mass_spring;
mod spherical;

/// A model without constraints, seen as one with `M = 0` constraint rows (what `Livens<N, 0>`
/// needs); every other capability is delegated, the dependency masks included unless `MASKED`
/// is `false` — then the masks are the all-true defaults, i.e. Gonzalez's eq. 26 as printed.
struct Free<T, const MASKED: bool = true>(T);

/// Returns `mask` if `masked`, else all `true`.
const fn mask_or_all<const N: usize>(mask: [bool; N], masked: bool) -> [bool; N] {
    if masked {
        mask
    } else {
        [true; N]
    }
}

impl<const N: usize, T: ConstantMass<N>, const MASKED: bool> ConstantMass<N> for Free<T, MASKED> {}

impl<const N: usize, T: Inertia<N>, const MASKED: bool> Inertia<N> for Free<T, MASKED> {
    const CONSTANT_MASS: bool = T::CONSTANT_MASS;
    const MASS_DEPENDS_ON: [bool; N] = mask_or_all(T::MASS_DEPENDS_ON, MASKED);

    fn mass_matrix(&self, q: &SVector<f64, N>, m: &mut SMatrix<f64, N, N>) {
        self.0.mass_matrix(q, m);
    }

    fn kinetic_energy(&self, q: &SVector<f64, N>, v: &SVector<f64, N>) -> f64 {
        self.0.kinetic_energy(q, v)
    }
}

impl<const N: usize, T: InertiaGradient<N>, const MASKED: bool> InertiaGradient<N>
    for Free<T, MASKED>
{
    fn kinetic_gradient(
        &self,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        out: &mut SVector<f64, N>,
    ) {
        self.0.kinetic_gradient(q, v, out);
    }

    fn kinetic_hessians(
        &self,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        qq: &mut SMatrix<f64, N, N>,
        qv: &mut SMatrix<f64, N, N>,
    ) {
        self.0.kinetic_hessians(q, v, qq, qv);
    }
}

impl<const N: usize, T: Potential<N>, const MASKED: bool> Potential<N> for Free<T, MASKED> {
    const POTENTIAL_DEPENDS_ON: [bool; N] = mask_or_all(T::POTENTIAL_DEPENDS_ON, MASKED);

    fn potential(&self, q: &SVector<f64, N>) -> f64 {
        self.0.potential(q)
    }

    fn potential_gradient(&self, q: &SVector<f64, N>, grad: &mut SVector<f64, N>) {
        self.0.potential_gradient(q, grad);
    }
}

impl<const N: usize, T: PotentialHessian<N>, const MASKED: bool> PotentialHessian<N>
    for Free<T, MASKED>
{
    fn potential_hessian(&self, q: &SVector<f64, N>, hess: &mut SMatrix<f64, N, N>) {
        self.0.potential_hessian(q, hess);
    }
}

impl<const N: usize, T, const MASKED: bool> Holonomic<N, 0> for Free<T, MASKED> {
    const CONSTRAINTS: [&'static str; 0] = [];

    fn constraints(&self, _q: &SVector<f64, N>, _t: f64, _g: &mut SVector<f64, 0>) {}

    fn constraint_jacobian(&self, _q: &SVector<f64, N>, _t: f64, _jac: &mut SMatrix<f64, 0, N>) {}
}

impl<const N: usize, T, const MASKED: bool> HolonomicHessians<N, 0> for Free<T, MASKED> {
    fn constraint_hessians(
        &self,
        _q: &SVector<f64, N>,
        _t: f64,
        _out: &mut [SMatrix<f64, N, N>; 0],
    ) {
    }
}
