//! What the driver computes of a state besides `t`, `q`, `v`: energy, residuals, user columns.

use std::marker::PhantomData;

use crate::error::StepError;
use crate::integrators::checks::check_dyn_state;
use crate::model::sparse::{SparseHolonomic, SparseInertia, SparsePotential};
use crate::model::{Holonomic, Inertia, Potential};
use crate::observers;
use crate::state::{DynState, State};

/// Computes output columns of a state, with access to the integrator `I` (for quantities it
/// carries: multipliers, a generalized energy, statistics). Observers size their scratch when
/// they are built, so that [`observe`](Self::observe) does not allocate.
///
/// At a time reported through dense output the integrator is the one after the step that
/// contains the time: what it carries belongs to that step's end.
pub trait Observer<I: ?Sized, S> {
    /// Returns the names of the columns, in order (called once, before the run).
    fn names(&self) -> Vec<String>;

    /// Writes the columns of `state` into `out` (as many as [`names`](Self::names)); fails
    /// with a typed error, e.g. `InvalidModel` for a state that does not fit the observed
    /// model.
    fn observe(&mut self, integrator: &I, state: &S, out: &mut [f64]) -> Result<(), StepError>;
}

/// The columns `energy`, `residual.position`, `residual.velocity` of the examples' CSV
/// contract, of a fixed-size model with `M` holonomic constraints: `T(q, v) + V(q)`,
/// `max_i |g_i(q, t)|` and `max_i |(G(q, t) v)_i|` ([`observers`]).
///
/// The observed model may differ from the stepped one (an integrator running the penalized
/// `V + ½ω²|g|²` is observed on the hard constraints).
#[derive(Debug)]
pub struct Mechanics<'a, O, const N: usize, const M: usize> {
    model: &'a O,
    sizes: PhantomData<([f64; N], [f64; M])>,
}

impl<'a, O, const N: usize, const M: usize> Mechanics<'a, O, N, M>
where
    O: Inertia<N> + Potential<N> + Holonomic<N, M>,
{
    /// Observes `model`.
    pub fn new(model: &'a O) -> Self {
        Mechanics {
            model,
            sizes: PhantomData,
        }
    }
}

/// The names of the three columns of [`Mechanics`] and [`SparseMechanics`].
const MECHANICS: [&str; 3] = ["energy", "residual.position", "residual.velocity"];

impl<I: ?Sized, O, const N: usize, const M: usize> Observer<I, State<N>> for Mechanics<'_, O, N, M>
where
    O: Inertia<N> + Potential<N> + Holonomic<N, M>,
{
    fn names(&self) -> Vec<String> {
        MECHANICS.map(String::from).to_vec()
    }

    fn observe(&mut self, _: &I, state: &State<N>, out: &mut [f64]) -> Result<(), StepError> {
        out[0] = observers::energy(self.model, state);
        out[1] = observers::position_residual::<N, M, O>(self.model, state);
        out[2] = observers::velocity_residual::<N, M, O>(self.model, state);
        Ok(())
    }
}

/// The columns of [`Mechanics`] for a sparse-tier model: energy `T + V`, `max_i |g_i|` and
/// `max_i |(G v)_i|`, with `g`, `G` (values on the model's pattern) and `G v` in scratch sized
/// here.
#[derive(Debug)]
pub struct SparseMechanics<'a, O: ?Sized> {
    model: &'a O,
    g: Vec<f64>,
    jacobian: Vec<f64>,
    jv: Vec<f64>,
}

impl<'a, O> SparseMechanics<'a, O>
where
    O: SparseInertia + SparsePotential + SparseHolonomic + ?Sized,
{
    /// Observes `model`, sizing the scratch for its constraints and Jacobian pattern.
    pub fn new(model: &'a O) -> Self {
        let m = model.constraint_count();
        SparseMechanics {
            model,
            g: vec![0.0; m],
            jacobian: vec![0.0; model.jacobian_pattern().len()],
            jv: vec![0.0; m],
        }
    }
}

impl<I: ?Sized, O> Observer<I, DynState> for SparseMechanics<'_, O>
where
    O: SparseInertia + SparsePotential + SparseHolonomic + ?Sized,
{
    fn names(&self) -> Vec<String> {
        MECHANICS.map(String::from).to_vec()
    }

    fn observe(&mut self, _: &I, state: &DynState, out: &mut [f64]) -> Result<(), StepError> {
        let model = self.model;
        let n = model.coordinate_count();
        check_dyn_state(state, n)?;
        let pattern = model.jacobian_pattern();
        if self.g.len() != model.constraint_count() || self.jacobian.len() != pattern.len() {
            return Err(StepError::InvalidModel {
                what: "observed constraints",
                index: model.constraint_count(),
                reason:
                    "the constraint count or Jacobian pattern changed since the observer was built",
            });
        }
        if let Some(index) = pattern
            .iter()
            .position(|&(row, col)| row >= self.g.len() || col >= n)
        {
            return Err(StepError::InvalidModel {
                what: "constraint jacobian pattern",
                index,
                reason: "the entry lies outside the constraint rows or the coordinates",
            });
        }
        model.constraints_and_jacobian(&state.q, state.t, &mut self.g, &mut self.jacobian);
        self.jv.fill(0.0);
        for (&(row, col), value) in pattern.iter().zip(&self.jacobian) {
            self.jv[row] += value * state.v[col];
        }
        let max_abs = |x: &[f64]| x.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        out[0] = model.kinetic_energy(&state.q, &state.v) + model.potential(&state.q);
        out[1] = max_abs(&self.g);
        out[2] = max_abs(&self.jv);
        Ok(())
    }
}

/// A user column: a name and a closure of the state (which may capture a model, …).
pub struct Column<F> {
    name: String,
    value: F,
}

impl<F> Column<F> {
    /// Creates the column `name` whose value at a state is `value(state)`.
    pub fn new(name: impl Into<String>, value: F) -> Self {
        Column {
            name: name.into(),
            value,
        }
    }
}

impl<I: ?Sized, S, F: FnMut(&S) -> f64> Observer<I, S> for Column<F> {
    fn names(&self) -> Vec<String> {
        vec![self.name.clone()]
    }

    fn observe(&mut self, _: &I, state: &S, out: &mut [f64]) -> Result<(), StepError> {
        out[0] = (self.value)(state);
        Ok(())
    }
}

/// A user column of the integrator and the state, for what the integrator carries: SPOOK's or
/// RATTLE's multipliers, Livens's generalized energy, an adaptive method's statistics.
pub struct IntegratorColumn<F> {
    name: String,
    value: F,
}

impl<F> IntegratorColumn<F> {
    /// Creates the column `name` whose value is `value(integrator, state)`.
    pub fn new(name: impl Into<String>, value: F) -> Self {
        IntegratorColumn {
            name: name.into(),
            value,
        }
    }
}

impl<I: ?Sized, S, F: FnMut(&I, &S) -> f64> Observer<I, S> for IntegratorColumn<F> {
    fn names(&self) -> Vec<String> {
        vec![self.name.clone()]
    }

    fn observe(&mut self, integrator: &I, state: &S, out: &mut [f64]) -> Result<(), StepError> {
        out[0] = (self.value)(integrator, state);
        Ok(())
    }
}
