//! §6.1, two masses and two nonlinear springs with a singular mass matrix: energy and the
//! interconnection constraint are conserved to round-off.

use crate::support::steps_to;
use mechanism_runtime::integrators::energy_momentum::Livens;
use mechanism_runtime::observers::position_residual;
use mechanism_runtime::{
    ConstantMass, Holonomic, HolonomicHessians, Inertia, InertiaGradient, Integrator, Potential,
    PotentialHessian, SMatrix, SVector, State,
};

/// Kinon–Betsch–Livens §6.1 (after Udwadia–Phohomsiri): two masses and two nonlinear springs in
/// the redundant coordinates `q = (x1, q2, x2)` — `x1` and `q2` absolute, `x2` relative to `q2`
/// — with the singular mass matrix of eq. 40, the potential of eq. 41 and the interconnection
/// constraint `g = ½ ((q2 − x1)² − (l10 + w)²)` (eq. 38).
#[derive(Clone, Copy, Debug)]
struct SingularMassSpring {
    m: [f64; 2],
    k: [f64; 2],
    l10: f64,
    w: f64,
}

impl Default for SingularMassSpring {
    /// Table 1: `m = (1, 1)`, `k = (1, 3)`, `l10 = 1`, `w = 0.1`.
    fn default() -> Self {
        SingularMassSpring {
            m: [1.0, 1.0],
            k: [1.0, 3.0],
            l10: 1.0,
            w: 0.1,
        }
    }
}

impl ConstantMass<3> for SingularMassSpring {}

impl Inertia<3> for SingularMassSpring {
    const CONSTANT_MASS: bool = true;

    /// Eq. 40: `[[m1, 0, 0], [0, m2, m2], [0, m2, m2]]`, singular.
    fn mass_matrix(&self, _q: &SVector<f64, 3>, m: &mut SMatrix<f64, 3, 3>) {
        let [m1, m2] = self.m;
        #[rustfmt::skip]
        let mass = SMatrix::<f64, 3, 3>::new(
            m1,  0.0, 0.0,
            0.0, m2,  m2,
            0.0, m2,  m2,
        );
        *m = mass;
    }
}

impl InertiaGradient<3> for SingularMassSpring {
    fn kinetic_gradient(
        &self,
        _q: &SVector<f64, 3>,
        _v: &SVector<f64, 3>,
        out: &mut SVector<f64, 3>,
    ) {
        *out = SVector::zeros();
    }

    fn kinetic_hessians(
        &self,
        _q: &SVector<f64, 3>,
        _v: &SVector<f64, 3>,
        qq: &mut SMatrix<f64, 3, 3>,
        qv: &mut SMatrix<f64, 3, 3>,
    ) {
        *qq = SMatrix::zeros();
        *qv = SMatrix::zeros();
    }
}

/// Eq. 41: `V = ¼ k1 (x1² + x1⁴) + ¼ k2 (x2² + x2⁴)`.
impl Potential<3> for SingularMassSpring {
    fn potential(&self, q: &SVector<f64, 3>) -> f64 {
        let (x1, x2) = (q[0], q[2]);
        0.25 * self.k[0] * (x1 * x1 + x1.powi(4)) + 0.25 * self.k[1] * (x2 * x2 + x2.powi(4))
    }

    fn potential_gradient(&self, q: &SVector<f64, 3>, grad: &mut SVector<f64, 3>) {
        let (x1, x2) = (q[0], q[2]);
        *grad = SVector::<f64, 3>::new(
            self.k[0] * (0.5 * x1 + x1.powi(3)),
            0.0,
            self.k[1] * (0.5 * x2 + x2.powi(3)),
        );
    }
}

impl PotentialHessian<3> for SingularMassSpring {
    fn potential_hessian(&self, q: &SVector<f64, 3>, hess: &mut SMatrix<f64, 3, 3>) {
        let (x1, x2) = (q[0], q[2]);
        *hess = SMatrix::from_diagonal(&SVector::<f64, 3>::new(
            self.k[0] * (0.5 + 3.0 * x1 * x1),
            0.0,
            self.k[1] * (0.5 + 3.0 * x2 * x2),
        ));
    }
}

impl Holonomic<3, 1> for SingularMassSpring {
    const CONSTRAINTS: [&'static str; 1] = ["interconnection"];

    fn constraints(&self, q: &SVector<f64, 3>, _t: f64, g: &mut SVector<f64, 1>) {
        let d = q[1] - q[0];
        let l = self.l10 + self.w;
        g[0] = 0.5 * (d * d - l * l);
    }

    fn constraint_jacobian(&self, q: &SVector<f64, 3>, _t: f64, jac: &mut SMatrix<f64, 1, 3>) {
        let d = q[1] - q[0];
        *jac = SMatrix::<f64, 1, 3>::new(-d, d, 0.0);
    }
}

impl HolonomicHessians<3, 1> for SingularMassSpring {
    fn constraint_hessians(
        &self,
        _q: &SVector<f64, 3>,
        _t: f64,
        out: &mut [SMatrix<f64, 3, 3>; 1],
    ) {
        #[rustfmt::skip]
        let hess = SMatrix::<f64, 3, 3>::new(
             1.0, -1.0, 0.0,
            -1.0,  1.0, 0.0,
             0.0,  0.0, 0.0,
        );
        out[0] = hess;
    }
}

/// §6.1 (Table 1: h = 0.1, T = 10): a singular mass matrix is no obstacle; the energy (eq. 31,
/// here equal to eq. 35) is conserved to round-off (Fig. 3) and the constraint holds (Fig. 4).
#[test]
fn singular_mass_spring_conserves_energy_and_constraint() {
    let model = SingularMassSpring::default();
    let mut mass = SMatrix::<f64, 3, 3>::zeros();
    model.mass_matrix(&SVector::zeros(), &mut mass);
    assert!(
        mass.determinant().abs() < 1e-15,
        "the mass matrix is singular"
    );
    // The paper gives no initial state: x1 = 0.5 with q2 = x1 + l10 + w (g = 0), at rest, and
    // the second spring stretched at a unit rate (G v = 0: q̇2 = ẋ1).
    let initial = State::new(0.0, [0.5, 1.6, 0.0], [0.0, 0.0, 1.0]);
    assert!(position_residual::<3, 1, _>(&model, &initial) < 1e-15);
    let h = 0.1;
    let mut livens = Livens::<3, 1>::new(h).unwrap();
    let mut state = initial;
    let e0 = livens.generalized_energy(&model, &state);
    let (mut previous, mut de, mut residual, mut max_it) = (e0, 0.0f64, 0.0f64, 0);
    let (mut e_min, mut e_max) = (f64::INFINITY, f64::NEG_INFINITY);
    for _ in 0..steps_to(10.0, h) {
        let report = livens.step(&model, &mut state).unwrap();
        max_it = max_it.max(report.newton_iterations);
        let e = livens.generalized_energy(&model, &state);
        de = de.max((e - previous).abs());
        previous = e;
        residual = residual.max(position_residual::<3, 1, _>(&model, &state));
        let kinetic = model.kinetic_energy(&state.q, &state.v);
        e_min = e_min.min(kinetic);
        e_max = e_max.max(kinetic);
    }
    println!("§6.1 singular mass-spring, h = {h}, T = 10, E^0 = {e0:.6}");
    println!(
        "  max |E^(n+1) − E^n| = {de:.3e} ({:.3e} relative)",
        de / e0
    );
    println!("  max |g(q^n)|        = {residual:.3e}");
    println!("  kinetic energy in [{e_min:.4}, {e_max:.4}]");
    println!("  max Newton iterations per step = {max_it}");
    assert!(de <= 1e-12 * e0, "energy increment {de:e}");
    assert!(residual <= 1e-12, "constraint residual {residual:e}");
    assert!(
        e_max - e_min > 0.1 * e0,
        "energy is exchanged between T and V"
    );
}
