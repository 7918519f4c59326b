//! SHAKE's and RATTLE's linear algebra on the fixed-size tier: stack matrices, an `LU` with
//! partial pivoting of the Newton matrix and a Cholesky factorization of `G M⁻¹ Gᵀ`.

use nalgebra::{SMatrix, SVector};

use super::{
    Point, ProjectionAcceleration, ProjectionModel, ProjectionSystem, NEWTON_MATRIX,
    PROJECTION_MATRIX,
};
use crate::error::StepError;
use crate::integrators::checks::check_finite;
use crate::integrators::explicit::{acceleration, MassFactor};
use crate::linalg::{Cholesky, LinearSolver, Lu};
use crate::model::{Holonomic, Inertia, Potential};

/// What a step knows at one configuration.
#[derive(Clone, Copy, Debug)]
struct DensePoint<const N: usize, const M: usize> {
    /// `−M(q)⁻¹ ∇V(q)`.
    acceleration: SVector<f64, N>,
    /// `G(q, t)`.
    jac: SMatrix<f64, M, N>,
    /// `M(q)⁻¹ G(q, t)ᵀ`.
    minv_jac_t: SMatrix<f64, N, M>,
}

impl<const N: usize, const M: usize> Default for DensePoint<N, M> {
    fn default() -> Self {
        DensePoint {
            acceleration: SVector::zeros(),
            jac: SMatrix::zeros(),
            minv_jac_t: SMatrix::zeros(),
        }
    }
}

/// The [`ProjectionSystem`] of `N` coordinates and `M` constraint rows in fixed-size storage;
/// see [`Shake`](super::Shake) and [`Rattle`](super::Rattle).
#[derive(Clone, Copy, Debug)]
pub struct ProjectionDense<const N: usize, const M: usize> {
    mass: MassFactor<N>,
    /// The start and end points.
    points: [DensePoint<N, M>; 2],
    /// `g` of the last evaluation, and the point whose `G` it wrote.
    g: SVector<f64, M>,
    last: usize,
    newton: Option<Lu<M>>,
    projection: Option<Cholesky<M>>,
}

impl<const N: usize, const M: usize> Default for ProjectionDense<N, M> {
    fn default() -> Self {
        ProjectionDense {
            mass: MassFactor::default(),
            points: [DensePoint::default(); 2],
            g: SVector::zeros(),
            last: 0,
            newton: None,
            projection: None,
        }
    }
}

impl<const N: usize, const M: usize> ProjectionDense<N, M> {
    fn point(&self, point: Point) -> &DensePoint<N, M> {
        &self.points[point as usize]
    }
}

impl<const N: usize, const M: usize> ProjectionSystem for ProjectionDense<N, M> {
    const CHECKPOINT_NAME: &'static str = "DenseProjection";
    type Coordinates = SVector<f64, N>;
    type Rows = SVector<f64, M>;

    fn zero_coordinates(&self) -> SVector<f64, N> {
        SVector::zeros()
    }

    fn zero_rows(&self) -> SVector<f64, M> {
        SVector::zeros()
    }

    fn residual(&self) -> &[f64] {
        self.g.as_slice()
    }

    fn first_order_scale(&mut self, point: Point, q: &[f64]) -> f64 {
        self.point(point)
            .jac
            .row_iter()
            .map(|row| row.iter().zip(q).map(|(a, x)| (a * x).abs()).sum())
            .fold(0.0, f64::max)
    }

    fn check_jacobian(&self, t: f64) -> Result<(), StepError> {
        check_finite(&self.points[self.last].jac, "constraint jacobian", t)
    }

    fn acceleration(&self, point: Point) -> &[f64] {
        self.point(point).acceleration.as_slice()
    }

    fn constraint_direction(&self, point: Point, y: &[f64], out: &mut [f64]) {
        let y = SVector::<f64, M>::from_column_slice(y);
        out.copy_from_slice((self.point(point).minv_jac_t * y).as_slice());
    }

    fn jacobian_times(&self, point: Point, x: &[f64], out: &mut [f64]) {
        let x = SVector::<f64, N>::from_column_slice(x);
        out.copy_from_slice((self.point(point).jac * x).as_slice());
    }

    fn solve_newton(&mut self, rhs: &mut [f64], t: f64) -> Result<(), StepError> {
        let wrap = StepError::linear_algebra(NEWTON_MATRIX, t);
        let matrix = self.points[1].jac * self.points[0].minv_jac_t;
        self.newton.factor(&matrix).map_err(&wrap)?;
        self.newton.solve_in_place(rhs).map_err(&wrap)
    }

    fn solve_projection(&mut self, rhs: &mut [f64], t: f64) -> Result<(), StepError> {
        let wrap = StepError::linear_algebra(PROJECTION_MATRIX, t);
        let end = &self.points[1];
        self.projection
            .factor(&(end.jac * end.minv_jac_t))
            .map_err(&wrap)?;
        self.projection.solve_in_place(rhs).map_err(&wrap)
    }

    fn carry(&mut self) {
        self.points.swap(0, 1);
    }
}

impl<Model, const N: usize, const M: usize> ProjectionModel<Model> for ProjectionDense<N, M>
where
    Model: Inertia<N> + Potential<N> + Holonomic<N, M>,
{
    fn evaluate(&mut self, model: &Model, point: Point, q: &[f64], t: f64) {
        let q = SVector::<f64, N>::from_column_slice(q);
        self.last = point as usize;
        let jac = &mut self.points[self.last].jac;
        model.constraints_and_jacobian(&q, t, &mut self.g, jac);
    }

    fn complete(
        &mut self,
        model: &Model,
        point: Point,
        q: &[f64],
        t: f64,
    ) -> Result<u32, StepError> {
        let q = SVector::<f64, N>::from_column_slice(q);
        let slot = &mut self.points[point as usize];
        check_finite(&slot.jac, "constraint jacobian", t)?;
        let (a, mass_factor, factorizations) = acceleration(model, &mut self.mass, &q, t)?;
        let mut minv_jac_t = slot.jac.transpose();
        mass_factor.solve_in_place(&mut minv_jac_t);
        slot.acceleration = a;
        slot.minv_jac_t = minv_jac_t;
        Ok(factorizations)
    }
}

impl<Model, const N: usize, const M: usize> ProjectionAcceleration<Model> for ProjectionDense<N, M>
where
    Model: Inertia<N> + Potential<N>,
{
    fn acceleration_at(
        &mut self,
        model: &Model,
        q: &[f64],
        t: f64,
        out: &mut [f64],
    ) -> Result<u32, StepError> {
        let q = SVector::<f64, N>::from_column_slice(q);
        let (a, _, factorizations) = acceleration(model, &mut self.mass, &q, t)?;
        out.copy_from_slice(a.as_slice());
        Ok(factorizations)
    }
}
