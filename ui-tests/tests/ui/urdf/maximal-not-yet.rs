use mechanism::mechanism;

mechanism! {
    /// Only the joint-space formulation is available so far.
    pub struct Arm {
        urdf: { file: "../../../../ui-tests/tests/urdf/arm.urdf", coordinates: maximal },
    }
}

fn main() {}
