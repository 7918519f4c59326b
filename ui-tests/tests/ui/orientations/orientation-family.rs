use mechanism::mechanism;

mechanism! {
    /// A cluster of rigid bodies: a family of orientations is declared with its size, `r[N]`,
    /// not with a row family's header.
    pub struct Cluster {
        sizes: { N = 3 },
        coordinates: [x[N]],
        orientations: { r[i in 0..N]: matrix },
        kinetic: sum(0..N, |i| 0.5 * dot(x[i]).powi(2)),
        potential: sum(0..N, |i| 0.5 * x[i].powi(2)),
    }
}

fn main() {}
