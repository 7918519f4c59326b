//! The divergence guard of the constrained methods: a step whose holonomic rows have left the
//! neighbourhood of the constraint manifold is an error, not an `Ok` with a meaningless state.

use crate::error::StepError;

/// A guard against steps that return `Ok` on nonsense: after a step, every holonomic row's
/// residual is compared with the row's own first-order scale, and a step whose result has left
/// the neighbourhood of the constraint manifold is rejected with [`StepError::Diverged`]
/// (state unchanged) instead of being accepted.
///
/// The guarded quantity of row `i` is dimensionless,
///
/// ```text
/// ρᵢ = |gᵢ(q_{k+1})| / ( |Gᵢ(q_k)|₁ · max(|q_k|∞, |q_{k+1}|∞) + |gᵢ(q_k)| ),
/// ```
///
/// the residual after the step against what the row's linearization can account for: `|Gᵢ|₁
/// |q|∞` bounds the linear part of `gᵢ` over the configuration (for a rod `|x|² − l²`, `2l²`),
/// and `|gᵢ(q_k)|` admits a residual the step started from. A resolved step changes `gᵢ` by
/// `O(|Δq|²)` (curvature) and keeps `ρ` at `O((|Δq|/l)²)`; a step that leaves the linearization
/// behind (SPOOK at `h` much larger than the time scale of the motion, a blow-up) makes `ρ` of
/// order `|q_{k+1}| / l` and larger. The default limit, `ρ ≤ 1` ([`DivergenceGuard::DEFAULT_LIMIT`]),
/// is a residual as large as the constraint's own linear scale (a rod stretched by about 70 %):
/// far beyond any accepted error, so it rejects only steps whose outcome is meaningless. Soft
/// rows (large SPOOK compliance `ε`) that are meant to stretch that far need a larger limit;
/// [`DivergenceGuard::disabled`] turns the guard off. A row whose Jacobian and residual both
/// vanish at `q_k` (a singular point of the constraint) has a zero scale and trips the guard
/// as soon as it is violated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DivergenceGuard {
    limit: f64,
}

impl DivergenceGuard {
    /// The default limit on `ρᵢ`: a residual as large as the row's first-order scale.
    pub const DEFAULT_LIMIT: f64 = 1.0;

    /// A guard that rejects a step when some row's `ρᵢ` exceeds `limit`.
    ///
    /// Fails with `BadParameter` unless `limit` is positive (`f64::INFINITY` disables it).
    pub fn new(limit: f64) -> Result<Self, StepError> {
        if limit > 0.0 {
            Ok(DivergenceGuard { limit })
        } else {
            Err(StepError::BadParameter {
                name: "divergence limit",
                value: limit,
                requirement: "must be positive (infinity disables the guard)",
            })
        }
    }

    /// A guard that accepts every finite step.
    pub fn disabled() -> Self {
        DivergenceGuard {
            limit: f64::INFINITY,
        }
    }

    /// Returns the limit on `ρᵢ`.
    pub fn limit(&self) -> f64 {
        self.limit
    }

    /// Returns the first row whose `ρᵢ` exceeds the limit (or whose residual is NaN), with
    /// its residual `|gᵢ(q_{k+1})|` and scale `|Gᵢ(q_k)|₁ · max(|q_k|∞, |q_{k+1}|∞) + |gᵢ(q_k)|`,
    /// from `q_k`, `q_{k+1}` and per row `gᵢ(q_k)`, `|Gᵢ(q_k)|₁` and `gᵢ(q_{k+1})`: the one
    /// loop of [`accepts`](Self::accepts) and [`check_rows`](Self::check_rows).
    #[inline(always)]
    fn first_rejected(
        &self,
        q: &[f64],
        q_next: &[f64],
        g: &[f64],
        jacobian_row_norms: &[f64],
        g_next: &[f64],
    ) -> Option<(usize, f64, f64)> {
        // `|x|∞` skipping NaN, as `f64::max` does; written as a comparison, it is one `maxsd`
        // per component instead of `f64::max`'s NaN-aware select.
        let amax = |m: f64, x: &[f64]| {
            x.iter()
                .fold(m, |m, x| if x.abs() > m { x.abs() } else { m })
        };
        let q_scale = amax(amax(0.0, q), q_next);
        let rows = g.iter().zip(jacobian_row_norms).zip(g_next);
        for (row, ((&g, &norm), &g_next)) in rows.enumerate() {
            let (residual, scale) = (g_next.abs(), norm * q_scale + g.abs());
            // A zero scale with a zero residual passes; a NaN residual fails.
            if residual.is_nan() || residual > self.limit * scale {
                return Some((row, residual, scale));
            }
        }
        None
    }

    /// Returns whether the guard accepts a step from `q_k` to `q_{k+1}`, from per row
    /// `gᵢ(q_k)`, `|Gᵢ(q_k)|₁` and `gᵢ(q_{k+1})`: no row's `ρᵢ` exceeds the limit. The test
    /// that the step `mechanism!` generates for SPOOK
    /// ([`Holonomic::spook_step`](crate::Holonomic::spook_step)) runs before it writes its
    /// result; [`Spook`](crate::Spook)'s generic step reports a rejection as
    /// [`StepError::Diverged`] with the row.
    #[inline]
    pub fn accepts(
        &self,
        q: &[f64],
        q_next: &[f64],
        g: &[f64],
        jacobian_row_norms: &[f64],
        g_next: &[f64],
    ) -> bool {
        self.first_rejected(q, q_next, g, jacobian_row_norms, g_next)
            .is_none()
    }

    /// Returns `Diverged` for the first row whose `ρᵢ` exceeds the limit, from `q_k`, `q_{k+1}`
    /// and per row `gᵢ(q_k)`, `|Gᵢ(q_k)|₁` and `gᵢ(q_{k+1})`.
    #[inline]
    pub(crate) fn check_rows(
        &self,
        q: &[f64],
        q_next: &[f64],
        g: &[f64],
        jacobian_row_norms: &[f64],
        g_next: &[f64],
        t: f64,
    ) -> Result<(), StepError> {
        match self.first_rejected(q, q_next, g, jacobian_row_norms, g_next) {
            None => Ok(()),
            Some((row, residual, scale)) => Err(StepError::Diverged {
                row,
                residual,
                relative: residual / scale,
                limit: self.limit,
                t,
            }),
        }
    }

    /// Returns whether the guard accepts every finite step.
    pub(crate) fn is_disabled(&self) -> bool {
        self.limit == f64::INFINITY
    }
}

impl Default for DivergenceGuard {
    /// The guard with [`DivergenceGuard::DEFAULT_LIMIT`].
    fn default() -> Self {
        DivergenceGuard {
            limit: Self::DEFAULT_LIMIT,
        }
    }
}
