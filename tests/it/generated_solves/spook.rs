//! SPOOK's generated Schur complement and whole step against the generic step: agreement to a
//! few ulps, bit for bit around the generated solve, coefficients that follow the model
//! stepped, and the same failures with the state unchanged.

use mechanism::mechanism;
use mechanism::models::{Chain10, DoublePendulum};
use mechanism::runtime::{
    AppliedForces, ConstantMass, DivergenceGuard, GeneratedSolve, Holonomic, Inertia, Integrator,
    Nonholonomic, Potential, Regularization, Relaxation, SMatrix, SVector, Spook,
    SpookCoefficients, State,
};

use super::{state_difference, Generic};

/// Steps `model` with SPOOK along `steps` steps and, from each state, the generic kernels once;
/// returns the largest difference of the two steps' states relative to the state's size.
fn spook_one_step_differences<const N: usize, const M: usize, Model>(
    model: &Model,
    start: State<N>,
    h: f64,
    steps: usize,
) -> f64
where
    Model: ConstantMass<N> + Potential<N> + Holonomic<N, M> + Nonholonomic<N, 0> + AppliedForces<N>,
{
    let view = Generic(model);
    let (mut generated, mut generic) = (
        Spook::<N, M, 0>::new(h).unwrap(),
        Spook::<N, M, 0>::new(h).unwrap(),
    );
    let (mut state, mut worst) = (start, 0.0f64);
    for _ in 0..steps {
        let mut other = state;
        Integrator::<Model, N>::step(&mut generated, model, &mut state).expect("generated step");
        Integrator::<Generic<Model>, N>::step(&mut generic, &view, &mut other)
            .expect("generic step");
        let (difference, scale) = state_difference(&other, &state);
        worst = worst.max(difference / scale);
    }
    worst
}

#[test]
fn spooks_generated_schur_complement_agrees_with_the_generic_one() {
    // One step from the same state: the same equations with sums in another order, so the
    // steps differ by rounding, `≲ n κ(S) ε` relative with `S ≈ G M⁻¹ Gᵀ` (Σ is tiny at
    // ε = 1e-8): κ ≈ 10 and n = 4 for the double pendulum (≈ 4e-15), κ ≲ 4·10² (the chain's
    // tridiagonal G Gᵀ, `O(links²)`) and n = 20 for the chain (≈ 1e-12). A wrong entry of S or
    // a wrong sign would differ at O(1).
    let (dp, h) = (DoublePendulum::default(), 1.0 / 60.0);
    let (mut v, mut lambda) = (SVector::zeros(), SVector::zeros());
    let start = DoublePendulum::initial_state();
    let (mut g, mut jac, mut mass) = (SVector::zeros(), SMatrix::zeros(), SMatrix::zeros());
    dp.constraints_and_jacobian(&SVector::from(start.q), 0.0, &mut g, &mut jac);
    dp.mass_matrix(&SVector::from(start.q), &mut mass);
    let sigma = SVector::from([1e-3; 2]);
    assert_eq!(
        dp.spook_solve(
            &mass,
            &jac,
            &SVector::from([0.1, 0.2, 0.3, 0.4]),
            &sigma,
            &sigma,
            &mut v,
            &mut lambda
        ),
        GeneratedSolve::Solved
    );
    let worst = spook_one_step_differences::<4, 2, _>(&dp, start, h, 2000);
    println!("SPOOK, double pendulum: largest one-step difference {worst:.1e}");
    assert!(worst < 1e-14, "{worst:e}");
    let chain = Chain10::default();
    let mut q = [0.0; 20];
    for k in 0..10 {
        q[2 * k] = 5f64.sqrt() * (k + 1) as f64;
    }
    let worst =
        spook_one_step_differences::<20, 10, _>(&chain, State::new(0.0, q, [0.0; 20]), 0.05, 1000);
    println!("SPOOK, chain of 10: largest one-step difference {worst:.1e}");
    assert!(worst < 1e-12, "{worst:e}");
}

mechanism! {
    /// The double pendulum with friction, a periodic push on the lower bob and a softer, slower
    /// upper rod: SPOOK's generated step with every term of `r = M v − h ∇V + h f` (dissipation
    /// and a time-dependent force) and a row-specific regularization.
    pub struct PushedPendulum {
        coordinates: [x1, y1, x2, y2],
        parameters: { c = 0.05, f0 = 0.3, w = 2.0 },
        kinetic: 0.5 * (dot(x1).powi(2) + dot(y1).powi(2))
            + (dot(x2).powi(2) + dot(y2).powi(2)),
        potential: y1 + 2.0 * y2,
        holonomic: {
            #[spook(epsilon = 1e-6, tau = 0.05)]
            rod1: x1.powi(2) + y1.powi(2) - 1.0,
            rod2: (x2 - x1).powi(2) + (y2 - y1).powi(2) - 2.0,
        },
        dissipation: 0.5 * c * (dot(x1).powi(2) + dot(y1).powi(2) + dot(x2).powi(2)
            + dot(y2).powi(2)),
        forces: { x2: f0 * (w * t).cos() },
        integrators: [spook],
    }
}

/// Steps `model` with SPOOK at step size `h` (with the regularization `overrides` of some rows)
/// through its generated step (`Holonomic::spook_step`, which must solve at every state) and
/// through the generic step around the generated Schur solve (the view `Generic<_, true>`), from
/// the same state at every step, for `steps` steps; asserts the same new state and multipliers,
/// and the generated step's own output committed unchanged.
///
/// Both do the same operations in the same order, so they agree bit for bit (`==`) where
/// `fma::mul_add` is a plain `a * b + c`. Where the target fuses it, the one emission of `∇V`,
/// `g` and `G` that the generated step shares may fuse other products than the separate
/// emissions the generic step calls (a shared product is not fused), so there they agree to
/// `tolerance` relative to the state's size.
fn spook_lockstep<const N: usize, const M: usize, Model>(
    model: &Model,
    (h, overrides): (f64, [Option<Regularization>; M]),
    start: State<N>,
    steps: usize,
    tolerance: f64,
) where
    Model: ConstantMass<N> + Potential<N> + Holonomic<N, M> + Nonholonomic<N, 0> + AppliedForces<N>,
{
    let tolerance = if cfg!(target_feature = "fma") {
        tolerance
    } else {
        0.0
    };
    let view = Generic::<Model, true>(model);
    let mut spook = Spook::<N, M>::new(h).unwrap();
    let mut regularizations = [Regularization::default(); M];
    for (row, overridden) in overrides.into_iter().enumerate() {
        if let Some(regularization) = overridden {
            spook = spook.with_regularization(row, regularization).unwrap();
        }
        regularizations[row] = overridden.unwrap_or_else(|| model.regularization(row));
    }
    let coefficients = SpookCoefficients::new(h, &regularizations);
    let (mut generated, mut generic) = (spook, spook);
    let mut state = start;
    for k in 0..steps {
        let (mut q, mut v, mut lambda) = (state.q, state.v, SVector::zeros());
        let guard = DivergenceGuard::default();
        assert_eq!(
            model.spook_step(
                &mut q,
                &mut v,
                state.t,
                h,
                &coefficients,
                &guard,
                &mut lambda
            ),
            GeneratedSolve::Solved,
            "step {k}"
        );
        let mut other = state;
        let (x, y) = (
            Integrator::<Model, N>::step(&mut generated, model, &mut state),
            Integrator::<Generic<Model, true>, N>::step(&mut generic, &view, &mut other),
        );
        assert_eq!(x, y, "step {k}");
        assert!(
            state.q == q && state.v == v && *generated.multipliers() == lambda,
            "step {k}: the generated step's output is not what was committed"
        );
        let scale = state
            .q
            .iter()
            .chain(&state.v)
            .chain(generated.multipliers())
            .fold(1.0f64, |m, x| m.max(x.abs()));
        let difference = state
            .q
            .iter()
            .zip(&other.q)
            .chain(state.v.iter().zip(&other.v))
            .chain(generated.multipliers().iter().zip(generic.multipliers()))
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
        assert!(
            difference <= tolerance * scale && state.t == other.t,
            "step {k}: {state:?} {:?} vs {other:?} {:?}",
            generated.multipliers(),
            generic.multipliers()
        );
        state = other;
    }
}

#[test]
fn spooks_generated_step_is_the_generic_step() {
    let h = 1.0 / 60.0;
    let start = DoublePendulum::initial_state();
    spook_lockstep(
        &DoublePendulum::default(),
        (h, [None; 2]),
        start,
        2000,
        1e-14,
    );
    let mut q = [0.0; 20];
    for k in 0..10 {
        q[2 * k] = 5f64.sqrt() * (k + 1) as f64;
    }
    let start = State::new(0.0, q, [0.0; 20]);
    spook_lockstep(&Chain10::default(), (0.05, [None; 10]), start, 1000, 1e-12);
    // Dissipation, a force of time, a row's own regularization, and an override.
    let pushed = PushedPendulum::default();
    let start = State::new(0.0, [0.0, -1.0, 1.0, -2.0], [0.5, 0.0, 0.0, 0.3]);
    spook_lockstep(&pushed, (h, [None; 2]), start, 1000, 1e-14);
    let soft = Regularization {
        epsilon: 1e-4,
        tau: Relaxation::Seconds(0.1),
    };
    spook_lockstep(&pushed, (h, [None, Some(soft)]), start, 1000, 1e-14);
}

#[test]
fn spooks_coefficients_follow_the_model_stepped() {
    // One stepper for two models whose rows are regularized differently: its Σ and Υ, kept
    // between steps, are recomputed for each model's rows, so the two trajectories are those
    // of a stepper per model.
    let (pendulum, pushed) = (DoublePendulum::default(), PushedPendulum::default());
    let h = 1.0 / 60.0;
    let mut shared = Spook::<4, 2>::new(h).unwrap();
    let (mut own_pendulum, mut own_pushed) = (shared, shared);
    let start = DoublePendulum::initial_state();
    let (mut a, mut b, mut c, mut d) = (start, start, start, start);
    for _ in 0..200 {
        shared.step(&pendulum, &mut a).unwrap();
        own_pendulum.step(&pendulum, &mut c).unwrap();
        shared.step(&pushed, &mut b).unwrap();
        own_pushed.step(&pushed, &mut d).unwrap();
        assert!(a == c && b == d, "{a:?} {c:?}, {b:?} {d:?}");
    }
}

#[test]
fn spooks_generated_step_fails_as_the_generic_step() {
    // Each case through the stepper with the generated step and through the generic step around
    // the generated Schur solve (the code that stepped these models before the generated step):
    // the same result, and on failure the same error with the state unchanged.
    let h = 1.0 / 60.0;
    let moving = DoublePendulum::initial_state();
    let mut at_two = moving;
    at_two.t = 2.0;
    let mut not_finite = moving;
    not_finite.v[2] = f64::NAN;
    let mut on_the_pivot = moving;
    // The upper rod's Jacobian vanishes at the pivot: with ε = 0 its Schur pivot is zero.
    on_the_pivot.q = SVector::from([0.0, 0.0, 1.0, -2.0]);
    let ideal = Regularization {
        epsilon: 0.0,
        tau: Relaxation::Steps(2.0),
    };
    let cases = [
        (
            "non-finite parameter",
            DoublePendulum {
                l1: f64::NAN,
                ..DoublePendulum::default()
            },
            h,
            moving,
            None,
        ),
        (
            "non-finite state",
            DoublePendulum::default(),
            h,
            not_finite,
            None,
        ),
        (
            "diverging step",
            DoublePendulum::default(),
            1e6,
            at_two,
            None,
        ),
        (
            "negative mass",
            DoublePendulum {
                m1: -1.0,
                ..DoublePendulum::default()
            },
            h,
            moving,
            None,
        ),
        (
            "massless bob",
            DoublePendulum {
                m1: 0.0,
                ..DoublePendulum::default()
            },
            h,
            moving,
            None,
        ),
        (
            "ideal row at its singular point",
            DoublePendulum::default(),
            h,
            on_the_pivot,
            Some(ideal),
        ),
    ];
    for (name, model, h, start, regularization) in cases {
        let mut spook = Spook::<4, 2>::new(h).unwrap();
        if let Some(regularization) = regularization {
            spook = spook.with_regularization(0, regularization).unwrap();
        }
        let (mut generated, mut generic) = (spook, spook);
        let view = Generic::<DoublePendulum, true>(&model);
        let (mut a, mut b) = (start, start);
        let x = Integrator::<DoublePendulum, 4>::step(&mut generated, &model, &mut a);
        let y = Integrator::<Generic<DoublePendulum, true>, 4>::step(&mut generic, &view, &mut b);
        println!("{name}: {x:?}");
        assert_eq!(format!("{x:?}"), format!("{y:?}"), "{name}");
        // Debug strings, so that a NaN left in a state compares equal to itself.
        assert_eq!(format!("{a:?}"), format!("{b:?}"), "{name}");
        assert_eq!(generated.multipliers(), generic.multipliers(), "{name}");
        if x.is_err() {
            assert_eq!(
                format!("{a:?}"),
                format!("{start:?}"),
                "{name}: state changed"
            );
        }
    }
}
