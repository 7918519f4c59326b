//! Ensembles and sweeps: one model over many members (parameter values, initial states, noise
//! seeds) on all cores, with results identical bit for bit whatever the thread count, and a
//! split into shards so that the same sweep runs as a job array on a cluster.
//!
//! An [`Ensemble`] holds a list of members — anything that describes one run, e.g. a tuple
//! `(method, h)` or a [`grid`] of two parameter lists — and maps a closure over them on a local
//! [rayon] thread pool. The closure gets a [`Member`]: the member's index in the whole ensemble,
//! its parameters and its noise seed [`member_seed`]`(base, index)`. Each member is computed by
//! the closure alone, from its own inputs, and the results come back in member order, so the
//! output does not depend on how many threads ran it, nor in which order they finished. The
//! integrators are deterministic, and the Langevin thermostat's noise is a ChaCha8 stream
//! seeded by a `u64` ([`Langevin`](crate::runtime::Langevin)), so a member's trajectory depends
//! only on its parameters and its seed.
//!
//! A [`Shard`] `k/n` keeps the `k`-th of `n` contiguous blocks of members (`k` counts from 1,
//! like SLURM's `$SLURM_ARRAY_TASK_ID` with `--array=1-n` and GNU parallel's `{#}`). Member
//! indices and seeds are those of the whole ensemble, so a shard computes exactly the rows the
//! single-machine run computes for its block, and [`EnsembleCsv`] writes the header in shard
//! `1/n` only: `cat shard-1.csv … shard-n.csv` is byte for byte the single-machine file.
//!
//! Parquet files cannot be joined that way, since each ends with its own footer: a sharded run
//! that writes Parquet (`mechanism::parquet`, feature `parquet`) writes one file per shard into
//! one directory, which the readers take as one table: `pyarrow.dataset.dataset("out/runs/")`,
//! `pl.scan_parquet("out/runs/*.parquet")` in polars, `SELECT * FROM 'out/runs/*.parquet'` in
//! DuckDB.
//!
//! ```
//! use mechanism::ensemble::{Ensemble, Shard};
//!
//! // Twelve members: the squares of 0..12, on two threads, split in three shards.
//! let whole = Ensemble::new((0..12).collect()).threads(2);
//! let squares = whole.map(|member| member.parameters * member.parameters)?;
//! assert_eq!(squares[5], 25);
//!
//! let mut joined = Vec::new();
//! for k in 1..=3 {
//!     let shard: Shard = format!("{k}/3").parse()?;
//!     joined.extend(whole.clone().shard(shard).map(|m| m.parameters * m.parameters)?);
//! }
//! assert_eq!(joined, squares);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A job array needs to know which shards finished: [`EnsembleCsv::finish`] returns the rows,
//! bytes and CRC-32 of what it wrote, a [`ShardManifest`] saves them with the shard and its
//! members beside the part (`sweep-2.csv.manifest`), and [`verify_shard`] checks a part
//! against its manifest, so that a missing manifest (a shard that never finished), a missing
//! part, a truncated part or a changed one names the shard to run again.
//!
//! What a member does on failure is the closure's choice: [`Ensemble::map`] returns whatever
//! the closure returns (a `Result` is then data, e.g. the step sizes where a method blew up),
//! and [`Ensemble::try_map`] runs every member and reports the failure of the lowest index
//! (the same one whatever the thread count), with its index and seed.

use std::convert::Infallible;
use std::fmt;
use std::fs;
use std::io::{self, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use rayon::prelude::*;

use crate::runtime::simulation::{write_number, Table};

/// Returns the seed of member `index` of an ensemble with base seed `base`: the
/// `(index + 1)`-th output of the SplitMix64 generator (Steele, Lea & Flood 2014) started at
/// `base`, i.e. `mix(base + (index + 1)·0x9E3779B97F4A7C15)` with SplitMix64's finalizer `mix`.
///
/// The finalizer is a bijection of `u64` and the increment is odd, so distinct indices below
/// `2⁶⁴` get distinct seeds; neighbouring indices and neighbouring base seeds get seeds that
/// differ in about half their bits, so the ChaCha8 streams seeded with them are unrelated. The
/// seed depends on nothing but `base` and `index`: not on the shard, not on the thread count.
///
/// ```
/// use mechanism::ensemble::member_seed;
///
/// assert_ne!(member_seed(7, 0), member_seed(7, 1));
/// assert_ne!(member_seed(7, 0), member_seed(8, 0));
/// // SplitMix64 seeded with 0: its first output, as published.
/// assert_eq!(member_seed(0, 0), 0xE220_A839_7B1D_CDAF);
/// ```
pub fn member_seed(base: u64, index: usize) -> u64 {
    const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut z = base.wrapping_add((index as u64).wrapping_add(1).wrapping_mul(GOLDEN_GAMMA));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Returns every pair `(a, b)` of `first × second`, with `second` varying fastest: the members
/// of a sweep over two parameters.
///
/// ```
/// let members = mechanism::ensemble::grid(&["spook", "rattle"], &[0.1, 0.05]);
/// assert_eq!(members, [("spook", 0.1), ("spook", 0.05), ("rattle", 0.1), ("rattle", 0.05)]);
/// ```
pub fn grid<A: Clone, B: Clone>(first: &[A], second: &[B]) -> Vec<(A, B)> {
    first
        .iter()
        .flat_map(|a| second.iter().map(move |b| (a.clone(), b.clone())))
        .collect()
}

/// One member of an ensemble, as the mapped closure sees it.
#[derive(Clone, Copy, Debug)]
pub struct Member<'a, P> {
    /// Returns the member's index in the whole ensemble (not in its shard).
    pub index: usize,
    /// The member's noise seed, [`member_seed`]`(base, index)`.
    pub seed: u64,
    /// The member's parameters.
    pub parameters: &'a P,
}

/// The `index`-th of `count` contiguous blocks of an ensemble's members, `1 ≤ index ≤ count`:
/// `--shard k/n`.
///
/// Block `k` of `N` members is `⌊(k−1)N/n⌋ .. ⌊kN/n⌋`, so the blocks cover every member once,
/// in order, and differ in size by at most one.
///
/// ```
/// use mechanism::ensemble::Shard;
///
/// let shard: Shard = "2/3".parse()?;
/// assert_eq!(shard.members(10), 3..6);
/// assert!("0/3".parse::<Shard>().is_err(), "shards count from 1, like SLURM array ids");
/// # Ok::<(), mechanism::ensemble::ShardError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    index: usize,
    count: usize,
}

impl Shard {
    /// The whole ensemble, `1/1`.
    pub const WHOLE: Shard = Shard { index: 1, count: 1 };

    /// Returns shard `index` of `count`; fails unless `1 ≤ index ≤ count`.
    pub fn new(index: usize, count: usize) -> Result<Self, ShardError> {
        if count == 0 || index == 0 || index > count {
            return Err(ShardError::OutOfRange { index, count });
        }
        Ok(Shard { index, count })
    }

    /// Returns the shard's number `k`, counting from 1.
    pub fn index(&self) -> usize {
        self.index
    }

    /// Returns the number of shards `n`.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Returns whether this is the first shard, the one that writes a file's header.
    pub fn is_first(&self) -> bool {
        self.index == 1
    }

    /// Returns the indices of the members of an ensemble of `total` members in this shard.
    pub fn members(&self, total: usize) -> Range<usize> {
        // u128: (k − 1)·N cannot overflow for any usize N and k.
        let bound = |k: usize| (k as u128 * total as u128 / self.count as u128) as usize;
        bound(self.index - 1)..bound(self.index)
    }
}

impl Default for Shard {
    fn default() -> Self {
        Shard::WHOLE
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = ShardError;

    /// Parses `k/n`, e.g. `3/8`.
    fn from_str(text: &str) -> Result<Self, ShardError> {
        let malformed = || ShardError::Malformed {
            text: text.to_owned(),
        };
        let (index, count) = text.trim().split_once('/').ok_or_else(malformed)?;
        let index = index.trim().parse().map_err(|_| malformed())?;
        let count = count.trim().parse().map_err(|_| malformed())?;
        Shard::new(index, count)
    }
}

/// Why a shard could not be made.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShardError {
    /// Returned for text that is not `k/n` with two unsigned integers.
    #[error("shard `{text}` is not of the form k/n (e.g. 2/8)")]
    Malformed {
        /// The text given.
        text: String,
    },
    /// Returned unless `1 ≤ k ≤ n`.
    #[error(
        "shard {index}/{count} does not exist: shards count from 1 to n (like SLURM array ids)"
    )]
    OutOfRange {
        /// The shard number `k` given.
        index: usize,
        /// The shard count `n` given.
        count: usize,
    },
}

/// Why an ensemble did not complete.
#[derive(Debug, thiserror::Error)]
pub enum EnsembleError<E> {
    /// Returned when the thread pool could not be built (or zero threads were asked for).
    #[error("cannot start {requested} worker threads: {reason}")]
    Threads {
        /// The thread count asked for.
        requested: usize,
        /// What the thread pool reported.
        reason: String,
    },
    /// Returned by [`Ensemble::try_map`] for the failed member of lowest index.
    #[error("ensemble member {index} (seed {seed:#018x}) failed: {error}")]
    Member {
        /// The member's index in the whole ensemble.
        index: usize,
        /// The member's seed.
        seed: u64,
        /// The member's error (any `Display`, so that a `String` or a boxed error will do).
        error: E,
    },
}

/// A list of members to run on a local thread pool, optionally one shard of them; see the
/// [module documentation](self).
#[derive(Clone, Debug)]
pub struct Ensemble<P> {
    members: Vec<P>,
    seed: u64,
    threads: Option<usize>,
    shard: Shard,
}

impl<P: Sync> Ensemble<P> {
    /// Returns the ensemble of `members`, with base seed 0, on all cores, unsharded.
    pub fn new(members: Vec<P>) -> Self {
        Ensemble {
            members,
            seed: 0,
            threads: None,
            shard: Shard::WHOLE,
        }
    }

    /// Sets the base seed from which every member's seed is derived ([`member_seed`]).
    pub fn seed(mut self, base: u64) -> Self {
        self.seed = base;
        self
    }

    /// Runs on `threads` worker threads instead of one per core (the results are the same).
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = Some(threads);
        self
    }

    /// Keeps only the members of `shard`.
    pub fn shard(mut self, shard: Shard) -> Self {
        self.shard = shard;
        self
    }

    /// Returns every member of the whole ensemble, in order.
    pub fn all_members(&self) -> &[P] {
        &self.members
    }

    /// Returns the indices of the members this ensemble runs (its shard's block).
    pub fn indices(&self) -> Range<usize> {
        self.shard.members(self.members.len())
    }

    /// Returns the shard this ensemble runs.
    pub fn current_shard(&self) -> Shard {
        self.shard
    }

    /// Returns `run(member)` for every member of the shard, in member order.
    ///
    /// Fails only if the thread pool cannot be built.
    pub fn map<R: Send>(
        &self,
        run: impl Fn(Member<'_, P>) -> R + Sync,
    ) -> Result<Vec<R>, EnsembleError<Infallible>> {
        let pool = self.pool()?;
        let range = self.indices();
        let members = &self.members[range.clone()];
        Ok(pool.install(|| {
            members
                .par_iter()
                .enumerate()
                .map(|(offset, parameters)| {
                    let index = range.start + offset;
                    run(Member {
                        index,
                        seed: member_seed(self.seed, index),
                        parameters,
                    })
                })
                .collect()
        }))
    }

    /// Returns `run(member)` for every member of the shard, in member order, or the error of
    /// the failed member with the lowest index.
    ///
    /// Every member runs even when one fails, so that the error reported is the same whatever
    /// the thread count.
    pub fn try_map<R: Send, E: Send>(
        &self,
        run: impl Fn(Member<'_, P>) -> Result<R, E> + Sync,
    ) -> Result<Vec<R>, EnsembleError<E>> {
        let outcomes = self.map(run).map_err(|error| match error {
            EnsembleError::Threads { requested, reason } => {
                EnsembleError::Threads { requested, reason }
            }
            EnsembleError::Member { error, .. } => match error {},
        })?;
        outcomes
            .into_iter()
            .zip(self.indices())
            .map(|(outcome, index)| {
                outcome.map_err(|error| EnsembleError::Member {
                    index,
                    seed: member_seed(self.seed, index),
                    error,
                })
            })
            .collect()
    }

    /// Builds the local pool (the global rayon pool is never touched).
    fn pool(&self) -> Result<rayon::ThreadPool, EnsembleError<Infallible>> {
        let requested = self
            .threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        if requested == 0 {
            return Err(EnsembleError::Threads {
                requested,
                reason: "an ensemble needs at least one thread".into(),
            });
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(requested)
            .build()
            .map_err(|error| EnsembleError::Threads {
                requested,
                reason: error.to_string(),
            })
    }
}

/// One cell of an ensemble's CSV row: a number (written in the shortest form that reads back
/// to the same `f64`, as [`write_number`] does) or a text (quoted when it needs to be).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Cell<'a> {
    /// A number.
    Number(f64),
    /// A text, e.g. a method's name or an error message.
    Text(&'a str),
}

impl From<f64> for Cell<'_> {
    fn from(x: f64) -> Self {
        Cell::Number(x)
    }
}

impl<'a> From<&'a str> for Cell<'a> {
    fn from(text: &'a str) -> Self {
        Cell::Text(text)
    }
}

/// The CSV output of an ensemble or of one of its shards: a header `member,<columns>` (written
/// by shard `1/n` only) and rows that start with the member's index.
///
/// With the header in the first shard only, the shards' files concatenated in shard order
/// (`cat out-1.csv out-2.csv …`) are byte for byte the file of the unsharded run.
///
/// ```
/// use mechanism::ensemble::{Cell, EnsembleCsv, Shard};
///
/// let mut csv = EnsembleCsv::new(Vec::new(), Shard::WHOLE, &["method", "h", "error"])?;
/// csv.row(0, &[Cell::Text("rattle"), Cell::Number(0.1), Cell::Number(2.5e-3)])?;
/// assert_eq!(String::from_utf8(csv.into_inner()?).unwrap(), "member,method,h,error\n0,rattle,0.1,0.0025\n");
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct EnsembleCsv<W: Write> {
    out: Summed<W>,
    columns: usize,
    rows: usize,
}

/// A writer that counts the bytes written through it and their CRC-32.
struct Summed<W> {
    out: W,
    bytes: u64,
    crc: crc32fast::Hasher,
}

impl<W: fmt::Debug> fmt::Debug for Summed<W> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Summed")
            .field("out", &self.out)
            .field("bytes", &self.bytes)
            .finish()
    }
}

impl<W: Write> Write for Summed<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.out.write(buf)?;
        self.crc.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// What an [`EnsembleCsv`] wrote: its rows (without the header), bytes and their CRC-32.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PartSummary {
    /// The rows written, without the header.
    pub rows: usize,
    /// The bytes written, the header included.
    pub bytes: u64,
    /// The CRC-32 (IEEE, as zlib and the `crc32` tool compute it) of those bytes.
    pub crc32: u32,
}

impl<W: Write> EnsembleCsv<W> {
    /// Starts the output of `shard` with the given columns after `member`; writes the header
    /// if `shard` is the first.
    pub fn new(out: W, shard: Shard, columns: &[&str]) -> io::Result<Self> {
        let mut out = Summed {
            out,
            bytes: 0,
            crc: crc32fast::Hasher::new(),
        };
        if shard.is_first() {
            out.write_all(b"member")?;
            for column in columns {
                out.write_all(b",")?;
                write_text(&mut out, column)?;
            }
            out.write_all(b"\n")?;
        }
        Ok(EnsembleCsv {
            out,
            columns: columns.len(),
            rows: 0,
        })
    }

    /// Writes one row for member `index`; fails with `InvalidInput` unless `cells` has one
    /// cell per column.
    pub fn row(&mut self, index: usize, cells: &[Cell<'_>]) -> io::Result<()> {
        if cells.len() != self.columns {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "ensemble row of member {index} has {} cells for {} columns",
                    cells.len(),
                    self.columns
                ),
            ));
        }
        write!(self.out, "{index}")?;
        for cell in cells {
            self.out.write_all(b",")?;
            match *cell {
                Cell::Number(x) => write_number(&mut self.out, x)?,
                Cell::Text(text) => write_text(&mut self.out, text)?,
            }
        }
        self.out.write_all(b"\n")?;
        self.rows += 1;
        Ok(())
    }

    /// Writes one row per row of `table` for member `index`: `index`, the member's `cells`,
    /// then the table's row (the columns given to [`new`](Self::new) must be the names of
    /// `cells` followed by [`Table::columns`]).
    pub fn table(&mut self, index: usize, cells: &[Cell<'_>], table: &Table) -> io::Result<()> {
        let mut row = Vec::with_capacity(self.columns);
        for values in table.rows() {
            row.clear();
            row.extend_from_slice(cells);
            row.extend(values.iter().map(|&x| Cell::Number(x)));
            self.row(index, &row)?;
        }
        Ok(())
    }

    /// Flushes and returns the writer.
    pub fn into_inner(self) -> io::Result<W> {
        Ok(self.finish()?.0)
    }

    /// Flushes and returns the writer with what was written through it, for the shard's
    /// [`ShardManifest`].
    pub fn finish(mut self) -> io::Result<(W, PartSummary)> {
        self.out.flush()?;
        let summary = PartSummary {
            rows: self.rows,
            bytes: self.out.bytes,
            crc32: self.out.crc.finalize(),
        };
        Ok((self.out.out, summary))
    }
}

/// What a finished shard wrote, saved beside its part so that a scheduler can check it with
/// [`verify_shard`] and run again a shard whose part is missing, truncated or changed.
///
/// The manifest is a few `key = value` lines (readable with `grep` in a job script):
///
/// ```text
/// # mechanism shard manifest
/// part = sweep-2.csv
/// shard = 2/4
/// members = 8..15
/// total = 30
/// rows = 7
/// bytes = 512
/// crc32 = 0x1c291ca3
/// ```
///
/// `part` is the part's file name, relative to the manifest's directory, so that the
/// directory can be moved; it is written after the part is complete, so a shard killed before
/// the end has no manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardManifest {
    /// The part's file name, relative to the manifest's directory.
    pub part: PathBuf,
    /// The shard `k/n`.
    pub shard: Shard,
    /// The indices of its members in the whole ensemble.
    pub members: Range<usize>,
    /// The number of members of the whole ensemble.
    pub total: usize,
    /// What the part holds: rows, bytes, CRC-32.
    pub summary: PartSummary,
}

impl ShardManifest {
    /// Returns the manifest of the part `part` (a file name or a path: its file name is kept)
    /// that `shard` of an ensemble of `total` members wrote, with `summary` from
    /// [`EnsembleCsv::finish`].
    pub fn new(part: &Path, shard: Shard, total: usize, summary: PartSummary) -> Self {
        ShardManifest {
            part: part.file_name().map_or_else(PathBuf::new, PathBuf::from),
            shard,
            members: shard.members(total),
            total,
            summary,
        }
    }

    /// Returns where the manifest of the part `part` goes: `part` with `.manifest` appended.
    pub fn path_for(part: &Path) -> PathBuf {
        let mut name = part.as_os_str().to_owned();
        name.push(".manifest");
        PathBuf::from(name)
    }

    /// Writes the manifest to `path`; the error names the path.
    pub fn write(&self, path: &Path) -> Result<(), ManifestError> {
        let text = format!(
            "# mechanism shard manifest\npart = {}\nshard = {}\nmembers = {}..{}\ntotal = {}\n\
             rows = {}\nbytes = {}\ncrc32 = {:#010x}\n",
            self.part.display(),
            self.shard,
            self.members.start,
            self.members.end,
            self.total,
            self.summary.rows,
            self.summary.bytes,
            self.summary.crc32
        );
        fs::write(path, text).map_err(|e| ManifestError::Io {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })
    }

    /// Reads the manifest at `path`; fails, naming the path, if it cannot be read or a key is
    /// missing or malformed.
    pub fn read(path: &Path) -> Result<Self, ManifestError> {
        let text = fs::read_to_string(path).map_err(|e| ManifestError::Io {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        let malformed = |reason: String| ManifestError::Malformed {
            path: path.to_path_buf(),
            reason,
        };
        let value = |key: &str| -> Result<&str, ManifestError> {
            text.lines()
                .filter_map(|line| line.split_once('='))
                .find(|(k, _)| k.trim() == key)
                .map(|(_, v)| v.trim())
                .ok_or_else(|| malformed(format!("no `{key}`")))
        };
        let number = |key: &str| -> Result<u64, ManifestError> {
            let text = value(key)?;
            let parsed = match text.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => text.parse(),
            };
            parsed.map_err(|_| malformed(format!("`{key} = {text}` is not a number")))
        };
        let size = |key: &str| -> Result<usize, ManifestError> {
            usize::try_from(number(key)?).map_err(|_| malformed(format!("`{key}` is too large")))
        };
        let shard = value("shard")?
            .parse()
            .map_err(|e: ShardError| malformed(e.to_string()))?;
        let members = value("members")?;
        let members = members
            .split_once("..")
            .and_then(|(a, b)| Some(a.trim().parse().ok()?..b.trim().parse().ok()?))
            .ok_or_else(|| malformed(format!("`members = {members}` is not a range a..b")))?;
        let crc32 = u32::try_from(number("crc32")?)
            .map_err(|_| malformed("`crc32` has more than 32 bits".into()))?;
        Ok(ShardManifest {
            part: PathBuf::from(value("part")?),
            shard,
            members,
            total: size("total")?,
            summary: PartSummary {
                rows: size("rows")?,
                bytes: number("bytes")?,
                crc32,
            },
        })
    }
}

/// Checks the part named by the manifest at `manifest` (the part is looked for in the
/// manifest's directory): it must exist, have the manifest's bytes, CRC-32 and rows, and the
/// members must be those of the shard. Returns the manifest if the part is complete.
///
/// A job array reruns shard `k` when this fails for `sweep-k.csv.manifest` (a missing
/// manifest means the shard never finished).
pub fn verify_shard(manifest: &Path) -> Result<ShardManifest, ManifestError> {
    let expected = ShardManifest::read(manifest)?;
    if expected.members != expected.shard.members(expected.total) {
        return Err(ManifestError::Malformed {
            path: manifest.to_path_buf(),
            reason: format!(
                "members {:?} are not those of shard {} of {} members",
                expected.members, expected.shard, expected.total
            ),
        });
    }
    let part = manifest
        .parent()
        .unwrap_or_else(|| Path::new(""))
        .join(&expected.part);
    let bytes = fs::read(&part).map_err(|e| ManifestError::Part {
        path: part.clone(),
        reason: e.to_string(),
    })?;
    let found = bytes.len() as u64;
    if found != expected.summary.bytes {
        return Err(ManifestError::Size {
            path: part,
            expected: expected.summary.bytes,
            found,
        });
    }
    let crc32 = crc32fast::hash(&bytes);
    if crc32 != expected.summary.crc32 {
        return Err(ManifestError::Checksum {
            path: part,
            expected: expected.summary.crc32,
            found: crc32,
        });
    }
    let lines = bytes.iter().filter(|&&b| b == b'\n').count();
    let rows = lines - usize::from(expected.shard.is_first() && lines > 0);
    if rows != expected.summary.rows {
        return Err(ManifestError::Rows {
            path: part,
            expected: expected.summary.rows,
            found: rows,
        });
    }
    Ok(expected)
}

/// Why a shard's manifest could not be written or read, or why its part does not match it;
/// each names the file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ManifestError {
    /// The manifest could not be written or read (a missing manifest: the shard never
    /// finished).
    #[error("shard manifest {}: {reason}", path.display())]
    Io {
        /// The manifest's path.
        path: PathBuf,
        /// The system's error.
        reason: String,
    },
    /// The manifest lacks a key or holds a value that is not what it must be.
    #[error("shard manifest {} is malformed: {reason}", path.display())]
    Malformed {
        /// The manifest's path.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The part cannot be read (missing).
    #[error("shard part {}: {reason}", path.display())]
    Part {
        /// The part's path.
        path: PathBuf,
        /// The system's error.
        reason: String,
    },
    /// The part has another size than its manifest says (truncated, or written to since).
    #[error("shard part {} has {found} bytes, its manifest says {expected}: truncated or changed", path.display())]
    Size {
        /// The part's path.
        path: PathBuf,
        /// The bytes of the manifest.
        expected: u64,
        /// The bytes of the part.
        found: u64,
    },
    /// The part's CRC-32 differs from its manifest's.
    #[error("shard part {} has CRC-32 {found:#010x}, its manifest says {expected:#010x}: changed", path.display())]
    Checksum {
        /// The part's path.
        path: PathBuf,
        /// The manifest's CRC-32.
        expected: u32,
        /// The part's CRC-32.
        found: u32,
    },
    /// The part has another number of rows than its manifest says.
    #[error("shard part {} has {found} rows, its manifest says {expected}", path.display())]
    Rows {
        /// The part's path.
        path: PathBuf,
        /// The manifest's rows.
        expected: usize,
        /// The part's rows.
        found: usize,
    },
}

/// Writes `text` as a CSV field, quoted (RFC 4180) if it holds a comma, quote or line break.
fn write_text<W: Write>(out: &mut W, text: &str) -> io::Result<()> {
    if text.contains([',', '"', '\n', '\r']) {
        write!(out, "\"{}\"", text.replace('"', "\"\""))
    } else {
        out.write_all(text.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_cover_every_member_once_in_order() {
        for total in [0, 1, 2, 7, 64, 1001] {
            for count in 1..=9 {
                let mut next = 0;
                for k in 1..=count {
                    let block = Shard::new(k, count).unwrap().members(total);
                    assert_eq!(block.start, next, "shard {k}/{count} of {total}");
                    assert!(block.len() <= total / count + 1);
                    assert!(block.len() >= total / count);
                    next = block.end;
                }
                assert_eq!(next, total);
            }
        }
    }

    #[test]
    fn shard_text_is_parsed_or_rejected_with_the_reason() {
        assert_eq!("3/8".parse(), Shard::new(3, 8));
        assert_eq!(" 1 / 1 ".parse(), Ok(Shard::WHOLE));
        for bad in ["", "3", "3/", "/8", "a/8", "3/8/9", "-1/8", "3.0/8"] {
            assert!(
                matches!(bad.parse::<Shard>(), Err(ShardError::Malformed { .. })),
                "{bad:?}"
            );
        }
        for (index, count) in [(0, 8), (9, 8), (1, 0)] {
            assert_eq!(
                format!("{index}/{count}").parse::<Shard>(),
                Err(ShardError::OutOfRange { index, count })
            );
        }
    }

    #[test]
    fn member_seeds_follow_splitmix64_and_are_distinct() {
        // The first three outputs of SplitMix64 seeded with 1234567 (Vigna's reference code).
        let expected = [
            6_457_827_717_110_365_317_u64,
            3_203_168_211_198_807_973,
            9_817_491_932_198_370_423,
        ];
        for (index, &seed) in expected.iter().enumerate() {
            assert_eq!(member_seed(1_234_567, index), seed);
        }
        let mut seeds: Vec<u64> = (0..100_000).map(|i| member_seed(42, i)).collect();
        seeds.sort_unstable();
        seeds.dedup();
        assert_eq!(seeds.len(), 100_000);
    }

    #[test]
    fn zero_threads_is_an_error_not_a_default() {
        let ensemble = Ensemble::new(vec![1, 2]).threads(0);
        assert!(matches!(
            ensemble.map(|m| *m.parameters),
            Err(EnsembleError::Threads { requested: 0, .. })
        ));
    }

    #[test]
    fn the_failure_reported_is_the_lowest_failing_member() {
        let ensemble = Ensemble::new((0..40).collect::<Vec<usize>>()).seed(5);
        for threads in [1, 2, 3] {
            let outcome = ensemble.clone().threads(threads).try_map(|m| {
                if m.parameters % 7 == 3 {
                    Err(format!("member {} refuses", m.parameters))
                } else {
                    Ok(*m.parameters)
                }
            });
            match outcome {
                Err(EnsembleError::Member { index, seed, error }) => {
                    assert_eq!(index, 3);
                    assert_eq!(seed, member_seed(5, 3));
                    assert_eq!(error, "member 3 refuses");
                }
                other => panic!("expected member 3's error, got {other:?}"),
            }
        }
    }

    #[test]
    fn text_cells_are_quoted_when_needed_and_rows_are_checked() {
        let mut csv = EnsembleCsv::new(Vec::new(), Shard::new(2, 2).unwrap(), &["a", "b"]).unwrap();
        csv.row(7, &["x,y".into(), "say \"hi\"".into()]).unwrap();
        assert_eq!(
            csv.row(8, &[Cell::Number(1.0)]).unwrap_err().kind(),
            io::ErrorKind::InvalidInput
        );
        let text = String::from_utf8(csv.into_inner().unwrap()).unwrap();
        assert_eq!(
            text, "7,\"x,y\",\"say \"\"hi\"\"\"\n",
            "no header in shard 2/2"
        );
    }
}
