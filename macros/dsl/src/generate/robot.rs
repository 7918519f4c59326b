//! The joint accessors of a robot imported from a URDF file ([`crate::urdf::outputs`]): an
//! inherent `impl` with the joints' names and effort limits, their positions and rates at a
//! state, and the state at given joint positions and rates.

use mechanism_cas::{emit, Output};
use proc_macro2::{Literal, TokenStream};
use quote::quote;

use super::{allow_lints, runtime, Code};
use crate::urdf::outputs::RobotOutputs;

impl Code<'_> {
    /// Emits the accessors of the model's imported robot.
    pub(super) fn robot(&self, robot: &RobotOutputs) -> TokenStream {
        let (rt, allow) = (runtime(), allow_lints());
        let name = &self.model.name;
        let n = Literal::usize_unsuffixed(self.model.dof());
        let j = Literal::usize_unsuffixed(robot.joints.len());
        let joints = &robot.joints;
        let efforts = robot.efforts.iter().map(|&e| {
            if e.is_finite() {
                let e = Literal::f64_suffixed(e);
                quote!(#e)
            } else {
                quote!(f64::INFINITY)
            }
        });
        let l = Literal::usize_unsuffixed(robot.links.len());
        let links = &robot.links;
        let parents = robot.parents.iter().map(|&p| Literal::usize_unsuffixed(p));
        let origins: Vec<Output> = robot
            .origins
            .iter()
            .enumerate()
            .flat_map(|(k, origin)| {
                let k = Literal::usize_unsuffixed(k);
                origin.iter().enumerate().map(move |(i, &value)| {
                    let i = Literal::usize_unsuffixed(i);
                    Output {
                        target: quote!(out[#k][#i]),
                        value,
                    }
                })
            })
            .collect();
        let origins = self.body(origins, &[]);
        let positions = self.body(self.vector(&quote!(out), &robot.positions), &[]);
        let rates = self.body(self.vector(&quote!(out), &robot.rates), &[]);
        // The state's expressions read the joints' positions and rates as arguments.
        let mut symbols = self.symbols.clone();
        for (k, &(position, rate)) in robot.joint_symbols.iter().enumerate() {
            let k = Literal::usize_unsuffixed(k);
            symbols.insert(position, quote!(positions[#k]));
            symbols.insert(rate, quote!(rates[#k]));
        }
        let symbol = |s| {
            symbols
                .get(&s)
                .cloned()
                .unwrap_or_else(|| quote!(::core::f64::NAN))
        };
        let mut outputs: Vec<Output> = self.vector(&quote!(state.q), &robot.coordinates);
        outputs.extend(self.vector(&quote!(state.v), &robot.velocities));
        let state = emit(self.store(), &outputs, &symbol, &self.options);
        quote! {
            #allow
            impl #name {
                /// The robot's moving joints, by their names in the URDF file, in the order of
                /// [`Self::joint_positions`].
                pub const JOINTS: [&'static str; #j] = [#(#joints),*];

                /// Each joint's `<limit effort>` in the URDF file (N·m for a revolute joint, N
                /// for a prismatic one; infinite where the file gives none), for a controller
                /// to respect: the model does not clip forces.
                pub const JOINT_EFFORTS: [f64; #j] = [#(#efforts),*];

                /// The robot's links, by their names in the URDF file, in the tree's
                /// depth-first order from its root.
                pub const LINKS: [&'static str; #l] = [#(#links),*];

                /// Each link's parent in [`Self::LINKS`] (the root its own).
                pub const LINK_PARENTS: [usize; #l] = [#(#parents),*];

                /// Each link's origin (its frame's, the parent joint's point) in the world
                /// at `q`, in the order of [`Self::LINKS`].
                pub fn link_origins(&self, q: &#rt::SVector<f64, #n>) -> [[f64; 3]; #l] {
                    let mut out = [[0.0; 3]; #l];
                    #origins
                    out
                }

                /// The joints' positions (angles in radians, offsets in metres) at `q`.
                pub fn joint_positions(&self, q: &#rt::SVector<f64, #n>) -> [f64; #j] {
                    let mut out = [0.0; #j];
                    #positions
                    out
                }

                /// The joints' rates at `(q, v)`.
                pub fn joint_rates(
                    &self,
                    q: &#rt::SVector<f64, #n>,
                    v: &#rt::SVector<f64, #n>,
                ) -> [f64; #j] {
                    let mut out = [0.0; #j];
                    #rates
                    out
                }

                /// The state at time zero with the joints at `positions`, moving at `rates`
                /// (the model's other coordinates zero): in maximal coordinates, each body's
                /// place and rotation by forward kinematics.
                pub fn state_from_joints(
                    &self,
                    positions: &[f64; #j],
                    rates: &[f64; #j],
                ) -> #rt::State<#n> {
                    let mut state = #rt::State::<#n>::new(0.0, [0.0; #n], [0.0; #n]);
                    #state
                    state
                }
            }
        }
    }
}
