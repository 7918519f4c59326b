//! Our generated steppers on the cases of the peer benchmark (`benches/peer/run.sh`), with the
//! protocol of the C driver `benches/peer/driver.c`: restart from the initial state every 1000
//! steps, time whole runs with a monotonic clock, and print the states after 1 and 1000 steps.
//!
//! ```sh
//! peer <case> <steps> <repetitions>   # one case, e.g. `peer zss_dp 200000 1`
//! peer                                # every case, 5 repetitions (what `cargo bench` runs)
//! ```
//!
//! The output is one block per case, the format `benches/peer/compare.py` reads:
//!
//! ```text
//! case zss_dp
//! ns_per_step 63.1 62.8 …     (one time per repetition)
//! state1 q… v…                (after 1 step from the initial state)
//! state1000 q… v…             (after 1000 steps)
//! ```

mod chains;

use std::error::Error;
use std::hint::black_box;
use std::time::Instant;

use chains::Chain50;
use mechanism::models::{Chain10, DoublePendulum};
use mechanism::runtime::{
    Integrator, Penalized, Spook, State, StepError, ZhangSkeel, ZhangSkeelSimplified,
};

/// Steps between restarts from the initial state.
const RESTART: usize = 1000;

/// The penalty frequency and `β` of every Z&S and Z&Ss case.
const OMEGA: f64 = 20.0;
const BETA: f64 = 0.4;

/// The step sizes: Z&S and Z&Ss on the double pendulum, SPOOK, Z&Ss on the chains.
const ZS_H: f64 = 0.1;
const SPOOK_H: f64 = 1.0 / 60.0;
const CHAIN_H: f64 = 0.05;

/// The cases, with the steps per repetition that `peer` without arguments times (those of
/// `compare.py`).
const CASES: [(&str, usize); 5] = [
    ("zss_dp", 1_000_000),
    ("zs_dp", 1_000_000),
    ("spook_dp", 1_000_000),
    ("zss_chain10", 200_000),
    ("zss_chain50", 20_000),
];

/// The measurements of one case.
struct Measurement {
    ns_per_step: Vec<f64>,
    state1: Vec<f64>,
    state1000: Vec<f64>,
}

/// Returns `q` followed by `v`.
fn flat<const N: usize>(state: &State<N>) -> Vec<f64> {
    state.q.iter().chain(state.v.iter()).copied().collect()
}

/// Runs `integrator` on `model` from `start`: 1000 steps (recording the states after 1 and
/// 1000), then `repetitions` timed runs of `steps` steps, each restarted from `start` every
/// [`RESTART`] steps.
fn measure<Model, I, const N: usize>(
    model: &Model,
    mut integrator: I,
    start: State<N>,
    steps: usize,
    repetitions: usize,
) -> Result<Measurement, StepError>
where
    I: Integrator<Model, N>,
{
    let mut state = start;
    integrator.step(model, &mut state)?;
    let state1 = flat(&state);
    for _ in 1..RESTART {
        integrator.step(model, &mut state)?;
    }
    let state1000 = flat(&state);
    let mut ns_per_step = Vec::with_capacity(repetitions);
    for _ in 0..repetitions {
        let begin = Instant::now();
        let mut since_restart = RESTART;
        for _ in 0..steps {
            if since_restart == RESTART {
                state = start;
                since_restart = 0;
            }
            integrator.step(black_box(model), &mut state)?;
            since_restart += 1;
        }
        black_box(&state);
        ns_per_step.push(begin.elapsed().as_nanos() as f64 / steps as f64);
    }
    Ok(Measurement {
        ns_per_step,
        state1,
        state1000,
    })
}

/// Returns the chain's initial state: at rest, bob `i` at `(i, −2i)`, on the rods.
fn chain_state<const N: usize>() -> State<N> {
    let mut q = [0.0; N];
    for (bob, pair) in q.chunks_exact_mut(2).enumerate() {
        let i = (bob + 1) as f64;
        pair.copy_from_slice(&[i, -2.0 * i]);
    }
    State::new(0.0, q, [0.0; N])
}

/// Measures the case named `case`.
fn run(case: &str, steps: usize, repetitions: usize) -> Result<Measurement, Box<dyn Error>> {
    let pendulum = Penalized::new(DoublePendulum::default(), OMEGA);
    let start = DoublePendulum::initial_state();
    let measurement = match case {
        "zss_dp" => {
            let zss = ZhangSkeelSimplified::<4>::new(ZS_H)?.with_beta(BETA)?;
            measure(&pendulum, zss, start, steps, repetitions)?
        }
        "zs_dp" => {
            let zs = ZhangSkeel::<4>::new(ZS_H)?.with_beta(BETA)?;
            measure(&pendulum, zs, start, steps, repetitions)?
        }
        "spook_dp" => {
            let spook = Spook::<4, 2>::new(SPOOK_H)?;
            measure(&DoublePendulum::default(), spook, start, steps, repetitions)?
        }
        "zss_chain10" => {
            let zss = ZhangSkeelSimplified::<20>::new(CHAIN_H)?.with_beta(BETA)?;
            let chain = Penalized::new(Chain10::default(), OMEGA);
            measure(&chain, zss, chain_state(), steps, repetitions)?
        }
        "zss_chain50" => {
            let zss = ZhangSkeelSimplified::<100>::new(CHAIN_H)?.with_beta(BETA)?;
            let chain = Penalized::new(Chain50::default(), OMEGA);
            measure(&chain, zss, chain_state(), steps, repetitions)?
        }
        _ => return Err(format!("unknown case {case:?}").into()),
    };
    Ok(measurement)
}

/// Prints one case's block.
fn print(case: &str, measurement: &Measurement) {
    let join = |values: &[f64]| {
        values
            .iter()
            .map(|x| format!("{x:e}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    println!("case {case}");
    println!("ns_per_step {}", join(&measurement.ns_per_step));
    println!("state1 {}", join(&measurement.state1));
    println!("state1000 {}", join(&measurement.state1000));
}

fn main() -> Result<(), Box<dyn Error>> {
    // `cargo bench` passes `--bench`; every other argument is positional.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with("--"))
        .collect();
    match args.as_slice() {
        [] => {
            for (case, steps) in CASES {
                print(case, &run(case, steps, 5)?);
            }
        }
        [case, steps, repetitions] => {
            let steps: usize = steps.parse()?;
            let repetitions: usize = repetitions.parse()?;
            if steps == 0 || !steps.is_multiple_of(RESTART) {
                return Err(format!("steps must be a positive multiple of {RESTART}").into());
            }
            print(case, &run(case, steps, repetitions)?);
        }
        _ => return Err("usage: peer [<case> <steps> <repetitions>]".into()),
    }
    Ok(())
}
