//! Per-step cost of SPOOK on the chain and the ladder written with families (`mechanism!`,
//! `mechanism::models`) against the hand-written sparse models
//! `runtime::reference::{PendulumChain, SpookLadder}`: the chain of `N = 10 … 10 000` pendula
//! (Tao–Owhadi §4.2, `h = 0.05`) and the ladder of `L = 10 … 1000` links (Lacoursière §6,
//! `h = 1/60`), each pair from the same start.
//!
//! ```sh
//! cargo bench --bench families
//! ```
//!
//! Criterion reports each model and size on its own. The table printed at the end is measured
//! in one run: for each size, [`REPETITIONS`] runs of each model from the start, interleaved
//! (generated, hand-written, hand-written, generated, …) so that load on the machine affects
//! both alike. It gives the medians in ns per step, the median of the ratios generated /
//! hand-written of the back-to-back pairs (the target is ≤ 1.1), the entries of SPOOK's factor
//! for each model, and the exponent of cost against size fitted by least squares in log-log (1
//! for a linear cost).
//!
//! The macro's expansion time and code do not depend on the sizes:
//! `cargo run -p mechanism-dsl --release --example chains`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mechanism::models::{Ladder, PendulumChain as Chain};
use mechanism::runtime::model::{SparseHolonomic, SparseInertia, SparseNonholonomic};
use mechanism::runtime::reference::fit::loglog_slope;
use mechanism::runtime::reference::{PendulumChain, SpookLadder};
use mechanism::runtime::{DynState, SparseIntegrator, SparseSpook};

/// The chain's step size (Tao–Owhadi §4.2, as in `examples/pendulum_chain.rs`).
const CHAIN_H: f64 = 0.05;
/// The ladder's step size (Lacoursière §6).
const LADDER_H: f64 = 1.0 / 60.0;
/// The chain's sizes `N`.
const CHAIN_SIZES: [usize; 4] = [10, 100, 1000, 10_000];
/// The ladder's sizes `L`.
const LADDER_SIZES: [usize; 3] = [10, 100, 1000];
/// Runs of each model per size in the interleaved table.
const REPETITIONS: usize = 9;
/// The least duration of one run of the hand-written model in the interleaved table, in
/// seconds: the number of steps per run is doubled until a run takes this long.
const RUN_SECONDS: f64 = 0.05;

/// Returns the seconds that `steps` steps of `integrator` on `model` from `start` take.
fn time_steps<I, Model>(
    integrator: &mut I,
    model: &Model,
    start: &DynState,
    state: &mut DynState,
    steps: u64,
) -> f64
where
    I: SparseIntegrator<Model>,
{
    state.clone_from(start);
    let clock = Instant::now();
    for _ in 0..steps {
        integrator.step(black_box(model), state).expect("step");
    }
    clock.elapsed().as_secs_f64()
}

/// One model stepped by SPOOK from its start state.
struct Run<Model> {
    model: Model,
    spook: SparseSpook,
    start: DynState,
    state: DynState,
}

impl<Model> Run<Model>
where
    Model: SparseInertia + SparseHolonomic + SparseNonholonomic,
    SparseSpook: SparseIntegrator<Model>,
{
    fn new(model: Model, h: f64, start: DynState) -> Self {
        let spook = SparseSpook::new(&model, h).expect("valid model");
        let state = start.clone();
        Run {
            model,
            spook,
            start,
            state,
        }
    }

    /// Returns the seconds that `steps` steps from the start take.
    fn time(&mut self, steps: u64) -> f64 {
        time_steps(
            &mut self.spook,
            &self.model,
            &self.start,
            &mut self.state,
            steps,
        )
    }
}

/// The generated and the hand-written model of one size.
struct Pair<Generated, Hand> {
    size: usize,
    generated: Run<Generated>,
    hand: Run<Hand>,
}

/// Returns the generated chain of `n` pendula and the hand-written one, from Tao–Owhadi's start.
fn chains(n: usize) -> Pair<Chain, PendulumChain> {
    let hand = PendulumChain::tao_owhadi(n);
    let start = hand.tao_owhadi_state();
    Pair {
        size: n,
        generated: Run::new(Chain::new(n).expect("n ≥ 1"), CHAIN_H, start.clone()),
        hand: Run::new(hand, CHAIN_H, start),
    }
}

/// Returns the generated ladder of `links` links and the hand-written one, lying horizontally.
fn ladders(links: usize) -> Pair<Ladder, SpookLadder> {
    let hand = SpookLadder::new(links);
    let start = hand.horizontal_state();
    Pair {
        size: links,
        generated: Run::new(Ladder::new(links).expect("L ≥ 1"), LADDER_H, start.clone()),
        hand: Run::new(hand, LADDER_H, start),
    }
}

/// Benchmarks both models of every pair in the group `name`, with the size as throughput.
fn group<Generated, Hand>(c: &mut Criterion, name: &str, pairs: &mut [Pair<Generated, Hand>])
where
    Generated: SparseInertia + SparseHolonomic + SparseNonholonomic,
    Hand: SparseInertia + SparseHolonomic + SparseNonholonomic,
    SparseSpook: SparseIntegrator<Generated> + SparseIntegrator<Hand>,
{
    let mut group = c.benchmark_group(name);
    group.sample_size(20);
    for pair in pairs {
        group.throughput(Throughput::Elements(pair.size as u64));
        let id = |label| BenchmarkId::new(label, pair.size);
        group.bench_function(id("generated"), |b| {
            b.iter_custom(|steps| Duration::from_secs_f64(pair.generated.time(steps)))
        });
        group.bench_function(id("hand_written"), |b| {
            b.iter_custom(|steps| Duration::from_secs_f64(pair.hand.time(steps)))
        });
    }
    group.finish();
}

/// One row of the interleaved table: the median seconds per step of each model, the median of
/// the ratios generated / hand-written of the repetitions (each pair measured back to back), and the
/// entries of each model's factor `L` (SPOOK numbers the rows after the bodies they touch,
/// ties in the model's order, so the fill can differ).
struct Row {
    size: usize,
    hand: f64,
    generated: f64,
    ratio: f64,
    hand_fill: usize,
    generated_fill: usize,
}

/// Returns the median of `values`.
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Measures one pair with interleaved runs of equal length; the order alternates from one
/// repetition to the next.
fn interleaved<Generated, Hand>(pair: &mut Pair<Generated, Hand>) -> Row
where
    Generated: SparseInertia + SparseHolonomic + SparseNonholonomic,
    Hand: SparseInertia + SparseHolonomic + SparseNonholonomic,
    SparseSpook: SparseIntegrator<Generated> + SparseIntegrator<Hand>,
{
    let mut steps = 1;
    while pair.hand.time(steps) < RUN_SECONDS {
        steps *= 2;
    }
    let (mut hand, mut generated) = (Vec::new(), Vec::new());
    for repetition in 0..REPETITIONS {
        if repetition % 2 == 0 {
            generated.push(pair.generated.time(steps));
            hand.push(pair.hand.time(steps));
        } else {
            hand.push(pair.hand.time(steps));
            generated.push(pair.generated.time(steps));
        }
    }
    Row {
        size: pair.size,
        ratio: median(generated.iter().zip(&hand).map(|(g, h)| g / h).collect()),
        hand: median(hand) / steps as f64,
        generated: median(generated) / steps as f64,
        hand_fill: pair.hand.spook.system().factor_entry_count(),
        generated_fill: pair.generated.spook.system().factor_entry_count(),
    }
}

/// Prints the interleaved table of `rows` under `title`, with the fitted exponents.
fn print_table(title: &str, size: &str, rows: &[Row]) {
    println!("\n{title}, median of {REPETITIONS} interleaved runs\n");
    println!(
        "| {size} | hand-written (ns/step) | generated (ns/step) | generated / hand-written | entries of L (hand-written, generated) |"
    );
    println!("|---:|---:|---:|---:|---:|");
    for row in rows {
        println!(
            "| {} | {:.0} | {:.0} | {:.3} | {}, {} |",
            row.size,
            row.hand * 1e9,
            row.generated * 1e9,
            row.ratio,
            row.hand_fill,
            row.generated_fill
        );
    }
    let sizes: Vec<f64> = rows.iter().map(|r| r.size as f64).collect();
    let fit = |cost: fn(&Row) -> f64| {
        let costs: Vec<f64> = rows.iter().map(cost).collect();
        loglog_slope(&sizes, &costs).unwrap_or(f64::NAN)
    };
    println!(
        "\nexponent of cost against {size} (least squares in log-log): hand-written {:.3}, generated {:.3}",
        fit(|r| r.hand),
        fit(|r| r.generated)
    );
}

fn families(c: &mut Criterion) {
    let mut chain_pairs: Vec<_> = CHAIN_SIZES.into_iter().map(chains).collect();
    let mut ladder_pairs: Vec<_> = LADDER_SIZES.into_iter().map(ladders).collect();
    group(c, "families_spook_chain", &mut chain_pairs);
    group(c, "families_spook_ladder", &mut ladder_pairs);

    let rows: Vec<Row> = chain_pairs.iter_mut().map(interleaved).collect();
    print_table("SPOOK on the chain of N pendula, h = 0.05", "N", &rows);
    let rows: Vec<Row> = ladder_pairs.iter_mut().map(interleaved).collect();
    print_table("SPOOK on the ladder of L links, h = 1/60", "L", &rows);
}

criterion_group!(benches, families);
criterion_main!(benches);
