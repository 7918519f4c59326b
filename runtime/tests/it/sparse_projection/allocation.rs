//! Steps of the sparse SHAKE and RATTLE on a chain of 1000 and a ladder of 100 do not
//! allocate.

use crate::support::allocations;
use mechanism_runtime::reference::{PendulumChain, SpookLadder};
use mechanism_runtime::{DynState, SparseIntegrator, SparseRattle, SparseShake};

#[test]
fn sparse_steps_do_not_allocate() {
    fn count<I: SparseIntegrator<Model>, Model>(
        mut integrator: I,
        model: &Model,
        start: DynState,
    ) -> usize {
        let mut state = start;
        let before = allocations();
        for _ in 0..100 {
            integrator.step(model, &mut state).unwrap();
        }
        allocations() - before
    }
    let chain = PendulumChain::tao_owhadi(1000);
    let start = chain.tao_owhadi_state();
    assert_eq!(
        count(
            SparseShake::new(&chain, 0.01).unwrap(),
            &chain,
            start.clone()
        ),
        0,
        "SHAKE, chain"
    );
    assert_eq!(
        count(SparseRattle::new(&chain, 0.01).unwrap(), &chain, start),
        0,
        "RATTLE, chain"
    );
    let ladder = SpookLadder::new(100);
    let start = ladder.horizontal_state();
    assert_eq!(
        count(
            SparseShake::new(&ladder, 1.0 / 600.0).unwrap(),
            &ladder,
            start.clone()
        ),
        0,
        "SHAKE, ladder"
    );
    assert_eq!(
        count(
            SparseRattle::new(&ladder, 1.0 / 600.0).unwrap(),
            &ladder,
            start
        ),
        0,
        "RATTLE, ladder"
    );
}
