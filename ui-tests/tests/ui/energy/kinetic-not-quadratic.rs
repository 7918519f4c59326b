use mechanism::mechanism;

mechanism! {
    pub struct Bad {
        coordinates: [x],
        kinetic: 0.5 * dot(x).powi(2) + dot(x),
        potential: x.powi(2),
    }
}

fn main() {}
