//! Where two schemes are one: one-iteration Newmark is Newmark for a quadratic potential,
//! push-forward Newmark is Newmark in pushed-forward coordinates, stiff Z&Ss is Z&Ss for a
//! linear soft potential.

use crate::support::run;
use mechanism_runtime::integrators::linearly_implicit::{
    Newmark, NewmarkOneIteration, PushForwardNewmark, ZhangSkeelStiff,
};
use mechanism_runtime::reference::double_pendulum::initial_state;
use mechanism_runtime::reference::HarmonicOscillator;
use mechanism_runtime::{Integrator, State, ZhangSkeelSimplified};

use super::pendulum;

#[test]
fn one_iteration_is_newmark_for_a_quadratic_potential() {
    // Newton is exact in one iteration on a linear force.
    let model = HarmonicOscillator {
        mass: 2.0,
        stiffness: 50.0,
    };
    let initial = State::new(0.0, [1.0], [0.5]);
    let full = run(
        &mut Newmark::<1>::new(0.1).unwrap(),
        &model,
        initial,
        100,
        |_| {},
    )
    .unwrap();
    let one = run(
        &mut NewmarkOneIteration::<1>::new(0.1).unwrap(),
        &model,
        initial,
        100,
        |_| {},
    )
    .unwrap();
    println!(
        "Newmark vs one iteration, linear: |Δq| = {:.3e}",
        (full.q - one.q).amax()
    );
    assert!((full.q - one.q).amax() < 1e-12 && (full.v - one.v).amax() < 1e-11);
}

#[test]
fn push_forward_newmark_is_newmark_in_pushed_forward_coordinates() {
    // η(q, v) = (q + βh² M⁻¹∇V(q), v) conjugates Newmark (eq. 12) to eq. 14 exactly.
    let model = pendulum();
    let h = 0.05;
    let mut newmark = Newmark::<4>::new(h).unwrap();
    let mut push = PushForwardNewmark::<4>::new(h).unwrap();
    let mut q_state = initial_state();
    let mut x_state = push.push_forward(&model, &q_state).unwrap();
    let mut worst = 0.0f64;
    for _ in 0..200 {
        newmark.step(&model, &mut q_state).unwrap();
        push.step(&model, &mut x_state).unwrap();
        let pulled = push.pull_back(&model, &x_state).unwrap();
        worst = worst.max(
            (pulled.q - q_state.q)
                .amax()
                .max((pulled.v - q_state.v).amax()),
        );
    }
    let moved = (x_state.q - q_state.q).amax();
    println!("h = 0.05, 200 steps: max |η⁻¹(x) − q| = {worst:.3e}, |x − q| = {moved:.3e}");
    assert!(worst < 1e-10, "{worst}");
    assert!(moved > 1e-4, "the coordinates differ: {moved}");
}

#[test]
fn stiff_zhang_skeel_is_zhang_skeel_simplified_for_a_linear_soft_potential() {
    // The pendulum's V is linear, so Hess W = ω² Hess ½|g|²: eq. 19 and eq. 18 coincide.
    let model = pendulum();
    let h = 0.1;
    let stiff = run(
        &mut ZhangSkeelStiff::<4>::new(h).unwrap(),
        &model,
        initial_state(),
        100,
        |_| {},
    )
    .unwrap();
    let simplified = run(
        &mut ZhangSkeelSimplified::<4>::new(h).unwrap(),
        &model,
        initial_state(),
        100,
        |_| {},
    )
    .unwrap();
    let gap = (stiff.q - simplified.q).amax();
    println!("stiff Z&Ss vs Z&Ss, h = 0.1, 100 steps: |Δq| = {gap:.3e}");
    assert!(gap < 1e-9, "{gap}");
}
