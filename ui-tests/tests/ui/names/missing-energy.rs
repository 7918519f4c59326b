use mechanism::mechanism;

mechanism! {
    pub struct Bad {
        coordinates: [x],
        parameters: { k = 1.0 },
    }
}

fn main() {}
