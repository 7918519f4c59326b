use mechanism::mechanism;

mechanism! {
    /// A `floating` joint (a free body) is not modelled; the error names the joint.
    pub struct Drone {
        urdf: { file: "../../../../ui-tests/tests/urdf/floating.urdf", coordinates: joints },
    }
}

fn main() {}
