//! Flop-count cost model shared by e-graph extraction and [`dag_cost`](super::dag_cost).
//!
//! The weights estimate the cost of the emitted `f64` code: one for `+ - *`, more for
//! division and square roots, a libm call for transcendental functions, and the
//! square-and-multiply count for integer powers (which LLVM expands for constant exponents).

use egg::{CostFunction, EGraph, Id, Language};

use super::constant_fold::ConstantFold;
use crate::expr::Math;

/// Cost of a real division.
const DIV: f64 = 4.0;
/// Cost of a square root.
const SQRT: f64 = 5.0;
/// Cost of a call to a transcendental function or `powf`.
const CALL: f64 = 20.0;

/// Returns the estimated flops of one node, given the exponent of a [`Math::Powi`] node.
pub fn node_flops(node: &Math, powi_exponent: Option<f64>) -> f64 {
    match node {
        Math::Num(_) | Math::Symbol(_) => 0.0,
        Math::Add(_) | Math::Sub(_) | Math::Mul(_) => 1.0,
        Math::Neg(_) => 0.5,
        Math::Abs(_) | Math::Min(_) | Math::Max(_) => 1.0,
        // Two comparisons and a select.
        Math::Signum(_) => 2.0,
        Math::Div(_) => DIV,
        Math::Sqrt(_) => SQRT,
        Math::Powi(_) => match powi_exponent {
            Some(n) => powi_flops(n),
            None => CALL,
        },
        Math::Pow(_)
        | Math::Sin(_)
        | Math::Cos(_)
        | Math::Tan(_)
        | Math::Exp(_)
        | Math::Ln(_)
        | Math::Asin(_)
        | Math::Acos(_)
        | Math::Atan(_)
        | Math::Atan2(_)
        | Math::Sinh(_)
        | Math::Cosh(_)
        | Math::Tanh(_) => CALL,
    }
}

/// Returns the multiplications of square-and-multiply for `x^n`, plus a division if `n < 0`.
fn powi_flops(n: f64) -> f64 {
    let m = n.abs();
    if !(m >= 1.0 && m < 2f64.powi(31)) {
        return if m == 0.0 { 0.0 } else { CALL };
    }
    let m = m as u32;
    let squarings = 31 - m.leading_zeros();
    let multiplies = f64::from(squarings + m.count_ones() - 1);
    if n < 0.0 {
        multiplies + DIV
    } else {
        multiplies
    }
}

/// Extraction cost: the flops of the extracted tree (shared nodes are counted per use, which
/// is what egg's greedy extractor can optimize; the DAG cost is compared afterwards).
pub struct FlopCost<'a> {
    /// E-graph whose constant analysis gives the exponents of integer powers.
    pub egraph: &'a EGraph<Math, ConstantFold>,
}

impl CostFunction<Math> for FlopCost<'_> {
    type Cost = f64;

    fn cost<C>(&mut self, enode: &Math, mut costs: C) -> f64
    where
        C: FnMut(Id) -> f64,
    {
        let exponent = match enode {
            Math::Powi([_, e]) => self.egraph[*e].data.map(|c| c.value()),
            _ => None,
        };
        let own = node_flops(enode, exponent);
        enode.fold(own, |sum, c| sum + costs(c))
    }
}
