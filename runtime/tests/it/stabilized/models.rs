//! The references written here in other coordinates: the double pendulum in angles (the independent reference for the Cartesian model) and the two-link arm of Example 2 (Ascher et al. 1995 §6) in the angles θ1, θ2 of Fig. 6.1, its Case II reduced to an ODE, and a pivot moving on a prescribed path.

use std::f64::consts::{FRAC_PI_4, SQRT_2};

use crate::support::{run, steps_to};
use mechanism_runtime::reference::double_pendulum::{initial_state, DoublePendulum};
use mechanism_runtime::reference::robot_arm::{self, RobotArm};
use mechanism_runtime::{
    AppliedForces, ConstantMass, Holonomic, HolonomicKinematics, Inertia, InertiaGradient,
    Integrator, Potential, SMatrix, SVector, State,
};

/// The end time of the double-pendulum convergence studies.
pub(super) const T_END: f64 = 1.0;

/// Returns `(θ̇, θ̈)` of the double pendulum in angles from the downward vertical, with
/// `m1 = m2 = g = l1 = 1`, `l2 = √2`: `M(θ) θ̈ = f(θ, θ̇)`,
/// `M = [[(m1+m2) l1², m2 l1 l2 c], [m2 l1 l2 c, m2 l2²]]`, `c = cos(θ1 − θ2)`,
/// `f1 = −m2 l1 l2 s θ̇2² − (m1+m2) g l1 sin θ1`, `f2 = m2 l1 l2 s θ̇1² − m2 g l2 sin θ2`.
pub(super) fn angle_rhs(y: [f64; 4]) -> [f64; 4] {
    DoublePendulum::default()
        .angle_dynamics(&SVector::from(y))
        .into()
}

/// Returns the Cartesian `(q, v, q̈)` of the angle state `y = (θ1, θ2, θ̇1, θ̇2)`.
pub(super) fn cartesian(y: [f64; 4]) -> (SVector<f64, 4>, SVector<f64, 4>, SVector<f64, 4>) {
    let (l1, l2) = (1.0, SQRT_2);
    let [th1, th2, w1, w2] = y;
    let [_, _, a1, a2] = angle_rhs(y);
    let (s1, c1) = th1.sin_cos();
    let (s2, c2) = th2.sin_cos();
    let q1 = [l1 * s1, -l1 * c1];
    let v1 = [l1 * c1 * w1, l1 * s1 * w1];
    let acc1 = [l1 * (c1 * a1 - s1 * w1 * w1), l1 * (s1 * a1 + c1 * w1 * w1)];
    let q = SVector::<f64, 4>::new(q1[0], q1[1], q1[0] + l2 * s2, q1[1] - l2 * c2);
    let v = SVector::<f64, 4>::new(v1[0], v1[1], v1[0] + l2 * c2 * w2, v1[1] + l2 * s2 * w2);
    let acc = SVector::<f64, 4>::new(
        acc1[0],
        acc1[1],
        acc1[0] + l2 * (c2 * a2 - s2 * w2 * w2),
        acc1[1] + l2 * (s2 * a2 + c2 * w2 * w2),
    );
    (q, v, acc)
}

/// Integrates `y' = rhs(t, y)` with classical RK4 (written out here, not the library's) with
/// `steps` steps of size `h` from `t = 0`.
pub(super) fn reference_rk4<const D: usize>(
    rhs: impl Fn(f64, [f64; D]) -> [f64; D],
    mut y: [f64; D],
    h: f64,
    steps: usize,
) -> [f64; D] {
    let axpy = |y: [f64; D], k: [f64; D], a: f64| std::array::from_fn(|i| y[i] + a * k[i]);
    for n in 0..steps {
        let t = n as f64 * h;
        let k1 = rhs(t, y);
        let k2 = rhs(t + h / 2.0, axpy(y, k1, h / 2.0));
        let k3 = rhs(t + h / 2.0, axpy(y, k2, h / 2.0));
        let k4 = rhs(t + h, axpy(y, k3, h));
        y = std::array::from_fn(|i| y[i] + h / 6.0 * (k1[i] + 2.0 * k2[i] + 2.0 * k3[i] + k4[i]));
    }
    y
}

/// The double pendulum in angles at `t_end`, from `θ = (0, π/4)` at rest (the Cartesian
/// reference model's initial state), by RK4 at `h = 1e-4`, as Cartesian `(q, v)`.
pub(super) fn pendulum_reference(t_end: f64) -> (SVector<f64, 4>, SVector<f64, 4>) {
    let h = 1e-4;
    let y = reference_rk4(
        |_, y| angle_rhs(y),
        [0.0, FRAC_PI_4, 0.0, 0.0],
        h,
        steps_to(t_end, h),
    );
    let (q, v, _) = cartesian(y);
    (q, v)
}

/// Returns the position errors `max |q − q_ref|` at `T_END` of `make(h)` for each `h`.
pub(super) fn pendulum_errors<I: Integrator<DoublePendulum, 4>>(
    hs: &[f64],
    make: impl Fn(f64) -> I,
) -> Vec<f64> {
    let model = DoublePendulum::default();
    let (q_ref, _) = pendulum_reference(T_END);
    hs.iter()
        .map(|&h| {
            let mut integrator = make(h);
            let end = run(
                &mut integrator,
                &model,
                initial_state(),
                steps_to(T_END, h),
                |_| {},
            )
            .unwrap();
            (end.q - q_ref).amax()
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The two-link arm of Example 2 (Ascher et al. 1995 §6), in the angles θ1, θ2 of Fig. 6.1:
// `mechanism_runtime::reference::robot_arm`, and its Case II reduced to an ODE here.

/// The arm of Case II reduced to `(θ1, θ̇1)`: `θ2` solves `y2 = sin²(ωt)` in closed form, `θ̇2`
/// the velocity constraint, and `θ̈1` the equations of motion projected on the null space of
/// `G`, `n = (G2, −G1)`: `nᵀ (M θ̈ − f) = 0` with `θ̈ = e θ̈1 + p` from `G θ̈ + b = 0`. Uses the
/// paper's printed `M` and `f`; shares no code with the index-1 integrators.
pub(super) fn reduced_arm(
    arm: &RobotArm,
    omega: f64,
    t: f64,
    theta1: f64,
    w1: f64,
) -> ([f64; 2], [f64; 2], f64) {
    let (l1, l2) = (arm.l1, arm.l2);
    let s = (omega * t).sin().powi(2);
    let s_t = omega * (2.0 * omega * t).sin();
    let s_tt = 2.0 * omega * omega * (2.0 * omega * t).cos();
    let (s1, c1) = theta1.sin_cos();
    let sum = ((s - l1 * s1) / l2).asin();
    let theta2 = sum - theta1;
    let (s12, c12) = sum.sin_cos();
    assert!(
        c12 > 0.05,
        "the reduced reference left its chart: cos(θ1 + θ2) = {c12}"
    );
    let g1 = l1 * c1 + l2 * c12;
    let g2 = l2 * c12;
    let w2 = (s_t - g1 * w1) / g2;
    let w12 = w1 + w2;
    let b = -l1 * s1 * w1 * w1 - l2 * s12 * w12 * w12 - s_tt;
    let q = SVector::<f64, 2>::new(theta1, theta2);
    let v = SVector::<f64, 2>::new(w1, w2);
    let mut m = SMatrix::<f64, 2, 2>::zeros();
    arm.mass_matrix(&q, &mut m);
    let f = arm.paper_force(&q, &v);
    let n = SVector::<f64, 2>::new(g2, -g1);
    let e = SVector::<f64, 2>::new(1.0, -g1 / g2);
    let p = SVector::<f64, 2>::new(0.0, -b / g2);
    let a1 = n.dot(&(f - m * p)) / n.dot(&(m * e));
    ([theta1, theta2], [w1, w2], a1)
}

/// The Case II arm at `t_end` by RK4 at `h = 1e-4` on the reduced ODE, as `(θ, θ̇)`.
pub(super) fn arm_reference(
    arm: &RobotArm,
    omega: f64,
    t_end: f64,
) -> (SVector<f64, 2>, SVector<f64, 2>) {
    let h = 1e-4;
    let y0 = robot_arm::initial_state();
    let y = reference_rk4(
        |t, [th1, w1]| [w1, reduced_arm(arm, omega, t, th1, w1).2],
        [y0.q[0], y0.v[0]],
        h,
        steps_to(t_end, h),
    );
    let (q, v, _) = reduced_arm(arm, omega, t_end, y[0], y[1]);
    (SVector::from(q), SVector::from(v))
}

/// A pendulum whose pivot is driven along `x = a sin(ωt)`: `g = (x − a sin ωt)² + y² − l²`, a
/// rheonomic constraint with `G_t ≠ 0` (which the arm's paths do not have).
#[derive(Clone, Copy, Debug)]
pub(super) struct MovingPivot {
    pub(super) a: f64,
    pub(super) omega: f64,
    pub(super) l: f64,
}

impl MovingPivot {
    /// Returns a consistent state at `t` with angle `theta` from the downward vertical and
    /// angular velocity `w`.
    pub(super) fn state(&self, t: f64, theta: f64, w: f64) -> State<2> {
        let (s, c) = theta.sin_cos();
        let pivot = self.a * (self.omega * t).sin();
        let pivot_v = self.a * self.omega * (self.omega * t).cos();
        State::new(
            t,
            [pivot + self.l * s, -self.l * c],
            [pivot_v + self.l * c * w, self.l * s * w],
        )
    }
}

impl ConstantMass<2> for MovingPivot {}

impl Inertia<2> for MovingPivot {
    const CONSTANT_MASS: bool = true;
    fn mass_matrix(&self, _q: &SVector<f64, 2>, m: &mut SMatrix<f64, 2, 2>) {
        *m = SMatrix::<f64, 2, 2>::identity();
    }
}

impl InertiaGradient<2> for MovingPivot {
    fn kinetic_gradient(
        &self,
        _q: &SVector<f64, 2>,
        _v: &SVector<f64, 2>,
        out: &mut SVector<f64, 2>,
    ) {
        out.fill(0.0);
    }
    fn kinetic_hessians(
        &self,
        _q: &SVector<f64, 2>,
        _v: &SVector<f64, 2>,
        qq: &mut SMatrix<f64, 2, 2>,
        qv: &mut SMatrix<f64, 2, 2>,
    ) {
        qq.fill(0.0);
        qv.fill(0.0);
    }
}

impl Potential<2> for MovingPivot {
    fn potential(&self, q: &SVector<f64, 2>) -> f64 {
        q[1]
    }
    fn potential_gradient(&self, _q: &SVector<f64, 2>, grad: &mut SVector<f64, 2>) {
        *grad = SVector::<f64, 2>::new(0.0, 1.0);
    }
}

impl AppliedForces<2> for MovingPivot {}

impl Holonomic<2, 1> for MovingPivot {
    const CONSTRAINTS: [&'static str; 1] = ["rod"];
    fn constraints(&self, q: &SVector<f64, 2>, t: f64, g: &mut SVector<f64, 1>) {
        let dx = q[0] - self.a * (self.omega * t).sin();
        g[0] = dx * dx + q[1] * q[1] - self.l * self.l;
    }
    fn constraint_jacobian(&self, q: &SVector<f64, 2>, t: f64, jac: &mut SMatrix<f64, 1, 2>) {
        let dx = q[0] - self.a * (self.omega * t).sin();
        *jac = SMatrix::<f64, 1, 2>::new(2.0 * dx, 2.0 * q[1]);
    }
}

impl HolonomicKinematics<2, 1> for MovingPivot {
    fn constraint_time_derivative(&self, q: &SVector<f64, 2>, t: f64, out: &mut SVector<f64, 1>) {
        let (s, c) = (self.omega * t).sin_cos();
        out[0] = -2.0 * (q[0] - self.a * s) * self.a * self.omega * c;
    }
    fn constraint_acceleration_bias(
        &self,
        q: &SVector<f64, 2>,
        v: &SVector<f64, 2>,
        t: f64,
        out: &mut SVector<f64, 1>,
    ) {
        // (G v)_q v = 2|v|², 2 G_t v = −4 a ω cos(ωt) v_x,
        // g_tt = 2 a² ω² cos²(ωt) + 2 (x − a sin ωt) a ω² sin(ωt).
        let (a, w) = (self.a, self.omega);
        let (s, c) = (w * t).sin_cos();
        out[0] = 2.0 * v.dot(v) - 4.0 * a * w * c * v[0]
            + 2.0 * a * a * w * w * c * c
            + 2.0 * (q[0] - a * s) * a * w * w * s;
    }
}
