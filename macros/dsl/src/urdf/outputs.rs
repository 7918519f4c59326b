//! What the generated type of an imported robot offers besides the model's traits: its joints'
//! names and effort limits, their positions and rates at a state of the model, and the
//! model's state at given joint positions and rates (forward kinematics, in maximal
//! coordinates), as expressions the generator emits ([`crate::generate`]'s `robot`).

use std::collections::HashMap;

use mechanism_cas::{directional_derivative, Id, Symbol};
use syn::Ident;

use super::builtins::{Builtins, JointPosition};
use super::kinematics::{self, JointSymbols};
use super::maximal;
use super::options::Formulation;
use super::robot::Robot;
use crate::expr::{Context, Lowerer};
use crate::orientation::Kind;

/// The robot's joint accessors, as expressions in the model's store.
pub struct RobotOutputs {
    /// The moving joints' names in the file.
    pub joints: Vec<String>,
    /// Each joint's `<limit effort>`, infinite where the file gives none.
    pub efforts: Vec<f64>,
    /// Each joint's position at `q`.
    pub positions: Vec<Id>,
    /// Each joint's rate at `(q, v)`: `∇θ · v`.
    pub rates: Vec<Id>,
    /// The symbols of the joints' positions and rates, the arguments of the model's state at
    /// given joint positions.
    pub joint_symbols: Vec<(Symbol, Symbol)>,
    /// Each coordinate of the model at the joints' positions (zero for a coordinate the
    /// robot does not have).
    pub coordinates: Vec<Id>,
    /// Each velocity of the model at the joints' positions and rates.
    pub velocities: Vec<Id>,
    /// The links' names, in the tree's depth-first order.
    pub links: Vec<String>,
    /// Each link's parent link (the root its own).
    pub parents: Vec<usize>,
    /// Each link's origin in the world at `q`.
    pub origins: Vec<[Id; 3]>,
}

/// Builds the accessors of `robot` in the model of `lowerer`, whose coordinates are named
/// `coordinates`.
pub fn outputs(
    robot: &Robot,
    builtins: &Builtins,
    lowerer: &mut Lowerer,
    coordinates: &[Ident],
) -> Option<RobotOutputs> {
    let symbols = lowerer.symbols;
    let mut positions = Vec::new();
    for (_, position) in &builtins.joints {
        positions.push(match position {
            JointPosition::Coordinate(i) => lowerer.store.symbol(symbols.q[*i]),
            JointPosition::Expression(expr) => lowerer.lower(expr, Context::Dynamic)?,
        });
    }
    let rates = positions
        .iter()
        .map(|&p| directional_derivative(lowerer.store, p, &symbols.q, &symbols.v))
        .collect();
    let joint_symbols: Vec<(Symbol, Symbol)> = (0..builtins.joints.len())
        .map(|k| {
            (
                Symbol::from(format!("joint.position.{k}")),
                Symbol::from(format!("joint.rate.{k}")),
            )
        })
        .collect();
    let store = &mut *lowerer.store;
    let zero = store.num(0.0);
    let index: HashMap<String, usize> = coordinates
        .iter()
        .enumerate()
        .map(|(i, c)| (c.to_string(), i))
        .collect();
    let mut values = vec![zero; coordinates.len()];
    match robot.formulation {
        Formulation::Joints => {
            for ((_, position), &(symbol, _)) in builtins.joints.iter().zip(&joint_symbols) {
                if let JointPosition::Coordinate(i) = position {
                    values[*i] = store.symbol(symbol);
                }
            }
        }
        Formulation::Maximal => {
            let arguments: Vec<JointSymbols> = joint_symbols
                .iter()
                .map(|&(position, velocity)| JointSymbols { position, velocity })
                .collect();
            let frames = kinematics::joint_space(robot, store, &arguments, None).poses;
            let bodies = maximal::bodies(robot);
            for body in &bodies.bodies {
                let (_, rotation, origin) = &frames.links[body.top];
                let (position, orientation) = maximal::body_names(robot, body);
                // x = p + R c,  r = R Q.
                for (i, name) in position.iter().enumerate() {
                    let terms: Vec<Id> = (0..3)
                        .map(|k| {
                            let c = store.num(body.com[k]);
                            store.mul(rotation[i][k], c)
                        })
                        .collect();
                    let offset = store.sum(terms);
                    let value = store.add(origin[i], offset);
                    if let Some(&slot) = index.get(&name.to_string()) {
                        values[slot] = value;
                    }
                }
                for (entry, suffix) in Kind::Matrix.suffixes().iter().enumerate() {
                    let (i, j) = (entry / 3, entry % 3);
                    let terms: Vec<Id> = (0..3)
                        .map(|k| {
                            let q = store.num(body.axes[k][j]);
                            store.mul(rotation[i][k], q)
                        })
                        .collect();
                    let value = store.sum(terms);
                    if let Some(&slot) = index.get(&format!("{orientation}_{suffix}")) {
                        values[slot] = value;
                    }
                }
            }
        }
    }
    let (angles, speeds): (Vec<Symbol>, Vec<Symbol>) = joint_symbols.iter().copied().unzip();
    let velocities = values
        .iter()
        .map(|&value| directional_derivative(store, value, &angles, &speeds))
        .collect();
    let efforts = robot
        .moving_joints()
        .map(|joint| joint.effort.unwrap_or(f64::INFINITY))
        .collect();
    let mut parents: Vec<usize> = (0..robot.links.len()).collect();
    for joint in &robot.joints {
        parents[joint.child] = joint.parent;
    }
    Some(RobotOutputs {
        links: robot.links.iter().map(|link| link.name.clone()).collect(),
        parents,
        origins: builtins
            .poses
            .links
            .iter()
            .map(|(_, _, origin)| *origin)
            .collect(),
        joints: builtins
            .joints
            .iter()
            .map(|(name, _)| name.clone())
            .collect(),
        efforts,
        positions,
        rates,
        joint_symbols,
        coordinates: values,
        velocities,
    })
}
