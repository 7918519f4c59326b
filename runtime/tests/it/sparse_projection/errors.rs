//! Typed errors that leave the state unchanged: redundant rows (a singular `G`), states off
//! the manifold, non-finite or of the wrong size, a model other than the one built for, bad
//! parameters and step sizes, a step so large that Newton fails.

use mechanism_runtime::model::{
    SparseConstantMass, SparseHolonomic, SparseInertia, SparsePotential,
};
use mechanism_runtime::reference::{PendulumChain, SpookLadder};
use mechanism_runtime::{DynState, SparseIntegrator, SparseRattle, SparseShake, StepError};

/// A sparse model with row 0 of `inner` listed twice: a rank-deficient `G`.
struct Redundant<Model> {
    inner: Model,
    pattern: Vec<(usize, usize)>,
}

impl<Model: SparseHolonomic> Redundant<Model> {
    fn new(inner: Model) -> Self {
        let m = inner.constraint_count();
        let mut pattern = inner.jacobian_pattern().to_vec();
        let first: Vec<_> = pattern
            .iter()
            .filter(|(row, _)| *row == 0)
            .map(|&(_, col)| (m, col))
            .collect();
        pattern.extend(first);
        Redundant { inner, pattern }
    }
}

impl<Model: SparseConstantMass> SparseConstantMass for Redundant<Model> {}

impl<Model: SparseInertia> SparseInertia for Redundant<Model> {
    fn coordinate_count(&self) -> usize {
        self.inner.coordinate_count()
    }
    fn body_sizes(&self) -> &[usize] {
        self.inner.body_sizes()
    }
    fn constant_mass(&self) -> bool {
        self.inner.constant_mass()
    }
    fn mass_blocks(&self, q: &[f64], blocks: &mut [f64]) {
        self.inner.mass_blocks(q, blocks);
    }
    fn kinetic_energy(&self, q: &[f64], v: &[f64]) -> f64 {
        self.inner.kinetic_energy(q, v)
    }
}

impl<Model: SparsePotential> SparsePotential for Redundant<Model> {
    fn potential(&self, q: &[f64]) -> f64 {
        self.inner.potential(q)
    }
    fn potential_gradient(&self, q: &[f64], grad: &mut [f64]) {
        self.inner.potential_gradient(q, grad);
    }
}

impl<Model: SparseHolonomic> SparseHolonomic for Redundant<Model> {
    fn constraint_count(&self) -> usize {
        self.inner.constraint_count() + 1
    }
    fn jacobian_pattern(&self) -> &[(usize, usize)] {
        &self.pattern
    }
    fn constraints_and_jacobian(&self, q: &[f64], t: f64, g: &mut [f64], jac: &mut [f64]) {
        let (m, e) = (
            self.inner.constraint_count(),
            self.inner.jacobian_pattern().len(),
        );
        self.inner
            .constraints_and_jacobian(q, t, &mut g[..m], &mut jac[..e]);
        g[m] = g[0];
        let mut extra = e;
        for (entry, &(row, _)) in self.inner.jacobian_pattern().iter().enumerate() {
            if row == 0 {
                jac[extra] = jac[entry];
                extra += 1;
            }
        }
    }
}

/// Steps `integrator` once from `start` and returns the error, asserting that the state did
/// not change.
fn failed_step<I: SparseIntegrator<Model>, Model>(
    integrator: &mut I,
    model: &Model,
    start: &DynState,
) -> StepError {
    let mut state = start.clone();
    let err = integrator.step(model, &mut state).unwrap_err();
    let bits = |s: &DynState| {
        let mut bits = vec![s.t.to_bits()];
        bits.extend(s.q.iter().chain(&s.v).map(|x| x.to_bits()));
        bits
    };
    assert_eq!(bits(&state), bits(start), "a failed step changed the state");
    err
}

#[test]
fn redundant_rows_are_singular() {
    let singular = |e: &StepError| matches!(e, StepError::Singular { .. });
    let chain = Redundant::new(PendulumChain::tao_owhadi(5));
    let start = chain.inner.tao_owhadi_state();
    let err = failed_step(
        &mut SparseRattle::new(&chain, 0.01).unwrap(),
        &chain,
        &start,
    );
    println!("chain, rod 0 twice: {err}");
    assert!(singular(&err), "{err}");
    let err = failed_step(&mut SparseShake::new(&chain, 0.01).unwrap(), &chain, &start);
    assert!(singular(&err), "{err}");
    let ladder = Redundant::new(SpookLadder::new(3));
    let start = ladder.inner.horizontal_state();
    let err = failed_step(
        &mut SparseRattle::new(&ladder, 0.01).unwrap(),
        &ladder,
        &start,
    );
    println!("ladder, unit row 0 twice: {err}");
    assert!(singular(&err), "{err}");
}

#[test]
fn bad_states_models_and_parameters_are_typed_errors() {
    let chain = PendulumChain::tao_owhadi(5);
    let good = chain.tao_owhadi_state();
    let mut rattle = SparseRattle::new(&chain, 0.01).unwrap();
    let mut shake = SparseShake::new(&chain, 0.01).unwrap();

    // Off the manifold: bob 3 moved by 1e-6.
    let mut off = good.clone();
    off.q[6] += 1e-6;
    for err in [
        failed_step(&mut rattle, &chain, &off),
        failed_step(&mut shake, &chain, &off),
    ] {
        assert!(
            matches!(err, StepError::OffManifold { row: 3, .. }),
            "{err}"
        );
    }

    let mut bad = good.clone();
    bad.v[3] = f64::NAN;
    let err = failed_step(&mut rattle, &chain, &bad);
    assert!(
        matches!(
            err,
            StepError::NonFinite {
                quantity: "v",
                index: 3,
                ..
            }
        ),
        "{err}"
    );
    let short = DynState::new(0.0, vec![0.0; 3], vec![0.0; 3]);
    let err = failed_step(&mut shake, &chain, &short);
    assert!(
        matches!(
            err,
            StepError::InvalidModel {
                what: "state q",
                ..
            }
        ),
        "{err}"
    );

    let other = PendulumChain::tao_owhadi(6);
    let err = failed_step(&mut rattle, &other, &other.tao_owhadi_state());
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

    let mut broken = chain.clone();
    broken.mass = f64::NAN;
    let err = failed_step(&mut rattle, &broken, &good);
    assert!(
        matches!(err, StepError::BadParameter { name: "mass", .. }),
        "{err}"
    );
    let err = shake
        .stagger_velocity(&broken, &mut good.clone())
        .unwrap_err();
    assert!(
        matches!(err, StepError::BadParameter { name: "mass", .. }),
        "{err}"
    );

    // A huge step: Newton fails, the state is kept.
    let mut huge = SparseRattle::new(&chain, 50.0).unwrap();
    let err = failed_step(&mut huge, &chain, &good);
    assert!(
        matches!(
            err,
            StepError::NewtonDiverged { .. } | StepError::Singular { .. }
        ),
        "{err}"
    );

    for h in [0.0, -1.0, f64::NAN] {
        assert!(matches!(
            SparseRattle::new(&chain, h),
            Err(StepError::BadStepSize { .. })
        ));
        assert!(matches!(
            SparseShake::new(&chain, h),
            Err(StepError::BadStepSize { .. })
        ));
    }
    assert!(matches!(
        SparseRattle::new(&chain, 0.1)
            .unwrap()
            .with_tolerance(f64::NAN),
        Err(StepError::BadParameter {
            name: "tolerance",
            ..
        })
    ));
    // The stepper still works after all these failures.
    let mut state = good.clone();
    rattle.step(&chain, &mut state).unwrap();
}
