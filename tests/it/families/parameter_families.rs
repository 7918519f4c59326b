//! Parameter families (`m[N]`, `l[N]`): a chain with a mass and a length per link
//! (`models::VariedPendulumChain`), changed per member at run time, and the errors for a
//! non-finite member or a family of the wrong length.

use mechanism::models::VariedPendulumChain as VariedChain;
use mechanism::runtime::model::{SparseHolonomic, SparseInertia, SparsePotential};
use mechanism::runtime::reference::PendulumChain;
use mechanism::runtime::{
    DynState, Penalized, SparseIntegrator, SparseRattle, SparseSpook, SparseZhangSkeel, StepError,
    StepReport,
};

use super::{assert_close_all, close, noise};

/// Parameter families: with their defaults the chain is Tao–Owhadi's; changed at run time, per
/// link, its mass blocks, potential and constraints follow the new values (checked against the
/// closed forms here), and RATTLE keeps every rod at its own length.
#[test]
fn parameter_families_change_per_member_at_run_time() {
    let n = 7;
    let mut chain = VariedChain::new(n).unwrap();
    assert_eq!((chain.m.len(), chain.l.len()), (n, n));
    let reference = PendulumChain::tao_owhadi(n);
    let mut draw = noise(500);
    let q: Vec<f64> = (0..2 * n).map(|_| 3.0 * draw()).collect();
    let constraints = |model: &dyn SparseHolonomic| {
        let mut g = vec![f64::NAN; n];
        let mut jac = vec![f64::NAN; model.jacobian_pattern().len()];
        model.constraints_and_jacobian(&q, 0.0, &mut g, &mut jac);
        g
    };
    assert_close_all(
        &constraints(&chain),
        &constraints(&reference),
        "g (defaults)",
    );
    for i in 0..n {
        chain.m[i] = 1.0 + i as f64;
        chain.l[i] = 1.0 + 0.1 * i as f64;
    }
    let mut blocks = vec![f64::NAN; 4 * n];
    chain.mass_blocks(&q, &mut blocks);
    for i in 0..n {
        assert_eq!(blocks[4 * i..4 * i + 4], [chain.m[i], 0.0, 0.0, chain.m[i]]);
    }
    let potential: f64 = (0..n).map(|i| chain.m[i] * q[2 * i + 1]).sum();
    assert!(close(chain.potential(&q), potential));
    let expected: Vec<f64> = (0..n)
        .map(|i| {
            let (px, py) = if i == 0 {
                (0.0, 0.0)
            } else {
                (q[2 * i - 2], q[2 * i - 1])
            };
            (q[2 * i] - px).powi(2) + (q[2 * i + 1] - py).powi(2) - chain.l[i].powi(2)
        })
        .collect();
    assert_close_all(&constraints(&chain), &expected, "g (per-link lengths)");
    // Released from a straight line at 30° from the vertical, at rest.
    let (s, c) = (0.5f64, 0.75f64.sqrt());
    let mut along = 0.0;
    let mut q0 = Vec::new();
    for i in 0..n {
        along += chain.l[i];
        q0.extend([along * s, -along * c]);
    }
    let mut state = DynState::new(0.0, q0, vec![0.0; 2 * n]);
    let mut rattle = SparseRattle::new(&chain, 0.01)
        .unwrap()
        .with_tolerance(1e-12)
        .unwrap();
    for _ in 0..200 {
        rattle.step(&chain, &mut state).unwrap();
    }
    let q = &state.q;
    for i in 0..n {
        let (px, py) = if i == 0 {
            (0.0, 0.0)
        } else {
            (q[2 * i - 2], q[2 * i - 1])
        };
        let length = (q[2 * i] - px).hypot(q[2 * i + 1] - py);
        assert!(
            (length - chain.l[i]).abs() < 1e-10,
            "rod {i}: {length} vs {}",
            chain.l[i]
        );
    }
    assert!(state.v.iter().any(|v| v.abs() > 0.1), "the chain moves");

    // A non-finite member of a family, or a non-finite scalar parameter, is named by the step,
    // which leaves the state unchanged.
    let before = state.clone();
    chain.l[3] = f64::NAN;
    assert!(matches!(
        rattle.step(&chain, &mut state),
        Err(StepError::BadParameterMember { family: "l", index: 3, value, .. }) if value.is_nan()
    ));
    assert_eq!(state, before);
    chain.l[3] = 1.3;
    // The member is named with its index by every sparse integrator, on the penalized model
    // too, before the step.
    chain.m[5] = f64::INFINITY;
    let member = |result: Result<StepReport, StepError>| {
        assert_eq!(
            result.unwrap_err().to_string(),
            "parameter m[5] = inf is invalid: a model parameter must be finite"
        )
    };
    member(rattle.step(&chain, &mut state));
    member(
        SparseSpook::new(&chain, 0.01)
            .unwrap()
            .step(&chain, &mut state),
    );
    let penalized = Penalized::new(chain.clone(), 20.0);
    member(
        SparseZhangSkeel::new(&penalized, 0.01)
            .unwrap()
            .step(&penalized, &mut state),
    );
    assert_eq!(state, before);
    chain.m[5] = 1.0;
    chain.g = f64::INFINITY;
    assert!(matches!(
        rattle.step(&chain, &mut state),
        Err(StepError::BadParameter { name: "g", .. })
    ));
    assert_eq!(state, before);
    chain.g = 1.0;

    // A family whose `Vec` no longer has one member per index (replaced or resized after
    // `new`) is named with its length by every sparse integrator's step, before a kernel
    // indexes it; evaluating the model directly reads NaN for a missing member, not a panic.
    chain.m.pop();
    let misfit = |result: Result<StepReport, StepError>, length: usize| matches!(result, Err(StepError::BadParameter { name: "m", value, .. }) if value == length as f64);
    assert!(misfit(rattle.step(&chain, &mut state), n - 1));
    let mut spook = SparseSpook::new(&chain, 0.01).unwrap();
    assert!(misfit(spook.step(&chain, &mut state), n - 1));
    assert_eq!(state, before);
    let mut blocks = vec![0.0; 4 * n];
    chain.mass_blocks(&state.q, &mut blocks);
    assert!(blocks[4 * (n - 1)].is_nan());
    assert!(blocks[..4 * (n - 1)].iter().all(|x| x.is_finite()));
    chain.m.extend([1.0, 1.0]);
    assert!(misfit(rattle.step(&chain, &mut state), n + 1));
    assert_eq!(state, before);
}
