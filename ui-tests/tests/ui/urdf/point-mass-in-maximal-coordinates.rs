use mechanism::mechanism;

mechanism! {
    /// A point mass has no rotational inertia, so its rotation matrix has no mass matrix in
    /// maximal coordinates (the default); the error points at `coordinates: joints`.
    pub struct Pendulum {
        urdf: "../../../../ui-tests/tests/urdf/pendulum.urdf",
    }
}

fn main() {}
