//! The two-link planar robot arm of Ascher, Chin, Petzold and Reich (1995) §6, Example 2,
//! written by hand from the paper, with the paper's Tables 6.1–6.3 as data.
//!
//! Two uniform rods of masses `m1`, `m2` and lengths `l1`, `l2`; `θ1` is the angle of the first
//! rod to the horizontal, `θ2` that of the second rod to the first (Fig. 6.1), and the free end
//! `(x2, y2) = (l1 c1 + l2 c12, l1 s1 + l2 s12)` is held on a prescribed [`Path`]
//! `y2 = φ(x2, t)`. The paper prints
//!
//! ```text
//! M(θ) = [ m1 l1²/3 + m2 (l1² + l2²/3 + l1 l2 c2)   m2 (l2²/3 + l1 l2 c2/2) ]
//!        [ m2 (l2²/3 + l1 l2 c2/2)                  m2 l2²/3                ]
//! f(θ, θ̇) = −∇V + (m2 l1 l2 s2/2 (2 θ̇1 θ̇2 + θ̇2²), −m2 l1 l2 s2 θ̇1²/2),
//! V = m1 g l1 s1/2 + m2 g (l1 s1 + l2 s12/2),
//! ```
//!
//! with `m1 = m2 = 36`, `l1 = l2 = 1`, `g = 9.81` and `θ(0) = (70°, −140°)`, `θ̇(0) = 0`
//! ([`initial_state`]). Case I holds the free end on the parabola `y2 = x2² − β` (scleronomic,
//! `β` chosen so that the initial state is consistent: [`RobotArm::case_one`]); Case II on
//! `y2 = sin²(ωt)` (rheonomic: [`RobotArm::case_two`]).
//!
//! [`RobotArm`] implements the model traits by hand, so that it checks the integrators and the
//! generated `mechanism::models::RobotArmParabola`/`RobotArmSine` without sharing their code.
//! The tables ([`TABLE_6_1`], [`TABLE_6_2`], [`TABLE_6_3`]) are the paper's maximum drifts
//! `|g|∞` ("drift-position") and `|G v + g_t|∞` ("drift-velocity") over a run, one row per
//! [`Stabilization`] of [`STABILIZATIONS`].

use nalgebra::{SMatrix, SVector};

use crate::error::StepError;
use crate::integrators::stabilized::{Baumgarte, Drift, PostStabilization};
use crate::model::{
    AppliedForces, Holonomic, HolonomicKinematics, Inertia, InertiaGradient, Potential,
};
use crate::state::State;

/// The initial angles `θ(0) = (70°, −140°)` of Example 2, in degrees.
pub const INITIAL_ANGLES_DEGREES: [f64; 2] = [70.0, -140.0];

/// Returns the initial state of Example 2: `t = 0`, `θ = (70°, −140°)`, `θ̇ = 0`.
pub fn initial_state() -> State<2> {
    State::new(0.0, INITIAL_ANGLES_DEGREES.map(f64::to_radians), [0.0, 0.0])
}

/// The prescribed path of the arm's free end `(x2, y2)`: `y2 = φ(x2, t)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Path {
    /// Case I: the parabola `y2 = x2² − β` (scleronomic).
    Parabola {
        /// The parabola's offset `β`.
        beta: f64,
    },
    /// Case II: `y2 = sin²(ω t)` (rheonomic).
    Sine {
        /// The angular frequency `ω`.
        omega: f64,
    },
}

impl Path {
    /// Returns `(φ, φ_x, φ_xx, φ_t, φ_tt)` at `(x2, t)` (`φ_xt = 0` for both paths).
    pub fn derivatives(self, x: f64, t: f64) -> [f64; 5] {
        match self {
            Path::Parabola { beta } => [x * x - beta, 2.0 * x, 2.0, 0.0, 0.0],
            Path::Sine { omega } => {
                let s = (omega * t).sin();
                [
                    s * s,
                    0.0,
                    0.0,
                    omega * (2.0 * omega * t).sin(),
                    2.0 * omega * omega * (2.0 * omega * t).cos(),
                ]
            }
        }
    }
}

/// The two-link planar arm of Example 2: uniform rods, the free end constrained to a [`Path`].
///
/// With `gravity_as_force` the gravity is applied through [`AppliedForces`] instead of the
/// [`Potential`]: the same dynamics through another code path of the integrators.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RobotArm {
    /// Mass of the first rod, in kg.
    pub m1: f64,
    /// Mass of the second rod, in kg.
    pub m2: f64,
    /// Length of the first rod, in m.
    pub l1: f64,
    /// Length of the second rod, in m.
    pub l2: f64,
    /// Gravitational acceleration, in m/s².
    pub g: f64,
    /// The path of the free end.
    pub path: Path,
    /// Applies gravity as a force rather than through the potential.
    pub gravity_as_force: bool,
}

impl RobotArm {
    /// Returns the paper's arm `m1 = m2 = 36 kg`, `l1 = l2 = 1 m`, `g = 9.81 m/s²` on `path`.
    pub fn new(path: Path) -> Self {
        RobotArm {
            m1: 36.0,
            m2: 36.0,
            l1: 1.0,
            l2: 1.0,
            g: 9.81,
            path,
            gravity_as_force: false,
        }
    }

    /// Returns Case I with the `β` that makes [`initial_state`] consistent.
    pub fn case_one() -> Self {
        let arm = RobotArm::new(Path::Parabola { beta: 0.0 });
        let (x2, y2) = arm.tip(&initial_state().q);
        RobotArm::new(Path::Parabola { beta: x2 * x2 - y2 })
    }

    /// Returns Case II, `y2 = sin²(ωt)`.
    pub fn case_two(omega: f64) -> Self {
        RobotArm::new(Path::Sine { omega })
    }

    /// Returns the free end `(x2, y2)`.
    pub fn tip(&self, q: &SVector<f64, 2>) -> (f64, f64) {
        let (s1, c1) = q[0].sin_cos();
        let (s12, c12) = (q[0] + q[1]).sin_cos();
        (self.l1 * c1 + self.l2 * c12, self.l1 * s1 + self.l2 * s12)
    }

    /// Returns `∇V` of gravity, `V = m1 g l1 s1/2 + m2 g (l1 s1 + l2 s12/2)`.
    pub fn gravity_gradient(&self, q: &SVector<f64, 2>) -> SVector<f64, 2> {
        let c1 = q[0].cos();
        let c12 = (q[0] + q[1]).cos();
        let (m1, m2, l1, l2, g) = (self.m1, self.m2, self.l1, self.l2, self.g);
        SVector::<f64, 2>::new(
            m1 * g * l1 * c1 / 2.0 + m2 * g * (l1 * c1 + l2 * c12 / 2.0),
            m2 * g * l2 * c12 / 2.0,
        )
    }

    /// Returns `∂M/∂θ2` (the only nonzero derivative) and `∂²M/∂θ2²`.
    fn mass_derivatives(&self, q: &SVector<f64, 2>) -> [SMatrix<f64, 2, 2>; 2] {
        let (s2, c2) = q[1].sin_cos();
        let k = self.m2 * self.l1 * self.l2;
        [
            SMatrix::<f64, 2, 2>::new(-k * s2, -k * s2 / 2.0, -k * s2 / 2.0, 0.0),
            SMatrix::<f64, 2, 2>::new(-k * c2, -k * c2 / 2.0, -k * c2 / 2.0, 0.0),
        ]
    }

    /// Returns the force `f(θ, θ̇)` of Example 2 as printed: gravity plus the velocity terms
    /// `(m2 l1 l2 s2/2 (2 θ̇1 θ̇2 + θ̇2²), −m2 l1 l2 s2 θ̇1²/2)`.
    pub fn paper_force(&self, q: &SVector<f64, 2>, v: &SVector<f64, 2>) -> SVector<f64, 2> {
        let s2 = q[1].sin();
        let k = self.m2 * self.l1 * self.l2 * s2 / 2.0;
        -self.gravity_gradient(q)
            + SVector::<f64, 2>::new(k * (2.0 * v[0] * v[1] + v[1] * v[1]), -k * v[0] * v[0])
    }
}

impl Inertia<2> for RobotArm {
    const CONSTANT_MASS: bool = false;

    fn mass_matrix(&self, q: &SVector<f64, 2>, m: &mut SMatrix<f64, 2, 2>) {
        let c2 = q[1].cos();
        let (m1, m2, l1, l2) = (self.m1, self.m2, self.l1, self.l2);
        let m12 = m2 * (l2 * l2 / 3.0 + l1 * l2 * c2 / 2.0);
        *m = SMatrix::<f64, 2, 2>::new(
            m1 * l1 * l1 / 3.0 + m2 * (l1 * l1 + l2 * l2 / 3.0 + l1 * l2 * c2),
            m12,
            m12,
            m2 * l2 * l2 / 3.0,
        );
    }
}

impl InertiaGradient<2> for RobotArm {
    fn kinetic_gradient(
        &self,
        q: &SVector<f64, 2>,
        v: &SVector<f64, 2>,
        out: &mut SVector<f64, 2>,
    ) {
        let [dm, _] = self.mass_derivatives(q);
        *out = SVector::<f64, 2>::new(0.0, 0.5 * v.dot(&(dm * v)));
    }

    fn kinetic_hessians(
        &self,
        q: &SVector<f64, 2>,
        v: &SVector<f64, 2>,
        qq: &mut SMatrix<f64, 2, 2>,
        qv: &mut SMatrix<f64, 2, 2>,
    ) {
        let [dm, ddm] = self.mass_derivatives(q);
        *qq = SMatrix::<f64, 2, 2>::new(0.0, 0.0, 0.0, 0.5 * v.dot(&(ddm * v)));
        let row = (dm * v).transpose();
        *qv = SMatrix::<f64, 2, 2>::zeros();
        qv.set_row(1, &row);
    }
}

impl Potential<2> for RobotArm {
    fn potential(&self, q: &SVector<f64, 2>) -> f64 {
        if self.gravity_as_force {
            return 0.0;
        }
        let (s1, s12) = (q[0].sin(), (q[0] + q[1]).sin());
        let (m1, m2, l1, l2, g) = (self.m1, self.m2, self.l1, self.l2, self.g);
        m1 * g * l1 * s1 / 2.0 + m2 * g * (l1 * s1 + l2 * s12 / 2.0)
    }

    fn potential_gradient(&self, q: &SVector<f64, 2>, grad: &mut SVector<f64, 2>) {
        *grad = if self.gravity_as_force {
            SVector::zeros()
        } else {
            self.gravity_gradient(q)
        };
    }
}

impl AppliedForces<2> for RobotArm {
    fn applied_force(
        &self,
        q: &SVector<f64, 2>,
        _v: &SVector<f64, 2>,
        _t: f64,
        out: &mut SVector<f64, 2>,
    ) {
        *out = if self.gravity_as_force {
            -self.gravity_gradient(q)
        } else {
            SVector::zeros()
        };
    }
}

impl Holonomic<2, 1> for RobotArm {
    const CONSTRAINTS: [&'static str; 1] = ["path"];

    fn constraints(&self, q: &SVector<f64, 2>, t: f64, g: &mut SVector<f64, 1>) {
        let (x2, y2) = self.tip(q);
        g[0] = y2 - self.path.derivatives(x2, t)[0];
    }

    fn constraint_jacobian(&self, q: &SVector<f64, 2>, t: f64, jac: &mut SMatrix<f64, 1, 2>) {
        let (x2, y2) = self.tip(q);
        let (s12, c12) = (q[0] + q[1]).sin_cos();
        let phi_x = self.path.derivatives(x2, t)[1];
        // G = ∂y2/∂θ − φ_x ∂x2/∂θ with ∂x2/∂θ = (−y2, −l2 s12), ∂y2/∂θ = (x2, l2 c12).
        jac[(0, 0)] = x2 + phi_x * y2;
        jac[(0, 1)] = self.l2 * c12 + phi_x * self.l2 * s12;
    }
}

impl HolonomicKinematics<2, 1> for RobotArm {
    fn constraint_time_derivative(&self, q: &SVector<f64, 2>, t: f64, out: &mut SVector<f64, 1>) {
        let (x2, _) = self.tip(q);
        out[0] = -self.path.derivatives(x2, t)[3];
    }

    fn constraint_acceleration_bias(
        &self,
        q: &SVector<f64, 2>,
        v: &SVector<f64, 2>,
        t: f64,
        out: &mut SVector<f64, 1>,
    ) {
        // g̈ at θ̈ = 0: ÿ2 − φ_xx ẋ2² − φ_x ẍ2 − φ_tt, with ẍ2, ÿ2 the centripetal parts.
        let (x2, _) = self.tip(q);
        let (s1, c1) = q[0].sin_cos();
        let (s12, c12) = (q[0] + q[1]).sin_cos();
        let (w1, w12) = (v[0], v[0] + v[1]);
        let x_dot = -self.l1 * s1 * w1 - self.l2 * s12 * w12;
        let x_ddot = -self.l1 * c1 * w1 * w1 - self.l2 * c12 * w12 * w12;
        let y_ddot = -self.l1 * s1 * w1 * w1 - self.l2 * s12 * w12 * w12;
        let [_, phi_x, phi_xx, _, phi_tt] = self.path.derivatives(x2, t);
        out[0] = y_ddot - phi_xx * x_dot * x_dot - phi_x * x_ddot - phi_tt;
    }
}

/// One stabilization of the paper's tables: a row of Tables 6.1–6.3.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stabilization {
    /// The paper's label, e.g. `Baum(12,70)` or `S-both²`.
    pub label: &'static str,
    /// Baumgarte's `(α1, α0)`; `(0, 0)` is plain index reduction.
    pub alphas: (f64, f64),
    /// The post-stabilization after each step.
    pub post: PostStabilization,
}

impl Stabilization {
    /// Returns the row's Baumgarte stabilization.
    ///
    /// # Errors
    ///
    /// As [`Baumgarte::new`]; never for the rows of [`STABILIZATIONS`].
    pub fn baumgarte(&self) -> Result<Baumgarte, StepError> {
        Baumgarte::new(self.alphas.0, self.alphas.1)
    }
}

/// The seven stabilizations of Tables 6.1–6.2, in the paper's order.
pub const STABILIZATIONS: [Stabilization; 7] = [
    row("Baum(0,0)", (0.0, 0.0), PostStabilization::None),
    row("Baum(12,70)", (12.0, 70.0), PostStabilization::None),
    row("S-full", (0.0, 0.0), PostStabilization::Full),
    row("S-both", (0.0, 0.0), PostStabilization::Both),
    row("S-both²", (0.0, 0.0), PostStabilization::BothTwice),
    row("S-vel", (0.0, 0.0), PostStabilization::Velocity),
    row("S-pos", (0.0, 0.0), PostStabilization::Position),
];

const fn row(label: &'static str, alphas: (f64, f64), post: PostStabilization) -> Stabilization {
    Stabilization {
        label,
        alphas,
        post,
    }
}

/// The step sizes of Tables 6.1–6.2: `h = .01`, then `h = .001`.
pub const STEP_SIZES: [f64; 2] = [0.01, 0.001];

const fn drift(velocity: f64, position: f64) -> Option<Drift> {
    Some(Drift { position, velocity })
}

/// A fixed-step drift table of the paper (Heun's method, "an explicit Runge–Kutta scheme of
/// order 2"): per step size of [`STEP_SIZES`], the maximum drift of each row of
/// [`STABILIZATIONS`], `None` for the paper's `*` (a blow-up).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FixedStepTable {
    /// The end time `t_f` of every run.
    pub t_end: f64,
    /// The drifts: `drifts[k][row]` at `h = STEP_SIZES[k]`.
    pub drifts: [[Option<Drift>; 7]; 2],
}

/// Table 6.1: Case I ([`RobotArm::case_one`]), `t_f = 40`.
pub const TABLE_6_1: FixedStepTable = FixedStepTable {
    t_end: 40.0,
    drifts: [
        [
            drift(0.33e-2, 0.17e-2),
            drift(0.72e-2, 0.14e-2),
            drift(0.12e-7, 0.61e-9),
            drift(0.16e-3, 0.39e-9),
            drift(0.67e-8, 0.15e-13),
            drift(0.36e-14, 0.84e-3),
            None,
        ],
        [
            drift(0.32e-4, 0.17e-4),
            drift(0.70e-4, 0.14e-4),
            drift(0.15e-13, 0.40e-14),
            drift(0.16e-6, 0.39e-14),
            drift(0.18e-13, 0.31e-14),
            drift(0.36e-14, 0.81e-5),
            drift(0.48e-2, 0.76e-11),
        ],
    ],
};

/// The `ω` of Table 6.2.
pub const TABLE_6_2_OMEGA: f64 = 0.5;

/// Table 6.2: Case II with `ω = ½` ([`TABLE_6_2_OMEGA`]), `t_f = 10`.
pub const TABLE_6_2: FixedStepTable = FixedStepTable {
    t_end: 10.0,
    drifts: [
        [
            None,
            drift(0.51, 0.25e-1),
            drift(0.72e-5, 0.63e-6),
            drift(0.31e-1, 0.68e-5),
            drift(0.20e-3, 0.68e-6),
            drift(0.60e-14, 0.78e-2),
            drift(0.73, 0.28e-2),
        ],
        [
            drift(0.66e-4, 0.56e-4),
            drift(0.60e-3, 0.38e-4),
            drift(0.39e-10, 0.53e-11),
            drift(0.41e-4, 0.46e-11),
            drift(0.20e-9, 0.78e-15),
            drift(0.43e-14, 0.58e-4),
            drift(0.44e-2, 0.88e-10),
        ],
    ],
};

/// One entry of Table 6.3: the step count and the maximum drift of an adaptive run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveEntry {
    /// NSTEP: accepted and rejected steps.
    pub nstep: usize,
    /// The maximum drifts over the run.
    pub drift: Drift,
}

/// An adaptive drift table of the paper: DOPRI5 at a tolerance, per `ω` of Case II the entries
/// of the rows [`TABLE_6_3_ROWS`] of [`STABILIZATIONS`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveTable {
    /// The relative tolerance `TOL`.
    pub rtol: f64,
    /// The absolute tolerance, `0.1 TOL`.
    pub atol: f64,
    /// The end time `t_f`.
    pub t_end: f64,
    /// Per `ω`, the entries of the rows.
    pub entries: [(f64, [AdaptiveEntry; 3]); 2],
}

/// The rows of [`STABILIZATIONS`] that Table 6.3 has: Baum(0,0), Baum(12,70), S-both².
pub const TABLE_6_3_ROWS: [usize; 3] = [0, 1, 4];

const fn adaptive(nstep: usize, position: f64, velocity: f64) -> AdaptiveEntry {
    AdaptiveEntry {
        nstep,
        drift: Drift { position, velocity },
    }
}

/// Table 6.3: Case II with DOPRI5, `TOL = 1e-5`, `atol = 0.1 TOL`, `t_f = 100`, for `ω = ½`
/// and `ω = 1`.
pub const TABLE_6_3: AdaptiveTable = AdaptiveTable {
    rtol: 1e-5,
    atol: 0.1 * 1e-5,
    t_end: 100.0,
    entries: [
        (
            0.5,
            [
                adaptive(10864, 0.96, 0.22e-1),
                adaptive(4197, 0.81e-5, 0.11e-3),
                adaptive(3767, 0.66e-10, 0.17e-6),
            ],
        ),
        (
            1.0,
            [
                adaptive(15408, 1.38, 0.36e-1),
                adaptive(12826, 0.42e-4, 0.52e-3),
                adaptive(5381, 0.36e-9, 0.54e-6),
            ],
        ),
    ],
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_one_starts_on_its_parabola() {
        let arm = RobotArm::case_one();
        let mut g = SVector::<f64, 1>::zeros();
        arm.constraints(&initial_state().q, 0.0, &mut g);
        assert!(g[0].abs() < 1e-15, "{g}");
        let Path::Parabola { beta } = arm.path else {
            panic!("{:?}", arm.path)
        };
        assert!((beta - 4.0 * 70f64.to_radians().cos().powi(2)).abs() < 1e-15);
    }

    #[test]
    fn every_row_has_a_valid_baumgarte_stabilization() {
        for row in STABILIZATIONS {
            assert!(row.baumgarte().is_ok(), "{row:?}");
        }
        assert_eq!(
            TABLE_6_3_ROWS.map(|i| STABILIZATIONS[i].label),
            ["Baum(0,0)", "Baum(12,70)", "S-both²"]
        );
    }
}
