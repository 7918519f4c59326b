//! Force evaluation of the TIP3P water cluster with `N = 100` molecules (Tao–Owhadi §4.3,
//! 4 950 molecule pairs, 900 coordinates): the generated `models::WaterCluster`'s
//! `potential_gradient` (one pair-sum kernel looped over the pairs) against a plain
//! hand-written all-pairs loop of closed-form Coulomb and Lennard-Jones terms
//! (`mechanism::runtime::reference::water_pairs`), at the same configuration.
//!
//! ```sh
//! cargo bench --bench water_forces
//! ```
//!
//! Criterion reports each on its own. The lines printed at the end are measured in one run:
//! [`REPETITIONS`] batches of each, interleaved (generated, hand-written, hand-written,
//! generated, …) so that load on the machine affects both alike, and the median of the ratios
//! generated / hand-written of the back-to-back pairs (the issue's target is ≤ 1.2). Twice:
//! without a cutoff (the paper's all-pairs sum, the model's default), and with the smooth
//! cutoff on the O–O distance from [`CUTOFF`]`.0` to [`CUTOFF`]`.1` Å against the
//! hand-written loop with the same quintic switch (`hand_written_switched`).

use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion};
use mechanism::models::WaterCluster;
use mechanism::runtime::model::SparsePotential;
use mechanism::runtime::reference::water_pairs;

/// Molecules of the cluster (the paper's large case).
const MOLECULES: usize = 100;
/// Batches of each evaluation in the interleaved ratio.
const REPETITIONS: usize = 15;
/// Gradient evaluations per batch.
const EVALUATIONS: usize = 200;
/// The cutoff's switching region `(r_on, r_off)` in Å (the printed line says how many of the
/// grid start's 4 950 pairs lie inside, in and beyond it).
const CUTOFF: (f64, f64) = (8.0, 10.0);

/// The paper's `N = 100` start: a 5 × 5 × 4 grid, random orientations (seed 2014).
fn cluster() -> (WaterCluster, Vec<f64>) {
    let model = WaterCluster::new(MOLECULES).expect("100 molecules");
    let (q, _) = model.initial_cluster(50.0, 2014);
    (model, q)
}

fn forces(c: &mut Criterion) {
    let (model, q) = cluster();
    let mut grad = vec![0.0; q.len()];
    let mut group = c.benchmark_group("water_forces_n100");
    group.bench_function("generated", |b| {
        b.iter(|| model.potential_gradient(black_box(&q), black_box(&mut grad)))
    });
    group.bench_function("hand_written", |b| {
        b.iter(|| water_pairs::hand_written(black_box(&q), black_box(&mut grad)))
    });
    let mut switched = model.clone();
    (switched.r_on, switched.r_off) = CUTOFF;
    group.bench_function("generated_cutoff", |b| {
        b.iter(|| switched.potential_gradient(black_box(&q), black_box(&mut grad)))
    });
    group.bench_function("hand_written_cutoff", |b| {
        b.iter(|| {
            water_pairs::hand_written_switched(
                black_box(&q),
                black_box(&mut grad),
                CUTOFF.0,
                CUTOFF.1,
            )
        })
    });
    group.finish();
    let mut distances = vec![0.0; MOLECULES * (MOLECULES - 1) / 2];
    model.oxygen_distances(&q, &mut distances);
    let inside = distances.iter().filter(|&&r| r <= CUTOFF.0).count();
    let beyond = distances.iter().filter(|&&r| r >= CUTOFF.1).count();
    let (mut g1, mut g2, mut g3, mut g4) = (
        vec![0.0; q.len()],
        vec![0.0; q.len()],
        vec![0.0; q.len()],
        vec![0.0; q.len()],
    );
    interleaved(
        "no cutoff",
        &mut || model.potential_gradient(black_box(&q), black_box(&mut g1)),
        &mut || {
            black_box(water_pairs::hand_written(black_box(&q), black_box(&mut g2)));
        },
    );
    interleaved(
        &format!(
            "cutoff {}–{} Å ({inside} pairs inside, {} switched, {beyond} skipped)",
            CUTOFF.0,
            CUTOFF.1,
            distances.len() - inside - beyond
        ),
        &mut || switched.potential_gradient(black_box(&q), black_box(&mut g3)),
        &mut || {
            black_box(water_pairs::hand_written_switched(
                black_box(&q),
                black_box(&mut g4),
                CUTOFF.0,
                CUTOFF.1,
            ));
        },
    );
}

/// Returns the seconds per evaluation of `EVALUATIONS` calls of `f`.
fn batch(f: &mut dyn FnMut()) -> f64 {
    let clock = Instant::now();
    for _ in 0..EVALUATIONS {
        f();
    }
    clock.elapsed().as_secs_f64() / EVALUATIONS as f64
}

/// Prints the medians and the median ratio of back-to-back batches of `generated` and
/// `hand`.
fn interleaved(label: &str, generated: &mut dyn FnMut(), hand: &mut dyn FnMut()) {
    let (mut g, mut h, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for k in 0..REPETITIONS {
        let (a, b) = if k % 2 == 0 {
            let a = batch(generated);
            (a, batch(hand))
        } else {
            let b = batch(hand);
            (batch(generated), b)
        };
        g.push(a);
        h.push(b);
        ratios.push(a / b);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    println!(
        "water N = {MOLECULES} (4950 pairs), {label}: generated {:.1} µs, hand-written {:.1} µs \
         per gradient; median ratio generated / hand-written {:.3} (target ≤ 1.2)",
        median(&mut g) * 1e6,
        median(&mut h) * 1e6,
        median(&mut ratios)
    );
}

criterion_group!(benches, forces);
criterion_main!(benches);
