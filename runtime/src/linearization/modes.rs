//! Modes of the linearized equations: undamped normal modes and damped eigenvalues.

use nalgebra::{Complex, DMatrix, SVector, SymmetricEigen};

use super::stiffness::ZERO_TOLERANCE;
use super::tangent::Linearization;
use super::LinearizationError;

/// What a mode does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ModeKind {
    /// An oscillation at the angular frequency `omega = √(ω²)`.
    Oscillation {
        /// The angular frequency, rad per unit time.
        omega: f64,
    },
    /// A zero mode (`|ω²|` at most `1e-9` of the largest): a rigid motion, or a neutral
    /// direction of a degenerate equilibrium.
    Zero,
    /// An unstable direction (`ω² < 0`): small motions grow as `e^{rate t}`.
    Unstable {
        /// The growth rate `√(−ω²)`.
        rate: f64,
    },
}

impl ModeKind {
    /// What an eigenvalue `ω²` means, with `scale` the largest `|ω²|` of the problem (or an
    /// estimate of it): zero at or below `1e-9 · scale`.
    pub(super) fn of(eigenvalue: f64, scale: f64) -> ModeKind {
        if eigenvalue.abs() <= ZERO_TOLERANCE * scale {
            ModeKind::Zero
        } else if eigenvalue < 0.0 {
            ModeKind::Unstable {
                rate: (-eigenvalue).sqrt(),
            }
        } else {
            ModeKind::Oscillation {
                omega: eigenvalue.sqrt(),
            }
        }
    }
}

/// One undamped mode: `Tᵀ K T y = ω² Tᵀ M T y`, its shape `φ = T y` in the model's coordinates
/// (`Shape` is an `SVector<f64, N>` on the fixed-size tier, a `Vec<f64>` on the sparse tier).
#[derive(Clone, Debug, PartialEq)]
pub struct Mode<Shape> {
    /// The eigenvalue `ω²`.
    pub eigenvalue: f64,
    /// What the mode does.
    pub kind: ModeKind,
    /// The shape `φ = T y`, mass-normalized (`φᵀ M φ = 1`), its largest entry positive. It
    /// satisfies the linearized rows, `G φ = 0`.
    pub shape: Shape,
    /// The relative residual `‖Kᵣ y − ω² Mᵣ y‖ / (‖Kᵣ‖ ‖y‖ + |ω²| ‖Mᵣ‖ ‖y‖)` of the reduced
    /// eigenproblem (Frobenius norms): the backward error of the pair.
    pub residual: f64,
}

impl<Shape> Mode<Shape> {
    /// The mode of `eigenvalue` (classified against `scale`, [`ModeKind::of`]) with `shape`
    /// and the relative residual `misfit / denominator` (zero for a zero denominator).
    pub(super) fn new(
        eigenvalue: f64,
        scale: f64,
        shape: Shape,
        misfit: f64,
        denominator: f64,
    ) -> Self {
        Mode {
            eigenvalue,
            kind: ModeKind::of(eigenvalue, scale),
            shape,
            residual: if denominator > 0.0 {
                misfit / denominator
            } else {
                0.0
            },
        }
    }

    /// The angular frequency `ω` of an oscillation, else `None`.
    pub fn omega(&self) -> Option<f64> {
        match self.kind {
            ModeKind::Oscillation { omega } => Some(omega),
            _ => None,
        }
    }
}

/// The undamped modes of a linearization, sorted by `ω²` (unstable first, then zero modes,
/// then the oscillations by frequency).
#[derive(Clone, Debug, PartialEq)]
pub struct Modes<Shape> {
    /// The modes, one per degree of freedom.
    pub modes: Vec<Mode<Shape>>,
}

impl<Shape> Modes<Shape> {
    /// The angular frequencies of the oscillations, ascending.
    pub fn frequencies(&self) -> Vec<f64> {
        self.modes.iter().filter_map(Mode::omega).collect()
    }

    /// How many zero modes there are.
    pub fn zero_modes(&self) -> usize {
        self.modes
            .iter()
            .filter(|m| m.kind == ModeKind::Zero)
            .count()
    }
}

/// One eigenvalue `s` of the damped linearized equations, `(s² Mᵣ + s Dᵣ + Kᵣ) y = 0`, with
/// `Im s ≥ 0`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DampedEigenvalue {
    /// The eigenvalue `s = −ζ ωₙ + i ωₙ √(1 − ζ²)`.
    pub s: Complex<f64>,
    /// The natural frequency `ωₙ = |s|`.
    pub natural_frequency: f64,
    /// The damping ratio `ζ = −Re s / |s|` (`1` or more: overdamped, a real `s`).
    pub damping_ratio: f64,
}

/// One mode of the damped linearized equations ([`Linearization::damped_modes`]).
#[derive(Clone, Debug, PartialEq)]
pub struct DampedMode<const N: usize> {
    /// The eigenvalue `s`, its natural frequency and damping ratio.
    pub eigenvalue: DampedEigenvalue,
    /// The complex shape `φ = T y` in the model's coordinates, its largest entry `1`:
    /// `q(t) = q* + Re(c φ e^{st})`.
    pub shape: SVector<Complex<f64>, N>,
    /// The relative residual `‖(s² Mᵣ + s Dᵣ + Kᵣ) y‖ / ((|s|² ‖Mᵣ‖ + |s| ‖Dᵣ‖ + ‖Kᵣ‖) ‖y‖)`
    /// (Frobenius norms): the backward error of the pair.
    pub residual: f64,
}

impl<const N: usize, const M: usize> Linearization<N, M> {
    /// The undamped modes: the generalized eigenpairs of `Kᵣ y = ω² Mᵣ y` (`Kᵣ = Tᵀ K T`,
    /// `Mᵣ = Tᵀ M T`) by the Cholesky factor `Mᵣ = L Lᵀ` and the symmetric eigenproblem of
    /// `L⁻¹ Kᵣ L⁻ᵀ`, in the model's coordinates `φ = T y`. The damping is ignored here (see
    /// [`damped_eigenvalues`](Linearization::damped_eigenvalues)). Errors: a reduced mass matrix
    /// that is not positive definite (a direction of motion without inertia), a stiffness that
    /// is not symmetric (circulatory forces, whose modes are complex).
    pub fn modes(&self) -> Result<Modes<SVector<f64, N>>, LinearizationError> {
        let mass = self.reduced_mass();
        let stiffness = self.symmetric_stiffness()?;
        let d = mass.nrows();
        if d == 0 {
            return Ok(Modes { modes: Vec::new() });
        }
        let cholesky = mass
            .clone()
            .cholesky()
            .ok_or_else(|| self.singular_mass())?;
        let l = cholesky.l();
        let inverse_l_k = l
            .solve_lower_triangular(&stiffness)
            .ok_or_else(|| self.singular_mass())?;
        let c = l
            .solve_lower_triangular(&inverse_l_k.transpose())
            .ok_or_else(|| self.singular_mass())?;
        let c = (&c + c.transpose()) * 0.5;
        let eigen = SymmetricEigen::new(c);
        let scale = eigen.eigenvalues.amax();
        let (k_norm, m_norm) = (stiffness.norm(), mass.norm());
        let mut modes = Vec::with_capacity(d);
        for i in 0..d {
            let eigenvalue = eigen.eigenvalues[i];
            let z = eigen.eigenvectors.column(i).into_owned();
            let y = l
                .transpose()
                .solve_upper_triangular(&z)
                .ok_or_else(|| self.singular_mass())?;
            let mut shape = SVector::<f64, N>::from_iterator((&self.tangent * &y).iter().copied());
            let largest = shape
                .iter()
                .copied()
                .fold(0.0f64, |a, x| if x.abs() > a.abs() { x } else { a });
            let sign = if largest < 0.0 { -1.0 } else { 1.0 };
            shape *= sign;
            let misfit = (&stiffness * &y - eigenvalue * (&mass * &y)).norm();
            let denominator = (k_norm + eigenvalue.abs() * m_norm) * y.norm();
            modes.push(Mode::new(eigenvalue, scale, shape, misfit, denominator));
        }
        modes.sort_by(|a, b| a.eigenvalue.total_cmp(&b.eigenvalue));
        Ok(Modes { modes })
    }

    /// The eigenvalues of the damped linearized equations `(s² Mᵣ + s Dᵣ + Kᵣ) y = 0`, from
    /// the first-order form `[0, I; −Mᵣ⁻¹Kᵣ, −Mᵣ⁻¹Dᵣ]` (real Schur form), those with
    /// `Im s ≥ 0`, by natural frequency. Without damping they are `i ω` of
    /// [`modes`](Linearization::modes).
    pub fn damped_eigenvalues(&self) -> Result<Vec<DampedEigenvalue>, LinearizationError> {
        let mass = self.reduced_mass();
        let d = mass.nrows();
        if d == 0 {
            return Ok(Vec::new());
        }
        let lu = mass.clone().lu();
        let stiffness = lu
            .solve(&self.reduced_stiffness())
            .ok_or_else(|| self.singular_mass())?;
        let damping = lu
            .solve(&self.reduced_damping())
            .ok_or_else(|| self.singular_mass())?;
        let mut first_order = DMatrix::<f64>::zeros(2 * d, 2 * d);
        first_order.view_mut((0, d), (d, d)).fill_with_identity();
        first_order
            .view_mut((d, 0), (d, d))
            .copy_from(&(-stiffness));
        first_order.view_mut((d, d), (d, d)).copy_from(&(-damping));
        let all = first_order.complex_eigenvalues();
        let eigenvalues = all.iter().copied().filter(|s| s.im >= 0.0).map(|s| {
            let natural_frequency = s.norm();
            DampedEigenvalue {
                s,
                natural_frequency,
                damping_ratio: if natural_frequency > 0.0 {
                    -s.re / natural_frequency
                } else {
                    0.0
                },
            }
        });
        let mut eigenvalues: Vec<DampedEigenvalue> = eigenvalues.collect();
        eigenvalues.sort_by(|a, b| a.natural_frequency.total_cmp(&b.natural_frequency));
        Ok(eigenvalues)
    }

    /// The damped modes: each eigenvalue `s` of
    /// [`damped_eigenvalues`](Linearization::damped_eigenvalues) (`Im s ≥ 0`) with its complex
    /// shape `φ = T y`, `(s² Mᵣ + s Dᵣ + Kᵣ) y = 0`, so that `q(t) = q* + Re(c φ e^{st})` solves
    /// the linearized equations for any complex `c`. The shape is found by two steps of inverse
    /// iteration on `s² Mᵣ + s Dᵣ + Kᵣ` (fully pivoted complex LU; Golub & Van Loan §7.6.1)
    /// and scaled so that its largest entry is `1`: the other entries are the coordinates'
    /// amplitudes and phases relative to it. With proportional damping the shapes are the
    /// undamped ones; otherwise the coordinates move out of phase. A repeated eigenvalue gets
    /// one vector of its eigenspace per copy, not a basis of it.
    pub fn damped_modes(&self) -> Result<Vec<DampedMode<N>>, LinearizationError> {
        let eigenvalues = self.damped_eigenvalues()?;
        let complex = |a: DMatrix<f64>| a.map(|x| Complex::new(x, 0.0));
        let (mass, damping, stiffness) = (
            complex(self.reduced_mass()),
            complex(self.reduced_damping()),
            complex(self.reduced_stiffness()),
        );
        let d = mass.nrows();
        let norms = (mass.norm(), damping.norm(), stiffness.norm());
        let tangent = complex(self.tangent.clone());
        let mut modes = Vec::with_capacity(eigenvalues.len());
        for eigenvalue in eigenvalues {
            let s = eigenvalue.s;
            let pencil = |s: Complex<f64>| &mass * (s * s) + &damping * s + &stiffness;
            // The pencil is singular at s up to round-off; a relative nudge keeps the LU
            // solvable without moving the solution off the eigenvector.
            let nudged = s + Complex::new(1e-13 * s.norm().max(1.0), 0.0);
            let lu = pencil(nudged).full_piv_lu();
            let mut y = nalgebra::DVector::from_element(d, Complex::new(1.0, 0.0));
            for _ in 0..2 {
                y = lu.solve(&y).ok_or_else(|| self.singular_mass())?;
                let size = y.iter().fold(0.0f64, |a, x| a.max(x.norm()));
                if !(size.is_finite() && size > 0.0) {
                    return Err(LinearizationError::NonFinite {
                        quantity: "a damped mode's shape",
                        q: self.q.as_slice().to_vec(),
                    });
                }
                y /= Complex::new(size, 0.0);
            }
            let misfit = (pencil(s) * &y).norm();
            let scale = (s.norm_sqr() * norms.0 + s.norm() * norms.1 + norms.2) * y.norm();
            let phi = &tangent * &y;
            let largest = phi.iter().copied().fold(Complex::new(0.0, 0.0), |a, x| {
                if x.norm() > a.norm() {
                    x
                } else {
                    a
                }
            });
            let shape = SVector::<Complex<f64>, N>::from_iterator(phi.iter().map(|x| x / largest));
            modes.push(DampedMode {
                eigenvalue,
                shape,
                residual: if scale > 0.0 { misfit / scale } else { 0.0 },
            });
        }
        Ok(modes)
    }

    /// `Tᵀ K T` symmetrized, or an error if `K` is not symmetric on the tangent space.
    fn symmetric_stiffness(&self) -> Result<DMatrix<f64>, LinearizationError> {
        let reduced = self.reduced_stiffness();
        let asymmetry = (&reduced - reduced.transpose()).amax();
        if asymmetry > 1e-9 * reduced.amax() {
            return Err(LinearizationError::Circulatory { asymmetry });
        }
        Ok((&reduced + reduced.transpose()) * 0.5)
    }

    fn singular_mass(&self) -> LinearizationError {
        LinearizationError::Singular {
            what: "the reduced mass matrix Tᵀ M T (a direction of motion without inertia that \
                   no constraint fixes)",
            q: self.q.as_slice().to_vec(),
        }
    }
}
