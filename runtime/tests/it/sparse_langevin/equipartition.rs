//! Equipartition on both tiers against the exact stationary covariance of the discrete
//! chain.

use crate::support::as_fixed::AsFixed;
use mechanism_runtime::model::SparseInertia;
use mechanism_runtime::{
    DynState, Integrator, Langevin, SparseIntegrator, SparseLangevin, SparseSpook, Spook, State,
};
use nalgebra::DMatrix;

use super::{friction_exponential, seed, Bodies};

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
