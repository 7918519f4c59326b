//! Bad input is a typed error, never a panic, and a failed step leaves the state unchanged.

use mechanism_runtime::integrators::stabilized::{DOPRI5, RK4};
use mechanism_runtime::reference::double_pendulum::{initial_state, DoublePendulum};
use mechanism_runtime::reference::HarmonicOscillator;
use mechanism_runtime::{
    AppliedForces, ConstantMass, DivergenceGuard, Dopri5, EnergyGuard, Holonomic, Inertia,
    Integrator, Livens, Nonholonomic, Penalized, Potential, Rattle, Regularization, Relaxation,
    SMatrix, SVector, Shake, Spook, StabilizedRk, State, StepError, ZhangSkeel,
    ZhangSkeelSimplified,
};

#[test]
fn bad_step_sizes_are_rejected() {
    for h in [0.0, -0.1, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let is_bad = |e: StepError| matches!(e, StepError::BadStepSize { h: x } if x.to_bits() == h.to_bits());
        assert!(is_bad(Spook::<4, 2>::new(h).unwrap_err()));
        assert!(is_bad(ZhangSkeel::<4>::new(h).unwrap_err()));
        assert!(is_bad(ZhangSkeelSimplified::<4>::new(h).unwrap_err()));
    }
}

#[test]
fn bad_beta_is_rejected() {
    for beta in [-0.1, f64::NAN, f64::INFINITY] {
        let err = ZhangSkeel::<1>::new(0.1)
            .unwrap()
            .with_beta(beta)
            .unwrap_err();
        assert!(
            matches!(err, StepError::BadParameter { name: "beta", .. }),
            "{err}"
        );
    }
}

/// Steps once from `state` and checks that the error is `expected` and the state unchanged.
fn assert_fails<I: Integrator<Model, N>, Model, const N: usize>(
    mut integrator: I,
    model: &Model,
    state: State<N>,
    expected: StepError,
) {
    let mut stepped = state;
    let err = integrator.step(model, &mut stepped).unwrap_err();
    assert_eq!(err, expected);
    assert_eq!(stepped.t.to_bits(), state.t.to_bits());
    for (a, b) in stepped
        .q
        .iter()
        .chain(stepped.v.iter())
        .zip(state.q.iter().chain(state.v.iter()))
    {
        assert_eq!(a.to_bits(), b.to_bits());
    }
}

#[test]
fn non_finite_state_is_rejected() {
    let model = DoublePendulum::default();
    let penalized = Penalized::new(model, 20.0);
    let mut state = initial_state();
    state.t = 0.5;
    state.v[2] = f64::NAN;
    let expected = StepError::NonFinite {
        quantity: "v",
        index: 2,
        t: 0.5,
    };
    assert_fails(
        Spook::<4, 2>::new(0.01).unwrap(),
        &model,
        state,
        expected.clone(),
    );
    assert_fails(
        ZhangSkeel::<4>::new(0.01).unwrap(),
        &penalized,
        state,
        expected.clone(),
    );
    assert_fails(
        ZhangSkeelSimplified::<4>::new(0.01).unwrap(),
        &penalized,
        state,
        expected,
    );

    let mut state = initial_state();
    state.q[1] = f64::INFINITY;
    let expected = StepError::NonFinite {
        quantity: "q",
        index: 1,
        t: 0.0,
    };
    assert_fails(Spook::<4, 2>::new(0.01).unwrap(), &model, state, expected);
}

#[test]
fn singular_mass_matrix_is_rejected() {
    let model = DoublePendulum {
        m1: 0.0,
        ..DoublePendulum::default()
    };
    let mut state = initial_state();
    state.t = 3.0;
    let singular = StepError::Singular {
        matrix: "mass matrix",
        t: 3.0,
    };
    // SPOOK falls back to eliminating λ, which needs ε > 0 on every row.
    let ideal = Regularization {
        epsilon: 0.0,
        ..Regularization::default()
    };
    assert_fails(
        Spook::<4, 2>::new(0.01)
            .and_then(|s| s.with_regularizations([ideal; 2]))
            .unwrap(),
        &model,
        state,
        StepError::Singular {
            matrix: "mass matrix (and an ideal row, ε = 0 or γ = 0, so no regularized form exists)",
            t: 3.0,
        },
    );
    let mut stepped = state;
    Spook::<4, 2>::new(0.01)
        .unwrap()
        .step(&model, &mut stepped)
        .expect("SPOOK steps a massless bob held by its rods");
    assert_fails(
        ZhangSkeel::<4>::new(0.01).unwrap(),
        &Penalized::new(model, 20.0),
        state,
        singular,
    );

    // Z&Ss never inverts M alone; it fails only when M + βh² Hess V is singular.
    let massless_free = HarmonicOscillator {
        mass: 0.0,
        stiffness: 0.0,
    };
    assert_fails(
        ZhangSkeelSimplified::<1>::new(0.01).unwrap(),
        &massless_free,
        State::new(3.0, [1.0], [0.0]),
        StepError::Singular {
            matrix: "M + βh² Hess V",
            t: 3.0,
        },
    );
}

/// A unit point mass in the plane held on the line `x = 0` by the same constraint twice.
struct DoublyPinned;

impl ConstantMass<2> for DoublyPinned {}

impl Inertia<2> for DoublyPinned {
    const CONSTANT_MASS: bool = true;
    fn mass_matrix(&self, _q: &SVector<f64, 2>, m: &mut SMatrix<f64, 2, 2>) {
        *m = SMatrix::identity();
    }
}

impl Potential<2> for DoublyPinned {
    fn potential(&self, _q: &SVector<f64, 2>) -> f64 {
        0.0
    }
    fn potential_gradient(&self, _q: &SVector<f64, 2>, grad: &mut SVector<f64, 2>) {
        *grad = SVector::zeros();
    }
}

/// No nonholonomic rows.
impl Nonholonomic<2, 0> for DoublyPinned {
    const NONHOLONOMIC: [&'static str; 0] = [];
    fn nonholonomic_matrix(&self, _q: &SVector<f64, 2>, _a: &mut SMatrix<f64, 0, 2>) {}
    fn nonholonomic_drive(&self, _t: f64, _w: &mut SVector<f64, 0>) {}
}

/// No non-potential forces.
impl AppliedForces<2> for DoublyPinned {}

impl Holonomic<2, 2> for DoublyPinned {
    const CONSTRAINTS: [&'static str; 2] = ["x", "x again"];
    fn constraints(&self, q: &SVector<f64, 2>, _t: f64, g: &mut SVector<f64, 2>) {
        *g = SVector::<f64, 2>::new(q[0], q[0]);
    }
    fn constraint_jacobian(&self, _q: &SVector<f64, 2>, _t: f64, jac: &mut SMatrix<f64, 2, 2>) {
        *jac = SMatrix::<f64, 2, 2>::new(1.0, 0.0, 1.0, 0.0);
    }
}

#[test]
fn ideal_redundant_constraints_make_the_schur_complement_singular() {
    // With Σ > 0 (ε > 0, the default) redundant rows are fine (Lacoursière, Theorem 5.1);
    // with ε = 0, S = G M⁻¹ Gᵀ has rank 1 and the step reports it.
    let state = State::new(1.0, [0.1, 0.0], [0.0, 1.0]);
    let mut stepped = state;
    let mut spook = Spook::<2, 2>::new(0.01).unwrap();
    spook.step(&DoublyPinned, &mut stepped).unwrap();
    assert!(
        stepped.q[0].abs() < state.q[0].abs(),
        "the stabilization pulls x toward 0"
    );
    let ideal = Regularization {
        epsilon: 0.0,
        tau: Relaxation::Steps(2.0),
    };
    let spook = Spook::<2, 2>::new(0.01)
        .unwrap()
        .with_regularizations([ideal; 2])
        .unwrap();
    let singular = StepError::Singular {
        matrix: "Schur complement G M⁻¹ Gᵀ + Σ",
        t: 1.0,
    };
    assert_fails(spook, &DoublyPinned, state, singular);
}

#[test]
fn blow_up_is_reported_not_propagated() {
    // β = 0.2 < ¼ at h ω = 100 grows by 2.6 per step until it overflows.
    let model = HarmonicOscillator {
        mass: 1.0,
        stiffness: 1e4,
    };
    // The energy guard refuses the first step whose energy leaves ten times the run's scale,
    // long before the overflow; the state is the last accepted one.
    let mut zs = ZhangSkeel::<1>::new(1.0).unwrap().with_beta(0.2).unwrap();
    let mut state = State::new(0.0, [1.0], [0.0]);
    let err = (0..2000).find_map(|_| zs.step(&model, &mut state).err());
    assert!(
        matches!(err, Some(StepError::EnergyDiverged { .. })),
        "{err:?}"
    );
    assert!(state.is_finite() && state.t < 10.0);
    // Without the guard the growth runs on until the state overflows, which is reported too.
    let mut zs = ZhangSkeel::<1>::new(1.0)
        .unwrap()
        .with_beta(0.2)
        .unwrap()
        .with_energy_guard(EnergyGuard::disabled());
    let mut state = State::new(0.0, [1.0], [0.0]);
    let err = (0..2000).find_map(|_| zs.step(&model, &mut state).err());
    assert!(matches!(err, Some(StepError::NonFinite { .. })), "{err:?}");
    assert!(state.is_finite());
}

/// SPOOK at a step far beyond the pendulum's time scale used to return `Ok` with `|g| ≈ 1e24`;
/// the divergence guard rejects it, leaves the state unchanged, and can be turned off.
#[test]
fn spook_rejects_a_step_whose_constraint_residual_explodes() {
    let model = DoublePendulum::default();
    let mut state = initial_state();
    state.t = 2.0;
    let mut stepped = state;
    let err = Spook::<4, 2>::new(1e6)
        .unwrap()
        .step(&model, &mut stepped)
        .unwrap_err();
    println!("{err}");
    match err {
        StepError::Diverged {
            residual,
            relative,
            limit,
            t,
            ..
        } => {
            assert_eq!(limit, DivergenceGuard::DEFAULT_LIMIT);
            assert!(relative > limit && residual > 1e6, "{err}");
            assert_eq!(t, 2.0);
        }
        other => panic!("expected Diverged, got {other}"),
    }
    assert!(err.to_string().contains("divergence guard"), "{err}");
    assert_eq!(stepped, state);
    // Disabled, the same step is the old unguarded one: finite, and nonsense.
    Spook::<4, 2>::new(1e6)
        .unwrap()
        .with_divergence_guard(DivergenceGuard::disabled())
        .step(&model, &mut stepped)
        .unwrap();
    assert!(stepped.is_finite());
    // The guard never trips on an ordinary run (1000 steps of Tao–Owhadi's h = 1/60).
    let mut spook = Spook::<4, 2>::new(1.0 / 60.0).unwrap();
    let mut state = initial_state();
    for _ in 0..1000 {
        spook.step(&model, &mut state).unwrap();
    }
    // The explicit index-1 Runge–Kutta methods far beyond their stability limit, likewise.
    let mut stepped = state;
    let err = StabilizedRk::<4, 2, 4>::new(RK4, 1e3)
        .unwrap()
        .step(&model, &mut stepped)
        .unwrap_err();
    assert!(matches!(err, StepError::Diverged { .. }), "{err}");
    assert_eq!(stepped, state);
    for limit in [0.0, -1.0, f64::NAN] {
        assert!(matches!(
            DivergenceGuard::new(limit),
            Err(StepError::BadParameter {
                name: "divergence limit",
                ..
            })
        ));
    }
}

/// `ε = τ = 0` has the double eigenvalue `−1` of eq. 34: refused with the reason, both as an
/// override and as a model's default, instead of a run whose violations grow.
#[test]
fn spook_refuses_epsilon_and_tau_both_zero() {
    let ideal = Regularization {
        epsilon: 0.0,
        tau: Relaxation::Steps(0.0),
    };
    let err = Spook::<4, 2>::new(0.01)
        .unwrap()
        .with_regularization(1, ideal)
        .unwrap_err();
    println!("{err}");
    assert!(
        matches!(err, StepError::BadParameter { name: "tau / h", value, requirement }
            if value == 0.0 && requirement.contains("double eigenvalue −1")),
        "{err}"
    );
    /// The double pendulum whose rows default to `ε = τ = 0`.
    struct Ideal(DoublePendulum);
    impl ConstantMass<4> for Ideal {}

    impl Inertia<4> for Ideal {
        const CONSTANT_MASS: bool = true;
        fn mass_matrix(&self, q: &SVector<f64, 4>, m: &mut SMatrix<f64, 4, 4>) {
            self.0.mass_matrix(q, m);
        }
    }
    impl Potential<4> for Ideal {
        fn potential(&self, q: &SVector<f64, 4>) -> f64 {
            self.0.potential(q)
        }
        fn potential_gradient(&self, q: &SVector<f64, 4>, g: &mut SVector<f64, 4>) {
            self.0.potential_gradient(q, g);
        }
    }
    impl Holonomic<4, 2> for Ideal {
        const CONSTRAINTS: [&'static str; 2] = ["rod1", "rod2"];
        fn constraints(&self, q: &SVector<f64, 4>, t: f64, g: &mut SVector<f64, 2>) {
            self.0.constraints(q, t, g);
        }
        fn constraint_jacobian(&self, q: &SVector<f64, 4>, t: f64, j: &mut SMatrix<f64, 2, 4>) {
            self.0.constraint_jacobian(q, t, j);
        }
        fn regularization(&self, _row: usize) -> Regularization {
            Regularization {
                epsilon: 0.0,
                tau: Relaxation::Seconds(0.0),
            }
        }
    }
    impl Nonholonomic<4, 0> for Ideal {
        const NONHOLONOMIC: [&'static str; 0] = [];
        fn nonholonomic_matrix(&self, _: &SVector<f64, 4>, _: &mut SMatrix<f64, 0, 4>) {}
        fn nonholonomic_drive(&self, _: f64, _: &mut SVector<f64, 0>) {}
    }
    impl AppliedForces<4> for Ideal {}
    let mut state = initial_state();
    let err = Spook::<4, 2>::new(0.01)
        .unwrap()
        .step(&Ideal(DoublePendulum::default()), &mut state)
        .unwrap_err();
    assert!(
        matches!(err, StepError::BadParameter { name: "tau", value, .. } if value == 0.0),
        "{err}"
    );
    assert_eq!(state, initial_state());
    // ε = 0 with τ = 2h (eq. 34: a double eigenvalue 1/3) is stable and still accepted.
    let relaxed = Regularization {
        epsilon: 0.0,
        tau: Relaxation::Steps(2.0),
    };
    let mut spook = Spook::<4, 2>::new(0.01)
        .unwrap()
        .with_regularizations([relaxed; 2])
        .unwrap();
    for _ in 0..1000 {
        spook.step(&DoublePendulum::default(), &mut state).unwrap();
    }
}

/// A negative mass is "not positive definite", with the offending pivot, not "singular".
#[test]
fn negative_mass_is_not_positive_definite() {
    let model = DoublePendulum {
        m2: -1.0,
        ..DoublePendulum::default()
    };
    let mut state = initial_state();
    let err = Spook::<4, 2>::new(0.01)
        .unwrap()
        .step(&model, &mut state)
        .unwrap_err();
    println!("{err}");
    assert_eq!(
        err,
        StepError::NotPositiveDefinite {
            matrix: "mass matrix",
            row: 2,
            pivot: -1.0,
            t: 0.0
        }
    );
    assert_eq!(
        err.to_string(),
        "mass matrix is not positive definite (pivot -1e0 in row 2) at t = 0"
    );
    assert_eq!(state, initial_state());
}

/// A hard-constraint integrator handed a configuration 0.1 off its rods used to enforce the
/// rods in one step and turn the offset into a velocity jump (Livens: an energy of 200 from a
/// pendulum at rest); now the state is refused, unchanged, and a state on the rods still steps.
#[test]
fn hard_constraint_integrators_refuse_a_state_off_the_manifold() {
    let model = DoublePendulum::default();
    let mut off = initial_state();
    off.q[0] += 0.1;
    let is_off = |err: &StepError| matches!(err, StepError::OffManifold { row: 0, residual, t, .. } if *residual > 1e-3 && *t == 0.0);
    let mut stepped = off;
    let err = Livens::<4, 2>::new(0.01)
        .unwrap()
        .step(&model, &mut stepped)
        .unwrap_err();
    println!("{err}");
    assert!(is_off(&err), "{err}");
    assert_eq!(stepped, off);
    let err = Shake::<4, 2>::new(0.01)
        .unwrap()
        .step(&model, &mut stepped)
        .unwrap_err();
    assert!(is_off(&err), "{err}");
    assert_eq!(stepped, off);
    let err = Rattle::<4, 2>::new(0.01)
        .unwrap()
        .step(&model, &mut stepped)
        .unwrap_err();
    assert!(is_off(&err), "{err}");
    assert_eq!(stepped, off);
    let mut on = initial_state();
    Livens::<4, 2>::new(0.01)
        .unwrap()
        .step(&model, &mut on)
        .unwrap();
    Shake::<4, 2>::new(0.01)
        .unwrap()
        .step(&model, &mut on)
        .unwrap();
    Rattle::<4, 2>::new(0.01)
        .unwrap()
        .step(&model, &mut on)
        .unwrap();
}

/// `advance_to(NaN)` used to return `Ok` without moving; every non-finite or earlier end time
/// is a `BadParameter` now, with the state unchanged.
#[test]
fn advance_to_refuses_a_non_finite_or_earlier_end_time() {
    let model = DoublePendulum::default();
    let mut dopri = Dopri5::<4, 2>::new(DOPRI5, 1e-6, 1e-8).unwrap();
    for t_end in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0] {
        let mut state = initial_state();
        let err = dopri
            .advance_to(&model, &mut state, t_end, |_| {})
            .unwrap_err();
        assert!(
            matches!(err, StepError::BadParameter { name: "t_end", value, .. } if value.to_bits() == t_end.to_bits()),
            "{err}"
        );
        assert_eq!(state, initial_state());
    }
}
