use mechanism::mechanism;

mechanism! {
    pub struct Bad {
        sizes: { N = 4 },
        coordinates: [x[N]],
        parameters: { r_on = 1.0, r_off = 2.0 },
        kinetic: sum(0..N, |i| 0.5 * dot(x[i]).powi(2)),
        potential: sum(0..N, |i| x[i].powi(2), cutoff(r = x[i].powi(2), on = r_on, off = r_off)),
    }
}

fn main() {}
