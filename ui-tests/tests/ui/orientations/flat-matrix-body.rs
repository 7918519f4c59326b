use mechanism::mechanism;

mechanism! {
    /// A rotation matrix's kinetic energy needs each moment below the sum of the other two.
    pub struct Lamina {
        orientations: { r: matrix },
        parameters: { mgl = 1.0 },
        kinetic: rigid_kinetic(r, 1.0, 2.0, 3.0),
        potential: mgl * rotate_z(r, 0.0, 0.0, 1.0),
        integrators: [rattle],
    }
}

fn main() {}
