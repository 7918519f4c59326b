//! SHAKE and RATTLE on the sparse tier: the same trajectories as the fixed-size tier, the
//! constraints held at every step, second order against an independent reference, bounded
//! energy error on Tao–Owhadi's chain, no allocation per step, and typed errors.

use crate::support::as_fixed::{relative_distance, AsFixed};
use crate::support::{allocations, steps_to};
use mechanism_runtime::model::{
    SparseConstantMass, SparseHolonomic, SparseInertia, SparsePotential,
};
use mechanism_runtime::reference::fit::loglog_slope;
use mechanism_runtime::reference::pendulum_chain::{projection_step, projection_step_limit};
use mechanism_runtime::reference::{DoublePendulum, PendulumChain, SpookLadder};
use mechanism_runtime::{
    DynState, Integrator, Rattle, Shake, SparseIntegrator, SparseRattle, SparseShake, State,
    StepError,
};

/// The default Newton tolerance factor of SHAKE and RATTLE.
const TOLERANCE: f64 = 1e-13;

/// Returns `(max_i |g_i(q)| / (1 + s), max_i |(G v)_i| / (1 + s_v))` with `s = max_i Σ_j
/// |G_ij q_j|` and `s_v = max_i Σ_j |G_ij v_j|`: the position residual against the Newton
/// tolerance's scale and the velocity residual against its own.
fn residuals<Model: SparseHolonomic>(model: &Model, q: &[f64], v: &[f64]) -> (f64, f64) {
    let m = model.constraint_count();
    let (mut g, mut jac) = (vec![0.0; m], vec![0.0; model.jacobian_pattern().len()]);
    model.constraints_and_jacobian(q, 0.0, &mut g, &mut jac);
    let (mut gv, mut sq, mut sv) = (vec![0.0; m], vec![0.0; m], vec![0.0; m]);
    for (&(row, col), a) in model.jacobian_pattern().iter().zip(&jac) {
        gv[row] += a * v[col];
        sq[row] += (a * q[col]).abs();
        sv[row] += (a * v[col]).abs();
    }
    let amax = |x: &[f64]| x.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    (amax(&g) / (1.0 + amax(&sq)), amax(&gv) / (1.0 + amax(&sv)))
}

/// The largest distances between the tiers over a run: states, multipliers, and the
/// residuals of the sparse tier.
///
/// Multipliers are compared as the displacements `h² λ` they cause, relative to the
/// configuration's size: Newton solves for `μ = h² λ` (SHAKE; `½ h² λ` in RATTLE), which is
/// determined to the round-off of `q`, so `λ` itself carries that round-off amplified by `1/h²`
/// (1e-11 relative on the chain of two at `h = 0.01`, and far more where `G M⁻¹ Gᵀ` is ill
/// conditioned).
#[derive(Debug, Default)]
struct Comparison {
    state: f64,
    multipliers: f64,
    position_residual: f64,
    velocity_residual: f64,
}

/// Steps `model` from `start` with the fixed-size (`N` coordinates, `M` rows) and the sparse
/// SHAKE side by side (both started with `stagger_velocity`) for `steps` steps of `h`.
fn shake_tiers<Model, const N: usize, const M: usize>(
    model: &Model,
    start: &DynState,
    h: f64,
    steps: usize,
) -> Comparison
where
    Model: SparseConstantMass + SparsePotential + SparseHolonomic,
{
    let fixed = AsFixed(model);
    let mut sparse_state = start.clone();
    let mut dense_state = fixed_state::<N>(start);
    let mut sparse = SparseShake::new(model, h).unwrap();
    let mut dense = Shake::<N, M>::new(h).unwrap();
    sparse.stagger_velocity(model, &mut sparse_state).unwrap();
    dense.stagger_velocity(&fixed, &mut dense_state).unwrap();
    let mut comparison = Comparison::default();
    for _ in 0..steps {
        sparse.step(model, &mut sparse_state).unwrap();
        dense.step(&fixed, &mut dense_state).unwrap();
        // SHAKE's velocity is the difference quotient (q_{k+1} − q_k)/h, determined to the
        // round-off of q divided by h: compare it as the displacement h v.
        comparison.state = comparison
            .state
            .max(relative_distance(&sparse_state.q, dense_state.q.as_slice()))
            .max(displacement_distance(
                &sparse_state.v,
                dense_state.v.as_slice(),
                h.sqrt(),
                &sparse_state.q,
            ));
        comparison.multipliers = comparison.multipliers.max(displacement_distance(
            sparse.multipliers(),
            dense.multipliers().as_slice(),
            h,
            &sparse_state.q,
        ));
        let (g, _) = residuals(model, &sparse_state.q, &sparse_state.v);
        comparison.position_residual = comparison.position_residual.max(g);
    }
    comparison
}

/// As [`shake_tiers`] for RATTLE, comparing also the velocity and averaged multipliers.
fn rattle_tiers<Model, const N: usize, const M: usize>(
    model: &Model,
    start: &DynState,
    h: f64,
    steps: usize,
) -> Comparison
where
    Model: SparseConstantMass + SparsePotential + SparseHolonomic,
{
    let fixed = AsFixed(model);
    let mut sparse_state = start.clone();
    let mut dense_state = fixed_state::<N>(start);
    let mut sparse = SparseRattle::new(model, h).unwrap();
    let mut dense = Rattle::<N, M>::new(h).unwrap();
    let mut comparison = Comparison::default();
    for _ in 0..steps {
        sparse.step(model, &mut sparse_state).unwrap();
        dense.step(&fixed, &mut dense_state).unwrap();
        comparison.state = comparison
            .state
            .max(relative_distance(&sparse_state.q, dense_state.q.as_slice()))
            .max(relative_distance(&sparse_state.v, dense_state.v.as_slice()));
        let q = &sparse_state.q;
        let mut multipliers =
            displacement_distance(sparse.multipliers(), dense.multipliers().as_slice(), h, q).max(
                displacement_distance(
                    sparse.velocity_multipliers(),
                    dense.velocity_multipliers().as_slice(),
                    h,
                    q,
                ),
            );
        match (sparse.averaged_multipliers(), dense.averaged_multipliers()) {
            (Some(s), Some(d)) => {
                multipliers = multipliers.max(displacement_distance(s, d.as_slice(), h, q))
            }
            (None, None) => {}
            _ => multipliers = f64::INFINITY,
        }
        comparison.multipliers = comparison.multipliers.max(multipliers);
        let (g, gv) = residuals(model, &sparse_state.q, &sparse_state.v);
        comparison.position_residual = comparison.position_residual.max(g);
        comparison.velocity_residual = comparison.velocity_residual.max(gv);
    }
    comparison
}

/// Returns `h² max_i |a_i − b_i| / max(1, |q|∞)`: the distance of two multiplier vectors
/// (or, with `√h` for `h`, of two velocities) as the displacements they cause over a step,
/// relative to the configuration.
fn displacement_distance(a: &[f64], b: &[f64], h: f64, q: &[f64]) -> f64 {
    let scale = q.iter().fold(1.0f64, |m, x| m.max(x.abs()));
    let distance = a
        .iter()
        .zip(b)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    h * h * distance / scale
}

/// Returns the fixed-size copy of `state`.
fn fixed_state<const N: usize>(state: &DynState) -> State<N> {
    State::new(
        state.t,
        state.q.clone().try_into().unwrap(),
        state.v.clone().try_into().unwrap(),
    )
}

/// Asserts that both tiers agree to `1e-12` (states and multipliers) and that every sparse
/// step met the Newton tolerance (and, for RATTLE, `G v = 0` to round-off).
fn assert_tiers_agree(label: &str, comparison: &Comparison, rattle: bool) {
    println!(
        "{label}: states {:.2e}, multipliers {:.2e}, |g|/(1+s) {:.2e}, |Gv|/(1+s_v) {:.2e}",
        comparison.state,
        comparison.multipliers,
        comparison.position_residual,
        comparison.velocity_residual
    );
    assert!(comparison.state < 1e-12, "{label}: {comparison:?}");
    assert!(comparison.multipliers < 1e-12, "{label}: {comparison:?}");
    // Newton stops at |g| ≤ τ(1 + s); the residual is re-evaluated here, so allow its rounding.
    assert!(
        comparison.position_residual <= 2.0 * TOLERANCE,
        "{label}: {comparison:?}"
    );
    if rattle {
        assert!(
            comparison.velocity_residual < 1e-13,
            "{label}: {comparison:?}"
        );
    }
}

#[test]
fn sparse_tier_follows_the_fixed_size_tier_on_chains() {
    // Both tiers solve the same equations with the same Newton iteration; their linear algebra
    // differs (dense LU with pivoting and Cholesky vs. a sparse LU without pivoting, per-body
    // sums), so they differ by round-off amplified over 1000 steps.
    fn chain<const N: usize, const M: usize>() {
        let chain = PendulumChain::tao_owhadi(M);
        let start = chain.tao_owhadi_state();
        let label = format!("chain of {M}");
        let shake = shake_tiers::<_, N, M>(&chain, &start, 0.01, 1000);
        assert_tiers_agree(&format!("SHAKE, {label}"), &shake, false);
        let rattle = rattle_tiers::<_, N, M>(&chain, &start, 0.01, 1000);
        assert_tiers_agree(&format!("RATTLE, {label}"), &rattle, true);
    }
    chain::<4, 2>();
    chain::<10, 5>();
    chain::<20, 10>();
}

#[test]
fn sparse_ladder_follows_the_fixed_size_tier() {
    // L = 1: 4 rods, 16 coordinates, 14 rows; L = 2: 7 rods, 28 coordinates, 25 rows. Their
    // rows are independent at the horizontal start: the condition number of G M⁻¹ Gᵀ is 40
    // (L = 1), 140 (L = 2), 3e3 (L = 10). But the falling ladder approaches collapsed,
    // nearly singular configurations (for L = 2 the condition number grows to 3e6 at
    // t ≈ 0.83 s, for L = 1 the multipliers jump to 7e6 at t ≈ 0.91 s), where the tiers'
    // round-off is amplified by that condition number. The comparison covers the 400 steps of
    // h = 1/600 before (T = 0.67 s, condition number below 250). RATTLE steps on through
    // those events at h = 1/600 (20 000 steps for L = 1, 2 and 20); at h = 1/60 its Newton
    // iteration fails there with `NewtonDiverged` (L = 20 at t = 6.3), a typed error.
    let (h, steps) = (1.0 / 600.0, 400);
    let ladder = SpookLadder::new(1);
    let start = ladder.horizontal_state();
    assert_tiers_agree(
        "SHAKE, ladder of 1",
        &shake_tiers::<_, 16, 14>(&ladder, &start, h, steps),
        false,
    );
    assert_tiers_agree(
        "RATTLE, ladder of 1",
        &rattle_tiers::<_, 16, 14>(&ladder, &start, h, steps),
        true,
    );
    let ladder = SpookLadder::new(2);
    let start = ladder.horizontal_state();
    assert_tiers_agree(
        "SHAKE, ladder of 2",
        &shake_tiers::<_, 28, 25>(&ladder, &start, h, steps),
        false,
    );
    assert_tiers_agree(
        "RATTLE, ladder of 2",
        &rattle_tiers::<_, 28, 25>(&ladder, &start, h, steps),
        true,
    );
}

/// The fixed-size reference double pendulum with the chain's rods `√5` and `g = 1`.
fn chain_of_two_pendulum() -> DoublePendulum {
    DoublePendulum {
        m1: 1.0,
        m2: 1.0,
        l1: 5f64.sqrt(),
        l2: 5f64.sqrt(),
        g: 1.0,
    }
}

#[test]
fn sparse_rattle_is_second_order_against_the_angle_reference() {
    // An independent reference: the double pendulum integrated in its angles (no constraint)
    // by RK4 at h = 1e-4, the same motion as the chain of two.
    let chain = PendulumChain::tao_owhadi(2);
    let pendulum = chain_of_two_pendulum();
    let t_end = 2.0;
    let start = fixed_state::<4>(&chain.tao_owhadi_state());
    let reference = pendulum.constrained_reference(&start, t_end, steps_to(t_end, 1e-4));
    let hs = [0.04, 0.02, 0.01, 0.005];
    let (mut q_errors, mut v_errors) = (Vec::new(), Vec::new());
    for &h in &hs {
        let mut rattle = SparseRattle::new(&chain, h).unwrap();
        let mut state = chain.tao_owhadi_state();
        for _ in 0..steps_to(t_end, h) {
            rattle.step(&chain, &mut state).unwrap();
        }
        let error = |x: &[f64], r: &[f64]| {
            x.iter()
                .zip(r)
                .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()))
        };
        q_errors.push(error(&state.q, reference.q.as_slice()));
        v_errors.push(error(&state.v, reference.v.as_slice()));
    }
    let (q_slope, v_slope) = (
        loglog_slope(&hs, &q_errors).unwrap(),
        loglog_slope(&hs, &v_errors).unwrap(),
    );
    println!(
        "q errors {q_errors:?}, slope {q_slope:.3}; v errors {v_errors:?}, slope {v_slope:.3}"
    );
    assert!((q_slope - 2.0).abs() < 0.15, "position slope {q_slope}");
    assert!((v_slope - 2.0).abs() < 0.15, "velocity slope {v_slope}");
}

#[test]
fn sparse_chain_of_two_is_the_reference_double_pendulum() {
    // The same scheme on an independently written fixed-size model of the same motion.
    let chain = PendulumChain::tao_owhadi(2);
    let pendulum = chain_of_two_pendulum();
    let mut sparse_state = chain.tao_owhadi_state();
    let mut dense_state = fixed_state::<4>(&sparse_state);
    let mut sparse = SparseRattle::new(&chain, 0.01).unwrap();
    let mut dense = Rattle::<4, 2>::new(0.01).unwrap();
    for _ in 0..1000 {
        sparse.step(&chain, &mut sparse_state).unwrap();
        dense.step(&pendulum, &mut dense_state).unwrap();
    }
    let distance = relative_distance(&sparse_state.q, dense_state.q.as_slice())
        .max(relative_distance(&sparse_state.v, dense_state.v.as_slice()));
    assert!(distance < 1e-12, "{distance:e}");
}

/// Runs SHAKE (staggered start) and RATTLE side by side on Tao–Owhadi's chain of `links` to
/// `t_end` with step `h`; returns SHAKE's positions at every multiple of `every` and RATTLE's
/// largest energy error (SHAKE's staggered velocity has no energy of its own; the positions of
/// the two are the same).
fn tao_owhadi_run(links: usize, h: f64, t_end: f64, every: f64) -> (Vec<Vec<f64>>, f64) {
    let chain = PendulumChain::tao_owhadi(links);
    let mut shake = SparseShake::new(&chain, h).unwrap();
    let mut rattle = SparseRattle::new(&chain, h).unwrap();
    let mut shake_state = chain.tao_owhadi_state();
    let mut rattle_state = chain.tao_owhadi_state();
    shake.stagger_velocity(&chain, &mut shake_state).unwrap();
    let energy = chain.energy(&rattle_state.q, &rattle_state.v);
    let stride = steps_to(every, h);
    let (mut samples, mut worst) = (Vec::new(), 0.0f64);
    for step in 1..=steps_to(t_end, h) {
        shake.step(&chain, &mut shake_state).unwrap();
        rattle.step(&chain, &mut rattle_state).unwrap();
        // SHAKE and RATTLE have the same positions (GNI §VII.1.4).
        let same = relative_distance(&shake_state.q, &rattle_state.q);
        assert!(same < 1e-9, "SHAKE and RATTLE positions differ by {same:e}");
        worst = worst.max((chain.energy(&rattle_state.q, &rattle_state.v) - energy).abs());
        if step % stride == 0 {
            samples.push(shake_state.q.clone());
        }
    }
    (samples, worst)
}

#[test]
fn tao_owhadi_chain_converges_at_second_order_with_bounded_energy_error() {
    // EXPERIMENTS-M2 §C: n = 10, T = 50; SHAKE at h = 0.05 and 0.025 agree to max |Δq| ≈ 0.002.
    // For a second-order method that difference is (1 − 1/4) of the coarse run's error, so the
    // next halving must shrink it about 4×, and RATTLE's energy error (second order, no drift)
    // also about 4×.
    let (coarse, e_coarse) = tao_owhadi_run(10, 0.05, 50.0, 0.05);
    let (medium, e_medium) = tao_owhadi_run(10, 0.025, 50.0, 0.05);
    let (fine, e_fine) = tao_owhadi_run(10, 0.0125, 50.0, 0.05);
    let difference = |a: &[Vec<f64>], b: &[Vec<f64>]| {
        a.iter()
            .zip(b)
            .flat_map(|(a, b)| a.iter().zip(b).map(|(x, y)| (x - y).abs()))
            .fold(0.0f64, f64::max)
    };
    let (d1, d2) = (difference(&coarse, &medium), difference(&medium, &fine));
    println!(
        "max |Δq|: h 0.05 vs 0.025 {d1:.3e}, 0.025 vs 0.0125 {d2:.3e} (ratio {:.2}); \
         max |ΔE|: {e_coarse:.3e}, {e_medium:.3e}, {e_fine:.3e}",
        d1 / d2
    );
    assert!((3.0..5.5).contains(&(d1 / d2)), "Δq ratio {}", d1 / d2);
    // The pilot's 0.002 (SciPy fsolve at tolerance 1e-12); at the ratio above the coarse
    // run's own error is about 4/3 of it.
    assert!(d1 < 0.005, "max |Δq| between h = 0.05 and 0.025: {d1}");
    for (coarse, fine) in [(e_coarse, e_medium), (e_medium, e_fine)] {
        assert!(
            (3.0..5.5).contains(&(coarse / fine)),
            "energy ratio {}",
            coarse / fine
        );
    }
}

#[test]
fn sparse_steps_do_not_allocate() {
    fn count<I: SparseIntegrator<Model>, Model>(
        mut integrator: I,
        model: &Model,
        start: DynState,
    ) -> usize {
        let mut state = start;
        let before = allocations();
        for _ in 0..100 {
            integrator.step(model, &mut state).unwrap();
        }
        allocations() - before
    }
    let chain = PendulumChain::tao_owhadi(1000);
    let start = chain.tao_owhadi_state();
    assert_eq!(
        count(
            SparseShake::new(&chain, 0.01).unwrap(),
            &chain,
            start.clone()
        ),
        0,
        "SHAKE, chain"
    );
    assert_eq!(
        count(SparseRattle::new(&chain, 0.01).unwrap(), &chain, start),
        0,
        "RATTLE, chain"
    );
    let ladder = SpookLadder::new(100);
    let start = ladder.horizontal_state();
    assert_eq!(
        count(
            SparseShake::new(&ladder, 1.0 / 600.0).unwrap(),
            &ladder,
            start.clone()
        ),
        0,
        "SHAKE, ladder"
    );
    assert_eq!(
        count(
            SparseRattle::new(&ladder, 1.0 / 600.0).unwrap(),
            &ladder,
            start
        ),
        0,
        "RATTLE, ladder"
    );
}

/// A sparse model with row 0 of `inner` listed twice: a rank-deficient `G`.
struct Redundant<Model> {
    inner: Model,
    pattern: Vec<(usize, usize)>,
}

impl<Model: SparseHolonomic> Redundant<Model> {
    fn new(inner: Model) -> Self {
        let m = inner.constraint_count();
        let mut pattern = inner.jacobian_pattern().to_vec();
        let first: Vec<_> = pattern
            .iter()
            .filter(|(row, _)| *row == 0)
            .map(|&(_, col)| (m, col))
            .collect();
        pattern.extend(first);
        Redundant { inner, pattern }
    }
}

impl<Model: SparseConstantMass> SparseConstantMass for Redundant<Model> {}

impl<Model: SparseInertia> SparseInertia for Redundant<Model> {
    fn coordinate_count(&self) -> usize {
        self.inner.coordinate_count()
    }
    fn body_sizes(&self) -> &[usize] {
        self.inner.body_sizes()
    }
    fn constant_mass(&self) -> bool {
        self.inner.constant_mass()
    }
    fn mass_blocks(&self, q: &[f64], blocks: &mut [f64]) {
        self.inner.mass_blocks(q, blocks);
    }
    fn kinetic_energy(&self, q: &[f64], v: &[f64]) -> f64 {
        self.inner.kinetic_energy(q, v)
    }
}

impl<Model: SparsePotential> SparsePotential for Redundant<Model> {
    fn potential(&self, q: &[f64]) -> f64 {
        self.inner.potential(q)
    }
    fn potential_gradient(&self, q: &[f64], grad: &mut [f64]) {
        self.inner.potential_gradient(q, grad);
    }
}

impl<Model: SparseHolonomic> SparseHolonomic for Redundant<Model> {
    fn constraint_count(&self) -> usize {
        self.inner.constraint_count() + 1
    }
    fn jacobian_pattern(&self) -> &[(usize, usize)] {
        &self.pattern
    }
    fn constraints_and_jacobian(&self, q: &[f64], t: f64, g: &mut [f64], jac: &mut [f64]) {
        let (m, e) = (
            self.inner.constraint_count(),
            self.inner.jacobian_pattern().len(),
        );
        self.inner
            .constraints_and_jacobian(q, t, &mut g[..m], &mut jac[..e]);
        g[m] = g[0];
        let mut extra = e;
        for (entry, &(row, _)) in self.inner.jacobian_pattern().iter().enumerate() {
            if row == 0 {
                jac[extra] = jac[entry];
                extra += 1;
            }
        }
    }
}

/// Steps `integrator` once from `start` and returns the error, asserting that the state did
/// not change.
fn failed_step<I: SparseIntegrator<Model>, Model>(
    integrator: &mut I,
    model: &Model,
    start: &DynState,
) -> StepError {
    let mut state = start.clone();
    let err = integrator.step(model, &mut state).unwrap_err();
    let bits = |s: &DynState| {
        let mut bits = vec![s.t.to_bits()];
        bits.extend(s.q.iter().chain(&s.v).map(|x| x.to_bits()));
        bits
    };
    assert_eq!(bits(&state), bits(start), "a failed step changed the state");
    err
}

#[test]
fn redundant_rows_are_singular() {
    let singular = |e: &StepError| matches!(e, StepError::Singular { .. });
    let chain = Redundant::new(PendulumChain::tao_owhadi(5));
    let start = chain.inner.tao_owhadi_state();
    let err = failed_step(
        &mut SparseRattle::new(&chain, 0.01).unwrap(),
        &chain,
        &start,
    );
    println!("chain, rod 0 twice: {err}");
    assert!(singular(&err), "{err}");
    let err = failed_step(&mut SparseShake::new(&chain, 0.01).unwrap(), &chain, &start);
    assert!(singular(&err), "{err}");
    let ladder = Redundant::new(SpookLadder::new(3));
    let start = ladder.inner.horizontal_state();
    let err = failed_step(
        &mut SparseRattle::new(&ladder, 0.01).unwrap(),
        &ladder,
        &start,
    );
    println!("ladder, unit row 0 twice: {err}");
    assert!(singular(&err), "{err}");
}

#[test]
fn bad_states_models_and_parameters_are_typed_errors() {
    let chain = PendulumChain::tao_owhadi(5);
    let good = chain.tao_owhadi_state();
    let mut rattle = SparseRattle::new(&chain, 0.01).unwrap();
    let mut shake = SparseShake::new(&chain, 0.01).unwrap();

    // Off the manifold: bob 3 moved by 1e-6.
    let mut off = good.clone();
    off.q[6] += 1e-6;
    for err in [
        failed_step(&mut rattle, &chain, &off),
        failed_step(&mut shake, &chain, &off),
    ] {
        assert!(
            matches!(err, StepError::OffManifold { row: 3, .. }),
            "{err}"
        );
    }

    let mut bad = good.clone();
    bad.v[3] = f64::NAN;
    let err = failed_step(&mut rattle, &chain, &bad);
    assert!(
        matches!(
            err,
            StepError::NonFinite {
                quantity: "v",
                index: 3,
                ..
            }
        ),
        "{err}"
    );
    let short = DynState::new(0.0, vec![0.0; 3], vec![0.0; 3]);
    let err = failed_step(&mut shake, &chain, &short);
    assert!(
        matches!(
            err,
            StepError::InvalidModel {
                what: "state q",
                ..
            }
        ),
        "{err}"
    );

    let other = PendulumChain::tao_owhadi(6);
    let err = failed_step(&mut rattle, &other, &other.tao_owhadi_state());
    assert!(
        matches!(
            err,
            StepError::InvalidModel {
                what: "body sizes",
                ..
            }
        ),
        "{err}"
    );

    let mut broken = chain.clone();
    broken.mass = f64::NAN;
    let err = failed_step(&mut rattle, &broken, &good);
    assert!(
        matches!(err, StepError::BadParameter { name: "mass", .. }),
        "{err}"
    );
    let err = shake
        .stagger_velocity(&broken, &mut good.clone())
        .unwrap_err();
    assert!(
        matches!(err, StepError::BadParameter { name: "mass", .. }),
        "{err}"
    );

    // A huge step: Newton fails, the state is kept.
    let mut huge = SparseRattle::new(&chain, 50.0).unwrap();
    let err = failed_step(&mut huge, &chain, &good);
    assert!(
        matches!(
            err,
            StepError::NewtonDiverged { .. } | StepError::Singular { .. }
        ),
        "{err}"
    );

    for h in [0.0, -1.0, f64::NAN] {
        assert!(matches!(
            SparseRattle::new(&chain, h),
            Err(StepError::BadStepSize { .. })
        ));
        assert!(matches!(
            SparseShake::new(&chain, h),
            Err(StepError::BadStepSize { .. })
        ));
    }
    assert!(matches!(
        SparseRattle::new(&chain, 0.1)
            .unwrap()
            .with_tolerance(f64::NAN),
        Err(StepError::BadParameter {
            name: "tolerance",
            ..
        })
    ));
    // The stepper still works after all these failures.
    let mut state = good.clone();
    rattle.step(&chain, &mut state).unwrap();
}

#[test]
fn rattle_breaks_down_in_the_ladders_whiplash_at_the_papers_step() {
    // Lacoursière (2007) §6: "plain SHAKE break[s] down completely when whiplash occurs", where
    // SPOOK runs (sparse_spook.rs). RATTLE has SHAKE's positions; L = 20, h = 1/60, Newton
    // tolerance 1e-10 (EXPERIMENTS-M2 §A.5): a typed error before T = 10, never Ok with nonsense.
    let ladder = SpookLadder::new(20);
    let mut rattle = SparseRattle::new(&ladder, 1.0 / 60.0)
        .unwrap()
        .with_tolerance(1e-10)
        .unwrap();
    let mut state = ladder.horizontal_state();
    let failure = (0..600).find_map(|_| rattle.step(&ladder, &mut state).err());
    println!("{failure:?} at t = {:.2}", state.t);
    assert!(
        matches!(failure, Some(StepError::NewtonDiverged { .. })),
        "{failure:?}"
    );
}

/// Runs RATTLE (tolerance `1e-12`, as the chain example) on Tao–Owhadi's chain of `links` with
/// step `h` for `⌈t_end / h⌉` steps or until the first failure; returns the last good state, the failure and
/// the most Newton iterations of a step. A failed step must leave the state unchanged.
fn chain_run(links: usize, h: f64, t_end: f64) -> (DynState, Option<StepError>, u32) {
    let chain = PendulumChain::tao_owhadi(links);
    let mut rattle = SparseRattle::new(&chain, h)
        .unwrap()
        .with_tolerance(1e-12)
        .unwrap();
    let mut state = chain.tao_owhadi_state();
    let mut most = 0;
    for _ in 0..(t_end / h).ceil() as usize {
        let before = state.clone();
        match rattle.step(&chain, &mut state) {
            Ok(report) => most = most.max(report.newton_iterations),
            Err(err) => {
                assert_eq!(state.q, before.q, "a failed step changed q");
                assert_eq!(state.v, before.v, "a failed step changed v");
                return (state, Some(err), most);
            }
        }
    }
    (state, None, most)
}

#[test]
fn rattle_runs_a_long_chain_below_its_stability_limit_and_breaks_down_above() {
    // Tao–Owhadi's chain of 10 000 at the example's former default h = 0.05 fails at
    // t = 0.10: not Newton's fault (it stalls at a positive minimum of |g| with a line search
    // too) but Verlet's stability limit across the taut chain, √(l/(n g)) = 0.0150.
    let (links, chain) = (10_000, PendulumChain::tao_owhadi(10_000));
    let limit = projection_step_limit(links, chain.length, chain.gravity);
    assert!((limit - 0.01495).abs() < 1e-4, "{limit}");
    let h = projection_step(links, chain.length, chain.gravity, 0.05);
    assert_eq!(h, 0.01, "the largest 0.05 / k below 0.8 × {limit}");
    let (state, failure, most) = chain_run(links, h, 1.0);
    assert!(failure.is_none(), "{failure:?} at t = {}", state.t);
    assert!(most <= 2, "{most} Newton iterations in a step");
    let (q_residual, v_residual) = residuals(&chain, &state.q, &state.v);
    assert!(
        q_residual < 2e-12 && v_residual < 1e-10,
        "{q_residual:e} {v_residual:e}"
    );
    // Above the limit the step's equations lose their solution: a typed error, state kept.
    for h in [0.05, 1.25 * limit] {
        let (state, failure, _) = chain_run(links, h, 1.0);
        assert!(
            matches!(failure, Some(StepError::NewtonDiverged { .. })),
            "h = {h}: {failure:?} at t = {}",
            state.t
        );
    }
}
