use mechanism::mechanism;

mechanism! {
    pub struct Bad {
        coordinates: [x],
        parameters: { k = 1.0 / 0.0 },
        kinetic: 0.5 * dot(x).powi(2),
        potential: 0.5 * k * x.powi(2),
    }
}

fn main() {}
