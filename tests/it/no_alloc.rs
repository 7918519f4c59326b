//! A counting global allocator shows that a step of a fixed-size model performs no heap
//! allocation, for every integrator on the generated double pendulum.

use mechanism::models::DoublePendulum;
use mechanism::runtime::integrators::stabilized::{
    Baumgarte, PostStabilization, DOPRI5, HEUN, RK4,
};
use mechanism::runtime::{
    DivergenceGuard, Dopri5, GeneratedSolve, Holonomic, Integrator, Livens, Newmark,
    NewmarkOneIteration, Penalized, PushForwardNewmark, Rattle, Regularization, SVector, Shake,
    Spook, SpookCoefficients, StabilizedRk, State, SymplecticEuler, Verlet, ZhangSkeel,
    ZhangSkeelSimplified, ZhangSkeelStiff,
};

use crate::support::allocations;

/// Runs `steps` steps after one warm-up step and returns the allocations they made.
fn allocations_in_steps<Model, I: Integrator<Model, 4>>(
    integrator: &mut I,
    model: &Model,
    steps: usize,
) -> usize {
    let mut state: State<4> = DoublePendulum::initial_state();
    integrator.step(model, &mut state).expect("warm-up step");
    let before = allocations();
    for _ in 0..steps {
        integrator.step(model, &mut state).expect("step");
    }
    allocations() - before
}

#[test]
fn counter_sees_allocations() {
    let before = allocations();
    let boxed = std::hint::black_box(Box::new(1.0_f64));
    drop(boxed);
    assert_eq!(
        allocations() - before,
        1,
        "the counting allocator must count"
    );
}

#[test]
fn spook_step_does_not_allocate() {
    // The generated double pendulum has the whole step `mechanism!` generates, which SPOOK runs;
    // the hand-written reference pendulum has none, so SPOOK runs its generic step.
    let model = DoublePendulum::default();
    let (h, state) = (1.0 / 60.0, DoublePendulum::initial_state());
    let coefficients = SpookCoefficients::new(h, &[Regularization::default(); 2]);
    let (mut q, mut v, mut lambda) = (state.q, state.v, SVector::zeros());
    let solved = model.spook_step(
        &mut q,
        &mut v,
        state.t,
        h,
        &coefficients,
        &DivergenceGuard::default(),
        &mut lambda,
    );
    assert_eq!(solved, GeneratedSolve::Solved, "the generated step runs");
    let mut spook = Spook::<4, 2>::new(h).expect("valid step size");
    assert_eq!(allocations_in_steps(&mut spook, &model, 1000), 0);
    let reference = mechanism::runtime::reference::double_pendulum::DoublePendulum::default();
    assert_eq!(allocations_in_steps(&mut spook, &reference, 1000), 0);
}

#[test]
fn zhang_skeel_steps_do_not_allocate() {
    let model = Penalized::new(DoublePendulum::default(), 20.0);
    let mut zss = ZhangSkeelSimplified::<4>::new(0.1).expect("valid step size");
    assert_eq!(allocations_in_steps(&mut zss, &model, 1000), 0);
    let mut zs = ZhangSkeel::<4>::new(0.1).expect("valid step size");
    assert_eq!(allocations_in_steps(&mut zs, &model, 1000), 0);
}

#[test]
fn newmark_family_and_explicit_steps_do_not_allocate() {
    let model = Penalized::new(DoublePendulum::default(), 20.0);
    let h = 0.01;
    let counts = [
        allocations_in_steps(&mut ZhangSkeelStiff::<4>::new(h).unwrap(), &model, 500),
        allocations_in_steps(&mut Newmark::<4>::new(h).unwrap(), &model, 500),
        allocations_in_steps(&mut NewmarkOneIteration::<4>::new(h).unwrap(), &model, 500),
        allocations_in_steps(&mut PushForwardNewmark::<4>::new(h).unwrap(), &model, 500),
        allocations_in_steps(&mut SymplecticEuler::<4>::new(h).unwrap(), &model, 500),
        allocations_in_steps(&mut Verlet::<4>::new(h).unwrap(), &model, 500),
    ];
    assert_eq!(counts, [0; 6]);
}

#[test]
fn constrained_steps_do_not_allocate() {
    let model = DoublePendulum::default();
    let h = 0.01;
    let mut stabilized = StabilizedRk::<4, 2, 4>::new(RK4, h)
        .unwrap()
        .with_post_stabilization(PostStabilization::BothTwice);
    let mut baumgarte = StabilizedRk::<4, 2, 2>::new(HEUN, h)
        .unwrap()
        .with_baumgarte(Baumgarte::new(12.0, 70.0).unwrap());
    let counts = [
        allocations_in_steps(&mut Shake::<4, 2>::new(h).unwrap(), &model, 500),
        allocations_in_steps(&mut Rattle::<4, 2>::new(h).unwrap(), &model, 500),
        allocations_in_steps(&mut Livens::<4, 2>::new(h).unwrap(), &model, 500),
        allocations_in_steps(&mut stabilized, &model, 500),
        allocations_in_steps(&mut baumgarte, &model, 500),
        allocations_in_steps(
            &mut Dopri5::<4, 2>::new(DOPRI5, 1e-8, 1e-9).unwrap(),
            &model,
            200,
        ),
    ];
    assert_eq!(counts, [0; 6]);
}

/// One linearized step of a sparse-tier integrator with a tangent and an adjoint product.
fn linearized_round<Model, I>(
    integrator: &mut I,
    model: &Model,
    state: &mut mechanism::runtime::DynState,
    buffers: &mut [Vec<f64>; 6],
) where
    Model: mechanism::runtime::model::SparseParameters,
    I: mechanism::runtime::SparseDifferentiableStep<Model>,
{
    let [dq, dv, dp, out_q, out_v, gradient] = buffers;
    integrator.step_linearized(model, state).expect("step");
    integrator
        .tangent(model, (dq, dv, dp), (out_q, out_v))
        .expect("tangent");
    integrator
        .adjoint(model, (dq, dv), (out_q, out_v), gradient)
        .expect("adjoint");
}

/// The sparse tier's step Jacobian products allocate nothing once the first linearized step
/// has sized their buffers: SPOOK and RATTLE on the varied pendulum chain, Verlet on the DNA
/// chain, and the forward sensitivities that carry seeds through them.
#[test]
fn sparse_step_jacobian_products_do_not_allocate() {
    use mechanism::models::{DnaChain, VariedPendulumChain};
    use mechanism::runtime::model::SparseParameters;
    use mechanism::runtime::simulation::{SparseForwardSensitivity, SparseSeed};
    use mechanism::runtime::{
        SparseDifferentiableStep, SparseLangevin, SparseRattle, SparseSpook, SparseVerlet,
        SparseZhangSkeelSimplified,
    };

    fn rounds<Model, I>(
        label: &str,
        mut integrator: I,
        model: &Model,
        state: mechanism::runtime::DynState,
    ) where
        Model: SparseParameters,
        I: SparseDifferentiableStep<Model>,
    {
        let (n, p) = (state.q.len(), model.parameter_count());
        let mut buffers = [
            vec![1e-3; n],
            vec![-1e-3; n],
            vec![1.0; p],
            vec![0.0; n],
            vec![0.0; n],
            vec![0.0; p],
        ];
        let mut state = state;
        linearized_round(&mut integrator, model, &mut state, &mut buffers);
        let before = allocations();
        for _ in 0..20 {
            linearized_round(&mut integrator, model, &mut state, &mut buffers);
        }
        assert_eq!(
            allocations() - before,
            0,
            "{label}: linearized steps and products"
        );
        let seed = SparseSeed {
            q: vec![1.0; n],
            v: vec![0.0; n],
            p: vec![0.0; p],
        };
        let mut sensitivity = SparseForwardSensitivity::new(vec![seed]);
        sensitivity
            .step(&mut integrator, model, &mut state)
            .expect("warm-up");
        let before = allocations();
        for _ in 0..20 {
            sensitivity
                .step(&mut integrator, model, &mut state)
                .expect("step");
        }
        assert_eq!(allocations() - before, 0, "{label}: forward sensitivities");
    }

    let chain = VariedPendulumChain::new(20).unwrap();
    let angles: Vec<f64> = (0..20).map(|i| 0.4 + 0.01 * i as f64).collect();
    let start = chain.state(&angles, &[]);
    rounds(
        "SPOOK",
        SparseSpook::new(&chain, 0.01).unwrap(),
        &chain,
        start.clone(),
    );
    rounds(
        "RATTLE",
        SparseRattle::new(&chain, 0.01).unwrap(),
        &chain,
        start.clone(),
    );
    let spook = SparseSpook::new(&chain, 0.01).unwrap();
    rounds(
        "GLA(SPOOK)",
        SparseLangevin::new(&chain, spook, 0.01, 1.0, 0.1, 7).unwrap(),
        &chain,
        start,
    );
    let dna = DnaChain::new(16).unwrap();
    let start = mechanism::runtime::DynState::new(0.0, vec![0.8; 16], vec![0.1; 16]);
    rounds(
        "Verlet",
        SparseVerlet::new(&dna, 0.01).unwrap(),
        &dna,
        start.clone(),
    );
    rounds(
        "Z&Ss",
        SparseZhangSkeelSimplified::new(&dna, 0.01).unwrap(),
        &dna,
        start,
    );
}
