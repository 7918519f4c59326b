use mechanism::mechanism;

mechanism! {
    /// RATTLE assumes a constant mass matrix; a quaternion's depends on it.
    pub struct Top {
        orientations: { q: quaternion },
        parameters: { mgl = 1.0 },
        kinetic: rigid_kinetic(q, 1.0, 1.0, 0.4),
        potential: mgl * rotate_z(q, 0.0, 0.0, 1.0),
        integrators: [rattle],
    }
}

fn main() {}
