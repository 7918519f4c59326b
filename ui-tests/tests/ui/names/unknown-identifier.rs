use mechanism::mechanism;

mechanism! {
    /// A spring whose stiffness was never declared.
    pub struct Spring {
        coordinates: [x],
        parameters: { m = 1.0 },
        kinetic: 0.5 * m * dot(x).powi(2),
        potential: 0.5 * k * x.powi(2),
    }
}

fn main() {}
