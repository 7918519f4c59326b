use mechanism::mechanism;

mechanism! {
    /// The path is relative to the crate's manifest directory.
    pub struct Robot {
        urdf: { file: "robots/no_such_robot.urdf", coordinates: joints },
    }
}

fn main() {}
