//! What a linearized step of SPOOK's sparse tier keeps for its Jacobian products (`sparse_jacobian.rs`), stored in the tier's system (`sparse.rs`) so that a plain step can invalidate it.

/// What a linearized step keeps for its Jacobian products: the state it started from, its
/// solution and multipliers, `Υ`, `∇²V` at `q_k`, and the buffers of a product. Sized at the
/// first linearized step (and again only if the model's sizes change); the factor itself stays
/// in the system's saddle point until the next step.
#[derive(Debug, Default)]
pub(super) struct Linearization {
    /// Whether the system's factor and these values belong to the last step.
    pub(super) valid: bool,
    pub(super) t: f64,
    pub(super) q: Vec<f64>,
    pub(super) v: Vec<f64>,
    pub(super) v_next: Vec<f64>,
    pub(super) lambda: Vec<f64>,
    pub(super) upsilon: Vec<f64>,
    pub(super) hessian: Vec<f64>,
    /// `(ρ₁, ρ₂)` and the solution `(x, y)` of a product.
    pub(super) rho_q: Vec<f64>,
    pub(super) rho_rows: Vec<f64>,
    pub(super) x: Vec<f64>,
    pub(super) y: Vec<f64>,
    /// `Υ y₂` of an adjoint.
    pub(super) weighted_rows: Vec<f64>,
}

impl Linearization {
    /// Forgets the last step's linearization (a plain step replaced its factor).
    pub(super) fn invalidate(&mut self) {
        self.valid = false;
    }

    /// Sizes the buffers for `n` coordinates, `m` rows and a Hessian pattern of `entries`.
    pub(super) fn resize(&mut self, n: usize, m: usize, entries: usize) {
        for buffer in [
            &mut self.q,
            &mut self.v,
            &mut self.v_next,
            &mut self.rho_q,
            &mut self.x,
        ] {
            buffer.resize(n, 0.0);
        }
        for buffer in [
            &mut self.lambda,
            &mut self.upsilon,
            &mut self.rho_rows,
            &mut self.y,
            &mut self.weighted_rows,
        ] {
            buffer.resize(m, 0.0);
        }
        self.hessian.resize(entries, 0.0);
    }
}
