//! Robots from URDF files: `urdf: { file: "robot.urdf", coordinates: joints }`, imported
//! before the orientations are desugared, so that every later stage sees a plain model.
//!
//! The file is read at compile time ([`file`](mod@file), relative to the crate's manifest
//! directory; the generated code includes its bytes, so a change to the file rebuilds the
//! crate) into a [`Robot`] ([`robot`]). The import then adds to the model what the file says:
//!
//! - a coordinate per moving joint (`revolute`, `continuous`, `prismatic`), named after the
//!   joint, in the depth-first order of the tree from its root (Pinocchio's order);
//! - the run-time parameter `gravity`, the magnitude of the gravity vector (9.81 along −z by
//!   default, `gravity: [x, y, z]` in the options);
//! - a holonomic row `<joint>_mimic: q_j − (multiplier · q_i + offset)` per `<mimic>`;
//! - the Rayleigh dissipation `½ Σ d_j q̇_j²` of the joints' `<dynamics damping>`;
//! - and, in lowering, the kinetic and potential energy of the links ([`kinematics`]), added to
//!   the user's `kinetic` and `potential` if any.
//!
//! The user's own sections extend the robot: more coordinates, rows (a closed loop), forces on
//! the joints' coordinates (actuators, with a run-time parameter each), dissipation.
//! What the file holds but the model leaves out (joint limits, Coulomb friction,
//! transmissions, simulator extensions, calibrations) is a compile error until the user lists
//! it in `ignore: [..]`; a joint type the importer does not model (`floating`, `planar`,
//! `spherical`) is an error naming the joint. Geometry (`<visual>`, `<collision>`,
//! `<material>`) does not enter the dynamics and is skipped.

pub mod builtins;
pub mod file;
pub mod kinematics;
pub mod options;
pub mod robot;

use proc_macro2::{Span, TokenStream};
use quote::quote_spanned;
use syn::{parse_quote_spanned, Expr, Ident};

use crate::ast::{Mechanism, Named, Section, SectionBody};
use crate::errors::Errors;
use crate::parse::SectionKind;
use crate::sections::ModelKind;
pub use robot::Robot;

/// The name of the run-time parameter holding the magnitude of the gravity vector.
pub const GRAVITY: &str = "gravity";

/// A model with its robot imported.
pub struct Import {
    /// The model without its `urdf` section, with the robot's coordinates, parameter, rows
    /// and dissipation added.
    pub ast: Mechanism,
    /// The robot, whose energies lowering adds ([`kinematics`]); `None` without `urdf`.
    pub robot: Option<Robot>,
}

impl Import {
    /// Returns the tokens that make the compiler rebuild the crate when the file changes.
    pub fn tracking(&self) -> TokenStream {
        let Some(robot) = &self.robot else {
            return TokenStream::new();
        };
        let path = robot.path.display().to_string();
        quote_spanned!(robot.file.span()=> const _: &[u8] = include_bytes!(#path);)
    }
}

/// Imports the robot of the `urdf` section, if any; a model without one comes back unchanged.
pub fn import(ast: &Mechanism) -> syn::Result<Import> {
    let sections: Vec<&Section> = ast
        .sections
        .iter()
        .filter(|s| SectionKind::from_keyword(&s.keyword) == Some(SectionKind::Urdf))
        .collect();
    let Some(section) = sections.first() else {
        return Ok(Import {
            ast: ast.clone(),
            robot: None,
        });
    };
    let mut errors = Errors::new();
    for again in &sections[1..] {
        errors.error_spanned(
            &again.keyword,
            "section `urdf` is given twice; a model imports one robot",
        );
    }
    if ModelKind::of(ast) == ModelKind::Families {
        errors.error_spanned(
            &section.keyword,
            "section `urdf` is not available in a model with families yet",
        );
    }
    let robot = options::read(&section.keyword, &section.body, &mut errors)
        .and_then(|options| file::read(&options, &mut errors));
    errors.barrier()?;
    let Some(robot) = robot else {
        return Err(syn::Error::new_spanned(
            &section.keyword,
            "internal: the robot is missing without an error",
        ));
    };
    let ast = augment(ast, &robot, &mut errors);
    errors.finish()?;
    Ok(Import {
        ast,
        robot: Some(robot),
    })
}

/// Returns `ast` without its `urdf` section and with the robot's coordinates, gravity
/// parameter, mimic rows and joint dissipation added to its sections, its vector rows
/// expanded into components ([`builtins::expand_vector_rows`]).
fn augment(ast: &Mechanism, robot: &Robot, errors: &mut Errors) -> Mechanism {
    let span = robot.file.span();
    let coordinates: Vec<Named<()>> = robot
        .moving_joints()
        .map(|joint| named(joint.ident.clone(), ()))
        .collect();
    let magnitude = robot.gravity.iter().map(|g| g * g).sum::<f64>().sqrt();
    let parameters: Vec<Named<Expr>> = (magnitude > 0.0)
        .then(|| named(Ident::new(GRAVITY, span), number(magnitude, span)))
        .into_iter()
        .collect();
    let mimic_rows: Vec<Named<Expr>> = robot
        .joints
        .iter()
        .filter_map(|joint| {
            let mimic = joint.mimic.as_ref()?;
            let this = &joint.ident;
            let followed = &robot.joints[mimic.joint].ident;
            let (multiplier, offset) = (number(mimic.multiplier, span), number(mimic.offset, span));
            let name = Ident::new(
                &format!("{}_mimic", joint.ident.to_string().trim_start_matches("r#")),
                span,
            );
            Some(named(
                name,
                parse_quote_spanned!(span=> #this - (#multiplier * #followed + #offset)),
            ))
        })
        .collect();
    let damped: Vec<Expr> = robot
        .moving_joints()
        .filter(|joint| joint.damping > 0.0)
        .map(|joint| {
            let (ident, damping) = (&joint.ident, number(joint.damping, span));
            parse_quote_spanned!(span=> #damping * dot(#ident).powi(2))
        })
        .collect();
    let dissipation: Option<Expr> =
        (!damped.is_empty()).then(|| parse_quote_spanned!(span=> 0.5 * (#(#damped)+*)));

    let mut sections: Vec<Section> = Vec::new();
    let mut added = [false; 4];
    for section in &ast.sections {
        let kind = SectionKind::from_keyword(&section.keyword);
        if kind == Some(SectionKind::Urdf) {
            continue;
        }
        let mut section = section.clone();
        match (kind, &mut section.body) {
            (Some(SectionKind::Coordinates), SectionBody::Names(names)) if !added[0] => {
                added[0] = true;
                names.splice(0..0, coordinates.iter().cloned());
            }
            (Some(SectionKind::Parameters), SectionBody::Assignments(rows)) if !added[1] => {
                added[1] = true;
                rows.extend(parameters.iter().cloned());
            }
            (Some(SectionKind::Holonomic), SectionBody::Rows(rows)) if !added[2] => {
                added[2] = true;
                builtins::expand_vector_rows(rows, errors);
                rows.extend(mimic_rows.iter().cloned());
            }
            (Some(SectionKind::Dissipation), SectionBody::Expr(expr)) if !added[3] => {
                added[3] = true;
                if let Some(joints) = &dissipation {
                    *expr = parse_quote_spanned!(span=> (#expr) + #joints);
                }
            }
            _ => {}
        }
        sections.push(section);
    }
    let new = |keyword: &str, body: SectionBody| Section {
        keyword: Ident::new(keyword, span),
        body,
        value_span: span,
    };
    if !added[0] && !coordinates.is_empty() {
        sections.insert(0, new("coordinates", SectionBody::Names(coordinates)));
    }
    if !added[1] && !parameters.is_empty() {
        sections.push(new("parameters", SectionBody::Assignments(parameters)));
    }
    if !added[2] && !mimic_rows.is_empty() {
        sections.push(new("holonomic", SectionBody::Rows(mimic_rows)));
    }
    if let (false, Some(dissipation)) = (added[3], dissipation) {
        sections.push(new("dissipation", SectionBody::Expr(dissipation)));
    }
    Mechanism {
        sections,
        ..ast.clone()
    }
}

fn named<T>(name: Ident, value: T) -> Named<T> {
    Named {
        attrs: Vec::new(),
        name,
        index: None,
        value,
    }
}

/// Returns the literal `x` as an expression spanned at `span`, a negative one as `-(|x|)`.
fn number(x: f64, span: Span) -> Expr {
    let magnitude = x.abs();
    if x < 0.0 {
        parse_quote_spanned!(span=> (-#magnitude))
    } else {
        parse_quote_spanned!(span=> #magnitude)
    }
}
