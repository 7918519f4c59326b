//! Argument and state checks shared by every integrator: each returns the typed error that
//! names what is wrong and where, so that no integrator panics or silently propagates NaN.

use nalgebra::{SMatrix, SVector};

use crate::error::StepError;
use crate::model::{Inertia, SparseInertia};
use crate::state::{DynState, State};

/// Returns `BadStepSize` unless `h` is a positive finite number.
pub(crate) fn check_step_size(h: f64) -> Result<f64, StepError> {
    if h.is_finite() && h > 0.0 {
        Ok(h)
    } else {
        Err(StepError::BadStepSize { h })
    }
}

/// Returns `NonFinite` for the first non-finite component of `x`, named `quantity`.
pub(crate) fn check_finite<const R: usize, const C: usize>(
    x: &SMatrix<f64, R, C>,
    quantity: &'static str,
    t: f64,
) -> Result<(), StepError> {
    check_finite_slice(x.as_slice(), quantity, t)
}

/// Returns `NonFinite` for the first non-finite component of `x`, named `quantity`.
///
/// The test runs without early exit, so that it compiles to a few vector compares and one
/// branch (every step checks its vectors); the index is searched only once something is wrong.
#[inline]
pub(crate) fn check_finite_slice(
    x: &[f64],
    quantity: &'static str,
    t: f64,
) -> Result<(), StepError> {
    if all_finite(x) {
        Ok(())
    } else {
        Err(first_non_finite(x, quantity, t))
    }
}

/// Returns whether every component of `x` is finite, in vectorizable groups
/// ([`all_by_fours`]).
///
/// `c · 0 = 0` exactly for every finite `c` (a signed zero) and is NaN for `±∞` and NaN. That
/// test compiles to a multiplication and a floating-point compare per pair of components;
/// `is_finite()` becomes a 64-bit integer compare of the bits, which SSE2 has no instruction
/// for (about a third more instructions).
#[inline]
pub(crate) fn all_finite(x: &[f64]) -> bool {
    all_by_fours(x, x, |c, _| c * 0.0 == 0.0)
}

/// Returns whether `test(x_i, y_i)` holds for every `i` (`x` and `y` of one length), without
/// early exit within groups of four and, up to [`SHORT`] components, with an early exit
/// between the groups.
///
/// The early exit keeps LLVM from fusing the groups into 512-bit instructions where the target
/// has AVX-512: in a step of the 10-link chain (n = 20), fused tests of `x_{k+1}`, `a_{k+1}`,
/// `v_{k+1}` and the carried `q` made the `-C target-cpu=native` build 1.3× slower than the
/// portable one (177 against 134 ns), the groups 116 ns. Longer vectors branch on too many
/// groups (the 50-link chain, n = 100, 762 → 858 ns portable), so they are tested in one pass.
#[inline(always)]
pub(crate) fn all_by_fours(x: &[f64], y: &[f64], test: impl Fn(f64, f64) -> bool) -> bool {
    let group =
        |(x, y): (&[f64], &[f64])| x.iter().zip(y).fold(true, |all, (&a, &b)| all & test(a, b));
    if x.len() <= SHORT {
        x.chunks(4).zip(y.chunks(4)).all(group)
    } else {
        group((x, y))
    }
}

/// The longest vector that [`all_by_fours`] tests group by group.
const SHORT: usize = 32;

/// Returns `NonFinite` for the first non-finite component of `x` (which has one).
#[cold]
#[inline(never)]
fn first_non_finite(x: &[f64], quantity: &'static str, t: f64) -> StepError {
    let index = x.iter().position(|c| !c.is_finite()).unwrap_or(0);
    StepError::NonFinite { quantity, index, t }
}

/// Returns `NonFinite` if the time or any component of `q` or `v` of `state` is not finite,
/// and `InvalidModel` unless `q` and `v` have the model's `n` components.
pub(crate) fn check_dyn_state(state: &DynState, n: usize) -> Result<(), StepError> {
    for (what, len) in [("state q", state.q.len()), ("state v", state.v.len())] {
        if len != n {
            return Err(StepError::InvalidModel {
                what,
                index: len,
                reason: "its length differs from the model's number of coordinates",
            });
        }
    }
    check_time_and_vectors(state.t, &state.q, &state.v)
}

/// Returns `BadParameter` naming the model's first non-finite parameter
/// ([`Inertia::non_finite_parameter`]), so that the culprit is reported rather than its effect.
pub(crate) fn check_parameters<Model: Inertia<N> + ?Sized, const N: usize>(
    model: &Model,
) -> Result<(), StepError> {
    check_parameter(model.non_finite_parameter())
}

/// Returns `BadParameter` for a non-finite parameter a model reported, by name.
pub(crate) fn check_parameter(found: Option<(&'static str, f64)>) -> Result<(), StepError> {
    match found {
        Some((name, value)) => Err(StepError::BadParameter {
            name,
            value,
            requirement: "a model parameter must be finite",
        }),
        None => Ok(()),
    }
}

/// Returns `BadParameterMember` for the sparse model's first non-finite member of a parameter
/// family ([`SparseInertia::non_finite_member`](crate::model::SparseInertia::non_finite_member)),
/// then `BadParameter` for its first invalid parameter
/// ([`SparseInertia::parameter_violation`](crate::model::SparseInertia::parameter_violation)):
/// a parameter family of the wrong length, a non-finite one, or a cutoff's `on`/`off` out of
/// order.
pub(crate) fn check_sparse_parameters<Model: SparseInertia + ?Sized>(
    model: &Model,
) -> Result<(), StepError> {
    if let Some((family, index, value)) = model.non_finite_member() {
        return Err(StepError::BadParameterMember {
            family,
            index,
            value,
            requirement: "a model parameter must be finite",
        });
    }
    match model.parameter_violation() {
        Some((name, value, requirement)) => Err(StepError::BadParameter {
            name,
            value,
            requirement,
        }),
        None => Ok(()),
    }
}

/// Returns `NonFinite` if the time or any component of `q` or `v` of `state` is not finite.
pub(crate) fn check_state<const N: usize>(state: &State<N>) -> Result<(), StepError> {
    check_time_and_vectors(state.t, state.q.as_slice(), state.v.as_slice())
}

/// Returns `NonFinite` if `t` or any component of `q` or `v` is not finite: the state check of
/// both tiers.
fn check_time_and_vectors(t: f64, q: &[f64], v: &[f64]) -> Result<(), StepError> {
    if !t.is_finite() {
        return Err(StepError::NonFinite {
            quantity: "t",
            index: 0,
            t,
        });
    }
    check_finite_slice(q, "q", t)?;
    check_finite_slice(v, "v", t)
}

/// Returns whether `a` and `b` are equal bit for bit (so `−0.0 ≠ 0.0` and `NaN = NaN`): the
/// test for "is this the state a carried quantity was computed at".
pub(crate) fn same_bits<const R: usize, const C: usize>(
    a: &SMatrix<f64, R, C>,
    b: &SMatrix<f64, R, C>,
) -> bool {
    a.iter()
        .zip(b.iter())
        .all(|(x, y)| x.to_bits() == y.to_bits())
}

/// Returns `Unsupported` unless `Model`'s mass matrix is constant.
///
/// The schemes that step `M v̇ = −∇V + …` with `M` frozen at one configuration (SPOOK,
/// Zhang–Skeel, Newmark, SHAKE, RATTLE, the explicit ones, Cuell's) have no velocity terms
/// `∂T/∂q − Ṁ v`: with a configuration-dependent `M` they would integrate different equations
/// without any other sign of it, so they refuse such a model. The first line is the type
/// system: their impls are bounded on [`ConstantMass`](crate::ConstantMass), which
/// `mechanism!` implements exactly when `CONSTANT_MASS` is true, and `mechanism!` refuses the
/// same families in `integrators: [..]` (both read
/// [`Capabilities::varying_mass`](crate::capabilities::Capabilities::varying_mass)). This
/// check is the second line, kept because a hand-written model declares the two separately and
/// can contradict itself (the marker implemented, the constant false; on the sparse tier,
/// `constant_mass()` is a run-time answer): it costs one constant branch per step.
pub(crate) fn check_constant_mass<Model: crate::model::ConstantMass<N>, const N: usize>(
    integrator: &'static str,
) -> Result<(), StepError> {
    check_mass_is_constant(Model::CONSTANT_MASS, integrator)
}

/// Returns `Unsupported` unless `constant`, with the requirement text of the capability table:
/// [`check_constant_mass`] for a model of either tier.
pub(crate) fn check_mass_is_constant(
    constant: bool,
    integrator: &'static str,
) -> Result<(), StepError> {
    if constant {
        Ok(())
    } else {
        Err(StepError::Unsupported {
            integrator,
            requirement: crate::capabilities::constant_mass_requirement(),
        })
    }
}

/// Returns `OffManifold` for the first row with `|gᵢ(q)| > tolerance · (1 + s)`,
/// `s = maxᵢ Σⱼ |Gᵢⱼ(q)| |qⱼ|` (the size of the first-order terms of `g`, which sets its rounding
/// error): the acceptance test of SHAKE's and RATTLE's Newton iteration, which every state
/// they (and Livens) produce passes. Hard-constraint integrators call it on a state they did not
/// produce themselves, so that an inconsistent initial state is an error, not a velocity jump.
pub(crate) fn check_on_manifold<const N: usize, const M: usize>(
    g: &SVector<f64, M>,
    jac: &SMatrix<f64, M, N>,
    q: &SVector<f64, N>,
    tolerance: f64,
    t: f64,
) -> Result<(), StepError> {
    let scale = jac
        .row_iter()
        .map(|row| row.iter().zip(q.iter()).map(|(a, x)| (a * x).abs()).sum())
        .fold(0.0, f64::max);
    check_residual_on_manifold(g.as_slice(), scale, tolerance, t)
}

/// Returns `OffManifold` for the first row with `|gᵢ| > tolerance · (1 + scale)`, `scale` being
/// `s` of [`check_on_manifold`] computed by the caller (for any storage of `G`).
pub(crate) fn check_residual_on_manifold(
    g: &[f64],
    scale: f64,
    tolerance: f64,
    t: f64,
) -> Result<(), StepError> {
    let limit = tolerance * (1.0 + scale);
    match g.iter().position(|gi| gi.is_nan() || gi.abs() > limit) {
        Some(row) => Err(StepError::OffManifold {
            row,
            residual: g[row].abs(),
            limit,
            t,
        }),
        None => Ok(()),
    }
}

/// Returns `InvalidModel` unless a sparse-tier model's body sizes add up to its number of
/// coordinates `n` (each body owns the consecutive coordinates after the previous ones).
pub(crate) fn check_body_sizes(sizes: &[usize], n: usize) -> Result<(), StepError> {
    let total: usize = sizes.iter().sum();
    if total == n {
        Ok(())
    } else {
        Err(StepError::InvalidModel {
            what: "body sizes",
            index: total,
            reason: "they do not add up to the number of coordinates",
        })
    }
}

/// Returns `InvalidModel` naming `what` unless `same`: a sparse-tier model stepped by an
/// integrator that was built for a model of other sizes or patterns (`index` is the stepped
/// model's count of `what`). Patterns are fixed for a model's lifetime (the traits' contract),
/// so comparing sizes at each step catches a foreign model without reading its patterns.
pub(crate) fn check_built_for(
    same: bool,
    what: &'static str,
    index: usize,
) -> Result<(), StepError> {
    if same {
        Ok(())
    } else {
        Err(StepError::InvalidModel {
            what,
            index,
            reason: "differs from the model the integrator was built for",
        })
    }
}
