//! The Livens/Gonzalez energy-momentum scheme (Kinon–Betsch–Livens eq. 30) on the paper's two
//! examples (§6.1 singular mass-spring system, §6.2 spherical spring pendulum) and on the
//! constrained double pendulum.

mod common;

use common::{report, steps_to};
use mechanism_runtime::integrators::energy_momentum::Livens;
use mechanism_runtime::observers::{energy, position_residual};
use mechanism_runtime::reference::double_pendulum::{self, DoublePendulum};
use mechanism_runtime::reference::spherical_pendulum::{self, SphericalSpringPendulum};
use mechanism_runtime::{
    Holonomic, HolonomicHessians, Inertia, InertiaGradient, Integrator, Potential,
    PotentialHessian, SMatrix, SVector, State, StepError,
};

/// A model without constraints, seen as one with `M = 0` constraint rows (what `Livens<N, 0>`
/// needs); every other capability is delegated.
struct Free<T>(T);

impl<const N: usize, T: Inertia<N>> Inertia<N> for Free<T> {
    const CONSTANT_MASS: bool = T::CONSTANT_MASS;

    fn mass_matrix(&self, q: &SVector<f64, N>, m: &mut SMatrix<f64, N, N>) {
        self.0.mass_matrix(q, m);
    }

    fn kinetic_energy(&self, q: &SVector<f64, N>, v: &SVector<f64, N>) -> f64 {
        self.0.kinetic_energy(q, v)
    }
}

impl<const N: usize, T: InertiaGradient<N>> InertiaGradient<N> for Free<T> {
    fn kinetic_gradient(
        &self,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        out: &mut SVector<f64, N>,
    ) {
        self.0.kinetic_gradient(q, v, out);
    }

    fn kinetic_hessians(
        &self,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        qq: &mut SMatrix<f64, N, N>,
        qv: &mut SMatrix<f64, N, N>,
    ) {
        self.0.kinetic_hessians(q, v, qq, qv);
    }
}

impl<const N: usize, T: Potential<N>> Potential<N> for Free<T> {
    fn potential(&self, q: &SVector<f64, N>) -> f64 {
        self.0.potential(q)
    }

    fn potential_gradient(&self, q: &SVector<f64, N>, grad: &mut SVector<f64, N>) {
        self.0.potential_gradient(q, grad);
    }
}

impl<const N: usize, T: PotentialHessian<N>> PotentialHessian<N> for Free<T> {
    fn potential_hessian(&self, q: &SVector<f64, N>, hess: &mut SMatrix<f64, N, N>) {
        self.0.potential_hessian(q, hess);
    }
}

impl<const N: usize, T> Holonomic<N, 0> for Free<T> {
    const CONSTRAINTS: [&'static str; 0] = [];

    fn constraints(&self, _q: &SVector<f64, N>, _t: f64, _g: &mut SVector<f64, 0>) {}

    fn constraint_jacobian(&self, _q: &SVector<f64, N>, _t: f64, _jac: &mut SMatrix<f64, 0, N>) {}
}

impl<const N: usize, T> HolonomicHessians<N, 0> for Free<T> {
    fn constraint_hessians(
        &self,
        _q: &SVector<f64, N>,
        _t: f64,
        _out: &mut [SMatrix<f64, N, N>; 0],
    ) {
    }
}

/// The increments of a sequence: `x[n+1] − x[n]`.
fn increments(x: &[f64]) -> Vec<f64> {
    x.windows(2).map(|w| w[1] - w[0]).collect()
}

/// The largest absolute value of a sequence.
fn max_abs(x: &[f64]) -> f64 {
    x.iter().fold(0.0, |m, v| m.max(v.abs()))
}

/// §6.2: spring pendulum in spherical coordinates (Table 2, eq. 46, no gravity): the generalized
/// energy (eq. 31) is conserved to round-off (Fig. 8), the total energy (eq. 35) only to about
/// `1e-4` per step (Fig. 7), and `p ≠ M v` (Proposition 5.5).
#[test]
fn spherical_spring_pendulum_conserves_the_generalized_energy() {
    let model = Free(SphericalSpringPendulum::default());
    assert_eq!(model.0.gravity, 0.0, "the paper's pendulum has no gravity");
    let h = 0.01;
    let mut livens = Livens::<3, 0>::new(h).unwrap();
    let mut state = spherical_pendulum::initial_state();
    let steps = steps_to(1.0, h);

    let mut generalized = vec![livens.generalized_energy(&model, &state)];
    let mut total = vec![energy(&model, &state)];
    let mut p_phi = vec![livens.momentum_at(&model, &state)[2]];
    let mut mv_phi = vec![p_phi[0]];
    let mut iterations = Vec::new();
    let mut fiber_gap = 0.0f64;
    for _ in 0..steps {
        let report = livens.step(&model, &mut state).unwrap();
        iterations.push(report.newton_iterations);
        let p = *livens.momentum().unwrap();
        assert_eq!(
            p,
            livens.momentum_at(&model, &state),
            "carried momentum keyed to the state"
        );
        let mut mass = SMatrix::<f64, 3, 3>::zeros();
        model.mass_matrix(&state.q, &mut mass);
        let mv = mass * state.v;
        fiber_gap = fiber_gap.max((p - mv).amax());
        generalized.push(livens.generalized_energy(&model, &state));
        total.push(energy(&model, &state));
        p_phi.push(p[2]);
        mv_phi.push(mv[2]);
    }
    assert!((state.t - 1.0).abs() < 1e-12);

    let e0 = generalized[0].abs();
    let de = max_abs(&increments(&generalized));
    let dtot = max_abs(&increments(&total));
    let dp_phi = max_abs(&increments(&p_phi));
    let dmv_phi = max_abs(&increments(&mv_phi));
    let min_it = iterations.iter().min().unwrap();
    let max_it = iterations.iter().max().unwrap();
    let mean_it = iterations.iter().sum::<u32>() as f64 / iterations.len() as f64;
    println!("§6.2 spherical spring pendulum, h = {h}, T = 1 ({steps} steps)");
    println!("  E^0 = {:.15}, E_tot^0 = {:.15}", generalized[0], total[0]);
    println!(
        "  max |E^(n+1) − E^n| (eq. 31)        = {de:.3e} ({:.3e} relative)",
        de / e0
    );
    println!("  max |E_tot^(n+1) − E_tot^n| (eq. 35) = {dtot:.3e}");
    println!("  max |p − M v|                        = {fiber_gap:.3e}");
    println!(
        "  max |Δp_φ| (carried)                 = {dp_phi:.3e}, p_φ^0 = {:.6}",
        p_phi[0]
    );
    println!("  max |Δ(M v)_φ| (m r² sin²θ φ̇)       = {dmv_phi:.3e}");
    println!("  Newton iterations per step: min {min_it}, max {max_it}, mean {mean_it:.2}");

    assert!(de <= 1e-12 * e0, "generalized energy increment {de:e}");
    // Fig. 7: total-energy increments of order 1e-4 — clearly above round-off, clearly small.
    assert!(
        dtot > 1e-7 && dtot < 1e-2,
        "total energy increment {dtot:e}"
    );
    // Proposition 5.5: with a configuration-dependent mass matrix p ≠ M v.
    assert!(fiber_gap > 1e-8, "p − M v = {fiber_gap:e}");
    assert!(*max_it <= 6, "Newton iterations {max_it}");
    // φ is cyclic, but Gonzalez's correction `c Δq/|Δq|²` (eq. 26) of D̄₁T and D̄V has a φ
    // component ∝ Δφ, so p_φ is not conserved to round-off: its change is a second-order
    // truncation error (drift over T = 1 drops about 4× when h is halved).
    assert!(dp_phi < 1e-4, "p_φ increment {dp_phi:e}");
    let drift = |h: f64| {
        let mut livens = Livens::<3, 0>::new(h).unwrap();
        let mut state = spherical_pendulum::initial_state();
        let p0 = livens.momentum_at(&model, &state)[2];
        let mut worst = 0.0f64;
        for _ in 0..steps_to(1.0, h) {
            livens.step(&model, &mut state).unwrap();
            worst = worst.max((livens.momentum().unwrap()[2] - p0).abs());
        }
        worst
    };
    let (coarse, fine) = (drift(0.01), drift(0.005));
    println!("  max |p_φ^n − p_φ^0| over T = 1: {coarse:.3e} (h = 0.01), {fine:.3e} (h = 0.005)");
    assert!(coarse / fine > 3.0, "p_φ drift is not second order");
}

/// A fresh state or a state that is not the last step's end restarts from `p = M v`.
#[test]
fn momentum_is_recomputed_for_a_foreign_state() {
    let model = Free(SphericalSpringPendulum::default());
    let mut livens = Livens::<3, 0>::new(0.01).unwrap();
    assert!(livens.momentum().is_none());
    let mut state = spherical_pendulum::initial_state();
    livens.step(&model, &mut state).unwrap();
    livens.step(&model, &mut state).unwrap();
    let carried = *livens.momentum().unwrap();
    let mut mass = SMatrix::<f64, 3, 3>::zeros();
    model.mass_matrix(&state.q, &mut mass);
    let mv = mass * state.v;
    assert!((carried - mv).amax() > 1e-10, "p and M v should differ");
    let mut other = state;
    other.v[0] += 1e-3;
    let restart = livens.momentum_at(&model, &other);
    assert_eq!(restart, mass * other.v);
    livens.reset();
    assert!(livens.momentum().is_none());
    assert_eq!(livens.momentum_at(&model, &state), mv);
}

/// Returns the Cartesian positions `(x1, y1, x2, y2)` at `t_end` of the double pendulum,
/// integrated in the angles from the downward vertical by classical RK4 with step `h`.
fn double_pendulum_reference(t_end: f64, h: f64) -> SVector<f64, 4> {
    let (m1, m2, l1, l2, g) = (1.0, 1.0, 1.0, 2.0f64.sqrt(), 1.0);
    // y = (θ1, θ2, θ1', θ2').
    let rhs = |y: &SVector<f64, 4>| -> SVector<f64, 4> {
        let (t1, t2, w1, w2) = (y[0], y[1], y[2], y[3]);
        let (s, c) = (t1 - t2).sin_cos();
        let a11 = (m1 + m2) * l1 * l1;
        let a12 = m2 * l1 * l2 * c;
        let a22 = m2 * l2 * l2;
        let f1 = -m2 * l1 * l2 * s * w2 * w2 - (m1 + m2) * g * l1 * t1.sin();
        let f2 = m2 * l1 * l2 * s * w1 * w1 - m2 * g * l2 * t2.sin();
        let det = a11 * a22 - a12 * a12;
        let acc1 = (a22 * f1 - a12 * f2) / det;
        let acc2 = (a11 * f2 - a12 * f1) / det;
        SVector::<f64, 4>::new(w1, w2, acc1, acc2)
    };
    let mut y = SVector::<f64, 4>::new(0.0, std::f64::consts::FRAC_PI_4, 0.0, 0.0);
    for _ in 0..steps_to(t_end, h) {
        let k1 = rhs(&y);
        let k2 = rhs(&(y + k1 * (0.5 * h)));
        let k3 = rhs(&(y + k2 * (0.5 * h)));
        let k4 = rhs(&(y + k3 * h));
        y += (k1 + k2 * 2.0 + k3 * 2.0 + k4) * (h / 6.0);
    }
    let (t1, t2) = (y[0], y[1]);
    let (x1, y1) = (l1 * t1.sin(), -l1 * t1.cos());
    SVector::<f64, 4>::new(x1, y1, x1 + l2 * t2.sin(), y1 - l2 * t2.cos())
}

/// The double pendulum in Cartesian coordinates: constraints (eq. 30d) and energy hold to
/// round-off at every step, `p = M v` (constant mass, Proposition 5.5), second order.
#[test]
fn double_pendulum_conserves_energy_and_constraints_with_order_two() {
    let model = DoublePendulum::default();
    let h = 0.01;
    let mut livens = Livens::<4, 2>::new(h).unwrap();
    let mut state = double_pendulum::initial_state();
    let e0 = livens.generalized_energy(&model, &state);
    let scale = e0.abs().max(model.potential(&state.q).abs());
    let mut previous = e0;
    let (mut de, mut residual, mut fiber_gap, mut max_it) = (0.0f64, 0.0f64, 0.0f64, 0);
    for _ in 0..steps_to(10.0, h) {
        let report = livens.step(&model, &mut state).unwrap();
        max_it = max_it.max(report.newton_iterations);
        let e = livens.generalized_energy(&model, &state);
        de = de.max((e - previous).abs());
        previous = e;
        residual = residual.max(position_residual::<4, 2, _>(&model, &state));
        let mut mass = SMatrix::<f64, 4, 4>::zeros();
        model.mass_matrix(&state.q, &mut mass);
        let p = livens.momentum().unwrap();
        fiber_gap = fiber_gap.max((p - mass * state.v).amax());
        let total = energy(&model, &state);
        assert!(
            (total - e).abs() <= 1e-12 * scale,
            "E_tot = E for constant M"
        );
    }
    println!("double pendulum, h = {h}, T = 10");
    println!("  max |E^(n+1) − E^n| = {de:.3e} (|E| scale {scale:.3})");
    println!("  drift E^N − E^0     = {:.3e}", previous - e0);
    println!("  max |g(q^n)|        = {residual:.3e}");
    println!("  max |p − M v|       = {fiber_gap:.3e}");
    println!("  max Newton iterations per step = {max_it}");
    assert!(de <= 1e-12 * scale, "energy increment {de:e}");
    assert!(residual <= 1e-12, "constraint residual {residual:e}");
    assert!(fiber_gap <= 1e-12, "p − M v = {fiber_gap:e}");

    let reference = double_pendulum_reference(1.0, 1e-4);
    let hs = [1.0 / 20.0, 1.0 / 40.0, 1.0 / 80.0, 1.0 / 160.0];
    let errors: Vec<f64> = hs
        .iter()
        .map(|&h| {
            let mut livens = Livens::<4, 2>::new(h).unwrap();
            let mut state = double_pendulum::initial_state();
            for _ in 0..steps_to(1.0, h) {
                livens.step(&model, &mut state).unwrap();
            }
            (state.q - reference).amax()
        })
        .collect();
    let slope = report(
        "Livens, double pendulum, positions at t = 1 vs RK4",
        &hs,
        &errors,
    );
    assert!(slope >= 1.8, "order {slope}");
    assert!(errors[3] < 1e-3, "error {:e}", errors[3]);
}

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

/// An absurd step makes Newton fail with `NewtonDiverged`, leaving the state and the carried
/// momentum as they were; bad parameters are rejected.
#[test]
fn errors_leave_the_state_unchanged() {
    for h in [0.0, -0.01, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            Livens::<4, 2>::new(h),
            Err(StepError::BadStepSize { .. })
        ));
    }

    let model = Free(SphericalSpringPendulum::default());
    let mut livens = Livens::<3, 0>::new(0.01).unwrap();
    let mut state = spherical_pendulum::initial_state();
    livens.step(&model, &mut state).unwrap();
    let (before, p_before) = (state, *livens.momentum().unwrap());
    let mut absurd = Livens::<3, 0>::new(1e3).unwrap();
    let err = absurd.step(&model, &mut state).unwrap_err();
    println!("h = 1e3 on the spring pendulum: {err}");
    assert!(matches!(err, StepError::NewtonDiverged { .. }), "{err:?}");
    assert_eq!(state, before);

    let mut one = livens.with_max_iterations(1).unwrap();
    let err = one.step(&model, &mut state).unwrap_err();
    assert!(
        matches!(err, StepError::NewtonDiverged { iterations: 1, residual, .. } if residual > 1e-12),
        "{err:?}"
    );
    assert_eq!(state, before);
    assert_eq!(*one.momentum().unwrap(), p_before);

    // The constrained path (Schur complement) fails the same way.
    let pendulum = DoublePendulum::default();
    let mut livens = Livens::<4, 2>::new(0.01)
        .unwrap()
        .with_max_iterations(1)
        .unwrap();
    let mut state = double_pendulum::initial_state();
    let before = state;
    let err = livens.step(&pendulum, &mut state).unwrap_err();
    assert!(
        matches!(err, StepError::NewtonDiverged { iterations: 1, .. }),
        "{err:?}"
    );
    assert_eq!(state, before);
    assert!(livens.momentum().is_none());
    assert_eq!(*livens.multipliers(), SVector::<f64, 2>::zeros());

    let mut nan = double_pendulum::initial_state();
    nan.q[1] = f64::NAN;
    let mut livens = Livens::<4, 2>::new(0.01).unwrap();
    assert!(matches!(
        livens.step(&pendulum, &mut nan),
        Err(StepError::NonFinite {
            quantity: "q",
            index: 1,
            ..
        })
    ));
}
