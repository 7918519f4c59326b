//! Linearly implicit integrators (one or two linear solves per step: SPOOK, the Zhang–Skeel
//! family) and the Newmark family they are compared with (Newton on the same linear systems).

pub(crate) mod carried;
pub(crate) mod newmark;
mod newmark_jacobian;
mod one_iteration;
mod push_forward;
mod push_forward_jacobian;
mod solved_acceleration;
pub(crate) mod spook;
mod stiff;
mod zhang_skeel;
mod zhang_skeel_jacobian;

pub use carried::{CarriedScheme, FullHessian, ImplicitAcceleration, StiffHessian};
pub use newmark::{Newmark, NewmarkScheme, NewtonSolved};
pub use one_iteration::{
    FirstIterate, NewmarkOneIteration, SparseNewmarkFirstIterate, SparseNewmarkOneIteration,
    SparseNewmarkOneIterationStiff,
};
pub use push_forward::{NewtonAcceleration, PushForwardNewmark};
pub use spook::{SparseSpook, Spook, SpookScheme};
pub use stiff::{SparseZhangSkeelStiff, ZhangSkeelStiff};
pub use zhang_skeel::{
    FullAcceleration, SparseZhangSkeel, SparseZhangSkeelSimplified, ZhangSkeel,
    ZhangSkeelSimplified,
};

use super::checks::{check_finite, check_state};
use super::mass_factor::MassFactor;
