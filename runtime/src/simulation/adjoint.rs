//! Adjoint gradients of a fixed-step run: the gradient of a loss summed over the run's states
//! with respect to the initial state and all the model's parameters, by one backward pass
//! through the transposed step Jacobians ([`DifferentiableInParameters`]; on the sparse tier
//! [`sparse_adjoint_gradient`], through the transposed products of
//! [`SparseDifferentiableStep::adjoint`], never a matrix).
//!
//! # The recursion
//!
//! For a run `x_{k+1} = Φ_k(x_k, p)`, `x = (q, v)`, `k = 0 … n−1`, and a loss
//! `L = Σ_{k=0}^{n} ℓ_k(x_k)`, the adjoints `a_k = ∂L/∂x_k` (through the later states too) obey
//!
//! ```text
//! a_n = ∂ℓ_n/∂x_n,    a_k = ∂ℓ_k/∂x_k + J_kᵀ a_{k+1},    ∂L/∂p = Σ_k J_p,kᵀ a_{k+1},    ∂L/∂x_0 = a_0
//! ```
//!
//! with `J_k`, `J_p,k` the exact state and parameter Jacobians of step `k`: the gradient in
//! every parameter at once for the cost of one backward pass, where forward sensitivities
//! ([`ForwardSensitivity`](super::ForwardSensitivity)) cost one more column per parameter.
//!
//! # Which states are kept
//!
//! The backward pass needs `x_k` for `k = n−1 … 0`, in reverse. [`adjoint_gradient`] keeps
//! every `K`-th state of the forward run (a checkpoint) and, segment by segment from the last,
//! recomputes the `K` states of a segment from its checkpoint into one buffer before walking
//! it backwards. With `K = ⌈√(n+1)⌉` (the default, [`AdjointSettings::segment`]) the memory is
//! `≈ 2√n` states instead of `n`, for one more plain forward run. Binomial checkpointing (Griewank–Walther's
//! `revolve`) would bring the memory to `O(log n)` states for `O(log n)` recomputations: with
//! states of a few kilobytes on the fixed-size tier, `√n` is already small, and each step is
//! recomputed at most once, so the cost stays predictable — the choice argued here.
//!
//! Each backward step takes the step again from `x_k` with its Jacobians
//! ([`DifferentiableInParameters::step_with_jacobians`]), so the total cost is one plain
//! forward run, one recomputation (when segmented), and one run of steps with Jacobians.
//! A checkpoint and each recomputed state keep a clone of the integrator as it was before
//! that step, so every step is taken again by the integrator in the state the forward run had
//! (what it carries between steps, e.g. RATTLE's cached evaluations, cannot make the
//! recomputed trajectory differ from the forward one).

use nalgebra::SVector;

use crate::checkpoint::Carried;
use crate::error::StepError;
use crate::integrators::{
    DifferentiableInParameters, ParameterJacobian, SparseDifferentiableStep, StepJacobian,
};
use crate::model::{SparseInertia, SparseParameters};
use crate::state::{DynState, State};

/// One state's term of the loss: `ℓ_k(x_k)` and its gradient.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossTerm<const N: usize> {
    /// `ℓ_k(q_k, v_k)`.
    pub value: f64,
    /// `∂ℓ_k/∂q_k`.
    pub q: SVector<f64, N>,
    /// `∂ℓ_k/∂v_k`.
    pub v: SVector<f64, N>,
}

impl<const N: usize> LossTerm<N> {
    /// The zero term: a state that does not enter the loss.
    pub fn zero() -> Self {
        LossTerm {
            value: 0.0,
            q: SVector::zeros(),
            v: SVector::zeros(),
        }
    }
}

/// The loss of a run and its gradient with respect to the initial state and the parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdjointGradient<const N: usize, const P: usize> {
    /// `L = Σ_k ℓ_k(x_k)`.
    pub loss: f64,
    /// `∂L/∂q_0`.
    pub q0: SVector<f64, N>,
    /// `∂L/∂v_0`.
    pub v0: SVector<f64, N>,
    /// `∂L/∂p`, in the order of [`Parameters`](crate::Parameters).
    pub p: SVector<f64, P>,
}

/// How [`adjoint_gradient`] keeps the forward run's states.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AdjointSettings {
    /// Keep every `K`-th state and recompute the others segment by segment; `None`: `K =
    /// ⌈√(n+1)⌉` (the module docs).
    pub segment: Option<usize>,
}

/// Runs `integrator` (cloned, so that the caller's is untouched) on `model` from `initial` for
/// `steps` steps and returns `L = Σ_{k=0}^{steps} ℓ_k(x_k)` with its gradient with respect to
/// `(q_0, v_0)` and the model's parameters, where `loss(k, x_k)` gives `ℓ_k` and its gradient
/// ([`LossTerm`]), called once per state, from the last (`k = steps`) to the first; see the
/// module docs for the recursion and the states kept.
///
/// Fails with the first step's error (a forward step, a recomputed one or a step with
/// Jacobians), with `InvalidModel` for a segment of length 0, and with `NonFinite` for a loss
/// term that is not finite.
pub fn adjoint_gradient<I, Model, const N: usize, const P: usize>(
    integrator: &I,
    model: &Model,
    initial: State<N>,
    steps: usize,
    settings: AdjointSettings,
    mut loss: impl FnMut(usize, &State<N>) -> LossTerm<N>,
) -> Result<AdjointGradient<N, P>, StepError>
where
    I: DifferentiableInParameters<Model, N, P> + Clone,
{
    let segment = segment_length(settings, steps)?;
    // The forward run: the checkpoints at k = 0, K, 2K, … (< steps).
    let mut checkpoints = Vec::with_capacity(steps.div_ceil(segment).max(1));
    let mut forward = integrator.clone();
    let mut state = initial;
    for k in 0..steps {
        if k % segment == 0 {
            checkpoints.push((state, forward.clone()));
        }
        forward.step(model, &mut state)?;
    }
    let mut term = checked(loss(steps, &state), steps, state.t)?;
    let mut total = term.value;
    let (mut a_q, mut a_v) = (term.q, term.v);
    let mut gradient_p = SVector::<f64, P>::zeros();

    // Backwards, segment by segment: recompute its states, then walk them in reverse.
    let mut states: Vec<(State<N>, I)> = Vec::with_capacity(segment.min(steps));
    let (mut jacobian, mut parameters) =
        (StepJacobian::<N>::default(), ParameterJacobian::default());
    for (index, (start, at_start)) in checkpoints.into_iter().enumerate().rev() {
        let first = index * segment;
        let last = (first + segment).min(steps);
        states.clear();
        let (mut state, mut recompute) = (start, at_start);
        for _ in first..last {
            states.push((state, recompute.clone()));
            recompute.step(model, &mut state)?;
        }
        for (offset, (x, before)) in states.iter_mut().enumerate().rev() {
            let k = first + offset;
            let mut next = *x;
            before.step_with_jacobians(model, &mut next, &mut jacobian, &mut parameters)?;
            gradient_p += parameters.q_p.tr_mul(&a_q) + parameters.v_p.tr_mul(&a_v);
            let (back_q, back_v) = jacobian.apply_transpose(&a_q, &a_v);
            term = checked(loss(k, x), k, x.t)?;
            total += term.value;
            (a_q, a_v) = (back_q + term.q, back_v + term.v);
        }
    }
    Ok(AdjointGradient {
        loss: total,
        q0: a_q,
        v0: a_v,
        p: gradient_p,
    })
}

/// Returns `term` if its value and gradient are finite.
fn checked<const N: usize>(term: LossTerm<N>, k: usize, t: f64) -> Result<LossTerm<N>, StepError> {
    let finite = |x: &SVector<f64, N>| x.iter().all(|v| v.is_finite());
    if term.value.is_finite() && finite(&term.q) && finite(&term.v) {
        Ok(term)
    } else {
        Err(StepError::NonFinite {
            quantity: "loss term",
            index: k,
            t,
        })
    }
}

/// The loss of a sparse-tier run and its gradient with respect to the initial state and the
/// flat parameter vector ([`SparseParameters`]).
#[derive(Clone, Debug, PartialEq)]
pub struct SparseAdjointGradient {
    /// `L = Σ_k ℓ_k(x_k)`.
    pub loss: f64,
    /// `∂L/∂q_0`.
    pub q0: Vec<f64>,
    /// `∂L/∂v_0`.
    pub v0: Vec<f64>,
    /// `∂L/∂p`, in the order of [`SparseParameters`].
    pub p: Vec<f64>,
}

/// The sparse tier's [`adjoint_gradient`]: runs `integrator` on `model` from `initial` for
/// `steps` steps and returns `L = Σ_{k=0}^{steps} ℓ_k(x_k)` with its gradient with respect to
/// `(q_0, v_0)` and every parameter, by one backward pass of
/// [`SparseDifferentiableStep::adjoint`] (the recursion of the module docs, with `Jᵀ` and
/// `J_pᵀ` applied as products, never formed).
///
/// `loss(k, x_k, ∂ℓ/∂q, ∂ℓ/∂v)` returns `ℓ_k` and writes its gradient into the two slices
/// (zeroed before the call); it is called once per state, from the last to the first.
///
/// The states kept are those of [`adjoint_gradient`]: a checkpoint every `K` steps, each with
/// what the integrator carries between steps ([`SparseIntegrator::save_carried`](crate::SparseIntegrator::save_carried)), and each
/// segment's states recomputed from it once; `AdjointSettings { segment: Some(1) }` keeps every
/// state and recomputes nothing (memory `n` states, cost one forward run plus one linearized
/// step and one adjoint product per step). The default `K = ⌈√(n+1)⌉` adds one plain forward
/// run for memory `≈ 2√n` states. `integrator` is left as it was after the forward run.
///
/// Fails as [`adjoint_gradient`] does, with `InvalidModel` for a size mismatch of the initial
/// state, and with the integrator's error when it cannot restore its carried state.
pub fn sparse_adjoint_gradient<I, Model>(
    integrator: &mut I,
    model: &Model,
    initial: &DynState,
    steps: usize,
    settings: AdjointSettings,
    mut loss: impl FnMut(usize, &DynState, &mut [f64], &mut [f64]) -> f64,
) -> Result<SparseAdjointGradient, StepError>
where
    I: SparseDifferentiableStep<Model> + ?Sized,
    Model: SparseInertia + SparseParameters + ?Sized,
{
    let segment = segment_length(settings, steps)?;
    let n = model.coordinate_count();
    if initial.q.len() != n || initial.v.len() != n {
        return Err(StepError::InvalidModel {
            what: "adjoint initial state",
            index: initial.q.len(),
            reason: "does not have the model's number of coordinates",
        });
    }
    let restore = |integrator: &mut I, carried: &Carried| {
        integrator
            .restore_carried(carried)
            .map_err(|_| StepError::Unsupported {
                integrator: "the adjoint's integrator",
                requirement:
                    "a carried state it can restore (`SparseIntegrator::restore_carried`), \
                              to take each step again as the forward run took it",
            })
    };
    let carried = |integrator: &I| {
        let mut out = Carried::default();
        integrator.save_carried(&mut out);
        out
    };
    // The forward run: the checkpoints at k = 0, K, 2K, … (< steps).
    let mut checkpoints = Vec::with_capacity(steps.div_ceil(segment).max(1));
    let mut state = initial.clone();
    for k in 0..steps {
        if k % segment == 0 {
            checkpoints.push((state.clone(), carried(integrator)));
        }
        integrator.step(model, &mut state)?;
    }
    let after_forward = carried(integrator);
    let (mut a_q, mut a_v) = (vec![0.0; n], vec![0.0; n]);
    let mut total = sparse_term(&mut loss, steps, &state, (&mut a_q, &mut a_v))?;
    let mut gradient_p = vec![0.0; model.parameter_count()];
    let (mut back_q, mut back_v) = (vec![0.0; n], vec![0.0; n]);
    let (mut term_q, mut term_v) = (vec![0.0; n], vec![0.0; n]);

    // Backwards, segment by segment: recompute its states, then walk them in reverse.
    let mut states: Vec<(DynState, Carried)> = Vec::with_capacity(segment.min(steps));
    for (index, (start, at_start)) in checkpoints.into_iter().enumerate().rev() {
        let first = index * segment;
        let last = (first + segment).min(steps);
        states.clear();
        states.push((start, at_start));
        for _ in first + 1..last {
            // `states` holds at least the segment's checkpoint.
            let (previous, before) = &states[states.len() - 1];
            let mut next = previous.clone();
            restore(integrator, before)?;
            integrator.step(model, &mut next)?;
            let after = carried(integrator);
            states.push((next, after));
        }
        for (offset, (x, before)) in states.iter().enumerate().rev() {
            let k = first + offset;
            restore(integrator, before)?;
            let mut next = x.clone();
            integrator.step_linearized(model, &mut next)?;
            integrator.adjoint(
                model,
                (&a_q, &a_v),
                (&mut back_q, &mut back_v),
                &mut gradient_p,
            )?;
            total += sparse_term(&mut loss, k, x, (&mut term_q, &mut term_v))?;
            for ((a, back), term) in a_q.iter_mut().zip(&back_q).zip(&term_q) {
                *a = back + term;
            }
            for ((a, back), term) in a_v.iter_mut().zip(&back_v).zip(&term_v) {
                *a = back + term;
            }
        }
    }
    restore(integrator, &after_forward)?;
    Ok(SparseAdjointGradient {
        loss: total,
        q0: a_q,
        v0: a_v,
        p: gradient_p,
    })
}

/// Returns `K` of `settings` for a run of `steps` steps, or `InvalidModel` for `K = 0`.
fn segment_length(settings: AdjointSettings, steps: usize) -> Result<usize, StepError> {
    match settings.segment {
        Some(0) => Err(StepError::InvalidModel {
            what: "adjoint segment length",
            index: 0,
            reason: "must be at least 1 step",
        }),
        Some(segment) => Ok(segment),
        None => Ok(((steps + 1) as f64).sqrt().ceil() as usize),
    }
}

/// Evaluates the sparse loss term of state `k` into the zeroed gradients and returns its
/// value, or `NonFinite` for a term that is not finite.
fn sparse_term(
    loss: &mut impl FnMut(usize, &DynState, &mut [f64], &mut [f64]) -> f64,
    k: usize,
    state: &DynState,
    (grad_q, grad_v): (&mut [f64], &mut [f64]),
) -> Result<f64, StepError> {
    grad_q.fill(0.0);
    grad_v.fill(0.0);
    let value = loss(k, state, grad_q, grad_v);
    let finite = value.is_finite() && grad_q.iter().chain(grad_v.iter()).all(|x| x.is_finite());
    if finite {
        Ok(value)
    } else {
        Err(StepError::NonFinite {
            quantity: "loss term",
            index: k,
            t: state.t,
        })
    }
}
