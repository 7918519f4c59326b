//! The lowering stage: a desugared model of either kind into symbolic form, before
//! validation. A fixed-size model is read, its names checked and its expressions lowered
//! ([`crate::expr`]) into the normal form of [`normal_form`] ([`fixed`]); a model with
//! families has its names resolved into kernels in their local slots
//! ([`family::resolve`](crate::family::resolve)).

pub mod fixed;
pub mod normal_form;
pub mod options;

use crate::family::model::FamilyModel;
use crate::orientation::Desugared;
use crate::sections::ModelKind;
use crate::urdf::Robot;

/// A model lowered into symbolic form, of either kind: the stage after the orientations'
/// desugaring and before validation.
pub enum Lowered<'a> {
    /// A fixed-size model in normal form ([`fixed::fixed`]).
    Fixed(Box<fixed::Fixed<'a>>),
    /// A model with families, its names resolved into kernels in their local slots
    /// ([`family::resolve`](crate::family::resolve)).
    Families(Box<FamilyModel>),
}

/// Lowers a desugared model of either kind, as [`ModelKind::of`] tells, with the energies of
/// its imported robot, if any (a fixed-size model's: [`crate::urdf::import`] refuses a model
/// with families).
pub fn model<'a>(desugared: &'a Desugared, robot: Option<&Robot>) -> syn::Result<Lowered<'a>> {
    match ModelKind::of(&desugared.ast) {
        ModelKind::Fixed => {
            fixed::fixed(desugared, robot).map(|fixed| Lowered::Fixed(Box::new(fixed)))
        }
        ModelKind::Families => crate::family::resolve::resolve(&desugared.ast)
            .map(|model| Lowered::Families(Box::new(model))),
    }
}
