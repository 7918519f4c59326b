//! The derivative of the post-stabilization that ends a stabilized Runge–Kutta step (`S-both`,
//! `S-both²`; the parent module's docs derive it): the rows at the corrected points
//! ([`Rows`]) and the projector `P = D (G D)⁻¹` with its tangent ([`Stabilizer`]).

use nalgebra::{SMatrix, SVector};

use super::super::{check_finite, Metric, PostStabilization};
use super::{IndexOneJacobians, ParameterTerms, RkStep, RowTerms, MASS};
use crate::error::StepError;
use crate::linalg::Cholesky;

/// The rows and their derivatives at one point, for the post-stabilization's derivative.
struct Rows<const N: usize, const M: usize, const P: usize> {
    g: SVector<f64, M>,
    g_dot: SVector<f64, M>,
    jac: SMatrix<f64, M, N>,
    hessians: [SMatrix<f64, N, N>; M],
    time_q: SMatrix<f64, M, N>,
    parameters: RowTerms<N, M, P>,
}

impl<const N: usize, const M: usize, const P: usize> Rows<N, M, P> {
    fn at<Model, Params>(
        model: &Model,
        parameters: &Params,
        (q, v, t): (&SVector<f64, N>, &SVector<f64, N>, f64),
        t_err: f64,
    ) -> Result<Self, StepError>
    where
        Model: IndexOneJacobians<N, M>,
        Params: ParameterTerms<N, M, P>,
    {
        let mut rows = Rows {
            g: SVector::zeros(),
            g_dot: SVector::zeros(),
            jac: SMatrix::zeros(),
            hessians: [SMatrix::zeros(); M],
            time_q: SMatrix::zeros(),
            parameters: parameters.rows(q, t),
        };
        let mut g_t = SVector::<f64, M>::zeros();
        model.constraints_and_jacobian(q, t, &mut rows.g, &mut rows.jac);
        model.constraint_time_derivative(q, t, &mut g_t);
        model.constraint_hessians(q, t, &mut rows.hessians);
        model.time_derivative_jacobian(q, t, &mut rows.time_q);
        rows.g_dot = rows.jac * v + g_t;
        check_finite(&rows.g, "constraints", t_err)?;
        check_finite(&rows.g_dot, "constraint velocity G v + g_t", t_err)?;
        for hessian in &rows.hessians {
            check_finite(hessian, "constraint Hessians (step Jacobian)", t_err)?;
        }
        check_finite(&rows.time_q, "G_t (step Jacobian)", t_err)?;
        Ok(rows)
    }

    /// `δG` in the direction `(dq, dp)`.
    fn jacobian_derivative(
        &self,
        dq: &SVector<f64, N>,
        dp: &SVector<f64, P>,
    ) -> SMatrix<f64, M, N> {
        let mut d = SMatrix::<f64, M, N>::zeros();
        for (k, hessian) in self.hessians.iter().enumerate() {
            d.set_row(k, &(hessian * dq).transpose());
        }
        for (j, derivative) in self.parameters.jacobian.iter().enumerate() {
            d += derivative * dp[j];
        }
        d
    }

    /// `δg` in the direction `(dq, dp)`.
    fn g_derivative(&self, dq: &SVector<f64, N>, dp: &SVector<f64, P>) -> SVector<f64, M> {
        self.jac * dq + self.parameters.g * dp
    }

    /// `δ(G v + g_t)` in the direction `(dq, dv, dp)` with `δG = d_jac`.
    fn g_dot_derivative(
        &self,
        (v, d_jac): (&SVector<f64, N>, &SMatrix<f64, M, N>),
        (dq, dv, dp): (&SVector<f64, N>, &SVector<f64, N>, &SVector<f64, P>),
    ) -> SVector<f64, M> {
        d_jac * v + self.jac * dv + self.time_q * dq + self.parameters.time * dp
    }
}

/// The post-stabilization at `(q̃, ṽ)` with its projector `P = D (G D)⁻¹`, for its tangent.
pub(super) struct Stabilizer<const N: usize, const M: usize, const P: usize> {
    stabilization: PostStabilization,
    metric: Metric,
    tilde: Rows<N, M, P>,
    v_tilde: SVector<f64, N>,
    /// S-both's corrected velocity `v̂`, and the rows at `(q̂, v̂)` for S-both².
    v_hat: SVector<f64, N>,
    hat: Option<Rows<N, M, P>>,
    /// `D` and the factor of `G D`.
    d: SMatrix<f64, N, M>,
    gd: Cholesky<M>,
    mass: Cholesky<N>,
    /// With `D = M⁻¹ Gᵀ` and a configuration-dependent `M`: `∂(M d_c)/∂q̃` for each column
    /// `d_c` of `D` (`(∂²T/∂q∂v)ᵀ` at `v = d_c`), so that `δM D`'s column `c` is this times
    /// `δq̃`; empty otherwise.
    mass_slopes: Option<[SMatrix<f64, N, N>; M]>,
}

impl<const N: usize, const M: usize, const P: usize> Stabilizer<N, M, P> {
    pub(super) fn at<Model, Params, const S: usize>(
        model: &Model,
        parameters: &Params,
        step: &RkStep<S>,
        q_tilde: &SVector<f64, N>,
        v_tilde: &SVector<f64, N>,
        t: f64,
        t_err: f64,
    ) -> Result<Self, StepError>
    where
        Model: IndexOneJacobians<N, M>,
        Params: ParameterTerms<N, M, P>,
    {
        let tilde = Rows::at(model, parameters, (q_tilde, v_tilde, t), t_err)?;
        let mut m = SMatrix::<f64, N, N>::zeros();
        model.mass_matrix(q_tilde, &mut m);
        let mass = Cholesky::<N>::try_new(&m).map_err(StepError::linear_algebra(MASS, t_err))?;
        let mut d = tilde.jac.transpose();
        if step.metric == Metric::Mass {
            mass.solve_in_place(&mut d);
        }
        let gd = Cholesky::<M>::try_new(&(tilde.jac * d)).map_err(StepError::linear_algebra(
            "G D (post-stabilization step Jacobian)",
            t_err,
        ))?;
        let mass_slopes = (step.metric == Metric::Mass && !Model::CONSTANT_MASS).then(|| {
            std::array::from_fn(|c| {
                let column = d.column(c).into_owned();
                let (mut unused, mut slope) = (SMatrix::<f64, N, N>::zeros(), SMatrix::zeros());
                model.kinetic_hessians(q_tilde, &column, &mut unused, &mut slope);
                slope.transpose()
            })
        });
        let mut stabilizer = Stabilizer {
            stabilization: step.stabilization,
            metric: step.metric,
            tilde,
            v_tilde: *v_tilde,
            v_hat: *v_tilde,
            hat: None,
            d,
            gd,
            mass,
            mass_slopes,
        };
        let (correct_q, correct_v) = stabilizer.corrects();
        let mut q_hat = *q_tilde;
        if correct_q {
            q_hat -= stabilizer.project(&stabilizer.tilde.g);
        }
        if correct_v {
            stabilizer.v_hat -= stabilizer.project(&stabilizer.tilde.g_dot);
        }
        if stabilizer.stabilization == PostStabilization::BothTwice {
            let at_hat = (&q_hat, &stabilizer.v_hat, t);
            stabilizer.hat = Some(Rows::at(model, parameters, at_hat, t_err)?);
        }
        Ok(stabilizer)
    }

    /// Returns `δM D` at `q̃` in the direction `(dq, dp)`: the parameters' `Σ_j δp_j ∂M/∂p_j D`
    /// and, for a configuration-dependent `M`, `∂(M d_c)/∂q̃ δq̃` in column `c`.
    fn mass_derivative_times_d(
        &self,
        dq: &SVector<f64, N>,
        dp: &SVector<f64, P>,
    ) -> SMatrix<f64, N, M> {
        let mut d_mass = SMatrix::<f64, N, N>::zeros();
        for (j, derivative) in self.tilde.parameters.mass.iter().enumerate() {
            d_mass += derivative * dp[j];
        }
        let mut product = d_mass * self.d;
        if let Some(slopes) = &self.mass_slopes {
            for (c, slope) in slopes.iter().enumerate() {
                let mut column = product.column_mut(c);
                column += slope * dq;
            }
        }
        product
    }

    /// Returns `P r`'s derivative `δD x + D (G D)⁻¹ (δr − δ(G D) x)`, `x = (G D)⁻¹ r`, with
    /// `δG = d_jac` and `δM D = d_mass_d` at `q̃`.
    fn projection_derivative(
        &self,
        r: &SVector<f64, M>,
        dr: &SVector<f64, M>,
        d_jac: &SMatrix<f64, M, N>,
        d_mass_d: &SMatrix<f64, N, M>,
    ) -> SVector<f64, N> {
        let mut x = *r;
        self.gd.solve_in_place(&mut x);
        let d_d = match self.metric {
            Metric::Euclidean => d_jac.transpose(),
            Metric::Mass => {
                let mut d_d = d_jac.transpose() - d_mass_d;
                self.mass.solve_in_place(&mut d_d);
                d_d
            }
        };
        let d_gd = d_jac * self.d + self.tilde.jac * d_d;
        let mut y = dr - d_gd * x;
        self.gd.solve_in_place(&mut y);
        d_d * x + self.d * y
    }

    /// Returns `P r`.
    fn project(&self, r: &SVector<f64, M>) -> SVector<f64, N> {
        let mut x = *r;
        self.gd.solve_in_place(&mut x);
        self.d * x
    }

    /// Which levels the stabilization corrects: `(position, velocity)`.
    fn corrects(&self) -> (bool, bool) {
        match self.stabilization {
            PostStabilization::Position => (true, false),
            PostStabilization::Velocity => (false, true),
            _ => (true, true),
        }
    }

    /// Maps the tangent `(δq̃, δṽ)` with parameter directions `δp` (one column per direction)
    /// through the post-stabilization.
    pub(super) fn tangent<const C: usize>(
        &self,
        (dq, dv, dp): (
            &SMatrix<f64, N, C>,
            &SMatrix<f64, N, C>,
            &SMatrix<f64, P, C>,
        ),
    ) -> (SMatrix<f64, N, C>, SMatrix<f64, N, C>) {
        let (correct_q, correct_v) = self.corrects();
        let tilde = &self.tilde;
        let (mut out_q, mut out_v) = (*dq, *dv);
        for c in 0..C {
            let (dq, dv, dp): (SVector<f64, N>, SVector<f64, N>, SVector<f64, P>) = (
                dq.column(c).into(),
                dv.column(c).into(),
                dp.column(c).into(),
            );
            let d_jac = tilde.jacobian_derivative(&dq, &dp);
            let d_mass = self.mass_derivative_times_d(&dq, &dp);
            let mut dq_hat = dq;
            if correct_q {
                let dr = tilde.g_derivative(&dq, &dp);
                dq_hat -= self.projection_derivative(&tilde.g, &dr, &d_jac, &d_mass);
            }
            let mut dv_hat = dv;
            if correct_v {
                let dr = tilde.g_dot_derivative((&self.v_tilde, &d_jac), (&dq, &dv, &dp));
                dv_hat -= self.projection_derivative(&tilde.g_dot, &dr, &d_jac, &d_mass);
            }
            let (mut dq_new, mut dv_new) = (dq_hat, dv_hat);
            if let Some(hat) = &self.hat {
                let dr = hat.g_derivative(&dq_hat, &dp);
                dq_new -= self.projection_derivative(&hat.g, &dr, &d_jac, &d_mass);
                let d_jac_hat = hat.jacobian_derivative(&dq_hat, &dp);
                let dr = hat.g_dot_derivative((&self.v_hat, &d_jac_hat), (&dq_hat, &dv_hat, &dp));
                dv_new -= self.projection_derivative(&hat.g_dot, &dr, &d_jac, &d_mass);
            }
            out_q.set_column(c, &dq_new);
            out_v.set_column(c, &dv_new);
        }
        (out_q, out_v)
    }
}
