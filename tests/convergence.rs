//! Orders and invariants of the integrators on the *generated* double pendulum, against
//! references computed independently of the generated code:
//!
//! - the constrained pendulum integrated in angle coordinates (θ1, θ2), where no constraint
//!   exists, by classical RK4 with a tiny step;
//! - the penalized ODE `M q̈ = −∇W(q)` integrated by RK4 with the hand-written force of
//!   `mechanism_runtime::reference`.

#[path = "../runtime/tests/common/mod.rs"]
mod common;

use common::{loglog_slope, report, run, steps_to};
use mechanism::models::DoublePendulum;
use mechanism::runtime::reference::DoublePendulum as HandWritten;
use mechanism::runtime::{
    observers, Integrator, Penalized, PenalizedPotential, Spook, State, ZhangSkeel,
    ZhangSkeelSimplified,
};
use nalgebra::{SVector, Vector2, Vector4};

/// Classical RK4 for `y' = f(y)` on a fixed grid.
fn rk4<const D: usize>(
    f: impl Fn(&SVector<f64, D>) -> SVector<f64, D>,
    mut y: SVector<f64, D>,
    h: f64,
    steps: usize,
) -> SVector<f64, D> {
    for _ in 0..steps {
        let k1 = f(&y);
        let k2 = f(&(y + k1 * (h / 2.0)));
        let k3 = f(&(y + k2 * (h / 2.0)));
        let k4 = f(&(y + k3 * h));
        y += (k1 + k2 * 2.0 + k3 * 2.0 + k4) * (h / 6.0);
    }
    y
}

/// The double pendulum in angles from the downward vertical, `y = (θ1, θ2, θ1', θ2')`, with the
/// parameters of Tao–Owhadi §4.1 (m1 = m2 = 1, l1 = 1, l2 = √2, g = 1).
fn angle_dynamics(y: &Vector4<f64>) -> Vector4<f64> {
    let (m1, m2, l1, l2, g) = (1.0, 1.0, 1.0, std::f64::consts::SQRT_2, 1.0);
    let (t1, t2, w1, w2) = (y[0], y[1], y[2], y[3]);
    let (s, c) = (t1 - t2).sin_cos();
    let a11 = (m1 + m2) * l1 * l1;
    let a12 = m2 * l1 * l2 * c;
    let a22 = m2 * l2 * l2;
    let f1 = -m2 * l1 * l2 * s * w2 * w2 - (m1 + m2) * g * l1 * t1.sin();
    let f2 = m2 * l1 * l2 * s * w1 * w1 - m2 * g * l2 * t2.sin();
    let det = a11 * a22 - a12 * a12;
    let acc = Vector2::new(a22 * f1 - a12 * f2, a11 * f2 - a12 * f1) / det;
    Vector4::new(w1, w2, acc[0], acc[1])
}

/// Cartesian positions of the angle-coordinate state.
fn cartesian(y: &Vector4<f64>) -> Vector4<f64> {
    let (l1, l2) = (1.0, std::f64::consts::SQRT_2);
    let (x1, y1) = (l1 * y[0].sin(), -l1 * y[0].cos());
    Vector4::new(x1, y1, x1 + l2 * y[1].sin(), y1 - l2 * y[1].cos())
}

/// The constrained motion at `t_end` from q0 = (0, −1, 1, −2) at rest, i.e. θ = (0, π/4).
fn constrained_reference(t_end: f64) -> Vector4<f64> {
    let y0 = Vector4::new(0.0, std::f64::consts::FRAC_PI_4, 0.0, 0.0);
    let h = 1e-4;
    cartesian(&rk4(angle_dynamics, y0, h, steps_to(t_end, h)))
}

#[test]
fn angle_reference_matches_the_initial_state() {
    let y0 = Vector4::new(0.0, std::f64::consts::FRAC_PI_4, 0.0, 0.0);
    let q0 = DoublePendulum::initial_state().q;
    assert!((cartesian(&y0) - q0).amax() < 1e-15);
    // The reference is converged far below the errors measured against it.
    let fine = cartesian(&rk4(angle_dynamics, y0, 5e-5, 20_000));
    assert!((constrained_reference(1.0) - fine).amax() < 1e-12);
}

#[test]
fn spook_converges_to_the_constrained_motion_with_order_one() {
    let model = DoublePendulum::default();
    let t_end = 1.0;
    let reference = constrained_reference(t_end);
    let hs = [1.0 / 60.0, 1.0 / 120.0, 1.0 / 240.0, 1.0 / 480.0];
    let errors: Vec<f64> = hs
        .iter()
        .map(|&h| {
            let mut spook = Spook::<4, 2>::new(h).unwrap();
            let end = run(
                &mut spook,
                &model,
                DoublePendulum::initial_state(),
                steps_to(t_end, h),
                |_| {},
            )
            .unwrap();
            (end.q - reference).amax()
        })
        .collect();
    let slope = report(
        "SPOOK position error at t = 1 vs angle-coordinate RK4",
        &hs,
        &errors,
    );
    assert!(
        (0.9..1.3).contains(&slope),
        "SPOOK is first order; measured slope {slope}"
    );
}

/// Max |g_i| over t ∈ [0, 5] for SPOOK with step `h`.
fn spook_max_residual(h: f64) -> f64 {
    let model = DoublePendulum::default();
    let mut spook = Spook::<4, 2>::new(h).unwrap();
    let mut max = 0.0f64;
    run(
        &mut spook,
        &model,
        DoublePendulum::initial_state(),
        steps_to(5.0, h),
        |s| {
            max = max.max(observers::position_residual(&model, s));
        },
    )
    .unwrap();
    max
}

#[test]
fn spook_constraint_residual_is_second_order() {
    let hs = [1.0 / 30.0, 1.0 / 60.0, 1.0 / 120.0, 1.0 / 240.0];
    let residuals: Vec<f64> = hs.iter().map(|&h| spook_max_residual(h)).collect();
    let slope = report("SPOOK max |g| over [0, 5]", &hs, &residuals);
    assert!(slope >= 1.8, "residual should be O(h²); slope {slope}");
}

#[test]
fn spook_residual_and_energy_stay_bounded_over_ten_thousand_steps() {
    let model = DoublePendulum::default();
    let h = 1.0 / 60.0;
    let mut spook = Spook::<4, 2>::new(h).unwrap();
    let e0 = observers::energy(&model, &DoublePendulum::initial_state());
    let mut residuals = Vec::with_capacity(10_000);
    let mut energy_errors = Vec::with_capacity(10_000);
    run(
        &mut spook,
        &model,
        DoublePendulum::initial_state(),
        10_000,
        |s| {
            residuals.push(observers::position_residual(&model, s));
            energy_errors.push((observers::energy(&model, s) - e0).abs());
        },
    )
    .unwrap();
    let max = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    let (first, last) = (max(&residuals[..1000]), max(&residuals[9000..]));
    println!("SPOOK h = 1/60, 10⁴ steps: max |g| {:.3e} (first 1000: {first:.3e}, last 1000: {last:.3e}); max |ΔE| {:.3e}",
        max(&residuals), max(&energy_errors));
    assert!(max(&residuals) < 2e-3);
    assert!(last <= 2.0 * first, "the residual must not grow");
    assert!(max(&energy_errors[9000..]) <= 3.0 * max(&energy_errors[..1000]) + 1e-3);
}

/// The penalized ODE `M q̈ = −∇W(q)` at `t_end` by RK4 with the hand-written gradient.
fn penalized_reference(omega: f64, t_end: f64) -> Vector4<f64> {
    let hand = HandWritten::default();
    let start = DoublePendulum::initial_state();
    let mut y0 = SVector::<f64, 8>::zeros();
    y0.fixed_rows_mut::<4>(0).copy_from(&start.q);
    let f = |y: &SVector<f64, 8>| {
        let q: Vector4<f64> = y.fixed_rows::<4>(0).into_owned();
        let mut grad = Vector4::zeros();
        hand.penalized_potential_gradient(omega, &q, &mut grad);
        let mut dy = SVector::<f64, 8>::zeros();
        dy.fixed_rows_mut::<4>(0).copy_from(&y.fixed_rows::<4>(4));
        dy.fixed_rows_mut::<4>(4).copy_from(&(-grad)); // M = I
        dy
    };
    let h = 1e-4;
    rk4(f, y0, h, steps_to(t_end, h))
        .fixed_rows::<4>(0)
        .into_owned()
}

fn penalized_errors<I: Integrator<Penalized<DoublePendulum>, 4>>(
    make: impl Fn(f64) -> I,
    hs: &[f64],
    reference: &Vector4<f64>,
    t_end: f64,
) -> Vec<f64> {
    let model = Penalized::new(DoublePendulum::default(), 20.0);
    hs.iter()
        .map(|&h| {
            let mut integrator = make(h);
            let end: State<4> = run(
                &mut integrator,
                &model,
                DoublePendulum::initial_state(),
                steps_to(t_end, h),
                |_| {},
            )
            .unwrap();
            (end.q - reference).amax()
        })
        .collect()
}

#[test]
fn zhang_skeel_methods_are_second_order_on_the_penalized_pendulum() {
    let t_end = 1.0;
    let reference = penalized_reference(20.0, t_end);
    let hs = [0.01, 0.005, 0.0025, 0.00125];
    let zss = penalized_errors(
        |h| ZhangSkeelSimplified::<4>::new(h).unwrap(),
        &hs,
        &reference,
        t_end,
    );
    let zs = penalized_errors(|h| ZhangSkeel::<4>::new(h).unwrap(), &hs, &reference, t_end);
    let zss_slope = report("Z&Ss (β = 0.4, ω = 20) position error at t = 1", &hs, &zss);
    let zs_slope = report("Z&S (β = 0.4, ω = 20) position error at t = 1", &hs, &zs);
    assert!(zss_slope >= 1.8, "Z&Ss slope {zss_slope}");
    assert!(zs_slope >= 1.8, "Z&S slope {zs_slope}");
    assert!((loglog_slope(&hs, &zs) - 2.0).abs() < 0.3);
}
