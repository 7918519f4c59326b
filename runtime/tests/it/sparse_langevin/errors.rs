//! Typed errors for bad models, states and steps, which leave the state unchanged and the
//! noise stream rewound.

use crate::support::as_fixed::AsFixed;
use mechanism_runtime::model::{SparseConstantMass, SparseInertia};
use mechanism_runtime::{
    DynState, Integrator, Langevin, SparseIntegrator, SparseLangevin, State, StepError, Verlet,
};

use super::{spd3, Bodies, Drift};

/// Steps `failing` into an error with `model` from `start` and asserts the state is unchanged
/// and the noise stream rewound: the next good step matches a fresh wrapper's bit for bit.
fn assert_failure_leaves_everything_unchanged<Model: SparseInertia>(
    model: &Model,
    failing: &mut SparseLangevin<Drift>,
    good: &Bodies,
) -> StepError {
    let start = DynState::new(0.5, vec![0.1; 6], vec![1.0, -1.0, 0.5, 0.0, 2.0, -0.5]);
    let mut state = start.clone();
    let err = SparseIntegrator::step(failing, model, &mut state).unwrap_err();
    assert_eq!(state, start, "{err}");
    let mut fresh = SparseLangevin::new(good, Drift { h: 0.1 }, 0.1, 1.0, 1.0, 4).unwrap();
    let mut other = start.clone();
    failing.step(good, &mut state).unwrap();
    fresh.step(good, &mut other).unwrap();
    assert_eq!(state, other, "after {err}");
    err
}

#[test]
fn bad_models_states_and_steps_are_typed_errors() {
    let good = Bodies::three(1.0);
    let wrapper = || SparseLangevin::new(&good, Drift { h: 0.1 }, 0.1, 1.0, 1.0, 4).unwrap();

    // The 3 × 3 block of body 1 (coordinates 2..5) with a negative eigenvalue.
    let mut indefinite = Bodies::three(1.0);
    indefinite.blocks[4..13].copy_from_slice(&[1.0, 2.0, 0.0, 2.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
    let err = assert_failure_leaves_everything_unchanged(&indefinite, &mut wrapper(), &good);
    assert!(
        matches!(err, StepError::NotPositiveDefinite { row: 2..=4, pivot, t: 0.5, .. }
            if (pivot + 1.0).abs() < 1e-12),
        "{err}"
    );

    // The fixed-size tier names the same row: its Jacobi rotations keep the blocks apart.
    let fixed = |model: &Bodies| {
        let mut langevin = Langevin::new(Verlet::<6>::new(0.1).unwrap(), 0.1, 1.0, 1.0, 4).unwrap();
        let mut state = State::new(0.5, [0.1; 6], [1.0; 6]);
        langevin.step(&AsFixed(model), &mut state).unwrap_err()
    };
    assert_eq!(fixed(&indefinite), err);

    // A singular 2 × 2 block of body 0.
    let mut singular = Bodies::three(1.0);
    singular.blocks[..4].copy_from_slice(&[1.0, 1.0, 1.0, 1.0]);
    let err = assert_failure_leaves_everything_unchanged(&singular, &mut wrapper(), &good);
    assert!(matches!(err, StepError::Singular { t: 0.5, .. }), "{err}");

    // A non-finite entry of a block, named by its index among the concatenated blocks.
    let mut nan = Bodies::three(1.0);
    nan.blocks[6] = f64::NAN;
    let err = assert_failure_leaves_everything_unchanged(&nan, &mut wrapper(), &good);
    assert_eq!(
        err,
        StepError::NonFinite {
            quantity: "mass matrix",
            index: 6,
            t: 0.5
        }
    );
    // The fixed-size tier counts the entry in its column-major N × N matrix: (2, 4) is 26.
    assert_eq!(
        fixed(&nan),
        StepError::NonFinite {
            quantity: "mass matrix",
            index: 26,
            t: 0.5
        }
    );

    // An inner step size that differs from the wrapper's, found after the noise was drawn.
    let mut mismatched = wrapper();
    mismatched.inner_mut().h = 0.05;
    let start = DynState::new(0.5, vec![0.1; 6], vec![1.0; 6]);
    let mut state = start.clone();
    let err = mismatched.step(&good, &mut state).unwrap_err();
    assert!(
        matches!(err, StepError::BadParameter { name: "h", .. }),
        "{err}"
    );
    assert_eq!(state, start);
    mismatched.inner_mut().h = 0.1;
    let err = assert_failure_leaves_everything_unchanged(&indefinite, &mut mismatched, &good);
    assert!(matches!(err, StepError::NotPositiveDefinite { .. }));

    // A model other than the one the wrapper was built for, and a state that does not fit.
    let foreign = Bodies {
        sizes: vec![3, 3],
        blocks: [spd3(), spd3()].concat(),
        stiffness: 1.0,
    };
    let err = assert_failure_leaves_everything_unchanged(&foreign, &mut wrapper(), &good);
    assert!(
        matches!(
            err,
            StepError::InvalidModel {
                what: "body sizes",
                ..
            }
        ),
        "{err}"
    );
    let mut short = DynState::new(0.0, vec![0.0; 5], vec![0.0; 5]);
    assert!(matches!(
        wrapper().step(&good, &mut short),
        Err(StepError::InvalidModel {
            what: "state q",
            index: 5,
            ..
        })
    ));
    let mut infinite = DynState::new(0.0, vec![0.0; 6], vec![f64::INFINITY; 6]);
    assert!(matches!(
        wrapper().step(&good, &mut infinite),
        Err(StepError::NonFinite {
            quantity: "v",
            index: 0,
            ..
        })
    ));

    // Construction: body sizes that do not cover the coordinates, bad parameters.
    struct Uncovered(Bodies);
    impl SparseConstantMass for Uncovered {}

    impl SparseInertia for Uncovered {
        fn coordinate_count(&self) -> usize {
            7
        }
        fn body_sizes(&self) -> &[usize] {
            self.0.body_sizes()
        }
        fn constant_mass(&self) -> bool {
            true
        }
        fn mass_blocks(&self, q: &[f64], blocks: &mut [f64]) {
            self.0.mass_blocks(q, blocks);
        }
        fn kinetic_energy(&self, q: &[f64], v: &[f64]) -> f64 {
            self.0.kinetic_energy(q, v)
        }
    }
    let err = SparseLangevin::new(
        &Uncovered(Bodies::three(1.0)),
        Drift { h: 0.1 },
        0.1,
        1.0,
        1.0,
        0,
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            StepError::InvalidModel {
                what: "body sizes",
                index: 6,
                ..
            }
        ),
        "{err}"
    );
    for (h, friction, temperature) in [(0.0, 1.0, 1.0), (0.1, -1.0, 1.0), (0.1, 1.0, f64::NAN)] {
        assert!(SparseLangevin::new(&good, Drift { h: 0.1 }, h, friction, temperature, 0).is_err());
    }
}
