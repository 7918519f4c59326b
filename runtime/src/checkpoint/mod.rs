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

mod carried;
mod error;
pub(crate) mod file;
mod identity;

pub(crate) use carried::carried_access;
pub use carried::{Carried, CarriedField, CarriedState};
pub use error::CheckpointError;
pub use file::{
    write_atomically, Checkpoint, OutputPosition, SchedulePosition, CRATE_VERSION, FORMAT_VERSION,
};
pub use identity::{fnv1a, short_type_name, IntegratorIdentity, ModelIdentity};

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
            schedule: file::Schedule::EveryStep,
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
