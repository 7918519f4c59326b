//! Why a checkpoint could not be written or resumed from.

use std::io;
use std::path::{Path, PathBuf};

use thiserror::Error;

/// Why a checkpoint could not be written or resumed from; every variant names the file and
/// the part that differs.
#[derive(Debug, Error)]
pub enum CheckpointError {
    /// The file could not be read or written.
    #[error("checkpoint {}: {source}", path.display())]
    Io {
        /// The checkpoint file.
        path: PathBuf,
        /// The error of the file system.
        source: io::Error,
    },
    /// The file is not a whole checkpoint: not one at all, cut short, damaged, or its content
    /// does not fit the run.
    #[error("checkpoint {}: corrupt: {reason}", path.display())]
    Corrupt {
        /// The checkpoint file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The checkpoint was written by another version of the format or of the crate.
    #[error("checkpoint {}: written by {what} {found}, this is {expected}", path.display())]
    VersionMismatch {
        /// The checkpoint file.
        path: PathBuf,
        /// Which version differs: `"checkpoint format"` or `"mechanism-runtime"`.
        what: &'static str,
        /// The checkpoint's version.
        found: String,
        /// This program's version.
        expected: String,
    },
    /// The checkpoint is of a model of another structure.
    #[error(
        "checkpoint {}: written for another model (structure {found:#018x}, this model is \
         {expected:#018x})",
        path.display()
    )]
    ModelMismatch {
        /// The checkpoint file.
        path: PathBuf,
        /// The checkpoint's structural hash.
        found: u64,
        /// This model's.
        expected: u64,
    },
    /// A parameter of the model differs from the checkpoint's.
    #[error(
        "checkpoint {}: parameter `{name}` is {found} in the checkpoint and {expected} in this \
         model",
        path.display()
    )]
    ParameterMismatch {
        /// The checkpoint file.
        path: PathBuf,
        /// The parameter's name.
        name: String,
        /// The checkpoint's value.
        found: String,
        /// This model's value.
        expected: String,
    },
    /// The checkpoint is of another integrator or other settings.
    #[error("checkpoint {}: written by {found}, this run uses {expected}", path.display())]
    IntegratorMismatch {
        /// The checkpoint file.
        path: PathBuf,
        /// The checkpoint's integrator.
        found: String,
        /// This run's.
        expected: String,
    },
    /// Another part of the run differs: the schedule, the columns, the number of coordinates.
    #[error("checkpoint {}: {what} differs: {found} in the checkpoint, {expected} in this run", path.display())]
    RunMismatch {
        /// The checkpoint file.
        path: PathBuf,
        /// What differs.
        what: &'static str,
        /// The checkpoint's.
        found: String,
        /// This run's.
        expected: String,
    },
    /// The run's integrator cannot save what it carries.
    #[error("{integrator} cannot be checkpointed: it does not implement CarriedState")]
    Unsupported {
        /// The integrator.
        integrator: String,
    },
    /// The output could not be brought to the checkpoint's position.
    #[error("checkpoint {}: the output cannot continue: {source}", path.display())]
    Output {
        /// The checkpoint file.
        path: PathBuf,
        /// The sink's error.
        source: io::Error,
    },
}

impl CheckpointError {
    /// Returns the error with its path set to `path` (errors found while decoding have none).
    pub fn at(mut self, file: &Path) -> Self {
        match &mut self {
            CheckpointError::Io { path, .. }
            | CheckpointError::Corrupt { path, .. }
            | CheckpointError::VersionMismatch { path, .. }
            | CheckpointError::ModelMismatch { path, .. }
            | CheckpointError::ParameterMismatch { path, .. }
            | CheckpointError::IntegratorMismatch { path, .. }
            | CheckpointError::RunMismatch { path, .. }
            | CheckpointError::Output { path, .. } => {
                if path.as_os_str().is_empty() {
                    *path = file.to_path_buf();
                }
            }
            CheckpointError::Unsupported { .. } => {}
        }
        self
    }
}

/// Returns a [`CheckpointError::Corrupt`] without a path (the driver adds it).
pub(super) fn corrupt(reason: String) -> CheckpointError {
    CheckpointError::Corrupt {
        path: PathBuf::new(),
        reason,
    }
}
