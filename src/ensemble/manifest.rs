//! A shard's manifest beside its part ([`ShardManifest`]) and the check of a part against it
//! ([`verify_shard`]), with the [`ManifestError`] that names the file.

use std::fs;
use std::ops::Range;
use std::path::{Path, PathBuf};

use super::csv::PartSummary;
use super::shard::{Shard, ShardError};

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
    /// [`EnsembleCsv::finish`](super::EnsembleCsv::finish).
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
