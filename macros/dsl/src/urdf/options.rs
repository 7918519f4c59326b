//! The `urdf` section's options: `urdf: "robot.urdf"` or
//! `urdf: { file: "robot.urdf", coordinates: joints, gravity: [0.0, 0.0, -9.81], ignore: [limits] }`.

use syn::{Expr, Ident, Lit, LitStr, UnOp};

use crate::ast::{Named, SectionBody};
use crate::errors::Errors;

/// The coordinates an imported robot is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Formulation {
    /// Each body (a moving link with the links welded to it) its centre of mass and rotation
    /// matrix, each joint rows; a constant mass matrix ([`super::maximal`]).
    Maximal,
    /// The tree's joint angles and offsets, one coordinate per moving joint; `M(q)` from the
    /// composed transforms ([`super::kinematics`]).
    Joints,
}

/// A part of a URDF file the model does not represent, which the user must acknowledge in
/// `ignore: [..]` before the file is imported without it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Omission {
    /// `<limit lower upper velocity>` and `<safety_controller>`: the motion is not kept inside
    /// the joints' ranges or speeds.
    Limits,
    /// `<dynamics friction>`: Coulomb friction in the joints.
    Friction,
    /// `<transmission>`: actuators and gear ratios (forces act on the joints directly).
    Transmissions,
    /// `<gazebo>` elements and attributes the URDF specification does not define (a
    /// simulator's or a vendor's extensions, such as the Panda's `<dynamics mu_viscous>`).
    Extensions,
    /// `<calibration>`: reference positions of the joints' encoders.
    Calibration,
}

impl Omission {
    /// Every omission, as written in `ignore: [..]`.
    pub const ALL: [Omission; 5] = [
        Omission::Limits,
        Omission::Friction,
        Omission::Transmissions,
        Omission::Extensions,
        Omission::Calibration,
    ];

    /// The keyword in `ignore: [..]`.
    pub fn keyword(self) -> &'static str {
        match self {
            Omission::Limits => "limits",
            Omission::Friction => "friction",
            Omission::Transmissions => "transmissions",
            Omission::Extensions => "extensions",
            Omission::Calibration => "calibration",
        }
    }
}

/// The options of a `urdf` section.
pub struct Options {
    /// The file, as the user wrote it (relative to the crate's manifest directory).
    pub file: LitStr,
    /// The coordinates to write the robot in.
    pub formulation: Formulation,
    /// The gravity vector in the root link's frame.
    pub gravity: [f64; 3],
    /// What the user acknowledged the model leaves out.
    pub ignore: Vec<Omission>,
}

/// URDF's gravity: along −z, 9.81 m/s².
pub const DEFAULT_GRAVITY: [f64; 3] = [0.0, 0.0, -9.81];

const SHAPE: &str =
    "write `urdf: \"robot.urdf\"` or `urdf: { file: \"robot.urdf\", coordinates: joints }`";

/// Reads the options of the section `keyword: body`; `None` after an error.
pub fn read(keyword: &Ident, body: &SectionBody, errors: &mut Errors) -> Option<Options> {
    let rows: &[Named<Expr>] = match body {
        SectionBody::Expr(expr) => {
            let Some(file) = string(expr) else {
                errors.error_spanned(expr, format!("`urdf` takes the file's path; {SHAPE}"));
                return None;
            };
            return Some(Options {
                file,
                formulation: Formulation::Maximal,
                gravity: DEFAULT_GRAVITY,
                ignore: Vec::new(),
            });
        }
        SectionBody::Rows(rows) => rows,
        _ => {
            errors.error_spanned(
                keyword,
                format!("`urdf` takes its options in braces; {SHAPE}"),
            );
            return None;
        }
    };
    let mut file = None;
    let mut formulation = Formulation::Maximal;
    let mut gravity = DEFAULT_GRAVITY;
    let mut ignore = Vec::new();
    let mut failed = false;
    for row in rows {
        let name = row.name.to_string();
        match name.as_str() {
            "file" => match string(&row.value) {
                Some(path) => file = Some(path),
                None => {
                    failed = true;
                    errors.error_spanned(
                        &row.value,
                        "`file` is the URDF file's path as a string literal, relative to the \
                         crate's manifest directory, e.g. `file: \"robots/ur5.urdf\"`",
                    )
                }
            },
            "coordinates" => match path_ident(&row.value).as_deref() {
                Some("joints") => formulation = Formulation::Joints,
                Some("maximal") => formulation = Formulation::Maximal,
                _ => {
                    failed = true;
                    errors.error_spanned(
                        &row.value,
                        "`coordinates` is `maximal` (each body's position and rotation matrix, \
                         the default) or `joints` (the joint angles and offsets)",
                    )
                }
            },
            "gravity" => match vector(&row.value) {
                Some(g) => gravity = g,
                None => {
                    failed = true;
                    errors.error_spanned(
                        &row.value,
                        "`gravity` is the gravity vector in the root link's frame as three \
                         numbers, e.g. `gravity: [0.0, 0.0, -9.81]` (the default)",
                    )
                }
            },
            "ignore" => match &row.value {
                Expr::Array(array) => {
                    for element in &array.elems {
                        let keyword = path_ident(element);
                        match Omission::ALL
                            .into_iter()
                            .find(|o| keyword.as_deref() == Some(o.keyword()))
                        {
                            Some(omission) => ignore.push(omission),
                            None => {
                                failed = true;
                                errors.error_spanned(
                                    element,
                                    format!(
                                        "`ignore` lists what the model may leave out of the \
                                         file: {}",
                                        Omission::ALL.map(Omission::keyword).join(", ")
                                    ),
                                )
                            }
                        }
                    }
                }
                other => {
                    failed = true;
                    errors.error_spanned(other, "`ignore` is a list, e.g. `ignore: [limits]`")
                }
            },
            _ => {
                failed = true;
                errors.error_spanned(
                    &row.name,
                    format!(
                        "unknown option `{name}` of `urdf`; it takes `file`, `coordinates`, \
                         `gravity` and `ignore`"
                    ),
                )
            }
        }
    }
    let Some(file) = file else {
        errors.error_spanned(keyword, format!("`urdf` needs the robot's file; {SHAPE}"));
        return None;
    };
    (!failed).then_some(Options {
        file,
        formulation,
        gravity,
        ignore,
    })
}

/// Returns the string literal `expr` is.
fn string(expr: &Expr) -> Option<LitStr> {
    match expr {
        Expr::Lit(lit) => match &lit.lit {
            Lit::Str(s) => Some(s.clone()),
            _ => None,
        },
        Expr::Group(group) => string(&group.expr),
        _ => None,
    }
}

/// Returns the identifier `expr` is.
fn path_ident(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Path(path) if path.qself.is_none() => path.path.get_ident().map(|i| i.to_string()),
        _ => None,
    }
}

/// Returns the number a literal (with an optional minus) is.
fn number(expr: &Expr) -> Option<f64> {
    match expr {
        Expr::Lit(lit) => match &lit.lit {
            Lit::Float(f) => f.base10_parse().ok(),
            Lit::Int(i) => i.base10_parse::<i64>().ok().map(|i| i as f64),
            _ => None,
        },
        Expr::Unary(unary) if matches!(unary.op, UnOp::Neg(_)) => number(&unary.expr).map(|x| -x),
        Expr::Paren(paren) => number(&paren.expr),
        _ => None,
    }
}

/// Returns the three numbers of `[x, y, z]`.
fn vector(expr: &Expr) -> Option<[f64; 3]> {
    let Expr::Array(array) = expr else {
        return None;
    };
    let values: Vec<f64> = array.elems.iter().map(number).collect::<Option<_>>()?;
    let values: [f64; 3] = values.try_into().ok()?;
    values.iter().all(|v| v.is_finite()).then_some(values)
}
