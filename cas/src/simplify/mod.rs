//! Bounded equality saturation over all outputs of a model at once.
//!
//! The store's smart constructors already fold constants and drop neutral elements; this pass
//! looks for cheaper equivalent forms (factoring, cancellation, integer powers, `sin² + cos²`)
//! across every root in one e-graph, so the rewrites can exploit sharing between outputs. It is
//! a clean-up, not a normalizer: the run is bounded by iteration, node and time limits, and its
//! result is kept only when the emitted code gets strictly cheaper.

pub mod constant_fold;
pub mod cost;
pub mod rules;

use std::time::Duration;

use egg::{EGraph, Extractor, Id, Language, Runner};

use crate::expr::{Math, Store};
use constant_fold::ConstantFold;
use cost::{node_flops, FlopCost};

/// Bounds of one equality-saturation run; all three are always applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimplifyLimits {
    /// Maximum number of rewrite iterations.
    pub iter_limit: usize,
    /// Maximum number of e-nodes in the e-graph.
    pub node_limit: usize,
    /// Maximum wall-clock time of the run.
    pub time_limit: Duration,
}

impl Default for SimplifyLimits {
    /// Returns limits that keep a proc-macro expansion responsive: 8 iterations, 20 000 nodes,
    /// 500 ms.
    fn default() -> Self {
        SimplifyLimits {
            iter_limit: 8,
            node_limit: 20_000,
            time_limit: Duration::from_millis(500),
        }
    }
}

/// Reason why equality saturation stopped, mirroring [`egg::StopReason`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopReason {
    /// No rule could add anything new.
    Saturated,
    /// The iteration limit was reached.
    IterationLimit,
    /// The e-node limit was reached.
    NodeLimit,
    /// The time limit was reached.
    TimeLimit,
    /// The run did not happen (no roots) or stopped for another reason.
    Other,
}

impl From<Option<&egg::StopReason>> for StopReason {
    fn from(reason: Option<&egg::StopReason>) -> Self {
        match reason {
            Some(egg::StopReason::Saturated) => StopReason::Saturated,
            Some(egg::StopReason::IterationLimit(_)) => StopReason::IterationLimit,
            Some(egg::StopReason::NodeLimit(_)) => StopReason::NodeLimit,
            Some(egg::StopReason::TimeLimit(_)) => StopReason::TimeLimit,
            Some(egg::StopReason::Other(_)) | None => StopReason::Other,
        }
    }
}

/// Outcome of [`simplify()`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimplifyReport {
    /// Why the e-graph run stopped.
    pub stop_reason: StopReason,
    /// [`dag_cost`] of the roots before simplification.
    pub cost_before: f64,
    /// [`dag_cost`] of the returned roots.
    pub cost_after: f64,
    /// Whether the simplified roots were kept (they were strictly cheaper).
    pub kept: bool,
}

/// Simplifies `roots` together and returns equivalent roots that are never more expensive.
///
/// All roots go into one e-graph; each is extracted with the flop-count cost and rebuilt in
/// the store, where hash-consing re-shares the extracted terms. The new roots are returned
/// only if their [`dag_cost`] is strictly lower; otherwise the original roots are returned
/// and the nodes built on the way are removed from the store again.
pub fn simplify(
    store: &mut Store,
    roots: &[Id],
    limits: &SimplifyLimits,
) -> (Vec<Id>, SimplifyReport) {
    let cost_before = dag_cost(store, roots);
    let unchanged = |stop_reason| {
        (
            roots.to_vec(),
            SimplifyReport {
                stop_reason,
                cost_before,
                cost_after: cost_before,
                kept: false,
            },
        )
    };
    if roots.is_empty() {
        return unchanged(StopReason::Other);
    }

    let (expr, expr_roots) = store.to_rec_expr(roots);
    let mut egraph: EGraph<Math, ConstantFold> = EGraph::default();
    let mut class_of: Vec<Id> = Vec::with_capacity(expr.len());
    for node in expr.as_ref() {
        let node = node
            .clone()
            .map_children(|c| class_of.get(usize::from(c)).copied().unwrap_or(c));
        class_of.push(egraph.add(node));
    }
    let root_classes: Vec<Id> = expr_roots
        .iter()
        .filter_map(|r| class_of.get(usize::from(*r)).copied())
        .collect();

    let mut runner = Runner::default()
        .with_egraph(egraph)
        .with_iter_limit(limits.iter_limit)
        .with_node_limit(limits.node_limit)
        .with_time_limit(limits.time_limit)
        .run(&rules::rules());
    runner.egraph.rebuild();
    let stop_reason = StopReason::from(runner.stop_reason.as_ref());

    let extractor = Extractor::new(
        &runner.egraph,
        FlopCost {
            egraph: &runner.egraph,
        },
    );
    let old_len = store.len();
    let new_roots: Vec<Id> = root_classes
        .iter()
        .map(|&class| {
            let (_, best) = extractor.find_best(class);
            store.add_rec_expr(&best)
        })
        .collect();
    if new_roots.len() != roots.len() {
        store.truncate(old_len);
        return unchanged(stop_reason);
    }
    let cost_after = dag_cost(store, &new_roots);
    if cost_after < cost_before {
        (
            new_roots,
            SimplifyReport {
                stop_reason,
                cost_before,
                cost_after,
                kept: true,
            },
        )
    } else {
        store.truncate(old_len);
        unchanged(stop_reason)
    }
}

/// Returns the estimated flops of code computing all `roots`, counting each distinct node once.
///
/// This is the cost of the straight-line code [`emit`](crate::emit()) writes, where every
/// shared node is computed once into a `let`.
pub fn dag_cost(store: &Store, roots: &[Id]) -> f64 {
    store
        .reachable(roots)
        .into_iter()
        .map(|id| {
            let node = store.node(id);
            let exponent = match node {
                Math::Powi([_, e]) => store.constant(*e),
                _ => None,
            };
            node_flops(node, exponent)
        })
        .sum()
}
