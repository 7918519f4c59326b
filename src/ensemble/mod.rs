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

mod csv;
mod manifest;
mod members;
mod shard;
#[cfg(test)]
mod tests;

pub use csv::{Cell, EnsembleCsv, PartSummary};
pub use manifest::{verify_shard, ManifestError, ShardManifest};
pub use members::{grid, member_seed, Ensemble, EnsembleError, Member};
pub use shard::{Shard, ShardError};
