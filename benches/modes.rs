//! Cost of the lowest 10 modes on the sparse tier (`linearization::sparse_modes`: one
//! factorization per trial shift, shift-invert Lanczos) and of finding the rest
//! (`linearization::sparse_equilibrium` from a guess 0.002 rad off, to a relative residual
//! of 1e-10), against the model size:
//! the hanging chain of `N` pendula (`N = 100, 1000, 10 000`) and the held ladder of `L` cells
//! (`L = 10, 100, 1000`). Criterion reports the time per analysis; divide by `N` or `L` for
//! the per-link cost.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use mechanism::runtime::linearization::{
    sparse_equilibrium, sparse_modes, EquilibriumSettings, SparseEquilibrium, SparseLinearizable,
    SparseModeSettings,
};
use mechanism::runtime::reference::{HeldLadder, PendulumChain, SpookLadder};

/// The chain of `n` bobs on rods of length `l` at angles `angle(i)` from hanging straight down.
fn chain_at(n: usize, l: f64, angle: impl Fn(usize) -> f64) -> Vec<f64> {
    let (mut x, mut y) = (0.0, 0.0);
    (0..n)
        .flat_map(|i| {
            x += l * angle(i).sin();
            y -= l * angle(i).cos();
            [x, y]
        })
        .collect()
}

/// Benchmarks the rest from `guess` and the lowest 10 modes about it, under `name/size`.
fn bench_model<S: SparseLinearizable>(
    c: &mut Criterion,
    name: &str,
    size: usize,
    model: &S,
    guess: &[f64],
) {
    // The relative residual's round-off floor grows with the chain: 1.2e-12 at N = 10 000.
    let settings = EquilibriumSettings {
        tolerance: 1e-10,
        ..EquilibriumSettings::default()
    };
    let rest: SparseEquilibrium = sparse_equilibrium(model, guess, &settings).expect("a rest");
    let modes = SparseModeSettings::default();
    let mut group = c.benchmark_group(name);
    group.sample_size(10);
    group.bench_with_input(BenchmarkId::new("lowest_10_modes", size), &size, |b, _| {
        b.iter(|| sparse_modes(black_box(model), &rest, &modes).expect("modes"))
    });
    group.bench_with_input(BenchmarkId::new("equilibrium", size), &size, |b, _| {
        b.iter(|| sparse_equilibrium(black_box(model), guess, &settings).expect("a rest"))
    });
    group.finish();
}

fn modes(c: &mut Criterion) {
    for n in [100, 1000, 10_000] {
        let chain = PendulumChain::new(n, 1.0, 1.0, 9.81);
        let guess = chain_at(n, 1.0, |i| 0.002 * (0.37 * i as f64).sin());
        bench_model(c, "modes/chain", n, &chain, &guess);
    }
    for links in [10, 100, 1000] {
        let ladder = HeldLadder::new(SpookLadder::new(links));
        let guess: Vec<f64> = ladder
            .rest()
            .iter()
            .enumerate()
            .map(|(i, x)| x + 0.002 * (0.7 * i as f64).sin())
            .collect();
        bench_model(c, "modes/held_ladder", links, &ladder, &guess);
    }
}

criterion_group!(benches, modes);
criterion_main!(benches);
