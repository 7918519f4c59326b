use mechanism::mechanism;

mechanism! {
    pub struct Bad {
        coordinates: [],
        parameters: { k = 1.0 },
        kinetic: 0.5 * k,
    }
}

fn main() {}
