//! Fused multiply-add for generated code, fused only where the target has an FMA instruction.
//!
//! Without hardware FMA, `f64::mul_add` becomes a slow library call that emulates the single
//! rounding; generated code therefore calls [`mul_add`], which compiles to the instruction where
//! `target_feature = "fma"` is enabled (e.g. `-C target-cpu=native` on a recent x86-64) and to a
//! plain `a * b + c` elsewhere. A given build is deterministic either way.

/// Returns `a * b + c`, fused into one rounding where the target has FMA.
#[inline(always)]
pub fn mul_add(a: f64, b: f64, c: f64) -> f64 {
    #[cfg(target_feature = "fma")]
    {
        a.mul_add(b, c)
    }
    #[cfg(not(target_feature = "fma"))]
    {
        a * b + c
    }
}

#[cfg(test)]
mod tests {
    use super::mul_add;

    #[test]
    fn computes_a_times_b_plus_c() {
        assert_eq!(mul_add(2.0, 3.0, 4.0), 10.0);
        // 0.1 * 10 - 1 is 0 with two roundings and 2^-54·5.55… with one.
        let fused = mul_add(0.1, 10.0, -1.0);
        if cfg!(target_feature = "fma") {
            assert_eq!(fused, 0.1f64.mul_add(10.0, -1.0));
        } else {
            assert_eq!(fused, 0.1 * 10.0 - 1.0);
        }
    }
}
