//! The energy-consistent Livens/Gonzalez scheme of Kinon, Betsch and Livens (eq. 30).

use nalgebra::{SMatrix, SVector};

mod jacobian;
mod reduced;

use reduced::Start;

use crate::error::StepError;
use crate::integrators::checks::{check_finite, check_on_manifold, check_parameters, same_bits};
use crate::integrators::newton::{newton_builders, Newton};
use crate::integrators::{Integrator, StepReport};
use crate::model::{HolonomicHessians, Inertia, InertiaGradient, Potential, PotentialHessian};
use crate::state::State;

/// The default relative Newton tolerance of [`Livens`].
pub const DEFAULT_TOLERANCE: f64 = 1e-12;

/// The default maximal number of Newton iterations per step of [`Livens`].
pub const DEFAULT_MAX_ITERATIONS: usize = 25;

/// The default Newton settings.
const DEFAULT_NEWTON: Newton = Newton::preset(DEFAULT_TOLERANCE, DEFAULT_MAX_ITERATIONS);

/// The Livens/Gonzalez energy-momentum scheme for `M` holonomic constraints on `N` coordinates.
///
/// From P. L. Kinon, P. Betsch, *Energy-consistent integration of mechanical systems based on
/// Livens principle* (cited here as Kinon–Betsch–Livens), §5, eq. 28 and 30. The Livens principle keeps velocities `v` and momenta `p` as separate unknowns,
/// so the scheme never inverts the mass matrix `M(q)`, which may depend on `q` and may be
/// singular (Remark 4.1). With `T(q, v) = ½ vᵀ M(q) v`, one step of size `h` solves
///
/// ```text
/// q^{n+1} − q^n = h v^{n+½}                                          (30a)
/// p^{n+1} − p^n = h D̄₁T − h D̄V − h Σ_k λ_k D̄g_k                     (30b)
/// p^{n+½}       = D̄₂T                                                (30c)
/// g(q^{n+1})    = 0                                                  (30d)
/// ```
///
/// with `v^{n+½} = ½ (v^n + v^{n+1})`, `p^{n+½} = ½ (p^n + p^{n+1})`, Gonzalez's discrete
/// gradients (eq. 26) `D̄V = D̄V(q^n, q^{n+1})`, `D̄g_k = D̄g_k(q^n, q^{n+1})`, and the
/// partitioned discrete gradients `(D̄₁T, D̄₂T)` of the kinetic energy over
/// `(q^n, v^n) → (q^{n+1}, v^{n+1})` (eq. 29, see
/// [`KineticDiscreteGradient`](crate::discrete_gradient::KineticDiscreteGradient)). Constraints and their discrete gradients are evaluated at
/// `t^{n+1}` (for scleronomic constraints the time is irrelevant).
///
/// # What is conserved
///
/// The discrete generalized energy (eq. 31)
///
/// ```text
/// E^n = p^n·v^n − ½ v^n·M(q^n) v^n + V(q^n)
/// ```
///
/// is conserved to round-off and Newton tolerance (Proposition 5.4:
/// [`generalized_energy`](Self::generalized_energy)), and the constraints `g(q^{n+1}) = 0` hold
/// to the Newton tolerance at every step. The total energy `½ v·M v + V` (eq. 35) equals `E`
/// only if `p = M v`, which is the case for a constant mass matrix but *not* in general
/// (Proposition 5.5, Remark 5.6): with a configuration-dependent `M(q)` the momentum produced by
/// the discrete fiber derivative (30c) differs from `M(q^n) v^n`, and the total energy is only
/// approximately conserved (the paper reports increments of order `1e-4` for its spring
/// pendulum, Fig. 7). The momentum `p_i` of a cyclic coordinate `q_i` (one that `T`, `V` and
/// the constraints do not depend on, declared by the models' dependency masks
/// [`Inertia::MASS_DEPENDS_ON`], [`Potential::POTENTIAL_DEPENDS_ON`] and
/// [`Holonomic::CONSTRAINT_DEPENDS_ON`](crate::Holonomic::CONSTRAINT_DEPENDS_ON)) is conserved to
/// round-off: the discrete gradients are formed in the coordinates each function depends on
/// (see [`discrete_gradient`](crate::discrete_gradient), "Masks"), so row `i` of (30b) reads
/// `p_i^{n+1} − p_i^n = 0`. With all-true masks (the default) Gonzalez's correction has a
/// component along `Δq_i` and `p_i` drifts by a second-order truncation error. The scheme is
/// second-order accurate.
///
/// # The carried momentum
///
/// `p^n` is part of the discrete state but [`State`] holds only `(t, q, v)`, so the integrator
/// carries `p^{n+1}` from one step to the next, keyed to the `(q, v)` it belongs to. When the
/// incoming state's `q` or `v` differs bitwise from the key (first step, a state set by hand,
/// another trajectory), `p^n` is initialised from the continuous fiber derivative
/// `p^n = M(q^n) v^n`. The cache does not know the model: after changing a model's parameters
/// between steps call [`reset`](Self::reset). [`momentum`](Self::momentum) returns the carried
/// momentum.
///
/// # Newton's method
///
/// (30a) and (30c) are linear in `v^{n+1}` and `p^{n+1}`, which are eliminated:
/// `v^{n+1} = 2 (q^{n+1} − q^n)/h − v^n` and `p^{n+1} = 2 D̄₂T − p^n`. What remains is the
/// `N + M` system in `x = (q^{n+1}, λ)`
///
/// ```text
/// R(x) = 2 D̄₂T − 2 p^n − h D̄₁T + h D̄V + h D̄Gᵀ λ = 0       (N rows, (30b) with (30c) inserted)
/// g(q^{n+1})                                      = 0       (M rows)
/// ```
///
/// (`D̄G` has the rows `D̄g_kᵀ`), solved by Newton's method with the exact Jacobian
///
/// ```text
/// [ K   B ] [Δq]     [R]      K = 2 ∂_{q1}D̄₂T + (4/h) ∂_{v1}D̄₂T − h ∂_{q1}D̄₁T − 2 ∂_{v1}D̄₁T
/// [ G   0 ] [Δλ] = − [g],         + h ∂_{q1}D̄V + h Σ_k λ_k ∂_{q1}D̄g_k,
///                                 B = h D̄Gᵀ,  G = ∂g/∂q (q^{n+1})
/// ```
///
/// built from [`KineticDiscreteGradient::kinetic_discrete_gradient_jacobians`](crate::discrete_gradient::KineticDiscreteGradient::kinetic_discrete_gradient_jacobians),
/// [`PotentialDiscreteGradientJacobian`](crate::discrete_gradient::PotentialDiscreteGradientJacobian) and [`ConstraintDiscreteGradientJacobians`](crate::discrete_gradient::ConstraintDiscreteGradientJacobians).
///
/// **Block elimination.** The leading part of `K` is `(M(q^n) + M(q^{n+1}))/h`, which is
/// singular when the mass matrix is, so `K` is not inverted as it stands. The first block row is
/// first augmented by `α D̄Gᵀ` times the second (an exact, invertible row operation, so the
/// Newton step is unchanged):
///
/// ```text
/// K̃ = K + α D̄Gᵀ G,   a = −R − α D̄Gᵀ g,   b = −g,    α = max|K| / max|D̄Gᵀ G|
/// ```
///
/// `K̃` is dominated by `(M(q^n) + M(q^{n+1}))/h + α D̄Gᵀ G`, positive definite whenever the
/// constraints fix every massless direction (`ker M ∩ ker G = {0}`, the condition under which the
/// constrained problem is well posed) — the augmented-Lagrangian device of García de Jalón and
/// Gutiérrez. The system is then solved through the Schur complement of `K̃`:
///
/// ```text
/// X = K̃⁻¹ B,   y = K̃⁻¹ a,   S = G X,   Δλ = S⁻¹ (G y − b),   Δq = y − X Δλ
/// ```
///
/// so each iteration factors one `N × N` matrix (`K̃`, by LU: it is not symmetric) and one
/// `M × M` matrix (`S`, LU); for `M = 0` only `K̃ = K` is factored.
///
/// **Round-off.** The unknown Newton iterates on is the increment `Δq = q^{n+1} − q^n`, not
/// `q^{n+1}`: `v^{n+1} = 2 Δq/h − v^n` is formed from the unrounded increment, and only the
/// discrete gradients see the rounded `q^{n+1} = q^n + Δq`. Iterating on `q^{n+1}` would put
/// the rounding of `q^{n+1}` (`ε |q|`, large for a coordinate that grows, such as the azimuth of
/// a spinning pendulum) into `v^{n+1}` amplified by `2/h`, and from there into `R` (through
/// `(4/h) M`), into `p^{n+1}` and into the energy: on the spring pendulum over `10⁴` steps that
/// floor was `2e-12` relative per step in `E` and `7e-11` in `p_φ`, against `3e-14` now.
///
/// The initial guess is `q^{n+1} = q^n + h v^n` with the previous step's multipliers. Newton
/// stops after the first update with
///
/// ```text
/// ‖Δq‖∞ ≤ tol · max(‖q^n‖∞, ‖q^{n+1}‖∞)
/// ```
///
/// and accepts the updated iterate, whose error is `O(‖Δq‖²)` by quadratic convergence; `tol` is
/// [`DEFAULT_TOLERANCE`] = `1e-12` (relative) unless set by
/// [`with_tolerance`](Self::with_tolerance). The test is on the update rather than on the
/// residual because `R` carries the round-off of `q^{n+1}` amplified by `(4/h) M` (through
/// `v^{n+1} = 2 (q^{n+1} − q^n)/h − v^n`), a floor that a relative residual test can sit above
/// for small `h`. Only `q^{n+1}` enters the new state (`v^{n+1}`, `p^{n+1}` follow from it), so
/// no separate test on `λ` is needed. After [`DEFAULT_MAX_ITERATIONS`] = `25` updates (or
/// [`with_max_iterations`](Self::with_max_iterations)) without convergence, or when a residual
/// is not finite, the step fails with [`StepError::NewtonDiverged`], whose `residual` is the
/// larger of the relative residuals
///
/// ```text
/// ‖R‖∞ / max_i (2|p^n_i| + 2|D̄₂T_i| + h|D̄₁T_i| + h|D̄V_i| + h Σ_k |λ_k D̄g_{k,i}|)
/// ‖g‖∞ / max(‖G‖∞ ‖q^{n+1}‖∞, f64::MIN_POSITIVE)
/// ```
///
/// at the last iterate; a singular `K̃` or `S` fails with [`StepError::Singular`]. On any error
/// the state, the carried momentum and the multipliers are unchanged.
///
/// **Initial state.** A state the scheme did not produce itself (the first step, or after
/// [`reset`](Self::reset) or a change of `q` or `v`) must satisfy `g(q) = 0` to the Newton
/// tolerance (`|g_i| ≤ tol·(1 + s)`, `s = maxᵢ Σⱼ |Gᵢⱼ qⱼ|`), else the step fails with
/// [`StepError::OffManifold`]: enforcing `g(q^{n+1}) = 0` from an offset `δ` would make
/// `v^{n+1} = 2Δq/h − v^n` jump by about `2δ/h` (an offset of 0.1 at `h = 0.01` is an energy
/// error of order 100). The state is not projected silently.
///
/// For a constant mass matrix its step is differentiated exactly in the state
/// ([`DifferentiableStep`](crate::DifferentiableStep)): the reduced system above at the
/// converged `(q^{n+1}, λ)`, by the implicit function theorem, with the step's Newton matrix.
///
/// Unconstrained models use `M = 0`: they must implement
/// [`Holonomic<N, 0>`](crate::Holonomic) and [`HolonomicHessians<N, 0>`] (with empty bodies).
#[derive(Clone, Copy, Debug)]
pub struct Livens<const N: usize, const M: usize> {
    h: f64,
    newton: Newton,
    /// `(q, v, p)` of the last successful step's end state.
    carried: Option<Carried<N>>,
    multipliers: SVector<f64, M>,
    /// `½ (λ_{n−½} + λ_{n+½})` of the last step, if it continued the step before.
    averaged_multipliers: Option<SVector<f64, M>>,
}

/// The momentum `p^{n+1}` produced by a step, with the `(q, v)` it belongs to.
#[derive(Clone, Copy, Debug)]
struct Carried<const N: usize> {
    q: SVector<f64, N>,
    v: SVector<f64, N>,
    p: SVector<f64, N>,
}

/// Returns the largest absolute entry of `x` (0 for an empty matrix).
fn max_abs<const R: usize, const C: usize>(x: &SMatrix<f64, R, C>) -> f64 {
    x.iter().fold(0.0, |m, c| m.max(c.abs()))
}

impl<const N: usize, const M: usize> Livens<N, M> {
    /// Creates the scheme with step size `h`, tolerance [`DEFAULT_TOLERANCE`] and at most
    /// [`DEFAULT_MAX_ITERATIONS`] Newton iterations; fails with `BadStepSize` unless `h` is a
    /// positive finite number.
    pub fn new(h: f64) -> Result<Self, StepError> {
        if !(h.is_finite() && h > 0.0) {
            return Err(StepError::BadStepSize { h });
        }
        Ok(Livens {
            h,
            newton: DEFAULT_NEWTON,
            carried: None,
            multipliers: SVector::zeros(),
            averaged_multipliers: None,
        })
    }

    /// Returns the step size `h`.
    pub fn step_size(&self) -> f64 {
        self.h
    }

    /// Returns the multipliers `λ` of the last successful step (eq. 30b): the constraint force
    /// over the step is `−Σ_k λ_k D̄g_k`, with the sign of `ṗ = … − Gᵀλ` (eq. 21b).
    ///
    /// **Accuracy.** `λ` of the step from `t_n` to `t_{n+1}` is a **first-order**
    /// approximation of the exact multiplier at `t_{n+½}`: the constraint is imposed at the
    /// step's end points only, which leaves an `O(h)` error that alternates in sign from step
    /// to step (a period-two mode; measured on the pendulum's rod tension in
    /// `tests/it/multipliers.rs`). The mean of two consecutive steps cancels it:
    /// [`averaged_multipliers`](Self::averaged_multipliers) is second order.
    ///
    /// **Floor.** `λ` is a difference of momenta over `h`, and `v^{n+1} = 2Δq/h − v^n` a
    /// difference of positions over `h`, so an error `δ` in `q^{n+1}` (the round-off `ε|q|` of
    /// `q^{n+1}`, and Newton's stopping error, see "Newton's method") reaches `λ` amplified by
    /// about `4|M|/h²`. Below some `h` that floor, not the `O(h)` or `O(h²)` truncation error,
    /// limits the multiplier (not the positions): on the pendulum of `tests/it/multipliers.rs`
    /// (`|M| = 1.5`, `|q| = 0.8`) at `h = 1e-5` the averaged multiplier's error is `4e-7` with
    /// the default tolerance `1e-12` and `2.5e-6` with `1e-9`, against a truncation error of
    /// `3e-9`. For accurate constraint forces at small `h`, keep `tol ≲ h² · accuracy / (|M| |q|)`
    /// and expect no better than `ε |M| |q| / h²`.
    pub fn multipliers(&self) -> &SVector<f64, M> {
        &self.multipliers
    }

    /// Returns `½ (λ_{n−½} + λ_{n+½})`, the mean of the multipliers of the last two steps: a
    /// **second-order** approximation of the exact multiplier at `t_n`, the start time of the
    /// last successful step (same sign convention as [`multipliers`](Self::multipliers), same
    /// floor). `None` unless that step started from the end state (bit for bit) of the step
    /// before it.
    pub fn averaged_multipliers(&self) -> Option<&SVector<f64, M>> {
        self.averaged_multipliers.as_ref()
    }

    /// Returns the momentum `p^{n+1}` carried from the last successful step, or `None` before
    /// the first step or after [`reset`](Self::reset). In general it differs from `M(q) v`
    /// (Proposition 5.5).
    pub fn momentum(&self) -> Option<&SVector<f64, N>> {
        self.carried.as_ref().map(|c| &c.p)
    }

    /// Returns the momentum `p^n` a step from `state` would start from: the carried momentum if
    /// `state` is the end state of the last step (bitwise in `q` and `v`), else `M(q) v`.
    pub fn momentum_at<Model: Inertia<N>>(
        &self,
        model: &Model,
        state: &State<N>,
    ) -> SVector<f64, N> {
        match &self.carried {
            Some(c) if same_bits(&c.q, &state.q) && same_bits(&c.v, &state.v) => c.p,
            _ => {
                let mut mass = SMatrix::<f64, N, N>::zeros();
                model.mass_matrix(&state.q, &mut mass);
                mass * state.v
            }
        }
    }

    /// Returns the discrete generalized energy (eq. 31) `E = p·v − ½ v·M(q) v + V(q)` of
    /// `state`, with `p` from [`momentum_at`](Self::momentum_at); conserved by the scheme
    /// (Proposition 5.4).
    pub fn generalized_energy<Model: Inertia<N> + Potential<N>>(
        &self,
        model: &Model,
        state: &State<N>,
    ) -> f64 {
        let p = self.momentum_at(model, state);
        let mut mass = SMatrix::<f64, N, N>::zeros();
        model.mass_matrix(&state.q, &mut mass);
        p.dot(&state.v) - 0.5 * state.v.dot(&(mass * state.v)) + model.potential(&state.q)
    }

    /// Returns whether `state` is the end state of the last step (bitwise in `q` and `v`).
    fn is_carried(&self, state: &State<N>) -> bool {
        matches!(&self.carried, Some(c) if same_bits(&c.q, &state.q) && same_bits(&c.v, &state.v))
    }

    /// Forgets the carried momentum and multipliers, so the next step starts from `p = M(q) v`.
    pub fn reset(&mut self) {
        self.carried = None;
        self.multipliers = SVector::zeros();
        self.averaged_multipliers = None;
    }
}

#[diagnostic::do_not_recommend]
impl<Model, const N: usize, const M: usize> Integrator<Model, N> for Livens<N, M>
where
    Model: InertiaGradient<N> + PotentialHessian<N> + HolonomicHessians<N, M>,
{
    crate::checkpoint::carried_access!();

    fn step(&mut self, model: &Model, state: &mut State<N>) -> Result<StepReport, StepError> {
        check_parameters(model)?;
        let t = state.t;
        if !t.is_finite() {
            return Err(StepError::NonFinite {
                quantity: "t",
                index: 0,
                t,
            });
        }
        check_finite(&state.q, "q", t)?;
        check_finite(&state.v, "v", t)?;
        let continued = self.is_carried(state);
        if !continued {
            // A state this scheme did not produce must already satisfy g(q) = 0.
            let mut g = SVector::<f64, M>::zeros();
            let mut jac = SMatrix::<f64, M, N>::zeros();
            model.constraints_and_jacobian(&state.q, t, &mut g, &mut jac);
            check_finite(&jac, "constraint jacobian", t)?;
            check_on_manifold(&g, &jac, &state.q, self.newton.tolerance(), t)?;
        }
        let p0 = self.momentum_at(model, state);
        check_finite(&p0, "p", t)?;
        let h = self.h;
        let start = Start {
            q0: &state.q,
            v0: &state.v,
            p0: &p0,
            h,
            t1: t + h,
        };

        // The unknown is the increment Δq = q^{n+1} − q^n (see "Round-off" in the type docs).
        let mut increment = state.v * h;
        let mut lambda = if self.multipliers.iter().all(|x| x.is_finite()) {
            self.multipliers
        } else {
            SVector::zeros()
        };
        let mut factorizations = 0;
        let mut iterations = 0;
        let res = loop {
            let res = start.residual(model, &increment, &lambda);
            if iterations == self.newton.max_iterations() || !res.relative.is_finite() {
                return Err(StepError::NewtonDiverged {
                    iterations,
                    residual: res.relative,
                    t,
                });
            }
            let (delta_q, delta_lambda, count) = start.newton_update(model, &lambda, &res, t)?;
            factorizations += count;
            iterations += 1;
            let scale_q = max_abs(start.q0)
                .max(max_abs(&res.q1))
                .max(f64::MIN_POSITIVE);
            increment += delta_q;
            lambda += delta_lambda;
            if max_abs(&delta_q) <= self.newton.tolerance() * scale_q {
                // Quadratic convergence: the error of the updated iterate is O(|Δq|²).
                let res = start.residual(model, &increment, &lambda);
                if !res.relative.is_finite() {
                    return Err(StepError::NewtonDiverged {
                        iterations,
                        residual: res.relative,
                        t,
                    });
                }
                break res;
            }
        };

        let (q1, p1) = (res.q1, res.d2 * 2.0 - p0);
        check_finite(&q1, "q", t)?;
        check_finite(&res.v1, "v", t)?;
        check_finite(&p1, "p", t)?;
        check_finite(&lambda, "multipliers", t)?;
        state.q = q1;
        state.v = res.v1;
        state.t = t + h;
        self.averaged_multipliers = continued.then(|| (self.multipliers + lambda) * 0.5);
        self.multipliers = lambda;
        self.carried = Some(Carried {
            q: q1,
            v: res.v1,
            p: p1,
        });
        Ok(StepReport {
            factorizations,
            newton_iterations: iterations as u32,
        })
    }
}

/// The momentum `p` of the last step with the `(q, v)` it belongs to (recomputing it from
/// `M(q) v` would not give the same bits), the multipliers and the averaged ones.
impl<const N: usize, const M: usize> crate::checkpoint::CarriedState for Livens<N, M> {
    fn identity(&self) -> crate::checkpoint::IntegratorIdentity {
        crate::checkpoint::IntegratorIdentity::new(format!("Livens<{N}, {M}>"))
            .setting("h", self.h)
            .setting("tolerance", self.newton.tolerance())
            .setting("max_iterations", self.newton.max_iterations() as f64)
    }

    fn save(&self, out: &mut crate::checkpoint::Carried) {
        out.put_flag("carried", self.carried.is_some());
        let zero = SVector::<f64, N>::zeros();
        let (q, v, p) = self
            .carried
            .as_ref()
            .map_or((zero, zero, zero), |c| (c.q, c.v, c.p));
        out.put("carried.q", q.as_slice());
        out.put("carried.v", v.as_slice());
        out.put("carried.p", p.as_slice());
        out.put("multipliers", self.multipliers.as_slice());
        out.put_flag("averaged", self.averaged_multipliers.is_some());
        let averaged = self.averaged_multipliers.unwrap_or_else(SVector::zeros);
        out.put("averaged_multipliers", averaged.as_slice());
    }

    fn restore(
        &mut self,
        from: &crate::checkpoint::Carried,
    ) -> Result<(), crate::checkpoint::CheckpointError> {
        let carried = from.flag("carried")?.then_some(());
        let q = SVector::from_column_slice(from.values("carried.q", N)?);
        let v = SVector::from_column_slice(from.values("carried.v", N)?);
        let p = SVector::from_column_slice(from.values("carried.p", N)?);
        let multipliers = SVector::from_column_slice(from.values("multipliers", M)?);
        let averaged = from.flag("averaged")?;
        let averaged_multipliers =
            SVector::from_column_slice(from.values("averaged_multipliers", M)?);
        self.carried = carried.map(|()| Carried { q, v, p });
        self.multipliers = multipliers;
        self.averaged_multipliers = averaged.then_some(averaged_multipliers);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_bad_parameters() {
        for h in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let err = Livens::<3, 1>::new(h).unwrap_err();
            assert!(matches!(err, StepError::BadStepSize { h: x } if x.to_bits() == h.to_bits()));
        }
        let livens = Livens::<3, 1>::new(0.1).unwrap();
        assert!(matches!(
            livens.with_tolerance(0.0).unwrap_err(),
            StepError::BadParameter {
                name: "tolerance",
                ..
            }
        ));
        assert!(matches!(
            livens.with_max_iterations(0).unwrap_err(),
            StepError::BadParameter {
                name: "max_iterations",
                ..
            }
        ));
    }
}

newton_builders!(
    [const N: usize, const M: usize] Livens<N, M>,
    newton,
    "The stopping rule and the tolerance the starting state must meet on the manifold are in the type docs of [`Livens`].",
    "1e-12",
    "25"
);
