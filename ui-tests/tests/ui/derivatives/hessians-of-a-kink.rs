use mechanism::mechanism;

mechanism! {
    pub struct Bad {
        coordinates: [x],
        kinetic: 0.5 * dot(x).powi(2),
        potential: x.abs(),
        integrators: [spook],
        derivatives: [hessians],
    }
}

fn main() {}
