//! The built-ins of a model that imports a robot, with which the user writes what the file
//! cannot say (a closed loop, a spring between links, a force on a joint):
//!
//! | built-in | value |
//! | --- | --- |
//! | `position_x(link, px, py, pz)`, `position_y`, `position_z` | the world coordinates of the point `p` of the link (in the link's frame) |
//! | `direction_x(link, dx, dy, dz)`, `direction_y`, `direction_z` | the world components of the link-frame vector `d`, `R d`; `direction_x(link, 1.0, 0.0, 0.0)` … are the entries of the link's rotation |
//! | `joint("name")` | the coordinate of the joint of that name (for a name that is not an identifier) |
//!
//! A link is its name in the file, as a string literal or, when it is an identifier, as is.
//! In a holonomic row, `position(link, [px, py, pz])` and `direction(link, [dx, dy, dz])` are
//! vectors, combined with `+`, `−`, a scalar factor and `[x, y, z]` literals; such a row stands
//! for its three components `name_x`, `name_y`, `name_z`, or those its
//! `#[components(x, y)]` attribute selects ([`expand_vector_rows`], run by the import).

use mechanism_cas::Id;
use syn::spanned::Spanned;
use syn::{parse_quote_spanned, BinOp, Expr, Ident, Lit, UnOp};

use super::kinematics::Poses;
use crate::ast::Named;
use crate::errors::Errors;
use crate::expr::{Context, Lowerer};

/// What the built-ins need of an imported robot: its links' poses and its joints' positions.
pub struct Builtins {
    /// The links' world poses, in the model's store.
    pub poses: Poses,
    /// Each moving joint's name in the file and its position.
    pub joints: Vec<(String, JointPosition)>,
    /// Each moving joint's coordinate name (its identifier) and `<dynamics damping>`, in the
    /// order of `joints`.
    pub idents: Vec<(String, f64)>,
}

/// A joint's position in the model's coordinates.
pub enum JointPosition {
    /// A coordinate of its own (joint coordinates), by index.
    Coordinate(usize),
    /// An expression of the coordinates (maximal coordinates: an angle or an offset between
    /// the links' frames, [`super::maximal::joint_position`]).
    Expression(Expr),
}

/// The scalar built-ins, as listed in messages.
pub const BUILTINS: &str = "position_x(link, px, py, pz), position_y(..), position_z(..), \
                            direction_x(link, dx, dy, dz), direction_y(..), direction_z(..), \
                            joint(\"name\")";

const AXES: [&str; 3] = ["x", "y", "z"];

impl Lowerer<'_> {
    /// Lowers a call of a robot built-in; `None` when `function` is not one (the caller goes
    /// on), `Some(None)` after an error.
    pub(crate) fn robot_builtin(
        &mut self,
        function: &Ident,
        call: &syn::ExprCall,
        context: Context,
    ) -> Option<Option<Id>> {
        let name = function.to_string();
        let (point, axis) = match name.as_str() {
            "joint" => return Some(self.joint(call)),
            "position_x" | "position_y" | "position_z" => (true, &name[9..]),
            "direction_x" | "direction_y" | "direction_z" => (false, &name[10..]),
            "position" | "direction" => {
                self.errors.error_spanned(
                    call,
                    format!(
                        "`{name}(link, [..])` is a vector, which only a holonomic row takes (as \
                         its three components); in an expression, use `{name}_x(link, ..)`, \
                         `{name}_y` or `{name}_z`"
                    ),
                );
                return Some(None);
            }
            _ => return None,
        };
        let axis = AXES.iter().position(|a| *a == axis).unwrap_or(0);
        let Some(robot) = self.robot else {
            self.errors.error_spanned(
                function,
                format!("`{name}` reads the links of an imported robot; this model has no `urdf`"),
            );
            return Some(None);
        };
        let args: Vec<&Expr> = call.args.iter().collect();
        let [link, x, y, z] = args.as_slice() else {
            self.errors.error_spanned(
                call,
                format!("`{name}` takes a link and three coordinates: `{name}(link, x, y, z)`"),
            );
            return Some(None);
        };
        let Some(link_name) = link_name(link) else {
            self.errors.error_spanned(
                link,
                "a link is its name in the URDF file, as a string literal (`\"wrist_3_link\"`) \
                 or an identifier",
            );
            return Some(None);
        };
        let Some((rotation, origin)) = robot.poses.get(&link_name) else {
            self.errors.error_spanned(
                link,
                format!(
                    "the robot has no link `{link_name}`; its links are {}",
                    robot.poses.names().join(", ")
                ),
            );
            return Some(None);
        };
        let (row, origin) = (rotation[axis], origin[axis]);
        let local = [x, y, z].map(|e| self.lower(e, context));
        let [Some(x), Some(y), Some(z)] = local else {
            return Some(None);
        };
        let terms: Vec<Id> = [x, y, z]
            .iter()
            .zip(row)
            .map(|(&l, r)| self.store.mul(r, l))
            .collect();
        let rotated = self.store.sum(terms);
        Some(Some(if point {
            self.store.add(origin, rotated)
        } else {
            rotated
        }))
    }

    /// Lowers `joint("name")`: the coordinate of the joint of that name.
    fn joint(&mut self, call: &syn::ExprCall) -> Option<Id> {
        let Some(robot) = self.robot else {
            self.errors.error_spanned(
                call,
                "`joint(\"name\")` names a joint of an imported robot; this model has no `urdf`",
            );
            return None;
        };
        let name = match call.args.first() {
            Some(arg) if call.args.len() == 1 => link_name(arg),
            _ => None,
        };
        let Some(name) = name else {
            self.errors.error_spanned(
                call,
                "`joint` takes the joint's name in the URDF file: `joint(\"shoulder_pan_joint\")`",
            );
            return None;
        };
        match robot.joints.iter().find(|(joint, _)| *joint == name) {
            Some((_, JointPosition::Coordinate(i))) => Some(self.store.symbol(self.symbols.q[*i])),
            Some((_, JointPosition::Expression(expr))) => self.lower(expr, Context::Dynamic),
            None => {
                let names: Vec<&str> = robot.joints.iter().map(|(n, _)| n.as_str()).collect();
                self.errors.error_spanned(
                    call,
                    format!(
                        "the robot has no moving joint `{name}`; its moving joints are {}",
                        names.join(", ")
                    ),
                );
                None
            }
        }
    }
}

impl Lowerer<'_> {
    /// The generalized force of a force `value` on the joint whose coordinate name is
    /// `ident`, in maximal coordinates: `value · ∂θ/∂q` with `θ(q)` the joint's angle or
    /// offset (its virtual work `value δθ`). `None` when no joint of the robot has that name
    /// or the joint has a coordinate of its own.
    pub(crate) fn joint_force(&mut self, ident: &str, value: Id) -> Option<Vec<Id>> {
        let robot = self.robot?;
        let k = robot.idents.iter().position(|(name, _)| name == ident)?;
        let JointPosition::Expression(expr) = &robot.joints[k].1 else {
            return None;
        };
        let angle = self.lower(expr, Context::Dynamic)?;
        let gradient = mechanism_cas::gradient(self.store, angle, &self.symbols.q);
        Some(
            gradient
                .into_iter()
                .map(|g| self.store.mul(value, g))
                .collect(),
        )
    }

    /// The Rayleigh dissipation `½ Σ d_j θ̇_j²` of the joints' `<dynamics damping>` in maximal
    /// coordinates, `θ̇_j = ∇θ_j · v`; `None` without damped joints whose position is an
    /// expression (in joint coordinates the import writes it in the plain language).
    pub(crate) fn joint_damping(&mut self) -> Option<Id> {
        let robot = self.robot?;
        let mut terms = Vec::new();
        for ((_, position), &(_, damping)) in robot.joints.iter().zip(&robot.idents) {
            let (JointPosition::Expression(expr), true) = (position, damping > 0.0) else {
                continue;
            };
            let angle = self.lower(expr, Context::Dynamic)?;
            let rate = mechanism_cas::directional_derivative(
                self.store,
                angle,
                &self.symbols.q,
                &self.symbols.v,
            );
            let square = self.store.mul(rate, rate);
            let half = self.store.num(0.5 * damping);
            terms.push(self.store.mul(half, square));
        }
        (!terms.is_empty()).then(|| self.store.sum(terms))
    }
}

/// Returns the link or joint name an argument gives: a string literal or an identifier.
fn link_name(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Lit(lit) => match &lit.lit {
            Lit::Str(s) => Some(s.value()),
            _ => None,
        },
        Expr::Path(path) if path.qself.is_none() => path.path.get_ident().map(|i| i.to_string()),
        Expr::Group(group) => link_name(&group.expr),
        _ => None,
    }
}

/// Replaces each holonomic row whose value is a vector (of `position(link, [..])`,
/// `direction(link, [..])` and `[x, y, z]`) by its components `name_x`, `name_y`, `name_z`,
/// or those of its `#[components(..)]`; reports a vector added to a number and a bad
/// `components` attribute.
pub fn expand_vector_rows(rows: &mut Vec<Named<Expr>>, errors: &mut Errors) {
    let mut expanded = Vec::with_capacity(rows.len());
    for row in rows.drain(..) {
        let (selected, attrs) = components_attribute(&row, errors);
        match vector(&row.value, errors) {
            Ok(Some(components)) => {
                for (axis, component) in components.into_iter().enumerate() {
                    if !selected[axis] {
                        continue;
                    }
                    let name = Ident::new(
                        &format!(
                            "{}_{}",
                            row.name.to_string().trim_start_matches("r#"),
                            AXES[axis]
                        ),
                        row.name.span(),
                    );
                    expanded.push(Named {
                        attrs: attrs.clone(),
                        name,
                        index: row.index.clone(),
                        value: component,
                    });
                }
            }
            Ok(None) => {
                if attrs.len() != row.attrs.len() {
                    errors.error_spanned(
                        &row.name,
                        "`#[components(..)]` selects components of a vector row; this row is a \
                         number",
                    );
                }
                expanded.push(Named { attrs, ..row });
            }
            Err(()) => expanded.push(Named { attrs, ..row }),
        }
    }
    *rows = expanded;
}

/// Reads `#[components(x, y)]` off a row: which components to keep (all without it) and the
/// row's other attributes.
fn components_attribute(
    row: &Named<Expr>,
    errors: &mut Errors,
) -> ([bool; 3], Vec<syn::Attribute>) {
    let mut selected = [true; 3];
    let mut others = Vec::new();
    for attr in &row.attrs {
        if !attr.path().is_ident("components") {
            others.push(attr.clone());
            continue;
        }
        selected = [false; 3];
        let parsed = attr.parse_args_with(
            syn::punctuated::Punctuated::<Ident, syn::Token![,]>::parse_terminated,
        );
        match parsed {
            Ok(axes) if !axes.is_empty() => {
                for axis in axes {
                    match AXES.iter().position(|a| axis == a) {
                        Some(k) => selected[k] = true,
                        None => errors.error_spanned(
                            &axis,
                            "a component is `x`, `y` or `z`, e.g. `#[components(x, y)]`",
                        ),
                    }
                }
            }
            _ => errors.error_spanned(
                attr,
                "write the components to keep, e.g. `#[components(x, y)]`",
            ),
        }
    }
    (selected, others)
}

/// Returns the components of `expr` if it is a vector, `Ok(None)` if it is a number.
fn vector(expr: &Expr, errors: &mut Errors) -> Result<Option<[Expr; 3]>, ()> {
    let span = expr.span();
    match expr {
        Expr::Paren(paren) => vector(&paren.expr, errors),
        Expr::Group(group) => vector(&group.expr, errors),
        Expr::Array(array) => {
            let elems: Vec<Expr> = array.elems.iter().cloned().collect();
            match <[Expr; 3]>::try_from(elems) {
                Ok(components) => Ok(Some(components)),
                Err(_) => {
                    errors.error_spanned(array, "a vector has three components: `[x, y, z]`");
                    Err(())
                }
            }
        }
        Expr::Call(call) => {
            let function = match &*call.func {
                Expr::Path(path) => path.path.get_ident().map(|i| i.to_string()),
                _ => None,
            };
            let Some(function @ ("position" | "direction")) = function.as_deref() else {
                return Ok(None);
            };
            let args: Vec<&Expr> = call.args.iter().collect();
            let [link, Expr::Array(point)] = args.as_slice() else {
                errors.error_spanned(
                    call,
                    format!(
                        "`{function}` takes a link and a vector: `{function}(link, [x, y, z])`"
                    ),
                );
                return Err(());
            };
            let point: Vec<&Expr> = point.elems.iter().collect();
            let [x, y, z] = point.as_slice() else {
                errors.error_spanned(args[1], "a vector has three components: `[x, y, z]`");
                return Err(());
            };
            Ok(Some(AXES.map(|axis| {
                let builtin = Ident::new(&format!("{function}_{axis}"), call.func.span());
                parse_quote_spanned!(span=> #builtin(#link, #x, #y, #z))
            })))
        }
        Expr::Unary(unary) if matches!(unary.op, UnOp::Neg(_)) => {
            Ok(vector(&unary.expr, errors)?.map(|c| c.map(|e| parse_quote_spanned!(span=> -(#e)))))
        }
        Expr::Binary(binary) => {
            let left = vector(&binary.left, errors)?;
            let right = vector(&binary.right, errors)?;
            let op = binary.op;
            match (op, left, right) {
                (_, None, None) => Ok(None),
                (BinOp::Add(_) | BinOp::Sub(_), Some(a), Some(b)) => {
                    let [a0, a1, a2] = a;
                    let [b0, b1, b2] = b;
                    Ok(Some(
                        [(a0, b0), (a1, b1), (a2, b2)]
                            .map(|(a, b)| parse_quote_spanned!(span=> (#a) #op (#b))),
                    ))
                }
                (BinOp::Mul(_), Some(v), None) => {
                    let s = &binary.right;
                    Ok(Some(v.map(|e| parse_quote_spanned!(span=> (#e) * (#s)))))
                }
                (BinOp::Mul(_), None, Some(v)) => {
                    let s = &binary.left;
                    Ok(Some(v.map(|e| parse_quote_spanned!(span=> (#s) * (#e)))))
                }
                (BinOp::Div(_), Some(v), None) => {
                    let s = &binary.right;
                    Ok(Some(v.map(|e| parse_quote_spanned!(span=> (#e) / (#s)))))
                }
                _ => {
                    errors.error_spanned(
                        binary,
                        "a vector row adds and subtracts vectors (`position(link, [..])`, \
                         `[x, y, z]`) and scales them by numbers; this combines a vector with a \
                         number",
                    );
                    Err(())
                }
            }
        }
        _ => Ok(None),
    }
}
