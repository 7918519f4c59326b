//! Linearly implicit integrators (one or two linear solves per step: SPOOK, the Zhang–Skeel
//! family) and the Newmark family they are compared with (Newton on the same linear systems).

pub(crate) mod carried;
mod newmark;
mod push_forward;
mod sparse_newmark;
pub(crate) mod spook;
mod stiff;
mod zhang_skeel;

pub use carried::{CarriedScheme, FullHessian, ImplicitAcceleration, StiffHessian};
pub use newmark::{Newmark, NewmarkOneIteration};
pub use push_forward::{NewtonAcceleration, PushForwardNewmark};
pub use sparse_newmark::{
    SparseNewmarkFirstIterate, SparseNewmarkOneIteration, SparseNewmarkOneIterationStiff,
};
pub use spook::{SparseSpook, Spook, SpookScheme};
pub use stiff::{SparseZhangSkeelStiff, ZhangSkeelStiff};
pub use zhang_skeel::{
    FullAcceleration, SparseZhangSkeel, SparseZhangSkeelSimplified, ZhangSkeel,
    ZhangSkeelSimplified,
};

use super::checks::{check_finite, check_state, check_step_size};
use super::mass_factor::MassFactor;
