//! Speedup of an ensemble over threads: 64 double pendula (Tao–Owhadi §4.1, SPOOK, `h = 1/600`,
//! a hundred seconds each, every member from its own starting angle of the first rod) on one thread
//! and on two, in the same run; the ratio of the two times is the speedup.
//!
//! ```sh
//! cargo bench --bench ensemble
//! ```
//!
//! The members are independent and each takes a few milliseconds, so the ideal on a machine
//! with two free cores is 2×; what is lost is thread start-up and the imbalance of the last
//! members.

use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use mechanism::ensemble::Ensemble;
use mechanism::models::DoublePendulum;
use mechanism::runtime::{Integrator, Spook, State, StepError};

/// Number of members.
const MEMBERS: usize = 64;
/// SPOOK's step size.
const H: f64 = 1.0 / 600.0;
/// Steps per member: a hundred seconds (a few milliseconds of work).
const STEPS: usize = 60_000;

/// Returns member `i`'s start: both rods straight at angle `θ_i` from the downward vertical,
/// at rest (`θ_i` from 0.2 to 2.0 rad).
fn start(model: &DoublePendulum, i: usize) -> State<4> {
    let theta = 0.2 + 1.8 * i as f64 / (MEMBERS - 1) as f64;
    let (s, c) = theta.sin_cos();
    let (x1, y1) = (model.l1 * s, -model.l1 * c);
    let r = model.l1 + model.l2;
    State::new(0.0, [x1, y1, r * s, -r * c], [0.0; 4])
}

/// Runs member `i` and returns its final height of the second bob.
fn member(model: &DoublePendulum, i: usize) -> Result<f64, StepError> {
    let mut state = start(model, i);
    let mut spook = Spook::new(H)?;
    for _ in 0..STEPS {
        spook.step(model, &mut state)?;
    }
    Ok(state.q[3])
}

fn ensemble(c: &mut Criterion) {
    let model = DoublePendulum::default();
    let members: Vec<usize> = (0..MEMBERS).collect();
    let mut group = c.benchmark_group("ensemble_64_double_pendula");
    group.sample_size(20);
    for threads in [1, 2] {
        let ensemble = Ensemble::new(members.clone()).threads(threads);
        group.bench_with_input(BenchmarkId::from_parameter(threads), &threads, |b, _| {
            b.iter(|| {
                black_box(
                    ensemble
                        .try_map(|m| member(&model, *m.parameters))
                        .expect("ensemble"),
                )
            })
        });
    }
    group.finish();

    // The ratio, measured here in one run (criterion's estimates above are per thread count).
    let time = |threads: usize| {
        let ensemble = Ensemble::new(members.clone()).threads(threads);
        (0..5)
            .map(|_| {
                let start = Instant::now();
                black_box(ensemble.try_map(|m| member(&model, *m.parameters))).expect("ensemble");
                start.elapsed().as_secs_f64()
            })
            .fold(f64::INFINITY, f64::min)
    };
    let (one, two) = (time(1), time(2));
    println!(
        "64 double pendula, best of 5: 1 thread {:.1} ms, 2 threads {:.1} ms, speedup {:.2}x",
        one * 1e3,
        two * 1e3,
        one / two
    );
}

criterion_group!(benches, ensemble);
criterion_main!(benches);
