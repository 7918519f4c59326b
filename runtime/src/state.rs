//! The state of a mechanical system, kept apart from integrators so that they can be swapped.

use nalgebra::SVector;

/// Time, configuration and velocity of a system with `N` coordinates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct State<const N: usize> {
    /// Time `t`.
    pub t: f64,
    /// Generalized coordinates `q`.
    pub q: SVector<f64, N>,
    /// Generalized velocities `v = q̇`.
    pub v: SVector<f64, N>,
}

impl<const N: usize> State<N> {
    /// Creates a state at time `t` from coordinates and velocities.
    pub fn new(t: f64, q: [f64; N], v: [f64; N]) -> Self {
        State {
            t,
            q: SVector::from(q),
            v: SVector::from(v),
        }
    }

    /// Returns whether every component of `t`, `q` and `v` is finite.
    pub fn is_finite(&self) -> bool {
        self.t.is_finite()
            && self.q.iter().all(|x| x.is_finite())
            && self.v.iter().all(|x| x.is_finite())
    }
}

/// Time, configuration and velocity of a system whose size is known at run time (the sparse
/// tier).
#[derive(Clone, Debug, PartialEq)]
pub struct DynState {
    /// Time `t`.
    pub t: f64,
    /// Generalized coordinates `q`.
    pub q: Vec<f64>,
    /// Generalized velocities `v = q̇`, as many as `q`.
    pub v: Vec<f64>,
}

impl DynState {
    /// Creates a state at time `t` from coordinates and velocities of equal length.
    pub fn new(t: f64, q: Vec<f64>, v: Vec<f64>) -> Self {
        DynState { t, q, v }
    }

    /// Returns whether every component of `t`, `q` and `v` is finite.
    pub fn is_finite(&self) -> bool {
        self.t.is_finite()
            && self.q.iter().all(|x| x.is_finite())
            && self.v.iter().all(|x| x.is_finite())
    }
}
