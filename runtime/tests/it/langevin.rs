//! The Geometric Langevin Algorithm (Tao–Owhadi 2014 §4.3): Boltzmann–Gibbs statistics on
//! harmonic oscillators within batch-means error bars, the exact Ornstein–Uhlenbeck decay,
//! bit-for-bit reproducibility, no allocation per step, typed errors.

use crate::support::run;
use mechanism_runtime::reference::HarmonicOscillator;
use mechanism_runtime::simulation::{BatchMeans, Estimate};
use mechanism_runtime::{
    ConstantMass, Inertia, Integrator, Langevin, Potential, SMatrix, SVector, State, StepError,
    Verlet,
};

/// Returns the stationary covariance `[⟨q²⟩, ⟨qv⟩, ⟨v²⟩]` of GLA (exact OU over `h`, then one
/// velocity Verlet step) on `m q̈ = −k q`, from the fixed point of the linear covariance map
/// `C = B (D C D + S) Bᵀ`: the sampler's exact `O(h²)`-biased target, computed without it.
fn gla_verlet_covariance(m: f64, k: f64, gamma: f64, kt: f64, h: f64) -> [f64; 3] {
    let w2 = k / m;
    let c = (-gamma * h / m).exp();
    let s2 = kt * (1.0 - c * c) / m;
    let b = SMatrix::<f64, 2, 2>::new(
        1.0 - 0.5 * h * h * w2,
        h,
        -h * w2 * (1.0 - 0.25 * h * h * w2),
        1.0 - 0.5 * h * h * w2,
    );
    let d = SMatrix::<f64, 2, 2>::new(1.0, 0.0, 0.0, c);
    let s = SMatrix::<f64, 2, 2>::new(0.0, 0.0, 0.0, s2);
    let mut cov = SMatrix::<f64, 2, 2>::zeros();
    for _ in 0..1_000_000 {
        let next = b * (d * cov * d + s) * b.transpose();
        if (next - cov).amax() <= 1e-16 {
            break;
        }
        cov = next;
    }
    [cov[(0, 0)], cov[(0, 1)], cov[(1, 1)]]
}

/// Asserts `|mean − expected| < 4σ` with a meaningful `σ` (at most 2% of `expected`).
fn assert_matches(label: &str, estimate: Estimate, expected: f64) {
    let (mean, sigma) = (estimate.mean, estimate.error);
    println!(
        "  {label}: {mean:.5} ± {sigma:.5} (σ/value = {:.2}%), expected {expected:.5}, \
         |Δ|/σ = {:.2}",
        100.0 * sigma / expected.abs(),
        (mean - expected).abs() / sigma
    );
    assert!(
        sigma <= 0.02 * expected.abs(),
        "{label}: σ = {sigma} too large"
    );
    assert!(
        (mean - expected).abs() < 4.0 * sigma,
        "{label}: {mean} vs {expected}"
    );
}

#[test]
fn harmonic_oscillator_samples_boltzmann_gibbs() {
    let (m, k, kt, gamma, h) = (2.0, 3.0, 0.5, 2.0, 0.05);
    let model = HarmonicOscillator {
        mass: m,
        stiffness: k,
    };
    let mut langevin = Langevin::new(Verlet::new(h).unwrap(), h, gamma, kt, 2014).unwrap();
    let mut state = State::new(0.0, [1.0], [0.0]);
    state = run(&mut langevin, &model, state, 20_000, |_| {}).unwrap();

    let (batches, per_batch) = (100, 40_000);
    let (mut q2, mut p2) = (BatchMeans::new(per_batch), BatchMeans::new(per_batch));
    run(&mut langevin, &model, state, batches * per_batch, |s| {
        q2.push(s.q[0] * s.q[0]);
        p2.push((m * s.v[0]).powi(2));
    })
    .unwrap();

    let [cq, _, cv] = gla_verlet_covariance(m, k, gamma, kt, h);
    println!(
        "GLA + Verlet, m = {m}, k = {k}, kT = {kt}, γ = {gamma}, h = {h}, {} steps:",
        batches * per_batch
    );
    println!(
        "  discrete stationary values: ⟨q²⟩ = {cq:.6} (bias {:+.2e} vs kT/k), ⟨p²⟩ = {:.6} \
         (bias {:+.2e} vs m kT)",
        cq - kt / k,
        m * m * cv,
        m * m * cv - m * kt
    );
    // The O(h²) bias of GLA with Verlet is ~0.1% here, below the statistical resolution, so
    // the sample must match both the exact discrete value and the continuous one.
    assert_matches("⟨q²⟩ vs kT/k", q2.estimate(), kt / k);
    assert_matches("⟨p²⟩ vs m kT", p2.estimate(), m * kt);
    assert_matches("⟨q²⟩ vs discrete", q2.estimate(), cq);
    assert_matches("⟨p²⟩ vs discrete", p2.estimate(), m * m * cv);
}

/// Two coupled coordinates with a non-diagonal mass matrix, so that the Ornstein–Uhlenbeck
/// step runs in the eigenbasis of `M`.
struct Coupled;

const MASS: [f64; 4] = [2.0, 0.6, 0.6, 1.0];
const STIFFNESS: [f64; 4] = [3.0, -1.0, -1.0, 2.0];

impl ConstantMass<2> for Coupled {}

impl Inertia<2> for Coupled {
    const CONSTANT_MASS: bool = true;
    fn mass_matrix(&self, _q: &SVector<f64, 2>, m: &mut SMatrix<f64, 2, 2>) {
        *m = SMatrix::from_row_slice(&MASS);
    }
}

impl Potential<2> for Coupled {
    fn potential(&self, q: &SVector<f64, 2>) -> f64 {
        0.5 * q.dot(&(SMatrix::<f64, 2, 2>::from_row_slice(&STIFFNESS) * q))
    }
    fn potential_gradient(&self, q: &SVector<f64, 2>, grad: &mut SVector<f64, 2>) {
        *grad = SMatrix::<f64, 2, 2>::from_row_slice(&STIFFNESS) * q;
    }
}

#[test]
fn coupled_oscillator_with_non_diagonal_mass_samples_boltzmann_gibbs() {
    let (kt, gamma, h) = (0.8, 1.5, 0.02);
    let mass = SMatrix::<f64, 2, 2>::from_row_slice(&MASS);
    let stiffness = SMatrix::<f64, 2, 2>::from_row_slice(&STIFFNESS);
    let mut langevin = Langevin::new(Verlet::new(h).unwrap(), h, gamma, kt, 99).unwrap();
    let mut state = State::new(0.0, [0.5, -0.5], [0.0, 0.0]);
    state = run(&mut langevin, &Coupled, state, 50_000, |_| {}).unwrap();

    let (batches, per_batch) = (100, 50_000);
    let mut sums: Vec<BatchMeans> = (0..6).map(|_| BatchMeans::new(per_batch)).collect();
    run(&mut langevin, &Coupled, state, batches * per_batch, |s| {
        let p = mass * s.v;
        let samples = [
            s.q[0] * s.q[0],
            s.q[0] * s.q[1],
            s.q[1] * s.q[1],
            p[0] * p[0],
            p[0] * p[1],
            p[1] * p[1],
        ];
        for (sum, x) in sums.iter_mut().zip(samples) {
            sum.push(x);
        }
    })
    .unwrap();
    let q_cov = stiffness.try_inverse().unwrap() * kt;
    let p_cov = mass * kt;
    // ω²_max of M⁻¹K is about 3.6, so the O(h²ω²) bias (≲ 0.04%) is below the resolution.
    println!(
        "GLA + Verlet, coupled oscillator, kT = {kt}, γ = {gamma}, h = {h}, {} steps:",
        batches * per_batch
    );
    let labels = ["⟨q₁²⟩", "⟨q₁q₂⟩", "⟨q₂²⟩", "⟨p₁²⟩", "⟨p₁p₂⟩", "⟨p₂²⟩"];
    let expected = [
        q_cov[(0, 0)],
        q_cov[(0, 1)],
        q_cov[(1, 1)],
        p_cov[(0, 0)],
        p_cov[(0, 1)],
        p_cov[(1, 1)],
    ];
    for ((label, sum), value) in labels.iter().zip(&sums).zip(expected) {
        assert_matches(label, sum.estimate(), value);
    }
}

/// With `V = 0` Verlet leaves `v` unchanged, so the chain of velocities is the OU flow alone:
/// an AR(1) process with coefficient `e^{−γh/m}` (Tao–Owhadi eq. 27's friction `γ M⁻¹p`) and
/// stationary variance `kT/m`.
#[test]
fn free_particle_velocity_is_the_exact_ornstein_uhlenbeck_flow() {
    let (m, kt, gamma, h) = (2.0, 0.7, 1.0, 0.5);
    let model = HarmonicOscillator {
        mass: m,
        stiffness: 0.0,
    };
    let mut langevin = Langevin::new(Verlet::new(h).unwrap(), h, gamma, kt, 5).unwrap();
    let steps = 400_000;
    let (mut previous, mut lagged, mut squares) = (0.0, 0.0, 0.0);
    run(
        &mut langevin,
        &model,
        State::new(0.0, [0.0], [0.0]),
        steps,
        |s| {
            lagged += previous * s.v[0];
            squares += s.v[0] * s.v[0];
            previous = s.v[0];
        },
    )
    .unwrap();
    let rho = lagged / squares;
    let variance = squares / steps as f64;
    let c = (-gamma * h / m).exp();
    println!(
        "free particle: lag-1 autocorrelation {rho:.4} (e^(−γh/m) = {c:.4}, e^(−γh) = {:.4}), \
         ⟨v²⟩ = {variance:.4} (kT/m = {:.4})",
        (-gamma * h).exp(),
        kt / m
    );
    // Standard error of ρ̂ ≈ √((1 − c²)/n) ≈ 1e-3; of ⟨v²⟩ ≈ kT/m √(2(1 + c²)/((1 − c²) n)).
    assert!((rho - c).abs() < 0.005, "{rho} vs {c}");
    assert!((variance / (kt / m) - 1.0).abs() < 0.02, "{variance}");
}

/// A free particle in `R⁴` with a full (non-diagonal) constant mass matrix.
struct Free4;

/// `M = R Rᵀ + ½ I` for a fixed `R`: symmetric positive definite, eigenvalues ≥ ½.
fn mass4() -> SMatrix<f64, 4, 4> {
    let r = SMatrix::<f64, 4, 4>::from_row_slice(&[
        1.0, 0.3, -0.2, 0.5, 0.1, 0.8, 0.4, -0.3, -0.6, 0.2, 1.1, 0.0, 0.3, -0.5, 0.2, 0.7,
    ]);
    r * r.transpose() + SMatrix::<f64, 4, 4>::identity() * 0.5
}

impl ConstantMass<4> for Free4 {}

impl Inertia<4> for Free4 {
    const CONSTANT_MASS: bool = true;
    fn mass_matrix(&self, _q: &SVector<f64, 4>, m: &mut SMatrix<f64, 4, 4>) {
        *m = mass4();
    }
}

impl Potential<4> for Free4 {
    fn potential(&self, _q: &SVector<f64, 4>) -> f64 {
        0.0
    }
    fn potential_gradient(&self, _q: &SVector<f64, 4>, grad: &mut SVector<f64, 4>) {
        grad.fill(0.0);
    }
}

/// With `kT = 0` and `V = 0` one step moves `p = M v` by exactly `e^{−γhM⁻¹}`; compare with
/// the matrix exponential summed as a power series, independent of the eigendecomposition.
#[test]
fn friction_is_the_matrix_exponential_of_minus_gamma_h_inverse_mass() {
    let (gamma, h) = (0.7, 0.5);
    let mass = mass4();
    let x = -mass.try_inverse().unwrap() * (gamma * h);
    let (mut term, mut exponential) = (SMatrix::<f64, 4, 4>::identity(), SMatrix::identity());
    for n in 1..60 {
        term = term * x / n as f64;
        exponential += term;
    }
    let initial = State::new(0.0, [0.0; 4], [1.0, -2.0, 0.5, 3.0]);
    let mut langevin = Langevin::new(Verlet::new(h).unwrap(), h, gamma, 0.0, 0).unwrap();
    let mut state = initial;
    langevin.step(&Free4, &mut state).unwrap();
    let expected = exponential * (mass * initial.v);
    let error = (mass * state.v - expected).amax() / expected.amax();
    println!("4×4 non-diagonal M: |p − e^(−γhM⁻¹) p₀| / |p| = {error:.1e}");
    assert!(error < 1e-13, "{error}");
    assert_eq!(state.q, initial.q + state.v * h);
}

fn trajectory(seed: u64) -> Vec<u64> {
    let model = HarmonicOscillator::default();
    let mut langevin = Langevin::new(Verlet::new(0.1).unwrap(), 0.1, 0.5, 1.0, seed).unwrap();
    let mut bits = Vec::new();
    run(
        &mut langevin,
        &model,
        State::new(0.0, [1.0], [0.0]),
        2000,
        |s| bits.extend([s.t.to_bits(), s.q[0].to_bits(), s.v[0].to_bits()]),
    )
    .unwrap();
    bits
}

#[test]
fn same_seed_same_bits_different_seed_different_path() {
    let a = trajectory(42);
    assert_eq!(a, trajectory(42));
    let b = trajectory(43);
    let differing = a.iter().zip(&b).filter(|(x, y)| x != y).count();
    // t agrees in both; q and v differ at (almost) every step.
    assert!(
        differing > 3900,
        "{differing} of {} entries differ",
        a.len()
    );
}

#[test]
fn a_step_does_not_allocate() {
    let model = HarmonicOscillator::default();
    let mut langevin = Langevin::new(Verlet::new(0.1).unwrap(), 0.1, 1.0, 1.0, 1).unwrap();
    let mut state = State::new(0.0, [1.0], [0.0]);
    langevin.step(&model, &mut state).unwrap();
    let before = crate::support::allocations();
    for _ in 0..1000 {
        langevin.step(&model, &mut state).unwrap();
    }
    assert_eq!(crate::support::allocations(), before);
}

#[test]
fn bad_input_is_a_typed_error_and_leaves_everything_unchanged() {
    let verlet = Verlet::<1>::new(0.1).unwrap();
    for h in [0.0, -0.1, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            Langevin::<_, 1>::new(verlet, h, 1.0, 1.0, 0),
            Err(StepError::BadStepSize { .. })
        ));
    }
    for bad in [-0.1, f64::NAN, f64::INFINITY] {
        let err = Langevin::<_, 1>::new(verlet, 0.1, bad, 1.0, 0).unwrap_err();
        assert!(
            matches!(
                err,
                StepError::BadParameter {
                    name: "friction",
                    ..
                }
            ),
            "{err}"
        );
        let err = Langevin::<_, 1>::new(verlet, 0.1, 1.0, bad, 0).unwrap_err();
        assert!(
            matches!(
                err,
                StepError::BadParameter {
                    name: "temperature",
                    ..
                }
            ),
            "{err}"
        );
    }

    let model = HarmonicOscillator::default();
    let start = State::new(0.0, [1.0], [0.0]);
    let mut failing = Langevin::new(verlet, 0.1, 1.0, 1.0, 3).unwrap();
    let mut fresh = Langevin::new(verlet, 0.1, 1.0, 1.0, 3).unwrap();

    let mut bad = State::new(1.5, [f64::NAN], [0.0]);
    let err = failing.step(&model, &mut bad).unwrap_err();
    assert_eq!(
        err,
        StepError::NonFinite {
            quantity: "q",
            index: 0,
            t: 1.5
        }
    );
    assert!(bad.q[0].is_nan() && bad.t == 1.5);

    // A step size that differs from the inner integrator's fails after the noise was drawn;
    // the stream is rewound, so the next good step matches a fresh integrator's bit for bit.
    let mut mismatched = Langevin::new(verlet, 0.05, 1.0, 1.0, 3).unwrap();
    let mut state = start;
    let err = mismatched.step(&model, &mut state).unwrap_err();
    assert!(
        matches!(err, StepError::BadParameter { name: "h", .. }),
        "{err}"
    );
    assert_eq!(state, start);

    let (mut a, mut b) = (start, start);
    failing.step(&model, &mut a).unwrap();
    fresh.step(&model, &mut b).unwrap();
    assert_eq!(a.q[0].to_bits(), b.q[0].to_bits());
    assert_eq!(a.v[0].to_bits(), b.v[0].to_bits());

    /// A model whose mass matrix is not positive definite.
    struct Negative;
    impl ConstantMass<1> for Negative {}

    impl Inertia<1> for Negative {
        const CONSTANT_MASS: bool = true;
        fn mass_matrix(&self, _q: &SVector<f64, 1>, m: &mut SMatrix<f64, 1, 1>) {
            m[0] = -1.0;
        }
    }
    impl Potential<1> for Negative {
        fn potential(&self, _q: &SVector<f64, 1>) -> f64 {
            0.0
        }
        fn potential_gradient(&self, _q: &SVector<f64, 1>, grad: &mut SVector<f64, 1>) {
            grad.fill(0.0);
        }
    }
    let mut langevin = Langevin::new(verlet, 0.1, 1.0, 1.0, 3).unwrap();
    let mut state = start;
    let err = langevin.step(&Negative, &mut state).unwrap_err();
    assert!(
        matches!(err, StepError::NotPositiveDefinite { t, .. } if t == 0.0),
        "{err}"
    );
    assert!(err.to_string().contains("not positive definite"), "{err}");
    assert_eq!(state, start);
}
