//! E-graph analysis that folds constants, agreeing with the [`Store`](crate::Store)'s folding.

use egg::{Analysis, DidMerge, EGraph, Id};

use crate::expr::{fold_node, Constant, Math};

/// Analysis whose data is the constant value of an e-class, if known.
///
/// Folding only happens when the result is finite, so no e-class ever claims to be infinite or
/// NaN. When two classes with different constants merge (possible only through rounding, e.g.
/// re-associated sums of constants), the existing value is kept instead of panicking.
#[derive(Clone, Copy, Debug, Default)]
pub struct ConstantFold;

impl Analysis<Math> for ConstantFold {
    type Data = Option<Constant>;

    fn make(egraph: &mut EGraph<Math, Self>, enode: &Math, _id: Id) -> Self::Data {
        let value = fold_node(enode, |c| egraph[c].data.map(|k| k.value()))?;
        Constant::new(value)
    }

    fn merge(&mut self, to: &mut Self::Data, from: Self::Data) -> DidMerge {
        match (*to, from) {
            (None, None) => DidMerge(false, false),
            (None, Some(_)) => {
                *to = from;
                DidMerge(true, false)
            }
            (Some(_), None) => DidMerge(false, true),
            (Some(a), Some(b)) => DidMerge(false, a != b),
        }
    }

    fn modify(egraph: &mut EGraph<Math, Self>, id: Id) {
        if let Some(c) = egraph[id].data {
            let added = egraph.add(Math::Num(c));
            egraph.union(id, added);
        }
    }
}
