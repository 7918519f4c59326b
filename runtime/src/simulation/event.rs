//! Events: sign changes of functions of the state that stop a run, located inside the step.
//!
//! An event is a function `g(t, q, v)` of the state and the direction of the sign change that
//! counts ([`Crossing`]). After every step the driver evaluates each `g` at the step's end; a
//! sign change from the step's start that matches the direction stops the run with
//! [`StopReason::Event`](super::StopReason::Event) and the located time `t*`:
//!
//! - with dense output (DOPRI5's continuous extension), `t*` is a root of `g` along the
//!   interpolant, found by the Illinois variant of regula falsi (Dowell & Jarratt, BIT 11
//!   (1971)) to a bracket of a few ulps of `t`, so `t*` carries the interpolant's `O(h⁵)`
//!   error and no more;
//! - without it (every fixed-step method), `t*` is the secant root
//!   `t_n + h g_n / (g_n − g_{n+1})` of the end values: exact for `g` linear in `t` along the
//!   step, `O(h²)` in general — the step's end is the only state the method computed.
//!
//! This follows diffsol's `StopReason::RootFound(t)`: the run's state stays the integrator's
//! state at the end of the step (never an interpolated state that the integrator did not
//! produce), and [`Simulation::state_at`](super::Simulation::state_at) evaluates the state at
//! `t*` where a dense output exists. Stepping on after an event continues the run.

use crate::error::StepError;

/// Which sign changes of an event function stop the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Crossing {
    /// From negative to zero or positive.
    Rising,
    /// From positive to zero or negative.
    Falling,
    /// Either of the two.
    Either,
}

impl Crossing {
    /// Returns whether the change from `before` to `after` is a crossing of this direction.
    ///
    /// A function that starts the step at exactly zero does not cross (that zero was the
    /// previous step's event, or the initial state's); one that ends it at exactly zero does.
    pub fn crosses(self, before: f64, after: f64) -> bool {
        let rising = before < 0.0 && after >= 0.0;
        let falling = before > 0.0 && after <= 0.0;
        match self {
            Crossing::Rising => rising,
            Crossing::Falling => falling,
            Crossing::Either => rising || falling,
        }
    }
}

/// An event function of the state `S` and its direction.
pub(super) struct Event<'m, S> {
    pub(super) crossing: Crossing,
    pub(super) condition: Box<dyn FnMut(&S) -> f64 + 'm>,
    /// The value at the end of the last step (at the initial state before the first).
    pub(super) last: f64,
}

impl<S> Event<'_, S> {
    /// Evaluates the condition at `state`; fails with `NonFinite` (index = the event's
    /// number) when it is not finite.
    pub(super) fn evaluate(&mut self, index: usize, state: &S, t: f64) -> Result<f64, StepError> {
        let value = (self.condition)(state);
        if value.is_finite() {
            Ok(value)
        } else {
            Err(StepError::NonFinite {
                quantity: "event function",
                index,
                t,
            })
        }
    }
}

/// Returns the secant root `a + (b − a) g_a / (g_a − g_b)` of the values `g_a`, `g_b` of
/// opposite sign (or `g_b = 0`) at the ends of `[a, b]`, clamped into `[a, b]`.
pub(super) fn secant(a: f64, b: f64, ga: f64, gb: f64) -> f64 {
    if gb == 0.0 {
        return b;
    }
    (a + (b - a) * (ga / (ga - gb))).clamp(a, b)
}

/// Returns a root of `g` in `[a, b]` where `g(a) = ga` and `g(b) = gb` have opposite signs (or
/// `gb = 0`), by the Illinois variant of regula falsi, superlinear on a simple root, with a
/// bisection whenever two iterations did not halve the bracket (a multiple root, where regula
/// falsi crawls), so the bracket at least halves every three evaluations. Stops when the
/// bracket is within four ulps of `|t|` (at most 200 evaluations) and returns the end on the
/// far side of the crossing, so the state at the returned time has already crossed.
pub(super) fn illinois(
    (mut a, mut b): (f64, f64),
    (mut ga, mut gb): (f64, f64),
    mut g: impl FnMut(f64) -> Result<f64, StepError>,
) -> Result<f64, StepError> {
    if gb == 0.0 {
        return Ok(b);
    }
    // Which end was kept last: halving its value stops regula falsi from stalling.
    let mut kept = 0i8;
    // The bracket's width two iterations ago, and whether the next point is a bisection.
    let mut widths = [b - a; 2];
    for iteration in 0..200 {
        if b - a <= 4.0 * f64::EPSILON * a.abs().max(b.abs()).max(f64::MIN_POSITIVE) {
            break;
        }
        let bisect = b - a > 0.5 * widths[iteration % 2];
        widths[iteration % 2] = b - a;
        let secant_point = secant(a, b, ga, gb);
        let c = if bisect || secant_point <= a || secant_point >= b {
            0.5 * (a + b)
        } else {
            secant_point
        };
        if c <= a || c >= b {
            break;
        }
        let gc = g(c)?;
        if gc == 0.0 {
            return Ok(c);
        }
        if (gc < 0.0) == (ga < 0.0) {
            (a, ga) = (c, gc);
            if kept == 1 && !bisect {
                gb *= 0.5;
            }
            kept = 1;
        } else {
            (b, gb) = (c, gc);
            if kept == -1 && !bisect {
                ga *= 0.5;
            }
            kept = -1;
        }
    }
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crossings_by_direction() {
        assert!(Crossing::Rising.crosses(-1.0, 1.0));
        assert!(Crossing::Rising.crosses(-1.0, 0.0));
        assert!(!Crossing::Rising.crosses(1.0, -1.0));
        assert!(!Crossing::Rising.crosses(0.0, 1.0));
        assert!(Crossing::Falling.crosses(1.0, -1.0));
        assert!(!Crossing::Falling.crosses(-1.0, 1.0));
        assert!(Crossing::Either.crosses(1.0, -1.0) && Crossing::Either.crosses(-1.0, 1.0));
        assert!(!Crossing::Either.crosses(1.0, 2.0));
    }

    /// The Illinois iteration finds cos t = 0 at π/2 to a few ulps in few evaluations, and a
    /// root of a function that is flat on one side (where plain regula falsi stalls).
    #[test]
    fn illinois_converges_superlinearly() {
        let mut calls = 0;
        let root = illinois((1.0, 2.0), (1f64.cos(), 2f64.cos()), |t| {
            calls += 1;
            Ok(t.cos())
        })
        .unwrap();
        assert!((root - std::f64::consts::FRAC_PI_2).abs() <= 4.0 * f64::EPSILON * 2.0);
        assert!(calls <= 16, "{calls} evaluations; bisection alone takes 52");
        let mut calls = 0;
        let mut flat = |t: f64| {
            calls += 1;
            Ok((t - 0.3).powi(9))
        };
        let ends = (flat(0.0).unwrap(), flat(1.0).unwrap());
        let root = illinois((0.0, 1.0), ends, flat).unwrap();
        // Where |t − 0.3|⁹ underflows the sign is lost: the bracket stops at ~1e-36^(1/9).
        assert!((root - 0.3).abs() < 1e-15, "root {root}");
        assert!(calls <= 2 + 3 * 53, "{calls} evaluations");
    }

    #[test]
    fn secant_is_exact_for_linear_functions() {
        let g = |t: f64| 3.0 * (t - 0.25);
        assert!((secant(0.0, 1.0, g(0.0), g(1.0)) - 0.25).abs() < 1e-16);
        assert_eq!(secant(0.0, 1.0, -1.0, 0.0), 1.0);
    }
}
