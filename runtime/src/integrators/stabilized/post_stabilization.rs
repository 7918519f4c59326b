//! Post-stabilization after each step (Ascher et al. 1995, eq. 5.4 with F of eq. 4.4–5.6).

use nalgebra::{SMatrix, SVector};

use super::{check_finite, MassFactor};
use crate::error::StepError;
use crate::linalg::{factored, solve_vector, Cholesky, LinearSolver};
use crate::model::{HolonomicKinematics, Inertia};
use crate::state::State;

/// Which post-stabilization follows each Runge–Kutta step (Ascher et al. 1995 §5–6).
///
/// With `z = (q, v)` and the invariant of eq. 4.2, written out for a rheonomic `g(q, t)`,
///
/// ```text
/// h(z, t) = ( g(q, t) ;  G(q, t) v + g_t(q, t) ),    H = h_z = [ G  0 ; L  G ],
/// L = ∂(G v + g_t)/∂q = (G v)_q + G_t
/// ```
///
/// a step `z̃_{n+1} = φ_h(z_n)` of the index-1 ODE is followed by (eq. 5.4 with `α = 1`)
///
/// ```text
/// z_{n+1} = z̃_{n+1} − F(z̃_{n+1}) h(z̃_{n+1}, t_{n+1})
/// ```
///
/// Every variant but [`Full`](Self::Full) uses the block-diagonal `F` of eq. 5.5 or 5.6, whose
/// `N × M` block `P = D (G D)⁻¹` is chosen by [`Metric`]: `D = Gᵀ` (eq. 5.6, the default and
/// the paper's choice in §6) or `D = M⁻¹ Gᵀ` (eq. 5.5). Because `G P = I`, the velocity
/// correction zeroes `G v + g_t` at `q̃` exactly; the position correction is one Newton step on
/// `g = 0` restricted to the range of `P`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PostStabilization {
    /// No post-stabilization: plain index reduction (with Baumgarte's term if one is set).
    #[default]
    None,
    /// `S-full`: eq. 5.4 with `D = Hᵀ` in eq. 4.4, `F = Hᵀ (H Hᵀ)⁻¹`; both blocks of `z` are
    /// corrected together, with the coupling `L` of `H`. [`Metric`] does not apply.
    ///
    /// `L` is obtained exactly (up to rounding) from the model's acceleration bias
    /// `b(v) = (G v)_q v + 2 G_t v + g_tt`, which is quadratic in `v` with `∂b/∂v = 2 L`, by
    /// polarization: `L w = (b(v + w) − b(v − w)) / 4`, two bias evaluations per coordinate.
    Full,
    /// `S-both`: eq. 5.4 with `F = blockdiag(P, P)`,
    /// `q = q̃ − P g(q̃)`, `v = ṽ − P (G(q̃) ṽ + g_t(q̃))`.
    Both,
    /// `S-both²`: the double stabilization step recommended at the end of §5 — `S-both` applied
    /// twice with `F` kept at `z̃`: `ẑ = z̃ − F(z̃) h(z̃)`, `z = ẑ − F(z̃) h(ẑ)`. Drift
    /// `O(h^{2p})` instead of `O(h^{p+1})` for the cost of one more evaluation of `g`, `G`, `g_t`.
    BothTwice,
    /// `S-vel`: only the velocity level, `q = q̃`, `v = ṽ − P (G(q̃) ṽ + g_t(q̃))`.
    Velocity,
    /// `S-pos`: only the position level, `q = q̃ − P g(q̃)`, `v = ṽ` (one Newton step; not an
    /// invariant-manifold stabilization in the sense of eq. 4.1–4.2, §6).
    Position,
}

/// The matrix `D` of `P = D (G D)⁻¹` in the block-diagonal stabilizers of eq. 5.5–5.6.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Metric {
    /// `D = Gᵀ`: `P = Gᵀ (G Gᵀ)⁻¹` (eq. 5.6), the orthogonal projection direction; needs no
    /// mass matrix and is robust when `M` has very different scales (§3.2). The paper's choice
    /// for S-both, S-both², S-vel and S-pos in §6.
    #[default]
    Euclidean,
    /// `D = M⁻¹ Gᵀ`: `P = M⁻¹ Gᵀ (G M⁻¹ Gᵀ)⁻¹` (eq. 5.5), the projection in the kinetic-energy
    /// metric.
    Mass,
}

/// The position and velocity residuals `|g(q, t)|∞` and `|G(q, t) v + g_t(q, t)|∞` of a state:
/// the "drift-position" and "drift-velocity" of Ascher et al. (1995) Tables 6.1–6.4.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Drift {
    /// `max_i |g_i(q, t)|`.
    pub position: f64,
    /// `max_i |(G(q, t) v + g_t(q, t))_i|`, the velocity invariant of a rheonomic constraint.
    pub velocity: f64,
}

impl Drift {
    /// Returns the component-wise maximum of two drifts, for "maximum drift" over a run.
    pub fn max(self, other: Drift) -> Drift {
        Drift {
            position: self.position.max(other.position),
            velocity: self.velocity.max(other.velocity),
        }
    }
}

/// Returns the position and velocity residuals of `state`, including the `g_t` of rheonomic
/// constraints.
pub fn drift<Model, const N: usize, const M: usize>(model: &Model, state: &State<N>) -> Drift
where
    Model: HolonomicKinematics<N, M>,
{
    let residual = Residual::<N, M>::at(model, &state.q, &state.v, state.t);
    Drift {
        position: residual.g.amax(),
        velocity: residual.g_dot.amax(),
    }
}

/// `h(z, t)` and `G` at one point.
struct Residual<const N: usize, const M: usize> {
    g: SVector<f64, M>,
    g_dot: SVector<f64, M>,
    jac: SMatrix<f64, M, N>,
}

impl<const N: usize, const M: usize> Residual<N, M> {
    fn at<Model: HolonomicKinematics<N, M>>(
        model: &Model,
        q: &SVector<f64, N>,
        v: &SVector<f64, N>,
        t: f64,
    ) -> Self {
        let mut g = SVector::<f64, M>::zeros();
        let mut jac = SMatrix::<f64, M, N>::zeros();
        let mut g_t = SVector::<f64, M>::zeros();
        model.constraints_and_jacobian(q, t, &mut g, &mut jac);
        model.constraint_time_derivative(q, t, &mut g_t);
        Residual {
            g,
            g_dot: jac * v + g_t,
            jac,
        }
    }

    fn check(&self, t_err: f64) -> Result<(), StepError> {
        check_finite(&self.g, "constraints", t_err)?;
        check_finite(&self.jac, "constraint jacobian", t_err)?;
        check_finite(&self.g_dot, "constraint velocity G v + g_t", t_err)
    }
}

/// Applies `stabilization` to `(q, v)` at time `t` in place; returns the factorizations it took.
/// On error `(q, v)` are unchanged.
#[allow(clippy::too_many_arguments)]
pub(crate) fn stabilize<Model, const N: usize, const M: usize>(
    model: &Model,
    stabilization: PostStabilization,
    metric: Metric,
    mass: &mut MassFactor<N>,
    q: &mut SVector<f64, N>,
    v: &mut SVector<f64, N>,
    t: f64,
    t_err: f64,
) -> Result<u32, StepError>
where
    Model: Inertia<N> + HolonomicKinematics<N, M>,
{
    if stabilization == PostStabilization::None {
        return Ok(0);
    }
    let tilde = Residual::<N, M>::at(model, q, v, t);
    tilde.check(t_err)?;
    let (q_new, v_new, factorizations) = match stabilization {
        PostStabilization::None => return Ok(0),
        PostStabilization::Full => {
            let (dq, dv) = full_correction(model, &tilde, q, v, t, t_err)?;
            (*q - dq, *v - dv, 2)
        }
        _ => {
            let (mut projector, count) = Projector::new(model, metric, mass, &tilde.jac, q, t_err)?;
            let (correct_q, correct_v) = match stabilization {
                PostStabilization::Position => (true, false),
                PostStabilization::Velocity => (false, true),
                _ => (true, true),
            };
            let mut q_new = *q;
            let mut v_new = *v;
            if correct_q {
                q_new -= projector.apply(&tilde.g, t_err)?;
            }
            if correct_v {
                v_new -= projector.apply(&tilde.g_dot, t_err)?;
            }
            if stabilization == PostStabilization::BothTwice {
                let hat = Residual::<N, M>::at(model, &q_new, &v_new, t);
                hat.check(t_err)?;
                q_new -= projector.apply(&hat.g, t_err)?;
                v_new -= projector.apply(&hat.g_dot, t_err)?;
            }
            (q_new, v_new, count)
        }
    };
    check_finite(&q_new, "q", t_err)?;
    check_finite(&v_new, "v", t_err)?;
    *q = q_new;
    *v = v_new;
    Ok(factorizations)
}

/// `P = D (G D)⁻¹` of eq. 5.5–5.6, kept factored.
struct Projector<const N: usize, const M: usize> {
    d: SMatrix<f64, N, M>,
    factor: Option<Cholesky<M>>,
    /// The name of `G D`, for errors.
    matrix: &'static str,
}

impl<const N: usize, const M: usize> Projector<N, M> {
    /// Builds `P` at `q` with `G = jac`; returns it and the factorizations it took.
    fn new<Model: Inertia<N>>(
        model: &Model,
        metric: Metric,
        mass: &mut MassFactor<N>,
        jac: &SMatrix<f64, M, N>,
        q: &SVector<f64, N>,
        t_err: f64,
    ) -> Result<(Self, u32), StepError> {
        let mut d = jac.transpose();
        let (matrix, mut count) = match metric {
            Metric::Euclidean => ("G Gᵀ (post-stabilization)", 0),
            Metric::Mass => {
                let (factor, count) = mass.factor_at(model, q, t_err)?;
                factor.solve_in_place(&mut d);
                ("G M⁻¹ Gᵀ (post-stabilization)", count)
            }
        };
        let factor = factored(&(jac * d)).map_err(StepError::linear_algebra(matrix, t_err))?;
        count += 1;
        Ok((Projector { d, factor, matrix }, count))
    }

    /// Returns `P r`.
    fn apply(&mut self, r: &SVector<f64, M>, t_err: f64) -> Result<SVector<f64, N>, StepError> {
        let x = solve_vector(&mut self.factor, r)
            .map_err(StepError::linear_algebra(self.matrix, t_err))?;
        Ok(self.d * x)
    }
}

/// Returns `F h = Hᵀ (H Hᵀ)⁻¹ h` split into its `q` and `v` blocks (S-full).
///
/// With `H = [G 0; L G]`, `H Hᵀ = [A B; Bᵀ C]`, `A = G Gᵀ`, `B = G Lᵀ`, `C = L Lᵀ + G Gᵀ`, the
/// `2M × 2M` system `H Hᵀ (x; y) = (g; ġ)` is solved by block elimination with the Schur
/// complement `S = C − Bᵀ A⁻¹ B` (symmetric positive definite when `H` has full row rank), and
/// `F h = Hᵀ (x; y) = (Gᵀ x + Lᵀ y ; Gᵀ y)`.
fn full_correction<Model, const N: usize, const M: usize>(
    model: &Model,
    tilde: &Residual<N, M>,
    q: &SVector<f64, N>,
    v: &SVector<f64, N>,
    t: f64,
    t_err: f64,
) -> Result<(SVector<f64, N>, SVector<f64, N>), StepError>
where
    Model: HolonomicKinematics<N, M>,
{
    // L by polarization of the quadratic bias b(v): L w = (b(v + w) − b(v − w)) / 4, with
    // w = s e_j scaled like v so that neither evaluation loses v's digits.
    let scale = 1.0 + v.amax();
    let mut l = SMatrix::<f64, M, N>::zeros();
    let mut plus = SVector::<f64, M>::zeros();
    let mut minus = SVector::<f64, M>::zeros();
    for j in 0..N {
        let mut w = SVector::<f64, N>::zeros();
        w[j] = scale;
        model.constraint_acceleration_bias(q, &(v + w), t, &mut plus);
        model.constraint_acceleration_bias(q, &(v - w), t, &mut minus);
        l.set_column(j, &((plus - minus) / (4.0 * scale)));
    }
    check_finite(&l, "(G v)_q + G_t", t_err)?;
    let jac = &tilde.jac;
    let wrap_a = StepError::linear_algebra("G Gᵀ (S-full)", t_err);
    let mut a = factored::<Option<Cholesky<M>>>(&(jac * jac.transpose())).map_err(&wrap_a)?;
    let b = jac * l.transpose();
    let mut a_inv_b = b;
    a.solve_columns_in_place(a_inv_b.as_mut_slice(), M)
        .map_err(&wrap_a)?;
    let schur = l * l.transpose() + jac * jac.transpose() - b.transpose() * a_inv_b;
    let wrap_schur = StepError::linear_algebra("Schur complement of H Hᵀ (S-full)", t_err);
    let mut schur = factored::<Option<Cholesky<M>>>(&schur).map_err(&wrap_schur)?;
    let a_inv_g = solve_vector(&mut a, &tilde.g).map_err(&wrap_a)?;
    let y =
        solve_vector(&mut schur, &(tilde.g_dot - b.transpose() * a_inv_g)).map_err(&wrap_schur)?;
    let x = solve_vector(&mut a, &(tilde.g - b * y)).map_err(&wrap_a)?;
    Ok((jac.tr_mul(&x) + l.tr_mul(&y), jac.tr_mul(&y)))
}
