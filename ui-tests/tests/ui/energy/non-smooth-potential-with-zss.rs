use mechanism::mechanism;

mechanism! {
    /// A V-shaped well: |x| has no second derivative at 0.
    pub struct Bad {
        coordinates: [x],
        parameters: { k = 1.0 },
        kinetic: 0.5 * dot(x).powi(2),
        potential: k * x.abs(),
        integrators: [zss],
    }
}

fn main() {}
