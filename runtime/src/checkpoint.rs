//! Checkpoints: everything the next step of a run depends on, in a file a run resumes from bit
//! for bit.
//!
//! A week-long run on a cluster is killed by its time limit, a node failure or a Ctrl-C; the
//! user wants to start it again from where it was and get the file the uninterrupted run would
//! have written, byte for byte. That needs, besides `t`, `q`, `v` and the step count, whatever
//! the integrator carries from one step to the next ([`CarriedState`]: SHAKE's and RATTLE's
//! multipliers, the Z&S family's carried acceleration and energy guard, the Langevin noise
//! stream's position, DOPRI5's step-size controller and first-same-as-last stage), the model
//! it ran ([`ModelIdentity`]: a hash of its structure and its parameters), where the output
//! was (rows, bytes of the CSV) and where the schedule was. The driver writes and reads the
//! file (`Simulation::checkpoint_every`, `Simulation::resume_from` in
//! [`simulation`](crate::simulation)); this module holds the pieces the integrators and the
//! generated models implement, and the file format.
//!
//! # Which integrators
//!
//! [`CarriedState`] is implemented by SPOOK, RATTLE and SHAKE on both tiers; the carried
//! scheme behind Verlet, push-forward Newmark and the Zhang–Skeel family (Z&S, Z&Ss, stiff
//! Z&Ss) on both tiers; Newmark and one-iteration Newmark on both tiers; Livens; RK4;
//! symplectic Euler; GLA ([`Langevin`](crate::Langevin), [`SparseLangevin`](crate::SparseLangevin))
//! around any of these; and [`AdaptiveRk`](crate::integrators::stabilized::AdaptiveRk)
//! (DOPRI5). The fixed-step stabilized Runge–Kutta methods, the nonholonomic integrators
//! (discrete Lagrange–d'Alembert, Cortés–Martínez, midpoint DLA) and the Lie-group ones do not
//! implement it yet: `Simulation::checkpoint_every` refuses them with
//! [`CheckpointError::Unsupported`] before the run.
//!
//! # The file
//!
//! ```text
//! magic "MECHCKPT" · format version (u32 LE) · payload length (u64 LE) · CRC-32 of the payload (u32 LE) · payload
//! ```
//!
//! The payload is a [`Checkpoint`] encoded with postcard (a maintained, compact serde format
//! whose wire format is stable since its 1.0; bincode 1.x/2.x are flagged unmaintained). The
//! header lets a reader say *which* file it was given before decoding anything: not a
//! checkpoint (`Corrupt`), a checkpoint of another format version (`VersionMismatch`), cut
//! short by a full disk or a copy that stopped (`Corrupt`, from the length), or with flipped
//! bits (`Corrupt`, from the CRC). Decoding never panics on bad bytes: postcard returns an
//! error, and every length inside is checked against the run before it is used.
//!
//! A checkpoint is written to `FILE.tmp`, synced to disk, and renamed over `FILE`
//! ([`write_atomically`]): a kill while writing leaves the previous checkpoint whole.
//!
//! # What must match to resume
//!
//! The key of a checkpoint is the crate version, the format version, the model's structural
//! hash and parameters, the integrator's identity (its type and every setting that changes its
//! results: `h`, `β`, `ε`, `τ`, tolerances, …), the schedule and the columns. Any difference
//! is a typed [`CheckpointError`] naming the part that differs, never a run that silently mixes
//! two setups. The crate version must be equal, not merely compatible: a patch release may
//! change the rounding of a step, and the promise is bit-for-bit continuation. The end time
//! may differ (a run can be extended).

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Implements the checkpoint methods of [`Integrator`](crate::Integrator) (or the sparse
/// tier's) for an integrator that implements [`CarriedState`].
macro_rules! carried_access {
    () => {
        fn carried_identity(&self) -> Option<$crate::checkpoint::IntegratorIdentity> {
            Some($crate::checkpoint::CarriedState::identity(self))
        }

        fn save_carried(&self, out: &mut $crate::checkpoint::Carried) {
            $crate::checkpoint::CarriedState::save(self, out)
        }

        fn restore_carried(
            &mut self,
            from: &$crate::checkpoint::Carried,
        ) -> Result<(), $crate::checkpoint::CheckpointError> {
            $crate::checkpoint::CarriedState::restore(self, from)
        }
    };
}
pub(crate) use carried_access;

/// The version of the checkpoint format; a file of another format version is refused with
/// [`CheckpointError::VersionMismatch`].
pub const FORMAT_VERSION: u32 = 1;

/// The version of this crate, part of every checkpoint's key.
pub const CRATE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The first eight bytes of every checkpoint file.
const MAGIC: &[u8; 8] = b"MECHCKPT";

/// The length of the header: magic, format version, payload length, CRC-32.
const HEADER: usize = 8 + 4 + 8 + 4;

/// A model's identity for checkpoints: a hash of its structure, fixed when it was compiled, and
/// its parameters, read when a run starts.
///
/// `mechanism!` implements it for every model: [`STRUCTURE`](Self::STRUCTURE) is a 64-bit
/// FNV-1a hash of the invocation's tokens with doc comments removed, so it is the same in every
/// build and changes when any coordinate, parameter default, energy, constraint or integrator
/// list changes. A hand-written model implements it by hand (any constant that changes with the
/// model's equations).
///
/// Parameters are *saved and verified*, not restored: the run borrows its model, so a resumed
/// run steps the model the caller built; a parameter whose bits differ from the checkpoint's is
/// [`CheckpointError::ParameterMismatch`] naming it (a parameter family by its name, compared
/// member by member). The saved values let a user rebuild the model from the checkpoint alone
/// ([`Checkpoint::parameters`]).
pub trait ModelIdentity {
    /// The structural hash of the model.
    const STRUCTURE: u64;

    /// Returns the model's parameters by name: a scalar as one value, a parameter family as its
    /// members in order.
    fn parameters(&self) -> Vec<(String, Vec<f64>)>;
}

/// A penalized model is the model with the penalty `ω` as one more parameter; its structure
/// hash is the model's mixed with a tag, so that a checkpoint of the hard-constraint model is
/// not resumed on the penalized one.
impl<Model: ModelIdentity> ModelIdentity for crate::model::Penalized<Model> {
    const STRUCTURE: u64 = fnv1a(b"penalized", Model::STRUCTURE);

    fn parameters(&self) -> Vec<(String, Vec<f64>)> {
        let mut parameters = self.model.parameters();
        parameters.push(("penalty.omega".to_string(), vec![self.omega]));
        parameters
    }
}

/// Returns the 64-bit FNV-1a hash of `bytes`, continuing from `seed` (`0` for a fresh hash:
/// the standard offset basis is used then); `const`, so that a structure hash can be computed
/// at compile time.
pub const fn fnv1a(bytes: &[u8], seed: u64) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0100_0000_01b3;
    let mut hash = if seed == 0 { OFFSET } else { seed };
    let mut i = 0;
    while i < bytes.len() {
        hash ^= bytes[i] as u64;
        hash = hash.wrapping_mul(PRIME);
        i += 1;
    }
    hash
}

/// Returns the name of the type `T` without module paths (`CarriedScheme<CarriedDense<4>,
/// ImplicitAcceleration<StiffHessian>>`), for an integrator's identity: the paths are where
/// a type lives, not what it computes.
pub fn short_type_name<T: ?Sized>() -> String {
    let full = std::any::type_name::<T>();
    let mut out = String::with_capacity(full.len());
    let mut token = String::new();
    for c in full.chars().chain(std::iter::once(' ')) {
        if c.is_alphanumeric() || c == '_' || c == ':' {
            token.push(c);
        } else {
            out.push_str(token.rsplit("::").next().unwrap_or(&token));
            token.clear();
            out.push(c);
        }
    }
    out.pop();
    out
}

/// Which integrator a checkpoint was written by: its name and the settings that change its
/// results, compared bit for bit on resume.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IntegratorIdentity {
    /// The integrator's name, e.g. `"Spook"`, `"SparseLangevin(SparseZhangSkeelStiff)"`.
    pub name: String,
    /// The settings by name, e.g. `("h", 0.01)`, `("beta", 0.3)`.
    pub settings: Vec<(String, f64)>,
}

impl IntegratorIdentity {
    /// Starts the identity of the integrator `name`.
    pub fn new(name: impl Into<String>) -> Self {
        IntegratorIdentity {
            name: name.into(),
            settings: Vec::new(),
        }
    }

    /// Adds the setting `name = value`.
    pub fn setting(mut self, name: &str, value: f64) -> Self {
        self.settings.push((name.to_string(), value));
        self
    }

    /// Returns whether `other` names the same integrator with the same settings, bit for bit.
    pub fn same_as(&self, other: &Self) -> bool {
        self.name == other.name
            && self.settings.len() == other.settings.len()
            && self
                .settings
                .iter()
                .zip(&other.settings)
                .all(|((a, x), (b, y))| a == b && x.to_bits() == y.to_bits())
    }
}

impl std::fmt::Display for IntegratorIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.name)?;
        for (i, (name, value)) in self.settings.iter().enumerate() {
            let separator = if i == 0 { " (" } else { ", " };
            write!(f, "{separator}{name} = {value:?}")?;
        }
        if !self.settings.is_empty() {
            write!(f, ")")?;
        }
        Ok(())
    }
}

/// What an integrator carries from one step to the next besides `t`, `q` and `v`, as named
/// fields of numbers ([`Carried`]).
///
/// # What counts
///
/// Everything the next step reads, or the next row shows, that is not in the state: a carried
/// acceleration (whose reuse saves a factorization and whose recomputation might not be bit
/// for bit the same), last multipliers (written as columns), SHAKE's and RATTLE's start point,
/// an energy guard's reference energy and scale (they decide whether a later step fails), a
/// random stream's position, a step-size controller's proposal. A warm start that changes the
/// bits of the next step is state. Buffers that each step overwrites before reading are not.
///
/// # Why a trait of named numbers
///
/// The driver holds integrators of either tier, boxed or not, so it reaches this trait through
/// the object-safe methods [`Integrator::carried_identity`](crate::Integrator::carried_identity),
/// `save_carried` and `restore_carried` (of [`SparseIntegrator`](crate::SparseIntegrator) too),
/// which an integrator implementing this trait forwards to it and a wrapper such as
/// [`Langevin`](crate::Langevin) composes with its inner integrator's. Named fields make a
/// checkpoint readable and a mismatch (a field missing, a vector of the wrong length) an error
/// that names the field. `restore` checks every field before it changes anything, so a failed
/// restore leaves the integrator as it was.
pub trait CarriedState {
    /// Returns the integrator's identity: its name and the settings that change its results.
    fn identity(&self) -> IntegratorIdentity;

    /// Writes what the integrator carries into `out`.
    fn save(&self, out: &mut Carried);

    /// Restores what [`save`](Self::save) wrote; fails with
    /// [`CheckpointError::Corrupt`] naming a field that is missing or has the wrong length,
    /// leaving the integrator unchanged.
    fn restore(&mut self, from: &Carried) -> Result<(), CheckpointError>;
}

/// One named field of [`Carried`]: numbers and words (flags, counters, random-stream
/// positions).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CarriedField {
    /// The field's name, unique in its record.
    pub name: String,
    /// Its floating-point values.
    pub values: Vec<f64>,
    /// Its integer values.
    pub words: Vec<u64>,
}

/// The record an integrator's [`CarriedState`] writes: named fields, in the order written.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Carried {
    /// The fields.
    pub fields: Vec<CarriedField>,
}

impl Carried {
    /// Adds the field `name` with the numbers `values`.
    pub fn put(&mut self, name: &str, values: &[f64]) {
        self.fields.push(CarriedField {
            name: name.to_string(),
            values: values.to_vec(),
            words: Vec::new(),
        });
    }

    /// Adds the field `name` with the words `words`.
    pub fn put_words(&mut self, name: &str, words: &[u64]) {
        self.fields.push(CarriedField {
            name: name.to_string(),
            values: Vec::new(),
            words: words.to_vec(),
        });
    }

    /// Adds the flag `name`.
    pub fn put_flag(&mut self, name: &str, flag: bool) {
        self.put_words(name, &[u64::from(flag)]);
    }

    /// Adds the fields of `inner` with `prefix.` before their names (a wrapped integrator's).
    pub fn put_nested(&mut self, prefix: &str, inner: Carried) {
        for mut field in inner.fields {
            field.name = format!("{prefix}.{}", field.name);
            self.fields.push(field);
        }
    }

    /// Returns the fields whose names start with `prefix.`, without it (what
    /// [`put_nested`](Self::put_nested) added).
    pub fn nested(&self, prefix: &str) -> Carried {
        let start = format!("{prefix}.");
        Carried {
            fields: self
                .fields
                .iter()
                .filter_map(|field| {
                    let name = field.name.strip_prefix(&start)?;
                    Some(CarriedField {
                        name: name.to_string(),
                        ..field.clone()
                    })
                })
                .collect(),
        }
    }

    fn field(&self, name: &str) -> Result<&CarriedField, CheckpointError> {
        self.fields
            .iter()
            .find(|field| field.name == name)
            .ok_or_else(|| corrupt(format!("the integrator's field `{name}` is missing")))
    }

    /// Returns the numbers of the field `name`, which must have `len` of them.
    pub fn values(&self, name: &str, len: usize) -> Result<&[f64], CheckpointError> {
        let values = &self.field(name)?.values;
        if values.len() == len {
            Ok(values)
        } else {
            Err(corrupt(format!(
                "the integrator's field `{name}` has {} numbers where this run has {len}",
                values.len()
            )))
        }
    }

    /// Returns the words of the field `name`, which must have `len` of them.
    pub fn words(&self, name: &str, len: usize) -> Result<&[u64], CheckpointError> {
        let words = &self.field(name)?.words;
        if words.len() == len {
            Ok(words)
        } else {
            Err(corrupt(format!(
                "the integrator's field `{name}` has {} words where this run has {len}",
                words.len()
            )))
        }
    }

    /// Returns the flag `name`.
    pub fn flag(&self, name: &str) -> Result<bool, CheckpointError> {
        match self.words(name, 1)? {
            [0] => Ok(false),
            [1] => Ok(true),
            _ => Err(corrupt(format!(
                "the integrator's flag `{name}` is not 0 or 1"
            ))),
        }
    }

    /// Returns the number of the one-number field `name`.
    pub fn scalar(&self, name: &str) -> Result<f64, CheckpointError> {
        Ok(self.values(name, 1)?[0])
    }
}

/// Returns a [`CheckpointError::Corrupt`] without a path (the driver adds it).
fn corrupt(reason: String) -> CheckpointError {
    CheckpointError::Corrupt {
        path: PathBuf::new(),
        reason,
    }
}

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
    /// The model's [`ModelIdentity::STRUCTURE`].
    pub structure: u64,
    /// The model's parameters ([`ModelIdentity::parameters`]).
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
    pub schedule: crate::simulation::Schedule,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Checkpoint {
        let mut carried = Carried::default();
        carried.put("a", &[1.0, 2.0]);
        carried.put_flag("ok", true);
        Checkpoint {
            crate_version: CRATE_VERSION.to_string(),
            structure: 42,
            parameters: vec![("m".into(), vec![1.0])],
            integrator: IntegratorIdentity::new("Test").setting("h", 0.1),
            carried,
            t0: 0.0,
            t: 1.0,
            q: vec![1.0],
            v: vec![2.0],
            steps: 10,
            schedule: crate::simulation::Schedule::EveryStep,
            schedule_position: SchedulePosition::default(),
            columns: vec!["t".into()],
            output: OutputPosition::default(),
        }
    }

    #[test]
    fn round_trips_and_refuses_every_cut_and_every_flipped_byte() {
        let checkpoint = sample();
        let bytes = checkpoint.to_bytes().unwrap();
        assert_eq!(Checkpoint::from_bytes(&bytes).unwrap(), checkpoint);
        for len in 0..bytes.len() {
            let error = Checkpoint::from_bytes(&bytes[..len]).unwrap_err();
            assert!(matches!(error, CheckpointError::Corrupt { .. }), "{error}");
        }
        for i in 0..bytes.len() {
            let mut damaged = bytes.clone();
            damaged[i] ^= 0x10;
            let error = Checkpoint::from_bytes(&damaged).unwrap_err();
            assert!(
                matches!(
                    error,
                    CheckpointError::Corrupt { .. } | CheckpointError::VersionMismatch { .. }
                ),
                "byte {i}: {error}"
            );
        }
    }

    #[test]
    fn another_version_is_named() {
        let mut checkpoint = sample();
        checkpoint.crate_version = "0.0.0-other".into();
        let bytes = checkpoint.to_bytes().unwrap();
        let error = Checkpoint::from_bytes(&bytes).unwrap_err();
        assert!(
            matches!(
                error,
                CheckpointError::VersionMismatch {
                    what: "mechanism-runtime",
                    ..
                }
            ),
            "{error}"
        );
        let mut bytes = sample().to_bytes().unwrap();
        bytes[8] = 99;
        let error = Checkpoint::from_bytes(&bytes).unwrap_err();
        assert!(
            error.to_string().contains("checkpoint format 99"),
            "{error}"
        );
    }

    #[test]
    fn model_and_parameters_are_checked_by_name() {
        let checkpoint = sample();
        assert!(checkpoint
            .check_model(42, &[("m".into(), vec![1.0])])
            .is_ok());
        let error = checkpoint
            .check_model(43, &[("m".into(), vec![1.0])])
            .unwrap_err();
        assert!(matches!(error, CheckpointError::ModelMismatch { .. }));
        let error = checkpoint
            .check_model(42, &[("m".into(), vec![1.5])])
            .unwrap_err();
        assert!(error.to_string().contains("parameter `m`"), "{error}");
    }
}
