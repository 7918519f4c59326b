use mechanism::mechanism;

mechanism! {
    pub struct Bad {
        sizes: { N = 4 },
        coordinates: [x[N]],
        kinetic: sum(0..N, |i| 0.5 * dot(x[i]).powi(2)),
        holonomic: { link[i in 1..N, p = i - 1]: x[i] - x[i - 1] - 1.0 },
    }
}

fn main() {}
