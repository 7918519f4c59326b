//! The sparse step Jacobians as products (`SparseDifferentiableStep` of `SparseSpook`,
//! `SparseRattle`, `SparseShake`, `SparseVerlet` and `SparseZhangSkeelSimplified`,
//! `runtime/.../{spook,projection,carried}/sparse_jacobian.rs`),
//! on models with families compiled with `derivatives: [step_jacobians]`:
//!
//! - every column of `[J | J_p]`, taken by `tangent` along the unit directions of `(q, v, p)`,
//!   against central differences of the plain sparse step (the bound of the module docs), at
//!   random states of the varied pendulum chain (a mass and a length per link: parameter
//!   families) and of the ladder (L = 5, scalar parameters in the mass, the rows and the
//!   potential), SPOOK; and of the DNA chain (N = 8, unconstrained, its Morse parameters) and
//!   a ring of oscillators with a mass per member, `SparseVerlet` and `SparseZhangSkeelSimplified`
//!   (at steps where `βh² Hess V`, its third derivative and its parameter derivatives weigh in
//!   the factored `M + βh² Hess V`); and GLA around SPOOK (the varied chain) and around Z&Ss
//!   (the ring), along one realization of its noise, with the masses as parameters; stiff Z&Ss
//!   on a penalized chain, in the state (its parameter products are refused);
//! - `adjoint` against those columns: `(Jᵀ w)_j = Σ_i J_ij w_i` for a random `w`, an
//!   independent contraction of the same derivatives (the adjoint solves with `Kᵀ`, the
//!   tangent with `K`);
//! - SPOOK, RATTLE and SHAKE along the chain: the step composed with the chain's start (angles,
//!   rates and lengths; RATTLE and SHAKE step only from states on the constraints) against `J E + J_p`, and
//!   the adjoint against the same directions;
//! - a run's gradient with respect to every link mass by `sparse_adjoint_gradient`, against
//!   forward sensitivities (`SparseForwardSensitivity`) of chosen masses, to `1e-10` relative,
//!   on a chain of 100 links, SPOOK and RATTLE (the 1000-link run and its cost in forward runs
//!   are the `sparse_adjoint` benchmark).

use mechanism::mechanism;
use mechanism::models::{DnaChain, Ladder, VariedPendulumChain};
use mechanism::runtime::model::{
    SparseHolonomic, SparseInertia, SparseNonholonomic, SparseParameters,
};
use mechanism::runtime::simulation::{
    sparse_adjoint_gradient, AdjointSettings, SparseForwardSensitivity, SparseSeed,
};
use mechanism::runtime::{
    DynState, Penalized, SparseDifferentiableStep, SparseIntegrator, SparseLangevin, SparseRattle,
    SparseShake, SparseSpook, SparseVerlet, SparseZhangSkeelSimplified, SparseZhangSkeelStiff,
    StepError,
};
use proptest::prelude::*;

use super::compare;

const H: f64 = 0.01;

mechanism! {
    /// A ring of `N` anharmonic oscillators with a mass per member (a parameter family in `M`)
    /// and a coupling `k`: what the DNA chain, whose inertia has no parameter, cannot test.
    pub struct Ring {
        sizes: { N = 6 },
        coordinates: [x[N]],
        parameters: { m[N] = 1.0, k = 2.0, c = 0.3 },
        kinetic: sum(0..N, |i| 0.5 * m[i] * dot(x[i]).powi(2)),
        potential: sum(0..N, |i| 0.5 * k * (x[(i + 1) % N] - x[i]).powi(2)
            + 0.25 * c * x[i].powi(4) + 0.5 * m[i] * x[i].powi(2)),
        integrators: [verlet, zss],
        derivatives: [step_jacobians],
    }
}

mechanism! {
    /// A chain of `N` pendula whose rods are rows, for stiff Z&Ss on its penalized form: the
    /// penalty `½ω²|g|²` is the stiff part, whose Hessian the step factors and whose third
    /// derivative (`W‴ − V‴`, with a quartic term in `V` so that `V‴` does not vanish) enters
    /// the Jacobian.
    pub struct StiffChain {
        sizes: { N = 4 },
        coordinates: [x[N], y[N]],
        parameters: { m = 1.0, l = 1.5, g = 1.0 },
        kinetic: sum(0..N, |i| 0.5 * m * (dot(x[i]).powi(2) + dot(y[i]).powi(2))),
        potential: sum(0..N, |i| m * g * y[i] + 0.02 * x[i].powi(4)),
        holonomic: {
            anchor: x[0].powi(2) + y[0].powi(2) - l.powi(2),
            rod[i in 1..N]: (x[i] - x[i - 1]).powi(2) + (y[i] - y[i - 1]).powi(2) - l.powi(2),
        },
        integrators: [zss_stiff],
        derivatives: [step_jacobians],
    }
}

/// The plain sparse step of a fresh integrator (`make`) from `(t, q, v)` with the parameters
/// `p`, where `z = (q, v, p)` (or `z = (q, v)`, the model's parameters kept).
fn step_map<Model, I>(make: &impl Fn(&Model) -> I, model: &Model, t: f64, z: &[f64]) -> Vec<f64>
where
    Model: Clone + SparseParameters + SparseInertia,
    I: SparseIntegrator<Model>,
{
    let n = model.coordinate_count();
    let mut changed = model.clone();
    if z.len() > 2 * n {
        changed.set_parameter_values(&z[2 * n..]).unwrap();
    }
    let mut state = DynState::new(t, z[..n].to_vec(), z[n..2 * n].to_vec());
    make(&changed)
        .step(&changed, &mut state)
        .expect("the step from a perturbed state");
    state.q.into_iter().chain(state.v).collect()
}

/// Checks every column of `[J | J_p]` of one step of the integrator `make` builds, from
/// `state`, against central differences (difference step and estimate of `κ` as in the module
/// docs), and the adjoint against the columns; returns the columns.
fn check<Model, I>(
    label: &str,
    make: impl Fn(&Model) -> I,
    model: &Model,
    state: &DynState,
    weights: &[f64],
) -> Vec<Vec<f64>>
where
    Model: Clone + SparseParameters + SparseInertia,
    I: SparseDifferentiableStep<Model>,
{
    check_columns(label, make, model, state, weights, model.parameter_count())
}

/// [`check`] of `J` and, with `p` the model's parameter count, `J_p`; with `p = 0` the state
/// Jacobian alone (products with empty parameter directions and gradients).
fn check_columns<Model, I>(
    label: &str,
    make: impl Fn(&Model) -> I,
    model: &Model,
    state: &DynState,
    weights: &[f64],
    p: usize,
) -> Vec<Vec<f64>>
where
    Model: Clone + SparseParameters + SparseInertia,
    I: SparseDifferentiableStep<Model>,
{
    let n = model.coordinate_count();
    let mut integrator = make(model);
    let mut stepped = state.clone();
    integrator.step_linearized(model, &mut stepped).unwrap();
    let mut plain = state.clone();
    make(model).step(model, &mut plain).unwrap();
    assert_eq!(
        (&stepped.q, &stepped.v),
        (&plain.q, &plain.v),
        "{label}: step_linearized must take the plain step"
    );
    let columns: Vec<Vec<f64>> = (0..2 * n + p)
        .map(|j| {
            let mut direction = vec![0.0; 2 * n + p];
            direction[j] = 1.0;
            let (mut q, mut v) = (vec![0.0; n], vec![0.0; n]);
            let (dq, rest) = direction.split_at(n);
            let (dv, dp) = rest.split_at(n);
            integrator
                .tangent(model, (dq, dv, dp), (&mut q, &mut v))
                .unwrap();
            q.into_iter().chain(v).collect()
        })
        .collect();
    let mut z: Vec<f64> = state.q.iter().chain(&state.v).copied().collect();
    if p > 0 {
        z.extend(model.parameter_values());
    }
    let map = |z: &[f64]| step_map(&make, model, state.t, z);
    compare(
        label,
        (&map, "z"),
        &z,
        |row, column| columns[column][row],
        (1e-5, 1e3),
    );

    // Jᵀ w against the columns.
    let (w_q, w_v) = weights.split_at(n);
    let (mut a_q, mut a_v, mut a_p) = (vec![0.0; n], vec![0.0; n], vec![0.0; p]);
    integrator
        .adjoint(model, (w_q, w_v), (&mut a_q, &mut a_v), &mut a_p)
        .unwrap();
    let adjoint: Vec<f64> = a_q.into_iter().chain(a_v).chain(a_p).collect();
    for (j, (column, adjoint)) in columns.iter().zip(&adjoint).enumerate() {
        let exact: f64 = column.iter().zip(weights).map(|(c, w)| c * w).sum();
        let scale: f64 = column.iter().zip(weights).map(|(c, w)| (c * w).abs()).sum();
        assert!(
            (adjoint - exact).abs() <= 1e-9 * scale.max(1e-300),
            "{label}: (Jᵀ w)_{j} = {adjoint:e}, Σ_i J_ij w_i = {exact:e}"
        );
    }
    columns
}

/// SPOOK with the step of these tests.
fn spook<Model: SparseInertia + SparseHolonomic + SparseNonholonomic>(
    model: &Model,
) -> SparseSpook {
    SparseSpook::new(model, H).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]

    #[test]
    fn the_varied_chains_products_match_central_differences(
        angles in prop::array::uniform5(-1.5..1.5f64),
        rates in prop::array::uniform5(-0.5..0.5f64),
        masses in prop::array::uniform5(0.5..2.0f64),
        lengths in prop::array::uniform5(1.0..2.5f64),
        g in 0.5..2.0f64,
        weights in prop::collection::vec(-1.0..1.0f64, 20),
    ) {
        let mut model = VariedPendulumChain::new(5).unwrap();
        model.m = masses.to_vec();
        model.l = lengths.to_vec();
        model.g = g;
        let state = model.state(&angles, &rates);
        check("varied chain (sparse)", spook, &model, &state, &weights);
    }

    #[test]
    fn the_ladders_products_match_central_differences(
        noise in prop::collection::vec(-1e-3..1e-3f64, 64),
        rates in prop::collection::vec(-0.5..0.5f64, 64),
        weights in prop::collection::vec(-1.0..1.0f64, 128),
    ) {
        let model = Ladder::new(5).unwrap();
        let mut state = model.horizontal_state();
        for ((q, v), (noise, rate)) in state.q.iter_mut().zip(&mut state.v).zip(noise.iter().zip(&rates)) {
            *q += noise;
            *v = *rate;
        }
        check("ladder L = 5 (sparse)", spook, &model, &state, &weights);
    }

    #[test]
    fn the_dna_chains_verlet_products_match_central_differences(
        theta in prop::collection::vec(0.0..6.2f64, 8),
        rates in prop::collection::vec(-1.0..1.0f64, 8),
        weights in prop::collection::vec(-1.0..1.0f64, 16),
    ) {
        // ε = 1 makes the Morse wells (and their parameters a, x0) weigh in the step.
        let mut model = DnaChain::new(8).unwrap();
        model.eps = 1.0;
        let state = DynState::new(0.0, theta, rates);
        let verlet = |model: &DnaChain| SparseVerlet::new(model, H).unwrap();
        check("DNA chain N = 8, Verlet (sparse)", verlet, &model, &state, &weights);
    }

    #[test]
    fn the_dna_chains_zss_products_match_central_differences(
        theta in prop::collection::vec(0.0..6.2f64, 8),
        rates in prop::collection::vec(-1.0..1.0f64, 8),
        weights in prop::collection::vec(-1.0..1.0f64, 16),
    ) {
        // With ε = 1 the Morse wells' curvature reaches about −800, so K = M + βh² Hess V stays
        // positive definite (as the sparse tier requires) for h = 0.02 but not for 0.1.
        let mut model = DnaChain::new(8).unwrap();
        model.eps = 1.0;
        let state = DynState::new(0.0, theta, rates);
        let zss = |model: &DnaChain| SparseZhangSkeelSimplified::new(model, 0.02).unwrap();
        check("DNA chain N = 8, Z&Ss (sparse)", zss, &model, &state, &weights);
    }

    #[test]
    fn a_rings_verlet_and_zss_products_with_masses_match_central_differences(
        x in prop::collection::vec(-1.5..1.5f64, 6),
        rates in prop::collection::vec(-1.0..1.0f64, 6),
        masses in prop::collection::vec(0.5..2.0f64, 6),
        weights in prop::collection::vec(-1.0..1.0f64, 12),
    ) {
        let mut model = Ring::new(6).unwrap();
        model.m = masses;
        let state = DynState::new(0.0, x, rates);
        let verlet = |model: &Ring| SparseVerlet::new(model, H).unwrap();
        check("ring N = 6, Verlet (sparse)", verlet, &model, &state, &weights);
        // The ring's Hess V is positive definite (convex terms only), so K is at any step; at
        // h = 0.1, βh² Hess V and its derivatives (V‴ from the quartic, ∂/∂k, ∂/∂c, ∂/∂m)
        // weigh in K against M.
        let zss = |model: &Ring| SparseZhangSkeelSimplified::new(model, 0.1).unwrap();
        check("ring N = 6, Z&Ss (sparse)", zss, &model, &state, &weights);
    }

    #[test]
    fn gla_products_along_its_noise_match_central_differences(
        angles in prop::array::uniform5(-1.5..1.5f64),
        rates in prop::array::uniform5(-0.5..0.5f64),
        masses in prop::array::uniform5(0.5..2.0f64),
        x in prop::collection::vec(-1.5..1.5f64, 6),
        ring_rates in prop::collection::vec(-1.0..1.0f64, 6),
        seed in any::<u64>(),
        weights in prop::collection::vec(-1.0..1.0f64, 20),
    ) {
        // Every evaluation builds the integrator afresh with the same seed: the same draws.
        // The chain's bobs and the ring's members are diagonal blocks of M holding the masses,
        // so the flow's slopes in the masses enter the parameter columns.
        let mut chain = VariedPendulumChain::new(5).unwrap();
        chain.m = masses.to_vec();
        let state = chain.state(&angles, &rates);
        let gla = |model: &VariedPendulumChain| {
            SparseLangevin::new(model, SparseSpook::new(model, H).unwrap(), H, 2.0, 0.5, seed).unwrap()
        };
        check("varied chain, GLA(SPOOK) (sparse)", gla, &chain, &state, &weights);
        let ring = Ring::new(6).unwrap();
        let state = DynState::new(0.0, x, ring_rates);
        let gla = |model: &Ring| {
            let zss = SparseZhangSkeelSimplified::new(model, 0.05).unwrap();
            SparseLangevin::new(model, zss, 0.05, 1.0, 1.0, seed).unwrap()
        };
        check("ring N = 6, GLA(Z&Ss) (sparse)", gla, &ring, &state, &weights[..12]);
    }

    #[test]
    fn stiff_zss_state_products_match_central_differences_on_a_penalized_chain(
        angles in prop::array::uniform4(-1.2..1.2f64),
        stretch in prop::array::uniform4(-0.01..0.01f64),
        rates in prop::collection::vec(-0.5..0.5f64, 8),
        weights in prop::collection::vec(-1.0..1.0f64, 16),
    ) {
        // Bobs near the rods' lengths (stretched by up to 1 %), at ω = 20 and h = 0.1, where
        // βh²ω² = 1.6: the penalty's Hessian and third derivative weigh in the step (at
        // h = 0.05 the third derivative's part falls below the bound). The sparse tier factors
        // M + βh² Hess(½ω²|g|²) without pivoting, and a rod compressed at the step's end can
        // make it indefinite: such a state has no step, hence no Jacobian, and is skipped.
        let model = Penalized::new(StiffChain::new(4).unwrap(), 20.0);
        let (mut x, mut y, mut q) = (0.0, 0.0, vec![0.0; 8]);
        for (i, (angle, stretch)) in angles.iter().zip(&stretch).enumerate() {
            x += 1.5 * (1.0 + stretch) * angle.sin();
            y -= 1.5 * (1.0 + stretch) * angle.cos();
            (q[2 * i], q[2 * i + 1]) = (x, y); // body by body: (x[i], y[i])
        }
        let state = DynState::new(0.0, q, rates);
        let stiff = |model: &Penalized<StiffChain>| SparseZhangSkeelStiff::new(model, 0.1).unwrap();
        let stepped = stiff(&model).step(&model, &mut state.clone());
        prop_assume!(!matches!(stepped, Err(StepError::NotPositiveDefinite { .. })));
        check_columns("penalized chain N = 4, stiff Z&Ss (sparse)", stiff, &model, &state, &weights, 0);
        // In the parameters the penalty is not differentiated: refused, not approximated.
        let mut integrator = stiff(&model);
        let mut stepped = state.clone();
        integrator.step_linearized(&model, &mut stepped).unwrap();
        let (mut out_q, mut out_v) = (vec![0.0; 8], vec![0.0; 8]);
        let refused = integrator.tangent(&model, (&[0.0; 8], &[0.0; 8], &[1.0, 0.0, 0.0]), (&mut out_q, &mut out_v));
        prop_assert!(matches!(refused, Err(StepError::Unsupported { .. })), "{refused:?}");
    }
}

/// A product without a linearized step, or after a plain one, is refused.
#[test]
fn a_product_needs_a_linearized_step() {
    let model = VariedPendulumChain::new(3).unwrap();
    let state = model_state(&model);
    let mut spook = SparseSpook::new(&model, H).unwrap();
    let (zeros, mut q, mut v) = (vec![0.0; 6], vec![0.0; 6], vec![0.0; 6]);
    let refused = spook.tangent(&model, (&zeros, &zeros, &[]), (&mut q, &mut v));
    assert!(refused.is_err(), "{refused:?}");
    spook.step_linearized(&model, &mut state.clone()).unwrap();
    spook
        .tangent(&model, (&zeros, &zeros, &[]), (&mut q, &mut v))
        .unwrap();
    spook.step(&model, &mut state.clone()).unwrap();
    let refused = spook.tangent(&model, (&zeros, &zeros, &[]), (&mut q, &mut v));
    assert!(refused.is_err(), "{refused:?}");
    // A parameter direction of the wrong length.
    spook.step_linearized(&model, &mut state.clone()).unwrap();
    let refused = spook.tangent(&model, (&zeros, &zeros, &[1.0]), (&mut q, &mut v));
    assert!(refused.is_err(), "{refused:?}");
    // A member of a parameter family that is not finite, named by its index.
    let mut broken = model.clone();
    broken.m[1] = f64::NAN;
    let refused = spook.tangent(&broken, (&zeros, &zeros, &[]), (&mut q, &mut v));
    assert!(
        matches!(
            refused,
            Err(StepError::BadParameterMember {
                family: "m",
                index: 1,
                ..
            })
        ),
        "{refused:?}"
    );
}

/// The chain bent at about 30° from the vertical, turning.
fn model_state(model: &VariedPendulumChain) -> DynState {
    let links = model.links();
    let angles: Vec<f64> = (0..links).map(|i| 0.5 + 0.01 * i as f64).collect();
    let rates: Vec<f64> = (0..links).map(|i| 0.2 - 0.003 * i as f64).collect();
    model.state(&angles, &rates)
}

/// The gradient of `L = Σ_k h (w·q_k + ½|v_k|²)` over 100 steps of a 100-link chain with
/// respect to every link mass, by the adjoint, against forward sensitivities of three masses
/// (seeds `e_{m[i]}`), to `1e-10` relative; and the same bits for every state kept. SPOOK and
/// RATTLE.
#[test]
fn the_adjoint_gradient_in_every_mass_matches_forward_sensitivities() {
    let links = 100;
    let mut model = VariedPendulumChain::new(links).unwrap();
    for (i, m) in model.m.iter_mut().enumerate() {
        *m = 1.0 + 0.5 * ((i * 7) % 11) as f64 / 11.0;
    }
    gradient_in_every_mass("SPOOK", |model| SparseSpook::new(model, H).unwrap(), &model);
    gradient_in_every_mass(
        "RATTLE",
        |model| SparseRattle::new(model, H).unwrap(),
        &model,
    );
}

/// The check of [`the_adjoint_gradient_in_every_mass_matches_forward_sensitivities`] with the
/// integrator `make` builds.
fn gradient_in_every_mass<I>(
    label: &str,
    make: impl Fn(&VariedPendulumChain) -> I,
    model: &VariedPendulumChain,
) where
    I: SparseDifferentiableStep<VariedPendulumChain>,
{
    let links = model.links();
    let initial = model_state(model);
    let n = 2 * links;
    let weights: Vec<f64> = (0..n).map(|i| ((i * 13) % 7) as f64 / 7.0 - 0.5).collect();
    let loss = |_: usize, state: &DynState, grad_q: &mut [f64], grad_v: &mut [f64]| {
        let mut value = 0.0;
        for i in 0..n {
            value += H * (weights[i] * state.q[i] + 0.5 * state.v[i] * state.v[i]);
            grad_q[i] = H * weights[i];
            grad_v[i] = H * state.v[i];
        }
        value
    };
    let steps = 100;
    let mut integrator = make(model);
    let adjoint = sparse_adjoint_gradient(
        &mut integrator,
        model,
        &initial,
        steps,
        AdjointSettings::default(),
        loss,
    )
    .unwrap();
    let every = sparse_adjoint_gradient(
        &mut integrator,
        model,
        &initial,
        steps,
        AdjointSettings { segment: Some(1) },
        loss,
    )
    .unwrap();
    assert_eq!(
        adjoint, every,
        "{label}: the states kept do not change the gradient"
    );
    assert_eq!(adjoint.p.len(), 1 + 2 * links);

    // Forward sensitivities of m[0], m[links/2], m[links-1] (parameters 1 + i).
    let chosen = [0, links / 2, links - 1];
    let seeds = chosen
        .iter()
        .map(|&i| {
            let mut p = vec![0.0; model.parameter_count()];
            p[1 + i] = 1.0;
            SparseSeed {
                q: vec![0.0; n],
                v: vec![0.0; n],
                p,
            }
        })
        .collect();
    let mut sensitivity = SparseForwardSensitivity::new(seeds);
    let mut integrator = make(model);
    let mut state = initial.clone();
    let mut forward = [0.0; 3];
    let (mut grad_q, mut grad_v) = (vec![0.0; n], vec![0.0; n]);
    let mut total = 0.0;
    for k in 0..=steps {
        if k > 0 {
            sensitivity
                .step(&mut integrator, model, &mut state)
                .unwrap();
        }
        total += loss(k, &state, &mut grad_q, &mut grad_v);
        for (s, forward) in forward.iter_mut().enumerate() {
            let (dq, dv) = sensitivity.tangent(s).unwrap();
            *forward += dq.iter().zip(&grad_q).map(|(a, b)| a * b).sum::<f64>()
                + dv.iter().zip(&grad_v).map(|(a, b)| a * b).sum::<f64>();
        }
    }
    assert!(
        (adjoint.loss - total).abs() <= 1e-12 * total.abs(),
        "{label}: the loss"
    );
    for (&i, forward) in chosen.iter().zip(forward) {
        let backward = adjoint.p[1 + i];
        assert!(
            (backward - forward).abs() <= 1e-10 * forward.abs(),
            "{label}: ∂L/∂m[{i}]: adjoint {backward:e}, forward {forward:e}"
        );
        assert!(
            forward.abs() > 1e-6,
            "{label}: ∂L/∂m[{i}] = {forward:e} is too small to test"
        );
    }
}

/// The derivative of the chain's state `VariedPendulumChain::state(angles, rates)` (with the
/// model's lengths) along column `column` of `z = (angles, rates, p)`, `p = (g, m, l)`: bob `k`
/// is at `Σ_{i≤k} l_i (sin a_i, −cos a_i)` with velocity `Σ_{i≤k} l_i r_i (cos a_i, sin a_i)`.
/// Returns `(δq₀, δv₀, δp)`.
fn chain_direction(
    model: &VariedPendulumChain,
    angles: &[f64],
    rates: &[f64],
    column: usize,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let links = model.links();
    let (mut dq, mut dv) = (vec![0.0; 2 * links], vec![0.0; 2 * links]);
    let mut dp = vec![0.0; model.parameter_count()];
    let (kind, i) = (column / links, column % links);
    let (l, (sin, cos), r) = (model.l[i], angles[i].sin_cos(), rates[i]);
    // (∂q_k, ∂v_k) for every bob k ≥ i, by the kind of column.
    let by = match column {
        c if c < 2 * links && kind == 0 => [l * cos, l * sin, -l * sin * r, l * cos * r],
        c if c < 2 * links => [0.0, 0.0, l * cos, l * sin],
        _ => {
            let p = column - 2 * links;
            dp[p] = 1.0;
            // p = 1 + links + i is the length l_i: the start moves with it.
            if let Some(i) = p.checked_sub(1 + links) {
                let ((sin, cos), r) = (angles[i].sin_cos(), rates[i]);
                for k in i..links {
                    (dq[2 * k], dq[2 * k + 1]) = (sin, -cos);
                    (dv[2 * k], dv[2 * k + 1]) = (cos * r, sin * r);
                }
            }
            return (dq, dv, dp);
        }
    };
    for k in i..links {
        (dq[2 * k], dq[2 * k + 1], dv[2 * k], dv[2 * k + 1]) = (by[0], by[1], by[2], by[3]);
    }
    (dq, dv, dp)
}

/// Checks `J E + J_p ∂p/∂z` of one step of the integrator `make` builds from the chain's
/// state at `(angles, rates)` against central differences of the step composed with the
/// start, `z = (angles, rates, p)` (the start stays on the constraints, which RATTLE needs),
/// and the adjoint against the same columns through `E`; see [`chain_direction`].
fn check_along_the_chain<I>(
    label: &str,
    make: impl Fn(&VariedPendulumChain) -> I,
    model: &VariedPendulumChain,
    angles: &[f64],
    rates: &[f64],
    weights: &[f64],
) where
    I: SparseDifferentiableStep<VariedPendulumChain>,
{
    let links = model.links();
    let (n, p) = (2 * links, model.parameter_count());
    let state = model.state(angles, rates);
    let mut integrator = make(model);
    let mut stepped = state.clone();
    integrator.step_linearized(model, &mut stepped).unwrap();
    let mut plain = state.clone();
    make(model).step(model, &mut plain).unwrap();
    assert_eq!(
        (&stepped.q, &stepped.v),
        (&plain.q, &plain.v),
        "{label}: step_linearized must take the plain step"
    );
    let directions: Vec<_> = (0..2 * links + p)
        .map(|column| chain_direction(model, angles, rates, column))
        .collect();
    let columns: Vec<Vec<f64>> = directions
        .iter()
        .map(|(dq, dv, dp)| {
            let (mut q, mut v) = (vec![0.0; n], vec![0.0; n]);
            integrator
                .tangent(model, (dq, dv, dp), (&mut q, &mut v))
                .unwrap();
            q.into_iter().chain(v).collect()
        })
        .collect();
    let mut z: Vec<f64> = angles.iter().chain(rates).copied().collect();
    z.extend(model.parameter_values());
    let map = |z: &[f64]| {
        let mut changed = model.clone();
        changed.set_parameter_values(&z[2 * links..]).unwrap();
        let mut state = changed.state(&z[..links], &z[links..2 * links]);
        make(&changed)
            .step(&changed, &mut state)
            .expect("the step from a perturbed start");
        state.q.into_iter().chain(state.v).collect::<Vec<f64>>()
    };
    compare(
        label,
        (&map, "z"),
        &z,
        |row, column| columns[column][row],
        (1e-5, 1e3),
    );

    // ⟨Jᵀ w, (δq, δv)⟩ + ⟨J_pᵀ w, δp⟩ = ⟨w, J (δq, δv) + J_p δp⟩ for every direction.
    let (w_q, w_v) = weights.split_at(n);
    let (mut a_q, mut a_v, mut a_p) = (vec![0.0; n], vec![0.0; n], vec![0.0; p]);
    integrator
        .adjoint(model, (w_q, w_v), (&mut a_q, &mut a_v), &mut a_p)
        .unwrap();
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(a, b)| a * b).sum::<f64>();
    for (j, ((dq, dv, dp), column)) in directions.iter().zip(&columns).enumerate() {
        let backward = dot(&a_q, dq) + dot(&a_v, dv) + dot(&a_p, dp);
        let forward = dot(column, weights);
        let scale: f64 = column.iter().zip(weights).map(|(c, w)| (c * w).abs()).sum();
        assert!(
            (backward - forward).abs() <= 1e-9 * scale.max(1e-300),
            "{label}: direction {j}: adjoint {backward:e}, tangent {forward:e}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(6))]

    #[test]
    fn spook_rattle_and_shake_along_the_chain_match_central_differences(
        angles in prop::array::uniform4(-1.5..1.5f64),
        rates in prop::array::uniform4(-0.5..0.5f64),
        masses in prop::array::uniform4(0.5..2.0f64),
        lengths in prop::array::uniform4(1.0..2.5f64),
        g in 0.5..2.0f64,
        weights in prop::collection::vec(-1.0..1.0f64, 16),
    ) {
        let mut model = VariedPendulumChain::new(4).unwrap();
        model.m = masses.to_vec();
        model.l = lengths.to_vec();
        model.g = g;
        let spook = |model: &VariedPendulumChain| SparseSpook::new(model, H).unwrap();
        let rattle = |model: &VariedPendulumChain| SparseRattle::new(model, H).unwrap();
        check_along_the_chain("SPOOK along the chain", spook, &model, &angles, &rates, &weights);
        check_along_the_chain("RATTLE along the chain", rattle, &model, &angles, &rates, &weights);
        let shake = |model: &VariedPendulumChain| SparseShake::new(model, H).unwrap();
        check_along_the_chain("SHAKE along the chain", shake, &model, &angles, &rates, &weights);
    }
}
