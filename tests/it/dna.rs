//! Tao–Owhadi §4.4's DNA Morse chain as `mechanism!` generates it (`models::DnaChain`): its
//! potential's derivatives against the closed forms of `shared/EXPERIMENTS-M2.md` §E.1
//! (`runtime::reference::dna_chain`), full Z&S's second order against an independent RK4,
//! Verlet's `O(h²)` energy error, the same bytes from the same seed, and the energy guard that
//! stops the runs at `h = 2` that blow up.

use mechanism::ensemble::member_seed;
use mechanism::models::DnaChain;
use mechanism::runtime::model::{
    SparsePotential, SparsePotentialHessian, SparsePotentialThirdDerivative,
};
use mechanism::runtime::reference::dna_chain::{self, Morse};
use mechanism::runtime::reference::ode::rk4;
use mechanism::runtime::simulation::{
    family, CsvSink, Schedule, Simulation, SimulationError, SparseMechanics,
};
use mechanism::runtime::{
    DynState, SVector, SparseIntegrator, SparseVerlet, SparseZhangSkeel,
    SparseZhangSkeelSimplified, StepError,
};

/// Returns `count` numbers uniform in `[lo, hi)` from the SplitMix64 stream of `seed`.
fn uniform(seed: u64, count: usize, lo: f64, hi: f64) -> Vec<f64> {
    (0..count)
        .map(|i| lo + (hi - lo) * (member_seed(seed, i) >> 11) as f64 / (1u64 << 53) as f64)
        .collect()
}

/// Returns the sums of the magnitudes of the terms of `U′`, `U″`, `U‴` at `θ` (EXPERIMENTS-M2
/// §E.1): the scale of their rounding errors, however the terms cancel.
fn term_magnitudes(morse: &Morse, theta: f64) -> [f64; 3] {
    let a = morse.a;
    let (s, c) = theta.sin_cos();
    let e = (-a * (1.0 - c - morse.x0)).exp();
    let (e1, e2, e3) = (e * e + e, 2.0 * e * e + e, 4.0 * e * e + e);
    let (s, c) = (s.abs(), c.abs());
    [
        2.0 * a * s * e1,
        2.0 * a * c * e1 + 2.0 * a * a * s * s * e2,
        2.0 * a * s * e1 + 6.0 * a * a * s * c * e2 + 2.0 * a.powi(3) * s.powi(3) * e3,
    ]
}

/// The generated gradient, Hessian (dense, from the pattern with each unordered pair once)
/// and `a·V‴·a` against the closed forms at random angles all around the circle and beyond
/// (`θ ∈ [−2π, 4π)`, a base pair may wind), for the paper's `N = 200`, for `N = 3` and for
/// `N = 2`, where both springs of a base pair join the same neighbour: the closed form with
/// indices mod `N` is then `θ̈_0 = 2(θ_1 − θ_0) − εU′(θ_0)`, the Hessian's off-diagonal `−2`,
/// and `N = 1`, whose spring `θ_0 − θ_0` vanishes (so `N = 2` is not degenerate, only
/// doubled). Each value is compared relative to the sum of the magnitudes of the terms it is
/// made of, the scale of its rounding error (`~1e-15` of it); the tolerance `1e-12` leaves
/// room for the different orders of summation.
#[test]
fn generated_derivatives_match_the_closed_forms() {
    for n in [200, 3, 2, 1] {
        let chain = DnaChain::new(n).unwrap();
        let (morse, eps) = (chain.morse(), chain.eps);
        assert_eq!(morse, Morse::TAO_OWHADI);
        for trial in 0..4u64 {
            let seed = 1000 * n as u64 + trial;
            let theta = uniform(
                seed,
                n,
                -2.0 * std::f64::consts::PI,
                4.0 * std::f64::consts::PI,
            );
            let a = uniform(seed + 500, n, -1.0, 1.0);
            let u: Vec<[f64; 4]> = theta.iter().map(|&t| morse.derivatives(t)).collect();
            let (next, previous) = (|k: usize| (k + 1) % n, |k: usize| (k + n - 1) % n);
            let near = |x: f64, y: f64, scale: f64, what: &str| {
                assert!(
                    (x - y).abs() <= 1e-12 * scale,
                    "N = {n}, trial {trial}: {what}: generated {x:e}, closed form {y:e}"
                );
            };

            let mut acceleration = vec![0.0; n];
            dna_chain::acceleration(&theta, &morse, eps, &mut acceleration);
            let mut gradient = vec![f64::NAN; n];
            chain.potential_gradient(&theta, &mut gradient);
            for k in 0..n {
                let scale = theta[next(k)].abs()
                    + 2.0 * theta[k].abs()
                    + theta[previous(k)].abs()
                    + eps * term_magnitudes(&morse, theta[k])[0];
                near(gradient[k], -acceleration[k], scale, &format!("∂V/∂θ{k}"));
            }
            let potential = chain.potential(&theta);
            let expected = dna_chain::energy(&theta, &vec![0.0; n], &morse, eps);
            near(potential, expected, expected.abs() + 1.0, "V");

            let pattern = chain.hessian_pattern();
            let mut values = vec![f64::NAN; pattern.len()];
            chain.potential_hessian(&theta, &mut values);
            let hessian = crate::support::dense_symmetric(pattern, &values, n);
            for i in 0..n {
                for j in 0..n {
                    // K: 2 on the diagonal, −1 per spring joining i and j (two for N = 2).
                    let springs = [next(i), previous(i)].iter().filter(|&&m| m == j).count();
                    let laplacian = if n == 1 {
                        0.0
                    } else if i == j {
                        2.0
                    } else {
                        -(springs as f64)
                    };
                    let site = if i == j { eps * u[i][2] } else { 0.0 };
                    let scale = 2.0 + eps * term_magnitudes(&morse, theta[i])[1];
                    near(
                        hessian[i * n + j],
                        laplacian + site,
                        scale,
                        &format!("H[{i}][{j}]"),
                    );
                }
            }

            let mut third = vec![f64::NAN; n];
            chain.potential_third_contraction(&theta, &a, &mut third);
            for k in 0..n {
                let expected = eps * u[k][3] * a[k] * a[k];
                let scale = eps * term_magnitudes(&morse, theta[k])[2] * a[k] * a[k];
                near(third[k], expected, scale, &format!("(a·V‴·a)_{k}"));
            }
        }
    }
}

/// Returns `y = (θ, θ̇)` of `state` for [`rk4`].
fn stacked<const D: usize>(state: &DynState) -> SVector<f64, D> {
    SVector::from_iterator(state.q.iter().chain(&state.v).copied())
}

/// Full Z&S (`β = 0.3`) on `N = 20` base pairs from the paper's start is second order: the
/// error of `θ` at `T = 20` against classical RK4 on `θ̈ = Kθ − εU′(θ)` written from the
/// closed form (`runtime::reference::{ode, dna_chain}`, no code shared with Z&S or the
/// generated model) at `h = 1/800`. RK4's error there, `~ T (hω)⁴/120` with `ω ≤ 2.1`,
/// is below `1e-10`, four orders below Z&S's smallest error here, so the fitted slope over
/// `h = 0.1, 0.05, 0.025` is Z&S's own; its `O(h⁴)` terms, `(hω)² ≤ 0.05` relative to the
/// leading one, keep it within `±0.1` of 2.
#[test]
fn full_zhang_skeel_is_second_order() {
    const N: usize = 20;
    let t_end = 20.0;
    let chain = DnaChain::new(N).unwrap();
    let (morse, eps) = (chain.morse(), chain.eps);
    let start = chain.initial_state(7);
    let field = |y: &SVector<f64, 40>| {
        let mut out = SVector::<f64, 40>::zeros();
        let mut acceleration = [0.0; N];
        dna_chain::acceleration(&y.as_slice()[..N], &morse, eps, &mut acceleration);
        for k in 0..N {
            out[k] = y[N + k];
            out[N + k] = acceleration[k];
        }
        out
    };
    let reference = rk4(field, stacked::<40>(&start), 1.0 / 800.0, 16_000);
    let hs = [0.1, 0.05, 0.025];
    let errors: Vec<f64> = hs
        .iter()
        .map(|&h| {
            let mut zs = SparseZhangSkeel::new(&chain, h)
                .unwrap()
                .with_beta(0.3)
                .unwrap();
            let mut state = start.clone();
            for _ in 0..crate::support::steps_to(t_end, h) {
                zs.step(&chain, &mut state).unwrap();
            }
            (0..N).fold(0.0f64, |m, k| m.max((state.q[k] - reference[k]).abs()))
        })
        .collect();
    let slope = crate::support::report("full Z&S, DNA chain N = 20, T = 20", &hs, &errors);
    assert!(
        (1.9..=2.1).contains(&slope),
        "order {slope}, errors {errors:?}"
    );
}

/// Velocity Verlet's energy error is `O(h²)` and bounded: it conserves the modified energy
/// `H̃ = H + h² H₂ + O(h⁴)` with `H₂ = vᵀ Hess V v / 12 − |∇V|² / 24`, so `|H(t) − H(0)| ≤
/// 2 h² max|H₂| (1 + O(h²ω²))`. On the energy surface `|v|² ≤ 2H` (V ≥ 0),
/// `‖Hess V‖ ≤ 4 + ε max|U″|`, `|∇V| ≤ |Kθ| + ε √N max|U′|` with `|Kθ|² ≤ 4 θᵀKθ ≤ 8H`, and
/// `(hω)² ≤ 0.2` at `h = 0.2`, so the bound below, with the remainder counted as 25%, holds at
/// `h = 0.2` and at `h = 0.1` over `T = 200` (the first opening of the chain). Halving `h`
/// divides the error by about 4: the ratio is asserted within `[3, 5.3]`, the two runs'
/// trajectories being close but not equal.
#[test]
fn verlet_energy_error_is_bounded_and_second_order() {
    let chain = DnaChain::new(200).unwrap();
    let (morse, eps, n) = (chain.morse(), chain.eps, chain.base_pairs() as f64);
    let start = chain.initial_state(3);
    let e0 = chain.energy(&start.q, &start.v);
    let (mut max_u1, mut max_u2) = (0.0f64, 0.0f64);
    for i in 0..=100_000 {
        let [_, u1, u2, _] = morse.derivatives(2.0 * std::f64::consts::PI * f64::from(i) / 1e5);
        (max_u1, max_u2) = (max_u1.max(u1.abs()), max_u2.max(u2.abs()));
    }
    // The grid's spacing 6e-5 times |U‴| ≲ 1e3 moves the maxima by < 0.1: add it.
    let (max_u1, max_u2) = (max_u1 + 0.1, max_u2 + 0.1);
    let gradient = (8.0 * e0).sqrt() + eps * n.sqrt() * max_u1;
    let max_h2 = 2.0 * e0 * (4.0 + eps * max_u2) / 12.0 + gradient * gradient / 24.0;
    let drift = |h: f64| {
        let mut verlet = SparseVerlet::new(&chain, h).unwrap();
        let mut state = start.clone();
        let mut worst = 0.0f64;
        for _ in 0..crate::support::steps_to(200.0, h) {
            verlet.step(&chain, &mut state).unwrap();
            worst = worst.max((chain.energy(&state.q, &state.v) - e0).abs());
        }
        worst
    };
    let (coarse, fine) = (drift(0.2), drift(0.1));
    println!(
        "E0 = {e0}, max |H2| <= {max_h2:.3}; max |ΔE|: h = 0.2: {coarse:.3e}, h = 0.1: {fine:.3e}"
    );
    for (h, worst) in [(0.2, coarse), (0.1, fine)] {
        let bound = 2.0 * h * h * max_h2 * 1.25;
        assert!(
            worst < bound,
            "h = {h}: max |ΔE| = {worst:e} above {bound:e}"
        );
    }
    let ratio = coarse / fine;
    assert!(
        (3.0..=5.3).contains(&ratio),
        "max |ΔE| ratio {ratio} for h halved"
    );
}

/// Runs full Z&S (`h = 2`, `β = 0.3`) for 100 steps from the paper's start with `seed` through
/// the driver and returns the CSV bytes.
fn csv_of_seed(seed: u64) -> Vec<u8> {
    let chain = DnaChain::new(200).unwrap();
    let zs = SparseZhangSkeel::new(&chain, 2.0)
        .unwrap()
        .with_beta(0.3)
        .unwrap();
    let mut run = Simulation::sparse(
        &chain,
        zs,
        chain.initial_state(seed),
        200.0,
        Schedule::EveryStep,
    )
    .unwrap()
    .coordinates(family(&["theta"], chain.base_pairs()))
    .unwrap()
    .observe(SparseMechanics::new(&chain))
    .write_to(CsvSink::new(Vec::new()));
    run.run().unwrap();
    run.into_output().into_inner()
}

/// The same seed gives the same initial angles bit for bit and the same CSV byte for byte; a
/// different seed gives different ones.
#[test]
fn same_seed_same_bytes() {
    let bits = |s: &DynState| {
        s.q.iter()
            .chain(&s.v)
            .map(|x| x.to_bits())
            .collect::<Vec<_>>()
    };
    let chain = DnaChain::new(200).unwrap();
    assert_eq!(
        bits(&chain.initial_state(11)),
        bits(&chain.initial_state(11))
    );
    assert_ne!(
        bits(&chain.initial_state(11)),
        bits(&chain.initial_state(12))
    );
    let first = csv_of_seed(11);
    assert_eq!(first, csv_of_seed(11));
    assert_ne!(first, csv_of_seed(12));
    let text = String::from_utf8(first).unwrap();
    assert!(text.starts_with("t,q.theta[0],q.theta[1],"));
    assert_eq!(text.lines().count(), 1 + 101);
}

/// Z&Ss and full Z&S at the paper's `h = 2` (`β = 0.3`) blow up on the chain — Z&Ss between
/// `t ≈ 4·10⁴` and `7.6·10⁴`, full Z&S between `t ≈ 4600` and `7600` (the `dna` example's
/// `--stability` table) — while the state stays finite for a long time. The energy guard stops
/// each run through the driver with `EnergyDiverged` before `H` has grown to `10³ H(0)`, and the
/// driver's state is the last accepted one.
#[test]
fn the_energy_guard_stops_the_runs_at_h_2_that_blow_up() {
    let chain = DnaChain::new(200).unwrap();
    let zss = SparseZhangSkeelSimplified::new(&chain, 2.0)
        .unwrap()
        .with_beta(0.3)
        .unwrap();
    let zs = SparseZhangSkeel::new(&chain, 2.0)
        .unwrap()
        .with_beta(0.3)
        .unwrap();
    let runs: [(&str, Box<dyn SparseIntegrator<DnaChain>>, f64); 2] =
        [("Z&Ss", Box::new(zss), 2e5), ("Z&S", Box::new(zs), 4e4)];
    for (name, integrator, t_end) in runs {
        let start = chain.initial_state(1);
        let h0 = chain.energy(&start.q, &start.v);
        let largest = std::cell::Cell::new(1.0f64);
        let mut run = Simulation::sparse(
            &chain,
            integrator,
            start,
            t_end,
            Schedule::EveryNthStep(1 << 40),
        )
        .unwrap()
        .on_step(|_, s| largest.set(largest.get().max(chain.energy(&s.q, &s.v) / h0)));
        let error = run
            .run()
            .expect_err("the run at h = 2 was expected to blow up");
        let SimulationError::Step {
            t,
            source: StepError::EnergyDiverged { energy, .. },
            ..
        } = error
        else {
            panic!("{name}: expected EnergyDiverged from the driver, got {error}");
        };
        let last = run.state();
        println!(
            "{name}: refused the step from t = {t} with H = {:.3e} H(0); the run reached at most \
             {:.3} H(0)",
            energy / h0,
            largest.get()
        );
        assert_eq!(last.t, t);
        assert!(last.q.iter().chain(&last.v).all(|x| x.is_finite()));
        assert!(
            largest.get() < 1e3,
            "{name}: H reached {} H(0)",
            largest.get()
        );
    }
}
