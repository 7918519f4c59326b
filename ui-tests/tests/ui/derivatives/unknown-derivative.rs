use mechanism::mechanism;

mechanism! {
    pub struct Bad {
        coordinates: [x],
        kinetic: 0.5 * dot(x).powi(2),
        potential: 0.5 * x.powi(2),
        derivatives: [hessian],
    }
}

fn main() {}
