//! Tao–Owhadi's rigid TIP3P water cluster (2014, §4.3, eq. 24–26), written with families: any
//! number of molecules at run time, the pair interactions as one pair-sum kernel.

use crate::mechanism;
use crate::runtime::model::SparseInertia;

mechanism! {
    /// An isolated cluster of `N` rigid TIP3P water molecules in vacuum (Tao–Owhadi 2014, §4.3,
    /// eq. 24–25; parameters of Jorgensen et al. 1983), in AKMA units: lengths in Å, masses in
    /// amu, energies in kcal/mol, so the time unit is 48.888 fs and the paper's `h = 0.05` is
    /// 2.44 fs and its inverse temperature `β = 50` (with `k_B = 1`) is 10.1 K (the choice of
    /// `shared/EXPERIMENTS-M2.md` §D.4; the paper states no units).
    ///
    /// Molecule `i` is one body of 9 coordinates: its oxygen `(ox, oy, oz)[i]` and hydrogens
    /// `(h1x, h1y, h1z)[i]`, `(h2x, h2y, h2z)[i]`, interleaved in `q` molecule by molecule
    /// (`ox[0], oy[0], oz[0], h1x[0], …, h2z[0], ox[1], …`). The potential is intermolecular
    /// only (eq. 24): for every pair of molecules `i < j` the 9 Coulomb site pairs
    /// `K_c Q_a Q_b / r_ab` and the O–O Lennard-Jones `A/r¹² − C/r⁶`, with no box or Ewald
    /// sum, written as one pair-sum kernel (derived once, looped over the
    /// `N(N − 1)/2` pairs). An optional smooth cutoff on the O–O distance switches each
    /// molecule pair's whole interaction off between `r_on` and `r_off` with the C² quintic
    /// switch ([`switch::quintic`](crate::runtime::switch::quintic)); its default
    /// (`r_on = 10⁶ Å`) lies beyond any cluster, so that every pair takes the unswitched
    /// branch and the potential is the paper's all-pairs sum, bit for bit. Set `r_on` and
    /// `r_off` to cut: pairs beyond `r_off` are skipped. Each molecule is held rigid by three
    /// rows (eq. 25),
    /// `|H1 − O|² − r_OH²`, `|H2 − O|² − r_OH²`, `|H1 − H2|² − r_HH²`, exactly for SHAKE and
    /// RATTLE, or as the penalty `½ ω² |g|²` of eq. 26 through
    /// [`Penalized`](crate::runtime::Penalized) for stiff Z&Ss, whose stiff Hessian is
    /// block-diagonal, 9 × 9 per molecule.
    pub struct WaterCluster {
        sizes: { N = 7 },
        coordinates: [ox[N], oy[N], oz[N], h1x[N], h1y[N], h1z[N], h2x[N], h2y[N], h2z[N]],
        parameters: {
            /// Oxygen mass (amu).
            mo = 15.9994,
            /// Hydrogen mass (amu).
            mh = 1.008,
            /// Oxygen charge (e).
            qo = -0.834,
            /// Hydrogen charge (e).
            qh = 0.417,
            /// Coulomb constant `K_c` (kcal·Å/(mol·e²)).
            kc = 332.0636,
            /// Lennard-Jones repulsion `A = 4εσ¹²` of the O–O pair (kcal·Å¹²/mol).
            a = 582000.0,
            /// Lennard-Jones attraction `C = 4εσ⁶` of the O–O pair (kcal·Å⁶/mol).
            c = 595.0,
            /// O–H bond length `r_OH` (Å).
            r_oh = 0.9572,
            /// H–H distance `r_HH = 2 r_OH sin(104.52°/2)` (Å).
            r_hh = 1.5139006545273224,
            /// O–O distance where the pair cutoff's switch starts (Å): molecule pairs closer
            /// than it interact fully. The default lies beyond any cluster: every pair is
            /// summed, as in the paper.
            r_on = 1.0e6,
            /// O–O distance where the pair cutoff's switch ends (Å): molecule pairs this far
            /// apart or farther do not interact (`r_on < r_off`).
            r_off = 2.0e6,
        },
        kinetic: sum(0..N, |i| 0.5 * mo * (dot(ox[i]).powi(2) + dot(oy[i]).powi(2) + dot(oz[i]).powi(2))
            + 0.5 * mh * (dot(h1x[i]).powi(2) + dot(h1y[i]).powi(2) + dot(h1z[i]).powi(2))
            + 0.5 * mh * (dot(h2x[i]).powi(2) + dot(h2y[i]).powi(2) + dot(h2z[i]).powi(2))),
        potential: sum(0..N, |i, j| kc * qo * qo / ((ox[i] - ox[j]).powi(2) + (oy[i] - oy[j]).powi(2) + (oz[i] - oz[j]).powi(2)).sqrt()
            + kc * qo * qh / ((ox[i] - h1x[j]).powi(2) + (oy[i] - h1y[j]).powi(2) + (oz[i] - h1z[j]).powi(2)).sqrt()
            + kc * qo * qh / ((ox[i] - h2x[j]).powi(2) + (oy[i] - h2y[j]).powi(2) + (oz[i] - h2z[j]).powi(2)).sqrt()
            + kc * qh * qo / ((h1x[i] - ox[j]).powi(2) + (h1y[i] - oy[j]).powi(2) + (h1z[i] - oz[j]).powi(2)).sqrt()
            + kc * qh * qh / ((h1x[i] - h1x[j]).powi(2) + (h1y[i] - h1y[j]).powi(2) + (h1z[i] - h1z[j]).powi(2)).sqrt()
            + kc * qh * qh / ((h1x[i] - h2x[j]).powi(2) + (h1y[i] - h2y[j]).powi(2) + (h1z[i] - h2z[j]).powi(2)).sqrt()
            + kc * qh * qo / ((h2x[i] - ox[j]).powi(2) + (h2y[i] - oy[j]).powi(2) + (h2z[i] - oz[j]).powi(2)).sqrt()
            + kc * qh * qh / ((h2x[i] - h1x[j]).powi(2) + (h2y[i] - h1y[j]).powi(2) + (h2z[i] - h1z[j]).powi(2)).sqrt()
            + kc * qh * qh / ((h2x[i] - h2x[j]).powi(2) + (h2y[i] - h2y[j]).powi(2) + (h2z[i] - h2z[j]).powi(2)).sqrt()
            + a / ((ox[i] - ox[j]).powi(2) + (oy[i] - oy[j]).powi(2) + (oz[i] - oz[j]).powi(2)).powi(6)
            - c / ((ox[i] - ox[j]).powi(2) + (oy[i] - oy[j]).powi(2) + (oz[i] - oz[j]).powi(2)).powi(3),
            cutoff(r = ((ox[i] - ox[j]).powi(2) + (oy[i] - oy[j]).powi(2) + (oz[i] - oz[j]).powi(2)).sqrt(),
                on = r_on, off = r_off)),
        holonomic: {
            /// Molecule `i`'s rigid geometry: the two O–H bonds and the H–H distance (eq. 25).
            rigid[i in 0..N]: [
                (h1x[i] - ox[i]).powi(2) + (h1y[i] - oy[i]).powi(2) + (h1z[i] - oz[i]).powi(2)
                    - r_oh.powi(2),
                (h2x[i] - ox[i]).powi(2) + (h2y[i] - oy[i]).powi(2) + (h2z[i] - oz[i]).powi(2)
                    - r_oh.powi(2),
                (h1x[i] - h2x[i]).powi(2) + (h1y[i] - h2y[i]).powi(2) + (h1z[i] - h2z[i]).powi(2)
                    - r_hh.powi(2),
            ],
        },
        integrators: [shake, rattle, zss_stiff],
    }
}

/// Coordinates per molecule: O, H1, H2 in 3D.
const PER_MOLECULE: usize = 9;

/// SplitMix64 (Steele–Lea–Flood 2014): a small seeded generator for the initial clusters, so
/// that they do not depend on a random-number crate and are the same on every platform.
struct SplitMix(u64);

impl SplitMix {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform draw in `(0, 1]`.
    fn uniform(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 / (1u64 << 53) as f64
    }

    /// A standard normal draw (Box–Muller).
    fn normal(&mut self) -> f64 {
        let (u1, u2) = (self.uniform(), self.uniform());
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

impl WaterCluster {
    /// Returns the number of molecules `N`.
    pub fn molecules(&self) -> usize {
        self.coordinate_count() / PER_MOLECULE
    }

    /// Returns the oxygen positions of the initial clusters of `shared/EXPERIMENTS-M2.md` §D.4
    /// (the paper gives none): for `N = 7` a planar hexagonal ring with O–O distance 2.8 Å and
    /// one molecule 2.8 Å above its centre; otherwise the first `N` points of a simple-cubic
    /// grid of spacing 3.1 Å with `⌈N^{1/3}⌉` points a side (a 5 × 5 × 4 block for `N = 100`).
    pub fn oxygen_sites(&self) -> Vec<[f64; 3]> {
        let n = self.molecules();
        if n == 7 {
            let mut sites: Vec<[f64; 3]> = (0..6)
                .map(|k| {
                    let angle = std::f64::consts::PI / 3.0 * k as f64;
                    [2.8 * angle.cos(), 2.8 * angle.sin(), 0.0]
                })
                .collect();
            sites.push([0.0, 0.0, 2.8]);
            return sites;
        }
        let side = (1..).find(|s: &usize| s.pow(3) >= n).unwrap_or(1);
        (0..n)
            .map(|k| {
                let (x, y, z) = (k % side, (k / side) % side, k / (side * side));
                [3.1 * x as f64, 3.1 * y as f64, 3.1 * z as f64]
            })
            .collect()
    }

    /// Returns an initial cluster: the molecules at [`oxygen_sites`](Self::oxygen_sites), each
    /// at the exact TIP3P geometry (on every constraint to round-off) in a uniformly random
    /// orientation, and velocities drawn from Maxwell–Boltzmann at inverse temperature `beta`
    /// (`v ~ N(0, 1/(β m))` per Cartesian component, not projected onto the constraints),
    /// reproducible from `seed`. Returns `(q, v)`.
    pub fn initial_cluster(&self, beta: f64, seed: u64) -> (Vec<f64>, Vec<f64>) {
        let mut rng = SplitMix(seed);
        let half = (0.5 * self.r_hh / self.r_oh).asin();
        let h1 = [self.r_oh * half.sin(), self.r_oh * half.cos(), 0.0];
        let h2 = [-h1[0], h1[1], 0.0];
        let mut q = Vec::with_capacity(self.coordinate_count());
        for o in self.oxygen_sites() {
            let r = random_rotation(&mut rng);
            q.extend_from_slice(&o);
            for h in [h1, h2] {
                for (d, row) in r.iter().enumerate() {
                    q.push(o[d] + row[0] * h[0] + row[1] * h[1] + row[2] * h[2]);
                }
            }
        }
        let v = (0..q.len())
            .map(|k| {
                let m = if k % PER_MOLECULE < 3 {
                    self.mo
                } else {
                    self.mh
                };
                rng.normal() / (beta * m).sqrt()
            })
            .collect();
        (q, v)
    }

    /// Replaces each molecule's velocities by the rigid motion `V + Ω × (x − c)` closest to
    /// them in the kinetic-energy norm: the molecule's linear momentum and its angular
    /// momentum about its centre of mass `c` are kept, and the result is tangent to the rigid
    /// geometry (the constraint velocities `G v` vanish up to round-off when `q` satisfies the
    /// constraints). For SHAKE and RATTLE's starts.
    pub fn project_rigid(&self, q: &[f64], v: &mut [f64]) {
        let mass = [self.mo, self.mh, self.mh];
        for (x, u) in q
            .chunks_exact(PER_MOLECULE)
            .zip(v.chunks_exact_mut(PER_MOLECULE))
        {
            let total = self.mo + 2.0 * self.mh;
            let (mut c, mut p) = ([0.0; 3], [0.0; 3]);
            for a in 0..3 {
                for d in 0..3 {
                    c[d] += mass[a] * x[3 * a + d] / total;
                    p[d] += mass[a] * u[3 * a + d];
                }
            }
            let (mut l, mut inertia) = ([0.0; 3], [[0.0; 3]; 3]);
            for a in 0..3 {
                let r = [x[3 * a] - c[0], x[3 * a + 1] - c[1], x[3 * a + 2] - c[2]];
                let w = &u[3 * a..3 * a + 3];
                let rr = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
                l[0] += mass[a] * (r[1] * w[2] - r[2] * w[1]);
                l[1] += mass[a] * (r[2] * w[0] - r[0] * w[2]);
                l[2] += mass[a] * (r[0] * w[1] - r[1] * w[0]);
                for i in 0..3 {
                    for j in 0..3 {
                        let delta = if i == j { rr } else { 0.0 };
                        inertia[i][j] += mass[a] * (delta - r[i] * r[j]);
                    }
                }
            }
            let omega = solve3(&inertia, &l);
            for a in 0..3 {
                let r = [x[3 * a] - c[0], x[3 * a + 1] - c[1], x[3 * a + 2] - c[2]];
                u[3 * a] = p[0] / total + omega[1] * r[2] - omega[2] * r[1];
                u[3 * a + 1] = p[1] / total + omega[2] * r[0] - omega[0] * r[2];
                u[3 * a + 2] = p[2] / total + omega[0] * r[1] - omega[1] * r[0];
            }
        }
    }

    /// Returns each coordinate's mass, `mo` for the oxygen's and `mh` for the hydrogens'.
    pub fn masses(&self) -> Vec<f64> {
        (0..self.coordinate_count())
            .map(|k| {
                if k % PER_MOLECULE < 3 {
                    self.mo
                } else {
                    self.mh
                }
            })
            .collect()
    }

    /// Returns the total linear momentum `Σ m v`.
    pub fn linear_momentum(&self, v: &[f64]) -> [f64; 3] {
        let mut p = [0.0; 3];
        for (k, vk) in v.iter().enumerate() {
            let m = if k % PER_MOLECULE < 3 {
                self.mo
            } else {
                self.mh
            };
            p[k % 3] += m * vk;
        }
        p
    }

    /// Returns the total angular momentum about the origin, `Σ m x × v`.
    pub fn angular_momentum(&self, q: &[f64], v: &[f64]) -> [f64; 3] {
        let mut l = [0.0; 3];
        for (k, (x, u)) in q.chunks_exact(3).zip(v.chunks_exact(3)).enumerate() {
            let m = if k % 3 == 0 { self.mo } else { self.mh };
            l[0] += m * (x[1] * u[2] - x[2] * u[1]);
            l[1] += m * (x[2] * u[0] - x[0] * u[2]);
            l[2] += m * (x[0] * u[1] - x[1] * u[0]);
        }
        l
    }

    /// Writes the `N(N − 1)/2` intermolecular O–O distances (pairs `i < j` in lexicographic
    /// order) into `out`.
    pub fn oxygen_distances(&self, q: &[f64], out: &mut [f64]) {
        let n = self.molecules();
        let mut k = 0;
        for i in 0..n {
            for j in i + 1..n {
                let (a, b) = (&q[PER_MOLECULE * i..], &q[PER_MOLECULE * j..]);
                out[k] =
                    ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
                k += 1;
            }
        }
    }
}

/// Solves the 3 × 3 system `a x = b` by Cramer's rule (a molecule's inertia tensor, positive
/// definite for a non-collinear molecule).
fn solve3(a: &[[f64; 3]; 3], b: &[f64; 3]) -> [f64; 3] {
    let det = |m: &[[f64; 3]; 3]| {
        m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
            - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
    };
    let d = det(a);
    let mut x = [0.0; 3];
    for (k, xk) in x.iter_mut().enumerate() {
        let mut m = *a;
        for (row, bi) in m.iter_mut().zip(b) {
            row[k] = *bi;
        }
        *xk = det(&m) / d;
    }
    x
}

/// Returns a uniformly random rotation matrix (rows), from a normalized Gaussian quaternion.
fn random_rotation(rng: &mut SplitMix) -> [[f64; 3]; 3] {
    let mut e = [rng.normal(), rng.normal(), rng.normal(), rng.normal()];
    let norm = e.iter().map(|x| x * x).sum::<f64>().sqrt();
    e.iter_mut().for_each(|x| *x /= norm);
    let [w, x, y, z] = e;
    [
        [
            1.0 - 2.0 * (y * y + z * z),
            2.0 * (x * y - w * z),
            2.0 * (x * z + w * y),
        ],
        [
            2.0 * (x * y + w * z),
            1.0 - 2.0 * (x * x + z * z),
            2.0 * (y * z - w * x),
        ],
        [
            2.0 * (x * z - w * y),
            2.0 * (y * z + w * x),
            1.0 - 2.0 * (x * x + y * y),
        ],
    ]
}
