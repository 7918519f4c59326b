//! Typed errors: bad step sizes, tolerances and parameters, non-finite states, singular systems, unattainable tolerances.

use mechanism_runtime::integrators::stabilized::{
    constrained_acceleration, AdaptiveRk, Baumgarte, Dopri5, PostStabilization, StabilizedRk,
    DOPRI5, HEUN, RK4,
};
use mechanism_runtime::reference::double_pendulum::{initial_state, DoublePendulum};
use mechanism_runtime::{
    AppliedForces, ConstantMass, Holonomic, HolonomicKinematics, Inertia, InertiaGradient,
    Integrator, Potential, SMatrix, SVector, State, StepError,
};

/// A point mass in the plane held by `x = 0` twice over (`x = 0` and `2x = 0`): `G` has rank 1,
/// so `G M⁻¹ Gᵀ` is singular. `mass` scales the mass matrix (0 makes it singular).
struct Redundant {
    mass: f64,
}

impl ConstantMass<2> for Redundant {}

impl Inertia<2> for Redundant {
    const CONSTANT_MASS: bool = true;
    fn mass_matrix(&self, _q: &SVector<f64, 2>, m: &mut SMatrix<f64, 2, 2>) {
        *m = SMatrix::<f64, 2, 2>::new(self.mass, 0.0, 0.0, 1.0);
    }
}

impl InertiaGradient<2> for Redundant {
    fn kinetic_gradient(
        &self,
        _q: &SVector<f64, 2>,
        _v: &SVector<f64, 2>,
        out: &mut SVector<f64, 2>,
    ) {
        out.fill(0.0);
    }
    fn kinetic_hessians(
        &self,
        _q: &SVector<f64, 2>,
        _v: &SVector<f64, 2>,
        qq: &mut SMatrix<f64, 2, 2>,
        qv: &mut SMatrix<f64, 2, 2>,
    ) {
        qq.fill(0.0);
        qv.fill(0.0);
    }
}

impl Potential<2> for Redundant {
    fn potential(&self, q: &SVector<f64, 2>) -> f64 {
        q[1]
    }
    fn potential_gradient(&self, _q: &SVector<f64, 2>, grad: &mut SVector<f64, 2>) {
        *grad = SVector::<f64, 2>::new(0.0, 1.0);
    }
}

impl AppliedForces<2> for Redundant {}

impl Holonomic<2, 2> for Redundant {
    const CONSTRAINTS: [&'static str; 2] = ["x", "2x"];
    fn constraints(&self, q: &SVector<f64, 2>, _t: f64, g: &mut SVector<f64, 2>) {
        *g = SVector::<f64, 2>::new(q[0], 2.0 * q[0]);
    }
    fn constraint_jacobian(&self, _q: &SVector<f64, 2>, _t: f64, jac: &mut SMatrix<f64, 2, 2>) {
        *jac = SMatrix::<f64, 2, 2>::new(1.0, 0.0, 2.0, 0.0);
    }
}

impl HolonomicKinematics<2, 2> for Redundant {
    fn constraint_time_derivative(&self, _q: &SVector<f64, 2>, _t: f64, out: &mut SVector<f64, 2>) {
        out.fill(0.0);
    }
    fn constraint_acceleration_bias(
        &self,
        _q: &SVector<f64, 2>,
        _v: &SVector<f64, 2>,
        _t: f64,
        out: &mut SVector<f64, 2>,
    ) {
        out.fill(0.0);
    }
}

/// Steps once and checks that the error is `expected` and the state bitwise unchanged.
fn assert_fails<I: Integrator<Model, N>, Model, const N: usize>(
    integrator: &mut I,
    model: &Model,
    state: State<N>,
    expected: StepError,
) {
    let mut stepped = state;
    let err = integrator.step(model, &mut stepped).unwrap_err();
    assert_eq!(err, expected);
    let bits = |s: &State<N>| -> Vec<u64> {
        std::iter::once(s.t)
            .chain(s.q.iter().copied())
            .chain(s.v.iter().copied())
            .map(f64::to_bits)
            .collect()
    };
    assert_eq!(bits(&stepped), bits(&state));
}

#[test]
fn bad_step_sizes_tolerances_and_parameters_are_rejected() {
    for h in [0.0, -0.1, f64::NAN, f64::INFINITY] {
        let err = StabilizedRk::<4, 2, 4>::new(RK4, h).unwrap_err();
        assert!(
            matches!(err, StepError::BadStepSize { h: x } if x.to_bits() == h.to_bits()),
            "{err}"
        );
        let err = Dopri5::<4, 2>::new(DOPRI5, 1e-6, 1e-7)
            .unwrap()
            .with_initial_step(h)
            .unwrap_err();
        assert!(matches!(err, StepError::BadStepSize { .. }), "{err}");
    }
    for (rtol, atol, name) in [
        (-1e-6, 1e-7, "rtol"),
        (f64::NAN, 1e-7, "rtol"),
        (f64::INFINITY, 1e-7, "rtol"),
        (1e-6, 0.0, "atol"),
        (1e-6, -1e-7, "atol"),
        (1e-6, f64::NAN, "atol"),
    ] {
        let err = Dopri5::<4, 2>::new(DOPRI5, rtol, atol).unwrap_err();
        assert!(
            matches!(err, StepError::BadParameter { name: n, .. } if n == name),
            "{err}"
        );
    }
    for (alpha1, alpha0, name) in [(-1.0, 0.0, "alpha1"), (1.0, f64::NAN, "alpha0")] {
        let err = Baumgarte::new(alpha1, alpha0).unwrap_err();
        assert!(
            matches!(err, StepError::BadParameter { name: n, .. } if n == name),
            "{err}"
        );
    }
    let err = Dopri5::<4, 2>::new(DOPRI5, 1e-6, 1e-7)
        .unwrap()
        .with_controller(0.9, 2.0, 10.0)
        .unwrap_err();
    assert!(
        matches!(
            err,
            StepError::BadParameter {
                name: "min_factor",
                ..
            }
        ),
        "{err}"
    );
    let mut explicit_violated = RK4;
    explicit_violated.a[1][1] = 0.5;
    let err = StabilizedRk::<4, 2, 4>::new(explicit_violated, 0.1).unwrap_err();
    assert!(
        matches!(err, StepError::BadParameter { name: "a_ij", .. }),
        "{err}"
    );
    // An end time that is not after the state's time.
    let model = DoublePendulum::default();
    let mut dopri = Dopri5::<4, 2>::new(DOPRI5, 1e-6, 1e-7).unwrap();
    let mut state = initial_state();
    state.t = 2.0;
    for t_end in [2.0, 1.0, f64::NAN] {
        let err = dopri.step_toward(&model, &mut state, t_end).unwrap_err();
        assert!(
            matches!(err, StepError::BadParameter { name: "t_end", .. }),
            "{err}"
        );
    }
    assert_eq!(
        dopri
            .advance_to(&model, &mut state, 2.0, |_| {})
            .unwrap()
            .steps(),
        0
    );
}

#[test]
fn non_finite_states_are_rejected_and_left_unchanged() {
    let model = DoublePendulum::default();
    let mut state = initial_state();
    state.q[2] = f64::NAN;
    let expected = StepError::NonFinite {
        quantity: "q",
        index: 2,
        t: 0.0,
    };
    let mut rk = StabilizedRk::<4, 2, 4>::new(RK4, 0.01)
        .unwrap()
        .with_post_stabilization(PostStabilization::BothTwice);
    assert_fails(&mut rk, &model, state, expected.clone());
    let mut dopri = Dopri5::<4, 2>::new(DOPRI5, 1e-6, 1e-7).unwrap();
    assert_fails(&mut dopri, &model, state, expected);
    let mut state = initial_state();
    state.v[1] = f64::INFINITY;
    assert_fails(
        &mut rk,
        &model,
        state,
        StepError::NonFinite {
            quantity: "v",
            index: 1,
            t: 0.0,
        },
    );
    let err = constrained_acceleration::<_, 4, 2>(&model, &state, Baumgarte::NONE).unwrap_err();
    assert!(matches!(
        err,
        StepError::NonFinite {
            quantity: "v",
            index: 1,
            ..
        }
    ));
}

#[test]
fn singular_systems_are_typed_errors() {
    let state = State::new(0.5, [0.0, 1.0], [0.0, 0.3]);
    let mut rk = StabilizedRk::<2, 2, 2>::new(HEUN, 0.01).unwrap();
    assert_fails(
        &mut rk,
        &Redundant { mass: 1.0 },
        state,
        StepError::Singular {
            matrix: "G M⁻¹ Gᵀ (index-1 system)",
            t: 0.5,
        },
    );
    assert_fails(
        &mut rk,
        &Redundant { mass: 0.0 },
        state,
        StepError::Singular {
            matrix: "mass matrix",
            t: 0.5,
        },
    );
    let mut dopri = AdaptiveRk::<2, 2, 7>::new(DOPRI5, 1e-6, 1e-7).unwrap();
    assert_fails(
        &mut dopri,
        &Redundant { mass: 1.0 },
        state,
        StepError::Singular {
            matrix: "G M⁻¹ Gᵀ (index-1 system)",
            t: 0.5,
        },
    );
}

#[test]
fn unattainable_tolerance_is_a_step_size_underflow() {
    // atol = 1e-300 cannot be met by any step that t = 1 can resolve.
    let model = DoublePendulum::default();
    let mut dopri = Dopri5::<4, 2>::new(DOPRI5, 0.0, 1e-300).unwrap();
    let mut state = initial_state();
    state.t = 1.0;
    let before = state;
    let err = dopri.step_toward(&model, &mut state, 2.0).unwrap_err();
    assert!(
        matches!(err, StepError::StepSizeTooSmall { t, h } if t == 1.0 && h < 1e-14),
        "{err}"
    );
    assert_eq!(state, before);
    assert_eq!(dopri.statistics().accepted, 0);
    // The same from a given first step: the controller shrinks it by rejections until it
    // underflows.
    let mut dopri = Dopri5::<4, 2>::new(DOPRI5, 0.0, 1e-300)
        .unwrap()
        .with_initial_step(0.1)
        .unwrap();
    let err = dopri.step_toward(&model, &mut state, 2.0).unwrap_err();
    assert!(
        matches!(err, StepError::StepSizeTooSmall { t, h } if t == 1.0 && h < 1e-14),
        "{err}"
    );
    assert_eq!(state, before);
    assert!(dopri.statistics().rejected > 10, "{:?}", dopri.statistics());
}
