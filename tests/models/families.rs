// The chain and the ladder written with families, shared through `include!` by
// `tests/families.rs` (against the hand-written references), `benches/families.rs` (per-step
// cost against them) and, through `include_str!`, by the `mechanism-dsl` crate's expansion test
// and `chains` example (the expansion at other default sizes).

mechanism::mechanism! {
    /// Tao–Owhadi's chain of `N` pendula, written with families.
    pub struct Chain {
        sizes: { N = 10 },
        coordinates: [x[N], y[N]],
        parameters: { m = 1.0, l = 2.23606797749979, g = 1.0 },
        kinetic: sum(0..N, |i| 0.5 * m * (dot(x[i]).powi(2) + dot(y[i]).powi(2))),
        potential: sum(0..N, |i| m * g * y[i]),
        holonomic: {
            /// The first rod, from the origin.
            anchor: x[0].powi(2) + y[0].powi(2) - l.powi(2),
            /// Rod `i`, from bob `i - 1` to bob `i`.
            rod[i in 1..N]: (x[i] - x[i - 1]).powi(2) + (y[i] - y[i - 1]).powi(2) - l.powi(2),
        },
        integrators: [spook, rattle, shake],
    }
}

mechanism::mechanism! {
    /// Lacoursière's ladder of `L` links (§6): `R = 3L + 1` rods, each a centre `(x, y)` and a
    /// unit direction `(ux, uy)`, pinned at the origin by rods 0 and 1.
    pub struct Ladder {
        sizes: { L = 20, R = 3 * L + 1 },
        coordinates: [x[R], y[R], ux[R], uy[R]],
        parameters: { m = 10.0, l = 1.0, j = 0.8333333333333334, g = 9.81 },
        kinetic: sum(0..R, |r| 0.5 * m * (dot(x[r]).powi(2) + dot(y[r]).powi(2))
            + 0.5 * j * (dot(ux[r]).powi(2) + dot(uy[r]).powi(2))),
        potential: sum(0..R, |r| m * g * y[r]),
        holonomic: {
            /// Each direction has unit length.
            unit[r in 0..R]: 0.5 * (ux[r].powi(2) + uy[r].powi(2) - 1.0),
            /// Rods 0 and 1 hang by their tails from the origin.
            anchor[r in 0..2]: [x[r] - 0.5 * l * ux[r], y[r] - 0.5 * l * uy[r]],
            /// Rod `r`'s tail hangs from the head of rod `p`.
            tail[r in 2..R, p = if (r + 1) % 3 == 2 { r - 3 } else { r - 2 }]: [
                x[r] - 0.5 * l * ux[r] - x[p] - 0.5 * l * ux[p],
                y[r] - 0.5 * l * uy[r] - y[p] - 0.5 * l * uy[p],
            ],
            /// Rods `3k − 1` and `3k` are joined head to head.
            heads[r in 2..R - 1 if (r + 1) % 3 == 0]: [
                x[r] + 0.5 * l * ux[r] - x[r + 1] - 0.5 * l * ux[r + 1],
                y[r] + 0.5 * l * uy[r] - y[r + 1] - 0.5 * l * uy[r + 1],
            ],
        },
        integrators: [spook, rattle],
    }
}
