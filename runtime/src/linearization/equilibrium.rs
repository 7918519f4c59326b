//! Static equilibria on the constraint manifold: a descent of `V` on the manifold to a minimum,
//! or Newton's iteration on the equilibrium equations for any stationary point.

use nalgebra::{DMatrix, DVector, SMatrix, SVector};

use super::stiffness::{tangent_space, Stability, Stiffness};
use super::{finite, LinearizationError};
use crate::model::{AppliedForces, HolonomicHessians, PotentialHessian};

/// Which equilibria [`equilibrium`] looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Seek {
    /// A minimum of `V` on the manifold, where the mechanism rests: a descent on the manifold
    /// whose step is Newton's in the tangent space where the reduced Hessian is positive
    /// definite and a shifted (Levenberg–Marquardt) one where it is not, each projected back
    /// onto the rows and halved until `V` decreases. Forces at rest (`f_a(q, 0, t) ≠ 0` at the
    /// guess) have no potential to descend: then the iteration is [`Seek::Any`]'s.
    Minimum,
    /// Any stationary point nearest the guess, a maximum or a saddle as readily as a minimum
    /// (e.g. an inverted pendulum): Newton's method, each step halved until `|F|₂` decreases.
    Any,
}

/// The settings of [`equilibrium`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EquilibriumSettings {
    /// Which equilibria to look for.
    pub seek: Seek,
    /// The time at which rheonomic rows and forces are evaluated.
    pub t: f64,
    /// The relative residual to reach ([`Equilibrium::residual`]).
    pub tolerance: f64,
    /// The Newton iterations allowed.
    pub max_iterations: usize,
}

impl Default for EquilibriumSettings {
    /// A minimum at `t = 0`, to a relative residual of `1e-12` within 100 iterations.
    fn default() -> Self {
        EquilibriumSettings {
            seek: Seek::Minimum,
            t: 0.0,
            tolerance: 1e-12,
            max_iterations: 100,
        }
    }
}

/// A static equilibrium `(q, λ)`: `∇V(q) + G(q)ᵀ λ = f_a(q, 0, t)`, `g(q, t) = 0`.
#[derive(Clone, Debug, PartialEq)]
pub struct Equilibrium<const N: usize, const M: usize> {
    /// The configuration.
    pub q: SVector<f64, N>,
    /// The multipliers: the static constraint forces, with `Gᵀλ` balancing `∇V − f_a`.
    pub lambda: SVector<f64, M>,
    /// The time it was found at.
    pub t: f64,
    /// The Newton iterations taken.
    pub iterations: usize,
    /// The relative residual reached: the larger of `|∇V + Gᵀλ − f_a|∞` over the largest of
    /// the balanced forces, and `|g|∞` over `|G|∞ max(1, |q|∞)` (a length, to first order).
    pub residual: f64,
    /// Whether it is a minimum of `V` on the manifold.
    pub stability: Stability,
}

/// The residual of the equilibrium equations at `(q, λ)`: the stacked vector
/// `(∇V + Gᵀλ − f_a, g)` and its relative size (see [`Equilibrium::residual`]); `force_scale`
/// is a floor for the forces' size (the size of `∇V` at the guess).
pub(super) fn residual<S, const N: usize, const M: usize>(
    model: &S,
    q: &SVector<f64, N>,
    lambda: &SVector<f64, M>,
    t: f64,
    force_scale: f64,
) -> Result<(DVector<f64>, f64), LinearizationError>
where
    S: PotentialHessian<N> + HolonomicHessians<N, M> + AppliedForces<N>,
{
    let mut gradient = SVector::<f64, N>::zeros();
    model.potential_gradient(q, &mut gradient);
    finite("∇V", gradient.iter(), q.as_slice())?;
    let mut g = SVector::<f64, M>::zeros();
    let mut jac = SMatrix::<f64, M, N>::zeros();
    model.constraints_and_jacobian(q, t, &mut g, &mut jac);
    finite("g", g.iter(), q.as_slice())?;
    finite("G", jac.iter(), q.as_slice())?;
    let mut applied = SVector::<f64, N>::zeros();
    model.applied_force(q, &SVector::zeros(), t, &mut applied);
    finite("f_a", applied.iter(), q.as_slice())?;
    let reaction = jac.transpose() * lambda;
    let force = gradient + reaction - applied;
    let scale = gradient
        .amax()
        .max(reaction.amax())
        .max(applied.amax())
        .max(force_scale)
        .max(f64::MIN_POSITIVE);
    let length = (jac.amax() * q.amax().max(1.0)).max(f64::MIN_POSITIVE);
    let relative = (force.amax() / scale).max(g.amax() / length);
    let stacked = DVector::from_iterator(N + M, force.iter().chain(g.iter()).copied());
    Ok((stacked, relative))
}

/// Finds a static equilibrium on the constraint manifold near `q_guess`.
///
/// A Newton iteration on `F(q, λ) = (∇V + Gᵀλ − f_a(q, 0, t), g(q, t)) = 0` with the
/// Jacobian
///
/// ```text
/// [ K   Gᵀ ]      K = ∇²V + Σₖ λₖ ∇²gₖ − ∂f_a/∂q,
/// [ G   0  ]
/// ```
///
/// from `λ` fitted by least squares at the guess (`G Gᵀ λ = G (f_a − ∇V)`), each step halved
/// until `|F|₂` decreases: this is [`Seek::Any`], which converges to the stationary point
/// whose basin holds the guess, a maximum as readily as a minimum. With [`Seek::Minimum`]
/// (the default) the iteration instead descends `V` on the manifold (`descend` below), so
/// that from a guess anywhere in a minimum's basin of attraction it lands where the
/// mechanism rests. [`Equilibrium::stability`] says which kind it found.
///
/// Errors: the iteration limit without reaching the tolerance
/// ([`LinearizationError::NotConverged`]), a guess that cannot be brought onto the rows
/// ([`LinearizationError::OffManifold`]), a singular Newton matrix or reduced Hessian
/// (redundant rows or a degenerate point, [`LinearizationError::Singular`]), a non-finite
/// model value, a bad setting.
pub fn equilibrium<S, const N: usize, const M: usize>(
    model: &S,
    q_guess: &SVector<f64, N>,
    settings: &EquilibriumSettings,
) -> Result<Equilibrium<N, M>, LinearizationError>
where
    S: PotentialHessian<N> + HolonomicHessians<N, M> + AppliedForces<N>,
{
    check_settings(settings)?;
    finite("the guess q", q_guess.iter(), q_guess.as_slice())?;
    let t = settings.t;
    let mut gradient = SVector::<f64, N>::zeros();
    model.potential_gradient(q_guess, &mut gradient);
    let force_scale = gradient.amax();
    let mut applied = SVector::<f64, N>::zeros();
    model.applied_force(q_guess, &SVector::zeros(), t, &mut applied);
    let (q, lambda, iterations, relative) = match settings.seek {
        Seek::Minimum if applied.amax() == 0.0 => descend(model, q_guess, settings, force_scale)?,
        _ => newton(model, q_guess, settings, force_scale)?,
    };
    let stability = Stiffness::new(model, &q, &lambda, t)?.stability();
    Ok(Equilibrium {
        q,
        lambda,
        t,
        iterations,
        residual: relative,
        stability,
    })
}

/// Returns `Err(BadSetting)` for a tolerance outside `(0, 1)` or a non-finite time.
pub(super) fn check_settings(settings: &EquilibriumSettings) -> Result<(), LinearizationError> {
    if !(settings.tolerance > 0.0 && settings.tolerance < 1.0) {
        return Err(LinearizationError::BadSetting {
            name: "tolerance",
            value: settings.tolerance,
            requirement: "a relative residual in (0, 1)",
        });
    }
    if !settings.t.is_finite() {
        return Err(LinearizationError::BadSetting {
            name: "t",
            value: settings.t,
            requirement: "a finite time",
        });
    }
    Ok(())
}

/// The least-squares multipliers `G Gᵀ λ = G (f_a − ∇V)` at `q` (zero where `G Gᵀ` is
/// singular: Newton then finds them).
fn multipliers<S, const N: usize, const M: usize>(
    model: &S,
    q: &SVector<f64, N>,
    t: f64,
) -> Result<SVector<f64, M>, LinearizationError>
where
    S: PotentialHessian<N> + HolonomicHessians<N, M> + AppliedForces<N>,
{
    if M == 0 {
        return Ok(SVector::zeros());
    }
    let mut gradient = SVector::<f64, N>::zeros();
    model.potential_gradient(q, &mut gradient);
    let mut applied = SVector::<f64, N>::zeros();
    model.applied_force(q, &SVector::zeros(), t, &mut applied);
    let mut jac = SMatrix::<f64, M, N>::zeros();
    model.constraint_jacobian(q, t, &mut jac);
    let lambda =
        least_squares_multipliers(&jac, &(gradient - applied)).unwrap_or_else(SVector::zeros);
    finite("λ", lambda.iter(), q.as_slice())?;
    Ok(lambda)
}

/// The least-squares `λ` of `Gᵀ λ = −f`: `G Gᵀ λ = −G f`, or `None` where `G Gᵀ` is singular.
pub(super) fn least_squares_multipliers<const N: usize, const M: usize>(
    jacobian: &SMatrix<f64, M, N>,
    force: &SVector<f64, N>,
) -> Option<SVector<f64, M>> {
    if M == 0 {
        return Some(SVector::zeros());
    }
    let g = DMatrix::from_column_slice(M, N, jacobian.as_slice());
    let rhs = -(&g * DMatrix::from_column_slice(N, 1, force.as_slice()));
    let lambda = (&g * g.transpose()).lu().solve(&rhs)?;
    lambda
        .iter()
        .all(|x| x.is_finite())
        .then(|| SVector::from_iterator(lambda.iter().copied()))
}

/// What an iteration returns: `q`, `λ`, the iterations taken and the relative residual.
type Found<const N: usize, const M: usize> = (SVector<f64, N>, SVector<f64, M>, usize, f64);

/// Newton's iteration on `F(q, λ) = 0` with the matrix `[K, Gᵀ; G, 0]` (fully pivoted LU), each
/// step halved until `|F|₂` decreases by Armijo's `10⁻⁴` ([`Seek::Any`]).
fn newton<S, const N: usize, const M: usize>(
    model: &S,
    q_guess: &SVector<f64, N>,
    settings: &EquilibriumSettings,
    force_scale: f64,
) -> Result<Found<N, M>, LinearizationError>
where
    S: PotentialHessian<N> + HolonomicHessians<N, M> + AppliedForces<N>,
{
    let t = settings.t;
    let mut q = *q_guess;
    let mut lambda = multipliers(model, &q, t)?;
    let (mut f, mut relative) = residual(model, &q, &lambda, t, force_scale)?;
    let mut iterations = 0;
    while relative > settings.tolerance {
        if iterations == settings.max_iterations {
            return Err(not_converged(iterations, relative, settings));
        }
        iterations += 1;
        let stiffness = Stiffness::new(model, &q, &lambda, t)?;
        let mut jacobian = DMatrix::<f64>::zeros(N + M, N + M);
        jacobian
            .view_mut((0, 0), (N, N))
            .copy_from(&stiffness.stiffness);
        jacobian
            .view_mut((0, N), (N, M))
            .copy_from(&stiffness.jacobian.transpose());
        jacobian
            .view_mut((N, 0), (M, N))
            .copy_from(&stiffness.jacobian);
        let step = jacobian
            .full_piv_lu()
            .solve(&(-&f))
            .filter(|s| s.iter().all(|x| x.is_finite()))
            .ok_or_else(|| LinearizationError::Singular {
                what: "the equilibrium's Newton matrix [∇²V + Σλₖ∇²gₖ − ∂f_a/∂q, Gᵀ; G, 0] \
                       (redundant constraint rows, or a degenerate equilibrium)",
                q: q.as_slice().to_vec(),
            })?;
        let dq = SVector::<f64, N>::from_iterator(step.iter().take(N).copied());
        let dl = SVector::<f64, M>::from_iterator(step.iter().skip(N).copied());
        let merit = f.norm_squared();
        let mut alpha = 1.0;
        loop {
            let (q_try, l_try) = (q + alpha * dq, lambda + alpha * dl);
            let (f_try, relative_try) = residual(model, &q_try, &l_try, t, force_scale)?;
            if f_try.norm_squared() <= (1.0 - 1e-4 * alpha) * merit || alpha < 1e-6 {
                (q, lambda, f, relative) = (q_try, l_try, f_try, relative_try);
                break;
            }
            alpha *= 0.5;
        }
    }
    Ok((q, lambda, iterations, relative))
}

/// Descends `V` on the manifold to a minimum ([`Seek::Minimum`]): from `q` on the manifold
/// (the guess projected, [`project`]), with `λ` its least-squares multipliers, the reduced
/// gradient `r = Tᵀ ∇V` and Hessian `H = Tᵀ (∇²V + Σ λₖ ∇²gₖ) T` (the Riemannian Hessian of
/// `V` on the manifold, Absil, Mahony & Sepulchre, *Optimization Algorithms on Matrix
/// Manifolds*, §5.5), the step `y = −(H + σ I)⁻¹ r` along the tangent, projected back onto the
/// manifold, halved until `V` decreases by Armijo's `10⁻⁴` (or, unshifted, `|r|` does, where
/// `V`'s decrease is below its round-off). The shift `σ` is zero where `H` is positive
/// definite — Newton's step, quadratic convergence — and else follows Levenberg–Marquardt's
/// rule: the smallest making `H + σ I`'s smallest eigenvalue a fraction of its largest, the
/// fraction growing when a step had to be shortened.
fn descend<S, const N: usize, const M: usize>(
    model: &S,
    q_guess: &SVector<f64, N>,
    settings: &EquilibriumSettings,
    force_scale: f64,
) -> Result<Found<N, M>, LinearizationError>
where
    S: PotentialHessian<N> + HolonomicHessians<N, M> + AppliedForces<N>,
{
    let t = settings.t;
    let mut q = project(model, q_guess, t)?.ok_or(LinearizationError::OffManifold {
        q: q_guess.as_slice().to_vec(),
    })?;
    let mut floor = 1e-3;
    let mut iterations = 0;
    loop {
        let lambda = multipliers(model, &q, t)?;
        let (_, relative) = residual(model, &q, &lambda, t, force_scale)?;
        if relative <= settings.tolerance {
            return Ok((q, lambda, iterations, relative));
        }
        if iterations == settings.max_iterations {
            return Err(not_converged(iterations, relative, settings));
        }
        iterations += 1;
        let stiffness = Stiffness::new(model, &q, &lambda, t)?;
        let gradient = reduced_gradient(model, &q, &stiffness.tangent);
        let hessian = stiffness.reduced();
        let eigenvalues = nalgebra::SymmetricEigen::new(hessian.clone()).eigenvalues;
        let scale = eigenvalues.amax().max(f64::MIN_POSITIVE);
        let smallest = eigenvalues.min();
        let shift = if smallest > 0.0 && floor <= 1e-3 {
            0.0
        } else {
            (floor * scale - smallest).max(0.0)
        };
        let d = hessian.nrows();
        let shifted = hessian + DMatrix::<f64>::identity(d, d) * shift;
        let y = shifted
            .cholesky()
            .map(|c| c.solve(&(-&gradient)))
            .filter(|y| y.iter().all(|x| x.is_finite()))
            .ok_or_else(|| LinearizationError::Singular {
                what: "the reduced Hessian of the potential on the manifold, Tᵀ(∇²V + Σλₖ∇²gₖ)T \
                       (a degenerate equilibrium)",
                q: q.as_slice().to_vec(),
            })?;
        let direction = SVector::<f64, N>::from_iterator((&stiffness.tangent * &y).iter().copied());
        let slope = gradient.dot(&y);
        let value = model.potential(&q);
        let size = gradient.norm();
        let mut alpha = 1.0;
        loop {
            let accepted = match project(model, &(q + alpha * direction), t)? {
                Some(q_try) => {
                    let value_try = model.potential(&q_try);
                    let decreases = value_try <= value + 1e-4 * alpha * slope;
                    let r_try = if shift == 0.0 {
                        let (_, tangent) = tangent_space(model, &q_try, t)?;
                        reduced_gradient(model, &q_try, &tangent).norm()
                    } else {
                        f64::INFINITY
                    };
                    (decreases || r_try < size).then_some(q_try)
                }
                None => None,
            };
            if let Some(q_try) = accepted {
                q = q_try;
                break;
            }
            if alpha < 1e-10 {
                return Err(not_converged(iterations, relative, settings));
            }
            alpha *= 0.5;
        }
        floor = if alpha == 1.0 {
            (0.25 * floor).max(1e-3)
        } else {
            floor.max(1e-3) * (1.0 / alpha).min(100.0)
        };
    }
}

/// `Tᵀ ∇V(q)` of a model with the tangent basis `tangent` at `q`.
fn reduced_gradient<S, const N: usize>(
    model: &S,
    q: &SVector<f64, N>,
    tangent: &DMatrix<f64>,
) -> DVector<f64>
where
    S: PotentialHessian<N>,
{
    let mut gradient = SVector::<f64, N>::zeros();
    model.potential_gradient(q, &mut gradient);
    tangent.transpose() * DVector::from_column_slice(gradient.as_slice())
}

/// Projects `q` onto the manifold `g(q, t) = 0` by Gauss–Newton steps of least norm,
/// `q ← q − Gᵀ (G Gᵀ)⁻¹ g`, until `|g|∞` is at most `10⁻¹⁴ |G|∞ max(1, |q|∞)`; `None` when 50
/// steps do not reach it or `G Gᵀ` is singular.
fn project<S, const N: usize, const M: usize>(
    model: &S,
    q: &SVector<f64, N>,
    t: f64,
) -> Result<Option<SVector<f64, N>>, LinearizationError>
where
    S: HolonomicHessians<N, M>,
{
    let mut q = *q;
    if M == 0 {
        return Ok(Some(q));
    }
    let mut g = SVector::<f64, M>::zeros();
    let mut jac = SMatrix::<f64, M, N>::zeros();
    for _ in 0..50 {
        model.constraints_and_jacobian(&q, t, &mut g, &mut jac);
        finite("g", g.iter(), q.as_slice())?;
        finite("G", jac.iter(), q.as_slice())?;
        if g.amax() <= 1e-14 * jac.amax() * q.amax().max(1.0) {
            return Ok(Some(q));
        }
        let jac_d = DMatrix::from_column_slice(M, N, jac.as_slice());
        let normal = &jac_d * jac_d.transpose();
        let Some(mu) = normal
            .lu()
            .solve(&DMatrix::from_column_slice(M, 1, g.as_slice()))
        else {
            return Ok(None);
        };
        let step = jac_d.transpose() * mu;
        q -= SVector::<f64, N>::from_iterator(step.iter().copied());
        if !q.iter().all(|x| x.is_finite()) {
            return Ok(None);
        }
    }
    Ok(None)
}

fn not_converged(
    iterations: usize,
    residual: f64,
    settings: &EquilibriumSettings,
) -> LinearizationError {
    LinearizationError::NotConverged {
        iterations,
        residual,
        tolerance: settings.tolerance,
    }
}
