use mechanism::mechanism;

mechanism! {
    /// The kinds are `quaternion` and `matrix`.
    pub struct Body {
        orientations: { q: euler_angles },
        kinetic: rigid_kinetic(q, 1.0, 2.0, 3.0),
    }
}

fn main() {}
