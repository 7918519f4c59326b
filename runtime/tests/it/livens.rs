//! The Livens/Gonzalez energy-momentum scheme (Kinon–Betsch–Livens eq. 30) on the paper's two
//! examples (§6.1 singular mass-spring system, §6.2 spherical spring pendulum) and on the
//! constrained double pendulum.

use crate::support::{report, steps_to};
use mechanism_runtime::integrators::energy_momentum::Livens;
use mechanism_runtime::observers::{energy, position_residual};
use mechanism_runtime::reference::double_pendulum::{self, DoublePendulum};
use mechanism_runtime::reference::spherical_pendulum::{self, SphericalSpringPendulum};
use mechanism_runtime::{
    ConstantMass, Holonomic, HolonomicHessians, Inertia, InertiaGradient, Integrator, Potential,
    PotentialHessian, SMatrix, SVector, State, StepError,
};

/// A model without constraints, seen as one with `M = 0` constraint rows (what `Livens<N, 0>`
/// needs); every other capability is delegated, the dependency masks included unless `MASKED`
/// is `false` — then the masks are the all-true defaults, i.e. Gonzalez's eq. 26 as printed.
struct Free<T, const MASKED: bool = true>(T);

/// The spherical pendulum with eq. 26 applied in all coordinates (no dependency masks).
type Unmasked<T> = Free<T, false>;

/// Returns `mask` if `masked`, else all `true`.
const fn mask_or_all<const N: usize>(mask: [bool; N], masked: bool) -> [bool; N] {
    if masked {
        mask
    } else {
        [true; N]
    }
}

impl<const N: usize, T: ConstantMass<N>, const MASKED: bool> ConstantMass<N> for Free<T, MASKED> {}

impl<const N: usize, T: Inertia<N>, const MASKED: bool> Inertia<N> for Free<T, MASKED> {
    const CONSTANT_MASS: bool = T::CONSTANT_MASS;
    const MASS_DEPENDS_ON: [bool; N] = mask_or_all(T::MASS_DEPENDS_ON, MASKED);

    fn mass_matrix(&self, q: &SVector<f64, N>, m: &mut SMatrix<f64, N, N>) {
        self.0.mass_matrix(q, m);
    }

    fn kinetic_energy(&self, q: &SVector<f64, N>, v: &SVector<f64, N>) -> f64 {
        self.0.kinetic_energy(q, v)
    }
}

impl<const N: usize, T: InertiaGradient<N>, const MASKED: bool> InertiaGradient<N>
    for Free<T, MASKED>
{
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

impl<const N: usize, T: Potential<N>, const MASKED: bool> Potential<N> for Free<T, MASKED> {
    const POTENTIAL_DEPENDS_ON: [bool; N] = mask_or_all(T::POTENTIAL_DEPENDS_ON, MASKED);

    fn potential(&self, q: &SVector<f64, N>) -> f64 {
        self.0.potential(q)
    }

    fn potential_gradient(&self, q: &SVector<f64, N>, grad: &mut SVector<f64, N>) {
        self.0.potential_gradient(q, grad);
    }
}

impl<const N: usize, T: PotentialHessian<N>, const MASKED: bool> PotentialHessian<N>
    for Free<T, MASKED>
{
    fn potential_hessian(&self, q: &SVector<f64, N>, hess: &mut SMatrix<f64, N, N>) {
        self.0.potential_hessian(q, hess);
    }
}

impl<const N: usize, T, const MASKED: bool> Holonomic<N, 0> for Free<T, MASKED> {
    const CONSTRAINTS: [&'static str; 0] = [];

    fn constraints(&self, _q: &SVector<f64, N>, _t: f64, _g: &mut SVector<f64, 0>) {}

    fn constraint_jacobian(&self, _q: &SVector<f64, N>, _t: f64, _jac: &mut SMatrix<f64, 0, N>) {}
}

impl<const N: usize, T, const MASKED: bool> HolonomicHessians<N, 0> for Free<T, MASKED> {
    fn constraint_hessians(
        &self,
        _q: &SVector<f64, N>,
        _t: f64,
        _out: &mut [SMatrix<f64, N, N>; 0],
    ) {
    }
}

/// What one run of the Livens scheme on the spherical pendulum measured.
struct SphericalRun {
    /// `E^0` (eq. 31).
    e0: f64,
    /// `max |E^{n+1} − E^n|` (eq. 31).
    generalized_increment: f64,
    /// `max |E_tot^{n+1} − E_tot^n|` (eq. 35).
    total_increment: f64,
    /// `p_φ^0 = (M v)_φ` at the start.
    p_phi0: f64,
    /// `max |p_φ^n − p_φ^0|` of the scheme's carried momentum.
    p_phi_drift: f64,
    /// `max |(M(q^n) v^n)_φ − p_φ^0|`.
    mv_phi_drift: f64,
    /// `max |p − M v|` over the run.
    fiber_gap: f64,
    /// Largest number of Newton iterations in a step.
    max_iterations: u32,
}

/// Runs `Livens` with step `h` to `t_end` on `model` from the paper's initial state (eq. 46).
fn run_spherical<Model>(model: &Model, h: f64, t_end: f64) -> SphericalRun
where
    Model: InertiaGradient<3> + PotentialHessian<3> + HolonomicHessians<3, 0>,
{
    let mut livens = Livens::<3, 0>::new(h).unwrap();
    let mut state = spherical_pendulum::initial_state();
    let e0 = livens.generalized_energy(model, &state);
    let p_phi0 = livens.momentum_at(model, &state)[2];
    let mut run = SphericalRun {
        e0,
        generalized_increment: 0.0,
        total_increment: 0.0,
        p_phi0,
        p_phi_drift: 0.0,
        mv_phi_drift: 0.0,
        fiber_gap: 0.0,
        max_iterations: 0,
    };
    let (mut previous, mut previous_total) = (e0, energy(model, &state));
    for _ in 0..steps_to(t_end, h) {
        let report = livens.step(model, &mut state).unwrap();
        run.max_iterations = run.max_iterations.max(report.newton_iterations);
        let p = *livens.momentum().unwrap();
        assert_eq!(
            p,
            livens.momentum_at(model, &state),
            "carried momentum keyed to the state"
        );
        let mut mass = SMatrix::<f64, 3, 3>::zeros();
        model.mass_matrix(&state.q, &mut mass);
        let mv = mass * state.v;
        run.fiber_gap = run.fiber_gap.max((p - mv).amax());
        run.p_phi_drift = run.p_phi_drift.max((p[2] - p_phi0).abs());
        run.mv_phi_drift = run.mv_phi_drift.max((mv[2] - p_phi0).abs());
        let (e, total) = (
            livens.generalized_energy(model, &state),
            energy(model, &state),
        );
        run.generalized_increment = run.generalized_increment.max((e - previous).abs());
        run.total_increment = run.total_increment.max((total - previous_total).abs());
        (previous, previous_total) = (e, total);
    }
    assert!((state.t - t_end).abs() < 1e-9 * t_end);
    run
}

/// Prints one run's measurements.
fn print_spherical(label: &str, run: &SphericalRun) {
    println!("{label}");
    println!(
        "  E^0 = {:.15}, max |E^(n+1) − E^n| (eq. 31) = {:.3e} ({:.3e} relative)",
        run.e0,
        run.generalized_increment,
        run.generalized_increment / run.e0.abs()
    );
    println!(
        "  max |E_tot^(n+1) − E_tot^n| (eq. 35)     = {:.3e}",
        run.total_increment
    );
    println!(
        "  p_φ^0 = {:.15}, max |p_φ^n − p_φ^0| (carried) = {:.3e} ({:.3e} relative)",
        run.p_phi0,
        run.p_phi_drift,
        run.p_phi_drift / run.p_phi0.abs()
    );
    println!(
        "  max |(M v)_φ^n − p_φ^0| (m r² sin²θ φ̇)   = {:.3e}",
        run.mv_phi_drift
    );
    println!("  max |p − M v| = {:.3e}", run.fiber_gap);
    println!("  max Newton iterations per step = {}", run.max_iterations);
}

/// §6.2: spring pendulum in spherical coordinates (Table 2, eq. 46, no gravity): the generalized
/// energy (eq. 31) is conserved to round-off (Fig. 8), the total energy (eq. 35) only to about
/// `1e-4` per step (Fig. 7), `p ≠ M v` (Proposition 5.5), and the momentum `p_φ` of the cyclic
/// azimuth — the angular momentum about the vertical — is conserved to round-off because the
/// discrete gradients are formed in the coordinates `T` and `V` depend on (`r`, `θ`).
#[test]
fn spherical_spring_pendulum_conserves_the_generalized_energy_and_p_phi() {
    let model = Free::<_, true>(SphericalSpringPendulum::default());
    assert_eq!(model.0.gravity, 0.0, "the paper's pendulum has no gravity");
    assert_eq!(
        <Free<SphericalSpringPendulum> as Inertia<3>>::MASS_DEPENDS_ON,
        [true, true, false]
    );
    let h = 0.01;
    let paper = run_spherical(&model, h, 1.0);
    print_spherical(
        "§6.2 spherical spring pendulum, h = 0.01, T = 1 (100 steps)",
        &paper,
    );
    let long = run_spherical(&model, h, 100.0);
    print_spherical(
        "§6.2 spherical spring pendulum, h = 0.01, T = 100 (10⁴ steps)",
        &long,
    );

    for run in [&paper, &long] {
        let (e0, p0) = (run.e0.abs(), run.p_phi0.abs());
        assert!(
            run.generalized_increment <= 1e-12 * e0,
            "generalized energy increment {:e}",
            run.generalized_increment
        );
        assert!(
            run.p_phi_drift <= 1e-12 * p0,
            "p_φ drift {:e}",
            run.p_phi_drift
        );
        // Fig. 7: total-energy increments of order 1e-4 — clearly above round-off, clearly small.
        assert!(
            run.total_increment > 1e-6 && run.total_increment < 1e-3,
            "total energy increment {:e}",
            run.total_increment
        );
        // Proposition 5.5: with a configuration-dependent mass matrix p ≠ M v, and so the
        // continuous (M v)_φ is not the conserved quantity; it stays close to p_φ (O(h²)).
        assert!(run.fiber_gap > 1e-8, "p − M v = {:e}", run.fiber_gap);
        assert!(
            run.mv_phi_drift > 1e3 * run.p_phi_drift && run.mv_phi_drift < 1e-2 * p0,
            "(M v)_φ drift {:e}",
            run.mv_phi_drift
        );
        assert!(
            run.max_iterations <= 6,
            "Newton iterations {}",
            run.max_iterations
        );
    }
}

/// Without the dependency masks, eq. 26 puts a component `c Δφ/|Δq|²` into `D̄₁T` and `D̄V`
/// along the cyclic `φ`, and `p_φ` drifts by a second-order truncation error (its drift over
/// `T = 1` drops about 4× when `h` is halved) while the generalized energy is still conserved:
/// the masks, not luck, conserve `p_φ` in the test above.
#[test]
fn without_masks_p_phi_drifts_at_second_order() {
    let model: Unmasked<SphericalSpringPendulum> = Free(SphericalSpringPendulum::default());
    assert_eq!(
        <Unmasked<SphericalSpringPendulum> as Potential<3>>::POTENTIAL_DEPENDS_ON,
        [true; 3]
    );
    let (coarse, fine) = (
        run_spherical(&model, 0.01, 1.0),
        run_spherical(&model, 0.005, 1.0),
    );
    print_spherical("unmasked eq. 26, h = 0.01, T = 1", &coarse);
    println!(
        "  max |p_φ^n − p_φ^0| over T = 1: {:.3e} (h = 0.01), {:.3e} (h = 0.005)",
        coarse.p_phi_drift, fine.p_phi_drift
    );
    assert!(
        coarse.generalized_increment <= 1e-12 * coarse.e0.abs(),
        "generalized energy increment {:e}",
        coarse.generalized_increment
    );
    assert!(
        coarse.p_phi_drift > 1e-7 * coarse.p_phi0.abs(),
        "p_φ drift {:e}",
        coarse.p_phi_drift
    );
    assert!(
        coarse.p_phi_drift / fine.p_phi_drift > 3.0,
        "p_φ drift is not second order"
    );
}

/// A fresh state or a state that is not the last step's end restarts from `p = M v`.
#[test]
fn momentum_is_recomputed_for_a_foreign_state() {
    let model = Free::<_, true>(SphericalSpringPendulum::default());
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
/// integrated in the angles from the downward vertical by classical RK4 with step `h`
/// ([`DoublePendulum::constrained_reference`]).
fn double_pendulum_reference(t_end: f64, h: f64) -> SVector<f64, 4> {
    let start = mechanism_runtime::reference::double_pendulum::initial_state();
    DoublePendulum::default()
        .constrained_reference(&start, t_end, steps_to(t_end, h))
        .q
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

    let model = Free::<_, true>(SphericalSpringPendulum::default());
    let mut livens = Livens::<3, 0>::new(0.01).unwrap();
    let mut state = spherical_pendulum::initial_state();
    livens.step(&model, &mut state).unwrap();
    let (before, p_before) = (state, *livens.momentum().unwrap());
    let mut absurd = Livens::<3, 0>::new(1e4).unwrap();
    let err = absurd.step(&model, &mut state).unwrap_err();
    println!("h = 1e4 on the spring pendulum: {err}");
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
