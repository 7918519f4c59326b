use mechanism::mechanism;

mechanism! {
    pub struct Spring {
        coordinates: [x],
        parameters: { m = 1.0, k = 2.0 },
        kinetic: 0.5 * m * dot(x).powi(2) + dot(k),
        potential: 0.5 * k * x.powi(2),
    }
}

fn main() {}
