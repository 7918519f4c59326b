use mechanism::mechanism;

mechanism! {
    /// A cluster of rigid bodies: one orientation per member is not supported yet.
    pub struct Cluster {
        sizes: { N = 3 },
        coordinates: [x[N]],
        orientations: { r[N]: matrix },
        kinetic: sum(0..N, |i| 0.5 * dot(x[i]).powi(2)),
        potential: sum(0..N, |i| 0.5 * x[i].powi(2)),
    }
}

fn main() {}
