//! Discrete Lagrange–d'Alembert integrators (Cuell 2005 §4–6; Lacoursière 2007 eq. 24 as
//! `γ → 0`) against closed forms, and RK4 as the non-structure-preserving baseline.

use crate::support::{report, run, steps_to};
use mechanism_runtime::reference::fit::LinearFit;
use mechanism_runtime::reference::{
    HarmonicOscillator, NonholonomicParticle, OscillatorOnCircle, PlanarOscillator,
};
use mechanism_runtime::{
    AppliedForces, ConstantMass, CortesMartinez, DiscreteLagrangeDAlembert, Inertia, Integrator,
    Nonholonomic, NonholonomicDerivative, Potential, Rk4, SMatrix, SVector, State, StepError,
};

/// Cuell's comparison (§4.1): 20 000 periods of the planar oscillator at `h = 0.25` (Cuell's
/// step), symplectic Euler as the discrete Lagrange–d'Alembert integrator without constraints
/// versus classical RK4.
#[test]
fn cuell_oscillator_variational_energy_is_bounded_while_rk4_decays() {
    let model = PlanarOscillator::default();
    let h = 0.25;
    let t_end = 20_000.0 * std::f64::consts::TAU;
    let steps = (t_end / h).round() as usize;
    let initial = PlanarOscillator::initial_state();
    let (e0, l0) = (model.energy(&initial), model.angular_momentum(&initial));

    // Symplectic Euler (Cuell eq. 31–32) exactly preserves the quadratic form
    // I = |q|² + |v|² + h q·v for m = k = 1, so E/E₀ ∈ [1/(1 + h/2), 1/(1 − h/2)].
    let invariant = |s: &State<2>| s.q.norm_squared() + s.v.norm_squared() + h * s.q.dot(&s.v);
    let i0 = invariant(&initial);
    let mut dlda = DiscreteLagrangeDAlembert::<2, 0>::new(h).unwrap();
    let (mut fit, mut e_min, mut e_max) = (LinearFit::new(), e0, e0);
    let (mut worst_invariant, mut worst_momentum) = (0.0f64, 0.0f64);
    run(&mut dlda, &model, initial, steps, |s| {
        let e = model.energy(s) / e0;
        fit.push(s.t / t_end, e);
        e_min = e_min.min(e);
        e_max = e_max.max(e);
        worst_invariant = worst_invariant.max((invariant(s) - i0).abs() / i0);
        worst_momentum = worst_momentum.max((model.angular_momentum(s) - l0).abs() / l0);
    })
    .unwrap();
    let dlda_drift = fit.slope().unwrap();

    let mut rk4 = Rk4::<2>::new(h).unwrap();
    let (mut fit, mut previous, mut monotone) = (LinearFit::new(), e0, true);
    let last = run(&mut rk4, &model, initial, steps, |s| {
        let e = model.energy(s);
        monotone &= e < previous;
        previous = e;
        fit.push(s.t / t_end, e / e0);
    })
    .unwrap();
    let rk4_drift = fit.slope().unwrap();
    // For m = k = 1 the RK4 map is |R(ih)| times a rotation, R(z) = 1 + z + z²/2 + z³/6 + z⁴/24,
    // so E_n = |R(ih)|^{2n} E₀ and L_n = |R(ih)|^{2n} L₀ exactly.
    let r2 = (1.0 - h * h / 2.0 + h.powi(4) / 24.0).powi(2) + (h - h.powi(3) / 6.0).powi(2);
    let predicted = r2.powi(steps as i32);
    let rk4_energy = model.energy(&last) / e0;
    let rk4_momentum = model.angular_momentum(&last) / l0;

    println!("{steps} steps of h = {h} (20 000 periods)");
    println!(
        "  DLDA: E/E0 in [{e_min:.4}, {e_max:.4}], fitted drift {dlda_drift:+.2e} E0 per run, \
         |ΔI|/I <= {worst_invariant:.1e}, |ΔL|/L <= {worst_momentum:.1e}"
    );
    println!(
        "  RK4:  E/E0 at end {rk4_energy:.4} (predicted {predicted:.4}), L/L0 {rk4_momentum:.4}, \
         fitted drift {rk4_drift:+.3} E0 per run"
    );

    assert!(worst_invariant < 1e-11, "{worst_invariant}");
    assert!(worst_momentum < 1e-11, "{worst_momentum}");
    assert!(e_min >= 1.0 / (1.0 + h / 2.0) - 1e-12 && e_max <= 1.0 / (1.0 - h / 2.0) + 1e-12);
    assert!(dlda_drift.abs() < 1e-3, "{dlda_drift}");
    assert!(monotone, "RK4 energy must decrease at every step");
    assert!((rk4_energy / predicted - 1.0).abs() < 1e-9);
    assert!((rk4_momentum / predicted - 1.0).abs() < 1e-9);
    assert!(rk4_drift < -0.5, "{rk4_drift}");
    assert!(rk4_drift.abs() > 500.0 * dlda_drift.abs());
}

/// The constraint `x ẋ + y ẏ = 0` written as a velocity constraint (Cuell §3.1, §5.1).
#[test]
fn circle_velocity_constraint_holds_to_round_off_and_angular_momentum_is_conserved() {
    let model = OscillatorOnCircle::default();
    let h = 0.25;
    let steps = (20_000.0 * std::f64::consts::TAU / h).round() as usize;
    let initial = PlanarOscillator::initial_state();
    let l0 = model.oscillator.angular_momentum(&initial);
    let mut dlda = DiscreteLagrangeDAlembert::<2, 1>::new(h).unwrap();
    let (mut residual, mut momentum, mut radius_law) = (0.0f64, 0.0f64, 0.0f64);
    let mut previous = initial;
    let last = run(&mut dlda, &model, initial, steps, |s| {
        residual = residual.max(s.q.dot(&s.v).abs() / (s.q.norm() * s.v.norm()));
        momentum = momentum.max((model.oscillator.angular_momentum(s) - l0).abs() / l0);
        // Cuell's constraint sits at the left endpoint: |q_{k+1}|² = |q_k|² + h²|v_k|².
        let growth = s.q.norm_squared() - previous.q.norm_squared();
        let expected = h * h * previous.v.norm_squared();
        radius_law = radius_law.max((growth - expected).abs() / expected);
        previous = *s;
    })
    .unwrap();
    // r⁴ grows like 1 + 2h²L²n (plus a logarithmic term) for the unconstrained discretization
    // of an integrable constraint.
    let r4 = last.q.norm_squared().powi(2);
    let lower = 1.0 + 2.0 * h * h * l0 * l0 * steps as f64;
    println!(
        "DLDA on the circle, {steps} steps of h = {h}: max |x ẋ + y ẏ|/(|q||v|) = {residual:.1e}, \
         max |ΔL|/L = {momentum:.1e}, final |q| = {:.3} (r⁴ = {r4:.1}, 1 + 2h²L²n = {lower:.1})",
        last.q.norm()
    );
    // The Schur solve cancels A v* against w with |v*| ≈ h|q| ≫ |v| once |q| has grown, so the
    // round-off of x ẋ + y ẏ relative to |q||v| grows with |q|² (|q| ≈ 16 at the end).
    assert!(residual < 1e-12, "{residual}");
    assert!(momentum < 1e-10, "{momentum}");
    assert!(radius_law < 1e-6, "{radius_law}");
    assert!(r4 >= lower && r4 <= 1.001 * lower, "{r4} vs {lower}");

    // Cortés–Martínez puts the constraint at the right endpoint: |q_{k+1}|² = |q_k|² − h²|v_{k+1}|².
    let h = 0.01;
    let mut cm = CortesMartinez::<2, 1>::new(h).unwrap();
    let (mut residual, mut momentum, mut radius_law) = (0.0f64, 0.0f64, 0.0f64);
    let (mut previous, mut iterations) = (initial, 0u32);
    for _ in 0..1000 {
        let mut s = previous;
        iterations = iterations.max(cm.step(&model, &mut s).unwrap().newton_iterations);
        residual = residual.max(s.q.dot(&s.v).abs() / (s.q.norm() * s.v.norm()));
        momentum = momentum.max((model.oscillator.angular_momentum(&s) - l0).abs() / l0);
        let shrink = previous.q.norm_squared() - s.q.norm_squared();
        let expected = h * h * s.v.norm_squared();
        radius_law = radius_law.max((shrink - expected).abs() / expected);
        previous = s;
    }
    println!(
        "Cortés–Martínez on the circle, 1000 steps of h = {h}: max residual {residual:.1e}, \
         max |ΔL|/L = {momentum:.1e}, final |q| = {:.4}, at most {iterations} Newton iterations",
        previous.q.norm()
    );
    assert!(
        iterations <= 3,
        "Newton must converge quadratically: {iterations}"
    );
    assert!(residual < 1e-12, "{residual}");
    assert!(momentum < 1e-12, "{momentum}");
    assert!(radius_law < 1e-6, "{radius_law}");
}

/// The particle starts at `y = −1` and crosses the curved region around `y = 0`.
fn particle_initial() -> State<3> {
    State::new(0.0, [0.0, -1.0, 0.0], [1.0, 0.5, -1.0])
}

/// Returns the max-norm distance of two states' `q` and `v`.
fn distance<const N: usize>(a: &State<N>, b: &State<N>) -> f64 {
    (a.q - b.q).amax().max((a.v - b.v).amax())
}

#[test]
fn particle_constraint_holds_at_every_step_and_energy_stays_bounded() {
    let model = NonholonomicParticle;
    let initial = particle_initial();
    let e0 = model.energy(&initial);
    let (h, t_end) = (0.01, 4.0);
    let steps = steps_to(t_end, h);
    let exact = model.exact(&initial, t_end);

    let mut dlda = DiscreteLagrangeDAlembert::<3, 1>::new(h).unwrap();
    let (mut residual, mut monotone, mut previous) = (0.0f64, true, e0);
    let (mut e_min, mut e_max) = (e0, e0);
    let last = run(&mut dlda, &model, initial, steps, |s| {
        residual = residual.max(model.constraint_residual(s).abs());
        let e = model.energy(s);
        monotone &= e <= previous * (1.0 + 4.0 * f64::EPSILON);
        previous = e;
        e_min = e_min.min(e);
        e_max = e_max.max(e);
    })
    .unwrap();
    println!(
        "DLDA particle, h = {h}: max |ż − y ẋ| = {residual:.1e}, E/E0 in [{:.6}, {:.6}], \
         error at t = {t_end}: {:.2e}",
        e_min / e0,
        e_max / e0,
        distance(&last, &exact)
    );
    assert!(residual < 1e-15, "{residual}");
    // V = 0: each step is an M-orthogonal projection, so the energy never increases; it is
    // bounded below by E₀ (1 − C h).
    assert!(monotone);
    assert!(e_min / e0 > 1.0 - h, "{}", e_min / e0);
    assert!(distance(&last, &exact) < 2.0 * h);

    let mut cm = CortesMartinez::<3, 1>::new(h).unwrap();
    let (mut residual, mut iterations) = (0.0f64, 0u32);
    let (mut e_min, mut e_max) = (e0, e0);
    let mut state = initial;
    for _ in 0..steps {
        iterations = iterations.max(cm.step(&model, &mut state).unwrap().newton_iterations);
        residual = residual.max(model.constraint_residual(&state).abs());
        e_min = e_min.min(model.energy(&state));
        e_max = e_max.max(model.energy(&state));
    }
    println!(
        "Cortés–Martínez particle, h = {h}: max |ż − y ẋ| = {residual:.1e}, E/E0 in \
         [{:.6}, {:.6}], at most {iterations} Newton iterations, error at t = {t_end}: {:.2e}",
        e_min / e0,
        e_max / e0,
        distance(&state, &exact)
    );
    assert!(residual < 1e-12, "{residual}");
    // A(q_{k+1}) = (−y_{k+1}, 0, 1) and y_{k+1} does not depend on the multiplier, so the
    // residual is linear in α and Newton converges in one iteration.
    assert_eq!(iterations, 1);
    assert!((e_max - e_min) / e0 < h, "{}", (e_max - e_min) / e0);
    assert!(distance(&state, &exact) < 2.0 * h);
}

#[test]
fn particle_energy_stays_bounded_over_a_long_run() {
    // y creeps from −1 to 1 over t = 200, so the constraint keeps turning the velocity.
    let model = NonholonomicParticle;
    let initial = State::new(0.0, [0.0, -1.0, 0.0], [1.0, 0.01, -1.0]);
    let e0 = model.energy(&initial);
    let h = 0.01;
    let steps = steps_to(200.0, h);
    let mut spread = Vec::new();
    for (name, dlda) in [("DLDA", true), ("Cortés–Martínez", false)] {
        let (mut e_min, mut e_max, mut residual) = (e0, e0, 0.0f64);
        let observe = |s: &State<3>| {
            e_min = e_min.min(model.energy(s));
            e_max = e_max.max(model.energy(s));
            residual = residual.max(model.constraint_residual(s).abs());
        };
        let last = if dlda {
            let mut integrator = DiscreteLagrangeDAlembert::<3, 1>::new(h).unwrap();
            run(&mut integrator, &model, initial, steps, observe)
        } else {
            let mut integrator = CortesMartinez::<3, 1>::new(h).unwrap();
            run(&mut integrator, &model, initial, steps, observe)
        }
        .unwrap();
        let error = distance(&last, &model.exact(&initial, 200.0));
        println!(
            "{name}: {steps} steps, E/E0 in [{:.8}, {:.8}], max |ż − y ẋ| = {residual:.1e}, \
             error at t = 200: {error:.2e}",
            e_min / e0,
            e_max / e0
        );
        assert!(residual < 1e-12);
        assert!(error < 0.05, "{error}");
        spread.push((e_max - e_min) / e0);
    }
    assert!(spread.iter().all(|&s| s < 1e-3), "{spread:?}");
}

#[test]
fn first_order_convergence_to_the_closed_forms() {
    let hs = [0.04, 0.02, 0.01, 0.005, 0.0025];
    let t_end = 4.0;
    let particle = NonholonomicParticle;
    let initial = particle_initial();
    let exact = particle.exact(&initial, t_end);
    let errors = |dlda: bool| -> Vec<f64> {
        hs.iter()
            .map(|&h| {
                let steps = steps_to(t_end, h);
                let last = if dlda {
                    let mut i = DiscreteLagrangeDAlembert::<3, 1>::new(h).unwrap();
                    run(&mut i, &particle, initial, steps, |_| {})
                } else {
                    let mut i = CortesMartinez::<3, 1>::new(h).unwrap();
                    run(&mut i, &particle, initial, steps, |_| {})
                };
                distance(&last.unwrap(), &exact)
            })
            .collect()
    };
    let dlda = report("DLDA, nonholonomic particle", &hs, &errors(true));
    let cm = report(
        "Cortés–Martínez, nonholonomic particle",
        &hs,
        &errors(false),
    );

    let oscillator = PlanarOscillator::default();
    let start = PlanarOscillator::initial_state();
    let free: Vec<f64> = hs
        .iter()
        .map(|&h| {
            let mut i = DiscreteLagrangeDAlembert::<2, 0>::new(h).unwrap();
            let last = run(&mut i, &oscillator, start, steps_to(t_end, h), |_| {}).unwrap();
            distance(&last, &oscillator.exact(&start, t_end))
        })
        .collect();
    let free = report("DLDA without constraints (symplectic Euler)", &hs, &free);

    let harmonic = HarmonicOscillator::default();
    let start1 = State::new(0.0, [1.0], [0.5]);
    let rk_hs = [0.2, 0.1, 0.05, 0.025];
    let rk: Vec<f64> = rk_hs
        .iter()
        .map(|&h| {
            let mut i = Rk4::<1>::new(h).unwrap();
            let last = run(&mut i, &harmonic, start1, steps_to(t_end, h), |_| {}).unwrap();
            distance(&last, &harmonic.exact(&start1, t_end))
        })
        .collect();
    let rk = report("RK4, harmonic oscillator", &rk_hs, &rk);

    for slope in [dlda, cm, free] {
        assert!((slope - 1.0).abs() < 0.1, "{slope}");
    }
    assert!((rk - 4.0).abs() < 0.15, "{rk}");
}

#[test]
fn driving_term_is_met_by_both_schemes() {
    /// A free unit mass in the plane with the rheonomic row ẏ − x ẋ = sin t.
    struct Driven;
    impl AppliedForces<2> for Driven {}
    impl ConstantMass<2> for Driven {}

    impl Inertia<2> for Driven {
        const CONSTANT_MASS: bool = true;
        fn mass_matrix(&self, _q: &SVector<f64, 2>, m: &mut SMatrix<f64, 2, 2>) {
            *m = SMatrix::identity();
        }
    }
    impl Potential<2> for Driven {
        fn potential(&self, q: &SVector<f64, 2>) -> f64 {
            0.5 * q.norm_squared()
        }
        fn potential_gradient(&self, q: &SVector<f64, 2>, grad: &mut SVector<f64, 2>) {
            *grad = *q;
        }
    }
    impl Nonholonomic<2, 1> for Driven {
        const NONHOLONOMIC: [&'static str; 1] = ["drive"];
        fn nonholonomic_matrix(&self, q: &SVector<f64, 2>, a: &mut SMatrix<f64, 1, 2>) {
            *a = SMatrix::<f64, 1, 2>::new(-q[0], 1.0);
        }
        fn nonholonomic_drive(&self, t: f64, w: &mut SVector<f64, 1>) {
            w[0] = t.sin();
        }
    }
    impl NonholonomicDerivative<2, 1> for Driven {
        fn nonholonomic_velocity_jacobian(
            &self,
            _q: &SVector<f64, 2>,
            v: &SVector<f64, 2>,
            out: &mut SMatrix<f64, 1, 2>,
        ) {
            *out = SMatrix::<f64, 1, 2>::new(-v[0], 0.0);
        }
    }
    let residual = |s: &State<2>| (s.v[1] - s.q[0] * s.v[0] - s.t.sin()).abs();
    let initial = State::new(0.0, [0.5, 0.0], [1.0, 0.5]);
    let (mut dlda, mut cm) = (0.0f64, 0.0f64);
    let mut a = DiscreteLagrangeDAlembert::<2, 1>::new(0.01).unwrap();
    run(&mut a, &Driven, initial, 2000, |s| {
        dlda = dlda.max(residual(s))
    })
    .unwrap();
    let mut b = CortesMartinez::<2, 1>::new(0.01).unwrap();
    run(&mut b, &Driven, initial, 2000, |s| cm = cm.max(residual(s))).unwrap();
    println!("driven row: max |A v − w| = {dlda:.1e} (DLDA), {cm:.1e} (Cortés–Martínez)");
    assert!(dlda < 1e-14 && cm < 1e-12, "{dlda} {cm}");
}

/// Steps once and checks that the error is `expected` and the state unchanged.
fn assert_fails<I: Integrator<Model, N>, Model, const N: usize>(
    integrator: &mut I,
    model: &Model,
    state: State<N>,
    expected: impl Fn(&StepError) -> bool,
) {
    let mut stepped = state;
    let err = integrator.step(model, &mut stepped).unwrap_err();
    assert!(expected(&err), "unexpected error {err:?}");
    let bits = |s: &State<N>| {
        let mut v = vec![s.t.to_bits()];
        v.extend(s.q.iter().chain(s.v.iter()).map(|x| x.to_bits()));
        v
    };
    assert_eq!(bits(&stepped), bits(&state));
}

#[test]
fn bad_input_is_a_typed_error() {
    for h in [0.0, -0.1, f64::NAN, f64::INFINITY] {
        let is_bad = |e: StepError| matches!(e, StepError::BadStepSize { h: x } if x.to_bits() == h.to_bits());
        assert!(is_bad(
            DiscreteLagrangeDAlembert::<3, 1>::new(h).unwrap_err()
        ));
        assert!(is_bad(CortesMartinez::<3, 1>::new(h).unwrap_err()));
        assert!(is_bad(Rk4::<3>::new(h).unwrap_err()));
    }
    let cm = CortesMartinez::<3, 1>::new(0.1).unwrap();
    assert!(matches!(
        cm.with_tolerance(-1.0),
        Err(StepError::BadParameter {
            name: "tolerance",
            ..
        })
    ));
    assert!(matches!(
        cm.with_max_iterations(0),
        Err(StepError::BadParameter {
            name: "max_iterations",
            ..
        })
    ));

    let model = NonholonomicParticle;
    let mut state = particle_initial();
    state.t = 2.5;
    state.v[1] = f64::NAN;
    let non_finite = |e: &StepError| {
        *e == StepError::NonFinite {
            quantity: "v",
            index: 1,
            t: 2.5,
        }
    };
    assert_fails(
        &mut DiscreteLagrangeDAlembert::<3, 1>::new(0.1).unwrap(),
        &model,
        state,
        non_finite,
    );
    assert_fails(&mut cm.clone(), &model, state, non_finite);
    assert_fails(
        &mut Rk4::<2>::new(0.1).unwrap(),
        &PlanarOscillator::default(),
        State::new(2.5, [0.0, 0.0], [0.0, f64::NAN]),
        non_finite,
    );
}

#[test]
fn newton_failure_and_singular_constraints_are_typed_errors() {
    // On the circle the residual |q_k + h v(α)|·v(α) is quadratic in α: one iteration cannot
    // reach the tolerance from α = 0.
    let circle = OscillatorOnCircle::default();
    let mut one = CortesMartinez::<2, 1>::new(0.1)
        .unwrap()
        .with_max_iterations(1)
        .unwrap();
    assert_fails(&mut one, &circle, PlanarOscillator::initial_state(), |e| {
        matches!(e, StepError::NewtonDiverged { iterations: 1, residual, t }
                     if *residual > 1e-10 && *t == 0.0)
    });

    // At h = 0.25 the right-endpoint constraint |q_{k+1}|² = |q_k|² − h²|v_{k+1}|² on the circle
    // loses its real solution once |q|² < 2hL: Newton must fail with a typed error, not NaN.
    let mut cm = CortesMartinez::<2, 1>::new(0.25).unwrap();
    let mut state = PlanarOscillator::initial_state();
    let err = (0..100)
        .find_map(|_| cm.step(&circle, &mut state).err())
        .expect("the step must fail once no solution exists");
    println!(
        "Cortés–Martínez on the circle at h = 0.25 fails at t = {}: {err}",
        state.t
    );
    assert!(matches!(
        err,
        StepError::NewtonDiverged { .. } | StepError::Singular { .. }
    ));
    assert!(state.is_finite());

    /// The particle's constraint row written twice: A M⁻¹ Aᵀ is singular.
    struct Twice;
    impl AppliedForces<3> for Twice {}
    impl ConstantMass<3> for Twice {}

    impl Inertia<3> for Twice {
        const CONSTANT_MASS: bool = true;
        fn mass_matrix(&self, q: &SVector<f64, 3>, m: &mut SMatrix<f64, 3, 3>) {
            NonholonomicParticle.mass_matrix(q, m);
        }
    }
    impl Potential<3> for Twice {
        fn potential(&self, _q: &SVector<f64, 3>) -> f64 {
            0.0
        }
        fn potential_gradient(&self, _q: &SVector<f64, 3>, grad: &mut SVector<f64, 3>) {
            grad.fill(0.0);
        }
    }
    impl Nonholonomic<3, 2> for Twice {
        const NONHOLONOMIC: [&'static str; 2] = ["a", "b"];
        fn nonholonomic_matrix(&self, q: &SVector<f64, 3>, a: &mut SMatrix<f64, 2, 3>) {
            *a = SMatrix::<f64, 2, 3>::new(-q[1], 0.0, 1.0, -q[1], 0.0, 1.0);
        }
        fn nonholonomic_drive(&self, _t: f64, w: &mut SVector<f64, 2>) {
            w.fill(0.0);
        }
    }
    impl NonholonomicDerivative<3, 2> for Twice {
        fn nonholonomic_velocity_jacobian(
            &self,
            _q: &SVector<f64, 3>,
            v: &SVector<f64, 3>,
            out: &mut SMatrix<f64, 2, 3>,
        ) {
            *out = SMatrix::<f64, 2, 3>::new(0.0, -v[0], 0.0, 0.0, -v[0], 0.0);
        }
    }
    let initial = particle_initial();
    let singular = |e: &StepError| matches!(e, StepError::Singular { t, .. } if *t == 0.0);
    assert_fails(
        &mut DiscreteLagrangeDAlembert::<3, 2>::new(0.1).unwrap(),
        &Twice,
        initial,
        singular,
    );
    assert_fails(
        &mut CortesMartinez::<3, 2>::new(0.1).unwrap(),
        &Twice,
        initial,
        singular,
    );
}
