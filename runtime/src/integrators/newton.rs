//! Newton's settings, one type for every integrator that solves a nonlinear system per step
//! (SHAKE/RATTLE, Livens, Cortés–Martínez, the midpoint discrete Lagrange–d'Alembert, Newmark).
//!
//! Each integrator keeps its own stopping rule (what the tolerance is relative to) and its own
//! defaults, stated in its docs; the settings, their validation and the builders that set them
//! ([`newton_builders!`]) are written here once.

use crate::error::StepError;

/// Newton's stopping rule: a relative tolerance and a cap on the iterations of one solve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Newton {
    tolerance: f64,
    max_iterations: usize,
}

impl Newton {
    /// Creates the settings; fails with `BadParameter` unless `tolerance` is finite and positive
    /// and `max_iterations` at least 1.
    pub fn new(tolerance: f64, max_iterations: usize) -> Result<Self, StepError> {
        Newton::preset(1.0, 1)
            .with_tolerance(tolerance)?
            .with_max_iterations(max_iterations)
    }

    /// Creates an integrator's default settings, which are valid by construction.
    pub(crate) const fn preset(tolerance: f64, max_iterations: usize) -> Self {
        Newton {
            tolerance,
            max_iterations,
        }
    }

    /// Returns the relative tolerance.
    pub fn tolerance(&self) -> f64 {
        self.tolerance
    }

    /// Returns the cap on iterations per solve.
    pub fn max_iterations(&self) -> usize {
        self.max_iterations
    }

    /// Sets the relative tolerance; fails with `BadParameter` unless it is finite and positive.
    pub fn with_tolerance(mut self, tolerance: f64) -> Result<Self, StepError> {
        if tolerance.is_finite() && tolerance > 0.0 {
            self.tolerance = tolerance;
            Ok(self)
        } else {
            Err(StepError::BadParameter {
                name: "tolerance",
                value: tolerance,
                requirement: "must be finite and positive",
            })
        }
    }

    /// Sets the cap on iterations per solve; fails with `BadParameter` if it is 0.
    pub fn with_max_iterations(mut self, max_iterations: usize) -> Result<Self, StepError> {
        if max_iterations == 0 {
            Err(StepError::BadParameter {
                name: "max_iterations",
                value: 0.0,
                requirement: "must be at least 1",
            })
        } else {
            self.max_iterations = max_iterations;
            Ok(self)
        }
    }
}

/// Implements an integrator's Newton builders and accessors (`tolerance`, `max_iterations`,
/// `newton`, `with_tolerance`, `with_max_iterations`, `with_newton`) over its [`Newton`] field.
///
/// Called as `newton_builders!([generics] Type<..>, field.path, rule, default_tolerance,
/// default_max_iterations)`, where `rule` is the sentence of the docs that states the
/// integrator's stopping rule.
macro_rules! newton_builders {
    (
        [$($generics:tt)*] $ty:ty,
        $($field:ident).+,
        $rule:expr,
        $default_tolerance:literal,
        $default_max_iterations:literal
    ) => {
        impl<$($generics)*> $ty {
            /// Returns the relative Newton tolerance.
            pub fn tolerance(&self) -> f64 {
                self.$($field).+.tolerance()
            }

            /// Returns the cap on Newton iterations per solve.
            pub fn max_iterations(&self) -> usize {
                self.$($field).+.max_iterations()
            }

            /// Returns the Newton settings.
            pub fn newton(&self) -> $crate::integrators::Newton {
                self.$($field).+
            }

            #[doc = concat!("Sets the relative Newton tolerance (default `", $default_tolerance, "`); fails with `BadParameter` unless it is finite and positive.")]
            ///
            #[doc = $rule]
            pub fn with_tolerance(
                mut self,
                tolerance: f64,
            ) -> Result<Self, $crate::error::StepError> {
                self.$($field).+ = self.$($field).+.with_tolerance(tolerance)?;
                Ok(self)
            }

            #[doc = concat!("Sets the cap on Newton iterations per solve (default ", $default_max_iterations, "), past which a step fails; fails with `BadParameter` if it is 0.")]
            pub fn with_max_iterations(
                mut self,
                max_iterations: usize,
            ) -> Result<Self, $crate::error::StepError> {
                self.$($field).+ = self.$($field).+.with_max_iterations(max_iterations)?;
                Ok(self)
            }

            /// Replaces the Newton settings, already validated by [`Newton`](crate::integrators::Newton).
            pub fn with_newton(mut self, newton: $crate::integrators::Newton) -> Self {
                self.$($field).+ = newton;
                self
            }
        }
    };
}

pub(crate) use newton_builders;
