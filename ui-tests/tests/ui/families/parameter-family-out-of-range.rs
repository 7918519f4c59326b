use mechanism::mechanism;

mechanism! {
    pub struct Bad {
        sizes: { N = 4 },
        coordinates: [x[N]],
        parameters: { k[N] = 1.0 },
        kinetic: sum(0..N, |i| 0.5 * dot(x[i]).powi(2)),
        potential: sum(0..N, |i| 0.5 * k[i + 1] * x[i].powi(2)),
    }
}

fn main() {}
