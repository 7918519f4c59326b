//! Forward sensitivities of a run: the derivative of the state along the run with
//! respect to a few chosen directions of the initial state and the parameters, by the chain
//! rule through each step's exact Jacobians ([`DifferentiableInParameters`]); in the driver,
//! the stepper [`Sensitive`] and the columns [`SensitivityColumns`].

use nalgebra::SMatrix;

use super::{Observer, Stepper};
use crate::error::StepError;
use crate::integrators::{DifferentiableInParameters, SparseDifferentiableStep, StepReport};
use crate::state::{DynState, State};

/// The derivatives `∂(q_k, v_k)/∂θ` of a run's state with respect to `S` seeds `θ_s`, each a
/// direction `(δq₀, δv₀, δp)` in the initial state and the model's `P` parameters, carried
/// along the run.
///
/// With `J_k` the state Jacobian and `J_p,k` the parameter Jacobian of step `k` (both exact
/// derivatives of the step's own equations, [`DifferentiableInParameters`]), the chain rule
/// gives
///
/// ```text
/// [∂q_{k+1}/∂θ]         [∂q_k/∂θ]
/// [∂v_{k+1}/∂θ] = J_k · [∂v_k/∂θ] + J_p,k · ∂p/∂θ,      ∂(q₀, v₀, p)/∂θ = the seeds
/// ```
///
/// so the sensitivities are the exact derivatives of the discrete trajectory, which converge
/// to those of the exact flow at the method's order. A seed that moves a parameter and the
/// initial state together is how a start that depends on the parameters is differentiated
/// (a pendulum released at angle `θ₀` on a rod of length `l` starts at
/// `(l sin θ₀, −l cos θ₀)`: its `l`-seed is `δp = e_l`, `δq₀ = (sin θ₀, −cos θ₀)`).
///
/// For an adaptive method ([`AdaptiveRk`](crate::AdaptiveRk), DOPRI5) the step Jacobians are
/// those of each accepted step with its size held fixed (the variational equations integrated
/// with the state's own stages, as CVODES's forward sensitivities; the sensitivities take no
/// part in the error test), and [`Sensitive`] lands on every output time instead of
/// interpolating.
///
/// Cost per step: one step with its tangents
/// ([`DifferentiableInParameters::step_toward_with_tangents`]: for SPOOK, RATTLE and SHAKE the
/// step's factor solved for `2N + P` columns and two products with the `N × S` matrices; for the
/// Runge–Kutta methods the `S` directions alone through the stages); no allocation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ForwardSensitivity<const N: usize, const P: usize, const S: usize> {
    /// `∂q_k/∂θ`, column `s` for seed `s`.
    pub q: SMatrix<f64, N, S>,
    /// `∂v_k/∂θ`.
    pub v: SMatrix<f64, N, S>,
    /// `∂p/∂θ`: each seed's direction in the parameters (constant along the run).
    pub p: SMatrix<f64, P, S>,
}

impl<const N: usize, const P: usize, const S: usize> ForwardSensitivity<N, P, S> {
    /// Starts from the seeds: `q`, `v` the initial state's derivatives `∂(q₀, v₀)/∂θ`, `p` the
    /// parameters' `∂p/∂θ`.
    pub fn new(q: SMatrix<f64, N, S>, v: SMatrix<f64, N, S>, p: SMatrix<f64, P, S>) -> Self {
        ForwardSensitivity { q, v, p }
    }

    /// Advances `state` by one step of `integrator` and the sensitivities with it. On error the
    /// state and the sensitivities are left unchanged.
    pub fn step<I, Model>(
        &mut self,
        integrator: &mut I,
        model: &Model,
        state: &mut State<N>,
    ) -> Result<StepReport, StepError>
    where
        I: DifferentiableInParameters<Model, N, P>,
    {
        self.step_toward(integrator, model, state, f64::INFINITY)
    }

    /// As [`step`](Self::step), without stepping past `t_stop` when `integrator` is adaptive
    /// ([`DifferentiableInParameters::step_toward_with_tangents`]): an adaptive run lands on
    /// its output times, since the sensitivities have no continuous extension.
    pub fn step_toward<I, Model>(
        &mut self,
        integrator: &mut I,
        model: &Model,
        state: &mut State<N>,
        t_stop: f64,
    ) -> Result<StepReport, StepError>
    where
        I: DifferentiableInParameters<Model, N, P>,
    {
        integrator.step_toward_with_tangents(
            model,
            state,
            t_stop,
            (&mut self.q, &mut self.v),
            &self.p,
        )
    }
}

/// An integrator that carries [`ForwardSensitivity`] along a [`Simulation`]
/// (`Simulation::new(model, Sensitive { .. }, ..)`), so that the driver's rows, schedules,
/// interrupts and sinks serve a run with sensitivities unchanged; [`SensitivityColumns`] writes
/// them. Observers see the adapter itself as the integrator.
///
/// A checkpoint of such a run is refused (the driver's `Unsupported`): resuming would restart
/// the sensitivities from the seeds.
///
/// [`Simulation`]: super::Simulation
#[derive(Clone, Copy, Debug)]
pub struct Sensitive<I, const N: usize, const P: usize, const S: usize> {
    /// The integrator.
    pub integrator: I,
    /// The sensitivities at the current state.
    pub sensitivity: ForwardSensitivity<N, P, S>,
}

impl<Model, I, const N: usize, const P: usize, const S: usize> Stepper<Model>
    for Sensitive<I, N, P, S>
where
    I: DifferentiableInParameters<Model, N, P>,
{
    type State = State<N>;
    type Integrator = Self;

    fn integrator(&self) -> &Self {
        self
    }

    fn step(&mut self, model: &Model, state: &mut State<N>, t_stop: f64) -> Result<(), StepError> {
        self.sensitivity
            .step_toward(&mut self.integrator, model, state, t_stop)
            .map(|_| ())
    }
}

/// The columns of a run's sensitivities ([`Sensitive`]): `dq.<coordinate>/d<seed>` for every
/// seed and coordinate (seed by seed), then `dv.<coordinate>/d<seed>` in the same order, e.g.
/// `dq.x/dg`, `dq.y/dg`, `dq.x/dl`, …, `dv.y/dl`.
#[derive(Clone, Debug)]
pub struct SensitivityColumns<const N: usize, const S: usize> {
    names: Vec<String>,
}

impl<const N: usize, const S: usize> SensitivityColumns<N, S> {
    /// Names the columns after the model's `coordinates` and the `seeds`.
    pub fn new(coordinates: [&str; N], seeds: [&str; S]) -> Self {
        let mut names = Vec::with_capacity(2 * N * S);
        for kind in ["dq", "dv"] {
            for seed in seeds {
                for coordinate in coordinates {
                    names.push(format!("{kind}.{coordinate}/d{seed}"));
                }
            }
        }
        SensitivityColumns { names }
    }
}

impl<I, const N: usize, const P: usize, const S: usize> Observer<Sensitive<I, N, P, S>, State<N>>
    for SensitivityColumns<N, S>
{
    fn names(&self) -> Vec<String> {
        self.names.clone()
    }

    fn observe(
        &mut self,
        stepper: &Sensitive<I, N, P, S>,
        _state: &State<N>,
        out: &mut [f64],
    ) -> Result<(), StepError> {
        let (q, v) = (&stepper.sensitivity.q, &stepper.sensitivity.v);
        let (out_q, out_v) = out.split_at_mut(N * S);
        // Column-major storage: seed by seed, coordinate by coordinate.
        out_q.copy_from_slice(q.as_slice());
        out_v.copy_from_slice(v.as_slice());
        Ok(())
    }
}

/// One seed of a sparse-tier forward sensitivity: a direction `(δq₀, δv₀, δp)` in the initial
/// state and the flat parameter vector ([`SparseParameters`](crate::model::SparseParameters));
/// an empty `p` is the zero direction in the parameters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SparseSeed {
    /// `δq₀`.
    pub q: Vec<f64>,
    /// `δv₀`.
    pub v: Vec<f64>,
    /// `δp`, constant along the run.
    pub p: Vec<f64>,
}

/// The sparse tier's [`ForwardSensitivity`]: the derivatives `∂(q_k, v_k)/∂θ_s` along a run
/// for a few seeds `θ_s` ([`SparseSeed`]), by the same chain rule, each step's Jacobian applied
/// as a product ([`SparseDifferentiableStep::tangent`]: one solve with the step's factor per
/// seed), never formed.
#[derive(Clone, Debug, PartialEq)]
pub struct SparseForwardSensitivity {
    /// The seeds, their `q` and `v` advanced along the run.
    seeds: Vec<SparseSeed>,
    /// The next state and tangents, committed only when the whole step succeeded.
    next: DynState,
    next_q: Vec<Vec<f64>>,
    next_v: Vec<Vec<f64>>,
}

impl SparseForwardSensitivity {
    /// Starts from the seeds: each seed's `q`, `v` is the initial state's derivative along it.
    pub fn new(seeds: Vec<SparseSeed>) -> Self {
        let next_q = seeds.iter().map(|seed| vec![0.0; seed.q.len()]).collect();
        let next_v = seeds.iter().map(|seed| vec![0.0; seed.v.len()]).collect();
        SparseForwardSensitivity {
            seeds,
            next: DynState::new(0.0, Vec::new(), Vec::new()),
            next_q,
            next_v,
        }
    }

    /// Returns `(∂q_k/∂θ_s, ∂v_k/∂θ_s)` of seed `s`, or `None` for `s` out of range.
    pub fn tangent(&self, s: usize) -> Option<(&[f64], &[f64])> {
        self.seeds.get(s).map(|seed| (&seed.q[..], &seed.v[..]))
    }

    /// Returns the number of seeds.
    pub fn seed_count(&self) -> usize {
        self.seeds.len()
    }

    /// Advances `state` by one linearized step of `integrator` and every seed with it
    /// ([`SparseDifferentiableStep::tangent`]). On error the state and the sensitivities are
    /// left unchanged. Allocates nothing once the first step has sized its buffers.
    pub fn step<I, Model>(
        &mut self,
        integrator: &mut I,
        model: &Model,
        state: &mut DynState,
    ) -> Result<StepReport, StepError>
    where
        I: SparseDifferentiableStep<Model> + ?Sized,
        Model: ?Sized,
    {
        self.next.t = state.t;
        self.next.q.clone_from(&state.q);
        self.next.v.clone_from(&state.v);
        let report = integrator.step_linearized(model, &mut self.next)?;
        for ((seed, q), v) in self
            .seeds
            .iter()
            .zip(&mut self.next_q)
            .zip(&mut self.next_v)
        {
            integrator.tangent(model, (&seed.q, &seed.v, &seed.p), (q, v))?;
        }
        for ((seed, q), v) in self
            .seeds
            .iter_mut()
            .zip(&mut self.next_q)
            .zip(&mut self.next_v)
        {
            std::mem::swap(&mut seed.q, q);
            std::mem::swap(&mut seed.v, v);
        }
        std::mem::swap(state, &mut self.next);
        Ok(report)
    }
}
