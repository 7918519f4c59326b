//! Forward sensitivities along a run (`ForwardSensitivity`, the chain rule through a step's
//! state and parameter Jacobians) of SPOOK, RATTLE and DOPRI5 on the Cartesian pendulum
//! (`models::Pendulum`): against central differences of the whole discrete run in `g`, `l` and
//! `θ₀`, and against the closed form in Jacobi elliptic functions
//! (`reference::ReleasedPendulum`), to which the discrete sensitivities converge at the
//! method's order (SPOOK 1, RATTLE 2); DOPRI5 at `rtol = 10⁻¹²` with S-both² (its variational
//! equations, the step sizes frozen) agrees with it to `10⁻⁸` relative.

use mechanism::models::Pendulum;
use mechanism::runtime::integrators::stabilized::{Dopri5, PostStabilization, DOPRI5};
use mechanism::runtime::reference::ReleasedPendulum;
use mechanism::runtime::{DifferentiableInParameters, Rattle, Spook};
use proptest::prelude::*;

use super::compare;

/// The integrators whose runs are differentiated.
#[derive(Clone, Copy, Debug)]
enum Method {
    Spook,
    Rattle,
}

/// Runs `method` with step `h` for `steps` steps from the release at `theta0`; returns the end
/// state `(q, v)` and its sensitivities in `(g, l, θ₀)` (`4 × 3`, column by seed).
fn run(
    method: Method,
    model: &Pendulum,
    theta0: f64,
    h: f64,
    steps: usize,
) -> (Vec<f64>, [[f64; 4]; 3]) {
    match method {
        Method::Spook => run_with(Spook::<2, 1>::new(h).unwrap(), model, theta0, steps),
        Method::Rattle => run_with(Rattle::<2, 1>::new(h).unwrap(), model, theta0, steps),
    }
}

fn run_with<I: DifferentiableInParameters<Pendulum, 2, 2>>(
    mut integrator: I,
    model: &Pendulum,
    theta0: f64,
    steps: usize,
) -> (Vec<f64>, [[f64; 4]; 3]) {
    let mut state = model.released(theta0);
    let mut sensitivity = model.release_seeds(theta0);
    for _ in 0..steps {
        sensitivity
            .step(&mut integrator, model, &mut state)
            .unwrap();
    }
    let columns = [0, 1, 2].map(|s| {
        [
            sensitivity.q[(0, s)],
            sensitivity.q[(1, s)],
            sensitivity.v[(0, s)],
            sensitivity.v[(1, s)],
        ]
    });
    (
        state.q.iter().chain(state.v.iter()).copied().collect(),
        columns,
    )
}

/// The end state of the plain run (no Jacobians) of `method` from the release of a pendulum
/// with `(g, l, θ₀) = x`.
fn plain_run(method: Method, x: &[f64], h: f64, steps: usize) -> Vec<f64> {
    use mechanism::runtime::Integrator;
    let model = Pendulum { g: x[0], l: x[1] };
    let mut state = model.released(x[2]);
    for _ in 0..steps {
        match method {
            Method::Spook => Spook::<2, 1>::new(h).unwrap().step(&model, &mut state),
            Method::Rattle => Rattle::<2, 1>::new(h).unwrap().step(&model, &mut state),
        }
        .unwrap();
    }
    state.q.iter().chain(state.v.iter()).copied().collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    /// The sensitivities are the exact derivatives of the discrete run: central differences of
    /// 300 plain steps in `(g, l, θ₀)` agree within the bound of `super` (Richardson plus
    /// rounding; the run's rounding estimated as 300 steps' of a solve with `κ ≈ 10`, grown by
    /// at most `10²` over the run; RATTLE's Newton tolerance, `10⁻¹³` relative, is below it).
    #[test]
    fn the_sensitivities_are_the_derivatives_of_the_discrete_run(
        g in 0.5..2.0f64,
        l in 0.5..2.0f64,
        theta0 in -2.5..2.5f64,
        rattle in any::<bool>(),
    ) {
        let (h, steps) = (0.01, 300);
        let method = if rattle { Method::Rattle } else { Method::Spook };
        let model = Pendulum { g, l };
        let (end, columns) = run(method, &model, theta0, h, steps);
        let map = |x: &[f64]| plain_run(method, x, h, steps);
        prop_assert_eq!(&end, &map(&[g, l, theta0]), "the run with Jacobians is the plain run");
        let (largest, _) = compare(
            "pendulum run",
            (&map, "(g, l, θ₀)"),
            &[g, l, theta0],
            |row, column| columns[column][row],
            (1e-5, 10.0 * 300.0 * 1e2),
        );
        prop_assert!(largest > 0.1);
    }
}

/// SPOOK's sensitivities at `T = 10` (`g = l = θ₀ = 1`) converge to the closed form's at
/// order 1, as its positions do.
#[test]
fn spooks_sensitivities_converge_to_the_closed_form_at_first_order() {
    converges_to_the_closed_form(Method::Spook, [2000, 4000, 8000, 16000], 1.0);
}

/// RATTLE's sensitivities converge at order 2, as its positions do.
#[test]
fn rattles_sensitivities_converge_to_the_closed_form_at_second_order() {
    converges_to_the_closed_form(Method::Rattle, [250, 500, 1000, 2000], 2.0);
}

/// Checks that the errors of `method`'s position and sensitivities at `T = 10` against the
/// closed form, over the step counts `counts`, fall at the observed order `order ± 0.1`.
fn converges_to_the_closed_form(method: Method, counts: [u32; 4], order: f64) {
    let (t_end, theta0) = (10.0, 1.0);
    let model = Pendulum { g: 1.0, l: 1.0 };
    let exact = ReleasedPendulum {
        g: 1.0,
        l: 1.0,
        theta0,
    }
    .sensitivity(t_end);
    let reference = [exact.d_dg, exact.d_dl, exact.d_dtheta0];
    let mut hs = Vec::new();
    let mut errors: [Vec<f64>; 4] = Default::default();
    for steps in counts {
        let h = t_end / f64::from(steps);
        let (end, columns) = run(method, &model, theta0, h, steps as usize);
        hs.push(h);
        errors[0].push(
            (end[0] - exact.position[0])
                .abs()
                .max((end[1] - exact.position[1]).abs()),
        );
        for (s, expected) in reference.iter().enumerate() {
            let error = (columns[s][0] - expected[0])
                .abs()
                .max((columns[s][1] - expected[1]).abs());
            errors[s + 1].push(error);
        }
    }
    for (name, column) in ["position", "∂/∂g", "∂/∂l", "∂/∂θ₀"].iter().zip(&errors) {
        let slope = mechanism_test_support::report(&format!("{method:?} {name}"), &hs, column);
        assert!(
            (slope - order).abs() < 0.1,
            "{method:?} {name}: observed order {slope}"
        );
    }
}

/// Runs DOPRI5 (`rtol = 10⁻¹²`, `atol = 10⁻¹³`, S-both²) with its sensitivities from the release
/// at `θ₀` to exactly `t_end`; returns the largest error relative to the closed form's largest
/// entry, over the position and each seed's `∂(x, y)/∂(g, l, θ₀)`.
fn dopri5_error(g: f64, l: f64, theta0: f64, t_end: f64) -> [f64; 4] {
    let model = Pendulum { g, l };
    let mut dopri = Dopri5::<2, 1>::new(DOPRI5, 1e-12, 1e-13)
        .unwrap()
        .with_post_stabilization(PostStabilization::BothTwice);
    let mut state = model.released(theta0);
    let mut sensitivity = model.release_seeds(theta0);
    while state.t < t_end {
        sensitivity
            .step_toward(&mut dopri, &model, &mut state, t_end)
            .unwrap();
    }
    assert_eq!(state.t, t_end, "the adaptive run lands on its end");
    let exact = ReleasedPendulum { g, l, theta0 }.sensitivity(t_end);
    let relative = |computed: [f64; 2], expected: [f64; 2]| {
        let scale = expected[0].abs().max(expected[1].abs());
        (computed[0] - expected[0])
            .abs()
            .max((computed[1] - expected[1]).abs())
            / scale
    };
    let column = |s: usize| [sensitivity.q[(0, s)], sensitivity.q[(1, s)]];
    [
        relative([state.q[0], state.q[1]], exact.position),
        relative(column(0), exact.d_dg),
        relative(column(1), exact.d_dl),
        relative(column(2), exact.d_dtheta0),
    ]
}

/// The point, `g = l = θ₀ = 1`, `T = 10`: every derivative within `10⁻⁸` relative.
#[test]
fn dopri5s_sensitivities_agree_with_the_closed_form() {
    let errors = dopri5_error(1.0, 1.0, 1.0, 10.0);
    eprintln!(
        "DOPRI5 rtol 1e-12 S-both², T = 10: relative errors (x, ∂/∂g, ∂/∂l, ∂/∂θ₀) = {errors:?}"
    );
    for (name, error) in ["position", "∂/∂g", "∂/∂l", "∂/∂θ₀"].iter().zip(errors) {
        assert!(error < 1e-8, "DOPRI5 {name}: relative error {error:e}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4))]

    /// The same at random pendulums and release angles.
    #[test]
    fn dopri5s_sensitivities_agree_with_the_closed_form_at_random_pendulums(
        g in 0.5..2.0f64,
        l in 0.5..2.0f64,
        theta0 in prop_oneof![-2.5..-0.2f64, 0.2..2.5f64],
    ) {
        let errors = dopri5_error(g, l, theta0, 10.0);
        for (name, error) in ["position", "∂/∂g", "∂/∂l", "∂/∂θ₀"].iter().zip(errors) {
            prop_assert!(error < 1e-8, "DOPRI5 {}: relative error {:e}", name, error);
        }
    }
}
