//! The continuous extension of DOPRI5 (Shampine 1986; Hairer–Nørsett–Wanner I, §II.6): the
//! dense output of [`AdaptiveRk`] between the ends of its last accepted step.

use nalgebra::SVector;

use super::{bad, check_finite, stabilize, AdaptiveRk};
use crate::error::StepError;
use crate::integrators::stabilized::runge_kutta::Stages;
use crate::integrators::stabilized::EmbeddedTableau;
use crate::model::{AppliedForces, HolonomicKinematics, InertiaGradient, Potential};
use crate::state::State;

/// Shampine's (1986) weights `d_i` of the fourth-order continuous extension of DOPRI5, as in
/// Hairer–Nørsett–Wanner I, §II.6 and their code DOPRI5 (`CONTD5`).
pub(super) const DOPRI5_DENSE: [f64; 7] = [
    -12715105075.0 / 11282082432.0,
    0.0,
    87487479700.0 / 32700410799.0,
    -10690763975.0 / 1880347072.0,
    701980252875.0 / 199316789632.0,
    -1453857185.0 / 822651844.0,
    69997945.0 / 29380423.0,
];

/// The coefficients `r_1 … r_5` (for `q` and for `v`) of the continuous extension of one
/// accepted DOPRI5 step from `t0` with step `h`:
///
/// ```text
/// z(t0 + θh) = r1 + θ (r2 + (1 − θ) (r3 + θ (r4 + (1 − θ) r5)))
/// r1 = z_n,  r2 = z̃_{n+1} − z_n,  r3 = h K_1 − r2,  r4 = r2 − h K_7 − r3,  r5 = h Σ d_i K_i
/// ```
#[derive(Clone, Copy, Debug)]
pub(super) struct DenseStep<const N: usize> {
    pub(super) t0: f64,
    pub(super) t1: f64,
    pub(super) h: f64,
    pub(super) q: [SVector<f64, N>; 5],
    pub(super) v: [SVector<f64, N>; 5],
}

impl<const N: usize> DenseStep<N> {
    /// Returns `(q, v)` of the continuous extension at `θ ∈ [0, 1]`.
    pub(super) fn at(&self, theta: f64) -> (SVector<f64, N>, SVector<f64, N>) {
        let one = 1.0 - theta;
        let eval = |r: &[SVector<f64, N>; 5]| {
            r[0] + (r[1] + (r[2] + (r[3] + r[4] * one) * theta) * one) * theta
        };
        (eval(&self.q), eval(&self.v))
    }
}

/// Returns whether `tableau` is Dormand–Prince 5(4), the pair Shampine's dense output belongs to.
pub(super) fn is_dopri5<const S: usize>(tableau: &EmbeddedTableau<S>) -> bool {
    let reference = &crate::integrators::stabilized::DOPRI5;
    let method = &tableau.method;
    S == 7
        && method.b.as_slice() == reference.method.b.as_slice()
        && method.c.as_slice() == reference.method.c.as_slice()
        && tableau.b_hat.as_slice() == reference.b_hat.as_slice()
        && method
            .a
            .iter()
            .zip(reference.method.a.iter())
            .all(|(a, r)| a.as_slice() == r.as_slice())
}

/// Returns the continuous extension of an accepted step from `(q, v)` at `t0` to the
/// unstabilized `(q1, v1)` at `t1 = t0 + h` with weights `d` (see [`DenseStep`]).
pub(super) fn dense_step<const N: usize, const S: usize>(
    stages: &Stages<SVector<f64, N>, S>,
    d: &[f64; S],
    (t0, t1, h): (f64, f64, f64),
    (q, v): (&SVector<f64, N>, &SVector<f64, N>),
    (q1, v1): (&SVector<f64, N>, &SVector<f64, N>),
) -> DenseStep<N> {
    let coefficients = |y0: &SVector<f64, N>, y1: &SVector<f64, N>, k: &[SVector<f64, N>; S]| {
        let r2 = y1 - y0;
        let r3 = k[0] * h - r2;
        let r4 = r2 - k[S - 1] * h - r3;
        let mut r5 = SVector::<f64, N>::zeros();
        for (kj, &dj) in k.iter().zip(d) {
            if dj != 0.0 {
                r5 += kj * dj;
            }
        }
        [*y0, r2, r3, r4, r5 * h]
    };
    DenseStep {
        t0,
        t1,
        h,
        q: coefficients(q, q1, &stages.velocity),
        v: coefficients(v, v1, &stages.acceleration),
    }
}

impl<const N: usize, const M: usize, const S: usize> AdaptiveRk<N, M, S> {
    /// Returns whether the pair has a continuous extension ([`DOPRI5`](crate::integrators::stabilized::DOPRI5): Shampine's
    /// fourth-order dense output), so that [`dense_output`](Self::dense_output) works.
    pub fn has_dense_output(&self) -> bool {
        self.dense_weights.is_some()
    }

    /// Returns the interval `[t_n, t_{n+1}]` of the last accepted step, over which
    /// [`dense_output`](Self::dense_output) evaluates, once there is one.
    pub fn dense_interval(&self) -> Option<(f64, f64)> {
        self.dense.as_ref().map(|d| (d.t0, d.t1))
    }

    /// Writes into `out` the state at time `t` of the last accepted step's interval
    /// [`dense_interval`](Self::dense_interval), from the continuous extension of DOPRI5
    /// (Hairer–Nørsett–Wanner I, §II.6, eq. 6.12; L. F. Shampine, *Some practical Runge–Kutta
    /// formulas*, Math. Comp. 46 (1986)), a polynomial of degree 4 in `θ = (t − t_n)/h` of
    /// local order 4 (error `O(h⁵)`) whose ends are the step's ends, and applies the
    /// integrator's [`PostStabilization`](crate::integrators::stabilized::PostStabilization) to it at `t`.
    ///
    /// The extension interpolates the Runge–Kutta map `φ_h` of the index-1 ODE: it runs from
    /// the (stabilized) `z_n` to the *unstabilized* `z̃_{n+1}`, since the post-stabilization
    /// is applied after the step and is not part of the Runge–Kutta solution. Projecting the
    /// interpolated state with the same post-stabilization puts it as close to the invariant
    /// manifold as the stabilized step ends are, and at `t = t_{n+1}` it reproduces the
    /// stabilized `z_{n+1}` up to rounding (the same correction of the same state). Without a
    /// post-stabilization the interpolant is the plain continuous extension.
    ///
    /// Fails with `Unsupported` if the pair has no dense output, with `BadParameter` before the
    /// first accepted step or for `t` outside the interval, and with any error of the
    /// stabilization; `out` is unchanged on error.
    pub fn dense_output<Model>(
        &mut self,
        model: &Model,
        t: f64,
        out: &mut State<N>,
    ) -> Result<(), StepError>
    where
        Model: InertiaGradient<N> + Potential<N> + HolonomicKinematics<N, M> + AppliedForces<N>,
    {
        if self.dense_weights.is_none() {
            return Err(StepError::Unsupported {
                integrator: "AdaptiveRk",
                requirement: "a pair with a continuous extension for dense output: DOPRI5",
            });
        }
        let Some(dense) = self.dense else {
            return Err(bad("t", t, "dense output needs an accepted step"));
        };
        if !(t >= dense.t0 && t <= dense.t1) {
            return Err(bad(
                "t",
                t,
                "must lie in the interval of the last accepted step",
            ));
        }
        let theta = if t == dense.t1 {
            1.0
        } else {
            ((t - dense.t0) / dense.h).clamp(0.0, 1.0)
        };
        let (mut q, mut v) = dense.at(theta);
        check_finite(&q, "dense q", t)?;
        check_finite(&v, "dense v", t)?;
        stabilize::<Model, N, M>(
            model,
            self.stabilization,
            self.metric,
            &mut self.rhs.mass,
            &mut q,
            &mut v,
            t,
            t,
        )?;
        *out = State { t, q, v };
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::DOPRI5_DENSE;
    use crate::integrators::stabilized::DOPRI5;

    /// Returns the weights `b_i(θ)` of the continuous extension, `z(t0 + θh) = z0 + h Σ b_i(θ)
    /// K_i`, read off the form `r1 + θ (r2 + (1 − θ) (r3 + θ (r4 + (1 − θ) r5)))`.
    fn weights(theta: f64) -> [f64; 7] {
        let b = DOPRI5.method.b;
        std::array::from_fn(|j| {
            let first = if j == 0 { 1.0 } else { 0.0 };
            let last = if j == 6 { 1.0 } else { 0.0 };
            let (r2, r3) = (b[j], first - b[j]);
            let r4 = r2 - last - r3;
            let one = 1.0 - theta;
            theta * (r2 + one * (r3 + theta * (r4 + one * DOPRI5_DENSE[j])))
        })
    }

    /// The eight order conditions of order 4 (HNW I, Table II.2.2) hold for the continuous
    /// weights at every θ, with θ^ρ(t)/γ(t) on the right (HNW I, Theorem II.6.1), and the
    /// weights are the step's at θ = 1.
    #[test]
    fn continuous_extension_has_order_four() {
        let (a, c) = (DOPRI5.method.a, DOPRI5.method.c);
        let ac = |i: usize, f: &dyn Fn(usize) -> f64| (0..7).map(|j| a[i][j] * f(j)).sum::<f64>();
        for k in 0..=20 {
            let theta = k as f64 / 20.0;
            let b = weights(theta);
            let sum = |f: &dyn Fn(usize) -> f64| (0..7).map(|i| b[i] * f(i)).sum::<f64>();
            let conditions = [
                (sum(&|_| 1.0), theta),
                (sum(&|i| c[i]), theta.powi(2) / 2.0),
                (sum(&|i| c[i] * c[i]), theta.powi(3) / 3.0),
                (sum(&|i| ac(i, &|j| c[j])), theta.powi(3) / 6.0),
                (sum(&|i| c[i].powi(3)), theta.powi(4) / 4.0),
                (sum(&|i| c[i] * ac(i, &|j| c[j])), theta.powi(4) / 8.0),
                (sum(&|i| ac(i, &|j| c[j] * c[j])), theta.powi(4) / 12.0),
                (sum(&|i| ac(i, &|j| ac(j, &|k| c[k]))), theta.powi(4) / 24.0),
            ];
            for (n, (lhs, rhs)) in conditions.iter().enumerate() {
                assert!(
                    (lhs - rhs).abs() < 1e-14,
                    "condition {n} at θ = {theta}: {lhs} ≠ {rhs}"
                );
            }
        }
        for (w, b) in weights(1.0).iter().zip(DOPRI5.method.b) {
            assert!((w - b).abs() < 1e-15);
        }
    }
}
