//! A [`Shard`] `k/n` of an ensemble's members: the `k`-th of `n` contiguous blocks, parsed from
//! `--shard k/n`.

use std::fmt;
use std::ops::Range;
use std::str::FromStr;

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
