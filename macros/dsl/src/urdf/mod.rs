//! Robots from URDF files: `urdf: "robot.urdf"` or
//! `urdf: { file: "robot.urdf", coordinates: joints, gravity: [..], ignore: [..] }`, imported
//! before the orientations are desugared, so that every later stage sees a plain model.
//!
//! The file is read at compile time ([`file`](mod@file), relative to the crate's manifest
//! directory; the generated code includes its bytes, so a change to the file rebuilds the
//! crate) into a [`Robot`] ([`robot`]). The import then adds to the model what the file says,
//! in one of two formulations:
//!
//! - **maximal coordinates** (the default, [`maximal`]): each body — a moving link and the
//!   links welded to it — its centre of mass and the rotation matrix of its principal axes
//!   (an `orientations` entry of kind `matrix`), its kinetic and potential energy in the plain
//!   language, and each joint's rows written with the built-ins; a constant mass matrix;
//! - **joint coordinates** (`coordinates: joints`): a coordinate per moving joint (`revolute`,
//!   `continuous`, `prismatic`), named after the joint, in the depth-first order of the tree
//!   from its root (Pinocchio's order), a row `<joint>_mimic: q_j − (multiplier · q_i +
//!   offset)` per `<mimic>`, the Rayleigh dissipation `½ Σ d_j q̇_j²` of the joints'
//!   `<dynamics damping>`, and, in lowering, the links' kinetic and potential energy from the
//!   composed transforms ([`kinematics`]);
//! - in both, the run-time parameter `gravity`, the magnitude of the gravity vector (9.81
//!   along −z by default).
//!
//! The user's own sections extend the robot: more coordinates, rows (a closed loop, with the
//! built-ins of [`builtins`]), forces on the joints (actuators, with a run-time parameter
//! each), energy terms, dissipation. Lowering ([`lowered`]) builds what the built-ins read
//! and, in maximal coordinates, the joints' forces and damping through their angles `θ(q)`.
//! What the file holds but the model leaves out (joint limits, Coulomb friction,
//! transmissions, simulator extensions, calibrations) is a compile error until the user lists
//! it in `ignore: [..]`; a joint type the importer does not model (`floating`, `planar`,
//! `spherical`) is an error naming the joint. Geometry (`<visual>`, `<collision>`,
//! `<material>`) does not enter the dynamics and is skipped.

pub mod builtins;
pub mod file;
pub mod kinematics;
pub mod maximal;
pub mod options;
pub mod outputs;
pub mod robot;

use std::collections::HashMap;

use mechanism_cas::{Store, Symbol};
use proc_macro2::{Span, TokenStream};
use quote::quote_spanned;
use syn::{parse_quote_spanned, Expr, Ident};

use crate::ast::{Mechanism, Named, Section, SectionBody};
use crate::errors::Errors;
use crate::lower::normal_form::Imported;
use crate::orientation::Kind;
use crate::parse::SectionKind;
use crate::sections::ModelKind;
use crate::symbols::{Name, Symbols};
use builtins::{Builtins, JointPosition};
use kinematics::JointSymbols;
use options::Formulation;
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
    if robot.formulation == Formulation::Maximal {
        if let Some(message) = maximal::degenerate_body(&robot, &maximal::bodies(&robot)) {
            errors.error_spanned(&robot.file, format!("`{}`: {message}", robot.file.value()));
        }
    }
    let ast = augment(ast, &robot, &mut errors);
    errors.finish()?;
    Ok(Import {
        ast,
        robot: Some(robot),
    })
}

/// What the import adds to a model's sections, by formulation.
struct Additions {
    coordinates: Vec<Named<()>>,
    orientations: Vec<Named<Expr>>,
    parameters: Vec<Named<Expr>>,
    kinetic: Option<Expr>,
    potential: Option<Expr>,
    rows: Vec<Named<Expr>>,
    dissipation: Option<Expr>,
}

/// Returns what the robot adds to the model in its formulation.
fn additions(robot: &Robot) -> Additions {
    let span = robot.file.span();
    let magnitude = robot.gravity.iter().map(|g| g * g).sum::<f64>().sqrt();
    let gravity = Ident::new(GRAVITY, span);
    let parameters: Vec<Named<Expr>> = (magnitude > 0.0)
        .then(|| named(gravity.clone(), number(magnitude, span)))
        .into_iter()
        .collect();
    match robot.formulation {
        Formulation::Joints => {
            let mimic_rows = robot.joints.iter().filter_map(|joint| {
                let mimic = joint.mimic.as_ref()?;
                let this = &joint.ident;
                let followed = &robot.joints[mimic.joint].ident;
                let (multiplier, offset) =
                    (number(mimic.multiplier, span), number(mimic.offset, span));
                let name = format!("{}_mimic", joint.ident.to_string().trim_start_matches("r#"));
                Some(named(
                    Ident::new(&name, span),
                    parse_quote_spanned!(span=> #this - (#multiplier * #followed + #offset)),
                ))
            });
            let damped: Vec<Expr> = robot
                .moving_joints()
                .filter(|joint| joint.damping > 0.0)
                .map(|joint| {
                    let (ident, damping) = (&joint.ident, number(joint.damping, span));
                    parse_quote_spanned!(span=> #damping * dot(#ident).powi(2))
                })
                .collect();
            Additions {
                coordinates: robot
                    .moving_joints()
                    .map(|joint| named(joint.ident.clone(), ()))
                    .collect(),
                orientations: Vec::new(),
                parameters,
                // The energies are built in the model's store by lowering ([`lowered`]).
                kinetic: None,
                potential: None,
                rows: mimic_rows.collect(),
                dissipation: (!damped.is_empty())
                    .then(|| parse_quote_spanned!(span=> 0.5 * (#(#damped)+*))),
            }
        }
        Formulation::Maximal => {
            let bodies = maximal::bodies(robot);
            let written = maximal::write(robot, &bodies, (magnitude > 0.0).then_some(&gravity));
            let mut coordinates = Vec::new();
            let mut orientations = Vec::new();
            for body in &bodies.bodies {
                let (position, rotation) = maximal::body_names(robot, body);
                coordinates.extend(position.into_iter().map(|c| named(c, ())));
                orientations.push(named(rotation, parse_quote_spanned!(span=> matrix)));
            }
            Additions {
                coordinates,
                orientations,
                parameters,
                kinetic: Some(written.kinetic),
                potential: written.potential,
                rows: written
                    .rows
                    .into_iter()
                    .map(|(name, row)| named(name, row))
                    .collect(),
                dissipation: None,
            }
        }
    }
}

/// Returns `ast` without its `urdf` section and with what the robot adds
/// ([`additions`]) merged into its sections, its vector rows expanded into components
/// ([`builtins::expand_vector_rows`]).
fn augment(ast: &Mechanism, robot: &Robot, errors: &mut Errors) -> Mechanism {
    let span = robot.file.span();
    let Additions {
        coordinates,
        orientations,
        parameters,
        kinetic,
        potential,
        rows,
        dissipation,
    } = additions(robot);
    let mut sections: Vec<Section> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for section in &ast.sections {
        let kind = SectionKind::from_keyword(&section.keyword);
        if kind == Some(SectionKind::Urdf) {
            continue;
        }
        let mut section = section.clone();
        // Only the first of a repeated section takes the additions; the section reader
        // reports the repetition.
        let first = kind.is_some_and(|kind| seen.insert(kind));
        match (kind, &mut section.body) {
            (Some(SectionKind::Coordinates), SectionBody::Names(names)) if first => {
                names.splice(0..0, coordinates.iter().cloned());
            }
            (Some(SectionKind::Orientations), SectionBody::Rows(declared)) if first => {
                declared.splice(0..0, orientations.iter().cloned());
            }
            (Some(SectionKind::Parameters), SectionBody::Assignments(declared)) if first => {
                declared.extend(parameters.iter().cloned());
            }
            (Some(SectionKind::Holonomic), SectionBody::Rows(declared)) if first => {
                builtins::expand_vector_rows(declared, errors);
                declared.splice(0..0, rows.iter().cloned());
            }
            (Some(SectionKind::Kinetic), SectionBody::Expr(expr)) if first => {
                if let Some(robot) = &kinetic {
                    *expr = parse_quote_spanned!(span=> #robot + (#expr));
                }
            }
            (Some(SectionKind::Potential), SectionBody::Expr(expr)) if first => {
                if let Some(robot) = &potential {
                    *expr = parse_quote_spanned!(span=> #robot + (#expr));
                }
            }
            (Some(SectionKind::Dissipation), SectionBody::Expr(expr)) if first => {
                if let Some(joints) = &dissipation {
                    *expr = parse_quote_spanned!(span=> (#expr) + #joints);
                }
            }
            _ => {}
        }
        sections.push(section);
    }
    let new = |keyword: SectionKind, body: SectionBody| Section {
        keyword: Ident::new(keyword.keyword(), span),
        body,
        value_span: span,
    };
    let missing = |kind: SectionKind| !seen.contains(&kind);
    let mut added = Vec::new();
    if missing(SectionKind::Coordinates) && !coordinates.is_empty() {
        added.push(new(
            SectionKind::Coordinates,
            SectionBody::Names(coordinates),
        ));
    }
    if missing(SectionKind::Orientations) && !orientations.is_empty() {
        added.push(new(
            SectionKind::Orientations,
            SectionBody::Rows(orientations),
        ));
    }
    if missing(SectionKind::Parameters) && !parameters.is_empty() {
        added.push(new(
            SectionKind::Parameters,
            SectionBody::Assignments(parameters),
        ));
    }
    if let (true, Some(kinetic)) = (missing(SectionKind::Kinetic), kinetic) {
        added.push(new(SectionKind::Kinetic, SectionBody::Expr(kinetic)));
    }
    if let (true, Some(potential)) = (missing(SectionKind::Potential), potential) {
        added.push(new(SectionKind::Potential, SectionBody::Expr(potential)));
    }
    if missing(SectionKind::Holonomic) && !rows.is_empty() {
        added.push(new(SectionKind::Holonomic, SectionBody::Rows(rows)));
    }
    if let (true, Some(dissipation)) = (missing(SectionKind::Dissipation), dissipation) {
        added.push(new(
            SectionKind::Dissipation,
            SectionBody::Expr(dissipation),
        ));
    }
    sections.splice(0..0, added);
    Mechanism {
        sections,
        ..ast.clone()
    }
}

/// Lowers what an imported robot puts in the model's store: in joint coordinates its kinetic
/// and potential energy ([`kinematics::joint_space`]); in both formulations the links' poses
/// and the joints' positions the built-ins read. The robot's coordinates and its `gravity`
/// are names of the model, which the import added.
pub fn lowered(
    robot: &Robot,
    store: &mut Store,
    symbols: &Symbols,
    names: &HashMap<String, Name>,
) -> (Option<Imported>, Builtins) {
    let coordinate = |name: &str| match names.get(name) {
        Some(Name::Coordinate(i)) => Some(*i),
        _ => None,
    };
    match robot.formulation {
        Formulation::Joints => {
            let indices: Vec<(String, usize)> = robot
                .moving_joints()
                .filter_map(|joint| {
                    Some((joint.name.clone(), coordinate(&joint.ident.to_string())?))
                })
                .collect();
            let coordinates: Vec<JointSymbols> = indices
                .iter()
                .map(|&(_, i)| JointSymbols {
                    position: symbols.q[i],
                    velocity: symbols.v[i],
                })
                .collect();
            let gravity = match names.get(GRAVITY) {
                Some(Name::Parameter(i)) => Some(symbols.p[*i]),
                _ => None,
            };
            let energies = kinematics::joint_space(robot, store, &coordinates, gravity);
            let imported = Imported {
                kinetic: energies.kinetic,
                potential: energies.potential,
                file: robot.file.clone(),
            };
            let idents = robot
                .moving_joints()
                .map(|joint| (joint.ident.to_string(), joint.damping))
                .collect();
            let joints = indices
                .into_iter()
                .map(|(name, i)| (name, JointPosition::Coordinate(i)))
                .collect();
            (
                Some(imported),
                Builtins {
                    poses: energies.poses,
                    joints,
                    idents,
                },
            )
        }
        Formulation::Maximal => {
            let bodies = maximal::bodies(robot);
            let body_symbols: Option<Vec<([Symbol; 3], [Symbol; 9])>> = bodies
                .bodies
                .iter()
                .map(|body| {
                    let (position, rotation) = maximal::body_names(robot, body);
                    let position = position.map(|c| coordinate(&c.to_string()));
                    let entries = Kind::Matrix
                        .suffixes()
                        .iter()
                        .map(|suffix| coordinate(&format!("{rotation}_{suffix}")))
                        .collect::<Option<Vec<usize>>>()?;
                    Some((
                        [position[0]?, position[1]?, position[2]?].map(|i| symbols.q[i]),
                        std::array::from_fn(|k| symbols.q[entries[k]]),
                    ))
                })
                .collect();
            let poses = match body_symbols {
                Some(body_symbols) => maximal::poses(robot, &bodies, store, &body_symbols),
                // A name error, which the name check reports.
                None => kinematics::Poses { links: Vec::new() },
            };
            let joints = robot
                .moving_joints()
                .map(|joint| {
                    let position = maximal::joint_position(robot, joint, robot.file.span());
                    (joint.name.clone(), JointPosition::Expression(position))
                })
                .collect();
            let idents = robot
                .moving_joints()
                .map(|joint| (joint.ident.to_string(), joint.damping))
                .collect();
            (
                None,
                Builtins {
                    poses,
                    joints,
                    idents,
                },
            )
        }
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
