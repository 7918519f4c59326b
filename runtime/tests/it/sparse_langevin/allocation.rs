//! Steps on a chain of 1000 do not allocate.

use crate::support::allocations;
use mechanism_runtime::reference::PendulumChain;
use mechanism_runtime::{SparseIntegrator, SparseLangevin, SparseSpook};

use super::seed;

#[test]
fn steps_on_a_chain_of_1000_do_not_allocate() {
    let chain = PendulumChain::tao_owhadi(1000);
    let h = 0.01;
    let spook = SparseSpook::new(&chain, h).unwrap();
    let mut langevin = SparseLangevin::new(&chain, spook, h, 1.0, 0.1, seed(10)).unwrap();
    let mut state = chain.tao_owhadi_state();
    langevin.step(&chain, &mut state).unwrap();
    let before = allocations();
    for _ in 0..100 {
        langevin.step(&chain, &mut state).unwrap();
    }
    assert_eq!(allocations() - before, 0);
    assert!((state.t - 1.01).abs() < 1e-12);
}
