mechanism::mechanism! {
    /// Every function of the language, a dense constant mass matrix, and constraints with
    /// nonconstant Hessians, compiled for the integrators that need third derivatives and the
    /// penalty.
    pub struct Exotic {
        coordinates: [x, y, z],
        parameters: { k = 1.3, c = 0.7, r = 2.0 },
        kinetic: 0.5 * dot(x).powi(2) + 0.5 * r * dot(y).powi(2)
            + 0.5 * dot(z).powi(2) + 0.1 * c * dot(y) * dot(z),
        potential: k * (x * y).sin() + c * sqrt(1.0 + z.powi(2)) + (y / (1.0 + x.powi(2))).exp()
            + ln(2.0 + z.cos()) + (1.0 + x.powi(2)).powf(c) + 0.1 * (x - y).tan() - 3.0 / (2.0 + y.powi(2))
            + k * (x * y).atan2(1.5 + z) + (c * z).tanh() + 0.1 * x.sinh() * y.cosh()
            + (0.5 * y).asin() + 0.3 * acos(0.5 * x) + z.atan() + (2.0 + y).log(1.0 + r),
        holonomic: {
            cubic: x.powi(3) - y * z + r,
            wave: (x * z).cos() + y.powi(2) - 1.0 + 0.1 * atan2(y, 2.0 + x),
        },
        integrators: [zs, zss, spook],
    }
}

mechanism::mechanism! {
    /// A configuration-dependent mass matrix with time-dependent constraints, dissipation and
    /// forces, compiled for index reduction (whose runtime integrators have no nonholonomic
    /// rows: those are in `Skating`).
    pub struct Driven {
        coordinates: [x, y, z],
        parameters: { k = 1.3, c = 0.7, w = 2.0 },
        kinetic: 0.5 * (1.0 + x.powi(2)) * dot(x).powi(2) + 0.5 * w * dot(y).powi(2)
            + 0.5 * (2.0 + (y * z).sin()) * dot(z).powi(2) + 0.1 * x * y * dot(y) * dot(z),
        potential: k * (x * y).sin() + c * sqrt(1.0 + z.powi(2)),
        holonomic: {
            path: x.powi(3) - y * z + (w * t).sin() * z - 0.1 * t.powi(2) * (x * z).cos(),
        },
        dissipation: 0.5 * c * (dot(x).powi(2) + x.powi(2) * dot(y).powi(2)) + 0.1 * dot(z).powi(4),
        forces: { x: k * t.sin() * dot(y), z: -c * x * dot(z) },
        integrators: [rk],
    }
}

mechanism::mechanism! {
    /// A configuration-dependent mass matrix and constraints for the Livens/Gonzalez scheme.
    pub struct Curved {
        coordinates: [r, theta, phi],
        parameters: { m = 1.0, ea = 300.0, l0 = 1.0 },
        kinetic: 0.5 * m * (dot(r).powi(2) + r.powi(2) * dot(theta).powi(2)
            + r.powi(2) * theta.sin().powi(2) * dot(phi).powi(2)),
        potential: 0.5 * ea / l0 * (r - l0).powi(2) - m * 9.81 * r * theta.cos(),
        holonomic: { cone: theta - 0.3 * phi.sin() * r },
        integrators: [livens],
    }
}

mechanism::mechanism! {
    /// A driven nonholonomic row with configuration-dependent coefficients, for the integrators
    /// that treat nonholonomic rows (constant mass).
    pub struct Skating {
        coordinates: [x, y, z],
        parameters: { k = 1.3, w = 2.0, c = 0.1 },
        kinetic: 0.5 * (dot(x).powi(2) + dot(y).powi(2) + 2.0 * dot(z).powi(2)),
        potential: k * (x * y).sin(),
        nonholonomic: {
            skate: dot(x) * z.sin() - dot(y) * z.cos() + x * dot(z) - (w * t).cos(),
        },
        dissipation: c * dot(z).powi(2),
        integrators: [dlda, spook],
    }
}
