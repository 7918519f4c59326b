use mechanism::mechanism;

mechanism! {
    /// The default mass is negative.
    pub struct Bad {
        coordinates: [x],
        parameters: { m = -1.0, k = 1.0 },
        kinetic: 0.5 * m * dot(x).powi(2),
        potential: 0.5 * k * x.powi(2),
    }
}

fn main() {}
