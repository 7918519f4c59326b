//! The smooth switch of a pair sum's cutoff (`mechanism!`'s `cutoff(r = …, on = …, off = …)`):
//! `S(r) = 1` up to `r_on`, `0` from `r_off`, and between them the quintic smoothstep
//!
//! ```text
//! S = 1 − 10x³ + 15x⁴ − 6x⁵,   x = (r − r_on)/(r_off − r_on),
//! ```
//!
//! the lowest-degree polynomial with `S = 1`, `S' = S'' = 0` at `x = 0` and `S = 0`,
//! `S' = S'' = 0` at `x = 1`, so that the switched potential `S(r)·E` is C² (its forces and
//! Hessian are continuous) wherever `E` is. It is the switch `1 − s(x)` of the "smootherstep"
//! `s = 6x⁵ − 15x⁴ + 10x³` (Perlin 2002, "Improving noise", SIGGRAPH) and the quintic switching
//! function of molecular dynamics codes (e.g. the "C² switch" of Allen and Tildesley,
//! *Computer Simulation of Liquids*, 2nd ed., 2017, §5.2.3, in place of CHARMM's cubic-in-r²).

/// Returns `(S, dS/dr, d²S/dr²)` of the quintic switch at `r` for the switching region
/// `[on, off]` (`on < off`): `(1, 0, 0)` for `r ≤ on`, `(0, 0, 0)` for `r ≥ off`.
///
/// ```
/// use mechanism_runtime::switch::quintic;
/// assert_eq!(quintic(1.0, 2.0, 4.0), (1.0, 0.0, 0.0));
/// assert_eq!(quintic(3.0, 2.0, 4.0).0, 0.5);
/// assert_eq!(quintic(4.0, 2.0, 4.0), (0.0, 0.0, 0.0));
/// ```
#[inline]
pub fn quintic(r: f64, on: f64, off: f64) -> (f64, f64, f64) {
    if r <= on {
        return (1.0, 0.0, 0.0);
    }
    if r >= off {
        return (0.0, 0.0, 0.0);
    }
    let width = off - on;
    let x = (r - on) / width;
    let (x2, y) = (x * x, 1.0 - x);
    // S = (1 − x)³(1 + 3x + 6x²), the same polynomial factored so that S keeps its relative
    // accuracy as it goes to 0 at `off`; S' = −30x²(1 − x)²/w; S'' = −60x(1 − x)(1 − 2x)/w².
    let s = y * y * y * (1.0 + 3.0 * x + 6.0 * x2);
    let ds = -30.0 * x2 * y * y / width;
    let dds = -60.0 * x * y * (1.0 - 2.0 * x) / (width * width);
    (s, ds, dds)
}

/// Returns what is wrong with a cutoff's parameters `on` and `off`, if anything: each must be
/// finite and non-negative, and `on < off`. Generated models report it as
/// [`StepError::BadParameter`](crate::StepError::BadParameter) naming the culprit.
pub fn violation(on: f64, off: f64) -> Option<(bool, &'static str)> {
    if !(on.is_finite() && on >= 0.0) {
        Some((
            true,
            "a cutoff's `on` distance must be finite and non-negative",
        ))
    } else if !(off.is_finite() && off > on) {
        Some((
            false,
            "a cutoff's `off` distance must be finite and greater than `on`",
        ))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::quintic;

    #[test]
    fn derivatives_match_differences() {
        let (on, off) = (1.5, 4.0);
        for k in 1..40 {
            let r = on + (off - on) * k as f64 / 40.0;
            let h = 1e-5;
            let (s, ds, dds) = quintic(r, on, off);
            let (sp, dsp, _) = quintic(r + h, on, off);
            let (sm, dsm, _) = quintic(r - h, on, off);
            assert!((ds - (sp - sm) / (2.0 * h)).abs() < 1e-8, "S' at {r}");
            assert!((dds - (dsp - dsm) / (2.0 * h)).abs() < 1e-7, "S'' at {r}");
            assert!((0.0..=1.0).contains(&s));
        }
    }
}
