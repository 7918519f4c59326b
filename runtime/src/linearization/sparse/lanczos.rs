//! The lowest undamped modes of a sparse-tier model by shift-invert Lanczos (see the
//! [module docs](crate::linearization#the-sparse-tier)).

use nalgebra::{DMatrix, SymmetricEigen};

use super::{dot, SparseEquilibrium, SparseLinearizable, System};
use crate::linearization::{LinearizationError, Mode, Modes};

/// The settings of [`sparse_modes`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SparseModeSettings {
    /// How many of the lowest modes to find (fewer if the model has fewer degrees of freedom).
    pub count: usize,
    /// The relative accuracy of each eigenvalue `θ = 1/(ω² − σ)` of the shifted operator at
    /// which a mode has converged: `|β s_last| ≤ tolerance · |θ|`.
    pub tolerance: f64,
    /// The largest Krylov space, `0` for `max(200, 20 · count)` (at most the degrees of
    /// freedom).
    pub max_dimension: usize,
    /// The relative residual of the equilibrium equations the point must satisfy.
    pub equilibrium_tolerance: f64,
}

impl Default for SparseModeSettings {
    /// The lowest 10 modes, to `1e-12`, at an equilibrium to `1e-8`.
    fn default() -> Self {
        SparseModeSettings {
            count: 10,
            tolerance: 1e-12,
            max_dimension: 0,
            equilibrium_tolerance: 1e-8,
        }
    }
}

/// Returns the lowest `settings.count` undamped modes of `model` about `equilibrium`, sorted
/// by `ω²` (unstable first, then zero modes, then oscillations by frequency), their shapes in
/// the model's coordinates, mass-normalized (`φᵀ M φ = 1`, largest entry positive, `G φ = 0`).
///
/// Shift-invert Lanczos in the `M` inner product with full reorthogonalization (twice, Parlett's
/// "twice is enough"): the shift `σ` starts at `−10⁻¹⁰` of the largest `|Kᵢᵢ| / Mᵢᵢ` (just
/// below zero, so that the largest `θ` stay apart however wide the spectrum) and is lowered until the inertia of `[K − σM, Gᵀ; G, 0]` says no eigenvalue lies below it, so
/// that the largest `θ = 1/(ω² − σ)` are the lowest `ω²`, unstable ones included; each
/// operator application is one solve with that one factorization. A mode's
/// [`residual`](Mode::residual) is the relative residual of the constrained eigenproblem in the
/// model's coordinates, `‖K φ − ω² M φ + Gᵀ μ‖ / ((‖K‖_F + |ω²| ‖M‖_F) ‖φ‖)` with `μ` the
/// least-squares multiplier (the part of `K φ − ω² M φ` the rows carry).
///
/// Errors: the point is not an equilibrium to `settings.equilibrium_tolerance`
/// ([`LinearizationError::NotAnEquilibrium`]), Lanczos did not converge within the largest
/// Krylov space ([`LinearizationError::NotConverged`]), a singular saddle-point matrix
/// (redundant rows), bad settings.
pub fn sparse_modes<S: SparseLinearizable>(
    model: &S,
    equilibrium: &SparseEquilibrium,
    settings: &SparseModeSettings,
) -> Result<Modes<Vec<f64>>, LinearizationError> {
    for (name, value, ok) in [
        (
            "tolerance",
            settings.tolerance,
            settings.tolerance > 0.0 && settings.tolerance < 1.0,
        ),
        (
            "equilibrium_tolerance",
            settings.equilibrium_tolerance,
            settings.equilibrium_tolerance > 0.0 && settings.equilibrium_tolerance < 1.0,
        ),
    ] {
        if !ok {
            return Err(LinearizationError::BadSetting {
                name,
                value,
                requirement: "a relative accuracy in (0, 1)",
            });
        }
    }
    let mut system = System::new(model, equilibrium.t)?;
    equilibrium.check(&mut system, settings.equilibrium_tolerance)?;
    let (q, lambda) = (&equilibrium.q, &equilibrium.lambda);
    system.evaluate(q)?;
    system.evaluate_stiffness(q, lambda)?;
    let (n, m) = (system.n, system.m);
    let dof = n.saturating_sub(m);
    let count = settings.count.min(dof);
    if count == 0 {
        return Ok(Modes { modes: Vec::new() });
    }
    let scale = system.spectral_scale();
    let what = "the shifted saddle-point matrix [K − σM, Gᵀ; G, 0] (redundant constraint rows)";
    let mut shift = -1e-10 * scale;
    let mut lowered = 0;
    loop {
        // A singular matrix means σ is an eigenvalue: move on as if some lay below.
        match system.count_below(shift, what, q) {
            Ok(0) => break,
            Ok(_) | Err(LinearizationError::Singular { .. }) => {}
            Err(error) => return Err(error),
        }
        lowered += 1;
        if lowered > 60 {
            return Err(LinearizationError::Singular { what, q: q.clone() });
        }
        shift = 4.0 * shift - scale;
    }
    let max_dimension = match settings.max_dimension {
        0 => (20 * count).max(200),
        d => d,
    }
    .min(dof);
    let krylov = Krylov::run(&mut system, count, max_dimension, settings, q)?;
    modes_of(&mut system, &krylov, shift, scale, q)
}

/// The Lanczos basis `Q` (`M`-orthonormal columns in `ker G`) and the Ritz pairs of the
/// tridiagonal `T = Qᵀ M S(σ) M Q` it found.
struct Krylov {
    basis: Vec<Vec<f64>>,
    /// The `count` largest Ritz values `θ` and their vectors `s` (in `T`'s coordinates).
    ritz: Vec<(f64, Vec<f64>)>,
}

impl Krylov {
    /// Runs Lanczos on `x = S(σ) M y` from `S(σ)` applied to a fixed mixed vector, until the
    /// `count` largest Ritz values have converged or the space reaches `max_dimension` (or
    /// becomes invariant).
    fn run<S: SparseLinearizable>(
        system: &mut System<'_, S>,
        count: usize,
        max_dimension: usize,
        settings: &SparseModeSettings,
        q: &[f64],
    ) -> Result<Krylov, LinearizationError> {
        let n = system.n;
        let dof = n.saturating_sub(system.m);
        // The factorization of K − σM is the one `count_below` left.
        let apply = |system: &mut System<'_, S>, y: &[f64]| {
            let mut my = vec![0.0; n];
            system.mass_times(y, &mut my);
            let (mut x, mut nu) = (vec![0.0; n], vec![0.0; system.m]);
            system.solve((&my, &vec![0.0; system.m]), (&mut x, &mut nu), q)?;
            Ok::<_, LinearizationError>(x)
        };
        let m_dot = |system: &System<'_, S>, x: &[f64], y: &[f64]| {
            let mut my = vec![0.0; n];
            system.mass_times(y, &mut my);
            dot(x, &my)
        };
        // Starts with every coordinate in them, aligned with no mode by symmetry: the first,
        // and after a breakdown (an invariant subspace, e.g. one vector of a repeated
        // eigenvalue's eigenspace) another one, orthogonalized against the basis, with a zero
        // coupling in T (Parlett, *The Symmetric Eigenvalue Problem*, §13.4).
        let start = |k: usize| -> Vec<f64> {
            (0..n)
                .map(|i| 1.0 + 0.5 * ((1.0 + i as f64).sqrt() * (1.0 + 0.618 * k as f64)).sin())
                .collect()
        };
        let orthogonalize = |system: &System<'_, S>, w: &mut Vec<f64>, basis: &[Vec<f64>]| {
            for _ in 0..2 {
                for column in basis {
                    let c = m_dot(system, w, column);
                    for (w, x) in w.iter_mut().zip(column) {
                        *w -= c * x;
                    }
                }
            }
            m_dot(system, w, w).sqrt()
        };
        let mut basis: Vec<Vec<f64>> = Vec::new();
        let (mut alpha, mut beta): (Vec<f64>, Vec<f64>) = (Vec::new(), Vec::new());
        let mut w = apply(system, &start(0))?;
        let mut norm = m_dot(system, &w, &w).sqrt();
        let mut largest = norm;
        let mut starts = 1;
        loop {
            // A breakdown: the new direction is round-off of the largest θ seen.
            if !(norm.is_finite() && norm > 1e-12 * largest) {
                let restart = basis.len() < dof && starts < 2 * count + 2;
                if !restart {
                    break;
                }
                w = apply(system, &start(starts))?;
                starts += 1;
                norm = orthogonalize(system, &mut w, &basis);
                if let Some(last) = beta.last_mut() {
                    *last = 0.0;
                }
                continue;
            }
            let column: Vec<f64> = w.iter().map(|x| x / norm).collect();
            basis.push(column);
            let j = basis.len() - 1;
            w = apply(system, &basis[j])?;
            let a = m_dot(system, &w, &basis[j]);
            alpha.push(a);
            largest = largest.max(a.abs());
            // Full reorthogonalization against the whole basis, twice.
            norm = orthogonalize(system, &mut w, &basis);
            let dimension = basis.len();
            // When the basis spans all of ker G (dimension n − m) the Ritz pairs are the
            // eigenpairs.
            let spanned = dimension >= dof;
            let full = dimension >= max_dimension;
            if dimension >= count && (dimension.is_multiple_of(5) || spanned || full) {
                let ritz = largest_ritz(&alpha, &beta, count);
                let converged = ritz.iter().all(|(theta, s)| {
                    (norm * s[dimension - 1]).abs() <= settings.tolerance * theta.abs()
                });
                if converged || spanned {
                    return Ok(Krylov { basis, ritz });
                }
                if full {
                    let worst = ritz
                        .iter()
                        .map(|(theta, s)| (norm * s[dimension - 1]).abs() / theta.abs())
                        .fold(0.0, f64::max);
                    return Err(LinearizationError::NotConverged {
                        iterations: dimension,
                        residual: worst,
                        tolerance: settings.tolerance,
                    });
                }
            }
            beta.push(norm);
        }
        // Every start broke down: the space found is invariant, its Ritz pairs are eigenpairs.
        let ritz = largest_ritz(&alpha, &beta, count.min(alpha.len()));
        Ok(Krylov { basis, ritz })
    }
}

/// The `count` largest eigenpairs of the symmetric tridiagonal matrix with diagonal `alpha` and
/// off-diagonal `beta`, largest first.
fn largest_ritz(alpha: &[f64], beta: &[f64], count: usize) -> Vec<(f64, Vec<f64>)> {
    let d = alpha.len();
    let mut t = DMatrix::<f64>::zeros(d, d);
    for (i, a) in alpha.iter().enumerate() {
        t[(i, i)] = *a;
    }
    for (i, b) in beta.iter().take(d.saturating_sub(1)).enumerate() {
        t[(i, i + 1)] = *b;
        t[(i + 1, i)] = *b;
    }
    let eigen = SymmetricEigen::new(t);
    let mut order: Vec<usize> = (0..d).collect();
    order.sort_by(|&a, &b| eigen.eigenvalues[b].total_cmp(&eigen.eigenvalues[a]));
    order
        .into_iter()
        .take(count)
        .map(|k| {
            (
                eigen.eigenvalues[k],
                eigen.eigenvectors.column(k).iter().copied().collect(),
            )
        })
        .collect()
}

/// The modes of the converged Ritz pairs: `ω² = σ + 1/θ`, `φ = Q s` mass-normalized, with
/// their residuals (one factorization of `[M, Gᵀ; G, 0]` for the multipliers).
fn modes_of<S: SparseLinearizable>(
    system: &mut System<'_, S>,
    krylov: &Krylov,
    shift: f64,
    scale: f64,
    q: &[f64],
) -> Result<Modes<Vec<f64>>, LinearizationError> {
    let n = system.n;
    let (m_norm, k_norm) = system.norms();
    system.factor(
        1.0,
        false,
        "the saddle-point matrix [M, Gᵀ; G, 0] of the residuals (redundant constraint rows)",
        q,
    )?;
    let mut modes = Vec::with_capacity(krylov.ritz.len());
    for (theta, s) in &krylov.ritz {
        let eigenvalue = shift + 1.0 / theta;
        let mut shape = vec![0.0; n];
        for (column, c) in krylov.basis.iter().zip(s) {
            for (x, b) in shape.iter_mut().zip(column) {
                *x += c * b;
            }
        }
        let (mut m_shape, mut k_shape) = (vec![0.0; n], vec![0.0; n]);
        system.mass_times(&shape, &mut m_shape);
        let mass = dot(&shape, &m_shape).sqrt();
        let largest = shape
            .iter()
            .copied()
            .fold(0.0f64, |a, x| if x.abs() > a.abs() { x } else { a });
        let factor = largest.signum() / mass;
        for x in shape.iter_mut().chain(m_shape.iter_mut()) {
            *x *= factor;
        }
        system.stiffness_times(&shape, &mut k_shape);
        // r = Kφ − ω²Mφ; its part Gᵀμ in the rows' span is a multiplier's, not an error:
        // [M, Gᵀ; G, 0] [z; μ] = [r; 0] leaves r − Gᵀμ = M z.
        let r: Vec<f64> = k_shape
            .iter()
            .zip(&m_shape)
            .map(|(k, m)| k - eigenvalue * m)
            .collect();
        let (mut z, mut mu) = (vec![0.0; n], vec![0.0; system.m]);
        system.solve((&r, &vec![0.0; system.m]), (&mut z, &mut mu), q)?;
        let mut carried = vec![0.0; n];
        system.jacobian_transpose_times(&mu, &mut carried);
        let misfit = r
            .iter()
            .zip(&carried)
            .map(|(r, c)| (r - c) * (r - c))
            .sum::<f64>()
            .sqrt();
        let denominator = (k_norm + eigenvalue.abs() * m_norm) * dot(&shape, &shape).sqrt();
        modes.push(Mode::new(eigenvalue, scale, shape, misfit, denominator));
    }
    modes.sort_by(|a, b| a.eigenvalue.total_cmp(&b.eigenvalue));
    Ok(Modes { modes })
}
