//! Equilibria, linearization and modes (`runtime::linearization`) against references written
//! in other coordinates: the hanging chain of pendula in Cartesian coordinates against the
//! angle-coordinate matrices `Mᵢⱼ = (Σ_{k ≥ max(i,j)} mₖ) lᵢ lⱼ`, `Kᵢᵢ = g lᵢ Σ_{k ≥ i} mₖ`
//! (whose rods' tensions give the multipliers in closed form), and the planar spring
//! pendulum's radial and swinging frequencies `√(k/m)` and `√(g/L)`, `L = l₀ + m g/k`.
//!
//! One module per reference: the hanging chain (`hanging_chain`), closed-form frequencies
//! (`closed_forms`), damped modes (`damped`), and the linearization against motion (`motion`).

mod closed_forms;
mod damped;
mod hanging_chain;
mod motion;
