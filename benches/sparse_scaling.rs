//! Per-step cost of SPOOK, RATTLE and stiff Z&Ss on the sparse tier against the model size: the
//! chain of `N` pendula (`N = 10 … 10 000`) and the ladder of `L` links (`L = 10 … 1000`); and,
//! at `N = 10`, the sparse tier against the fixed-size tier on the same chain, in the same run.
//!
//! Criterion reports the time per step; divide by `N` or `L` for the per-link cost, which is
//! flat when the cost is linear. Every run is restarted from its initial state after a fixed
//! number of steps, so that every size steps through the same motion.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use mechanism::runtime::model::{
    AppliedForces, ConstantMass, Holonomic, Inertia, Nonholonomic, Potential, PotentialHessian,
    SparseHolonomic, SparseInertia, SparseNonholonomic, SparsePenalizedPotential,
    SparsePenaltyHessian, SparseSplitPotential,
};
use mechanism::runtime::reference::{PendulumChain, SpookLadder};
use mechanism::runtime::{
    DynState, Integrator, Penalized, Rattle, SMatrix, SVector, SparseIntegrator, SparseRattle,
    SparseSpook, SparseZhangSkeelStiff, Spook, State, ZhangSkeelSimplified,
};

/// SPOOK's step size (Lacoursière §6), and that of the Z&Ss ladder.
const H: f64 = 1.0 / 60.0;

/// Steps `model` with `integrator` from `start`, restarting every `restart` steps so that
/// every size steps through the same motion.
fn bench_steps<I, Model>(
    b: &mut criterion::Bencher<'_>,
    integrator: &mut I,
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

/// Steps the fixed-size `model` with `integrator` from `start`, restarting every `restart`
/// steps: the fixed-size twin of [`bench_steps`].
fn bench_fixed_steps<I, Model, const N: usize>(
    b: &mut criterion::Bencher<'_>,
    integrator: &mut I,
    model: &Model,
    start: State<N>,
    restart: usize,
) where
    I: Integrator<Model, N>,
{
    let mut state = start;
    let mut steps = 0;
    b.iter(|| {
        if steps == restart {
            state = start;
            steps = 0;
        }
        steps += 1;
        integrator.step(black_box(model), &mut state).expect("step")
    });
}

/// Benchmarks `integrator(model)` on the models `build(size)` builds, for each size, in the
/// group `name`, with the size as the throughput (per-link cost); restarts every `restart`
/// steps.
fn scaling<Model, I>(
    c: &mut Criterion,
    name: &str,
    sizes: &[usize],
    restart: usize,
    build: impl Fn(usize) -> (Model, DynState),
    integrator: impl Fn(&Model) -> I,
) where
    I: SparseIntegrator<Model>,
{
    let mut group = c.benchmark_group(name);
    for &size in sizes {
        let (model, start) = build(size);
        let mut stepper = integrator(&model);
        group.throughput(Throughput::Elements(size as u64));
        group.bench_with_input(BenchmarkId::from_parameter(size), &size, |b, _| {
            bench_steps(b, &mut stepper, &model, &start, restart)
        });
    }
    group.finish();
}

/// Returns the chain of Tao–Owhadi §4.2 with `links` links and its initial state.
fn chain_model(links: usize) -> (PendulumChain, DynState) {
    let model = PendulumChain::tao_owhadi(links);
    let start = model.tao_owhadi_state();
    (model, start)
}

/// Returns the SPOOK ladder of `links` links and its horizontal initial state.
fn ladder_model(links: usize) -> (SpookLadder, DynState) {
    let model = SpookLadder::new(links);
    let start = model.horizontal_state();
    (model, start)
}

/// Returns the fixed-size state of the chain of 10 with the sparse `start`'s coordinates.
fn fixed_chain_state(start: &DynState) -> State<20> {
    State::<20>::new(
        0.0,
        start.q.clone().try_into().expect("20 coordinates"),
        [0.0; 20],
    )
}

/// Returns SPOOK with step size [`H`] for `model`.
fn spook<Model>(model: &Model) -> SparseSpook
where
    Model: SparseInertia + SparseHolonomic + SparseNonholonomic,
{
    SparseSpook::new(model, H).expect("valid model")
}

fn spook_chain(c: &mut Criterion) {
    let sizes = [10, 100, 1000, 10_000];
    scaling(c, "sparse_spook_chain", &sizes, 2000, chain_model, spook);
}

fn spook_ladder(c: &mut Criterion) {
    let sizes = [10, 20, 100, 1000];
    scaling(c, "sparse_spook_ladder", &sizes, 2000, ladder_model, spook);
}

/// The chain of 10 pendula of Tao–Owhadi §4.2 written for the fixed-size tier by hand.
struct FixedChain;

const LINKS: usize = 10;
const LENGTH_SQUARED: f64 = 5.0;

impl ConstantMass<20> for FixedChain {}

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

fn spook_chain_of_10(c: &mut Criterion) {
    let mut group = c.benchmark_group("spook_chain_of_10");
    let (model, start) = chain_model(LINKS);
    let mut sparse = spook(&model);
    group.bench_function("sparse", |b| {
        bench_steps(b, &mut sparse, &model, &start, 2000)
    });
    let mut fixed = Spook::<20, 10>::new(H).expect("valid step size");
    group.bench_function("fixed_size", |b| {
        bench_fixed_steps(b, &mut fixed, &FixedChain, fixed_chain_state(&start), 2000)
    });
    group.finish();
}

/// RATTLE's step size. At `h = 1/60` its Newton iteration leaves its basin (`NewtonDiverged`)
/// on the chain of 10 000 at t = 0.25 (the basin shrinks with the condition number of
/// `G M⁻¹ Gᵀ`, which grows as `N²` on a chain) and on the ladder at the first whiplash (L = 20
/// at t = 6.3); at `h = 1/600` every size steps through the benchmarked runs, with the same
/// number of Newton iterations per step at every size.
const RATTLE_H: f64 = 1.0 / 600.0;

/// Returns RATTLE with step size [`RATTLE_H`] for `model`.
fn rattle<Model>(model: &Model) -> SparseRattle
where
    Model: SparseInertia + SparseHolonomic,
{
    SparseRattle::new(model, RATTLE_H).expect("valid model")
}

fn rattle_chain(c: &mut Criterion) {
    let sizes = [10, 100, 1000, 10_000];
    scaling(c, "sparse_rattle_chain", &sizes, 500, chain_model, rattle);
}

fn rattle_ladder(c: &mut Criterion) {
    let sizes = [10, 20, 100, 1000];
    scaling(c, "sparse_rattle_ladder", &sizes, 500, ladder_model, rattle);
}

fn rattle_chain_of_10(c: &mut Criterion) {
    let mut group = c.benchmark_group("rattle_chain_of_10");
    let (model, start) = chain_model(LINKS);
    let mut sparse = rattle(&model);
    group.bench_function("sparse", |b| {
        bench_steps(b, &mut sparse, &model, &start, 500)
    });
    let mut fixed = Rattle::<20, 10>::new(RATTLE_H).expect("valid step size");
    group.bench_function("fixed_size", |b| {
        bench_fixed_steps(b, &mut fixed, &FixedChain, fixed_chain_state(&start), 500)
    });
    group.finish();
}

/// The penalty frequency of the Z&Ss benchmarks (Tao–Owhadi §4.2).
const OMEGA: f64 = 20.0;

/// The step size of the Z&Ss benchmarks on the chain (Tao–Owhadi §4.2).
const ZSS_H: f64 = 0.05;

/// Returns stiff Z&Ss (the penalty's Hessian only) with step size `h` for `model`.
fn zss<Model>(model: &Model, h: f64) -> SparseZhangSkeelStiff
where
    Model: SparseInertia + SparseSplitPotential,
{
    SparseZhangSkeelStiff::new(model, h).expect("valid model")
}

fn zss_chain(c: &mut Criterion) {
    let sizes = [10, 100, 1000, 10_000];
    let build = |links| {
        let (chain, start) = chain_model(links);
        (Penalized::new(chain, OMEGA), start)
    };
    scaling(c, "zss_chain", &sizes, 1000, build, |m| zss(m, ZSS_H));
}

fn zss_ladder(c: &mut Criterion) {
    let sizes = [10, 20, 100, 1000];
    let build = |links| {
        let (ladder, start) = ladder_model(links);
        (Penalized::new(ladder, OMEGA), start)
    };
    scaling(c, "zss_ladder", &sizes, 1000, build, |m| zss(m, H));
}

/// The penalized chain of 10 pendula on the fixed-size tier: dense `M = I`, `∇W` and `Hess W`
/// on stack arrays, from the chain's closed forms (the same arithmetic as the sparse tier, as
/// generated straight-line code would be).
struct FixedPenalizedChain(PendulumChain);

/// The length of the chain's Hessian pattern for 10 links, `7 · 10 − 4`.
const HESSIAN_ENTRIES: usize = 66;

impl ConstantMass<20> for FixedPenalizedChain {}

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
    let (chain, start) = chain_model(LINKS);
    let fixed_model = FixedPenalizedChain(chain.clone());
    let model = Penalized::new(chain, OMEGA);
    let mut sparse = zss(&model, ZSS_H);
    group.bench_function("sparse", |b| {
        bench_steps(b, &mut sparse, &model, &start, 1000)
    });
    // Z&Ss on the fixed-size tier; the potential is linear, so it is stiff Z&Ss too.
    let mut fixed = ZhangSkeelSimplified::<20>::new(ZSS_H).expect("valid step size");
    group.bench_function("fixed_size", |b| {
        bench_fixed_steps(b, &mut fixed, &fixed_model, fixed_chain_state(&start), 1000)
    });
    group.finish();
}

criterion_group!(
    benches,
    spook_chain,
    spook_ladder,
    spook_chain_of_10,
    rattle_chain,
    rattle_ladder,
    rattle_chain_of_10,
    zss_chain,
    zss_ladder,
    zss_chain_of_10
);
criterion_main!(benches);
