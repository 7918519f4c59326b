use crate::mechanism;
use crate::runtime::State;

mechanism! {
    /// Andrews' squeezing mechanism: seven rigid bodies in the plane, joined without friction,
    /// driven by a constant torque and loaded by a spring (Schiehlen 1990; Hairer–Wanner,
    /// *Solving ODEs II* §VII.7, eq. 7.4–7.11; the seven-body Example 3 of Ascher–Chin–
    /// Petzold–Reich 1995 §6, Table 6.4). The data are Hairer–Wanner's, as in the IVP test set
    /// of Mazzia and Magherini (`andrews.f`).
    ///
    /// The kinetic energy is `½ q̇ᵀ M(q) q̇` with Hairer–Wanner's mass matrix (eq. 7.7): blocks
    /// `(β, θ)`, `γ`, `(φ, δ)` and `(Ω, ε)`, depending on `θ`, `φ` and `Ω`. Its velocity terms
    /// `∂T/∂q − Ṁ q̇` are exactly the quadratic velocity terms of their `f` (checked in
    /// `tests/it/squeezer.rs`). The spring of stiffness `c0` and rest length `l0` between the
    /// fixed point `C = (xc, yc)` and the point `D = (xb + sd cos γ + sc sin γ,
    /// yb + sd sin γ − sc cos γ)` of body 3 is the potential `½ c0 (|D − C| − l0)²`, whose
    /// `−∂V/∂γ` is their spring term; the driving torque `mom` acts on `β` through `forces`.
    /// No gravity. The six rows close the three kinematic loops at the fixed points `B` (via
    /// body 3) and `A` (via bodies 4–5 and via bodies 6–7).
    pub struct Squeezer {
        coordinates: [beta, theta, gamma, phi, delta, omega, epsilon],
        parameters: {
            /// Mass of body 1 [kg].
            m1 = 0.04325,
            /// Mass of body 2 [kg].
            m2 = 0.00365,
            /// Mass of body 3 [kg].
            m3 = 0.02373,
            /// Mass of body 4 [kg].
            m4 = 0.00706,
            /// Mass of body 5 [kg].
            m5 = 0.07050,
            /// Mass of body 6 [kg].
            m6 = 0.00706,
            /// Mass of body 7 [kg].
            m7 = 0.05498,
            /// Moment of inertia of body 1 [kg m²].
            i1 = 2.194e-6,
            /// Moment of inertia of body 2 [kg m²].
            i2 = 4.410e-7,
            /// Moment of inertia of body 3 [kg m²].
            i3 = 5.255e-6,
            /// Moment of inertia of body 4 [kg m²].
            i4 = 5.667e-7,
            /// Moment of inertia of body 5 [kg m²].
            i5 = 1.169e-5,
            /// Moment of inertia of body 6 [kg m²].
            i6 = 5.667e-7,
            /// Moment of inertia of body 7 [kg m²].
            i7 = 1.912e-5,
            /// Fixed point A, x [m].
            xa = -0.06934,
            /// Fixed point A, y [m].
            ya = -0.00227,
            /// Fixed point B, x [m].
            xb = -0.03635,
            /// Fixed point B, y [m].
            yb = 0.03273,
            /// Spring anchor C, x [m].
            xc = 0.014,
            /// Spring anchor C, y [m].
            yc = 0.072,
            /// Geometry (Hairer–Wanner Fig. 7.1) [m].
            d = 28e-3,
            /// Geometry [m].
            da = 115e-4,
            /// Geometry [m].
            e = 2e-2,
            /// Geometry [m].
            ea = 1421e-5,
            /// Geometry [m].
            rr = 7e-3,
            /// Geometry [m].
            ra = 92e-5,
            /// Geometry [m].
            ss = 35e-3,
            /// Geometry [m].
            sa = 1874e-5,
            /// Geometry [m].
            sb = 1043e-5,
            /// Geometry [m].
            sc = 18e-3,
            /// Geometry [m].
            sd = 2e-2,
            /// Geometry [m].
            ta = 2308e-5,
            /// Geometry [m].
            tb = 916e-5,
            /// Geometry [m].
            u = 4e-2,
            /// Geometry [m].
            ua = 1228e-5,
            /// Geometry [m].
            ub = 449e-5,
            /// Geometry [m].
            zf = 2e-2,
            /// Geometry [m].
            zt = 4e-2,
            /// Geometry [m].
            fa = 1421e-5,
            /// Driving torque on β [N m].
            mom = 0.033,
            /// Spring stiffness [N/m].
            c0 = 4530.0,
            /// Spring rest length [m].
            l0 = 0.07785,
        },
        kinetic: 0.5 * (
            (m1 * ra.powi(2) + m2 * (rr.powi(2) - 2.0 * da * rr * theta.cos() + da.powi(2))
                + i1 + i2) * dot(beta).powi(2)
            + 2.0 * (m2 * (da.powi(2) - da * rr * theta.cos()) + i2) * dot(beta) * dot(theta)
            + (m2 * da.powi(2) + i2) * dot(theta).powi(2)
            + (m3 * (sa.powi(2) + sb.powi(2)) + i3) * dot(gamma).powi(2)
            + (m4 * (e - ea).powi(2) + i4) * dot(phi).powi(2)
            + 2.0 * (m4 * ((e - ea).powi(2) + zt * (e - ea) * phi.sin()) + i4)
                * dot(phi) * dot(delta)
            + (m4 * (zt.powi(2) + 2.0 * zt * (e - ea) * phi.sin() + (e - ea).powi(2))
                + m5 * (ta.powi(2) + tb.powi(2)) + i4 + i5) * dot(delta).powi(2)
            + (m6 * (zf - fa).powi(2) + i6) * dot(omega).powi(2)
            + 2.0 * (m6 * ((zf - fa).powi(2) - u * (zf - fa) * omega.sin()) + i6)
                * dot(omega) * dot(epsilon)
            + (m6 * ((zf - fa).powi(2) - 2.0 * u * (zf - fa) * omega.sin() + u.powi(2))
                + m7 * (ua.powi(2) + ub.powi(2)) + i6 + i7) * dot(epsilon).powi(2)
        ),
        potential: 0.5 * c0 * (sqrt(
            (xb + sd * gamma.cos() + sc * gamma.sin() - xc).powi(2)
                + (yb + sd * gamma.sin() - sc * gamma.cos() - yc).powi(2)
        ) - l0).powi(2),
        holonomic: {
            /// Loop closed at B via body 3, x.
            b_x: rr * beta.cos() - d * (beta + theta).cos() - ss * gamma.sin() - xb,
            /// Loop closed at B via body 3, y.
            b_y: rr * beta.sin() - d * (beta + theta).sin() + ss * gamma.cos() - yb,
            /// Loop closed at A via bodies 4 and 5, x.
            a45_x: rr * beta.cos() - d * (beta + theta).cos() - e * (phi + delta).sin()
                - zt * delta.cos() - xa,
            /// Loop closed at A via bodies 4 and 5, y.
            a45_y: rr * beta.sin() - d * (beta + theta).sin() + e * (phi + delta).cos()
                - zt * delta.sin() - ya,
            /// Loop closed at A via bodies 6 and 7, x.
            a67_x: rr * beta.cos() - d * (beta + theta).cos() - zf * (omega + epsilon).cos()
                - u * epsilon.sin() - xa,
            /// Loop closed at A via bodies 6 and 7, y.
            a67_y: rr * beta.sin() - d * (beta + theta).sin() - zf * (omega + epsilon).sin()
                + u * epsilon.cos() - ya,
        },
        forces: { beta: mom },
        integrators: [rk],
    }
}

impl Squeezer {
    /// The consistent initial positions of Hairer–Wanner (eq. 7.11; `andrews.f` of the IVP
    /// test set), at rest, in the order of the coordinates. Their 30 digits are rounded to
    /// the nearest `f64`.
    #[allow(clippy::excessive_precision)]
    pub const INITIAL_POSITIONS: [f64; 7] = [
        -0.0617138900142764496358948458001,
        0.0,
        0.455279819163070380255912382449,
        0.222668390165885884674473185609,
        0.487364979543842550225598953530,
        -0.222668390165885884674473185609,
        1.23054744454982119249735015568,
    ];

    /// The positions at `t = 0.03` of the IVP test set's reference solution (`andrews.f`,
    /// computed by PSIDE with relative and absolute tolerance 1e-14), 16 digits.
    #[allow(clippy::excessive_precision)]
    pub const REFERENCE_POSITIONS_AT_0_03: [f64; 7] = [
        0.1581077119629904e2,
        -0.1575637105984298e2,
        0.4082224013073101e-1,
        -0.5347301163226948,
        0.5244099658805304,
        0.5347301163226948,
        0.1048080741042263e1,
    ];

    /// The velocities at `t = 0.03` of the same reference solution.
    #[allow(clippy::excessive_precision)]
    pub const REFERENCE_VELOCITIES_AT_0_03: [f64; 7] = [
        0.1139920302151208e4,
        -0.1424379294994111e4,
        0.1103291221937134e2,
        0.1929337464421385e2,
        0.5735699284790808,
        -0.1929337464421385e2,
        0.3231791658026955,
    ];

    /// Returns the consistent initial state at `t = 0`: [`Self::INITIAL_POSITIONS`] at rest.
    pub fn initial_state() -> State<7> {
        State::new(0.0, Self::INITIAL_POSITIONS, [0.0; 7])
    }
}
