use mechanism::mechanism;

mechanism! {
    pub struct Bad {
        coordinates: [x],
        parameters: { c = 0.1 },
        kinetic: 0.5 * dot(x).powi(2),
        potential: x.powi(2),
        dissipation: 0.5 * c * x.powi(2),
        integrators: [rk],
    }
}

fn main() {}
