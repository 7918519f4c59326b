use mechanism::mechanism;

mechanism! {
    pub struct Bad {
        coordinates: [type],
        kinetic: 0.5 * dot(type).powi(2),
        potential: 0.5 * type.powi(2),
    }
}

fn main() {}
