//! The constrained double pendulum in Cartesian coordinates: energy and constraints to
//! round-off at every step, `p = M v`, order two against RK4 in the angles.

use crate::support::{report, steps_to};
use mechanism_runtime::integrators::energy_momentum::Livens;
use mechanism_runtime::observers::{energy, position_residual};
use mechanism_runtime::reference::double_pendulum::{self, DoublePendulum};
use mechanism_runtime::{Inertia, Integrator, Potential, SMatrix, SVector};

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
