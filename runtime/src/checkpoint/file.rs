//! The checkpoint file: its header, its payload ([`Checkpoint`]) and its atomic write.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::error::corrupt;
use super::{Carried, CheckpointError, IntegratorIdentity};

/// The version of the checkpoint format; a file of another format version is refused with
/// [`CheckpointError::VersionMismatch`].
pub const FORMAT_VERSION: u32 = 1;

/// The version of this crate, part of every checkpoint's key.
pub const CRATE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The first eight bytes of every checkpoint file.
const MAGIC: &[u8; 8] = b"MECHCKPT";

/// The length of the header: magic, format version, payload length, CRC-32.
const HEADER: usize = 8 + 4 + 8 + 4;

/// Where the output of a run was when a checkpoint was written, so that a resumed run
/// continues the same file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputPosition {
    /// The rows written.
    pub rows: u64,
    /// The length in bytes of the file, for a sink that writes one byte stream (the CSV): a
    /// resumed run truncates the file to it and appends.
    pub bytes: Option<u64>,
    /// The CRC-32 of those bytes: a resumed run checks that the file it continues is the one
    /// the checkpointed run wrote, not another run's or an edited one.
    pub crc32: Option<u32>,
    /// The number of closed parts, for a sink that writes a dataset of part files.
    pub parts: Option<u64>,
}

/// When [`Simulation`](crate::simulation::Simulation) writes a row of output.
///
/// Every schedule writes the initial state. The step-based schedules write after steps and
/// always write the last step; the time-based ones write at requested times only: a fixed-step
/// method must land on each of them (within
/// [`grid_tolerance`](crate::simulation::grid_tolerance)), an adaptive method with dense
/// output ([`Dopri5`](crate::Dopri5)) evaluates its continuous extension there, and an adaptive
/// method without one shortens its step to land there.
///
/// Named `mechanism_runtime::simulation::Schedule`; it is defined here, with the checkpoint
/// format that stores it, so that the checkpoint layer does not import from the driver above it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Schedule {
    /// After every step.
    EveryStep,
    /// After every `k`-th step (`k ≥ 1`) and after the last one.
    EveryNthStep(usize),
    /// At `t_0, t_0 + Δt, t_0 + 2Δt, …` (each computed as `t_0 + iΔt`, not by summation) and at
    /// the end time.
    Every(f64),
    /// At the listed times: increasing, finite, within `[t_0, t_end]`.
    At(Vec<f64>),
}

/// The schedule's position: the next requested time's index, and whether the end time was
/// written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchedulePosition {
    /// The index of the next requested time (`t_0 + i Δt`, or the `i`-th listed time).
    pub next: u64,
    /// Whether the row at the end time was written.
    pub end_written: bool,
}

/// Everything a run needs to continue from a step boundary, as stored in a checkpoint file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The version of the crate that wrote it ([`CRATE_VERSION`]).
    pub crate_version: String,
    /// The model's [`ModelIdentity::STRUCTURE`](super::ModelIdentity::STRUCTURE).
    pub structure: u64,
    /// The model's parameters ([`ModelIdentity::parameters`](super::ModelIdentity::parameters)).
    pub parameters: Vec<(String, Vec<f64>)>,
    /// The integrator's identity.
    pub integrator: IntegratorIdentity,
    /// What the integrator carries.
    pub carried: Carried,
    /// The start time of the run.
    pub t0: f64,
    /// The time of the state.
    pub t: f64,
    /// The coordinates.
    pub q: Vec<f64>,
    /// The velocities.
    pub v: Vec<f64>,
    /// The number of steps taken.
    pub steps: u64,
    /// The output schedule, as given to the run.
    pub schedule: Schedule,
    /// The schedule's position.
    pub schedule_position: SchedulePosition,
    /// The column names.
    pub columns: Vec<String>,
    /// The output's position.
    pub output: OutputPosition,
}

impl Checkpoint {
    /// Returns the model's parameters as saved, to rebuild the model from the checkpoint.
    pub fn parameters(&self) -> &[(String, Vec<f64>)] {
        &self.parameters
    }

    /// Encodes the checkpoint: header and postcard payload.
    pub fn to_bytes(&self) -> Result<Vec<u8>, CheckpointError> {
        let payload = postcard::to_stdvec(self).map_err(|e| corrupt(e.to_string()))?;
        let mut bytes = Vec::with_capacity(HEADER + payload.len());
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        bytes.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
        bytes.extend_from_slice(&payload);
        Ok(bytes)
    }

    /// Decodes a checkpoint from `bytes`, checking the magic, the format version, the length,
    /// the CRC-32 and the crate version; never panics on bad input.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, CheckpointError> {
        if bytes.len() < HEADER || &bytes[..8] != MAGIC {
            let reason = if bytes.starts_with(MAGIC) || MAGIC.starts_with(bytes) {
                format!("the header is cut short ({} bytes)", bytes.len())
            } else {
                "not a mechanism checkpoint (no MECHCKPT header)".to_string()
            };
            return Err(corrupt(reason));
        }
        let word = |range: std::ops::Range<usize>| -> u64 {
            bytes[range]
                .iter()
                .rev()
                .fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
        };
        let format = word(8..12);
        if format != u64::from(FORMAT_VERSION) {
            return Err(CheckpointError::VersionMismatch {
                path: PathBuf::new(),
                what: "checkpoint format",
                found: format.to_string(),
                expected: FORMAT_VERSION.to_string(),
            });
        }
        let length = word(12..20);
        let crc = word(20..24) as u32;
        let payload = &bytes[HEADER..];
        if payload.len() as u64 != length {
            return Err(corrupt(format!(
                "the payload has {} bytes where the header says {length}: the file was cut \
                 short or appended to",
                payload.len()
            )));
        }
        if crc32fast::hash(payload) != crc {
            return Err(corrupt(
                "the CRC-32 of the payload does not match: the file is damaged".to_string(),
            ));
        }
        let checkpoint: Checkpoint =
            postcard::from_bytes(payload).map_err(|e| corrupt(format!("undecodable: {e}")))?;
        if checkpoint.crate_version != CRATE_VERSION {
            return Err(CheckpointError::VersionMismatch {
                path: PathBuf::new(),
                what: "mechanism-runtime",
                found: checkpoint.crate_version,
                expected: CRATE_VERSION.to_string(),
            });
        }
        Ok(checkpoint)
    }

    /// Reads and decodes the checkpoint at `path` ([`from_bytes`](Self::from_bytes)).
    pub fn read(path: &Path) -> Result<Self, CheckpointError> {
        let bytes = fs::read(path).map_err(|source| CheckpointError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_bytes(&bytes).map_err(|e| e.at(path))
    }

    /// Writes the checkpoint to `path` atomically ([`write_atomically`]).
    pub fn write(&self, path: &Path) -> Result<(), CheckpointError> {
        let bytes = self.to_bytes().map_err(|e| e.at(path))?;
        write_atomically(path, &bytes).map_err(|source| CheckpointError::Io {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Checks that the model of identity `structure` with `parameters` is the checkpoint's.
    pub fn check_model(
        &self,
        structure: u64,
        parameters: &[(String, Vec<f64>)],
    ) -> Result<(), CheckpointError> {
        if structure != self.structure {
            return Err(CheckpointError::ModelMismatch {
                path: PathBuf::new(),
                found: self.structure,
                expected: structure,
            });
        }
        let same = |a: &[f64], b: &[f64]| {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
        };
        for (name, values) in parameters {
            match self.parameters.iter().find(|(saved, _)| saved == name) {
                Some((_, saved)) if same(saved, values) => {}
                Some((_, saved)) => {
                    return Err(CheckpointError::ParameterMismatch {
                        path: PathBuf::new(),
                        name: name.clone(),
                        found: format!("{saved:?}"),
                        expected: format!("{values:?}"),
                    })
                }
                None => {
                    return Err(CheckpointError::ParameterMismatch {
                        path: PathBuf::new(),
                        name: name.clone(),
                        found: "nothing".to_string(),
                        expected: format!("{values:?}"),
                    })
                }
            }
        }
        if let Some((name, _)) = self
            .parameters
            .iter()
            .find(|(saved, _)| !parameters.iter().any(|(name, _)| name == saved))
        {
            return Err(CheckpointError::ParameterMismatch {
                path: PathBuf::new(),
                name: name.clone(),
                found: "a parameter".to_string(),
                expected: "no such parameter".to_string(),
            });
        }
        Ok(())
    }
}

/// Writes `bytes` to `path` so that a reader sees either the old file or the new one, whole:
/// into `path.tmp`, synced to disk, renamed over `path` (atomic on POSIX file systems), and
/// the directory synced so that the rename itself survives a power cut (best effort: not
/// every platform can open a directory).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    {
        let mut file = fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
    }
    fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        if let Ok(dir) = fs::File::open(dir) {
            let _ = dir.sync_all();
        }
    }
    Ok(())
}
