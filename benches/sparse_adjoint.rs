//! The cost of a sparse-tier gradient in forward runs: a run of 100 SPOOK (RATTLE) steps of
//! the chain of 1000 pendula with a mass and a length per link (`VariedPendulumChain`, `h = 0.01`),
//! plain (`forward`), and the gradient of a loss summed over its states with respect to the
//! initial state and all 2001 parameters (every link mass and length, and `g`) by
//! `sparse_adjoint_gradient`, keeping every state (`adjoint_every_state`: one forward run,
//! then one linearized step and one adjoint product per step) and with the default
//! checkpoints every `⌈√(n+1)⌉` steps (`adjoint_checkpoints`: one more forward run). The
//! cost in forward runs is the ratio of each to `forward`, measured in one run.

use std::hint::black_box;

use criterion::measurement::WallTime;
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion};
use mechanism::models::VariedPendulumChain;
use mechanism::runtime::simulation::{sparse_adjoint_gradient, AdjointSettings};
use mechanism::runtime::{DynState, SparseDifferentiableStep, SparseRattle, SparseSpook};

const LINKS: usize = 1000;
const STEPS: usize = 100;
const H: f64 = 0.01;

/// `ℓ_k = h (w·q_k + ½|v_k|²)` with fixed weights.
fn loss(state: &DynState, grad_q: &mut [f64], grad_v: &mut [f64]) -> f64 {
    let mut value = 0.0;
    for (i, ((q, v), (gq, gv))) in state
        .q
        .iter()
        .zip(&state.v)
        .zip(grad_q.iter_mut().zip(grad_v.iter_mut()))
        .enumerate()
    {
        let w = ((i * 13) % 7) as f64 / 7.0 - 0.5;
        value += H * (w * q + 0.5 * v * v);
        (*gq, *gv) = (H * w, H * v);
    }
    value
}

fn adjoint(c: &mut Criterion) {
    let mut group = c.benchmark_group("sparse_adjoint");
    group.sample_size(10);
    let model = VariedPendulumChain::new(LINKS).expect("chain");
    let angles: Vec<f64> = (0..LINKS).map(|i| 0.5 + 1e-3 * i as f64).collect();
    let initial = model.state(&angles, &[]);
    let spook = SparseSpook::new(&model, H).expect("SPOOK");
    runs(&mut group, "spook", spook, &model, &initial);
    let rattle = SparseRattle::new(&model, H).expect("RATTLE");
    runs(&mut group, "rattle", rattle, &model, &initial);
    group.finish();
}

/// Times the forward run and both adjoints of `integrator` (named `name`).
fn runs<I>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    mut integrator: I,
    model: &VariedPendulumChain,
    initial: &DynState,
) where
    I: SparseDifferentiableStep<VariedPendulumChain>,
{
    group.bench_function(format!("{name}/forward"), |b| {
        b.iter(|| {
            let mut state = initial.clone();
            for _ in 0..STEPS {
                integrator.step(black_box(model), &mut state).expect("step");
            }
            state
        })
    });
    for (kept, segment) in [
        ("adjoint_every_state", Some(1)),
        ("adjoint_checkpoints", None),
    ] {
        group.bench_function(format!("{name}/{kept}"), |b| {
            b.iter(|| {
                sparse_adjoint_gradient(
                    &mut integrator,
                    black_box(model),
                    initial,
                    STEPS,
                    AdjointSettings { segment },
                    |_, state, grad_q, grad_v| loss(state, grad_q, grad_v),
                )
                .expect("gradient")
            })
        });
    }
}

criterion_group!(benches, adjoint);
criterion_main!(benches);
