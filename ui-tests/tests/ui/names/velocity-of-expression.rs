use mechanism::mechanism;

mechanism! {
    pub struct Bad {
        coordinates: [x, y],
        kinetic: 0.5 * dot(x + y).powi(2),
        potential: y,
    }
}

fn main() {}
