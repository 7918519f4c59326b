use mechanism::mechanism;

mechanism! {
    pub struct Bad {
        sizes: { N = 3 },
        coordinates: [x[N]],
        kinetic: sum(0..N, |i| 0.5 * dot(x[i]).powi(2)),
        dissipation: sum(0..N, |i| 0.5 * dot(x[i]).powi(2)),
    }
}

fn main() {}
