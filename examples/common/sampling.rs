//! The sampling runs of the `langevin_oscillator` example, apart from its command line so that
//! `tests/it/langevin_examples.rs` and `tests/it/save_every.rs` run exactly this code: GLA
//! (Tao–Owhadi 2014 §4.3) on the planar harmonic oscillator and on a penalized planar pendulum,
//! streamed to a sink (CSV or Parquet), with batch-means statistics and the Boltzmann–Gibbs
//! predictions they are compared with.

use std::error::Error;
use std::f64::consts::PI;
use std::sync::atomic::AtomicBool;

use mechanism::mechanism;
use mechanism::models::PlanarOscillator;
pub use mechanism::runtime::simulation::Estimate;
use mechanism::runtime::simulation::{BatchMeans, Column, Mechanics, Schedule, Simulation, Sink};
use mechanism::runtime::{
    observers, Configuration, Holonomic, Inertia, Integrator, Langevin, Penalized, Potential,
    State, Verlet, ZhangSkeelSimplified,
};

mechanism! {
    /// A planar pendulum of length `l` in Cartesian coordinates, for GLA on the penalty
    /// `W = V + ½ω²g²` of its rod `g = x² + y² − l²` (Tao–Owhadi eq. 7 and §4.3).
    pub struct PlanarPendulum {
        coordinates: [x, y],
        parameters: {
            /// Mass of the bob.
            m = 1.0,
            /// Length of the rod.
            l = 1.0,
            /// Gravitational acceleration, along −y.
            g = 1.0,
        },
        kinetic: 0.5 * m * (dot(x).powi(2) + dot(y).powi(2)),
        potential: m * g * y,
        holonomic: {
            /// The rod.
            rod: x.powi(2) + y.powi(2) - l.powi(2),
        },
        integrators: [verlet, zss],
    }
}

/// The deterministic integrator GLA composes with the exact Ornstein–Uhlenbeck flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inner {
    /// Velocity Verlet (symplectic, explicit).
    Verlet,
    /// Simplified Zhang–Skeel, `β = 0.4` (Tao–Owhadi eq. 18; linearly implicit).
    Zss,
}

impl Inner {
    /// Returns `β` of the scheme: on a linear force `−K q` both are Verlet with the stiffness
    /// `(M + βh²K)⁻¹ K`, which gives their exact discrete stationary covariance.
    fn beta(self) -> f64 {
        match self {
            Inner::Verlet => 0.0,
            Inner::Zss => 0.4,
        }
    }
}

/// What to sample and how.
#[derive(Clone, Copy, Debug)]
pub struct Settings {
    /// Mass `m` (of the oscillator, or of the pendulum's bob).
    pub m: f64,
    /// Stiffness `k` of the oscillator.
    pub k: f64,
    /// Temperature `kT = β⁻¹`.
    pub kt: f64,
    /// Friction `γ` (Tao–Owhadi eq. 27: `−γ M⁻¹ p`, a momentum decay rate `γ/m`).
    pub gamma: f64,
    /// Step size.
    pub h: f64,
    /// Number of steps, burn-in included.
    pub steps: usize,
    /// Steps discarded before the statistics start (they are still written to the CSV).
    pub burn_in: usize,
    /// Number of batches for the batch-means standard errors.
    pub batches: usize,
    /// Write every `every`-th step to the CSV (the statistics use every step).
    pub every: usize,
    /// Write rows at exactly `t = 0, Δt, 2Δt, …` and at the end instead (`--save-every`; a
    /// whole multiple of `h`).
    pub save_every: Option<f64>,
    /// Seed of the noise stream.
    pub seed: u64,
    /// The deterministic integrator.
    pub inner: Inner,
    /// Penalty frequency `ω` of the pendulum's rod.
    pub omega: f64,
    /// Length `l` of the pendulum's rod.
    pub length: f64,
    /// Gravitational acceleration on the pendulum.
    pub gravity: f64,
    /// The flag that stops the run at a step boundary once set (the examples' SIGINT and
    /// SIGTERM handler), or `None`.
    pub interrupt: Option<&'static AtomicBool>,
}

impl Settings {
    /// Returns an error naming the first setting that cannot be used.
    pub fn validate(&self) -> Result<(), Box<dyn Error>> {
        let positive = [
            ("m", self.m),
            ("k", self.k),
            ("kt", self.kt),
            ("gamma", self.gamma),
            ("h", self.h),
            ("omega", self.omega),
            ("length", self.length),
        ];
        for (name, value) in positive {
            if !(value.is_finite() && value > 0.0) {
                return Err(format!("--{name} must be a positive number, got {value}").into());
            }
        }
        if !self.gravity.is_finite() {
            return Err(format!("--gravity must be finite, got {}", self.gravity).into());
        }
        if self.batches < 2 {
            return Err(format!("--batches must be at least 2, got {}", self.batches).into());
        }
        if self.every == 0 {
            return Err("--every must be at least 1".into());
        }
        if self.burn_in >= self.steps || self.steps - self.burn_in < self.batches {
            return Err(format!(
                "--steps ({}) must exceed --burn-in ({}) by at least --batches ({})",
                self.steps, self.burn_in, self.batches
            )
            .into());
        }
        Ok(())
    }

    /// Returns the number of steps in each batch (the statistics use `batches` of them).
    fn batch_size(&self) -> usize {
        (self.steps - self.burn_in) / self.batches
    }
}

/// Returns the exact stationary `(⟨q²⟩, ⟨v²⟩)` of GLA — the exact OU flow over `h`, then one
/// Verlet step with the stiffness `k/(1 + βh²k/m)` — on `m q̈ = −k q`: the fixed point of the
/// covariance map `C ← B (D C D + S) Bᵀ`. This is the sampler's own `O(h²)`-biased target,
/// computed without sampling.
pub fn discrete_covariance(
    m: f64,
    k: f64,
    gamma: f64,
    kt: f64,
    h: f64,
    inner: Inner,
) -> (f64, f64) {
    let w2 = k / m / (1.0 + inner.beta() * h * h * k / m);
    let c = (-gamma * h / m).exp();
    let s2 = kt * (1.0 - c * c) / m;
    let (b11, b12) = (1.0 - 0.5 * h * h * w2, h);
    let (b21, b22) = (-h * w2 * (1.0 - 0.25 * h * h * w2), 1.0 - 0.5 * h * h * w2);
    let (mut qq, mut qv, mut vv) = (0.0f64, 0.0f64, 0.0f64);
    for _ in 0..10_000_000 {
        // D C D + S with D = diag(1, c), S = diag(0, s²).
        let (a11, a12, a22) = (qq, c * qv, c * c * vv + s2);
        let next_qq = b11 * b11 * a11 + 2.0 * b11 * b12 * a12 + b12 * b12 * a22;
        let next_qv = b11 * b21 * a11 + (b11 * b22 + b12 * b21) * a12 + b12 * b22 * a22;
        let next_vv = b21 * b21 * a11 + 2.0 * b21 * b22 * a12 + b22 * b22 * a22;
        let change = (next_qq - qq)
            .abs()
            .max((next_qv - qv).abs())
            .max((next_vv - vv).abs());
        (qq, qv, vv) = (next_qq, next_qv, next_vv);
        if change <= 1e-16 * (qq + vv) {
            break;
        }
    }
    (qq, vv)
}

/// The statistics of a GLA run on the planar oscillator, per coordinate `x`, `y`.
#[derive(Clone, Debug, PartialEq)]
pub struct OscillatorReport {
    /// `⟨x²⟩`, `⟨y²⟩`.
    pub q2: [Estimate; 2],
    /// `⟨p_x²⟩`, `⟨p_y²⟩` with `p = m v`.
    pub p2: [Estimate; 2],
    /// The exact discrete stationary `(⟨q²⟩, ⟨p²⟩)` of the chain (see [`discrete_covariance`]).
    pub discrete: (f64, f64),
    /// The state after the last step.
    pub last: State<2>,
}

/// The statistics of a GLA run on the penalized pendulum.
#[derive(Clone, Debug, PartialEq)]
pub struct PendulumReport {
    /// The mean of `g = x² + y² − l²`.
    pub mean: Estimate,
    /// The variance of `g` (batch variances about their batch means, averaged).
    pub variance: Estimate,
    /// The mean of the distance to the circle, `d = |q| − l`.
    pub distance_mean: Estimate,
    /// The variance of `d`.
    pub distance_variance: Estimate,
    /// The sampled fraction of steps in each bin of [`GibbsMarginal::bins`].
    pub histogram: Vec<f64>,
    /// The exact marginal density of `g` under Boltzmann–Gibbs.
    pub gibbs: GibbsMarginal,
    /// The state after the last step.
    pub last: State<2>,
}

/// The marginal law of `g = x² + y² − l²` under the Boltzmann–Gibbs measure of the penalized
/// pendulum, `exp(−β W(q)) dq`, `W = m G y + ½ω²g²`, on a grid.
///
/// In polar coordinates `dq = r dr dθ = ½ dg dθ` (since `dg = 2r dr`) and
/// `∫₀^{2π} exp(−β m G r sin θ) dθ = 2π I₀(β m G r)`, so with `r = √(l² + g)` the density is,
/// exactly,
///
/// ```text
/// ρ(g) ∝ I₀(β m G √(l² + g)) · exp(−β ω² g² / 2),      g > −l².
/// ```
///
/// Without gravity this is the Gaussian `N(0, kT/ω²)` cut off at `g = −l²` (the missing mass
/// is below `exp(−ω²l⁴/2kT)`): no Jacobian factor appears, because the coarea factor
/// `∮ dσ/|∇g| = 2πr/(2r) = π` does not depend on `g`. With gravity, `ln I₀` tilts it: to first
/// order in `g` the mean moves to `m G I₁/I₀(β m G l) / (2 l ω²)` (the static stretch
/// `mG/(2lω²)` when `kT → 0`) and the variance stays `kT/ω²` up to `O(kT · m G/(ω² l³))`
/// relative corrections. The distance to the circle `d = r − l ≈ g/(2l) = g/|∇g|` then has the
/// variance `kT/(ω²|∇g|²)`, `|∇g| = 2l`: the usual "stiff spring" formula is for the normal
/// displacement `d`, and `Var g = |∇g|² Var d = kT/ω²`. Both hold for `kT/ω² ≪ l⁴`
/// (fluctuations of `g` small against `l²`, so `r ≈ l` and `I₀` is nearly linear in `g`).
#[derive(Clone, Debug, PartialEq)]
pub struct GibbsMarginal {
    /// The mean of `g`.
    pub mean: f64,
    /// The variance of `g`.
    pub variance: f64,
    /// The Gaussian approximation's mean (first order in `g`, see the type docs).
    pub gaussian_mean: f64,
    /// The Gaussian approximation's variance `kT/ω²`.
    pub gaussian_variance: f64,
    /// The histogram bin edges.
    pub edges: Vec<f64>,
    /// The probability of each bin.
    pub bins: Vec<f64>,
}

/// Returns `ln I₀(x)` for `x ≥ 0`: the power series for `x ≤ 30`, else the asymptotic series
/// `e^x/√(2πx) (1 + 1/(8x) + 9/(128x²) + 225/(3072x³))` (relative error below 1e-7 there).
fn ln_bessel_i0(x: f64) -> f64 {
    let x = x.abs();
    if x <= 30.0 {
        let (mut term, mut sum) = (1.0, 1.0);
        let quarter = 0.25 * x * x;
        for k in 1..200 {
            term *= quarter / (k * k) as f64;
            sum += term;
            if term < 1e-17 * sum {
                break;
            }
        }
        sum.ln()
    } else {
        let series = 1.0 + 1.0 / (8.0 * x) + 9.0 / (128.0 * x * x) + 225.0 / (3072.0 * x.powi(3));
        x - 0.5 * (2.0 * PI * x).ln() + series.ln()
    }
}

/// Returns `I₁(x)/I₀(x)` for `x ≥ 0` by the power series of both (`x ≤ 30`) or the asymptotic
/// `1 − 1/(2x) − 1/(8x²)`.
fn bessel_ratio(x: f64) -> f64 {
    if x > 30.0 {
        return 1.0 - 1.0 / (2.0 * x) - 1.0 / (8.0 * x * x);
    }
    let quarter = 0.25 * x * x;
    let (mut t0, mut t1) = (1.0, 0.5 * x);
    let (mut s0, mut s1) = (t0, t1);
    for k in 1..200 {
        t0 *= quarter / (k * k) as f64;
        t1 *= quarter / (k * (k + 1)) as f64;
        s0 += t0;
        s1 += t1;
        if t0 < 1e-17 * s0 {
            break;
        }
    }
    s1 / s0
}

impl GibbsMarginal {
    /// Number of histogram bins.
    pub const BINS: usize = 16;

    /// Tabulates the marginal of `g` for `pendulum` with penalty `omega` at temperature `kt`,
    /// with [`BINS`](Self::BINS) histogram bins over ±4 Gaussian standard deviations.
    pub fn new(pendulum: &PlanarPendulum, omega: f64, kt: f64) -> Self {
        let (m, l, gravity) = (pendulum.m, pendulum.l, pendulum.g);
        let beta = 1.0 / kt;
        let gaussian_variance = kt / (omega * omega);
        let sigma = gaussian_variance.sqrt();
        let tilt = beta * m * gravity.abs();
        let gaussian_mean = m * gravity.abs() * bessel_ratio(tilt * l) / (2.0 * l * omega * omega);
        let log_density =
            |g: f64| ln_bessel_i0(tilt * (l * l + g).sqrt()) - 0.5 * beta * omega * omega * g * g;
        // Trapezoidal rule on ±12σ around the approximate mean (cut at g = −l²).
        let (lo, hi) = (
            (gaussian_mean - 12.0 * sigma).max(-l * l),
            gaussian_mean + 12.0 * sigma,
        );
        let n = 20_000;
        let dg = (hi - lo) / n as f64;
        let peak = log_density(gaussian_mean.max(lo));
        let weights: Vec<(f64, f64)> = (0..=n)
            .map(|i| {
                let g = lo + i as f64 * dg;
                let end = if i == 0 || i == n { 0.5 } else { 1.0 };
                (g, end * (log_density(g) - peak).exp())
            })
            .collect();
        let total: f64 = weights.iter().map(|(_, w)| w).sum();
        let mean = weights.iter().map(|(g, w)| g * w).sum::<f64>() / total;
        let variance = weights
            .iter()
            .map(|(g, w)| (g - mean).powi(2) * w)
            .sum::<f64>()
            / total;
        let edges: Vec<f64> = (0..=Self::BINS)
            .map(|i| gaussian_mean + sigma * (-4.0 + 8.0 * i as f64 / Self::BINS as f64))
            .collect();
        let bins = edges
            .windows(2)
            .map(|e| {
                weights
                    .iter()
                    .filter(|(g, _)| *g >= e[0] && *g < e[1])
                    .map(|(_, w)| w)
                    .sum::<f64>()
                    / total
            })
            .collect();
        GibbsMarginal {
            mean,
            variance,
            gaussian_mean,
            gaussian_variance,
            edges,
            bins,
        }
    }

    /// Returns the bin of `g`, if it is inside the histogram's range.
    fn bin(&self, g: f64) -> Option<usize> {
        let (first, last) = (self.edges[0], self.edges[Self::BINS]);
        if !(g >= first && g < last) {
            return None;
        }
        let i = ((g - first) / (last - first) * Self::BINS as f64) as usize;
        Some(i.min(Self::BINS - 1))
    }
}

/// A method-specific column: its name and its value at a state.
type Extra<'a> = (&'static str, &'a dyn Fn(&State<2>) -> f64);

/// Where [`sample`] writes: the sink of the rows and the method-specific columns after the
/// contract's.
struct Output<'a, K> {
    rows: K,
    extra: &'a [Extra<'a>],
}

/// Runs `langevin` on `stepped` for `settings.steps` steps through the driver
/// ([`Simulation::fixed`]), writing the initial state and every `settings.every`-th state (or
/// the rows of `--save-every`) to `output.rows` with the columns of the examples' CSV contract
/// (`t`, `q.*`, `v.*`, `energy`, `residual.position`, `residual.velocity` of `observed`) and
/// then `output.extra`, and calling `observe` with every state after the burn-in (an
/// [`on_step`](Simulation::on_step) monitor). Finishes the sink also after a failed step, so
/// that the rows up to it stay readable. Returns the last state.
fn sample<I, Stepped, Observed, K: Sink, const M: usize>(
    langevin: Langevin<I, 2>,
    (stepped, observed): (&Stepped, &Observed),
    initial: State<2>,
    settings: &Settings,
    output: Output<'_, K>,
    mut observe: impl FnMut(&State<2>),
) -> Result<State<2>, Box<dyn Error>>
where
    Langevin<I, 2>: Integrator<Stepped, 2>,
    Observed: Configuration<2> + Inertia<2> + Potential<2> + Holonomic<2, M>,
{
    let Output { rows, extra } = output;
    let schedule = match settings.save_every {
        Some(dt) => Schedule::Every(dt),
        None => Schedule::EveryNthStep(settings.every),
    };
    schedule.check_step(settings.h)?;
    let t_end = initial.t + settings.steps as f64 * settings.h;
    let mut run = Simulation::fixed(stepped, langevin, initial, t_end, schedule)?
        .coordinates(Observed::COORDINATES)?
        .observe(Mechanics::<Observed, 2, M>::new(observed));
    for &(name, value) in extra {
        run = run.observe(Column::new(name, value));
    }
    if let Some(flag) = settings.interrupt {
        run = run.interrupt_on(flag);
    }
    let (mut step, burn_in) = (0, settings.burn_in);
    let mut run = run
        .on_step(|_, state| {
            step += 1;
            if step > burn_in {
                observe(state);
            }
        })
        .write_to(rows)
        .with_progress("sampling");
    let outcome = run.run();
    let last = *run.state();
    run.into_output().finish()?;
    outcome?;
    Ok(last)
}

/// Samples the planar oscillator `PlanarOscillator { m, k }` with GLA from Cuell's initial
/// state `(1, 0, 0, 1)`, writing the rows to `rows` (no extra columns).
pub fn run_oscillator(
    settings: &Settings,
    rows: impl Sink,
) -> Result<OscillatorReport, Box<dyn Error>> {
    settings.validate()?;
    let model = PlanarOscillator {
        m: settings.m,
        k: settings.k,
    };
    let initial = PlanarOscillator::initial_state();
    let size = settings.batch_size();
    let mut sums: Vec<BatchMeans> = (0..4).map(|_| BatchMeans::new(size)).collect();
    let m = settings.m;
    let observe = |s: &State<2>| {
        let p = s.v * m;
        for (sum, x) in sums.iter_mut().zip([s.q[0], s.q[1], p[0], p[1]]) {
            sum.push(x * x);
        }
    };
    let (h, gamma, kt, seed) = (settings.h, settings.gamma, settings.kt, settings.seed);
    let last = match settings.inner {
        Inner::Verlet => {
            let gla = Langevin::new(Verlet::new(h)?, h, gamma, kt, seed)?;
            let output = Output { rows, extra: &[] };
            sample(gla, (&model, &model), initial, settings, output, observe)?
        }
        Inner::Zss => {
            let gla = Langevin::new(ZhangSkeelSimplified::new(h)?, h, gamma, kt, seed)?;
            let output = Output { rows, extra: &[] };
            sample(gla, (&model, &model), initial, settings, output, observe)?
        }
    };
    let (q2, v2) = discrete_covariance(m, settings.k, gamma, kt, h, settings.inner);
    Ok(OscillatorReport {
        q2: [sums[0].estimate(), sums[1].estimate()],
        p2: [sums[2].estimate(), sums[3].estimate()],
        discrete: (q2, m * m * v2),
        last,
    })
}

/// Samples `Penalized<PlanarPendulum>` (`W = m G y + ½ω²g²`) with GLA from the bob at rest
/// at the bottom, `(0, −l)`, writing the rows to `rows` with the extra columns `constraint.rod`
/// (the signed `g`; `residual.position` is `|g|`), `distance` (`|q| − l`) and
/// `energy.penalized` (`T + W`).
pub fn run_pendulum(
    settings: &Settings,
    rows: impl Sink,
) -> Result<PendulumReport, Box<dyn Error>> {
    settings.validate()?;
    let pendulum = PlanarPendulum {
        m: settings.m,
        l: settings.length,
        g: settings.gravity,
    };
    let penalized = Penalized::new(pendulum, settings.omega);
    let l = settings.length;
    let initial = State::new(0.0, [0.0, -l], [0.0, 0.0]);
    let rod = |s: &State<2>| s.q.norm_squared() - l * l;
    let distance = |s: &State<2>| s.q.norm() - l;
    let penalized_energy = |s: &State<2>| observers::energy(&penalized, s);
    let extra: [Extra<'_>; 3] = [
        ("constraint.rod", &rod),
        ("distance", &distance),
        ("energy.penalized", &penalized_energy),
    ];

    let gibbs = GibbsMarginal::new(&pendulum, settings.omega, settings.kt);
    let size = settings.batch_size();
    let (mut g1, mut g2) = (BatchMeans::new(size), BatchMeans::new(size));
    let (mut d1, mut d2) = (BatchMeans::new(size), BatchMeans::new(size));
    let mut counts = [0usize; GibbsMarginal::BINS];
    let mut total = 0usize;
    let observe = |s: &State<2>| {
        let (g, d) = (rod(s), distance(s));
        g1.push(g);
        g2.push(g * g);
        d1.push(d);
        d2.push(d * d);
        if let Some(i) = gibbs.bin(g) {
            counts[i] += 1;
        }
        total += 1;
    };
    let (h, gamma, kt, seed) = (settings.h, settings.gamma, settings.kt, settings.seed);
    let last = match settings.inner {
        Inner::Verlet => {
            let gla = Langevin::new(Verlet::new(h)?, h, gamma, kt, seed)?;
            let output = Output {
                rows,
                extra: &extra,
            };
            let models = (&penalized, &pendulum);
            sample(gla, models, initial, settings, output, observe)?
        }
        Inner::Zss => {
            let gla = Langevin::new(ZhangSkeelSimplified::new(h)?, h, gamma, kt, seed)?;
            let output = Output {
                rows,
                extra: &extra,
            };
            let models = (&penalized, &pendulum);
            sample(gla, models, initial, settings, output, observe)?
        }
    };
    // The variance of each batch about its own mean, then batch means of those.
    let batch_variances = |first: &BatchMeans, second: &BatchMeans| -> Vec<f64> {
        first
            .means()
            .iter()
            .zip(second.means())
            .map(|(m1, m2)| m2 - m1 * m1)
            .collect()
    };
    Ok(PendulumReport {
        mean: g1.estimate(),
        variance: Estimate::of(&batch_variances(&g1, &g2)),
        distance_mean: d1.estimate(),
        distance_variance: Estimate::of(&batch_variances(&d1, &d2)),
        histogram: counts
            .iter()
            .map(|&c| c as f64 / total.max(1) as f64)
            .collect(),
        gibbs,
        last,
    })
}
