use mechanism::mechanism;

mechanism! {
    pub struct Bad {
        parameters: { k = 1.0 },
        kinetic: 0.5 * k,
    }
}

fn main() {}
