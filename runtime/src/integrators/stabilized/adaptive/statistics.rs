//! What an adaptive run reports: its counts and each accepted step.

/// Counts of an adaptive run: the paper's NSTEP is [`steps`](Self::steps).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AdaptiveStatistics {
    /// Steps whose error estimate met the tolerance.
    pub accepted: usize,
    /// Steps rejected by the error test and retried with a smaller step.
    pub rejected: usize,
    /// Solves of the index-1 system (right-hand-side evaluations), including the starting-step
    /// estimate.
    pub evaluations: usize,
}

impl AdaptiveStatistics {
    /// Returns the number of steps including rejected ones ("NSTEP" of Tables 6.3–6.4).
    pub fn steps(&self) -> usize {
        self.accepted + self.rejected
    }

    /// Returns the counts accumulated since `earlier` was taken.
    pub(super) fn since(&self, earlier: &AdaptiveStatistics) -> AdaptiveStatistics {
        AdaptiveStatistics {
            accepted: self.accepted - earlier.accepted,
            rejected: self.rejected - earlier.rejected,
            evaluations: self.evaluations - earlier.evaluations,
        }
    }
}

/// What one accepted adaptive step did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptiveStep {
    /// The step size actually taken.
    pub h: f64,
    /// Attempts rejected before this one was accepted.
    pub rejected: usize,
    /// The scaled error norm of the accepted attempt (`≤ 1`).
    pub error: f64,
    /// Linear systems factored, including the rejected attempts.
    pub factorizations: u32,
}
