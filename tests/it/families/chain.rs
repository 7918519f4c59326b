//! The library's chain of pendula (`models::PendulumChain`) against Tao–Owhadi's hand-written
//! one: the same model (mass blocks, potential, gradient, constraints and Jacobian, the
//! penalty's derivatives and `vᵀ Hess g v`) and the same trajectories under SPOOK and the
//! penalty integrators.

use std::collections::HashMap;

use mechanism::models::PendulumChain as Chain;
use mechanism::runtime::model::{
    SparseHolonomic, SparseHolonomicKinematics, SparseInertia, SparsePenalizedHessian,
    SparsePenalizedPotential, SparsePenalizedThirdDerivative, SparsePenaltyHessian,
    SparsePotential, SparsePotentialHessian,
};
use mechanism::runtime::reference::PendulumChain;
use mechanism::runtime::{
    DynState, Penalized, SparseIntegrator, SparseNewmarkOneIteration,
    SparseNewmarkOneIterationStiff, SparseRattle, SparseSpook, SparseVerlet, SparseZhangSkeel,
    SparseZhangSkeelSimplified, SparseZhangSkeelStiff,
};

use super::{assert_close_all, close, noise};

#[test]
fn the_generated_chain_equals_the_hand_written_one() {
    for n in [1, 2, 10, 37] {
        let generated = Chain::new(n).unwrap();
        let reference = PendulumChain::tao_owhadi(n);
        assert_eq!(generated.coordinate_count(), 2 * n);
        assert_eq!(generated.body_sizes(), reference.body_sizes());
        assert_eq!(generated.constraint_count(), n);
        assert!(generated.constant_mass());
        let mut draw = noise(n as u64);
        let q: Vec<f64> = (0..2 * n).map(|_| 3.0 * draw()).collect();
        let v: Vec<f64> = (0..2 * n).map(|_| draw()).collect();
        let blocks = |model: &dyn SparseInertia| {
            let mut out = vec![f64::NAN; 4 * n];
            model.mass_blocks(&q, &mut out);
            out
        };
        assert_eq!(blocks(&generated), blocks(&reference));
        assert!(close(
            generated.kinetic_energy(&q, &v),
            reference.kinetic_energy(&q, &v)
        ));
        assert!(close(generated.potential(&q), reference.potential(&q)));
        let gradient = |model: &dyn SparsePotential| {
            let mut out = vec![f64::NAN; 2 * n];
            model.potential_gradient(&q, &mut out);
            out
        };
        for (a, b) in gradient(&generated).iter().zip(gradient(&reference)) {
            assert!(close(*a, b));
        }
        let jacobian = |model: &dyn SparseHolonomic| {
            let mut g = vec![f64::NAN; n];
            let mut jac = vec![f64::NAN; model.jacobian_pattern().len()];
            model.constraints_and_jacobian(&q, 0.0, &mut g, &mut jac);
            let entries: HashMap<(usize, usize), f64> =
                model.jacobian_pattern().iter().copied().zip(jac).collect();
            (g, entries)
        };
        let ((g_gen, j_gen), (g_ref, j_ref)) = (jacobian(&generated), jacobian(&reference));
        for (a, b) in g_gen.iter().zip(&g_ref) {
            assert!(close(*a, *b), "{a} vs {b}");
        }
        assert_eq!(j_gen.len(), j_ref.len(), "pattern sizes");
        for (entry, value) in &j_ref {
            assert!(close(j_gen[entry], *value), "{entry:?}");
        }
    }
}

#[test]
fn generated_and_hand_written_chains_step_alike() {
    let n = 10;
    let generated = Chain::new(n).unwrap();
    let reference = PendulumChain::tao_owhadi(n);
    let h = 0.01;
    let start = reference.tao_owhadi_state();
    let run = |model: &dyn Fn(&mut DynState)| {
        let mut state = start.clone();
        for _ in 0..1000 {
            model(&mut state);
        }
        state
    };
    let mut spook_gen = SparseSpook::new(&generated, h).unwrap();
    let mut spook_ref = SparseSpook::new(&reference, h).unwrap();
    let a = std::cell::RefCell::new(&mut spook_gen);
    let b = std::cell::RefCell::new(&mut spook_ref);
    let end_gen = run(&|s| {
        a.borrow_mut().step(&generated, s).unwrap();
    });
    let end_ref = run(&|s| {
        b.borrow_mut().step(&reference, s).unwrap();
    });
    let gap = end_gen
        .q
        .iter()
        .zip(&end_ref.q)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    assert!(gap < 1e-9, "SPOOK trajectories differ by {gap:e}");
    let mut rattle = SparseRattle::new(&generated, h).unwrap();
    let mut state = start.clone();
    for _ in 0..100 {
        rattle.step(&generated, &mut state).unwrap();
    }
}

#[test]
fn the_generated_chain_penalty_equals_the_hand_written_one() {
    for n in [1, 2, 10, 37] {
        let generated = Chain::new(n).unwrap();
        let reference = PendulumChain::tao_owhadi(n);
        let mut draw = noise(100 + n as u64);
        let q: Vec<f64> = (0..2 * n).map(|_| 3.0 * draw()).collect();
        let a: Vec<f64> = (0..2 * n).map(|_| draw()).collect();
        let v: Vec<f64> = (0..2 * n).map(|_| draw()).collect();
        let omega = 20.0;
        assert!(close(
            generated.penalized_potential(omega, &q),
            reference.penalized_potential(omega, &q)
        ));
        let vector = |f: &dyn Fn(&mut [f64])| {
            let mut out = vec![f64::NAN; 2 * n];
            f(&mut out);
            out
        };
        assert_close_all(
            &vector(&|out| generated.penalized_potential_gradient(omega, &q, out)),
            &vector(&|out| reference.penalized_potential_gradient(omega, &q, out)),
            "∇W",
        );
        assert_close_all(
            &vector(&|out| generated.penalized_potential_third_contraction(omega, &q, &a, out)),
            &vector(&|out| reference.penalized_potential_third_contraction(omega, &q, &a, out)),
            "a·W‴·a",
        );
        let matrix = |pattern: &[(usize, usize)], f: &dyn Fn(&mut [f64])| {
            let mut values = vec![f64::NAN; pattern.len()];
            f(&mut values);
            crate::support::dense_symmetric(pattern, &values, 2 * n)
        };
        assert_close_all(
            &matrix(generated.penalized_hessian_pattern(), &|h| {
                generated.penalized_potential_hessian(omega, &q, h)
            }),
            &matrix(reference.penalized_hessian_pattern(), &|h| {
                reference.penalized_potential_hessian(omega, &q, h)
            }),
            "Hess W",
        );
        assert_close_all(
            &matrix(generated.penalty_hessian_pattern(), &|h| {
                generated.penalty_hessian(omega, &q, h)
            }),
            &matrix(reference.penalty_hessian_pattern(), &|h| {
                reference.penalty_hessian(omega, &q, h)
            }),
            "Hess ½ω²|g|²",
        );
        // The potential is linear: its Hessian has no entry at all.
        assert!(generated.hessian_pattern().is_empty());
        let bias = |model: &dyn SparseHolonomicKinematics| {
            let mut out = vec![f64::NAN; n];
            model.constraint_acceleration_bias(&q, &v, 0.0, &mut out);
            out
        };
        assert_close_all(&bias(&generated), &bias(&reference), "vᵀ Hess g v");
    }
}

/// Tao–Owhadi §4.2's penalized chain (`ω = 20`, `β = 0.4`, `h = 0.05`) stepped by full Z&S,
/// Z&Ss, stiff Z&Ss, one-iteration Newmark (both Jacobians) and Verlet on the generated and the hand-written models: the same
/// trajectories over 1000 steps up to rounding (the two models sum their terms in different
/// orders).
#[test]
fn penalty_integrators_step_generated_and_hand_written_chains_alike() {
    let n = 10;
    let omega = 20.0;
    let generated = Penalized::new(Chain::new(n).unwrap(), omega);
    let reference = Penalized::new(PendulumChain::tao_owhadi(n), omega);
    let start = PendulumChain::tao_owhadi(n).tao_owhadi_state();
    let gap = |a: &DynState, b: &DynState| {
        a.q.iter()
            .chain(&a.v)
            .zip(b.q.iter().chain(&b.v))
            .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
    };
    macro_rules! compare {
        ($name:literal, $build:expr, $h:expr, $steps:expr) => {{
            let (mut a, mut b) = ($build(&generated), $build(&reference));
            let (mut s1, mut s2) = (start.clone(), start.clone());
            for _ in 0..$steps {
                a.step(&generated, &mut s1).unwrap();
                b.step(&reference, &mut s2).unwrap();
            }
            let gap = gap(&s1, &s2);
            assert!(gap < 1e-8, "{}: the chains differ by {gap:e}", $name);
        }};
    }
    compare!(
        "Z&S",
        |m| SparseZhangSkeel::new(m, 0.05)
            .unwrap()
            .with_beta(0.4)
            .unwrap(),
        0.05,
        1000
    );
    compare!(
        "Z&Ss",
        |m| SparseZhangSkeelSimplified::new(m, 0.05)
            .unwrap()
            .with_beta(0.4)
            .unwrap(),
        0.05,
        1000
    );
    compare!(
        "stiff Z&Ss",
        |m| SparseZhangSkeelStiff::new(m, 0.05)
            .unwrap()
            .with_beta(0.4)
            .unwrap(),
        0.05,
        1000
    );
    compare!(
        "one-iteration Newmark",
        |m| SparseNewmarkOneIteration::new(m, 0.05).unwrap(),
        0.05,
        1000
    );
    compare!(
        "stiff one-iteration Newmark",
        |m| SparseNewmarkOneIterationStiff::new(m, 0.05).unwrap(),
        0.05,
        1000
    );
    compare!(
        "Verlet",
        |m| SparseVerlet::new(m, 0.005).unwrap(),
        0.005,
        1000
    );
}
