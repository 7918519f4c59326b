use mechanism::mechanism;

mechanism! {
    pub struct Bad {
        coordinates: [x],
        kinetic: dot(x).powi(4),
        potential: x.powi(2),
    }
}

fn main() {}
