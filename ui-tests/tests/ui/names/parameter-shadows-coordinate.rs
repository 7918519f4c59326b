use mechanism::mechanism;

mechanism! {
    pub struct Bad {
        coordinates: [x],
        parameters: { x = 1.0 },
        kinetic: 0.5 * dot(x).powi(2),
        potential: x.powi(2),
    }
}

fn main() {}
