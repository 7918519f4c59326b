//! What an integrator carries between steps, as named fields of numbers.

use serde::{Deserialize, Serialize};

use super::error::corrupt;
use super::{CheckpointError, IntegratorIdentity};

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
