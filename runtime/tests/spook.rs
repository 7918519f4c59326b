//! SPOOK (Lacoursière 2007) on the hand-written double pendulum.

mod common;

use common::{loglog_slope, report, run, steps_to};
use mechanism_runtime::observers::{energy, position_residual};
use mechanism_runtime::reference::double_pendulum::{initial_state, DoublePendulum};
use mechanism_runtime::{
    Holonomic, Inertia, Potential, Regularization, SMatrix, SVector, Spook, State,
};

/// Returns `max_k |g(q_k)|` over `[0, t_end]` with SPOOK at step size `h`.
fn max_residual(h: f64, t_end: f64) -> f64 {
    let model = DoublePendulum::default();
    let mut spook = Spook::<4, 2>::new(h).unwrap();
    let mut worst = 0.0f64;
    run(
        &mut spook,
        &model,
        initial_state(),
        steps_to(t_end, h),
        |s| {
            worst = worst.max(position_residual(&model, s));
        },
    )
    .unwrap();
    worst
}

#[test]
fn loglog_slope_recovers_a_power_law() {
    let hs = [0.1, 0.05, 0.025];
    let errors: Vec<f64> = hs.iter().map(|h| 3.0 * h * h).collect();
    assert!((loglog_slope(&hs, &errors) - 2.0).abs() < 1e-12);
}

#[test]
fn constraint_residual_is_second_order() {
    let hs = [1.0 / 30.0, 1.0 / 60.0, 1.0 / 120.0, 1.0 / 240.0];
    let residuals: Vec<f64> = hs.iter().map(|&h| max_residual(h, 5.0)).collect();
    let slope = report("SPOOK: max |g| over [0, 5]", &hs, &residuals);
    assert!(slope >= 1.8, "slope {slope}");
}

#[test]
fn long_run_residual_and_energy_stay_bounded() {
    let model = DoublePendulum::default();
    let h = 1.0 / 60.0;
    let steps = 10_000;
    let mut spook = Spook::<4, 2>::new(h).unwrap();
    let e0 = energy(&model, &initial_state());
    let (mut residuals, mut energy_errors) = (Vec::new(), Vec::new());
    run(&mut spook, &model, initial_state(), steps, |s| {
        residuals.push(position_residual(&model, s));
        energy_errors.push((energy(&model, s) - e0).abs());
    })
    .unwrap();
    let max = |xs: &[f64]| xs.iter().cloned().fold(0.0, f64::max);
    let (first, last, all) = (
        max(&residuals[..1000]),
        max(&residuals[steps - 1000..]),
        max(&residuals),
    );
    let (e_first, e_last) = (
        max(&energy_errors[..1000]),
        max(&energy_errors[steps - 1000..]),
    );
    println!("SPOOK h = 1/60, {steps} steps: max |g| = {all:.3e} (first 1000: {first:.3e}, last 1000: {last:.3e})");
    println!("  max |E − E0| first 1000: {e_first:.3e}, last 1000: {e_last:.3e}, E0 = {e0}");
    assert!(all < MAX_RESIDUAL_LONG_RUN, "max |g| = {all}");
    assert!(last <= 2.0 * first, "residual grows: {first} -> {last}");
    assert!(
        e_last < MAX_ENERGY_ERROR_LONG_RUN,
        "max |E − E0| = {e_last}"
    );
    assert!(
        e_last <= 3.0 * e_first,
        "energy error grows: {e_first} -> {e_last}"
    );
}

/// Bounds max |g| over 10⁴ steps at h = 1/60 (measured 1.0e-3) with a margin of 2.
const MAX_RESIDUAL_LONG_RUN: f64 = 2e-3;
/// Bounds max |E − E0| over the last 1000 of 10⁴ steps (measured 5.2e-3) with a margin of 4.
const MAX_ENERGY_ERROR_LONG_RUN: f64 = 2e-2;

/// The double pendulum with the second rod stated twice: `G` has rank 2 with 3 rows.
struct RedundantPendulum(DoublePendulum);

impl Inertia<4> for RedundantPendulum {
    const CONSTANT_MASS: bool = true;
    fn mass_matrix(&self, q: &SVector<f64, 4>, m: &mut SMatrix<f64, 4, 4>) {
        self.0.mass_matrix(q, m);
    }
}

impl Potential<4> for RedundantPendulum {
    fn potential(&self, q: &SVector<f64, 4>) -> f64 {
        self.0.potential(q)
    }
    fn potential_gradient(&self, q: &SVector<f64, 4>, grad: &mut SVector<f64, 4>) {
        self.0.potential_gradient(q, grad);
    }
}

impl Holonomic<4, 3> for RedundantPendulum {
    const CONSTRAINTS: [&'static str; 3] = ["rod1", "rod2", "rod2 again"];
    fn constraints(&self, q: &SVector<f64, 4>, t: f64, g: &mut SVector<f64, 3>) {
        let mut g2 = SVector::<f64, 2>::zeros();
        self.0.constraints(q, t, &mut g2);
        *g = SVector::<f64, 3>::new(g2[0], g2[1], g2[1]);
    }
    fn constraint_jacobian(&self, q: &SVector<f64, 4>, t: f64, jac: &mut SMatrix<f64, 3, 4>) {
        let mut jac2 = SMatrix::<f64, 2, 4>::zeros();
        self.0.constraint_jacobian(q, t, &mut jac2);
        jac.set_row(0, &jac2.row(0));
        jac.set_row(1, &jac2.row(1));
        jac.set_row(2, &jac2.row(1));
    }
}

#[test]
fn redundant_constraints_give_the_same_motion() {
    let h = 1.0 / 60.0;
    let steps = steps_to(5.0, h);
    let model = DoublePendulum::default();
    let redundant = RedundantPendulum(model);
    let plain = run(
        &mut Spook::<4, 2>::new(h).unwrap(),
        &model,
        initial_state(),
        steps,
        |_| {},
    );
    let mut spook3 = Spook::<4, 3>::new(h).unwrap();
    let doubled = run(&mut spook3, &redundant, initial_state(), steps, |_| {}).unwrap();
    let plain = plain.unwrap();
    let dq = (plain.q - doubled.q).amax();
    let dv = (plain.v - doubled.v).amax();
    println!("SPOOK redundant rows, t = 5: |Δq| = {dq:.3e}, |Δv| = {dv:.3e}");
    println!(
        "  multipliers of the redundant rows: {:?}",
        spook3.multipliers()
    );
    assert!(dq < 1e-5 && dv < 1e-5, "Δq = {dq}, Δv = {dv}");
    let lambda = spook3.multipliers();
    assert!((lambda[1] - lambda[2]).abs() < 1e-9 * lambda[1].abs().max(1.0));
}

#[test]
fn per_row_regularization_overrides_the_model() {
    // A very compliant second rod visibly stretches; the default keeps it tight.
    let h = 1.0 / 60.0;
    let model = DoublePendulum::default();
    let soft = Regularization {
        epsilon: 1e-1,
        ..Regularization::default()
    };
    let mut spook = Spook::<4, 2>::new(h)
        .unwrap()
        .with_regularization(1, soft)
        .unwrap();
    let mut stretch = 0.0f64;
    run(&mut spook, &model, initial_state(), 120, |s| {
        let mut g = SVector::<f64, 2>::zeros();
        model.constraints(&s.q, s.t, &mut g);
        stretch = stretch.max(g[1].abs());
    })
    .unwrap();
    println!("SPOOK with ε₂ = 0.1: max |rod2| = {stretch:.3e}");
    assert!(stretch > 1e-2 && max_residual(h, 2.0) < 1e-3);
}

/// A unit mass `x` pulled by a spring attached to a massless coordinate `y`, with `y = x`
/// imposed as a constraint: the mass matrix diag(1, 0) is singular, the motion is the harmonic
/// oscillator `x(t) = cos(t)`.
struct MasslessLink;

impl Inertia<2> for MasslessLink {
    const CONSTANT_MASS: bool = true;
    fn mass_matrix(&self, _q: &SVector<f64, 2>, m: &mut SMatrix<f64, 2, 2>) {
        *m = SMatrix::<f64, 2, 2>::new(1.0, 0.0, 0.0, 0.0);
    }
}

impl Potential<2> for MasslessLink {
    fn potential(&self, q: &SVector<f64, 2>) -> f64 {
        0.5 * q[1] * q[1]
    }
    fn potential_gradient(&self, q: &SVector<f64, 2>, grad: &mut SVector<f64, 2>) {
        *grad = SVector::<f64, 2>::new(0.0, q[1]);
    }
}

impl Holonomic<2, 1> for MasslessLink {
    const CONSTRAINTS: [&'static str; 1] = ["link"];
    fn constraints(&self, q: &SVector<f64, 2>, _t: f64, g: &mut SVector<f64, 1>) {
        g[0] = q[1] - q[0];
    }
    fn constraint_jacobian(&self, _q: &SVector<f64, 2>, _t: f64, jac: &mut SMatrix<f64, 1, 2>) {
        *jac = SMatrix::<f64, 1, 2>::new(-1.0, 1.0);
    }
}

#[test]
fn singular_mass_matrix_converges_to_the_closed_form() {
    let errors: Vec<f64> = [0.01, 0.005, 0.0025]
        .iter()
        .map(|&h| {
            let mut spook = Spook::<2, 1>::new(h).unwrap();
            let end = common::run(
                &mut spook,
                &MasslessLink,
                State::new(0.0, [1.0, 1.0], [0.0, 0.0]),
                common::steps_to(1.0, h),
                |_| {},
            )
            .unwrap();
            (end.q[0] - 1.0f64.cos()).abs()
        })
        .collect();
    let slope = common::report(
        "SPOOK, singular mass matrix, x(1) vs cos(1)",
        &[0.01, 0.005, 0.0025],
        &errors,
    );
    assert!(errors[0] < 1e-2, "{errors:?}");
    assert!(
        (0.8..1.3).contains(&slope),
        "first order expected, slope {slope}"
    );
}
