use mechanism::mechanism;

mechanism! {
    /// The finger mimics `thumb_joint`, which the file does not define.
    pub struct Gripper {
        urdf: { file: "../../../../ui-tests/tests/urdf/gripper.urdf", coordinates: joints },
    }
}

fn main() {}
