use mechanism::mechanism;

mechanism! {
    /// Nothing has inertia.
    pub struct Bad {
        coordinates: [x],
        kinetic: 0.0,
        potential: 0.5 * x.powi(2),
        integrators: [livens],
    }
}

fn main() {}
