use nalgebra::{SMatrix, SVector};

use super::{
    Configuration, ConstantMass, GeneratedSolve, Inertia, Potential, PotentialHessian,
    PotentialThirdDerivative,
};

/// The penalized potential `W(q) = V(q) + ½ ω² |g(q)|²` of Tao–Owhadi (2014) eq. 7, which
/// replaces holonomic constraints `g = 0` by stiff springs of frequency `ω`.
///
/// `mechanism!` differentiates `W` symbolically with `ω` as an input, so that its derivatives
/// are as cheap as the plain potential's. They come in three levels, like those of the plain
/// potential, so that a model compiled only for explicit penalty integrators (Verlet) does not
/// pay for a Hessian, and one compiled for Z&Ss not for a third derivative:
/// [`PenalizedPotential`] (`W`, `∇W`), [`PenalizedHessian`] (`Hess W`) and
/// [`PenalizedThirdDerivative`] (`a·W‴·a`). [`Penalized`] turns each into the corresponding
/// potential trait.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not compiled for an integrator that steps with `PenalizedPotential`",
    label = "the model lacks `PenalizedPotential`",
    note = "add the integrator to `integrators: [..]` in the `mechanism!` of the model (the names and the runtime types they cover: `mechanism::runtime::capabilities::Family`)"
)]
pub trait PenalizedPotential<const N: usize> {
    /// Returns `W(q)`.
    fn penalized_potential(&self, omega: f64, q: &SVector<f64, N>) -> f64;

    /// Writes `∇W(q)` into `grad`.
    fn penalized_potential_gradient(
        &self,
        omega: f64,
        q: &SVector<f64, N>,
        grad: &mut SVector<f64, N>,
    );
}

/// The Hessian of the penalized potential, for the linearly implicit penalty integrators.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not compiled for an integrator that steps with `PenalizedHessian`",
    label = "the model lacks `PenalizedHessian`",
    note = "add the integrator to `integrators: [..]` in the `mechanism!` of the model (the names and the runtime types they cover: `mechanism::runtime::capabilities::Family`)"
)]
pub trait PenalizedHessian<const N: usize>: PenalizedPotential<N> {
    /// Writes `Hess W(q)` into `hess`.
    fn penalized_potential_hessian(
        &self,
        omega: f64,
        q: &SVector<f64, N>,
        hess: &mut SMatrix<f64, N, N>,
    );

    /// Writes `∇W(q)` and `Hess W(q)` together; generated models override this to share work.
    fn penalized_potential_gradient_hessian(
        &self,
        omega: f64,
        q: &SVector<f64, N>,
        grad: &mut SVector<f64, N>,
        hess: &mut SMatrix<f64, N, N>,
    ) {
        self.penalized_potential_gradient(omega, q, grad);
        self.penalized_potential_hessian(omega, q, hess);
    }

    /// Writes `a = −(M(q) + c Hess W(q))⁻¹ ∇W(q)` with the code `mechanism!` specializes to the
    /// model, as [`PotentialHessian::implicit_acceleration`]; the default has none.
    #[inline]
    fn penalized_implicit_acceleration(
        &self,
        omega: f64,
        q: &SVector<f64, N>,
        c: f64,
        a: &mut SVector<f64, N>,
    ) -> GeneratedSolve {
        let _ = (omega, q, c, a);
        GeneratedSolve::NotGenerated
    }
}

/// The third derivative of the penalized potential contracted twice, for full Z&S.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not compiled for an integrator that steps with `PenalizedThirdDerivative`",
    label = "the model lacks `PenalizedThirdDerivative`",
    note = "add the integrator to `integrators: [..]` in the `mechanism!` of the model (the names and the runtime types they cover: `mechanism::runtime::capabilities::Family`)"
)]
pub trait PenalizedThirdDerivative<const N: usize>: PenalizedHessian<N> {
    /// Writes `a·W‴(q)·a` into `out`.
    fn penalized_potential_third_contraction(
        &self,
        omega: f64,
        q: &SVector<f64, N>,
        a: &SVector<f64, N>,
        out: &mut SVector<f64, N>,
    );
}

/// A model whose holonomic constraints are replaced by the penalty `½ ω² |g|²`.
///
/// It is itself a model with potential `W`, so any unconstrained integrator (Z&S, Z&Ss) runs on
/// it unchanged.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Penalized<Model> {
    /// The constrained model.
    pub model: Model,
    /// The penalty frequency `ω`.
    pub omega: f64,
}

impl<Model> Penalized<Model> {
    /// Wraps `model` with penalty frequency `omega`.
    pub fn new(model: Model, omega: f64) -> Self {
        Penalized { model, omega }
    }
}

impl<const N: usize, Model: Configuration<N>> Configuration<N> for Penalized<Model> {
    const COORDINATES: [&'static str; N] = Model::COORDINATES;
}

/// The penalized model has the constrained model's mass matrix.
#[diagnostic::do_not_recommend]
impl<const N: usize, Model: ConstantMass<N>> ConstantMass<N> for Penalized<Model> {}

impl<const N: usize, Model: Inertia<N>> Inertia<N> for Penalized<Model> {
    const CONSTANT_MASS: bool = Model::CONSTANT_MASS;
    const MASS_DEPENDS_ON: [bool; N] = Model::MASS_DEPENDS_ON;

    fn mass_matrix(&self, q: &SVector<f64, N>, m: &mut SMatrix<f64, N, N>) {
        self.model.mass_matrix(q, m);
    }

    fn kinetic_energy(&self, q: &SVector<f64, N>, v: &SVector<f64, N>) -> f64 {
        self.model.kinetic_energy(q, v)
    }

    #[inline(always)]
    fn mass_solve(&self, q: &SVector<f64, N>, b: &mut SVector<f64, N>) -> GeneratedSolve {
        self.model.mass_solve(q, b)
    }

    fn non_finite_parameter(&self) -> Option<(&'static str, f64)> {
        if !self.omega.is_finite() {
            return Some(("omega", self.omega));
        }
        self.model.non_finite_parameter()
    }
}

impl<const N: usize, Model: PenalizedPotential<N>> Potential<N> for Penalized<Model> {
    fn potential(&self, q: &SVector<f64, N>) -> f64 {
        self.model.penalized_potential(self.omega, q)
    }

    fn potential_gradient(&self, q: &SVector<f64, N>, grad: &mut SVector<f64, N>) {
        self.model.penalized_potential_gradient(self.omega, q, grad);
    }
}

impl<const N: usize, Model: PenalizedHessian<N>> PotentialHessian<N> for Penalized<Model> {
    fn potential_hessian(&self, q: &SVector<f64, N>, hess: &mut SMatrix<f64, N, N>) {
        self.model.penalized_potential_hessian(self.omega, q, hess);
    }

    fn potential_gradient_hessian(
        &self,
        q: &SVector<f64, N>,
        grad: &mut SVector<f64, N>,
        hess: &mut SMatrix<f64, N, N>,
    ) {
        self.model
            .penalized_potential_gradient_hessian(self.omega, q, grad, hess);
    }

    // Forwarders of generated code are always inlined: the steppers' fast paths need the
    // generated body in their own (see `CarriedDense`'s seams).
    #[inline(always)]
    fn implicit_acceleration(
        &self,
        q: &SVector<f64, N>,
        c: f64,
        a: &mut SVector<f64, N>,
    ) -> GeneratedSolve {
        self.model
            .penalized_implicit_acceleration(self.omega, q, c, a)
    }
}

impl<const N: usize, Model: PenalizedThirdDerivative<N>> PotentialThirdDerivative<N>
    for Penalized<Model>
{
    #[inline(always)]
    fn potential_third_contraction(
        &self,
        q: &SVector<f64, N>,
        a: &SVector<f64, N>,
        out: &mut SVector<f64, N>,
    ) {
        self.model
            .penalized_potential_third_contraction(self.omega, q, a, out);
    }
}
