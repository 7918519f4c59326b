//! An [`Ensemble`] of members mapped on a local rayon pool: each [`Member`]'s index, parameters
//! and seed ([`member_seed`]), the [`grid`] of a sweep over two parameters, and the
//! [`EnsembleError`] of a failed member.

use std::convert::Infallible;
use std::ops::Range;

use rayon::prelude::*;

use super::shard::Shard;

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
/// [module documentation](super).
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
