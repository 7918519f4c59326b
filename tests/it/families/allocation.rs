//! The steps of the generated models (SPOOK, RATTLE, Z&S on the chain, SPOOK on the ladder)
//! allocate nothing.

use mechanism::models::{Ladder, PendulumChain as Chain};
use mechanism::runtime::reference::{PendulumChain, SpookLadder};
use mechanism::runtime::{
    Penalized, SparseIntegrator, SparseRattle, SparseSpook, SparseZhangSkeel, SparseZhangSkeelStiff,
};

/// Takes one warm-up `step`, then asserts that 20 more allocate nothing.
fn assert_steps_allocate_nothing(what: &str, mut step: impl FnMut()) {
    step();
    let before = crate::support::allocations();
    for _ in 0..20 {
        step();
    }
    assert_eq!(
        crate::support::allocations() - before,
        0,
        "a step of {what} allocated"
    );
}

#[test]
fn steps_of_generated_models_allocate_nothing() {
    let chain = Chain::new(100).unwrap();
    let start = PendulumChain::tao_owhadi(100).tao_owhadi_state();
    let (mut a, mut b) = (start.clone(), start.clone());
    let mut spook = SparseSpook::new(&chain, 0.01).unwrap();
    let mut rattle = SparseRattle::new(&chain, 0.01).unwrap();
    assert_steps_allocate_nothing("the generated chain", || {
        spook.step(&chain, &mut a).unwrap();
        rattle.step(&chain, &mut b).unwrap();
    });
    let penalized = Penalized::new(chain.clone(), 20.0);
    let mut zs = SparseZhangSkeel::new(&penalized, 0.05)
        .unwrap()
        .with_beta(0.4)
        .unwrap();
    let mut stiff = SparseZhangSkeelStiff::new(&penalized, 0.05)
        .unwrap()
        .with_beta(0.4)
        .unwrap();
    let (mut a, mut b) = (start.clone(), start);
    assert_steps_allocate_nothing("Z&S on the generated chain", || {
        zs.step(&penalized, &mut a).unwrap();
        stiff.step(&penalized, &mut b).unwrap();
    });
    let ladder = Ladder::new(20).unwrap();
    let mut state = SpookLadder::new(20).horizontal_state();
    let mut spook = SparseSpook::new(&ladder, 1.0 / 60.0).unwrap();
    assert_steps_allocate_nothing("the generated ladder", || {
        spook.step(&ladder, &mut state).unwrap();
    });
}
