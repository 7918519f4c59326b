//! Products with the exact Jacobian of a carried-acceleration step on the sparse tier
//! ([`SparseDifferentiableStep`] for [`SparseVerlet`], [`SparseZhangSkeelSimplified`] and
//! [`SparseZhangSkeelStiff`]).
//!
//! The three steps are the carried update `q' = q + h v + ½h² a(q)`,
//! `v' = v + ½h (a(q) + a(q'))` (the fixed-size tier's `tangent.rs`, `carried_tangents`), with
//! an acceleration defined by `S(x) a = −∇V(x)`: Verlet's `S = M`, Z&Ss's
//! `S = K(x) = M + βh² Hess V(x)` (Tao–Owhadi 2014, Integrator 4, eq. 18), stiff Z&Ss's
//! `S = M + βh² ε⁻¹ Hess V1(x)` with the stiff part's Hessian only (Integrator 5, eq. 19). With
//! `M` constant and `M_j = ∂M/∂p_j`, differentiating `S a = −∇V` at `a` held gives
//!
//! ```text
//! δa = −S⁻¹ (B δq + Σⱼ δpⱼ bⱼ),   B = Hess V + c U‴[a],
//!                                 bⱼ = ∂ⱼ∇V + Mⱼ a + c ∂ⱼ(Hess V) a,
//! ```
//!
//! with `c = 0` for Verlet and `c = βh²` otherwise, `U = V` for Z&Ss and `U = ε⁻¹ V1` for stiff
//! Z&Ss (`Hess V` is the total Hessian in both), where `U‴[a]` is the symmetric matrix
//! `(U‴[a])_ik = Σ_j ∂³U/∂x_i∂x_j∂x_k a_j`. Its product with `u` is taken by polarization of the
//! contraction `y ↦ y·U‴(x)·y` that `mechanism!` generates
//! ([`SparsePotentialThirdDerivative`]; for stiff Z&Ss on a
//! [`Penalized`](crate::Penalized) model [`SparseStiffThirdDerivative`], `W‴ − V‴`): that
//! contraction is a quadratic form in `y`, so `U‴[a] u = |u|/s · (y₊·U‴·y₊ − y₋·U‴·y₋) / 4`
//! with `y± = a ± s u/|u|` exactly, and `s = |a|` keeps the difference's rounding at
//! `O(ε |U‴| |a| |u|)`, that of the product itself. `∂ⱼ(Hess V) a` contracts the entries of
//! [`SparsePotentialHessianParameterDerivative`] with `a`. The tangent is then, primes at
//! `q_{k+1}`,
//!
//! ```text
//! δa  = −S⁻¹ (B δq + Σ δp b),                δq' = δq + h δv + ½h² δa
//! δa' = −S'⁻¹ (B' δq' + Σ δp b'),            δv' = δv + ½h (δa + δa')
//! ```
//!
//! and the adjoint runs it backwards: for `(w_q, w_v)`, the weight on `δa'` is `ω' = ½h w_v`,
//! so `w̄ = w_q − B' S'⁻¹ ω'` is the weight on `δq'`, the weight on `δa` is
//! `ω = ½h² w̄ + ½h w_v`, and
//!
//! ```text
//! a_q = w̄ − B S⁻¹ ω,    a_v = h w̄ + w_v,    (∂L/∂p)ⱼ −= bⱼ·S⁻¹ω + b'ⱼ·S'⁻¹ω'
//! ```
//!
//! with `S`, `Hess V` and `U‴[a]` symmetric. A product costs two solves (`M`'s block factor,
//! or the factors of `S` at both ends, which the linearized step keeps: two factorizations per
//! linearized step, one more than the step's), two passes over `Hess V`'s pattern (evaluated
//! at both ends once per step), for the implicit rules four contractions `y·U‴·y`, and the
//! parameter entries. Stiff Z&Ss differentiates in the state only: a [`Penalized`] model does
//! not differentiate its rows' penalty in the parameters (as on the fixed-size tier), so a
//! product with parameter directions fails with [`StepError::Unsupported`].
//!
//! [`Penalized`]: crate::Penalized

use std::mem;

use crate::error::StepError;
use crate::integrators::checks::{check_finite_slice, check_sparse_parameters};
use crate::integrators::explicit::{ExplicitAcceleration, SparseVerlet};
use crate::integrators::jacobian::{check_product_lengths, Product};
use crate::integrators::{SparseDifferentiableStep, SparseIntegrator, StepReport};
use crate::linalg::products::add_symmetric_pattern_times;
use crate::linalg::{LinearSolver, SparseLdlt};
use crate::model::{
    SparseConstantMass, SparseParameterDerivatives, SparseParameters, SparsePotentialHessian,
    SparsePotentialHessianParameterDerivative, SparsePotentialThirdDerivative,
    SparseStiffThirdDerivative,
};
use crate::state::DynState;

use super::sparse::{CarriedSparse, IMPLICIT_MATRIX, STIFF_MATRIX};
use super::{AccelerationRule, CarriedScheme, FullHessian, ImplicitAcceleration, StiffHessian};
use crate::integrators::linearly_implicit::stiff::SparseZhangSkeelStiff;
use crate::integrators::linearly_implicit::zhang_skeel::SparseZhangSkeelSimplified;

/// What a linearized carried step keeps for its products: each end's configuration,
/// acceleration and `Hess V`, for the implicit rules the factors of `S` at both ends, and the
/// buffers of a product. Sized at the first linearized step.
#[derive(Debug, Default)]
pub(crate) struct Linearization {
    valid: bool,
    t: f64,
    /// The step's start and end.
    ends: [End; 2],
    b: Vec<f64>,
    c: Vec<f64>,
    /// The linearly implicit acceleration's factors (Z&Ss, stiff Z&Ss); `None` for Verlet.
    implicit: Option<Box<Implicit>>,
}

/// One end of a linearized step.
#[derive(Debug, Default)]
struct End {
    q: Vec<f64>,
    a: Vec<f64>,
    /// `Hess V` (total).
    hessian: Vec<f64>,
    /// The factored matrix's own Hessian where it is not `Hess V` (stiff Z&Ss: `ε⁻¹ Hess V1`).
    implicit_hessian: Vec<f64>,
}

/// What the implicit rules' products need besides: `βh²`, the factors of `S` at both ends,
/// and the polarization's buffers.
#[derive(Debug)]
struct Implicit {
    /// The factored matrix's name, in errors.
    matrix: &'static str,
    beta_h2: f64,
    factors: [SparseLdlt; 2],
    values: Vec<f64>,
    plus: Vec<f64>,
    minus: Vec<f64>,
    scratch: Vec<f64>,
}

impl Linearization {
    /// Forgets the last step's linearization.
    pub(crate) fn invalidate(&mut self) {
        self.valid = false;
    }
}

/// How a carried rule's acceleration is solved.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Solve {
    /// With `M` (Verlet).
    Mass,
    /// With `M + βh² Hess V` (Z&Ss).
    Potential,
    /// With `M + βh² ε⁻¹ Hess V1` (stiff Z&Ss).
    Stiff,
}

/// What a carried rule's linearization asks of the model beyond `Hess V`: its solve, the third
/// derivative along the acceleration and the parameter terms `bⱼ` of the module docs.
trait LinearizedRule<Model: ?Sized> {
    /// How the acceleration is solved.
    const SOLVE: Solve;

    /// Returns the factored matrix's Hessian pattern (that of `Hess V` for Z&Ss).
    fn implicit_pattern(model: &Model) -> &[(usize, usize)];

    /// Writes the factored matrix's own Hessian (stiff Z&Ss only).
    fn implicit_hessian(model: &Model, x: &[f64], out: &mut [f64]);

    /// Adds `scale · y·U‴(x)·y` to `out`, with `scratch` (`n` values).
    fn add_third_contraction(
        model: &Model,
        x: &[f64],
        y: &[f64],
        scale: f64,
        scratch: &mut [f64],
        out: &mut [f64],
    );

    /// Returns the model's number of parameters `P`.
    fn parameter_count(model: &Model) -> usize;

    /// Adds `Σⱼ δpⱼ bⱼ` at `end` to `out` (`beta_h2`: the implicit rules' `c`); nothing for an
    /// empty `dp`.
    fn add_parameter_force(
        model: &Model,
        end: &End,
        beta_h2: f64,
        dp: &[f64],
        out: &mut [f64],
    ) -> Result<(), StepError>;

    /// Subtracts `y·bⱼ` at `end` from `gradient[j]`; nothing for an empty `gradient`.
    fn subtract_parameter_gradient(
        model: &Model,
        end: &End,
        beta_h2: f64,
        y: &[f64],
        gradient: &mut [f64],
    ) -> Result<(), StepError>;
}

impl<Model> LinearizedRule<Model> for ExplicitAcceleration
where
    Model: SparsePotentialHessian + SparseParameterDerivatives + ?Sized,
{
    const SOLVE: Solve = Solve::Mass;

    fn implicit_pattern(_: &Model) -> &[(usize, usize)] {
        &[]
    }

    fn implicit_hessian(_: &Model, _: &[f64], _: &mut [f64]) {}

    fn add_third_contraction(
        _: &Model,
        _: &[f64],
        _: &[f64],
        _: f64,
        _: &mut [f64],
        _: &mut [f64],
    ) {
    }

    fn parameter_count(model: &Model) -> usize {
        model.parameter_count()
    }

    fn add_parameter_force(
        model: &Model,
        end: &End,
        _: f64,
        dp: &[f64],
        out: &mut [f64],
    ) -> Result<(), StepError> {
        add_parameter_force(model, end, dp, out);
        Ok(())
    }

    fn subtract_parameter_gradient(
        model: &Model,
        end: &End,
        _: f64,
        y: &[f64],
        gradient: &mut [f64],
    ) -> Result<(), StepError> {
        subtract_parameter_gradient(model, end, y, gradient);
        Ok(())
    }
}

impl<Model> LinearizedRule<Model> for ImplicitAcceleration<FullHessian>
where
    Model: SparsePotentialThirdDerivative + SparsePotentialHessianParameterDerivative + ?Sized,
{
    const SOLVE: Solve = Solve::Potential;

    fn implicit_pattern(model: &Model) -> &[(usize, usize)] {
        model.hessian_pattern()
    }

    fn implicit_hessian(_: &Model, _: &[f64], _: &mut [f64]) {}

    fn add_third_contraction(
        model: &Model,
        x: &[f64],
        y: &[f64],
        scale: f64,
        scratch: &mut [f64],
        out: &mut [f64],
    ) {
        model.potential_third_contraction(x, y, scratch);
        out.iter_mut()
            .zip(&*scratch)
            .for_each(|(o, c)| *o += scale * c);
    }

    fn parameter_count(model: &Model) -> usize {
        model.parameter_count()
    }

    fn add_parameter_force(
        model: &Model,
        end: &End,
        beta_h2: f64,
        dp: &[f64],
        out: &mut [f64],
    ) -> Result<(), StepError> {
        if dp.is_empty() {
            return Ok(());
        }
        add_parameter_force(model, end, dp, out);
        let a = &end.a;
        model.potential_hessian_parameter_entries(&end.q, &mut |i, k, j, value| {
            out[i] += beta_h2 * dp[j] * value * a[k];
        });
        Ok(())
    }

    fn subtract_parameter_gradient(
        model: &Model,
        end: &End,
        beta_h2: f64,
        y: &[f64],
        gradient: &mut [f64],
    ) -> Result<(), StepError> {
        if gradient.is_empty() {
            return Ok(());
        }
        subtract_parameter_gradient(model, end, y, gradient);
        let a = &end.a;
        model.potential_hessian_parameter_entries(&end.q, &mut |i, k, j, value| {
            gradient[j] -= beta_h2 * y[i] * value * a[k];
        });
        Ok(())
    }
}

/// Stiff Z&Ss differentiates in the state only ([`Penalized`](crate::Penalized) does not
/// differentiate its rows' penalty in the parameters).
const STIFF_PARAMETERS: StepError = StepError::Unsupported {
    integrator: "SparseZhangSkeelStiff",
    requirement: "a step Jacobian in the state only: the penalized model's parameter derivatives are not generated (give empty parameter directions and gradients)",
};

impl<Model> LinearizedRule<Model> for ImplicitAcceleration<StiffHessian>
where
    Model: SparseStiffThirdDerivative + SparseParameters + ?Sized,
{
    const SOLVE: Solve = Solve::Stiff;

    fn implicit_pattern(model: &Model) -> &[(usize, usize)] {
        model.stiff_hessian_pattern()
    }

    fn implicit_hessian(model: &Model, x: &[f64], out: &mut [f64]) {
        model.stiff_hessian(x, out);
    }

    fn add_third_contraction(
        model: &Model,
        x: &[f64],
        y: &[f64],
        scale: f64,
        scratch: &mut [f64],
        out: &mut [f64],
    ) {
        model.add_stiff_third_contraction(x, y, scale, scratch, out);
    }

    fn parameter_count(model: &Model) -> usize {
        model.parameter_count()
    }

    fn add_parameter_force(
        _: &Model,
        _: &End,
        _: f64,
        dp: &[f64],
        _: &mut [f64],
    ) -> Result<(), StepError> {
        if dp.is_empty() {
            Ok(())
        } else {
            Err(STIFF_PARAMETERS)
        }
    }

    fn subtract_parameter_gradient(
        _: &Model,
        _: &End,
        _: f64,
        _: &[f64],
        gradient: &mut [f64],
    ) -> Result<(), StepError> {
        if gradient.is_empty() {
            Ok(())
        } else {
            Err(STIFF_PARAMETERS)
        }
    }
}

/// The three impls are the same three calls of the generic functions below.
macro_rules! sparse_differentiable_step {
    ($scheme:ty, [$($bound:path),*]) => {
        impl<Model> SparseDifferentiableStep<Model> for $scheme
        where
            Model: SparseConstantMass $(+ $bound)* + ?Sized,
        {
            fn step_linearized(
                &mut self,
                model: &Model,
                state: &mut DynState,
            ) -> Result<StepReport, StepError> {
                step_linearized(self, model, state)
            }

            fn tangent(
                &mut self,
                model: &Model,
                direction: (&[f64], &[f64], &[f64]),
                out: (&mut [f64], &mut [f64]),
            ) -> Result<(), StepError> {
                tangent(self, model, direction, out)
            }

            fn adjoint(
                &mut self,
                model: &Model,
                weights: (&[f64], &[f64]),
                out: (&mut [f64], &mut [f64]),
                gradient: &mut [f64],
            ) -> Result<(), StepError> {
                adjoint(self, model, weights, out, gradient)
            }
        }
    };
}

sparse_differentiable_step!(
    SparseVerlet,
    [SparsePotentialHessian, SparseParameterDerivatives]
);
sparse_differentiable_step!(
    SparseZhangSkeelSimplified,
    [
        SparsePotentialThirdDerivative,
        SparsePotentialHessianParameterDerivative
    ]
);
sparse_differentiable_step!(
    SparseZhangSkeelStiff,
    [SparseStiffThirdDerivative, SparseParameters]
);

/// Takes the plain step, then linearizes it: the acceleration and `Hess V` at both ends, and
/// for the implicit rules the factors of `S` there.
fn step_linearized<Model, R>(
    scheme: &mut CarriedScheme<CarriedSparse, R>,
    model: &Model,
    state: &mut DynState,
) -> Result<StepReport, StepError>
where
    Model: SparseConstantMass + SparsePotentialHessian + ?Sized,
    R: AccelerationRule<Model, CarriedSparse> + LinearizedRule<Model>,
{
    let n = model.coordinate_count();
    let pattern = model.hessian_pattern();
    let implicit_pattern = R::implicit_pattern(model);
    let t = state.t;
    let beta_h2 = scheme.beta * scheme.h * scheme.h;
    {
        let system = &mut scheme.system;
        let implicit = if R::SOLVE != Solve::Mass && system.linearization_mut().implicit.is_none() {
            // Sized once, at the first linearized step (the patterns are the model's for life).
            let factors = [
                system.analyse_implicit(implicit_pattern)?,
                system.analyse_implicit(implicit_pattern)?,
            ];
            Some(Box::new(Implicit {
                matrix: matrix_name::<Model, R>(),
                beta_h2,
                values: vec![0.0; factors[0].value_count()],
                factors,
                plus: vec![0.0; n],
                minus: vec![0.0; n],
                scratch: vec![0.0; n],
            }))
        } else {
            None
        };
        let lin = system.linearization_mut();
        if implicit.is_some() {
            lin.implicit = implicit;
        }
        let separate = if R::SOLVE == Solve::Stiff {
            implicit_pattern.len()
        } else {
            0
        };
        for end in &mut lin.ends {
            end.q.resize(n, 0.0);
            end.a.resize(n, 0.0);
            end.hessian.resize(pattern.len(), 0.0);
            end.implicit_hessian.resize(separate, 0.0);
        }
        lin.b.resize(n, 0.0);
        lin.c.resize(n, 0.0);
        if state.q.len() == n {
            lin.ends[0].q.copy_from_slice(&state.q);
        }
        lin.t = t;
    }
    // The plain step checks the state and the model, and forgets any linearization.
    let report = SparseIntegrator::step(scheme, model, state)?;
    let system = &mut scheme.system;
    let mut lin = mem::take(system.linearization_mut());
    lin.ends[1].q.copy_from_slice(&state.q);
    let result = (|| {
        for (index, end) in lin.ends.iter_mut().enumerate() {
            model.potential_gradient(&end.q, &mut end.a);
            check_finite_slice(&end.a, "gradient", t)?;
            model.potential_hessian(&end.q, &mut end.hessian);
            check_finite_slice(&end.hessian, "potential hessian", t)?;
            match lin.implicit.as_deref_mut() {
                Some(implicit) => {
                    implicit.beta_h2 = beta_h2;
                    let hessian = if R::SOLVE == Solve::Stiff {
                        R::implicit_hessian(model, &end.q, &mut end.implicit_hessian);
                        check_finite_slice(&end.implicit_hessian, "stiff hessian", t)?;
                        &end.implicit_hessian
                    } else {
                        &end.hessian
                    };
                    let matrix = implicit.matrix;
                    let factor = &mut implicit.factors[index];
                    system.factor_implicit(
                        model,
                        &end.q,
                        (beta_h2, hessian),
                        matrix,
                        &mut implicit.values,
                        factor,
                        t,
                    )?;
                    factor
                        .solve_in_place(&mut end.a)
                        .map_err(StepError::linear_algebra(matrix, t))?;
                }
                None => system.mass_solve(&mut end.a, t)?,
            }
            end.a.iter_mut().for_each(|a| *a = -*a);
            check_finite_slice(&end.a, "acceleration", t)?;
        }
        Ok(())
    })();
    lin.valid = result.is_ok();
    *system.linearization_mut() = lin;
    result.map(|()| report)
}

/// The name of the matrix the rule `R` factors, in errors.
fn matrix_name<Model, R>() -> &'static str
where
    Model: ?Sized,
    R: LinearizedRule<Model>,
{
    match R::SOLVE {
        Solve::Stiff => STIFF_MATRIX,
        _ => IMPLICIT_MATRIX,
    }
}

/// What a product reads of the linearized step: the step size and time, its two ends, the two
/// work vectors, the implicit rule's factors (none for Verlet) with `βh²`, and the system
/// whose `M` factor it solves with.
struct Linearized<'a> {
    h: f64,
    t: f64,
    start: &'a End,
    next: &'a End,
    b: &'a mut [f64],
    c: &'a mut [f64],
    implicit: Option<&'a mut Implicit>,
    beta_h2: f64,
    system: &'a mut CarriedSparse,
}

/// Runs `body` on the scheme's linearization after checking that it is the last step's, of
/// `model`, and that the product's `vectors` (its four state-sized slices) and `parameters`
/// (its parameter-sized slice) have the model's lengths; the linearization is taken out of the
/// system for the call and put back after it, whatever the result.
fn with_linearized<Model, R>(
    scheme: &mut CarriedScheme<CarriedSparse, R>,
    model: &Model,
    product: Product,
    vectors: [usize; 4],
    parameters: usize,
    body: impl FnOnce(Linearized<'_>) -> Result<(), StepError>,
) -> Result<(), StepError>
where
    Model: SparseConstantMass + SparsePotentialHessian + ?Sized,
    R: LinearizedRule<Model>,
{
    let h = scheme.h;
    let system = &mut scheme.system;
    let mut lin = mem::take(system.linearization_mut());
    let result = (|| {
        check_linearized(&lin, model)?;
        check_product_lengths(
            product,
            (lin.ends[0].q.len(), R::parameter_count(model)),
            vectors,
            parameters,
        )?;
        let t = lin.t;
        let Linearization {
            ends: [start, next],
            b,
            c,
            implicit,
            ..
        } = &mut lin;
        let implicit = implicit.as_deref_mut();
        let beta_h2 = implicit.as_ref().map_or(0.0, |i| i.beta_h2);
        body(Linearized {
            h,
            t,
            start,
            next,
            b,
            c,
            implicit,
            beta_h2,
            system: &mut *system,
        })
    })();
    *system.linearization_mut() = lin;
    result
}

/// `J·(δq, δv, δp)`, by the tangent of the module docs.
fn tangent<Model, R>(
    scheme: &mut CarriedScheme<CarriedSparse, R>,
    model: &Model,
    (dq, dv, dp): (&[f64], &[f64], &[f64]),
    (out_q, out_v): (&mut [f64], &mut [f64]),
) -> Result<(), StepError>
where
    Model: SparseConstantMass + SparsePotentialHessian + ?Sized,
    R: LinearizedRule<Model>,
{
    let vectors = [dq.len(), dv.len(), out_q.len(), out_v.len()];
    with_linearized::<Model, R>(scheme, model, Product::Tangent, vectors, dp.len(), |lin| {
        let Linearized {
            h,
            t,
            start,
            next,
            b,
            c,
            mut implicit,
            beta_h2,
            system,
        } = lin;
        // −δa = S⁻¹ (B δq + Σ δp b), in b.
        b.fill(0.0);
        add_linearized_force::<Model, R>(model, start, implicit.as_deref_mut(), 1.0, dq, b);
        R::add_parameter_force(model, start, beta_h2, dp, b)?;
        solve(system, implicit.as_deref_mut(), 0, b, t)?;
        for ((out, (dq, dv)), da) in out_q.iter_mut().zip(dq.iter().zip(dv)).zip(b.iter()) {
            *out = dq + h * dv - 0.5 * h * h * da;
        }
        // −δa' = S'⁻¹ (B' δq' + Σ δp b'), in c.
        c.fill(0.0);
        add_linearized_force::<Model, R>(model, next, implicit.as_deref_mut(), 1.0, out_q, c);
        R::add_parameter_force(model, next, beta_h2, dp, c)?;
        solve(system, implicit, 1, c, t)?;
        for ((out, dv), (da, da_next)) in out_v.iter_mut().zip(dv).zip(b.iter().zip(c.iter())) {
            *out = dv - 0.5 * h * (da + da_next);
        }
        check_finite_slice(out_q, "tangent q", t)?;
        check_finite_slice(out_v, "tangent v", t)
    })
}

/// `Jᵀ·(w_q, w_v)`, by the adjoint of the module docs; adds the parameters' part to
/// `gradient` (nothing for an empty one).
fn adjoint<Model, R>(
    scheme: &mut CarriedScheme<CarriedSparse, R>,
    model: &Model,
    (w_q, w_v): (&[f64], &[f64]),
    (out_q, out_v): (&mut [f64], &mut [f64]),
    gradient: &mut [f64],
) -> Result<(), StepError>
where
    Model: SparseConstantMass + SparsePotentialHessian + ?Sized,
    R: LinearizedRule<Model>,
{
    let vectors = [w_q.len(), w_v.len(), out_q.len(), out_v.len()];
    let parameters = gradient.len();
    with_linearized::<Model, R>(
        scheme,
        model,
        Product::Adjoint,
        vectors,
        parameters,
        |lin| {
            let Linearized {
                h,
                t,
                start,
                next,
                b,
                c,
                mut implicit,
                beta_h2,
                system,
            } = lin;
            // S'⁻¹ω' with ω' = ½h w_v (in c); w̄ = w_q − B' S'⁻¹ω' (in out_q).
            for (c, w) in c.iter_mut().zip(w_v) {
                *c = 0.5 * h * w;
            }
            solve(system, implicit.as_deref_mut(), 1, c, t)?;
            out_q.copy_from_slice(w_q);
            add_linearized_force::<Model, R>(model, next, implicit.as_deref_mut(), -1.0, c, out_q);
            R::subtract_parameter_gradient(model, next, beta_h2, c, gradient)?;
            // S⁻¹ω with ω = ½h² w̄ + ½h w_v (in b); a_q = w̄ − B S⁻¹ω, a_v = h w̄ + w_v.
            for ((b, w_bar), w_v) in b.iter_mut().zip(out_q.iter()).zip(w_v) {
                *b = 0.5 * h * h * w_bar + 0.5 * h * w_v;
            }
            solve(system, implicit.as_deref_mut(), 0, b, t)?;
            for ((out_v, w_bar), w_v) in out_v.iter_mut().zip(out_q.iter()).zip(w_v) {
                *out_v = h * w_bar + w_v;
            }
            add_linearized_force::<Model, R>(model, start, implicit, -1.0, b, out_q);
            R::subtract_parameter_gradient(model, start, beta_h2, b, gradient)?;
            if !gradient.is_empty() {
                check_finite_slice(gradient, "adjoint parameters", t)?;
            }
            check_finite_slice(out_q, "adjoint q", t)?;
            check_finite_slice(out_v, "adjoint v", t)
        },
    )
}

/// Overwrites `x` with `S⁻¹ x` at the step's start (`index` 0) or end (1): `M`'s block factor,
/// or the implicit rule's factor there.
fn solve(
    system: &mut CarriedSparse,
    implicit: Option<&mut Implicit>,
    index: usize,
    x: &mut [f64],
    t: f64,
) -> Result<(), StepError> {
    match implicit {
        Some(implicit) => implicit.factors[index]
            .solve_in_place(x)
            .map_err(StepError::linear_algebra(implicit.matrix, t)),
        None => system.mass_solve(x, t),
    }
}

/// Adds `scale · B u = scale · (Hess V + βh² U‴[a]) u` at `end` to `out` (`Hess V u` alone
/// for Verlet); `U‴[a] u` by the polarization of the module docs.
fn add_linearized_force<Model, R>(
    model: &Model,
    end: &End,
    implicit: Option<&mut Implicit>,
    scale: f64,
    u: &[f64],
    out: &mut [f64],
) where
    Model: SparsePotentialHessian + ?Sized,
    R: LinearizedRule<Model>,
{
    add_symmetric_pattern_times(model.hessian_pattern(), &end.hessian, scale, u, out);
    let Some(implicit) = implicit else { return };
    let norm_u = u.iter().map(|x| x * x).sum::<f64>().sqrt();
    let norm_a = end.a.iter().map(|x| x * x).sum::<f64>().sqrt();
    if norm_u == 0.0 || norm_a == 0.0 {
        return; // U‴[a] u vanishes with a or u.
    }
    let s = norm_a / norm_u;
    for ((plus, minus), (a, u)) in implicit
        .plus
        .iter_mut()
        .zip(implicit.minus.iter_mut())
        .zip(end.a.iter().zip(u))
    {
        *plus = a + s * u;
        *minus = a - s * u;
    }
    // U‴[a] u = (y₊·U‴·y₊ − y₋·U‴·y₋) / (4s), with y± = a ± s u.
    let weight = scale * implicit.beta_h2 / (4.0 * s);
    let Implicit {
        plus,
        minus,
        scratch,
        ..
    } = implicit;
    R::add_third_contraction(model, &end.q, plus, weight, scratch, out);
    R::add_third_contraction(model, &end.q, minus, -weight, scratch, out);
}

/// Adds `Σⱼ δpⱼ (∂ⱼ∇V + Mⱼ a)` at `end` to `out` (nothing for an empty `dp`).
fn add_parameter_force<Model>(model: &Model, end: &End, dp: &[f64], out: &mut [f64])
where
    Model: SparseParameterDerivatives + ?Sized,
{
    if dp.is_empty() {
        return;
    }
    let (q, a) = (&end.q, &end.a);
    model.potential_gradient_parameter_entries(q, &mut |i, j, value| out[i] += dp[j] * value);
    model.mass_parameter_entries(q, &mut |i, k, j, value| out[i] += dp[j] * value * a[k]);
}

/// Subtracts `y·(∂ⱼ∇V + Mⱼ a)` at `end` from `gradient[j]` (nothing for an empty `gradient`).
fn subtract_parameter_gradient<Model>(model: &Model, end: &End, y: &[f64], gradient: &mut [f64])
where
    Model: SparseParameterDerivatives + ?Sized,
{
    if gradient.is_empty() {
        return;
    }
    let (q, a) = (&end.q, &end.a);
    model.potential_gradient_parameter_entries(q, &mut |i, j, value| gradient[j] -= y[i] * value);
    model.mass_parameter_entries(q, &mut |i, k, j, value| gradient[j] -= y[i] * value * a[k]);
}

/// Returns `InvalidModel` unless the last step was linearized, for `model`, then the step's
/// parameter check (`check_sparse_parameters`: a non-finite family member by its index, an
/// invalid parameter).
fn check_linearized<Model>(lin: &Linearization, model: &Model) -> Result<(), StepError>
where
    Model: SparseConstantMass + ?Sized,
{
    if !lin.valid || lin.ends[0].q.len() != model.coordinate_count() {
        return Err(StepError::InvalidModel {
            what: "step Jacobian product",
            index: 0,
            reason: "needs a step taken with `step_linearized` since the last plain step, for this model",
        });
    }
    check_sparse_parameters(model)
}
