//! A plain fixed-step classical Runge–Kutta 4 for `y' = f(y)`, for computing reference
//! solutions in coordinates other than a model's (angles instead of Cartesian positions) or of
//! ODEs no integrator of the runtime steps (the penalized equations with a hand-written force).
//!
//! It is deliberately independent of the runtime's integrators and model traits, so that a
//! reference computed with it shares no code with the methods it checks.

use nalgebra::SVector;

/// Integrates `y' = f(y)` from `y` over `steps` steps of size `h` with classical RK4 and returns
/// the final value.
///
/// ```
/// use mechanism_runtime::reference::ode::rk4;
/// use mechanism_runtime::SVector;
/// // y' = −y from y(0) = 1: y(1) = e⁻¹, with an error of order h⁴.
/// let y = rk4(|y: &SVector<f64, 1>| -y, SVector::<f64, 1>::new(1.0), 0.01, 100);
/// assert!((y[0] - (-1f64).exp()).abs() < 1e-9);
/// ```
pub fn rk4<const D: usize>(
    f: impl Fn(&SVector<f64, D>) -> SVector<f64, D>,
    mut y: SVector<f64, D>,
    h: f64,
    steps: usize,
) -> SVector<f64, D> {
    for _ in 0..steps {
        let k1 = f(&y);
        let k2 = f(&(y + k1 * (h / 2.0)));
        let k3 = f(&(y + k2 * (h / 2.0)));
        let k4 = f(&(y + k3 * h));
        y += (k1 + k2 * 2.0 + k3 * 2.0 + k4) * (h / 6.0);
    }
    y
}

/// Integrates `y' = f(y)` from `y(t0) = y0` with the adaptive Dormand–Prince 5(4) pair
/// (Hairer–Nørsett–Wanner, *Solving ODEs I*, §II.5, Table 5.2) and returns `y` at each of the
/// increasing `times` (steps are shortened to land on them, so no interpolation error enters).
///
/// The error of a step is the RMS norm of the embedded difference scaled by
/// `atol + rtol max(|y_n|, |y_{n+1}|)`; a step is accepted when it is at most 1, and the next
/// step is `h · min(5, max(0.2, 0.9 err^(−1/5)))`. Fails with a message when the step size
/// underflows or the solution stops being finite.
///
/// ```
/// use mechanism_runtime::reference::ode::dopri5;
/// use mechanism_runtime::SVector;
/// // y' = −y: y(1) = e⁻¹ to about the tolerance.
/// let y = dopri5(|y: &SVector<f64, 1>| -y, SVector::<f64, 1>::new(1.0), 0.0, &[1.0], 1e-12, 1e-12)?;
/// assert!((y[0][0] - (-1f64).exp()).abs() < 1e-11);
/// # Ok::<(), String>(())
/// ```
pub fn dopri5<const D: usize>(
    f: impl Fn(&SVector<f64, D>) -> SVector<f64, D>,
    y0: SVector<f64, D>,
    t0: f64,
    times: &[f64],
    rtol: f64,
    atol: f64,
) -> Result<Vec<SVector<f64, D>>, String> {
    const C: [f64; 7] = [0.0, 0.2, 0.3, 0.8, 8.0 / 9.0, 1.0, 1.0];
    const A: [[f64; 6]; 7] = [
        [0.0; 6],
        [0.2, 0.0, 0.0, 0.0, 0.0, 0.0],
        [3.0 / 40.0, 9.0 / 40.0, 0.0, 0.0, 0.0, 0.0],
        [44.0 / 45.0, -56.0 / 15.0, 32.0 / 9.0, 0.0, 0.0, 0.0],
        [
            19372.0 / 6561.0,
            -25360.0 / 2187.0,
            64448.0 / 6561.0,
            -212.0 / 729.0,
            0.0,
            0.0,
        ],
        [
            9017.0 / 3168.0,
            -355.0 / 33.0,
            46732.0 / 5247.0,
            49.0 / 176.0,
            -5103.0 / 18656.0,
            0.0,
        ],
        [
            35.0 / 384.0,
            0.0,
            500.0 / 1113.0,
            125.0 / 192.0,
            -2187.0 / 6784.0,
            11.0 / 84.0,
        ],
    ];
    // Fifth-order weights (= the last row of A) minus the fourth-order ones.
    const E: [f64; 7] = [
        71.0 / 57600.0,
        0.0,
        -71.0 / 16695.0,
        71.0 / 1920.0,
        -17253.0 / 339200.0,
        22.0 / 525.0,
        -1.0 / 40.0,
    ];
    let _ = C; // the system is autonomous; the nodes document the tableau.
    let mut out = Vec::with_capacity(times.len());
    let (mut t, mut y) = (t0, y0);
    let mut h = 1e-3_f64.min(times.first().map_or(1.0, |&t1| (t1 - t0).abs().max(1e-12)));
    let mut k = [SVector::<f64, D>::zeros(); 7];
    k[0] = f(&y);
    for &target in times {
        while t < target {
            let last = t + h >= target;
            let step = if last { target - t } else { h };
            for i in 1..7 {
                let mut stage = y;
                for (j, kj) in k.iter().enumerate().take(i) {
                    stage += kj * (A[i][j] * step);
                }
                k[i] = f(&stage);
            }
            let mut y_new = y;
            for (j, kj) in k.iter().enumerate().take(6) {
                y_new += kj * (A[6][j] * step);
            }
            let mut sum = 0.0;
            for c in 0..D {
                let e: f64 = (0..7).map(|j| E[j] * k[j][c]).sum::<f64>() * step;
                let scale = atol + rtol * y[c].abs().max(y_new[c].abs());
                sum += (e / scale).powi(2);
            }
            let err = (sum / D.max(1) as f64).sqrt();
            if !err.is_finite() || !y_new.iter().all(|x| x.is_finite()) {
                return Err(format!("DOPRI5: non-finite solution at t = {t}"));
            }
            let factor = (0.9 * err.powf(-0.2)).clamp(0.2, 5.0);
            if err <= 1.0 {
                t = if last { target } else { t + step };
                y = y_new;
                k[0] = k[6]; // first same as last
                h = if last { h.max(step) } else { step * factor };
            } else {
                h = step * factor;
            }
            if h < 1e-14 * t.abs().max(1.0) {
                return Err(format!("DOPRI5: step size underflow at t = {t}"));
            }
        }
        out.push(y);
    }
    Ok(out)
}
