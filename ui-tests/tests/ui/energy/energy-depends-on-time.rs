use mechanism::mechanism;

mechanism! {
    pub struct Bad {
        coordinates: [x],
        kinetic: 0.5 * dot(x).powi(2),
        potential: x.powi(2) * t.cos(),
    }
}

fn main() {}
