use mechanism::mechanism;

mechanism! {
    /// A planar "unit quaternion": no radial inertia (singular) and a mass matrix that depends
    /// on the configuration, which SPOOK cannot step; the hint names only `livens`.
    pub struct Bad {
        coordinates: [x, y],
        kinetic: 0.5 * (x * dot(y) - y * dot(x)).powi(2),
        potential: 1.0 - x,
        holonomic: { unit: x.powi(2) + y.powi(2) - 1.0 },
        integrators: [spook],
    }
}

fn main() {}
