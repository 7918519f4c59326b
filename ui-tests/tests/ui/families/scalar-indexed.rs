use mechanism::mechanism;

mechanism! {
    pub struct Bad {
        sizes: { N = 4 },
        coordinates: [phi, x[N]],
        kinetic: 0.5 * dot(phi).powi(2) + sum(0..N, |i| 0.5 * dot(x[i]).powi(2)),
        potential: sum(0..N, |i| phi[i] * x[i]),
    }
}

fn main() {}
