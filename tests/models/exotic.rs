mechanism::mechanism! {
    /// A model that exercises every function of the language, a configuration-dependent mass
    /// matrix, and constraints with nonconstant Hessians.
    pub struct Exotic {
        coordinates: [x, y, z],
        parameters: { k = 1.3, c = 0.7, r = 2.0 },
        kinetic: 0.5 * (1.0 + x.powi(2)) * dot(x).powi(2) + 0.5 * r * dot(y).powi(2)
            + 0.5 * dot(z).powi(2) + 0.1 * x * y * dot(y) * dot(z),
        potential: k * (x * y).sin() + c * sqrt(1.0 + z.powi(2)) + (y / (1.0 + x.powi(2))).exp()
            + ln(2.0 + z.cos()) + (1.0 + x.powi(2)).powf(c) + 0.1 * (x - y).tan() - 3.0 / (2.0 + y.powi(2)),
        holonomic: {
            cubic: x.powi(3) - y * z + r,
            wave: (x * z).cos() + y.powi(2) - 1.0,
        },
    }
}
