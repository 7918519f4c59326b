//! The checks a generated model with families makes in its `new(sizes)`: sizes at which the
//! model is impossible are refused there, with a typed error, as the fixed-size models' are at
//! compile time.
//!
//! - [`Footprint::check`]: the memory the model and one integrator will need at these sizes,
//!   estimated from the counts (coordinates, rows, Jacobian entries, instance tables) before
//!   anything is allocated, against what the machine has
//!   ([`available_memory`]). A size of `10¹²` pendula is [`StepError::TooLarge`] instead of an
//!   out-of-memory abort.
//! - [`check_rows`]: rows that the sizes made constant — a ring of one member whose
//!   wrap-around rod joins a member to itself is the constant `−l² ≠ 0`, which no integrator
//!   can satisfy (SPOOK would return `Ok` on it) — and, where the model is compiled for an
//!   integrator that needs independent rows, rows that the sizes made dependent everywhere
//!   (a ring of two members joins them twice).

use std::collections::HashMap;

use crate::capabilities::Family;
use crate::error::StepError;
use crate::model::sparse::{SparseHolonomic, SparseInertia};

/// Bytes per coordinate: `q`, `v` and about thirty vectors of the coordinates' length that the
/// model, the state, an integrator and its linear solver hold (gradients, stage vectors,
/// right-hand sides, permutations), plus the body bookkeeping.
const BYTES_PER_COORDINATE: f64 = 8.0 * 32.0 + 24.0;
/// Bytes per constraint row: the multipliers, residuals and the solver's vectors of the
/// rows' length (about thirty `f64`).
const BYTES_PER_ROW: f64 = 8.0 * 32.0;
/// Bytes per structural nonzero of the constraint Jacobian: the pattern's `(row, column)`
/// and the entry's position (24 bytes), its value, and the solver's copies of it in the
/// assembled matrix, its transpose and its factor (indices and values, about 80 bytes).
const BYTES_PER_JACOBIAN_ENTRY: f64 = 24.0 + 8.0 + 80.0;
/// Bytes per entry of the mass matrix's diagonal blocks: the blocks, and their copies in the
/// assembled matrix and its factor.
const BYTES_PER_MASS_ENTRY: f64 = 8.0 * 6.0;
/// Bytes per entry of an instance table (one `usize` per slot of each instance).
const BYTES_PER_TABLE_ENTRY: f64 = 8.0;

/// The counts a model with families has at given sizes, computed by its `new` before it
/// allocates anything (as `f64`, so that no count overflows).
///
/// Instances are counted before filters (a range of `k` values is `k` instances, a pair sum
/// over it `k(k − 1)/2`), so the estimate is an upper bound of the tables; of an integrator's
/// working set it is a rough lower bound. For the chain of pendula it is 1552 bytes per bob,
/// against a measured peak of 2560 (SPOOK, `n = 2·10⁵`, `/usr/bin/time -f %M
/// target/release/examples/pendulum_chain --n 200000 --t-end 0.1`; 2510 for RATTLE): a refused
/// size cannot fit, and an accepted one may still need up to about twice the estimate. It is
/// meant to refuse sizes that cannot fit (a typo, `--n 1000000000000`), not to budget memory
/// to the byte.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Footprint {
    /// Coordinates `n`.
    pub coordinates: f64,
    /// Entries of the mass matrix's diagonal blocks, `Σ sᵦ²`.
    pub mass_entries: f64,
    /// Holonomic rows `m`.
    pub rows: f64,
    /// Structural nonzeros of the constraint Jacobian.
    pub jacobian_entries: f64,
    /// Entries of every instance table (instances times slots, summed over the kernels).
    pub table_entries: f64,
}

impl Footprint {
    /// Returns the estimated bytes of the model and of one integrator's working set.
    pub fn bytes(&self) -> f64 {
        self.coordinates * BYTES_PER_COORDINATE
            + self.mass_entries * BYTES_PER_MASS_ENTRY
            + self.rows * BYTES_PER_ROW
            + self.jacobian_entries * BYTES_PER_JACOBIAN_ENTRY
            + self.table_entries * BYTES_PER_TABLE_ENTRY
    }

    /// Fails with [`StepError::TooLarge`] if the estimate exceeds the memory this process can
    /// have ([`available_memory`]), or cannot even be addressed (more than `isize::MAX` bytes);
    /// where the available memory is unknown (not Linux), only the latter is refused.
    pub fn check(&self) -> Result<(), StepError> {
        self.check_against(available_memory())
    }

    /// [`check`](Self::check) against a given amount of available memory (`None`: unknown).
    pub fn check_against(&self, available: Option<u64>) -> Result<(), StepError> {
        let bytes = self.bytes();
        let addressable = isize::MAX as f64;
        let limit = available.map_or(addressable, |a| (a as f64).min(addressable));
        // A NaN estimate is refused too.
        if bytes.is_nan() || bytes > limit {
            return Err(StepError::TooLarge {
                needed: bytes as u64,
                available: limit as u64,
            });
        }
        Ok(())
    }
}

/// Returns the bytes of memory this process can still get: `MemAvailable + SwapFree` of
/// `/proc/meminfo`, or less if the process's cgroup (v2) limits it (`memory.max` minus
/// `memory.current`, as a job scheduler sets it); `None` where neither can be read.
pub fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok();
    let field = |name: &str| -> Option<u64> {
        let line = meminfo.as_deref()?.lines().find(|l| l.starts_with(name))?;
        let kib: u64 = line[name.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        Some(kib.saturating_mul(1024))
    };
    let system = field("MemAvailable:").map(|a| a.saturating_add(field("SwapFree:").unwrap_or(0)));
    let cgroup = || -> Option<u64> {
        let read = |file: &str| std::fs::read_to_string(format!("/sys/fs/cgroup/{file}")).ok();
        let max: u64 = read("memory.max")?.trim().parse().ok()?; // "max": no limit
        let current: u64 = read("memory.current")
            .and_then(|c| c.trim().parse().ok())
            .unwrap_or(0);
        Some(max.saturating_sub(current))
    };
    match (system, cgroup()) {
        (Some(s), Some(c)) => Some(s.min(c)),
        (s, c) => s.or(c),
    }
}

/// A family of holonomic rows as the generated `new` laid it out: `instances × components`
/// consecutive rows from `start`.
#[derive(Clone, Copy, Debug)]
pub struct RowFamily {
    /// The rows' name for errors (`` constraint `ring` ``).
    pub what: &'static str,
    /// Its first row.
    pub start: usize,
    /// Its number of instances.
    pub instances: usize,
    /// Rows per instance.
    pub components: usize,
}

/// How many configurations [`check_rows`] samples: a row is constant, or two rows parallel,
/// only if they are at each of them.
const SAMPLES: usize = 3;

/// Refuses rows that the model's sizes made impossible or, when `integrators` include one that
/// needs independent rows ([`Capabilities::full_rank`](crate::capabilities::Capabilities)),
/// dependent everywhere, with [`StepError::InvalidModel`] naming the row family and the
/// instance (counted from 0 in its range's order).
///
/// The rows and their Jacobian are evaluated at three pseudo-random configurations
/// (coordinates in `[−1.5, 1.5]`, `t = 0`). A row whose Jacobian row vanishes at all of them
/// (relative to the largest row of `G` there, `10⁻¹²`) is constant: if its value is not zero,
/// the constraint can never hold — a ring of one bead, whose wrap-around rod
/// `(x₀ − x₀)² + (y₀ − y₀)² − l²` is `−l²` — and it is refused for every integrator; if it is
/// zero it is a zero row of `G`, dependent. Two rows on the same coordinates whose Jacobian
/// rows are parallel at every sample (a ring of two beads: rods `0 → 1` and `1 → 0`) are
/// dependent everywhere. Dependence through three or more rows is not looked for (it would need
/// a rank-revealing factorization of `G` at `new`); SHAKE and RATTLE report it at the first
/// step as a singular matrix.
pub fn check_rows<Model: SparseHolonomic + SparseInertia + ?Sized>(
    model: &Model,
    families: &[RowFamily],
    integrators: &[Family],
) -> Result<(), StepError> {
    let (n, m) = (model.coordinate_count(), model.constraint_count());
    if m == 0 {
        return Ok(());
    }
    let pattern = model.jacobian_pattern();
    let mut g = vec![[0.0; SAMPLES]; m];
    let mut jac = vec![[0.0; SAMPLES]; pattern.len()];
    let mut q = vec![0.0; n];
    let (mut gs, mut js) = (vec![0.0; m], vec![0.0; pattern.len()]);
    let mut state = 0x5EED_0F5A_4D1E_5EED_u64;
    for s in 0..SAMPLES {
        for x in &mut q {
            *x = 3.0 * uniform(&mut state) - 1.5;
        }
        model.constraints_and_jacobian(&q, 0.0, &mut gs, &mut js);
        for (row, &value) in g.iter_mut().zip(&gs) {
            row[s] = value;
        }
        for (entry, &value) in jac.iter_mut().zip(&js) {
            entry[s] = value;
        }
    }
    // Per row, its entries of the pattern; per sample, the largest |G| entry and |g|.
    let mut entries: Vec<Vec<usize>> = vec![Vec::new(); m];
    for (p, &(row, _)) in pattern.iter().enumerate() {
        if row < m {
            entries[row].push(p);
        }
    }
    let largest =
        |values: &[[f64; SAMPLES]], s: usize| values.iter().map(|v| v[s].abs()).fold(0.0, f64::max);
    let (g_scale, jac_scale): (Vec<f64>, Vec<f64>) = (0..SAMPLES)
        .map(|s| (largest(&g, s), largest(&jac, s)))
        .unzip();
    let needs_independent = integrators.iter().any(|f| f.capabilities().full_rank);
    let locate = |row: usize| -> (&'static str, usize) {
        families
            .iter()
            .find(|f| row >= f.start && row < f.start + f.instances * f.components)
            .map_or(("constraint row", row), |f| {
                (f.what, (row - f.start) / f.components.max(1))
            })
    };
    let constant = |row: usize| {
        (0..SAMPLES).all(|s| {
            entries[row]
                .iter()
                .all(|&p| jac[p][s].abs() <= 1e-12 * jac_scale[s])
        })
    };
    for (row, values) in g.iter().enumerate() {
        if !constant(row) {
            continue;
        }
        let (what, index) = locate(row);
        let nonzero = (0..SAMPLES).any(|s| values[s].abs() > 1e-12 * g_scale[s].max(1.0));
        if nonzero {
            return Err(StepError::InvalidModel {
                what,
                index,
                reason: "at these sizes this instance does not depend on any coordinate and is not zero, so the constraint can never hold (e.g. a ring of one member joins the member to itself); choose a size at which each instance joins distinct members, or filter such instances out with `if`",
            });
        }
        if needs_independent {
            return Err(StepError::InvalidModel {
                what,
                index,
                reason: "at these sizes this instance is identically zero, a zero row of the constraint Jacobian, so the rows are dependent everywhere, which SHAKE, RATTLE and the stabilized Runge–Kutta methods cannot solve; choose another size, filter the instance out with `if`, or compile the model only for `spook` and the penalty methods",
            });
        }
    }
    if !needs_independent {
        return Ok(());
    }
    // Rows on the same coordinates, grouped by their sorted columns.
    let mut by_columns: HashMap<Vec<usize>, Vec<usize>> = HashMap::new();
    for (row, at) in entries.iter().enumerate() {
        let mut columns: Vec<usize> = at.iter().map(|&p| pattern[p].1).collect();
        columns.sort_unstable();
        by_columns.entry(columns).or_default().push(row);
    }
    let mut first: Option<(usize, usize)> = None;
    for rows in by_columns.values().filter(|rows| rows.len() > 1) {
        for (k, &b) in rows.iter().enumerate() {
            for &a in &rows[..k] {
                if parallel(&entries[a], &entries[b], pattern, &jac)
                    && first.is_none_or(|(_, later)| b < later)
                {
                    first = Some((a, b));
                }
            }
        }
    }
    if let Some((_, row)) = first {
        let (what, index) = locate(row);
        return Err(StepError::InvalidModel {
            what,
            index,
            reason: "at these sizes this instance repeats an earlier row on the same coordinates (their Jacobian rows are parallel at every sampled configuration, e.g. a ring of two members joins them twice), so the rows are dependent everywhere, which SHAKE, RATTLE and the stabilized Runge–Kutta methods cannot solve; choose another size, filter the repeated instances out with `if`, or compile the model only for `spook` and the penalty methods",
        });
    }
    Ok(())
}

/// Whether two rows' Jacobian entries (on the same columns) are parallel at every sample:
/// `(a·b)² ≥ (1 − 10⁻¹²) |a|² |b|²`, matching the entries by column.
fn parallel(a: &[usize], b: &[usize], pattern: &[(usize, usize)], jac: &[[f64; SAMPLES]]) -> bool {
    (0..SAMPLES).all(|s| {
        let (mut ab, mut aa, mut bb) = (0.0, 0.0, 0.0);
        for &p in a {
            let x = jac[p][s];
            aa += x * x;
            if let Some(&r) = b.iter().find(|&&r| pattern[r].1 == pattern[p].1) {
                ab += x * jac[r][s];
            }
        }
        for &r in b {
            bb += jac[r][s] * jac[r][s];
        }
        aa > 0.0 && bb > 0.0 && ab * ab >= (1.0 - 1e-12) * aa * bb
    })
}

/// A uniform number in `[0, 1)` (SplitMix64), so that the samples are the same on every run.
fn uniform(state: &mut u64) -> f64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_footprint_beyond_the_machine_is_refused_with_its_numbers() {
        let chain = |n: f64| Footprint {
            coordinates: 2.0 * n,
            mass_entries: 4.0 * n,
            rows: n,
            jacobian_entries: 4.0 * n,
            table_entries: 6.0 * n,
        };
        assert_eq!(chain(1e4).check_against(Some(1 << 30)), Ok(()));
        match chain(1e12).check_against(Some(1 << 30)) {
            Err(StepError::TooLarge { needed, available }) => {
                assert_eq!(available, 1 << 30);
                assert!(needed as f64 > 1e15, "{needed}");
            }
            other => panic!("{other:?}"),
        }
        // Unknown available memory: only what cannot be addressed is refused.
        assert_eq!(chain(1e6).check_against(None), Ok(()));
        assert!(chain(1e18).check_against(None).is_err());
        let nan = Footprint {
            coordinates: f64::NAN,
            ..Footprint::default()
        };
        assert!(nan.check_against(None).is_err());
    }

    #[test]
    fn the_available_memory_is_read_on_linux() {
        if cfg!(target_os = "linux") {
            let bytes = available_memory().expect("/proc/meminfo");
            assert!(bytes > 1 << 20, "{bytes}");
        }
    }
}
