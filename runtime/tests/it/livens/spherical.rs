//! §6.2, the spring pendulum in spherical coordinates: the generalized energy and `p_φ` are
//! conserved (with the dependency masks; without them `p_φ` drifts), and the carried momentum
//! restarts from `p = M v` for a foreign state.

use crate::support::steps_to;
use mechanism_runtime::integrators::energy_momentum::Livens;
use mechanism_runtime::observers::energy;
use mechanism_runtime::reference::spherical_pendulum::{self, SphericalSpringPendulum};
use mechanism_runtime::{
    HolonomicHessians, Inertia, InertiaGradient, Integrator, Potential, PotentialHessian, SMatrix,
};

use super::Free;

/// The spherical pendulum with eq. 26 applied in all coordinates (no dependency masks).
type Unmasked<T> = Free<T, false>;

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
