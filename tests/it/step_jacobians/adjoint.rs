//! Adjoint gradients (`simulation::adjoint_gradient`) of a loss summed over a run of the
//! Cartesian pendulum, SPOOK and RATTLE: against the same gradient by forward sensitivities
//! with one seed per initial coordinate, velocity and parameter (an independent computation:
//! `J` applied forwards instead of `Jᵀ` backwards, itself checked against central differences
//! of whole runs in `sensitivity.rs`), to `1e-10` relative; and the same bits for every
//! segment length of the recomputation.

use mechanism::models::Pendulum;
use mechanism::runtime::simulation::{
    adjoint_gradient, AdjointGradient, AdjointSettings, ForwardSensitivity, LossTerm,
};
use mechanism::runtime::{DifferentiableInParameters, Rattle, SMatrix, SVector, Spook, State};
use proptest::prelude::*;

/// `ℓ_k = h (w·q_k + ½ |v_k − u|²)`: weights on the positions, a target velocity.
fn loss(h: f64, w: [f64; 2], u: [f64; 2]) -> impl Fn(usize, &State<2>) -> LossTerm<2> {
    move |_, state| {
        let (w, u) = (SVector::<f64, 2>::from(w), SVector::<f64, 2>::from(u));
        let dv = state.v - u;
        LossTerm {
            value: h * (w.dot(&state.q) + 0.5 * dv.norm_squared()),
            q: w * h,
            v: dv * h,
        }
    }
}

/// The same gradient by forward sensitivities: seeds `e_i` for `q_0`, `v_0` and the
/// parameters `(g, l)`, and `Σ_k S_kᵀ ∂ℓ_k/∂x_k`.
fn forward<I: DifferentiableInParameters<Pendulum, 2, 2> + Clone>(
    integrator: &I,
    model: &Pendulum,
    initial: State<2>,
    steps: usize,
    loss: &impl Fn(usize, &State<2>) -> LossTerm<2>,
) -> (f64, SVector<f64, 6>) {
    let seeds = SMatrix::<f64, 6, 6>::identity();
    let mut sensitivity = ForwardSensitivity::<2, 2, 6>::new(
        seeds.fixed_rows::<2>(0).into(),
        seeds.fixed_rows::<2>(2).into(),
        seeds.fixed_rows::<2>(4).into(),
    );
    let (mut integrator, mut state) = (integrator.clone(), initial);
    let (mut total, mut gradient) = (0.0, SVector::<f64, 6>::zeros());
    for k in 0..=steps {
        if k > 0 {
            sensitivity
                .step(&mut integrator, model, &mut state)
                .unwrap();
        }
        let term = loss(k, &state);
        total += term.value;
        gradient += sensitivity.q.tr_mul(&term.q) + sensitivity.v.tr_mul(&term.v);
    }
    (total, gradient)
}

fn check<I: DifferentiableInParameters<Pendulum, 2, 2> + Clone>(
    label: &str,
    integrator: &I,
    model: &Pendulum,
    initial: State<2>,
    loss: impl Fn(usize, &State<2>) -> LossTerm<2>,
) {
    let steps = 400;
    let (total, expected) = forward(integrator, model, initial, steps, &loss);
    let run = |segment| {
        adjoint_gradient::<_, _, 2, 2>(
            integrator,
            model,
            initial,
            steps,
            AdjointSettings { segment },
            &loss,
        )
        .unwrap()
    };
    let adjoint: AdjointGradient<2, 2> = run(None);
    let got = [
        adjoint.q0[0],
        adjoint.q0[1],
        adjoint.v0[0],
        adjoint.v0[1],
        adjoint.p[0],
        adjoint.p[1],
    ];
    let scale = expected.amax();
    assert!(scale > 1e-3, "{label}: a gradient of size {scale}");
    assert!(
        (adjoint.loss - total).abs() <= 1e-12 * total.abs().max(1.0),
        "{label}: loss"
    );
    for (i, (a, f)) in got.iter().zip(expected.iter()).enumerate() {
        assert!(
            (a - f).abs() <= 1e-10 * scale,
            "{label}: entry {i}: adjoint {a:e}, forward {f:e}"
        );
    }
    for segment in [Some(1), Some(7), Some(steps), Some(10 * steps)] {
        assert_eq!(run(segment), adjoint, "{label}: segment {segment:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    #[test]
    fn adjoint_gradients_equal_forward_sensitivities(
        g in 0.5..2.0f64,
        l in 0.5..2.0f64,
        theta0 in -2.5..2.5f64,
        rate in -1.0..1.0f64,
        w in prop::array::uniform2(-1.0..1.0f64),
        u in prop::array::uniform2(-1.0..1.0f64),
    ) {
        let h = 0.01;
        let model = Pendulum { g, l };
        let mut initial = model.released(theta0);
        // A start that moves: tangent to the rod.
        initial.v = SVector::from([-initial.q[1], initial.q[0]]) * rate;
        check("SPOOK", &Spook::<2, 1>::new(h).unwrap(), &model, initial, loss(h, w, u));
        check("RATTLE", &Rattle::<2, 1>::new(h).unwrap(), &model, initial, loss(h, w, u));
    }
}

/// A segment of length 0 is refused.
#[test]
fn a_segment_of_no_steps_is_refused() {
    let model = Pendulum::default();
    let spook = Spook::<2, 1>::new(0.01).unwrap();
    let settings = AdjointSettings { segment: Some(0) };
    let result = adjoint_gradient::<_, _, 2, 2>(
        &spook,
        &model,
        model.released(1.0),
        10,
        settings,
        |_, _| LossTerm::zero(),
    );
    assert!(result.is_err());
}
