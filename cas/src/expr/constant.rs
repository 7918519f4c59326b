//! Finite `f64` constants that label e-nodes: totally ordered and hashed by their bits.

use std::fmt;
use std::str::FromStr;

/// A finite `f64`, totally ordered and hashed by its bits so that it can label e-nodes.
///
/// `-0.0` is normalized to `0.0`, so the two zeros hash-cons to one node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Constant(OrderedBits);

/// Bits of a finite `f64`, mapped so that integer order equals numeric order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
struct OrderedBits(i64);

impl Constant {
    /// The constant `0.0`.
    pub(super) const ZERO: Constant = Constant(OrderedBits(0));

    /// Wraps a finite value, returning `None` for infinities and NaN.
    pub fn new(value: f64) -> Option<Constant> {
        if !value.is_finite() {
            return None;
        }
        // Adding 0.0 turns -0.0 into 0.0 and leaves every other value alone.
        let bits = (value + 0.0).to_bits() as i64;
        // Flip the magnitude bits of negative values so that signed integer order is numeric
        // order (the usual total-order trick of `f64::total_cmp`).
        let ordered = bits ^ ((((bits >> 63) as u64) >> 1) as i64);
        Some(Constant(OrderedBits(ordered)))
    }

    /// Returns the wrapped value.
    pub fn value(self) -> f64 {
        let ordered = self.0 .0;
        let bits = ordered ^ ((((ordered >> 63) as u64) >> 1) as i64);
        f64::from_bits(bits as u64)
    }

    /// Returns the value as an `i32` when it is an integer in range.
    pub fn as_i32(self) -> Option<i32> {
        as_i32(self.value())
    }
}

/// Converts an integer-valued `f64` in `i32` range to `i32`.
pub(crate) fn as_i32(v: f64) -> Option<i32> {
    if v.fract() == 0.0 && v >= f64::from(i32::MIN) && v <= f64::from(i32::MAX) {
        Some(v as i32)
    } else {
        None
    }
}

impl fmt::Display for Constant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.value(), f)
    }
}

/// Error returned when a string is not a finite `f64`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseConstantError;

impl fmt::Display for ParseConstantError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a finite f64 literal")
    }
}

impl std::error::Error for ParseConstantError {}

impl FromStr for Constant {
    type Err = ParseConstantError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let v: f64 = s.parse().map_err(|_| ParseConstantError)?;
        Constant::new(v).ok_or(ParseConstantError)
    }
}
