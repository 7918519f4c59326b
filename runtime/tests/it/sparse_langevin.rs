//! The Geometric Langevin Algorithm on the sparse tier (Tao–Owhadi 2014 §4.3): the block-wise
//! Ornstein–Uhlenbeck step against its closed form, equipartition against the exact stationary
//! covariance of the discrete chain and against the fixed-size tier on the same model, the same
//! bits as the fixed-size tier for one body, no allocation per step, typed errors.

use crate::support::allocations;
use crate::support::as_fixed::{relative_distance, AsFixed};
use mechanism_runtime::model::{
    SparseAppliedForces, SparseConstantMass, SparseHolonomic, SparseInertia, SparseNonholonomic,
    SparsePotential,
};
use mechanism_runtime::reference::PendulumChain;
use mechanism_runtime::{
    DynState, Integrator, Langevin, SparseIntegrator, SparseLangevin, SparseSpook, Spook, State,
    StepError, StepReport, Verlet,
};
use nalgebra::{DMatrix, DVector};

/// Returns the seed `default`, or the one in `MECHANISM_TEST_SEED` (the tolerances below hold
/// for any seed: they are 5 standard errors of the estimators).
fn seed(default: u64) -> u64 {
    let seed = std::env::var("MECHANISM_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default);
    println!("seed {seed}");
    seed
}

/// Free bodies with constant, non-diagonal mass blocks in a potential `V = ½ k |q|²` (`k = 0`:
/// free), without constraints.
struct Bodies {
    sizes: Vec<usize>,
    blocks: Vec<f64>,
    stiffness: f64,
}

/// Returns `R Rᵀ + ½ I` for a fixed `3 × 3` matrix `R`, row-major: eigenvalues ≥ ½.
fn spd3() -> [f64; 9] {
    let r = DMatrix::from_row_slice(3, 3, &[1.0, 0.3, -0.2, 0.1, 0.8, 0.4, -0.6, 0.2, 1.1]);
    let m = &r * r.transpose() + DMatrix::identity(3, 3) * 0.5;
    let mut out = [0.0; 9];
    for i in 0..3 {
        for j in 0..3 {
            out[3 * i + j] = m[(i, j)];
        }
    }
    out
}

impl Bodies {
    /// Three bodies: a 2 × 2 block, a 3 × 3 block and a point mass.
    fn three(stiffness: f64) -> Self {
        let mut blocks = vec![2.0, 0.6, 0.6, 1.0];
        blocks.extend(spd3());
        blocks.push(0.7);
        Bodies {
            sizes: vec![2, 3, 1],
            blocks,
            stiffness,
        }
    }

    /// Returns the whole mass matrix, dense, to compute closed forms independently.
    fn dense_mass(&self) -> DMatrix<f64> {
        let n = self.coordinate_count();
        let mut m = DMatrix::zeros(n, n);
        let (mut first, mut offset) = (0, 0);
        for &s in &self.sizes {
            for i in 0..s {
                for j in 0..s {
                    m[(first + i, first + j)] = self.blocks[offset + s * i + j];
                }
            }
            first += s;
            offset += s * s;
        }
        m
    }
}

impl SparseConstantMass for Bodies {}

impl SparseInertia for Bodies {
    fn coordinate_count(&self) -> usize {
        self.sizes.iter().sum()
    }
    fn body_sizes(&self) -> &[usize] {
        &self.sizes
    }
    fn constant_mass(&self) -> bool {
        true
    }
    fn mass_blocks(&self, _q: &[f64], blocks: &mut [f64]) {
        blocks.copy_from_slice(&self.blocks);
    }
    fn kinetic_energy(&self, _q: &[f64], v: &[f64]) -> f64 {
        let (mut first, mut offset, mut energy) = (0, 0, 0.0);
        for &s in &self.sizes {
            for i in 0..s {
                for j in 0..s {
                    energy += 0.5 * v[first + i] * self.blocks[offset + s * i + j] * v[first + j];
                }
            }
            first += s;
            offset += s * s;
        }
        energy
    }
}

impl SparsePotential for Bodies {
    fn potential(&self, q: &[f64]) -> f64 {
        0.5 * self.stiffness * q.iter().map(|x| x * x).sum::<f64>()
    }
    fn potential_gradient(&self, q: &[f64], grad: &mut [f64]) {
        for (g, x) in grad.iter_mut().zip(q) {
            *g = self.stiffness * x;
        }
    }
}

impl SparseHolonomic for Bodies {
    fn constraint_count(&self) -> usize {
        0
    }
    fn jacobian_pattern(&self) -> &[(usize, usize)] {
        &[]
    }
    fn constraints_and_jacobian(&self, _q: &[f64], _t: f64, _g: &mut [f64], _jac: &mut [f64]) {}
}

impl SparseNonholonomic for Bodies {}
impl SparseAppliedForces for Bodies {}

/// The free flight `q ← q + h v`, `v` unchanged: an inner integrator that leaves the
/// Ornstein–Uhlenbeck step's velocities as they are.
#[derive(Debug)]
struct Drift {
    h: f64,
}

impl<Model: ?Sized> SparseIntegrator<Model> for Drift {
    fn step(&mut self, _model: &Model, state: &mut DynState) -> Result<StepReport, StepError> {
        for (q, v) in state.q.iter_mut().zip(&state.v) {
            *q += self.h * v;
        }
        state.t += self.h;
        Ok(StepReport::default())
    }
}

/// Returns `e^{−γh M⁻¹}` from nalgebra's own symmetric eigendecomposition of `M`.
fn friction_exponential(mass: &DMatrix<f64>, gamma_h: f64) -> DMatrix<f64> {
    let eigen = mass.clone().symmetric_eigen();
    let decay = eigen.eigenvalues.map(|d| (-gamma_h / d).exp());
    &eigen.eigenvectors * DMatrix::from_diagonal(&decay) * eigen.eigenvectors.transpose()
}

/// One step from a fixed `v_0` moves `p = M v` to `N(e^{−γhM⁻¹} p_0, kT M (I − e^{−2γhM⁻¹}))`
/// (Tao–Owhadi eq. 27 with `V = 0`): the sample mean and covariance of `p` over many one-step
/// runs match both, entry by entry, within 5 standard errors of the estimators.
#[test]
fn ornstein_uhlenbeck_step_is_exact_on_non_diagonal_blocks() {
    let model = Bodies::three(0.0);
    let (gamma, h, kt) = (0.8, 0.5, 1.3);
    let mass = model.dense_mass();
    let n = mass.nrows();
    let v0 = DVector::from_column_slice(&[1.0, -2.0, 0.5, 3.0, -1.0, 2.5]);
    let exponential = friction_exponential(&mass, gamma * h);
    let mean = &exponential * (&mass * &v0);
    let covariance = (&mass * (DMatrix::identity(n, n) - &exponential * &exponential)) * kt;

    let mut langevin = SparseLangevin::new(&model, Drift { h }, h, gamma, kt, seed(1995)).unwrap();
    let start = DynState::new(0.0, vec![0.0; n], v0.as_slice().to_vec());
    let samples = 40_000;
    let (mut sum, mut products) = (DVector::zeros(n), DMatrix::zeros(n, n));
    let mut state = start.clone();
    for _ in 0..samples {
        state.clone_from(&start);
        langevin.step(&model, &mut state).unwrap();
        let p = &mass * DVector::from_column_slice(&state.v);
        let deviation = &p - &mean;
        sum += &p;
        products += &deviation * deviation.transpose();
    }
    let count = samples as f64;
    let (sample_mean, sample_covariance) = (sum / count, products / count);

    let mut worst: f64 = 0.0;
    for i in 0..n {
        // Var of the sample mean: Σᵢᵢ/n; of (1/n) Σ (pᵢ − μᵢ)(pⱼ − μⱼ): (ΣᵢᵢΣⱼⱼ + Σᵢⱼ²)/n.
        let sigma = (covariance[(i, i)] / count).sqrt();
        let z = (sample_mean[i] - mean[i]).abs() / sigma;
        assert!(
            z < 5.0,
            "mean of p[{i}]: {} vs {} ({z:.1}σ)",
            sample_mean[i],
            mean[i]
        );
        worst = worst.max(z);
        for j in 0..n {
            let c = &covariance;
            let sigma = ((c[(i, i)] * c[(j, j)] + c[(i, j)] * c[(i, j)]) / count).sqrt();
            let z = (sample_covariance[(i, j)] - c[(i, j)]).abs() / sigma;
            assert!(
                z < 5.0,
                "Cov p[{i}, {j}]: {} vs {} ({z:.1}σ)",
                sample_covariance[(i, j)],
                c[(i, j)]
            );
            worst = worst.max(z);
        }
    }
    // The test can fail: the scalar friction e^{−γh} in place of e^{−γhM⁻¹} is far outside.
    let scalar = (&mass * &v0) * (-gamma * h).exp();
    let scalar_z = (0..n)
        .map(|i| (scalar[i] - mean[i]).abs() / (covariance[(i, i)] / count).sqrt())
        .fold(0.0, f64::max);
    println!(
        "{samples} one-step samples: largest deviation {worst:.2}σ over the mean and the \
         covariance; a scalar friction e^(−γh) would be off by {scalar_z:.0}σ"
    );
    assert!(scalar_z > 20.0);
}

/// Returns the exact stationary covariance of `x = (q, v)` under GLA with symplectic Euler (SPOOK
/// without rows) on `M v̇ = −k q`: the fixed point of `C = A C Aᵀ + W`, `A = B diag(I, E)`,
/// `W = B diag(0, kT (I − E²) M⁻¹) Bᵀ`, `B` the Euler map, `E = e^{−γhM⁻¹}` (by doubling).
fn gla_euler_covariance(mass: &DMatrix<f64>, k: f64, gamma: f64, kt: f64, h: f64) -> DMatrix<f64> {
    let n = mass.nrows();
    let identity = DMatrix::<f64>::identity(n, n);
    let inverse = mass.clone().try_inverse().unwrap();
    let e = friction_exponential(mass, gamma * h);
    // v' = v − h k M⁻¹ q, q' = q + h v'.
    let kick = &inverse * (-h * k);
    let mut b = DMatrix::zeros(2 * n, 2 * n);
    b.view_mut((0, 0), (n, n))
        .copy_from(&(&identity + &kick * h));
    b.view_mut((0, n), (n, n)).copy_from(&(&identity * h));
    b.view_mut((n, 0), (n, n)).copy_from(&kick);
    b.view_mut((n, n), (n, n)).copy_from(&identity);
    let mut d = DMatrix::identity(2 * n, 2 * n);
    d.view_mut((n, n), (n, n)).copy_from(&e);
    let mut s = DMatrix::zeros(2 * n, 2 * n);
    s.view_mut((n, n), (n, n))
        .copy_from(&((&identity - &e * &e) * &inverse * kt));
    let mut a = &b * d;
    let mut c = &b * s * b.transpose();
    for _ in 0..60 {
        c = &c + &a * &c * a.transpose();
        a = &a * &a;
    }
    c
}

/// Batch means of a correlated series: the mean and its standard error from equal batches
/// much longer than the correlation time.
fn batch_means(series: &[f64], batches: usize) -> (f64, f64) {
    let size = series.len() / batches;
    let means: Vec<f64> = series
        .chunks_exact(size)
        .map(|batch| batch.iter().sum::<f64>() / size as f64)
        .collect();
    let b = means.len() as f64;
    let mean = means.iter().sum::<f64>() / b;
    let variance = means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (b - 1.0);
    (mean, (variance / b).sqrt())
}

/// Equipartition: `⟨½ vᵀ M v⟩ / n` of GLA around SPOOK (no rows: symplectic Euler) matches the
/// exact stationary value of the discrete chain (`kT/2` up to the inner integrator's bias,
/// printed) within 5 batch-means standard errors, on the sparse tier and on the fixed-size tier
/// via `AsFixed`, and the two tiers agree within their joint error.
#[test]
fn equipartition_on_both_tiers() {
    let model = Bodies::three(1.0);
    let (gamma, h, kt) = (1.0, 0.05, 0.5);
    let mass = model.dense_mass();
    let n = mass.nrows();
    let c = gla_euler_covariance(&mass, model.stiffness, gamma, kt, h);
    let exact = 0.5 * (&mass * c.view((n, n), (n, n))).trace() / n as f64;
    let (steps, batches) = (1_000_000, 100);
    println!(
        "GLA + SPOOK (symplectic Euler), {n} coordinates in blocks {:?}, γ = {gamma}, \
         kT = {kt}, h = {h}: exact discrete ⟨KE⟩/n = {exact:.5} (kT/2 = {:.5}, bias {:+.2}%)",
        model.sizes,
        kt / 2.0,
        100.0 * (exact / (kt / 2.0) - 1.0)
    );

    let spook = SparseSpook::new(&model, h).unwrap();
    let mut sparse = SparseLangevin::new(&model, spook, h, gamma, kt, seed(27)).unwrap();
    let mut state = DynState::new(0.0, vec![0.0; n], vec![0.0; n]);
    for _ in 0..20_000 {
        sparse.step(&model, &mut state).unwrap();
    }
    let mut energies = Vec::with_capacity(steps);
    for _ in 0..steps {
        sparse.step(&model, &mut state).unwrap();
        energies.push(model.kinetic_energy(&state.q, &state.v) / n as f64);
    }
    let (sparse_mean, sparse_sigma) = batch_means(&energies, batches);

    let fixed_model = AsFixed(&model);
    let mut fixed = Langevin::new(Spook::<6, 0>::new(h).unwrap(), h, gamma, kt, seed(28)).unwrap();
    let mut state = State::new(0.0, [0.0; 6], [0.0; 6]);
    for _ in 0..20_000 {
        fixed.step(&fixed_model, &mut state).unwrap();
    }
    energies.clear();
    for _ in 0..steps {
        fixed.step(&fixed_model, &mut state).unwrap();
        energies.push(model.kinetic_energy(state.q.as_slice(), state.v.as_slice()) / n as f64);
    }
    let (fixed_mean, fixed_sigma) = batch_means(&energies, batches);

    for (tier, mean, sigma) in [
        ("sparse", sparse_mean, sparse_sigma),
        ("fixed-size", fixed_mean, fixed_sigma),
    ] {
        println!(
            "  {tier}: ⟨KE⟩/n = {mean:.5} ± {sigma:.5} ({:.2}σ from exact)",
            (mean - exact).abs() / sigma
        );
        assert!(sigma < 0.01 * exact, "{tier}: σ = {sigma} too large");
        assert!(
            (mean - exact).abs() < 5.0 * sigma,
            "{tier}: {mean} vs {exact}"
        );
        // Equipartition itself, within 5σ plus the discrete chain's own bias.
        let bound = 5.0 * sigma + (exact - kt / 2.0).abs();
        assert!((mean - kt / 2.0).abs() < bound, "{tier}: {mean} vs kT/2");
    }
    let joint = (sparse_sigma.powi(2) + fixed_sigma.powi(2)).sqrt();
    assert!((sparse_mean - fixed_mean).abs() < 5.0 * joint);
}

/// Steps `model` from `start` with GLA around SPOOK on both tiers with the same seed and returns
/// the largest relative distance between their states over `steps` steps.
fn langevin_dense_vs_sparse<Model, const N: usize, const M: usize>(
    model: &Model,
    start: &DynState,
    h: f64,
    steps: usize,
) -> f64
where
    Model: SparseConstantMass
        + SparsePotential
        + SparseHolonomic
        + SparseNonholonomic
        + SparseAppliedForces,
{
    let (gamma, kt, seed) = (0.5, 0.2, seed(11));
    let spook = SparseSpook::new(model, h).unwrap();
    let mut sparse = SparseLangevin::new(model, spook, h, gamma, kt, seed).unwrap();
    let mut fixed = Langevin::new(Spook::<N, M>::new(h).unwrap(), h, gamma, kt, seed).unwrap();
    let mut sparse_state = start.clone();
    let mut fixed_state = State::<N>::new(
        start.t,
        start.q.clone().try_into().unwrap(),
        start.v.clone().try_into().unwrap(),
    );
    let mut distance = 0.0f64;
    for _ in 0..steps {
        sparse.step(model, &mut sparse_state).unwrap();
        fixed.step(&AsFixed(model), &mut fixed_state).unwrap();
        distance = distance
            .max(relative_distance(&sparse_state.q, fixed_state.q.as_slice()))
            .max(relative_distance(&sparse_state.v, fixed_state.v.as_slice()));
    }
    distance
}

/// Jacobi rotations never mix coordinates whose entries of `M` vanish, so the fixed-size tier's
/// eigenbasis of a block-diagonal `M` is the sparse tier's block by block, in the same order;
/// the noise is drawn in coordinate order on both. With the same seed the two tiers therefore
/// follow the same path, up to the round-off of their different SPOOK solves (which the SPOOK
/// tests bound by 1e-12 over 1000 steps without noise).
#[test]
fn both_tiers_follow_the_same_path_with_the_same_noise() {
    let chain = PendulumChain::tao_owhadi(5);
    let on_chain =
        langevin_dense_vs_sparse::<_, 10, 5>(&chain, &chain.tao_owhadi_state(), 0.01, 1000);
    let bodies = Bodies::three(1.0);
    let start = DynState::new(0.0, vec![0.5, -0.2, 0.1, 0.3, -0.4, 0.2], vec![0.0; 6]);
    let on_bodies = langevin_dense_vs_sparse::<_, 6, 0>(&bodies, &start, 0.05, 1000);
    println!(
        "GLA + SPOOK, same seed, 1000 steps: largest relative distance of the tiers' states \
         {on_chain:.1e} (chain of 5) and {on_bodies:.1e} (blocks 2, 3, 1)"
    );
    assert!(on_chain < 1e-10, "{on_chain}");
    assert!(on_bodies < 1e-10, "{on_bodies}");
}

/// One body: the sparse tier's one block is the fixed-size tier's whole `M`, decomposed by the
/// same Jacobi code, and the noise is drawn in the same order, so with the same seed both tiers
/// give the same bits (Verlet with `V = 0` is the free flight of `Drift`).
#[test]
fn one_body_gives_the_fixed_size_bits() {
    let model = Bodies {
        sizes: vec![3],
        blocks: spd3().to_vec(),
        stiffness: 0.0,
    };
    let (gamma, h, kt) = (0.6, 0.1, 0.9);
    let mut sparse = SparseLangevin::new(&model, Drift { h }, h, gamma, kt, seed(3)).unwrap();
    let mut fixed = Langevin::new(Verlet::<3>::new(h).unwrap(), h, gamma, kt, seed(3)).unwrap();
    let (q0, v0) = ([0.1, -0.2, 0.3], [1.0, 0.5, -1.5]);
    let mut a = DynState::new(0.0, q0.to_vec(), v0.to_vec());
    let mut b = State::new(0.0, q0, v0);
    for step in 0..1000 {
        sparse.step(&model, &mut a).unwrap();
        fixed.step(&AsFixed(&model), &mut b).unwrap();
        let bits = |x: &[f64]| x.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&a.v), bits(b.v.as_slice()), "v at step {step}");
        assert_eq!(bits(&a.q), bits(b.q.as_slice()), "q at step {step}");
        assert_eq!(a.t.to_bits(), b.t.to_bits());
    }
}

#[test]
fn steps_on_a_chain_of_1000_do_not_allocate() {
    let chain = PendulumChain::tao_owhadi(1000);
    let h = 0.01;
    let spook = SparseSpook::new(&chain, h).unwrap();
    let mut langevin = SparseLangevin::new(&chain, spook, h, 1.0, 0.1, seed(10)).unwrap();
    let mut state = chain.tao_owhadi_state();
    langevin.step(&chain, &mut state).unwrap();
    let before = allocations();
    for _ in 0..100 {
        langevin.step(&chain, &mut state).unwrap();
    }
    assert_eq!(allocations() - before, 0);
    assert!((state.t - 1.01).abs() < 1e-12);
}

/// Steps `failing` into an error with `model` from `start` and asserts the state is unchanged
/// and the noise stream rewound: the next good step matches a fresh wrapper's bit for bit.
fn assert_failure_leaves_everything_unchanged<Model: SparseInertia>(
    model: &Model,
    failing: &mut SparseLangevin<Drift>,
    good: &Bodies,
) -> StepError {
    let start = DynState::new(0.5, vec![0.1; 6], vec![1.0, -1.0, 0.5, 0.0, 2.0, -0.5]);
    let mut state = start.clone();
    let err = SparseIntegrator::step(failing, model, &mut state).unwrap_err();
    assert_eq!(state, start, "{err}");
    let mut fresh = SparseLangevin::new(good, Drift { h: 0.1 }, 0.1, 1.0, 1.0, 4).unwrap();
    let mut other = start.clone();
    failing.step(good, &mut state).unwrap();
    fresh.step(good, &mut other).unwrap();
    assert_eq!(state, other, "after {err}");
    err
}

#[test]
fn bad_models_states_and_steps_are_typed_errors() {
    let good = Bodies::three(1.0);
    let wrapper = || SparseLangevin::new(&good, Drift { h: 0.1 }, 0.1, 1.0, 1.0, 4).unwrap();

    // The 3 × 3 block of body 1 (coordinates 2..5) with a negative eigenvalue.
    let mut indefinite = Bodies::three(1.0);
    indefinite.blocks[4..13].copy_from_slice(&[1.0, 2.0, 0.0, 2.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
    let err = assert_failure_leaves_everything_unchanged(&indefinite, &mut wrapper(), &good);
    assert!(
        matches!(err, StepError::NotPositiveDefinite { row: 2..=4, pivot, t: 0.5, .. }
            if (pivot + 1.0).abs() < 1e-12),
        "{err}"
    );

    // The fixed-size tier names the same row: its Jacobi rotations keep the blocks apart.
    let fixed = |model: &Bodies| {
        let mut langevin = Langevin::new(Verlet::<6>::new(0.1).unwrap(), 0.1, 1.0, 1.0, 4).unwrap();
        let mut state = State::new(0.5, [0.1; 6], [1.0; 6]);
        langevin.step(&AsFixed(model), &mut state).unwrap_err()
    };
    assert_eq!(fixed(&indefinite), err);

    // A singular 2 × 2 block of body 0.
    let mut singular = Bodies::three(1.0);
    singular.blocks[..4].copy_from_slice(&[1.0, 1.0, 1.0, 1.0]);
    let err = assert_failure_leaves_everything_unchanged(&singular, &mut wrapper(), &good);
    assert!(matches!(err, StepError::Singular { t: 0.5, .. }), "{err}");

    // A non-finite entry of a block, named by its index among the concatenated blocks.
    let mut nan = Bodies::three(1.0);
    nan.blocks[6] = f64::NAN;
    let err = assert_failure_leaves_everything_unchanged(&nan, &mut wrapper(), &good);
    assert_eq!(
        err,
        StepError::NonFinite {
            quantity: "mass matrix",
            index: 6,
            t: 0.5
        }
    );
    // The fixed-size tier counts the entry in its column-major N × N matrix: (2, 4) is 26.
    assert_eq!(
        fixed(&nan),
        StepError::NonFinite {
            quantity: "mass matrix",
            index: 26,
            t: 0.5
        }
    );

    // An inner step size that differs from the wrapper's, found after the noise was drawn.
    let mut mismatched = wrapper();
    mismatched.inner_mut().h = 0.05;
    let start = DynState::new(0.5, vec![0.1; 6], vec![1.0; 6]);
    let mut state = start.clone();
    let err = mismatched.step(&good, &mut state).unwrap_err();
    assert!(
        matches!(err, StepError::BadParameter { name: "h", .. }),
        "{err}"
    );
    assert_eq!(state, start);
    mismatched.inner_mut().h = 0.1;
    let err = assert_failure_leaves_everything_unchanged(&indefinite, &mut mismatched, &good);
    assert!(matches!(err, StepError::NotPositiveDefinite { .. }));

    // A model other than the one the wrapper was built for, and a state that does not fit.
    let foreign = Bodies {
        sizes: vec![3, 3],
        blocks: [spd3(), spd3()].concat(),
        stiffness: 1.0,
    };
    let err = assert_failure_leaves_everything_unchanged(&foreign, &mut wrapper(), &good);
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
    let mut short = DynState::new(0.0, vec![0.0; 5], vec![0.0; 5]);
    assert!(matches!(
        wrapper().step(&good, &mut short),
        Err(StepError::InvalidModel {
            what: "state q",
            index: 5,
            ..
        })
    ));
    let mut infinite = DynState::new(0.0, vec![0.0; 6], vec![f64::INFINITY; 6]);
    assert!(matches!(
        wrapper().step(&good, &mut infinite),
        Err(StepError::NonFinite {
            quantity: "v",
            index: 0,
            ..
        })
    ));

    // Construction: body sizes that do not cover the coordinates, bad parameters.
    struct Uncovered(Bodies);
    impl SparseConstantMass for Uncovered {}

    impl SparseInertia for Uncovered {
        fn coordinate_count(&self) -> usize {
            7
        }
        fn body_sizes(&self) -> &[usize] {
            self.0.body_sizes()
        }
        fn constant_mass(&self) -> bool {
            true
        }
        fn mass_blocks(&self, q: &[f64], blocks: &mut [f64]) {
            self.0.mass_blocks(q, blocks);
        }
        fn kinetic_energy(&self, q: &[f64], v: &[f64]) -> f64 {
            self.0.kinetic_energy(q, v)
        }
    }
    let err = SparseLangevin::new(
        &Uncovered(Bodies::three(1.0)),
        Drift { h: 0.1 },
        0.1,
        1.0,
        1.0,
        0,
    )
    .unwrap_err();
    assert!(
        matches!(
            err,
            StepError::InvalidModel {
                what: "body sizes",
                index: 6,
                ..
            }
        ),
        "{err}"
    );
    for (h, friction, temperature) in [(0.0, 1.0, 1.0), (0.1, -1.0, 1.0), (0.1, 1.0, f64::NAN)] {
        assert!(SparseLangevin::new(&good, Drift { h: 0.1 }, h, friction, temperature, 0).is_err());
    }
}
