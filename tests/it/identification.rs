//! Fitting the damped double pendulum to measured positions (`mechanism::identify`, the engine
//! of the `identify` example): data made with known parameters (DOPRI5 at `rtol = 10⁻¹²`, far
//! below the noise) plus Gaussian noise are fitted within 3 standard errors of the truth, with
//! exact sensitivities (DOPRI5 and RK4) and with central differences (reported beside:
//! iterations, evaluations, time); bad data are refused with the line and column named, and an
//! interrupted fit stops.

use mechanism::identify::{
    identify, synthesize, Derivatives, Identification, Known, Measurements, Method, FITTED,
};
use mechanism::runtime::identification::{FitError, LevenbergMarquardt};
use mechanism::runtime::simulation::SamplingError;

/// The truth: `m2 = 1.5`, `g = 9.81`, `c = 0.3`, `θ₁ = 1.2`, `θ₂ = −0.6`.
const TRUTH: [f64; 5] = [1.5, 9.81, 0.3, 1.2, -0.6];

/// The noise's standard deviation and the stream's seed. The seed is fixed so that the test is
/// the same on every run: with a fresh seed per run, five 3σ checks would fail about once in
/// seventy runs by chance alone.
const NOISE: (f64, u64) = (1e-3, 20261129);

/// 101 measurements over `[0, 5]`.
fn data() -> Measurements {
    let times: Vec<f64> = (0..=100).map(|i| 0.05 * f64::from(i)).collect();
    let method = Method::Dopri5 {
        rtol: 1e-12,
        atol: 1e-13,
        first_step: None,
    };
    synthesize(
        &Known::default(),
        &TRUTH,
        method,
        &times,
        NOISE,
        &mut |_| true,
    )
    .unwrap()
}

/// The guess of the issue: `m2 = 1`, `g = 9`, `c = 0.1`, the angles of the first row.
fn guess(data: &Measurements) -> [f64; 5] {
    let [theta1, theta2] = data.first_angles();
    [1.0, 9.0, 0.1, theta1, theta2]
}

fn fit(data: &Measurements, method: Method, derivatives: Derivatives) -> Identification {
    identify(
        data,
        &Known::default(),
        &guess(data),
        method,
        derivatives,
        &LevenbergMarquardt::default(),
        &mut |_| true,
    )
    .unwrap()
}

fn report(label: &str, fit: &Identification) {
    eprint!(
        "{label:<28} {:>3} iterations {:>3} evaluations {:>8.3} s  rms {:.3e} |",
        fit.iterations,
        fit.evaluations,
        fit.elapsed.as_secs_f64(),
        fit.rms_residual
    );
    for (name, e) in FITTED.iter().zip(&fit.estimates) {
        eprint!(" {name} = {:.6} ± {:.1e}", e.value, e.std);
    }
    eprintln!();
}

/// Every estimate within 3 standard errors of the truth, the residuals at the noise's level.
fn check_against_the_truth(label: &str, fit: &Identification) {
    for ((name, estimate), truth) in FITTED.iter().zip(&fit.estimates).zip(TRUTH) {
        let deviation = (estimate.value - truth).abs() / estimate.std;
        assert!(
            deviation < 3.0,
            "{label}: {name} = {} ± {} is {deviation:.2} standard errors from {truth}",
            estimate.value,
            estimate.std
        );
        assert!(
            estimate.std > 0.0 && estimate.std < 0.05,
            "{label}: {name} ± {}",
            estimate.std
        );
    }
    // The rms of 404 residuals of σ = 10⁻³ with 5 fitted: within ±15 % of σ.
    assert!(
        (fit.rms_residual / NOISE.0 - 1.0).abs() < 0.15,
        "{label}: rms residual {}",
        fit.rms_residual
    );
}

#[test]
fn dopri5_fits_the_noisy_data_within_three_standard_errors_with_exact_and_difference_jacobians() {
    let data = data();
    let method = Method::Dopri5 {
        rtol: 1e-10,
        atol: 1e-11,
        first_step: None,
    };
    let exact = fit(&data, method, Derivatives::Exact);
    report("DOPRI5, exact sensitivities", &exact);
    check_against_the_truth("DOPRI5 exact", &exact);
    let differences = fit(&data, method, Derivatives::FiniteDifferences);
    report("DOPRI5, central differences", &differences);
    check_against_the_truth("DOPRI5 differences", &differences);
    // Both minimize the same cost: their estimates agree far inside the standard errors.
    for ((name, a), b) in FITTED
        .iter()
        .zip(&exact.estimates)
        .zip(&differences.estimates)
    {
        assert!(
            (a.value - b.value).abs() < 0.01 * a.std,
            "{name}: {} (exact) against {} (differences)",
            a.value,
            b.value
        );
    }
}

#[test]
fn rk4_at_a_fixed_step_fits_the_same_data() {
    let data = data();
    let exact = fit(&data, Method::Rk4 { h: 0.005 }, Derivatives::Exact);
    report("RK4 h = 0.005, exact", &exact);
    check_against_the_truth("RK4", &exact);
}

#[test]
fn bad_data_are_refused_with_their_line_and_column() {
    let cases = [
        ("t,x1,y1,x2\n0,1,2,3\n", "no column `y2`"),
        (
            "t,x1,y1,x2,y2\n0,1,2,3,4\n0.1,1,2,x,4\n",
            "line 3, column `x2`: `x` is not a number",
        ),
        (
            "t,x1,y1,x2,y2\n0,1,2,3,4\n0.1,1,2,inf,4\n",
            "line 3, column `x2`: inf is not finite",
        ),
        (
            "t,x1,y1,x2,y2\n-0.1,1,2,3,4\n0,1,2,3,4\n",
            "line 2, column `t`: -0.1 precedes the release",
        ),
        (
            "t,x1,y1,x2,y2\n0,1,2,3,4\n0.1,1,2\n",
            "line 3: 3 fields where the header has 5",
        ),
        ("t,x1,y1,x2,y2\n0,1,2,3,4\n", "1 data rows"),
    ];
    for (text, expected) in cases {
        let error = Measurements::parse(text, "data.csv")
            .unwrap_err()
            .to_string();
        assert!(error.starts_with("data.csv"), "{error}");
        assert!(error.contains(expected), "{error} (expected {expected})");
    }
    // Rows in any order, other columns ignored.
    let text = "y2,t,extra,x1,y1,x2\n4,0.2,9,1,2,3\n8,0.1,9,5,6,7\n";
    let data = Measurements::parse(text, "data.csv").unwrap();
    assert_eq!(data.t, vec![0.1, 0.2]);
    assert_eq!(
        data.positions,
        vec![[5.0, 6.0, 7.0, 8.0], [1.0, 2.0, 3.0, 4.0]]
    );
    // Measurements built field by field are checked before a fit.
    let broken = Measurements {
        t: vec![0.0, 0.1, 0.2],
        positions: vec![[0.0; 4]; 2],
    };
    let error = identify(
        &broken,
        &Known::default(),
        &[1.0, 9.0, 0.1, 0.5, 0.5],
        Method::Rk4 { h: 0.01 },
        Derivatives::Exact,
        &LevenbergMarquardt::default(),
        &mut |_| true,
    )
    .unwrap_err();
    assert!(
        error.to_string().contains("3 times for 2 positions"),
        "{error}"
    );
    let unsorted = Measurements {
        t: vec![0.2, 0.1],
        positions: vec![[0.0; 4]; 2],
    };
    assert!(unsorted
        .check()
        .unwrap_err()
        .to_string()
        .contains("before the one above it"));
    let missing = Measurements::read_csv(std::path::Path::new("/no/such/data.csv"));
    assert!(missing
        .unwrap_err()
        .to_string()
        .starts_with("cannot read the data file /no/such/data.csv"));
}

#[test]
fn an_interrupted_fit_stops_with_the_time_reached() {
    let data = data();
    let mut steps = 0;
    let error = identify(
        &data,
        &Known::default(),
        &guess(&data),
        Method::Rk4 { h: 0.01 },
        Derivatives::Exact,
        &LevenbergMarquardt::default(),
        &mut |_| {
            steps += 1;
            steps < 1000
        },
    )
    .unwrap_err();
    let message = error.to_string();
    assert!(
        matches!(
            &error,
            mechanism::identify::IdentifyError::Fit(fit)
                if matches!(**fit, FitError::Aborted(SamplingError::Interrupted { .. }))
        ),
        "{message}"
    );
    assert!(message.contains("interrupted at t = "), "{message}");
}

/// Between the steps of a fixed-step method the positions and their sensitivities are
/// interpolated (cubic Hermite): at times off RK4's grid (h = 0.01) they agree with DOPRI5 at
/// rtol 10⁻¹² landing on them within RK4's and the interpolation's `O(h⁴)` errors.
#[test]
fn positions_and_sensitivities_between_steps_are_interpolated_to_fourth_order() {
    use mechanism::runtime::integrators::stabilized::{
        Dopri5, PostStabilization, StabilizedRk, DOPRI5, RK4,
    };
    use mechanism::runtime::simulation::{sample_positions, PositionSample, Sensitive};
    let model = Known::default().model(&TRUTH);
    let times: Vec<f64> = (0..40).map(|i| 0.0137 + 0.0731 * f64::from(i)).collect();
    let run = |h: Option<f64>| -> Vec<PositionSample<4, 5>> {
        let initial = model.released(TRUTH[3], TRUTH[4]);
        let seeds = model.release_seeds(TRUTH[3], TRUTH[4]);
        match h {
            Some(h) => {
                let rk4 = StabilizedRk::<4, 2, 4>::new(RK4, h)
                    .unwrap()
                    .with_post_stabilization(PostStabilization::BothTwice);
                let mut stepper = Sensitive {
                    integrator: rk4,
                    sensitivity: seeds,
                };
                sample_positions(&mut stepper, &model, &initial, &times, |_| true).unwrap()
            }
            None => {
                let dopri = Dopri5::<4, 2>::new(DOPRI5, 1e-12, 1e-13)
                    .unwrap()
                    .with_post_stabilization(PostStabilization::BothTwice);
                let mut stepper = Sensitive {
                    integrator: dopri,
                    sensitivity: seeds,
                };
                sample_positions(&mut stepper, &model, &initial, &times, |_| true).unwrap()
            }
        }
    };
    let reference = run(None);
    let (coarse, fine) = (run(Some(0.02)), run(Some(0.01)));
    let error = |samples: &[PositionSample<4, 5>]| {
        samples
            .iter()
            .zip(&reference)
            .fold((0.0f64, 0.0f64), |(q, dq), (a, b)| {
                assert_eq!(a.t, b.t);
                (q.max((a.q - b.q).amax()), dq.max((a.dq - b.dq).amax()))
            })
    };
    let ((q_coarse, dq_coarse), (q_fine, dq_fine)) = (error(&coarse), error(&fine));
    eprintln!("RK4 sampled between steps: |Δq| {q_coarse:.2e} → {q_fine:.2e}, |Δ∂q/∂θ| {dq_coarse:.2e} → {dq_fine:.2e}");
    // Fourth order: halving h divides the errors by about 16 (at least 10 here).
    assert!(
        q_fine < 1e-5 && q_coarse / q_fine > 10.0,
        "{q_coarse:e} → {q_fine:e}"
    );
    assert!(
        dq_fine < 1e-3 && dq_coarse / dq_fine > 10.0,
        "{dq_coarse:e} → {dq_fine:e}"
    );
}
