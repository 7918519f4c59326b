use mechanism::mechanism;

mechanism! {
    pub struct Bad {
        coordinates: [r, phi],
        kinetic: 0.5 * (dot(r).powi(2) + r.powi(2) * dot(phi).powi(2)),
        potential: 0.5 * (r - 1.0).powi(2),
        integrators: [zs],
    }
}

fn main() {}
