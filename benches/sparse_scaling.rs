//! Per-step cost of SPOOK and RATTLE on the sparse tier against the model size: the chain of `N`
//! pendula (`N = 10 … 10 000`) and the ladder of `L` links (`L = 10 … 1000`); and, at `N = 10`,
//! the sparse tier against the fixed-size tier on the same chain, in the same run.
//!
//! Criterion reports the time per step; divide by `N` or `L` for the per-link cost, which is
//! flat when the cost is linear. The chain's state is reset every 2000 steps so that every size
//! steps through the same motion.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mechanism::runtime::model::{
    AppliedForces, Holonomic, Inertia, Nonholonomic, Potential, SparseInertia,
};
use mechanism::runtime::model::{PotentialHessian, SparsePenalizedPotential, SparsePenaltyHessian};
use mechanism::runtime::reference::{PendulumChain, SpookLadder};
use mechanism::runtime::{
    DynState, Integrator, Rattle, SMatrix, SVector, SparseIntegrator, SparseRattle, SparseSpook,
    Spook, State,
};
use mechanism::runtime::{Penalized, SparseZhangSkeelStiff, ZhangSkeelSimplified};

const H: f64 = 1.0 / 60.0;

/// Steps `model` with the sparse SPOOK from `start`, restarting every 2000 steps.
fn bench_sparse<Model>(b: &mut criterion::Bencher<'_>, model: &Model, start: &DynState)
where
    SparseSpook: SparseIntegrator<Model>,
    Model: SparseInertia
        + mechanism::runtime::model::SparseHolonomic
        + mechanism::runtime::model::SparseNonholonomic,
{
    let mut spook = SparseSpook::new(model, H).expect("valid model");
    let mut state = start.clone();
    let mut steps = 0;
    b.iter(|| {
        if steps == 2000 {
            state.clone_from(start);
            steps = 0;
        }
        steps += 1;
        spook.step(black_box(model), &mut state).expect("step")
    });
}

/// Benchmarks the sparse SPOOK step of the model `build(size)` builds, for each size, in the
/// group `name`, with the size as the throughput (per-link cost).
fn scaling<Model>(
    c: &mut Criterion,
    name: &str,
    sizes: &[usize],
    build: impl Fn(usize) -> (Model, DynState),
) where
    SparseSpook: SparseIntegrator<Model>,
    Model: SparseInertia
        + mechanism::runtime::model::SparseHolonomic
        + mechanism::runtime::model::SparseNonholonomic,
{
    let mut group = c.benchmark_group(name);
    for &size in sizes {
        let (model, start) = build(size);
        group.throughput(Throughput::Elements(size as u64));
        group.bench_with_input(BenchmarkId::from_parameter(size), &size, |b, _| {
            bench_sparse(b, &model, &start)
        });
    }
    group.finish();
}

fn chain(c: &mut Criterion) {
    scaling(c, "sparse_spook_chain", &[10, 100, 1000, 10_000], |links| {
        let model = PendulumChain::tao_owhadi(links);
        let start = model.tao_owhadi_state();
        (model, start)
    });
}

fn ladder(c: &mut Criterion) {
    scaling(c, "sparse_spook_ladder", &[10, 20, 100, 1000], |links| {
        let model = SpookLadder::new(links);
        let start = model.horizontal_state();
        (model, start)
    });
}

/// The chain of 10 pendula of Tao–Owhadi §4.2 written for the fixed-size tier by hand.
struct FixedChain;

const LINKS: usize = 10;
const LENGTH_SQUARED: f64 = 5.0;

impl Inertia<20> for FixedChain {
    const CONSTANT_MASS: bool = true;
    fn mass_matrix(&self, _q: &SVector<f64, 20>, m: &mut SMatrix<f64, 20, 20>) {
        *m = SMatrix::identity();
    }
}

impl Potential<20> for FixedChain {
    fn potential(&self, q: &SVector<f64, 20>) -> f64 {
        (0..LINKS).map(|i| q[2 * i + 1]).sum()
    }
    fn potential_gradient(&self, _q: &SVector<f64, 20>, grad: &mut SVector<f64, 20>) {
        for i in 0..LINKS {
            grad[2 * i] = 0.0;
            grad[2 * i + 1] = 1.0;
        }
    }
}

impl Holonomic<20, 10> for FixedChain {
    const CONSTRAINTS: [&'static str; 10] = ["rod"; 10];
    fn constraints(&self, q: &SVector<f64, 20>, _t: f64, g: &mut SVector<f64, 10>) {
        for i in 0..LINKS {
            let (px, py) = if i == 0 {
                (0.0, 0.0)
            } else {
                (q[2 * i - 2], q[2 * i - 1])
            };
            let (dx, dy) = (q[2 * i] - px, q[2 * i + 1] - py);
            g[i] = dx * dx + dy * dy - LENGTH_SQUARED;
        }
    }
    fn constraint_jacobian(&self, q: &SVector<f64, 20>, _t: f64, jac: &mut SMatrix<f64, 10, 20>) {
        jac.fill(0.0);
        for i in 0..LINKS {
            let (px, py) = if i == 0 {
                (0.0, 0.0)
            } else {
                (q[2 * i - 2], q[2 * i - 1])
            };
            let (dx, dy) = (q[2 * i] - px, q[2 * i + 1] - py);
            jac[(i, 2 * i)] = 2.0 * dx;
            jac[(i, 2 * i + 1)] = 2.0 * dy;
            if i > 0 {
                jac[(i, 2 * i - 2)] = -2.0 * dx;
                jac[(i, 2 * i - 1)] = -2.0 * dy;
            }
        }
    }
}

impl Nonholonomic<20, 0> for FixedChain {
    const NONHOLONOMIC: [&'static str; 0] = [];
    fn nonholonomic_matrix(&self, _q: &SVector<f64, 20>, _a: &mut SMatrix<f64, 0, 20>) {}
    fn nonholonomic_drive(&self, _t: f64, _w: &mut SVector<f64, 0>) {}
}

impl AppliedForces<20> for FixedChain {}

fn dense_vs_sparse(c: &mut Criterion) {
    let mut group = c.benchmark_group("spook_chain_of_10");
    let sparse_model = PendulumChain::tao_owhadi(LINKS);
    let start = sparse_model.tao_owhadi_state();
    group.bench_function("sparse", |b| bench_sparse(b, &sparse_model, &start));
    let fixed_start = State::<20>::new(
        0.0,
        start.q.clone().try_into().expect("20 coordinates"),
        [0.0; 20],
    );
    let mut spook = Spook::<20, 10>::new(H).expect("valid step size");
    let mut state = fixed_start;
    let mut steps = 0;
    group.bench_function("fixed_size", |b| {
        b.iter(|| {
            if steps == 2000 {
                state = fixed_start;
                steps = 0;
            }
            steps += 1;
            spook
                .step(black_box(&FixedChain), &mut state)
                .expect("step")
        })
    });
    group.finish();
}

/// Steps `model` with `integrator` from `start`, restarting every `restart` steps.
fn bench_steps<I, Model>(
    b: &mut criterion::Bencher<'_>,
    mut integrator: I,
    model: &Model,
    start: &DynState,
    restart: usize,
) where
    I: SparseIntegrator<Model>,
{
    let mut state = start.clone();
    let mut steps = 0;
    b.iter(|| {
        if steps == restart {
            state.clone_from(start);
            steps = 0;
        }
        steps += 1;
        integrator.step(black_box(model), &mut state).expect("step")
    });
}

/// RATTLE's step size. At `h = 1/60` its Newton iteration leaves its basin (`NewtonDiverged`)
/// on the chain of 10 000 at t = 0.25 (the basin shrinks with the condition number of
/// `G M⁻¹ Gᵀ`, which grows as `N²` on a chain) and on the ladder at the first whiplash (L = 20
/// at t = 6.3); at `h = 1/600` every size steps through the benchmarked runs, with the same
/// number of Newton iterations per step at every size.
const RATTLE_H: f64 = 1.0 / 600.0;

fn rattle_chain(c: &mut Criterion) {
    let mut group = c.benchmark_group("sparse_rattle_chain");
    for links in [10, 100, 1000, 10_000] {
        let model = PendulumChain::tao_owhadi(links);
        let start = model.tao_owhadi_state();
        let rattle = SparseRattle::new(&model, RATTLE_H).expect("valid model");
        group.throughput(Throughput::Elements(links as u64));
        group.bench_function(BenchmarkId::from_parameter(links), |b| {
            bench_steps(b, rattle.clone(), &model, &start, 500)
        });
    }
    group.finish();
}

fn rattle_ladder(c: &mut Criterion) {
    let mut group = c.benchmark_group("sparse_rattle_ladder");
    for links in [10, 20, 100, 1000] {
        let model = SpookLadder::new(links);
        let start = model.horizontal_state();
        let rattle = SparseRattle::new(&model, RATTLE_H).expect("valid model");
        group.throughput(Throughput::Elements(links as u64));
        group.bench_function(BenchmarkId::from_parameter(links), |b| {
            bench_steps(b, rattle.clone(), &model, &start, 500)
        });
    }
    group.finish();
}

fn rattle_dense_vs_sparse(c: &mut Criterion) {
    let mut group = c.benchmark_group("rattle_chain_of_10");
    let sparse_model = PendulumChain::tao_owhadi(LINKS);
    let start = sparse_model.tao_owhadi_state();
    let sparse = SparseRattle::new(&sparse_model, RATTLE_H).expect("valid model");
    group.bench_function("sparse", |b| {
        bench_steps(b, sparse.clone(), &sparse_model, &start, 500)
    });
    let fixed_start = State::<20>::new(
        0.0,
        start.q.clone().try_into().expect("20 coordinates"),
        [0.0; 20],
    );
    let mut rattle = Rattle::<20, 10>::new(RATTLE_H).expect("valid step size");
    let mut state = fixed_start;
    let mut steps = 0;
    group.bench_function("fixed_size", |b| {
        b.iter(|| {
            if steps == 500 {
                state = fixed_start;
                steps = 0;
            }
            steps += 1;
            rattle
                .step(black_box(&FixedChain), &mut state)
                .expect("step")
        })
    });
    group.finish();
}

/// The penalty frequency of the Z&Ss benchmarks (Tao–Owhadi §4.2).
const OMEGA: f64 = 20.0;

/// The step size of the Z&Ss benchmarks on the chain (Tao–Owhadi §4.2).
const ZSS_H: f64 = 0.05;

/// Steps `model` with the sparse Z&Ss (stiff: the penalty's Hessian only) from `start`,
/// restarting every 1000 steps.
fn bench_sparse_zss<Model>(b: &mut criterion::Bencher<'_>, model: &Model, start: &DynState, h: f64)
where
    Model: SparseInertia + mechanism::runtime::model::SparseSplitPotential,
{
    let mut zss = SparseZhangSkeelStiff::new(model, h).expect("valid model");
    let mut state = start.clone();
    let mut steps = 0;
    b.iter(|| {
        if steps == 1000 {
            state.clone_from(start);
            zss.reset();
            steps = 0;
        }
        steps += 1;
        zss.step(black_box(model), &mut state).expect("step")
    });
}

/// Benchmarks the sparse stiff Z&Ss step on the penalized models `build(size)` builds, per
/// size, in the group `name`, with the size as the throughput (per-link cost).
fn zss_scaling<Model>(
    c: &mut Criterion,
    name: &str,
    sizes: &[usize],
    h: f64,
    build: impl Fn(usize) -> (Model, DynState),
) where
    Model: SparseInertia + mechanism::runtime::model::SparseSplitPotential,
{
    let mut group = c.benchmark_group(name);
    for &size in sizes {
        let (model, start) = build(size);
        group.throughput(Throughput::Elements(size as u64));
        group.bench_with_input(BenchmarkId::from_parameter(size), &size, |b, _| {
            bench_sparse_zss(b, &model, &start, h)
        });
    }
    group.finish();
}

fn zss_chain(c: &mut Criterion) {
    zss_scaling(c, "zss_chain", &[10, 100, 1000, 10_000], ZSS_H, |links| {
        let chain = PendulumChain::tao_owhadi(links);
        let start = chain.tao_owhadi_state();
        (Penalized::new(chain, OMEGA), start)
    });
}

fn zss_ladder(c: &mut Criterion) {
    zss_scaling(c, "zss_ladder", &[10, 20, 100, 1000], H, |links| {
        let ladder = SpookLadder::new(links);
        let start = ladder.horizontal_state();
        (Penalized::new(ladder, OMEGA), start)
    });
}

/// The penalized chain of 10 pendula on the fixed-size tier: dense `M = I`, `∇W` and `Hess W`
/// on stack arrays, from the chain's closed forms (the same arithmetic as the sparse tier, as
/// generated straight-line code would be).
struct FixedPenalizedChain(PendulumChain);

/// The length of the chain's Hessian pattern for 10 links, `7 · 10 − 4`.
const HESSIAN_ENTRIES: usize = 66;

impl Inertia<20> for FixedPenalizedChain {
    const CONSTANT_MASS: bool = true;
    fn mass_matrix(&self, _q: &SVector<f64, 20>, m: &mut SMatrix<f64, 20, 20>) {
        *m = SMatrix::identity();
    }
}

impl Potential<20> for FixedPenalizedChain {
    fn potential(&self, q: &SVector<f64, 20>) -> f64 {
        self.0.penalized_potential(OMEGA, q.as_slice())
    }
    fn potential_gradient(&self, q: &SVector<f64, 20>, grad: &mut SVector<f64, 20>) {
        self.0
            .penalized_potential_gradient(OMEGA, q.as_slice(), grad.as_mut_slice());
    }
}

impl PotentialHessian<20> for FixedPenalizedChain {
    fn potential_hessian(&self, q: &SVector<f64, 20>, hess: &mut SMatrix<f64, 20, 20>) {
        let mut values = [0.0; HESSIAN_ENTRIES];
        self.0.penalty_hessian(OMEGA, q.as_slice(), &mut values);
        hess.fill(0.0);
        for (&(i, j), value) in self.0.penalty_hessian_pattern().iter().zip(&values) {
            hess[(i, j)] = *value;
            hess[(j, i)] = *value;
        }
    }
}

fn zss_chain_of_10(c: &mut Criterion) {
    let mut group = c.benchmark_group("zss_chain_of_10");
    let chain = PendulumChain::tao_owhadi(LINKS);
    let start = chain.tao_owhadi_state();
    let fixed = FixedPenalizedChain(chain.clone());
    let sparse = Penalized::new(chain, OMEGA);
    group.bench_function("sparse", |b| bench_sparse_zss(b, &sparse, &start, ZSS_H));
    let fixed_start = State::<20>::new(
        0.0,
        start.q.clone().try_into().expect("20 coordinates"),
        [0.0; 20],
    );
    // Z&Ss on the fixed size tier; the potential is linear, so it is stiff Z&Ss too.
    let mut zss = ZhangSkeelSimplified::<20>::new(ZSS_H).expect("valid step size");
    let mut state = fixed_start;
    let mut steps = 0;
    group.bench_function("fixed_size", |b| {
        b.iter(|| {
            if steps == 1000 {
                state = fixed_start;
                zss.reset();
                steps = 0;
            }
            steps += 1;
            zss.step(black_box(&fixed), &mut state).expect("step")
        })
    });
    group.finish();
}

criterion_group!(
    benches,
    chain,
    ladder,
    dense_vs_sparse,
    rattle_chain,
    rattle_ladder,
    rattle_dense_vs_sparse
);
criterion_group!(zss_benches, zss_chain, zss_ladder, zss_chain_of_10);
criterion_main!(benches, zss_benches);
