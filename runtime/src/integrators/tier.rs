//! The vector of a tier, the one storage type every scheme written over both tiers is generic
//! over: `SVector<f64, N>` or `[f64; N]` on the fixed-size tier, `Vec<f64>` on the sparse tier.
//!
//! A scheme written once for both tiers (SPOOK, SHAKE/RATTLE, the carried-acceleration family,
//! the stabilized Runge–Kutta methods) keeps its buffers as a tier's [`TierVector`] and does
//! its arithmetic on the slices; the tier's system does the linear algebra.

use nalgebra::SVector;

/// A vector of a tier's storage, seen as a slice of `f64`.
pub trait TierVector: Clone + std::fmt::Debug {
    /// Returns the components.
    fn as_slice(&self) -> &[f64];
    /// Returns the components, mutably.
    fn as_mut_slice(&mut self) -> &mut [f64];
}

impl<const N: usize> TierVector for SVector<f64, N> {
    #[inline(always)]
    fn as_slice(&self) -> &[f64] {
        nalgebra::Matrix::as_slice(self)
    }
    #[inline(always)]
    fn as_mut_slice(&mut self) -> &mut [f64] {
        nalgebra::Matrix::as_mut_slice(self)
    }
}

impl<const N: usize> TierVector for [f64; N] {
    #[inline(always)]
    fn as_slice(&self) -> &[f64] {
        self
    }
    #[inline(always)]
    fn as_mut_slice(&mut self) -> &mut [f64] {
        self
    }
}

impl TierVector for Vec<f64> {
    #[inline(always)]
    fn as_slice(&self) -> &[f64] {
        self
    }
    #[inline(always)]
    fn as_mut_slice(&mut self) -> &mut [f64] {
        self
    }
}
