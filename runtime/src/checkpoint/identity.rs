//! Who wrote a checkpoint: the model's identity (structure hash and parameters) and the
//! integrator's (type and settings), compared bit for bit on resume.

use serde::{Deserialize, Serialize};

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
/// [`CheckpointError::ParameterMismatch`](super::CheckpointError::ParameterMismatch) naming it (a parameter family by its name, compared
/// member by member). The saved values let a user rebuild the model from the checkpoint alone
/// ([`Checkpoint::parameters`](super::Checkpoint::parameters)).
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
