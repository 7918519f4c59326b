//! Rigid bodies written with the language's orientations (see "Rigid bodies" in the language
//! reference): a unit quaternion `q = (w, x, y, z)`, declared `q: quaternion`, becomes the four
//! coordinates `q_w q_x q_y q_z` and the row `|q|² − 1 = 0`; its body angular velocity is
//!
//! ```text
//! Ω = 2 (w v̇ − ẇ v − v × v̇),   v = (x, y, z)        (q̇ = ½ q ⊗ (0, Ω))
//! ```
//!
//! and `rigid_kinetic(q, i1, i2, i3)` is `½ ΩᵀIΩ` completed by `½ c (q·q̇)²` with
//! `c = 4 (I₁ + I₂ + I₃)/3`. `½ ΩᵀIΩ` alone has the mass matrix `4 Eᵀ I E` (`Ω = 2 E(q) q̇`),
//! singular along `q`, which only the Livens scheme accepts; the completion adds `c q qᵀ`, so
//! `M` is positive definite for every `q ≠ 0` and the stabilized Runge–Kutta methods (RK4,
//! DOPRI5), which need `M⁻¹`, run too. (RATTLE, SHAKE and SPOOK as implemented assume a
//! constant mass matrix, which a quaternion's is not; the macro refuses them for these models
//! and names the matrix form.) The completion changes nothing on the constraint:
//! `q·q̇ = ½ d|q|²/dt = 0` along every constrained motion, and its Euler–Lagrange term
//! `c (d(q·q̇)/dt) q` lies along `∇g = 2q`, where the multiplier absorbs it. This `c` puts its
//! eigenvalue `c|q|²` among those of `4EᵀIE` on the tangent space, `4I₁ … 4I₃`.

use crate::mechanism;

mechanism! {
    /// A torque-free rigid body with principal moments `i1`, `i2`, `i3` (body frame), its
    /// orientation a unit quaternion `q` (world from body); see the module docs for the
    /// kinetic energy and its completion.
    pub struct FreeBody {
        orientations: {
            /// The body's orientation, world from body.
            q: quaternion,
        },
        parameters: {
            /// Principal moment of inertia about the body's first axis.
            i1 = 1.0,
            /// Principal moment of inertia about the body's second axis.
            i2 = 2.0,
            /// Principal moment of inertia about the body's third axis.
            i3 = 3.0,
        },
        kinetic: rigid_kinetic(q, i1, i2, i3),
        integrators: [livens, rk],
    }
}

mechanism! {
    /// A heavy top about a fixed point: a rigid body with principal moments `i1`, `i2`, `i3`
    /// about the fixed point, its centre of mass at distance `l` along the body's third axis,
    /// weight `m g` along the world's −z, orientation a unit quaternion `q` (world from body).
    /// The potential is `m g l (R e₃)·e_z = m g l (w² − x² − y² + z²)`, the homogeneous form
    /// of `R_zz` (equal to it on `|q| = 1`); see the module docs for the kinetic energy.
    pub struct HeavyTop {
        orientations: {
            /// The top's orientation, world from body.
            q: quaternion,
        },
        parameters: {
            /// Moment of inertia about the first body axis through the fixed point.
            i1 = 1.0,
            /// Moment of inertia about the second body axis through the fixed point.
            i2 = 1.0,
            /// Moment of inertia about the symmetry axis.
            i3 = 0.4,
            /// The product `m g l` of weight and distance of the centre of mass.
            mgl = 4.905,
        },
        kinetic: rigid_kinetic(q, i1, i2, i3),
        potential: mgl * rotate_z(q, 0.0, 0.0, 1.0),
        integrators: [livens, rk],
    }
}

mechanism! {
    /// The heavy top of [`HeavyTop`] with its rotation matrix `R` (world from body), declared
    /// `r: matrix`: nine coordinates `r_ij` (row `i`, column `j`) held on SO(3) by the six rows
    /// of `RᵀR = I`, the formulation of RATTLE for rigid bodies (McLachlan & Scovel 1995;
    /// Hairer–Lubich–Wanner, *Geometric Numerical Integration*, §VII.5): with
    /// `J = ½ tr(I) 1 − I`, `rigid_kinetic` is `T = ½ ΩᵀIΩ = ½ tr(Ṙ J Ṙᵀ) = ½ Σ_k J_k |ċ_k|²`
    /// for the columns `c_k` of `R`, a constant diagonal mass matrix, so that RATTLE, SHAKE
    /// and SPOOK step it. `J_k > 0` needs the strict triangle inequality `I_k < I_j + I_l`
    /// (not a flat body); here `J = (0.2, 0.2, 0.8)`. The potential is
    /// `m g l (R e₃)·e_z = m g l r_zz`. With `derivatives: [step_jacobians]`, for the exact
    /// step Jacobians of SPOOK, RATTLE, SHAKE and the stabilized Runge–Kutta methods.
    pub struct HeavyTopMatrix {
        orientations: {
            /// The top's orientation, world from body.
            r: matrix,
        },
        parameters: {
            /// Moment of inertia about the first body axis through the fixed point.
            i1 = 1.0,
            /// Moment of inertia about the second body axis through the fixed point.
            i2 = 1.0,
            /// Moment of inertia about the symmetry axis.
            i3 = 0.4,
            /// The product `m g l` of weight and distance of the centre of mass.
            mgl = 4.905,
        },
        kinetic: rigid_kinetic(r, i1, i2, i3),
        potential: mgl * rotate_z(r, 0.0, 0.0, 1.0),
        integrators: [rattle, shake, spook, livens, rk],
        derivatives: [step_jacobians],
    }
}

/// Returns the state of a body with rotation matrix `r` (world from body, row by row) and body
/// angular velocity `omega`: `Ṙ = R Ω̂`, at time 0, as the nine coordinates of
/// [`HeavyTopMatrix`].
pub fn matrix_state(r: [[f64; 3]; 3], omega: [f64; 3]) -> crate::runtime::State<9> {
    let [a, b, c] = omega;
    let hat = [[0.0, -c, b], [c, 0.0, -a], [-b, a, 0.0]];
    let mut q = [0.0; 9];
    let mut v = [0.0; 9];
    for i in 0..3 {
        for j in 0..3 {
            q[3 * i + j] = r[i][j];
            v[3 * i + j] = (0..3).map(|k| r[i][k] * hat[k][j]).sum();
        }
    }
    crate::runtime::State::new(0.0, q, v)
}

/// Returns the body angular velocity of the rotation matrix `r` moving at `rdot` (both nine
/// values, row by row): `Ω = vee(skew(RᵀṘ))`, the inverse of [`matrix_state`] on SO(3).
pub fn matrix_angular_velocity(r: &[f64], rdot: &[f64]) -> [f64; 3] {
    // (RᵀṘ)_jk = Σ_i R_ij Ṙ_ik.
    let w = |j: usize, k: usize| (0..3).map(|i| r[3 * i + j] * rdot[3 * i + k]).sum::<f64>();
    [
        0.5 * (w(2, 1) - w(1, 2)),
        0.5 * (w(0, 2) - w(2, 0)),
        0.5 * (w(1, 0) - w(0, 1)),
    ]
}

/// Returns the state of a body with orientation `q` (a unit quaternion `(w, x, y, z)`, world
/// from body) and body angular velocity `omega`: `q̇ = ½ q ⊗ (0, Ω)`, at time 0.
pub fn quaternion_state(q: [f64; 4], omega: [f64; 3]) -> crate::runtime::State<4> {
    let [w, x, y, z] = q;
    let [a, b, c] = omega;
    let rate = [
        0.5 * (-x * a - y * b - z * c),
        0.5 * (w * a + y * c - z * b),
        0.5 * (w * b + z * a - x * c),
        0.5 * (w * c + x * b - y * a),
    ];
    crate::runtime::State::new(0.0, q, rate)
}

/// Returns the body angular velocity `Ω = 2 (w v̇ − ẇ v − v × v̇)` of the quaternion `q` moving
/// at `q̇` (the inverse of [`quaternion_state`] on `|q| = 1`).
pub fn body_angular_velocity(q: &[f64], qdot: &[f64]) -> [f64; 3] {
    let (w, x, y, z) = (q[0], q[1], q[2], q[3]);
    let (dw, dx, dy, dz) = (qdot[0], qdot[1], qdot[2], qdot[3]);
    [
        2.0 * (w * dx - x * dw + z * dy - y * dz),
        2.0 * (w * dy - y * dw + x * dz - z * dx),
        2.0 * (w * dz - z * dw + y * dx - x * dy),
    ]
}

/// Returns the rotation matrix (world from body) of the unit quaternion `q = (w, x, y, z)`,
/// row by row.
pub fn rotation_matrix(q: &[f64]) -> [[f64; 3]; 3] {
    let (w, x, y, z) = (q[0], q[1], q[2], q[3]);
    [
        [
            w * w + x * x - y * y - z * z,
            2.0 * (x * y - w * z),
            2.0 * (x * z + w * y),
        ],
        [
            2.0 * (x * y + w * z),
            w * w - x * x + y * y - z * z,
            2.0 * (y * z - w * x),
        ],
        [
            2.0 * (x * z - w * y),
            2.0 * (y * z + w * x),
            w * w - x * x - y * y + z * z,
        ],
    ]
}

impl FreeBody {
    /// Returns the start of issue 14's torque-free check: the identity orientation spinning at
    /// `Ω = (1, 0, 1)` (body frame).
    pub fn initial_state() -> crate::runtime::State<4> {
        quaternion_state([1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 1.0])
    }
}

impl HeavyTopMatrix {
    /// Returns [`HeavyTop::initial_state`] as a rotation matrix: tilted by 0.3 rad about the
    /// world's x axis, spinning at `Ω = (0, 0, 20)`.
    pub fn initial_state() -> crate::runtime::State<9> {
        let (s, c) = 0.3f64.sin_cos();
        matrix_state(
            [[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]],
            [0.0, 0.0, 20.0],
        )
    }
}

impl HeavyTop {
    /// Returns the start of issue 14's heavy top: tilted by 0.3 rad about the world's x axis,
    /// spinning at `Ω = (0, 0, 20)` about its symmetry axis.
    pub fn initial_state() -> crate::runtime::State<4> {
        let half = 0.15f64;
        quaternion_state([half.cos(), half.sin(), 0.0, 0.0], [0.0, 0.0, 20.0])
    }
}
