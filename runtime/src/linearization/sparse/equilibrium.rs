//! Static equilibria of a sparse-tier model (see [the sparse tier](crate::linearization#the-sparse-tier)).

use super::{amax, dot, SparseLinearizable, System, ZERO};
use crate::linearization::equilibrium::check_settings;
use crate::linearization::{finite, EquilibriumSettings, LinearizationError, Seek, Stability};

/// A static equilibrium `(q, λ)` of a sparse-tier model: `∇V(q) + G(q)ᵀ λ = 0`,
/// `g(q, t) = 0` (the sparse twin of [`Equilibrium`](crate::linearization::Equilibrium)).
#[derive(Clone, Debug, PartialEq)]
pub struct SparseEquilibrium {
    /// The configuration.
    pub q: Vec<f64>,
    /// The multipliers: the static constraint forces, with `Gᵀλ` balancing `∇V`.
    pub lambda: Vec<f64>,
    /// The time it was found at.
    pub t: f64,
    /// The Newton iterations taken.
    pub iterations: usize,
    /// The relative residual reached: the larger of `|∇V + Gᵀλ|∞` over the larger of `|∇V|∞`
    /// and `|Gᵀλ|∞`, and `|g|∞` over `|G|∞ max(1, |q|∞)`, as for the dense
    /// [`Equilibrium::residual`](crate::linearization::Equilibrium::residual).
    pub residual: f64,
    /// Whether it is a minimum of `V` on the manifold, from the inertia of the saddle-point
    /// matrices of `K ∓ ζ M` with `ζ` a relative `1e-9` of the largest `|Kᵢᵢ| / Mᵢᵢ`.
    pub stability: Stability,
}

/// Finds a static equilibrium of a sparse-tier model near `q_guess`.
///
/// With [`Seek::Minimum`] (the default) the iteration descends `V` on the manifold: from `q`
/// on the rows (the guess projected by least-`M`-norm Gauss–Newton steps), with `λ` its
/// multipliers in the `M⁻¹` metric and the force `F = ∇V + Gᵀλ`, the step `δ` solves
///
/// ```text
/// [ K + μ M   Gᵀ ] [ δ ]   [ −F ]
/// [ G         0  ] [ ν ] = [  0 ]
/// ```
///
/// with `μ = 0` (Newton) where the inertia says `K` is positive definite on `ker G`, and else
/// `μ = 2μ₊ + f s`, `μ₊` the first of `f s, 4 f s, 16 f s, …` for which it is (`s` the largest
/// `|Kᵢᵢ| / Mᵢᵢ`, `f` a fraction raised after shortened steps: Levenberg–Marquardt); `q + α δ` is
/// projected back onto the rows and `α` halved until `V` decreases by Armijo's `10⁻⁴` (or,
/// unshifted, the residual does, where `V`'s decrease is below round-off). With [`Seek::Any`],
/// Newton on `(F, g) = 0` in `(q, λ)` finds the stationary point nearest the guess, unstable or
/// not.
///
/// Errors as for [`equilibrium`](crate::linearization::equilibrium), and
/// [`LinearizationError::InvalidModel`] for a model whose patterns do not fit its sizes or
/// whose applied forces do not vanish at rest (the sparse tier has no force Jacobian).
pub fn sparse_equilibrium<S: SparseLinearizable>(
    model: &S,
    q_guess: &[f64],
    settings: &EquilibriumSettings,
) -> Result<SparseEquilibrium, LinearizationError> {
    check_settings(settings)?;
    let mut system = System::new(model, settings.t)?;
    if q_guess.len() != system.n {
        return Err(LinearizationError::InvalidModel {
            reason: format!(
                "the guess has {} coordinates, the model {}",
                q_guess.len(),
                system.n
            ),
        });
    }
    finite("the guess q", q_guess, q_guess)?;
    let mut search = Search::new(&mut system, settings);
    let mut gradient = vec![0.0; search.system.n];
    model.potential_gradient(q_guess, &mut gradient);
    search.force_scale = amax(&gradient);
    let (q, lambda, iterations, residual) = match settings.seek {
        Seek::Minimum => search.descend(q_guess)?,
        Seek::Any => search.newton(q_guess)?,
    };
    let stability = stability(&mut system, &q, &lambda)?;
    Ok(SparseEquilibrium {
        q,
        lambda,
        t: settings.t,
        iterations,
        residual,
        stability,
    })
}

impl SparseEquilibrium {
    /// Checks that `(q, λ)` of this equilibrium still satisfies the equilibrium equations of
    /// `model` to `tolerance` (its fields are public), refitting nothing.
    pub(super) fn check<S: SparseLinearizable>(
        &self,
        system: &mut System<'_, S>,
        tolerance: f64,
    ) -> Result<(), LinearizationError> {
        if self.q.len() != system.n || self.lambda.len() != system.m {
            return Err(LinearizationError::InvalidModel {
                reason: format!(
                    "the equilibrium has {} coordinates and {} multipliers, the model {} and {}",
                    self.q.len(),
                    self.lambda.len(),
                    system.n,
                    system.m
                ),
            });
        }
        let mut gradient = vec![0.0; system.n];
        system.model.potential_gradient(&self.q, &mut gradient);
        let scale = amax(&gradient);
        let residual = residual(system, &self.q, &self.lambda, scale, &mut gradient)?;
        if residual > tolerance {
            return Err(LinearizationError::NotAnEquilibrium {
                residual,
                tolerance,
            });
        }
        Ok(())
    }
}

/// The relative residual of the equilibrium equations at `(q, λ)` (see
/// [`SparseEquilibrium::residual`]); leaves `∇V + Gᵀλ` in `force` and the model's values at
/// `q` in `system`. Applied forces at rest are refused.
fn residual<S: SparseLinearizable>(
    system: &mut System<'_, S>,
    q: &[f64],
    lambda: &[f64],
    force_scale: f64,
    force: &mut [f64],
) -> Result<f64, LinearizationError> {
    system.evaluate(q)?;
    let mut applied = vec![0.0; system.n];
    system
        .model
        .applied_force(q, &vec![0.0; system.n], system.t, &mut applied);
    finite("f_a", &applied, q)?;
    if amax(&applied) != 0.0 {
        return Err(LinearizationError::InvalidModel {
            reason: "the applied forces do not vanish at rest, and the sparse tier has no \
                     Jacobian of them; linearize a fixed-size model instead"
                .into(),
        });
    }
    let mut reaction = vec![0.0; system.n];
    system.jacobian_transpose_times(lambda, &mut reaction);
    system.model.potential_gradient(q, force);
    finite("∇V", force.iter(), q)?;
    let scale = amax(force)
        .max(amax(&reaction))
        .max(force_scale)
        .max(f64::MIN_POSITIVE);
    for (f, r) in force.iter_mut().zip(&reaction) {
        *f += r;
    }
    let length = (amax(&system.jacobian) * amax(q).max(1.0)).max(f64::MIN_POSITIVE);
    Ok((amax(force) / scale).max(amax(&system.g) / length))
}

/// The stability of `(q, λ)` from the inertia of `[K ∓ ζ M, Gᵀ; G, 0]`.
fn stability<S: SparseLinearizable>(
    system: &mut System<'_, S>,
    q: &[f64],
    lambda: &[f64],
) -> Result<Stability, LinearizationError> {
    system.evaluate(q)?;
    system.evaluate_stiffness(q, lambda)?;
    let zeta = ZERO * system.spectral_scale();
    let what = "the saddle-point matrix [K ∓ ζM, Gᵀ; G, 0] of the stability test (redundant \
                constraint rows)";
    let negative = system.count_below(-zeta, what, q)?;
    let zero = system.count_below(zeta, what, q)?.saturating_sub(negative);
    Ok(match (negative, zero) {
        (0, 0) => Stability::Minimum,
        (0, zero) => Stability::Degenerate { zero },
        (negative, zero) => Stability::Unstable { negative, zero },
    })
}

/// The state of an equilibrium iteration.
struct Search<'s, 'a, S> {
    system: &'s mut System<'a, S>,
    settings: &'s EquilibriumSettings,
    /// The size of `∇V` at the guess, a floor for the residual's force scale.
    force_scale: f64,
}

/// What an iteration returns: `q`, `λ`, the iterations taken and the relative residual.
type Found = (Vec<f64>, Vec<f64>, usize, f64);

impl<'s, 'a, S: SparseLinearizable> Search<'s, 'a, S> {
    fn new(system: &'s mut System<'a, S>, settings: &'s EquilibriumSettings) -> Self {
        Search {
            system,
            settings,
            force_scale: 0.0,
        }
    }

    fn not_converged(&self, iterations: usize, residual: f64) -> LinearizationError {
        LinearizationError::NotConverged {
            iterations,
            residual,
            tolerance: self.settings.tolerance,
        }
    }

    /// Projects `q` onto `g(q, t) = 0` by least-`M`-norm Gauss–Newton steps
    /// (`[M, Gᵀ; G, 0] [δ; ν] = [0; −g]`) until `|g|∞ ≤ 10⁻¹⁴ |G|∞ max(1, |q|∞)`; `None` when
    /// 50 steps do not reach it or the matrix is singular.
    fn project(&mut self, q: &[f64]) -> Result<Option<Vec<f64>>, LinearizationError> {
        let system = &mut *self.system;
        let mut q = q.to_vec();
        let (mut step, mut nu) = (vec![0.0; system.n], vec![0.0; system.m]);
        for _ in 0..50 {
            system.evaluate(&q)?;
            if amax(&system.g) <= 1e-14 * amax(&system.jacobian) * amax(&q).max(1.0) {
                return Ok(Some(q));
            }
            if system.factor(1.0, false, "", &q).is_err() {
                return Ok(None);
            }
            let rhs: Vec<f64> = system.g.iter().map(|g| -g).collect();
            system.solve((&vec![0.0; system.n], &rhs), (&mut step, &mut nu), &q)?;
            for (q, d) in q.iter_mut().zip(&step) {
                *q += d;
            }
            if !q.iter().all(|x| x.is_finite()) {
                return Ok(None);
            }
        }
        Ok(None)
    }

    /// The multipliers of `q` in the `M⁻¹` metric: `[M, Gᵀ; G, 0] [x; λ] = [−∇V; 0]` (the
    /// values of `q` evaluated).
    fn multipliers(&mut self, q: &[f64]) -> Result<Vec<f64>, LinearizationError> {
        let system = &mut *self.system;
        system.evaluate(q)?;
        let mut gradient = vec![0.0; system.n];
        system.model.potential_gradient(q, &mut gradient);
        finite("∇V", &gradient, q)?;
        for x in &mut gradient {
            *x = -*x;
        }
        let (mut x, mut lambda) = (vec![0.0; system.n], vec![0.0; system.m]);
        system.factor(
            1.0,
            false,
            "the saddle-point matrix [M, Gᵀ; G, 0] of the multipliers (redundant constraint \
             rows)",
            q,
        )?;
        system.solve((&gradient, &vec![0.0; system.m]), (&mut x, &mut lambda), q)?;
        finite("λ", &lambda, q)?;
        Ok(lambda)
    }

    /// The descent of [`Seek::Minimum`] (see [`sparse_equilibrium`]).
    fn descend(&mut self, q_guess: &[f64]) -> Result<Found, LinearizationError> {
        let n = self.system.n;
        let mut q = self
            .project(q_guess)?
            .ok_or_else(|| LinearizationError::OffManifold {
                q: q_guess.to_vec(),
            })?;
        let mut force = vec![0.0; n];
        let (mut step, mut nu) = (vec![0.0; n], vec![0.0; self.system.m]);
        let mut floor = 1e-3;
        let mut iterations = 0;
        loop {
            let lambda = self.multipliers(&q)?;
            let relative = residual(self.system, &q, &lambda, self.force_scale, &mut force)?;
            if relative <= self.settings.tolerance {
                return Ok((q, lambda, iterations, relative));
            }
            if iterations == self.settings.max_iterations {
                return Err(self.not_converged(iterations, relative));
            }
            iterations += 1;
            let system = &mut *self.system;
            system.evaluate_stiffness(&q, &lambda)?;
            let scale = system.spectral_scale();
            let what = "the saddle-point matrix [K + μM, Gᵀ; G, 0] of the descent (redundant \
                        constraint rows, or a degenerate equilibrium)";
            // Newton's step (μ = 0) where K is positive definite on ker G and no step was cut
            // lately; else μ = 2μ₊ + floor·scale, μ₊ the first of floor·scale, 4 floor·scale, …
            // making K + μ₊M definite on ker G (m negative pivots), so that K + μM is well
            // inside the definite range (Levenberg–Marquardt).
            let mut shift = if floor <= 1e-3 { 0.0 } else { floor * scale };
            if !matches!(system.count_below(-shift, what, &q), Ok(0)) {
                let mut definite = floor * scale;
                let mut tries = 0;
                while !matches!(system.count_below(-definite, what, &q), Ok(0)) {
                    tries += 1;
                    if tries > 60 {
                        return Err(LinearizationError::Singular { what, q });
                    }
                    definite *= 4.0;
                }
                shift = 2.0 * definite + floor * scale;
                if system.count_below(-shift, what, &q)? != 0 {
                    return Err(LinearizationError::Singular { what, q });
                }
            }
            let rhs: Vec<f64> = force.iter().map(|f| -f).collect();
            system.solve((&rhs, &vec![0.0; system.m]), (&mut step, &mut nu), &q)?;
            let slope = dot(&force, &step);
            let value = system.model.potential(&q);
            let mut alpha = 1.0;
            loop {
                let trial: Vec<f64> = q.iter().zip(&step).map(|(q, d)| q + alpha * d).collect();
                let accepted = match self.project(&trial)? {
                    Some(q_try) => {
                        let decreases =
                            self.system.model.potential(&q_try) <= value + 1e-4 * alpha * slope;
                        let smaller = shift == 0.0 && {
                            let l_try = self.multipliers(&q_try)?;
                            let mut f_try = vec![0.0; n];
                            residual(self.system, &q_try, &l_try, self.force_scale, &mut f_try)?
                                < relative
                        };
                        (decreases || smaller).then_some(q_try)
                    }
                    None => None,
                };
                if let Some(q_try) = accepted {
                    q = q_try;
                    break;
                }
                if alpha < 1e-10 {
                    return Err(self.not_converged(iterations, relative));
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

    /// Newton's iteration on `(∇V + Gᵀλ, g) = 0` of [`Seek::Any`], each step halved until the
    /// residual's 2-norm decreases by Armijo's `10⁻⁴`.
    fn newton(&mut self, q_guess: &[f64]) -> Result<Found, LinearizationError> {
        let (n, m) = (self.system.n, self.system.m);
        let mut q = q_guess.to_vec();
        let mut lambda = self.multipliers(&q)?;
        let mut force = vec![0.0; n];
        let mut relative = residual(self.system, &q, &lambda, self.force_scale, &mut force)?;
        let (mut dq, mut dl) = (vec![0.0; n], vec![0.0; m]);
        let mut iterations = 0;
        while relative > self.settings.tolerance {
            if iterations == self.settings.max_iterations {
                return Err(self.not_converged(iterations, relative));
            }
            iterations += 1;
            let system = &mut *self.system;
            system.evaluate_stiffness(&q, &lambda)?;
            system.factor(
                0.0,
                true,
                "the equilibrium's Newton matrix [∇²V + Σλₖ∇²gₖ, Gᵀ; G, 0] (redundant \
                 constraint rows, or a degenerate equilibrium)",
                &q,
            )?;
            let merit = dot(&force, &force) + dot(&system.g, &system.g);
            let rhs_q: Vec<f64> = force.iter().map(|f| -f).collect();
            let rhs_l: Vec<f64> = system.g.iter().map(|g| -g).collect();
            system.solve((&rhs_q, &rhs_l), (&mut dq, &mut dl), &q)?;
            let mut alpha = 1.0;
            loop {
                let q_try: Vec<f64> = q.iter().zip(&dq).map(|(q, d)| q + alpha * d).collect();
                let l_try: Vec<f64> = lambda.iter().zip(&dl).map(|(l, d)| l + alpha * d).collect();
                let mut f_try = vec![0.0; n];
                let r_try = residual(self.system, &q_try, &l_try, self.force_scale, &mut f_try)?;
                let merit_try = dot(&f_try, &f_try) + dot(&self.system.g, &self.system.g);
                if merit_try <= (1.0 - 1e-4 * alpha) * merit || alpha < 1e-6 {
                    (q, lambda, force, relative) = (q_try, l_try, f_try, r_try);
                    break;
                }
                alpha *= 0.5;
            }
        }
        Ok((q, lambda, iterations, relative))
    }
}
