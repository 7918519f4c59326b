//! What a linearized RATTLE or SHAKE step on the sparse tier keeps for its Jacobian products (`sparse_jacobian.rs`), stored in the tier's system (`sparse.rs`) so that a plain step can invalidate it.

/// What a linearized RATTLE or SHAKE step keeps for its products (the system keeps `G` and `M⁻¹Gᵀ`
/// at both ends): the state before and after, the multipliers, `M` and `∇²V` at both ends,
/// and the buffers of a product. Sized at the first linearized step.
#[derive(Clone, Debug, Default)]
pub(super) struct Linearization {
    pub(super) valid: bool,
    pub(super) t: f64,
    pub(super) q: Vec<f64>,
    pub(super) v: Vec<f64>,
    pub(super) q_next: Vec<f64>,
    pub(super) v_next: Vec<f64>,
    pub(super) lambda: Vec<f64>,
    pub(super) mu: Vec<f64>,
    pub(super) mass: Vec<f64>,
    pub(super) hessian: Vec<f64>,
    pub(super) hessian_next: Vec<f64>,
    /// Coordinate buffers.
    pub(super) a: Vec<f64>,
    pub(super) b: Vec<f64>,
    pub(super) c: Vec<f64>,
    pub(super) d: Vec<f64>,
    /// Row buffers.
    pub(super) rows: Vec<f64>,
    pub(super) rows_b: Vec<f64>,
}

impl Linearization {
    /// Forgets the last step's linearization (a plain step replaced the system's points).
    pub(super) fn invalidate(&mut self) {
        self.valid = false;
    }

    pub(super) fn resize(&mut self, n: usize, m: usize, masses: usize, entries: usize) {
        for buffer in [
            &mut self.q,
            &mut self.v,
            &mut self.q_next,
            &mut self.v_next,
            &mut self.a,
            &mut self.b,
            &mut self.c,
            &mut self.d,
        ] {
            buffer.resize(n, 0.0);
        }
        for buffer in [
            &mut self.lambda,
            &mut self.mu,
            &mut self.rows,
            &mut self.rows_b,
        ] {
            buffer.resize(m, 0.0);
        }
        self.mass.resize(masses, 0.0);
        self.hessian.resize(entries, 0.0);
        self.hessian_next.resize(entries, 0.0);
    }
}
