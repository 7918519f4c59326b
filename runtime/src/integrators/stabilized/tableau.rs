//! Explicit Runge–Kutta methods as data: Butcher tableaus, each with its citation.

use crate::error::StepError;

/// The Butcher tableau of an explicit `S`-stage Runge–Kutta method for `z' = f(t, z)`:
///
/// ```text
/// Z_i     = z_n + h Σ_{j<i} a_ij K_j,    K_i = f(t_n + c_i h, Z_i),    i = 1 … S
/// z_{n+1} = z_n + h Σ_i b_i K_i
/// ```
///
/// This is the map `φ_h^f` of Ascher et al. (1995) eq. 5.1 that the stabilized integrators
/// apply to the index-1 ODE (1.6). The fields are public so that any explicit method can be
/// supplied; the integrators check it with [`Tableau::check`] before use.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tableau<const S: usize> {
    /// A short name, for reports.
    pub name: &'static str,
    /// The classical order `p` of the method.
    pub order: u32,
    /// The coefficients `a_ij`, zero on and above the diagonal (explicit method).
    pub a: [[f64; S]; S],
    /// The weights `b_i`.
    pub b: [f64; S],
    /// The nodes `c_i = Σ_j a_ij`.
    pub c: [f64; S],
}

/// An embedded pair: a [`Tableau`] that propagates the solution plus a second set of weights
/// `b̂` of lower order whose difference estimates the local error,
///
/// ```text
/// err_{n+1} = h Σ_i (b_i − b̂_i) K_i
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EmbeddedTableau<const S: usize> {
    /// The propagating method (local extrapolation: the higher-order solution is kept).
    pub method: Tableau<S>,
    /// The weights `b̂_i` of the embedded error estimator.
    pub b_hat: [f64; S],
    /// The order `p̂` of the embedded method.
    pub embedded_order: u32,
}

/// The explicit midpoint rule (Runge 1895), order 2: `K_2 = f(t + h/2, z + h/2 K_1)`,
/// `z_{n+1} = z_n + h K_2`.
///
/// Ascher et al. (1995) §6 run Tables 6.1 and 6.2 with "an explicit Runge–Kutta scheme of order
/// 2" without naming it; of the two textbook candidates it is [`HEUN`] that reproduces them.
pub const MIDPOINT: Tableau<2> = Tableau {
    name: "explicit midpoint",
    order: 2,
    a: [[0.0, 0.0], [0.5, 0.0]],
    b: [0.0, 1.0],
    c: [0.0, 0.5],
};

/// Heun's method (the explicit trapezoidal rule), order 2: `K_2 = f(t + h, z + h K_1)`,
/// `z_{n+1} = z_n + h/2 (K_1 + K_2)`.
///
/// This is the "explicit Runge–Kutta scheme of order 2" of Ascher et al. (1995) Tables 6.1–6.2,
/// which the paper does not name: with it every drift of both tables is reproduced to about two
/// digits (S-both² to a factor 2), while the explicit midpoint rule misses several entries by
/// orders of magnitude (`runtime/tests/it/stabilized/`).
pub const HEUN: Tableau<2> = Tableau {
    name: "Heun",
    order: 2,
    a: [[0.0, 0.0], [1.0, 0.0]],
    b: [0.5, 0.5],
    c: [0.0, 1.0],
};

/// The classical fourth-order Runge–Kutta method (Kutta 1901; Hairer–Nørsett–Wanner I,
/// Table II.1.2).
pub const RK4: Tableau<4> = Tableau {
    name: "classical RK4",
    order: 4,
    a: [
        [0.0, 0.0, 0.0, 0.0],
        [0.5, 0.0, 0.0, 0.0],
        [0.0, 0.5, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
    ],
    b: [1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0],
    c: [0.0, 0.5, 0.5, 1.0],
};

/// The Dormand–Prince 5(4) pair (J. R. Dormand and P. J. Prince, *A family of embedded
/// Runge–Kutta formulae*, J. Comp. Appl. Math. 6 (1980); Hairer–Nørsett–Wanner I, Table
/// II.5.2), the formulae of the code DOPRI5 that Ascher et al. (1995) §6 build their automatic
/// integrator on. Seven stages, first same as last: `a_7j = b_j`, so `K_7` is `f` at the new
/// point; order 5 propagates, order 4 estimates the error.
pub const DOPRI5: EmbeddedTableau<7> = EmbeddedTableau {
    method: Tableau {
        name: "Dormand–Prince 5(4)",
        order: 5,
        a: [
            [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            [1.0 / 5.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            [3.0 / 40.0, 9.0 / 40.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            [44.0 / 45.0, -56.0 / 15.0, 32.0 / 9.0, 0.0, 0.0, 0.0, 0.0],
            [
                19372.0 / 6561.0,
                -25360.0 / 2187.0,
                64448.0 / 6561.0,
                -212.0 / 729.0,
                0.0,
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
                0.0,
            ],
            [
                35.0 / 384.0,
                0.0,
                500.0 / 1113.0,
                125.0 / 192.0,
                -2187.0 / 6784.0,
                11.0 / 84.0,
                0.0,
            ],
        ],
        b: [
            35.0 / 384.0,
            0.0,
            500.0 / 1113.0,
            125.0 / 192.0,
            -2187.0 / 6784.0,
            11.0 / 84.0,
            0.0,
        ],
        c: [0.0, 1.0 / 5.0, 3.0 / 10.0, 4.0 / 5.0, 8.0 / 9.0, 1.0, 1.0],
    },
    b_hat: [
        5179.0 / 57600.0,
        0.0,
        7571.0 / 16695.0,
        393.0 / 640.0,
        -92097.0 / 339200.0,
        187.0 / 2100.0,
        1.0 / 40.0,
    ],
    embedded_order: 4,
};

/// Returns `BadParameter` naming `name` with `value` and `requirement`.
fn bad(name: &'static str, value: f64, requirement: &'static str) -> StepError {
    StepError::BadParameter {
        name,
        value,
        requirement,
    }
}

impl<const S: usize> Tableau<S> {
    /// Checks that the tableau describes a consistent explicit method: at least one stage,
    /// finite coefficients, `a_ij = 0` for `j ≥ i`, `c_i = Σ_j a_ij` and `Σ_i b_i = 1` (to
    /// `1e-14`); fails with `BadParameter` naming the first violation.
    pub fn check(&self) -> Result<(), StepError> {
        if S == 0 {
            return Err(bad("stages", 0.0, "a Runge–Kutta method needs a stage"));
        }
        for (i, row) in self.a.iter().enumerate() {
            for (j, &a) in row.iter().enumerate() {
                if !a.is_finite() {
                    return Err(bad("a_ij", a, "must be finite"));
                }
                if j >= i && a != 0.0 {
                    return Err(bad("a_ij", a, "must vanish for j ≥ i (explicit method)"));
                }
            }
            let sum: f64 = row.iter().sum();
            if !self.c[i].is_finite() || (sum - self.c[i]).abs() > 1e-14 * (1.0 + sum.abs()) {
                return Err(bad("c_i", self.c[i], "must equal the row sum Σ_j a_ij"));
            }
        }
        if let Some(&b) = self.b.iter().find(|b| !b.is_finite()) {
            return Err(bad("b_i", b, "must be finite"));
        }
        let sum: f64 = self.b.iter().sum();
        if (sum - 1.0).abs() > 1e-14 {
            return Err(bad("Σ b_i", sum, "must equal 1 (consistency)"));
        }
        Ok(())
    }
}

impl<const S: usize> EmbeddedTableau<S> {
    /// Checks the propagating method as [`Tableau::check`] does, and that `b̂` is finite with
    /// `Σ_i b̂_i = 1`; fails with `BadParameter`.
    pub fn check(&self) -> Result<(), StepError> {
        self.method.check()?;
        if let Some(&b) = self.b_hat.iter().find(|b| !b.is_finite()) {
            return Err(bad("b̂_i", b, "must be finite"));
        }
        let sum: f64 = self.b_hat.iter().sum();
        if (sum - 1.0).abs() > 1e-14 {
            return Err(bad("Σ b̂_i", sum, "must equal 1 (consistency)"));
        }
        Ok(())
    }
}
