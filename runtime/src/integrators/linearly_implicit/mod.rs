//! Linearly implicit integrators (one or two linear solves per step: SPOOK, the Zhang–Skeel
//! family) and the Newmark family they are compared with (Newton on the same linear systems).

mod carried;
mod newmark;
mod sparse_newmark;
mod spook;
mod stiff;
mod zhang_skeel;

pub use carried::{
    AccelerationRule, CarriedDense, CarriedScheme, CarriedSparse, CarriedTier, EnergyTerms,
    FullHessian, ImplicitAcceleration, ImplicitSolve, MassSolve, NewtonIterate, RuleDefaults,
    RuleName, SparseHessian, StiffHessian, ThirdContraction, UsesBeta,
};
pub use newmark::{Newmark, NewmarkOneIteration, NewtonAcceleration, PushForwardNewmark};
pub use sparse_newmark::{
    SparseNewmarkFirstIterate, SparseNewmarkOneIteration, SparseNewmarkOneIterationStiff,
};
pub use spook::{
    SparseSpook, Spook, SpookDense, SpookOverrides, SpookRows, SpookScheme, SpookSparse,
    SpookSystem,
};
pub use stiff::{SparseZhangSkeelStiff, ZhangSkeelStiff};
pub use zhang_skeel::{
    FullAcceleration, SparseZhangSkeel, SparseZhangSkeelSimplified, ZhangSkeel,
    ZhangSkeelSimplified,
};

use super::checks::{check_finite, check_state, check_step_size};
use super::mass_factor::MassFactor;
