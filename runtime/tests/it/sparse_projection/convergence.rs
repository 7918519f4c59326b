//! Second order against independent references: the double pendulum integrated in its angles,
//! the fixed-size reference double pendulum, and Tao–Owhadi's chain of 10 halving the step
//! (with RATTLE's bounded energy error).

use crate::support::as_fixed::relative_distance;
use crate::support::steps_to;
use mechanism_runtime::reference::fit::loglog_slope;
use mechanism_runtime::reference::{DoublePendulum, PendulumChain};
use mechanism_runtime::{Integrator, Rattle, SparseIntegrator, SparseRattle, SparseShake};

use super::fixed_state;

/// The fixed-size reference double pendulum with the chain's rods `√5` and `g = 1`.
fn chain_of_two_pendulum() -> DoublePendulum {
    DoublePendulum {
        m1: 1.0,
        m2: 1.0,
        l1: 5f64.sqrt(),
        l2: 5f64.sqrt(),
        g: 1.0,
    }
}

#[test]
fn sparse_rattle_is_second_order_against_the_angle_reference() {
    // An independent reference: the double pendulum integrated in its angles (no constraint)
    // by RK4 at h = 1e-4, the same motion as the chain of two.
    let chain = PendulumChain::tao_owhadi(2);
    let pendulum = chain_of_two_pendulum();
    let t_end = 2.0;
    let start = fixed_state::<4>(&chain.tao_owhadi_state());
    let reference = pendulum.constrained_reference(&start, t_end, steps_to(t_end, 1e-4));
    let hs = [0.04, 0.02, 0.01, 0.005];
    let (mut q_errors, mut v_errors) = (Vec::new(), Vec::new());
    for &h in &hs {
        let mut rattle = SparseRattle::new(&chain, h).unwrap();
        let mut state = chain.tao_owhadi_state();
        for _ in 0..steps_to(t_end, h) {
            rattle.step(&chain, &mut state).unwrap();
        }
        let error = |x: &[f64], r: &[f64]| {
            x.iter()
                .zip(r)
                .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()))
        };
        q_errors.push(error(&state.q, reference.q.as_slice()));
        v_errors.push(error(&state.v, reference.v.as_slice()));
    }
    let (q_slope, v_slope) = (
        loglog_slope(&hs, &q_errors).unwrap(),
        loglog_slope(&hs, &v_errors).unwrap(),
    );
    println!(
        "q errors {q_errors:?}, slope {q_slope:.3}; v errors {v_errors:?}, slope {v_slope:.3}"
    );
    assert!((q_slope - 2.0).abs() < 0.15, "position slope {q_slope}");
    assert!((v_slope - 2.0).abs() < 0.15, "velocity slope {v_slope}");
}

#[test]
fn sparse_chain_of_two_is_the_reference_double_pendulum() {
    // The same scheme on an independently written fixed-size model of the same motion.
    let chain = PendulumChain::tao_owhadi(2);
    let pendulum = chain_of_two_pendulum();
    let mut sparse_state = chain.tao_owhadi_state();
    let mut dense_state = fixed_state::<4>(&sparse_state);
    let mut sparse = SparseRattle::new(&chain, 0.01).unwrap();
    let mut dense = Rattle::<4, 2>::new(0.01).unwrap();
    for _ in 0..1000 {
        sparse.step(&chain, &mut sparse_state).unwrap();
        dense.step(&pendulum, &mut dense_state).unwrap();
    }
    let distance = relative_distance(&sparse_state.q, dense_state.q.as_slice())
        .max(relative_distance(&sparse_state.v, dense_state.v.as_slice()));
    assert!(distance < 1e-12, "{distance:e}");
}

/// Runs SHAKE (staggered start) and RATTLE side by side on Tao–Owhadi's chain of `links` to
/// `t_end` with step `h`; returns SHAKE's positions at every multiple of `every` and RATTLE's
/// largest energy error (SHAKE's staggered velocity has no energy of its own; the positions of
/// the two are the same).
fn tao_owhadi_run(links: usize, h: f64, t_end: f64, every: f64) -> (Vec<Vec<f64>>, f64) {
    let chain = PendulumChain::tao_owhadi(links);
    let mut shake = SparseShake::new(&chain, h).unwrap();
    let mut rattle = SparseRattle::new(&chain, h).unwrap();
    let mut shake_state = chain.tao_owhadi_state();
    let mut rattle_state = chain.tao_owhadi_state();
    shake.stagger_velocity(&chain, &mut shake_state).unwrap();
    let energy = chain.energy(&rattle_state.q, &rattle_state.v);
    let stride = steps_to(every, h);
    let (mut samples, mut worst) = (Vec::new(), 0.0f64);
    for step in 1..=steps_to(t_end, h) {
        shake.step(&chain, &mut shake_state).unwrap();
        rattle.step(&chain, &mut rattle_state).unwrap();
        // SHAKE and RATTLE have the same positions (GNI §VII.1.4).
        let same = relative_distance(&shake_state.q, &rattle_state.q);
        assert!(same < 1e-9, "SHAKE and RATTLE positions differ by {same:e}");
        worst = worst.max((chain.energy(&rattle_state.q, &rattle_state.v) - energy).abs());
        if step % stride == 0 {
            samples.push(shake_state.q.clone());
        }
    }
    (samples, worst)
}

#[test]
fn tao_owhadi_chain_converges_at_second_order_with_bounded_energy_error() {
    // EXPERIMENTS-M2 §C: n = 10, T = 50; SHAKE at h = 0.05 and 0.025 agree to max |Δq| ≈ 0.002.
    // For a second-order method that difference is (1 − 1/4) of the coarse run's error, so the
    // next halving must shrink it about 4×, and RATTLE's energy error (second order, no drift)
    // also about 4×.
    let (coarse, e_coarse) = tao_owhadi_run(10, 0.05, 50.0, 0.05);
    let (medium, e_medium) = tao_owhadi_run(10, 0.025, 50.0, 0.05);
    let (fine, e_fine) = tao_owhadi_run(10, 0.0125, 50.0, 0.05);
    let difference = |a: &[Vec<f64>], b: &[Vec<f64>]| {
        a.iter()
            .zip(b)
            .flat_map(|(a, b)| a.iter().zip(b).map(|(x, y)| (x - y).abs()))
            .fold(0.0f64, f64::max)
    };
    let (d1, d2) = (difference(&coarse, &medium), difference(&medium, &fine));
    println!(
        "max |Δq|: h 0.05 vs 0.025 {d1:.3e}, 0.025 vs 0.0125 {d2:.3e} (ratio {:.2}); \
         max |ΔE|: {e_coarse:.3e}, {e_medium:.3e}, {e_fine:.3e}",
        d1 / d2
    );
    assert!((3.0..5.5).contains(&(d1 / d2)), "Δq ratio {}", d1 / d2);
    // The pilot's 0.002 (SciPy fsolve at tolerance 1e-12); at the ratio above the coarse
    // run's own error is about 4/3 of it.
    assert!(d1 < 0.005, "max |Δq| between h = 0.05 and 0.025: {d1}");
    for (coarse, fine) in [(e_coarse, e_medium), (e_medium, e_fine)] {
        assert!(
            (3.0..5.5).contains(&(coarse / fine)),
            "energy ratio {}",
            coarse / fine
        );
    }
}
