//! Sizes are run-time values that `new` checks: no empty chain, no size whose memory cannot
//! exist, no ring whose wrap-around rows no integrator can satisfy.

use mechanism::mechanism;
use mechanism::models::PendulumChain as Chain;
use mechanism::runtime::model::{SparseHolonomic, SparseInertia};
use mechanism::runtime::StepError;

mechanism! {
    /// A closed ring of `N` beads joined by rods, the last rod wrapping around to bead 0: with
    /// `N = 1` that rod joins bead 0 to itself (the constant `−l²`), with `N = 2` rods 0 and 1
    /// join the same two beads.
    pub struct RodRing {
        sizes: { N = 6 },
        coordinates: [x[N], y[N]],
        parameters: { m = 1.0, l = 1.0, g = 1.0 },
        kinetic: sum(0..N, |i| 0.5 * m * (dot(x[i]).powi(2) + dot(y[i]).powi(2))),
        potential: sum(0..N, |i| m * g * y[i]),
        holonomic: {
            rod[i in 0..N]: (x[(i + 1) % N] - x[i]).powi(2) + (y[(i + 1) % N] - y[i]).powi(2)
                - l.powi(2),
        },
        integrators: [spook, rattle],
    }
}

#[test]
fn sizes_are_run_time_values_checked_by_new() {
    assert!(Chain::new(0).is_err());
    assert_eq!(Chain::new(10_000).unwrap().coordinate_count(), 20_000);
    // A size whose memory cannot exist is refused before anything is allocated (it aborted
    // with an out-of-memory error); the error carries the estimate.
    match Chain::new(1_000_000_000_000) {
        Err(StepError::TooLarge { needed, available }) => {
            assert!(
                needed > available && needed as f64 > 1e14,
                "{needed} {available}"
            )
        }
        other => panic!("{other:?}"),
    }
    // The ring of one bead: its wrap-around rod is the constant `−l²`, which no integrator can
    // satisfy (SPOOK returned `Ok` on it); the ring of two joins the same beads twice, rows
    // dependent everywhere, which RATTLE (compiled for) cannot solve.
    let refused = |n: usize| match RodRing::new(n) {
        Err(StepError::InvalidModel {
            what: "constraint `rod`",
            index,
            reason,
        }) => (index, reason),
        Err(other) => panic!("ring of {n}: {other}"),
        Ok(_) => panic!("ring of {n} accepted"),
    };
    let (index, reason) = refused(1);
    assert_eq!(index, 0);
    assert!(reason.contains("can never hold"), "{reason}");
    let (index, reason) = refused(2);
    assert_eq!(index, 1);
    assert!(reason.contains("dependent everywhere"), "{reason}");
    for n in [3, 4, 100] {
        assert_eq!(RodRing::new(n).unwrap().constraint_count(), n);
    }
}
