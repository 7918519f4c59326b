//! What [`AdaptiveRk`] carries between steps, for checkpoints.

use nalgebra::SVector;

use super::{AdaptiveRk, AdaptiveStatistics, CarriedStage};
use crate::checkpoint::{fnv1a, Carried, CarriedState, CheckpointError, IntegratorIdentity};

/// The controller's proposal, the first-same-as-last stage and the statistics: the proposal
/// and the stage decide the next step's bits (a recomputed last stage is evaluated at the
/// accepted point, the carried one at the stage's, which differ after post-stabilization),
/// the statistics are printed at the end of a run. The continuous extension of the last step
/// is not saved: the driver interpolates only inside a step it has just taken.
impl<const N: usize, const M: usize, const S: usize> CarriedState for AdaptiveRk<N, M, S> {
    fn identity(&self) -> IntegratorIdentity {
        let configuration = format!(
            "{:?}{:?}{:?}{:?}",
            self.tableau, self.rhs.baumgarte, self.stabilization, self.metric
        );
        IntegratorIdentity::new(format!(
            "AdaptiveRk<{N}, {M}, {S}> [{:?}, {:?}, tableau and Baumgarte {:016x}]",
            self.stabilization,
            self.metric,
            fnv1a(configuration.as_bytes(), 0)
        ))
        .setting("rtol", self.rtol)
        .setting("atol", self.atol)
        .setting("safety", self.safety)
        .setting("min_factor", self.min_factor)
        .setting("max_factor", self.max_factor)
        .setting("max_step", self.max_step)
        .setting("initial_step", self.initial_step.unwrap_or(-1.0))
    }

    fn save(&self, out: &mut Carried) {
        out.put("proposal", self.proposal.as_slice());
        match &self.carried {
            Some(stage) => {
                out.put("stage.t", &[stage.t]);
                out.put("stage.q", stage.q.as_slice());
                out.put("stage.v", stage.v.as_slice());
                out.put("stage.acceleration", stage.acceleration.as_slice());
            }
            None => out.put("stage.t", &[]),
        }
        let s = &self.statistics;
        out.put_words(
            "statistics",
            &[s.accepted as u64, s.rejected as u64, s.evaluations as u64],
        );
    }

    fn restore(&mut self, from: &Carried) -> Result<(), CheckpointError> {
        let proposal = match from.values("proposal", 1) {
            Ok(h) => Some(h[0]),
            Err(_) => from.values("proposal", 0).map(|_| None)?,
        };
        let stage = match from.values("stage.t", 1) {
            Ok(t) => Some(CarriedStage {
                t: t[0],
                q: SVector::from_column_slice(from.values("stage.q", N)?),
                v: SVector::from_column_slice(from.values("stage.v", N)?),
                acceleration: SVector::from_column_slice(from.values("stage.acceleration", N)?),
            }),
            Err(_) => from.values("stage.t", 0).map(|_| None)?,
        };
        let words = from.words("statistics", 3)?;
        let count = |w: u64| usize::try_from(w).unwrap_or(usize::MAX);
        self.proposal = proposal;
        self.carried = stage;
        self.statistics = AdaptiveStatistics {
            accepted: count(words[0]),
            rejected: count(words[1]),
            evaluations: count(words[2]),
        };
        self.dense = None;
        Ok(())
    }
}
