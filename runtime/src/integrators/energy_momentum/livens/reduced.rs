//! The reduced system of one Livens step (Kinon–Betsch eq. 30 with `p^{n+1}` eliminated): its
//! residual at an iterate and its Newton matrix.

use nalgebra::{SMatrix, SVector};

use super::max_abs;
use crate::discrete_gradient::{
    ConstraintDiscreteGradient, ConstraintDiscreteGradientJacobians, KineticDiscreteGradient,
    KineticJacobians, PotentialDiscreteGradient, PotentialDiscreteGradientJacobian,
};
use crate::error::StepError;
use crate::integrators::checks::check_finite;
use crate::linalg::{BorderedLu, Lu};
use crate::model::{HolonomicHessians, InertiaGradient, Potential, PotentialHessian};

/// The residual of the reduced system at one iterate, with what the step needs from it.
pub(super) struct Residual<const N: usize, const M: usize> {
    /// `q^{n+1} = q^n + Δq`, rounded.
    pub(super) q1: SVector<f64, N>,
    /// `v^{n+1} = 2 Δq/h − v0`, from the unrounded increment `Δq`.
    pub(super) v1: SVector<f64, N>,
    /// `D̄₂T`, for `p^{n+1} = 2 D̄₂T − p^n`.
    pub(super) d2: SVector<f64, N>,
    /// `D̄G` (rows `D̄g_kᵀ`).
    pub(super) dg: SMatrix<f64, M, N>,
    /// `R`.
    pub(super) r: SVector<f64, N>,
    /// `g(q1)`.
    pub(super) g: SVector<f64, M>,
    /// `max(‖R‖∞ / scale_R, ‖g‖∞ / scale_g)`, reported by `NewtonDiverged`.
    pub(super) relative: f64,
}

/// The start of a step: `(q^n, v^n, p^n)`, `h` and the time `t^{n+1}` of the constraints.
pub(super) struct Start<'a, const N: usize> {
    pub(super) q0: &'a SVector<f64, N>,
    pub(super) v0: &'a SVector<f64, N>,
    pub(super) p0: &'a SVector<f64, N>,
    pub(super) h: f64,
    pub(super) t1: f64,
}

impl<const N: usize> Start<'_, N> {
    /// Evaluates the residual `(R, g)` of the reduced system at the increment
    /// `Δq = q^{n+1} − q^n` and `λ`.
    pub(super) fn residual<Model, const M: usize>(
        &self,
        model: &Model,
        increment: &SVector<f64, N>,
        lambda: &SVector<f64, M>,
    ) -> Residual<N, M>
    where
        Model: InertiaGradient<N> + Potential<N> + HolonomicHessians<N, M>,
    {
        let (q0, v0, p0, h) = (self.q0, self.v0, self.p0, self.h);
        let q1 = &(q0 + increment);
        let v1 = increment * (2.0 / h) - v0;
        let mut d1 = SVector::<f64, N>::zeros();
        let mut d2 = SVector::<f64, N>::zeros();
        model.kinetic_discrete_gradient(q0, v0, q1, &v1, &mut d1, &mut d2);
        let mut dv = SVector::<f64, N>::zeros();
        model.potential_discrete_gradient(q0, q1, &mut dv);
        let mut dg = SMatrix::<f64, M, N>::zeros();
        model.constraint_discrete_gradient(q0, q1, self.t1, &mut dg);
        let mut g = SVector::<f64, M>::zeros();
        let mut jac = SMatrix::<f64, M, N>::zeros();
        model.constraints_and_jacobian(q1, self.t1, &mut g, &mut jac);

        let constraint_force = dg.transpose() * lambda;
        let r = d2 * 2.0 - p0 * 2.0 - d1 * h + dv * h + constraint_force * h;
        let mut scale_r = 0.0f64;
        for i in 0..N {
            let mut s = 2.0 * (p0[i].abs() + d2[i].abs()) + h * (d1[i].abs() + dv[i].abs());
            for k in 0..M {
                s += h * (lambda[k] * dg[(k, i)]).abs();
            }
            scale_r = scale_r.max(s);
        }
        let mut jac_norm = 0.0f64;
        for k in 0..M {
            jac_norm = jac_norm.max(jac.row(k).iter().map(|x| x.abs()).sum());
        }
        let scale_g = (jac_norm * max_abs(q1)).max(f64::MIN_POSITIVE);
        let relative_r = if scale_r > 0.0 {
            max_abs(&r) / scale_r
        } else {
            max_abs(&r) / f64::MIN_POSITIVE
        };
        let relative_g = max_abs(&g) / scale_g;
        // NaN-propagating max: a non-finite residual must not count as converged.
        let relative = if relative_r.is_nan() || relative_g.is_nan() {
            f64::NAN
        } else {
            relative_r.max(relative_g)
        };
        Residual {
            q1: *q1,
            v1,
            d2,
            dg,
            r,
            g,
            relative,
        }
    }

    /// Returns the Newton update `(Δq, Δλ)` at `(q1, λ)` (`q1` from `res`) by the block
    /// elimination of the type docs, and the number of factorizations it took.
    #[allow(clippy::type_complexity)]
    pub(super) fn newton_update<Model, const M: usize>(
        &self,
        model: &Model,
        lambda: &SVector<f64, M>,
        res: &Residual<N, M>,
        t: f64,
    ) -> Result<(SVector<f64, N>, SVector<f64, M>, u32), StepError>
    where
        Model: InertiaGradient<N> + PotentialHessian<N> + HolonomicHessians<N, M>,
    {
        let (q0, v0, h, q1) = (self.q0, self.v0, self.h, &res.q1);
        let mut kin = KineticJacobians::<N>::default();
        model.kinetic_discrete_gradient_jacobians(q0, v0, q1, &res.v1, &mut kin);
        let mut jac_v = SMatrix::<f64, N, N>::zeros();
        model.potential_discrete_gradient_jacobian(q0, q1, &mut jac_v);
        let mut jac_g = [SMatrix::<f64, N, N>::zeros(); M];
        model.constraint_discrete_gradient_jacobians(q0, q1, self.t1, &mut jac_g);
        let mut g_jac = SMatrix::<f64, M, N>::zeros();
        model.constraint_jacobian(q1, self.t1, &mut g_jac);

        let mut k =
            kin.d2_q1 * 2.0 + kin.d2_v1 * (4.0 / h) - kin.d1_q1 * h - kin.d1_v1 * 2.0 + jac_v * h;
        for (lambda_k, jac_k) in lambda.iter().zip(jac_g.iter()) {
            k += jac_k * (h * lambda_k);
        }
        let dg_t = res.dg.transpose();
        let b = dg_t * h;
        let mut a = -res.r;
        let rhs_b = -res.g;
        if M > 0 {
            let augment = dg_t * g_jac;
            let (k_max, augment_max) = (max_abs(&k), max_abs(&augment));
            if augment_max > 0.0 && k_max.is_finite() && augment_max.is_finite() {
                let alpha = k_max / augment_max;
                k += augment * alpha;
                a -= dg_t * (res.g * alpha);
            }
        }
        let k_factor =
            Lu::try_new(&k).map_err(StepError::linear_algebra("Newton matrix K + α D̄Gᵀ G", t))?;
        let block = BorderedLu::new(k_factor, &b, g_jac).map_err(StepError::linear_algebra(
            "constraint Schur complement G K̃⁻¹ h D̄Gᵀ",
            t,
        ))?;
        check_finite(&a, "momentum balance residual", t)?;
        let (delta_q, delta_lambda) = block.solve(&a, &rhs_b);
        Ok((delta_q, delta_lambda, if M == 0 { 1 } else { 2 }))
    }
}
