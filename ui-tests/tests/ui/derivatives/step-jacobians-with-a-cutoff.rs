use mechanism::mechanism;

mechanism! {
    /// A pair sum with a cutoff cannot be differentiated in its parameters yet.
    pub struct Cloud {
        sizes: { N = 4 },
        coordinates: [x[N]],
        parameters: { r_on = 1.5, r_off = 2.0 },
        kinetic: sum(0..N, |i| 0.5 * dot(x[i]).powi(2)),
        potential: sum(0..N, |i, j| 1.0 / (1.0 + (x[i] - x[j]).powi(2)),
            cutoff(r = ((x[i] - x[j]).powi(2) + 1.0).sqrt(), on = r_on, off = r_off)),
        integrators: [spook],
        derivatives: [step_jacobians],
    }
}

fn main() {}
