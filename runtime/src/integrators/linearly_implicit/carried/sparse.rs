//! The carried-acceleration schemes' linear algebra on the sparse tier: one sparse `LDLᵀ` of
//! `M + βh² H` on a pattern analysed once, and the block-diagonal factor of `M`.
//!
//! The unknowns are the coordinates in the model's order, which is body by body; the pattern
//! is the union of the mass blocks' upper triangles and the Hessian's pattern. For chains and
//! ladders this order is banded (a link couples only to its neighbours), so the factorization
//! needs no fill-reducing permutation and costs `O(n)` per step.
//!
//! # Pivots: positive definite only
//!
//! The factorization eliminates in a fixed order without pivoting and requires every pivot to
//! be positive, so an indefinite `M + βh² H` fails with
//! [`StepError::NotPositiveDefinite`] naming the matrix and the pivot's row. For the penalized
//! chains and ladders of Tao–Owhadi the matrix is positive definite near the constraint
//! manifold, but not in general: `Hess(½ω²c²) = 2ω²(c I + 2 d dᵀ)` per link is indefinite when
//! a rod is compressed (`c < 0`; `shared/EXPERIMENTS-M2.md` §C.5), and `M + βh² H` follows once
//! `βh²ω²|c|` exceeds the mass. A symmetric indefinite matrix factored without pivoting has no
//! bound on the growth of its factors (Higham 2002, §11.1), so accepting any non-vanishing
//! pivot could return an inaccurate acceleration without any sign of it; the fixed-size tier
//! falls back to partial-pivoting LU there instead. A model that needs the indefinite case at
//! scale should use a smaller step, or the fixed-size tier.

use super::{
    CarriedScheme, CarriedTier, EnergyTerms, FullHessian, ImplicitSolve, MassSolve, NewmarkSystem,
    NewtonIterate, StiffHessian, ThirdContraction,
};
use crate::error::StepError;
use crate::integrators::block_mass::BlockMass;
use crate::integrators::checks::{
    check_body_sizes, check_built_for, check_dyn_state, check_finite_slice, check_mass_is_constant,
    check_sparse_parameters,
};
use crate::integrators::saddle_point::mass_block_pattern;
use crate::integrators::{SparseIntegrator, StepReport};
use crate::linalg::{LinearSolver, PivotSign, SparseLdlt};
use crate::model::{
    SparseConstantMass, SparseInertia, SparsePotential, SparsePotentialHessian,
    SparsePotentialThirdDerivative, SparseSplitPotential,
};
use crate::state::DynState;

use super::super::zhang_skeel::FullAcceleration;
use super::sparse_jacobian::Linearization;
use super::{AccelerationRule, ImplicitAcceleration};
use crate::integrators::explicit::ExplicitAcceleration;

/// The name of `M + βh² Hess V` on the sparse tier, in errors.
pub(super) const IMPLICIT_MATRIX: &str =
    "M + βh² Hess V (the sparse tier factors it without pivoting: it must be positive definite)";

/// The name of `M + βh² ε⁻¹ Hess V1` on the sparse tier, in errors.
pub(super) const STIFF_MATRIX: &str =
    "M + βh² ε⁻¹ Hess V1 (the sparse tier factors it without pivoting: it must be positive definite)";

/// The sparse tier of [`CarriedScheme`] for one model: its body sizes, the pattern of
/// `M + βh² H` and its symbolic factorization, the factor of `M`, and every buffer of a step,
/// all sized when the integrator is built.
#[derive(Debug)]
pub struct CarriedSparse {
    /// The model's body sizes, as when the system was built.
    body_sizes: Vec<usize>,
    mass_blocks: Vec<f64>,
    mass: BlockMass,
    /// `M + βh² H`: its factorization, the value slot of each mass-block entry (with its
    /// index in the blocks) and of each Hessian entry, and its values.
    ldlt: SparseLdlt,
    mass_slots: Vec<(usize, usize)>,
    hessian_slots: Vec<usize>,
    hessian: Vec<f64>,
    values: Vec<f64>,
    /// What Verlet's last step keeps for its Jacobian products, if it was linearized.
    linearization: Linearization,
}

impl CarriedTier for CarriedSparse {
    type Vector = Vec<f64>;
}

impl CarriedSparse {
    /// Builds the system for `model` with the Hessian pattern `hessian` (empty for the
    /// explicit rule).
    pub(crate) fn new<Model>(model: &Model, hessian: &[(usize, usize)]) -> Result<Self, StepError>
    where
        Model: SparseInertia + ?Sized,
    {
        let n = model.coordinate_count();
        let body_sizes = model.body_sizes().to_vec();
        check_body_sizes(&body_sizes, n)?;
        if let Some(entry) = hessian.iter().position(|&(i, j)| i >= n || j >= n) {
            return Err(StepError::InvalidModel {
                what: "hessian pattern",
                index: entry,
                reason: "the entry lies outside the model's coordinates",
            });
        }
        let (_, mass_entries) = mass_block_pattern(&body_sizes, |i| i);
        let offset = body_sizes.iter().map(|s| s * s).sum();
        let mass_end = mass_entries.len();
        let (ldlt, slots) = analyse(&body_sizes, hessian)?;
        let mass = BlockMass::new(&body_sizes);
        Ok(CarriedSparse {
            mass_blocks: vec![0.0; offset],
            mass,
            mass_slots: slots[..mass_end]
                .iter()
                .copied()
                .zip(mass_entries)
                .collect(),
            hessian_slots: slots[mass_end..].to_vec(),
            hessian: vec![0.0; hessian.len()],
            values: vec![0.0; ldlt.value_count()],
            ldlt,
            body_sizes,
            linearization: Linearization::default(),
        })
    }

    /// Analyses a second factorization of `M + βh² H` on this system's pattern (`hessian`, the
    /// pattern it was built with), whose value slots are this system's: for a linearized step,
    /// which keeps the factors at both of its ends.
    pub(crate) fn analyse_implicit(
        &self,
        hessian: &[(usize, usize)],
    ) -> Result<SparseLdlt, StepError> {
        self.check_hessian(hessian)?;
        Ok(analyse(&self.body_sizes, hessian)?.0)
    }

    /// Fills `values` with `M(x) + βh² H`, `H`'s values on the Hessian pattern given by
    /// `hessian`, and factors them into `factor` (one analysed by
    /// [`analyse_implicit`](Self::analyse_implicit)); `name` names the matrix in errors.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn factor_implicit<Model>(
        &mut self,
        model: &Model,
        x: &[f64],
        (beta_h2, hessian): (f64, &[f64]),
        name: &'static str,
        values: &mut [f64],
        factor: &mut SparseLdlt,
        t: f64,
    ) -> Result<(), StepError>
    where
        Model: SparseInertia + ?Sized,
    {
        model.mass_blocks(x, &mut self.mass_blocks);
        fill_implicit(
            (&self.mass_slots, &self.mass_blocks),
            (&self.hessian_slots, hessian),
            beta_h2,
            values,
        );
        factor
            .factor(values)
            .map_err(StepError::linear_algebra(name, t))
    }

    /// Returns what the last step keeps for its Jacobian products.
    pub(crate) fn linearization_mut(&mut self) -> &mut Linearization {
        &mut self.linearization
    }

    /// Overwrites `x` with `M⁻¹ x` for the mass matrix the last step factored.
    pub(crate) fn mass_solve(&mut self, x: &mut [f64], t: f64) -> Result<(), StepError> {
        self.mass.solve_in_place(x, t)
    }

    /// Returns the number of stored entries of the factor of `M + βh² H` (its fill).
    pub fn factor_entry_count(&self) -> usize {
        self.ldlt.factor_entry_count()
    }

    /// Returns `InvalidModel` unless `pattern` has the length of the Hessian pattern this
    /// system was built for (patterns are fixed for a model's lifetime, so a different length
    /// means a different model).
    fn check_hessian(&self, pattern: &[(usize, usize)]) -> Result<(), StepError> {
        if pattern.len() == self.hessian.len() {
            Ok(())
        } else {
            Err(StepError::InvalidModel {
                what: "hessian pattern",
                index: pattern.len(),
                reason: "differs from the model the integrator was built for",
            })
        }
    }

    /// Fills `M(x) + βh² H` from the mass blocks and `self.hessian`, factors it, and
    /// overwrites `out` (holding `∇V`) with `−(M + βh² H)⁻¹ ∇V`.
    fn solve_implicit<Model>(
        &mut self,
        model: &Model,
        x: &[f64],
        beta_h2: f64,
        name: &'static str,
        out: &mut [f64],
        t: f64,
    ) -> Result<u32, StepError>
    where
        Model: SparseInertia + ?Sized,
    {
        check_finite_slice(out, "gradient", t)?;
        // A non-finite mass block or Hessian value is reported by the factorization, as a
        // non-finite entry of the matrix (one pass over the values fewer per step).
        model.mass_blocks(x, &mut self.mass_blocks);
        fill_implicit(
            (&self.mass_slots, &self.mass_blocks),
            (&self.hessian_slots, &self.hessian),
            beta_h2,
            &mut self.values,
        );
        let wrap = StepError::linear_algebra(name, t);
        self.ldlt.factor(&self.values).map_err(&wrap)?;
        self.ldlt.solve_in_place(out).map_err(&wrap)?;
        out.iter_mut().for_each(|a| *a = -*a);
        Ok(1)
    }
}

/// Analyses the pattern of `M + βh² H` for the bodies `body_sizes` (the union of the mass
/// blocks' upper triangles, first, and the Hessian's pattern `hessian`), positive pivots
/// required; returns the solver and each entry's value slot.
fn analyse(
    body_sizes: &[usize],
    hessian: &[(usize, usize)],
) -> Result<(SparseLdlt, Vec<usize>), StepError> {
    let n = body_sizes.iter().sum();
    let (mut entries, _) = mass_block_pattern(body_sizes, |i| i);
    entries.extend_from_slice(hessian);
    SparseLdlt::analyse(n, &entries, &vec![PivotSign::Positive; n])
        .map_err(StepError::linear_algebra(IMPLICIT_MATRIX, 0.0))
}

/// Writes the values of `M + βh² H` from the mass blocks and the Hessian's values, each with
/// its value slots.
fn fill_implicit(
    (mass_slots, mass_blocks): (&[(usize, usize)], &[f64]),
    (hessian_slots, hessian): (&[usize], &[f64]),
    beta_h2: f64,
    values: &mut [f64],
) {
    values.fill(0.0);
    for &(slot, entry) in mass_slots {
        values[slot] += mass_blocks[entry];
    }
    for (&slot, value) in hessian_slots.iter().zip(hessian) {
        values[slot] += beta_h2 * value;
    }
}

impl CarriedSparse {
    /// Returns the model's body sizes, as when the system was built.
    pub(crate) fn body_sizes(&self) -> &[usize] {
        &self.body_sizes
    }

    /// Overwrites `out` (holding `∇V(y)`, with `self.hessian` holding `H(y)`) with the Newton
    /// iterate `a − (M(y) + βh² H(y))⁻¹ (M(y) a + ∇V(y))` of `M a' + ∇V(y) = 0`.
    #[allow(clippy::too_many_arguments)]
    fn newton_iterate_from<Model>(
        &mut self,
        model: &Model,
        y: &[f64],
        a: &[f64],
        beta_h2: f64,
        name: &'static str,
        out: &mut [f64],
        t: f64,
    ) -> Result<u32, StepError>
    where
        Model: SparseInertia + ?Sized,
    {
        check_finite_slice(out, "gradient", t)?;
        // The residual M a + ∇V, block by block (solve_implicit refills the blocks at y).
        model.mass_blocks(y, &mut self.mass_blocks);
        let (mut first, mut offset) = (0, 0);
        for &size in &self.body_sizes {
            let block = &self.mass_blocks[offset..offset + size * size];
            for (i, row) in block.chunks_exact(size).enumerate() {
                let product: f64 = row
                    .iter()
                    .zip(&a[first..first + size])
                    .map(|(m, x)| m * x)
                    .sum();
                out[first + i] += product;
            }
            first += size;
            offset += size * size;
        }
        let factorizations = self.solve_implicit(model, y, beta_h2, name, out, t)?;
        out.iter_mut().zip(a).for_each(|(o, a)| *o += a);
        Ok(factorizations)
    }
}

impl<Model> MassSolve<Model> for CarriedSparse
where
    Model: SparseInertia + SparsePotential + ?Sized,
{
    fn gradient(&mut self, model: &Model, x: &[f64], grad: &mut [f64]) {
        model.potential_gradient(x, grad);
    }

    fn solve_mass(
        &mut self,
        model: &Model,
        x: &[f64],
        b: &mut [f64],
        t: f64,
    ) -> Result<u32, StepError> {
        let factorizations = self.mass.factor_at(model, x, t)?;
        self.mass.solve_in_place(b, t)?;
        Ok(factorizations)
    }
}

/// The Hessian that `Which` names ([`FullHessian`]: `Hess V`; [`StiffHessian`]: the stiff
/// part's `ε⁻¹ Hess V1`), read from a sparse-tier model together with `∇V`: what the sparse
/// tier's linear solves ([`ImplicitSolve`], [`NewtonIterate`]) need besides the mass blocks.
pub trait SparseHessian<Model: ?Sized> {
    /// The factored matrix `M + βh² H`, in errors.
    const MATRIX: &'static str;

    /// Returns the Hessian's pattern, each unordered pair once.
    fn pattern(model: &Model) -> &[(usize, usize)];

    /// Writes `∇V(x)` (total) into `grad` and the Hessian's values into `hess`.
    fn gradient_hessian(model: &Model, x: &[f64], grad: &mut [f64], hess: &mut [f64]);
}

impl<Model: SparsePotentialHessian + ?Sized> SparseHessian<Model> for FullHessian {
    const MATRIX: &'static str = IMPLICIT_MATRIX;

    fn pattern(model: &Model) -> &[(usize, usize)] {
        model.hessian_pattern()
    }

    fn gradient_hessian(model: &Model, x: &[f64], grad: &mut [f64], hess: &mut [f64]) {
        model.potential_gradient_hessian(x, grad, hess);
    }
}

impl<Model: SparseSplitPotential + ?Sized> SparseHessian<Model> for StiffHessian {
    const MATRIX: &'static str = STIFF_MATRIX;

    fn pattern(model: &Model) -> &[(usize, usize)] {
        model.stiff_hessian_pattern()
    }

    fn gradient_hessian(model: &Model, x: &[f64], grad: &mut [f64], hess: &mut [f64]) {
        model.potential_gradient_stiff_hessian(x, grad, hess);
    }
}

impl<Model, Which> ImplicitSolve<Model, Which> for CarriedSparse
where
    Model: SparseInertia + ?Sized,
    Which: SparseHessian<Model>,
{
    fn implicit_acceleration(
        &mut self,
        model: &Model,
        x: &[f64],
        beta_h2: f64,
        out: &mut [f64],
        t: f64,
    ) -> Result<u32, StepError> {
        self.check_hessian(Which::pattern(model))?;
        Which::gradient_hessian(model, x, out, &mut self.hessian);
        self.solve_implicit(model, x, beta_h2, Which::MATRIX, out, t)
    }
}

impl<Model, Which> NewtonIterate<Model, Which> for CarriedSparse
where
    Model: SparseInertia + ?Sized,
    Which: SparseHessian<Model>,
{
    fn newton_iterate(
        &mut self,
        model: &Model,
        y: &[f64],
        a: &[f64],
        beta_h2: f64,
        out: &mut [f64],
        t: f64,
    ) -> Result<u32, StepError> {
        self.check_hessian(Which::pattern(model))?;
        Which::gradient_hessian(model, y, out, &mut self.hessian);
        self.newton_iterate_from(model, y, a, beta_h2, Which::MATRIX, out, t)
    }
}

/// The defaults: a solve with the factor of the mass blocks, and `(β·h)·h`.
impl<Model> NewmarkSystem<Model> for CarriedSparse where
    Model: SparseInertia + SparsePotential + ?Sized
{
}

impl<Model> EnergyTerms<Model> for CarriedSparse
where
    Model: SparseInertia + SparsePotential + ?Sized,
{
    fn energy(&mut self, model: &Model, x: &[f64], v: &[f64]) -> f64 {
        model.kinetic_energy(x, v) + model.potential(x)
    }

    fn energy_terms(
        &mut self,
        model: &Model,
        x: &[f64],
        v: &[f64],
        scratch: &mut [f64],
    ) -> (f64, f64, f64) {
        model.potential_gradient(x, scratch);
        (
            model.kinetic_energy(x, v),
            model.potential(x),
            scratch.iter().map(|g| g.abs()).sum(),
        )
    }
}

impl<Model> ThirdContraction<Model> for CarriedSparse
where
    Model: SparsePotentialThirdDerivative + ?Sized,
{
    fn third_contraction(&mut self, model: &Model, x: &[f64], a: &[f64], out: &mut [f64]) {
        model.potential_third_contraction(x, a, out);
    }
}

impl<R: super::RuleDefaults> CarriedScheme<CarriedSparse, R> {
    /// Creates the scheme for `model` with the Hessian pattern `hessian`: analyses the
    /// pattern of `M + βh² H` and sizes every buffer.
    fn for_model<Model>(
        model: &Model,
        hessian: &[(usize, usize)],
        h: f64,
    ) -> Result<Self, StepError>
    where
        Model: SparseInertia + ?Sized,
    {
        let system = CarriedSparse::new(model, hessian)?;
        let zero = vec![0.0; model.coordinate_count()];
        Self::with_parts(h, R::DEFAULT_BETA, R::default(), system, zero)
    }
}

impl<Which: Default> CarriedScheme<CarriedSparse, super::ImplicitAcceleration<Which>> {
    /// Returns the number of stored entries of the factor of `M + βh² H` (its fill).
    pub fn factor_entry_count(&self) -> usize {
        self.system.factor_entry_count()
    }
}

/// Creates a sparse-tier stepper for `model` with step size `h` and default `β`, reading the
/// model's patterns and sizing all scratch; fails with `InvalidModel` if the body sizes do not
/// add up to the number of coordinates or a pattern entry lies outside the model.
macro_rules! sparse_constructor {
    ($rule:ty, [$($bound:path),*], |$model:ident| $pattern:expr) => {
        impl CarriedScheme<CarriedSparse, $rule> {
            /// Creates the stepper for `model` with step size `h` and the default `β` (0.4;
            /// Verlet has none): reads the model's patterns, analyses the pattern of the
            /// factored matrix and sizes every buffer, so that no step allocates. Fails with
            /// `BadStepSize` for a bad `h`, and with `InvalidModel` if the body sizes do not
            /// add up to the number of coordinates or a pattern entry lies outside the model.
            pub fn new<Model>(model: &Model, h: f64) -> Result<Self, StepError>
            where
                Model: SparseInertia $(+ $bound)* + ?Sized,
            {
                let $model = model;
                let pattern: &[(usize, usize)] = $pattern;
                Self::for_model($model, pattern, h)
            }
        }
    };
}

sparse_constructor!(ExplicitAcceleration, [SparsePotential], |model| &[]);
sparse_constructor!(
    ImplicitAcceleration<FullHessian>,
    [SparsePotentialHessian],
    |model| { model.hessian_pattern() }
);
sparse_constructor!(
    ImplicitAcceleration<StiffHessian>,
    [SparseSplitPotential],
    |model| { model.stiff_hessian_pattern() }
);
sparse_constructor!(
    FullAcceleration,
    [SparsePotentialThirdDerivative],
    |model| { model.hessian_pattern() }
);

impl<Model, R> SparseIntegrator<Model> for CarriedScheme<CarriedSparse, R>
where
    Model: SparseConstantMass + SparsePotential + ?Sized,
    R: AccelerationRule<Model, CarriedSparse>,
{
    crate::checkpoint::carried_access!();

    fn admit_energy_exchange(&mut self, energy: f64) {
        self.watch.admit(energy);
    }

    fn step(&mut self, model: &Model, state: &mut DynState) -> Result<StepReport, StepError> {
        self.system.linearization.invalidate();
        check_mass_is_constant(model.constant_mass(), R::NAME)?;
        check_sparse_parameters(model)?;
        check_dyn_state(state, model.coordinate_count())?;
        check_built_for(
            model.body_sizes() == self.system.body_sizes.as_slice(),
            "body sizes",
            model.body_sizes().len(),
        )?;
        let report = self.advance(model, state.t, &mut state.q, &mut state.v)?;
        state.t += self.h;
        Ok(report)
    }
}
