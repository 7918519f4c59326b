use mechanism::mechanism;

mechanism! {
    /// `omega_x` takes an orientation, not a plain coordinate.
    pub struct Spinner {
        coordinates: [theta],
        kinetic: 0.5 * omega_x(theta).powi(2),
    }
}

fn main() {}
