use mechanism::mechanism;

mechanism! {
    /// The joint's `<limit lower upper>` is not modelled: the error says to add
    /// `ignore: [limits]`, so that the omission is the user's choice.
    pub struct Arm {
        urdf: { file: "../../../../ui-tests/tests/urdf/arm.urdf", coordinates: joints },
    }
}

fn main() {}
