//! The linear solves `mechanism!` specializes to a model's structural nonzeros (the
//! acceleration `a = −(M + βh² H)⁻¹ ∇V` of Z&Ss, Z&S and stiff Z&Ss, unrolled over the nonzeros
//! of `M + βh² H` and their fill; SPOOK's Schur complement `G M⁻¹ Gᵀ + Σ` for a constant
//! diagonal `M`) against the runtime's generic dense kernels, which a wrapper that hides the
//! generated code makes the integrators use:
//!
//! - the generated block `LDLᵀ` (`2 × 2` pivots along paths of the elimination tree, in the
//!   coordinates' order on the double pendulum's dense matrix, from both ends on the chain's
//!   banded one) is another backward-stable factorization than the generic Cholesky: along
//!   each scheme's generic trajectory, one step through the generated fast path agrees with
//!   the generic step from the same state to rounding, and each generated acceleration agrees
//!   with nalgebra's LU of the assembled matrix within `n κ ε |a|`;
//! - an indefinite `M + βh² H` (compressed rods) is declined by the generated code and solved
//!   by the generic pivoted LU;
//! - the mass solve `M⁻¹ b` of a constant diagonal `M` (Z&S's correction) is the generic
//!   Cholesky's scaling; a mass that is not positive is declined and reported by the generic
//!   Cholesky;
//! - the banded 10-link chain is solved by the generated code (it does not decline);
//! - SPOOK's generated step agrees with the generic one from the same state to a few ulps
//!   (the sums of `G M⁻¹ Gᵀ` may run in another order than nalgebra's product), along a
//!   trajectory of the double pendulum and of the chain;
//! - SPOOK's generated whole step (`Holonomic::spook_step`: `∇V`, `f`, `g`, `G`, the Schur
//!   solve, `q_{k+1}` and the guard's rows in one function) is the generic step around the
//!   generated Schur solve bit for bit (where multiply-adds are not fused), multipliers included,
//!   on the double pendulum, the chain and a pendulum with dissipation, a force of time and
//!   per-row regularization; its `Σ`, `Υ` kept between steps follow the model stepped; and
//!   every failure (non-finite parameter or state, a diverging step, a mass that is not
//!   positive, an ideal row at a singular point) is the generic step's, with the state
//!   unchanged.

mod spook;
mod zss;

use mechanism::runtime::{
    AppliedForces, ConstantMass, GeneratedSolve, Holonomic, Inertia, Nonholonomic, Potential,
    PotentialHessian, PotentialThirdDerivative, Regularization, SMatrix, SVector, SplitPotential,
    State,
};

/// A model seen only through the runtime's traits, without its generated solves (the
/// provided methods keep their default, `NotGenerated`): the integrators then run their generic
/// dense kernels.
///
/// With `KEEP_SPOOK_SOLVE` the view keeps the generated Schur solve of SPOOK
/// (`Holonomic::spook_solve`) and hides only the generated whole step (`spook_step`): SPOOK
/// then runs its generic step around the generated solve, which the generated step must
/// reproduce.
pub(super) struct Generic<'a, Model, const KEEP_SPOOK_SOLVE: bool = false>(&'a Model);

impl<const N: usize, const KEEP_SPOOK_SOLVE: bool, Model: ConstantMass<N>> ConstantMass<N>
    for Generic<'_, Model, KEEP_SPOOK_SOLVE>
{
}

impl<const N: usize, const KEEP_SPOOK_SOLVE: bool, Model: Inertia<N>> Inertia<N>
    for Generic<'_, Model, KEEP_SPOOK_SOLVE>
{
    const CONSTANT_MASS: bool = Model::CONSTANT_MASS;
    fn mass_matrix(&self, q: &SVector<f64, N>, m: &mut SMatrix<f64, N, N>) {
        self.0.mass_matrix(q, m);
    }
    fn non_finite_parameter(&self) -> Option<(&'static str, f64)> {
        self.0.non_finite_parameter()
    }
}

impl<const N: usize, const KEEP_SPOOK_SOLVE: bool, Model: Potential<N>> Potential<N>
    for Generic<'_, Model, KEEP_SPOOK_SOLVE>
{
    fn potential(&self, q: &SVector<f64, N>) -> f64 {
        self.0.potential(q)
    }
    fn potential_gradient(&self, q: &SVector<f64, N>, grad: &mut SVector<f64, N>) {
        self.0.potential_gradient(q, grad);
    }
}

impl<const N: usize, const KEEP_SPOOK_SOLVE: bool, Model: PotentialHessian<N>> PotentialHessian<N>
    for Generic<'_, Model, KEEP_SPOOK_SOLVE>
{
    fn potential_hessian(&self, q: &SVector<f64, N>, hess: &mut SMatrix<f64, N, N>) {
        self.0.potential_hessian(q, hess);
    }
    fn potential_gradient_hessian(
        &self,
        q: &SVector<f64, N>,
        grad: &mut SVector<f64, N>,
        hess: &mut SMatrix<f64, N, N>,
    ) {
        self.0.potential_gradient_hessian(q, grad, hess);
    }
}

impl<const N: usize, const KEEP_SPOOK_SOLVE: bool, Model: PotentialThirdDerivative<N>>
    PotentialThirdDerivative<N> for Generic<'_, Model, KEEP_SPOOK_SOLVE>
{
    fn potential_third_contraction(
        &self,
        q: &SVector<f64, N>,
        a: &SVector<f64, N>,
        out: &mut SVector<f64, N>,
    ) {
        self.0.potential_third_contraction(q, a, out);
    }
}

impl<const N: usize, const KEEP_SPOOK_SOLVE: bool, Model: SplitPotential<N>> SplitPotential<N>
    for Generic<'_, Model, KEEP_SPOOK_SOLVE>
{
    fn stiff_hessian(&self, q: &SVector<f64, N>, hess: &mut SMatrix<f64, N, N>) {
        self.0.stiff_hessian(q, hess);
    }
}

impl<const N: usize, const KEEP_SPOOK_SOLVE: bool, const M: usize, Model: Holonomic<N, M>>
    Holonomic<N, M> for Generic<'_, Model, KEEP_SPOOK_SOLVE>
{
    const CONSTRAINTS: [&'static str; M] = Model::CONSTRAINTS;
    fn constraints(&self, q: &SVector<f64, N>, t: f64, g: &mut SVector<f64, M>) {
        self.0.constraints(q, t, g);
    }
    fn constraint_jacobian(&self, q: &SVector<f64, N>, t: f64, jac: &mut SMatrix<f64, M, N>) {
        self.0.constraint_jacobian(q, t, jac);
    }
    fn constraints_and_jacobian(
        &self,
        q: &SVector<f64, N>,
        t: f64,
        g: &mut SVector<f64, M>,
        jac: &mut SMatrix<f64, M, N>,
    ) {
        self.0.constraints_and_jacobian(q, t, g, jac);
    }
    fn regularization(&self, row: usize) -> Regularization {
        self.0.regularization(row)
    }
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
        if KEEP_SPOOK_SOLVE {
            self.0.spook_solve(mass, jac, r, sigma, rhs, v, lambda)
        } else {
            GeneratedSolve::NotGenerated
        }
    }
}

impl<const N: usize, const KEEP_SPOOK_SOLVE: bool, Model: Nonholonomic<N, 0>> Nonholonomic<N, 0>
    for Generic<'_, Model, KEEP_SPOOK_SOLVE>
{
    const NONHOLONOMIC: [&'static str; 0] = [];
    fn nonholonomic_matrix(&self, q: &SVector<f64, N>, a: &mut SMatrix<f64, 0, N>) {
        self.0.nonholonomic_matrix(q, a);
    }
    fn nonholonomic_drive(&self, t: f64, w: &mut SVector<f64, 0>) {
        self.0.nonholonomic_drive(t, w);
    }
}

impl<const N: usize, const KEEP_SPOOK_SOLVE: bool, Model: AppliedForces<N>> AppliedForces<N>
    for Generic<'_, Model, KEEP_SPOOK_SOLVE>
{
    fn applied_force(
        &self,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        t: f64,
        out: &mut SVector<f64, N>,
    ) {
        self.0.applied_force(q, v, t, out);
    }
}

/// Returns the largest difference between `a` and `b` over `q` and `v`, and the scale
/// `max(1, |q|∞, |v|∞)` of `b`.
pub(super) fn state_difference<const N: usize>(a: &State<N>, b: &State<N>) -> (f64, f64) {
    let scale = b.q.iter().chain(&b.v).fold(1.0f64, |m, x| m.max(x.abs()));
    let difference =
        a.q.iter()
            .zip(&b.q)
            .chain(a.v.iter().zip(&b.v))
            .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    (difference, scale)
}
