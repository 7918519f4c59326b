//! The double pendulum's SPOOK and Z&Ss steps written by hand in straightforward nalgebra, as a
//! user would without `mechanism`: derivatives by hand, the SPOOK saddle system (eq. 29) as one
//! 6×6 LU, the Z&Ss matrix `M + βh² Hess W` as one 4×4 LU.

use nalgebra::{SMatrix, SVector};

/// Parameters of the Tao–Owhadi §4.1 pendulum.
pub struct Pendulum {
    pub m1: f64,
    pub m2: f64,
    pub l1: f64,
    pub l2: f64,
    pub g: f64,
}

impl Default for Pendulum {
    fn default() -> Self {
        Pendulum {
            m1: 1.0,
            m2: 1.0,
            l1: 1.0,
            l2: std::f64::consts::SQRT_2,
            g: 1.0,
        }
    }
}

impl Pendulum {
    fn constraints(&self, q: &SVector<f64, 4>) -> (SVector<f64, 2>, SMatrix<f64, 2, 4>) {
        let (x1, y1, x2, y2) = (q[0], q[1], q[2], q[3]);
        let (dx, dy) = (x2 - x1, y2 - y1);
        let g = SVector::<f64, 2>::new(
            x1 * x1 + y1 * y1 - self.l1 * self.l1,
            dx * dx + dy * dy - self.l2 * self.l2,
        );
        #[rustfmt::skip]
        let jac = SMatrix::<f64, 2, 4>::new(
            2.0 * x1,  2.0 * y1,  0.0,      0.0,
            -2.0 * dx, -2.0 * dy, 2.0 * dx, 2.0 * dy,
        );
        (g, jac)
    }

    fn mass(&self) -> SMatrix<f64, 4, 4> {
        SMatrix::<f64, 4, 4>::from_diagonal(&SVector::<f64, 4>::new(
            self.m1, self.m1, self.m2, self.m2,
        ))
    }

    fn potential_gradient(&self) -> SVector<f64, 4> {
        SVector::<f64, 4>::new(0.0, self.m1 * self.g, 0.0, self.m2 * self.g)
    }
}

/// One SPOOK step (Lacoursière 2007, eq. 27–29) with ε, τ for both rows.
pub fn spook_step(
    p: &Pendulum,
    h: f64,
    epsilon: f64,
    tau: f64,
    q: &mut SVector<f64, 4>,
    v: &mut SVector<f64, 4>,
) -> Option<()> {
    let m = p.mass();
    let (g, jac) = p.constraints(q);
    let upsilon = 1.0 / (1.0 + 4.0 * tau / h);
    let sigma = 4.0 / (h * h) * epsilon * upsilon;
    let mut a = SMatrix::<f64, 6, 6>::zeros();
    a.fixed_view_mut::<4, 4>(0, 0).copy_from(&m);
    a.fixed_view_mut::<4, 2>(0, 4)
        .copy_from(&(-jac.transpose()));
    a.fixed_view_mut::<2, 4>(4, 0).copy_from(&jac);
    a[(4, 4)] = sigma;
    a[(5, 5)] = sigma;
    let mut rhs = SVector::<f64, 6>::zeros();
    rhs.fixed_rows_mut::<4>(0)
        .copy_from(&(m * *v - h * p.potential_gradient()));
    rhs.fixed_rows_mut::<2>(4)
        .copy_from(&(-4.0 / h * upsilon * g + upsilon * (jac * *v)));
    let x = a.lu().solve(&rhs)?;
    *v = x.fixed_rows::<4>(0).into_owned();
    *q += h * *v;
    Some(())
}

/// The penalized gradient and Hessian of `W = V + ½ω²|g|²`.
fn penalized_gradient_hessian(
    p: &Pendulum,
    omega: f64,
    q: &SVector<f64, 4>,
) -> (SVector<f64, 4>, SMatrix<f64, 4, 4>) {
    let (g, jac) = p.constraints(q);
    let w2 = omega * omega;
    let grad = p.potential_gradient() + w2 * jac.transpose() * g;
    #[rustfmt::skip]
    let h1 = SMatrix::<f64, 4, 4>::new(
        2.0, 0.0, 0.0, 0.0,
        0.0, 2.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0,
        0.0, 0.0, 0.0, 0.0,
    );
    #[rustfmt::skip]
    let h2 = SMatrix::<f64, 4, 4>::new(
        2.0,  0.0,  -2.0, 0.0,
        0.0,  2.0,  0.0,  -2.0,
        -2.0, 0.0,  2.0,  0.0,
        0.0,  -2.0, 0.0,  2.0,
    );
    let hess = w2 * (jac.transpose() * jac + g[0] * h1 + g[1] * h2);
    (grad, hess)
}

/// Z&Ss acceleration `a = −(M + βh² Hess W)⁻¹ ∇W`.
pub fn zss_acceleration(
    p: &Pendulum,
    omega: f64,
    beta: f64,
    h: f64,
    q: &SVector<f64, 4>,
) -> Option<SVector<f64, 4>> {
    let (grad, hess) = penalized_gradient_hessian(p, omega, q);
    let k = p.mass() + beta * h * h * hess;
    k.lu().solve(&(-grad))
}

/// One Z&Ss step (Tao–Owhadi 2014, eq. 18); `a` carries the acceleration at `q`.
pub fn zss_step(
    p: &Pendulum,
    omega: f64,
    beta: f64,
    h: f64,
    q: &mut SVector<f64, 4>,
    v: &mut SVector<f64, 4>,
    a: &mut SVector<f64, 4>,
) -> Option<()> {
    *q += h * *v + 0.5 * h * h * *a;
    let next = zss_acceleration(p, omega, beta, h, q)?;
    *v += 0.5 * h * (*a + next);
    *a = next;
    Some(())
}
