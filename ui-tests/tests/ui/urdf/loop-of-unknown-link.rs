use mechanism::mechanism;

mechanism! {
    /// A loop row names a link the robot does not have; the error lists its links.
    pub struct Arm {
        urdf: {
            file: "../../../../ui-tests/tests/urdf/arm.urdf",
            coordinates: joints,
            ignore: [limits],
        },
        holonomic: {
            #[components(x, y)]
            closure: position(forearm, [1.0, 0.0, 0.0]) - [0.5, 0.5, 0.0],
        },
        integrators: [rk],
    }
}

fn main() {}
