//! The maximal-coordinate formulation of an imported robot: each rigid body a position and a
//! rotation matrix, each joint a set of holonomic rows, so that the mass matrix is constant
//! and SPOOK, RATTLE, SHAKE (and every other integrator) step it.
//!
//! A **body** is a link with a moving parent joint together with every link welded to it by
//! `fixed` joints (their masses and inertias lumped, as Pinocchio does); the links welded to
//! the root form the ground, which does not move. A body of mass `m`, centre of mass `c` and
//! principal moments `i_k` about principal axes `Q` (in its top link's frame) has the
//! coordinates `<link>_x, <link>_y, <link>_z` (its centre of mass in the world) and the
//! orientation `<link>_r: matrix` (world from its principal frame, the kinds of
//! [`orientation`](crate::orientation)), so that
//!
//! ```text
//! T = ½ m |ẋ|² + rigid_kinetic(r, i1, i2, i3),     V = −m gᵀ x.
//! ```
//!
//! A link `l` of the body, at `(R_l, t_l)` in the top link's frame, is then at
//! `R = r Qᵀ R_l`, `p = x + r Qᵀ (t_l − c)` in the world ([`poses`]). A joint from link `P`
//! to link `C`, at `(R_o, t_o)` in `P`'s frame with axis `a`, is written with the built-ins of
//! [`builtins`](super::builtins) over those poses ([`write`](fn@write)):
//!
//! - revolute and continuous: `position(P, t_o) − position(C, 0) = 0` (three rows) and the
//!   axes aligned, `(R_P R_o u_i) · (R_C a) = 0` for two unit vectors `u_1, u_2 ⊥ a` (two rows);
//! - prismatic: the frames aligned, `(R_P R_o u_1)·(R_C a) = (R_P R_o u_2)·(R_C a) =
//!   (R_P R_o u_1)·(R_C u_2) = 0`, and the offset along the axis,
//!   `(position(C, 0) − position(P, t_o)) · (R_P R_o u_i) = 0`;
//! - a mimic row relates the joints' positions, the angle
//!   `θ = atan2((R_P R_o u_2)·(R_C u_1), (R_P R_o u_1)·(R_C u_1))` or the offset
//!   `(position(C, 0) − position(P, t_o)) · (R_P R_o a)` ([`joint_position`]).
//!
//! Through the same `θ(q)`, a force `τ` on a joint (a `forces` row named after it) is the
//! generalized force `τ ∂θ/∂q`, and the joint's `<dynamics damping>` the dissipation
//! `½ d (∇θ · v)²` (lowering's `joint_force` and `joint_damping`).

use mechanism_cas::{Id, Store, Symbol};
use proc_macro2::Span;
use syn::{parse_quote_spanned, Expr, Ident};

use super::kinematics::Poses;
use super::robot::{multiply, transpose, Matrix3, Robot};

/// A rigid body of the maximal coordinates: a moving link and the links welded to it.
pub struct Body {
    /// The top link (the child of the body's moving joint); it names the body.
    pub top: usize,
    /// The body's total mass.
    pub mass: f64,
    /// The centre of mass, in the top link's frame.
    pub com: [f64; 3],
    /// The principal axes as columns, in the top link's frame (a rotation).
    pub axes: Matrix3,
    /// The principal moments about the centre of mass.
    pub moments: [f64; 3],
}

/// Where each link is: in which body (`None`: the ground), at which pose in the body's top
/// link's frame.
pub struct Placement {
    /// The body, `None` for a link welded to the root.
    pub body: Option<usize>,
    /// The link's rotation in the top link's frame (in the root's frame for the ground).
    pub rotation: Matrix3,
    /// The link's origin in the top link's frame (in the root's frame for the ground).
    pub origin: [f64; 3],
}

/// The bodies of a robot and where its links are in them.
pub struct Bodies {
    /// The moving bodies, in the order of their top links.
    pub bodies: Vec<Body>,
    /// By link, in [`Robot::links`] order.
    pub placements: Vec<Placement>,
}

const IDENTITY: Matrix3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

/// Groups the links into bodies, lumping the links welded by fixed joints.
pub fn bodies(robot: &Robot) -> Bodies {
    let mut placements: Vec<Placement> = (0..robot.links.len())
        .map(|_| Placement {
            body: None,
            rotation: IDENTITY,
            origin: [0.0; 3],
        })
        .collect();
    let mut tops = Vec::new();
    for joint in &robot.joints {
        let parent = &placements[joint.parent];
        let placement = if joint.kind.moves() {
            tops.push(joint.child);
            Placement {
                body: Some(tops.len() - 1),
                rotation: IDENTITY,
                origin: [0.0; 3],
            }
        } else {
            let moved = apply(&parent.rotation, joint.translation);
            Placement {
                body: parent.body,
                rotation: multiply(&parent.rotation, &joint.rotation),
                origin: [0, 1, 2].map(|k| parent.origin[k] + moved[k]),
            }
        };
        placements[joint.child] = placement;
    }
    let bodies = tops
        .iter()
        .enumerate()
        .map(|(k, &top)| {
            let members: Vec<usize> = (0..robot.links.len())
                .filter(|&l| placements[l].body == Some(k))
                .collect();
            let mass: f64 = members.iter().map(|&l| robot.links[l].mass).sum();
            let centre = |l: usize| {
                let p = &placements[l];
                let c = apply(&p.rotation, robot.links[l].com);
                [0, 1, 2].map(|i| p.origin[i] + c[i])
            };
            let com = if mass > 0.0 {
                let mut sum = [0.0; 3];
                for &l in &members {
                    let c = centre(l);
                    for i in 0..3 {
                        sum[i] += robot.links[l].mass * c[i];
                    }
                }
                sum.map(|s| s / mass)
            } else {
                [0.0; 3]
            };
            // Σ R I Rᵀ + m (|d|² 1 − d dᵀ), d the link's centre of mass from the body's.
            let mut inertia = [[0.0; 3]; 3];
            for &l in &members {
                let link = &robot.links[l];
                let rotation = placements[l].rotation;
                let turned = multiply(&multiply(&rotation, &link.inertia), &transpose(&rotation));
                let c = centre(l);
                let d = [0, 1, 2].map(|i| c[i] - com[i]);
                let square: f64 = d.iter().map(|x| x * x).sum();
                for i in 0..3 {
                    for j in 0..3 {
                        let delta = if i == j { square } else { 0.0 };
                        inertia[i][j] += turned[i][j] + link.mass * (delta - d[i] * d[j]);
                    }
                }
            }
            let (moments, axes) = principal_axes(inertia);
            Body {
                top,
                mass,
                com,
                axes,
                moments,
            }
        })
        .collect();
    Bodies { bodies, placements }
}

/// The names of a body's coordinates: `<link>_x`, `<link>_y`, `<link>_z` and its orientation
/// `<link>_r`.
pub fn body_names(robot: &Robot, body: &Body) -> ([Ident; 3], Ident) {
    let span = robot.file.span();
    let base = super::file::identifier_text(&robot.links[body.top].name);
    (
        ["x", "y", "z"].map(|axis| Ident::new(&format!("{base}_{axis}"), span)),
        Ident::new(&format!("{base}_r"), span),
    )
}

/// The world pose of each link in maximal coordinates, as expressions of the bodies'
/// coordinates: `R = r Qᵀ R_l`, `p = x + r Qᵀ (t_l − c)`; `symbols[k]` are body `k`'s
/// `(x, y, z)` and its rotation's nine entries, row by row.
pub fn poses(
    robot: &Robot,
    bodies: &Bodies,
    store: &mut Store,
    symbols: &[([Symbol; 3], [Symbol; 9])],
) -> Poses {
    let links = robot
        .links
        .iter()
        .zip(&bodies.placements)
        .map(|(link, placement)| {
            let Some(k) = placement.body else {
                let rotation = placement.rotation.map(|row| row.map(|x| store.num(x)));
                let origin = placement.origin.map(|x| store.num(x));
                return (link.name.clone(), rotation, origin);
            };
            let body = &bodies.bodies[k];
            let (position, entries) = &symbols[k];
            let r: [[Id; 3]; 3] =
                std::array::from_fn(|i| std::array::from_fn(|j| store.symbol(entries[3 * i + j])));
            let principal = transpose(&body.axes);
            let to_link = multiply(&principal, &placement.rotation);
            let offset = apply(
                &principal,
                [0, 1, 2].map(|i| placement.origin[i] - body.com[i]),
            );
            let rotation = std::array::from_fn(|i| {
                std::array::from_fn(|j| {
                    let terms: Vec<Id> = (0..3)
                        .map(|k| {
                            let c = store.num(to_link[k][j]);
                            store.mul(r[i][k], c)
                        })
                        .collect();
                    store.sum(terms)
                })
            });
            let origin = std::array::from_fn(|i| {
                let x = store.symbol(position[i]);
                let terms: Vec<Id> = (0..3)
                    .map(|k| {
                        let c = store.num(offset[k]);
                        store.mul(r[i][k], c)
                    })
                    .collect();
                let turned = store.sum(terms);
                store.add(x, turned)
            });
            (link.name.clone(), rotation, origin)
        })
        .collect();
    Poses { links }
}

/// The kinetic and potential energy of the bodies, and their rows: `kinetic`, `potential` (a
/// factor of the parameter `gravity`) and the joints' rows, as expressions of the plain
/// language with the built-ins, spanned at `span`.
pub struct Written {
    /// `Σ ½ m |ẋ|² + rigid_kinetic(r, i1, i2, i3)`.
    pub kinetic: Expr,
    /// `gravity · Σ −m ĝᵀ x`, or `None` without gravity.
    pub potential: Option<Expr>,
    /// The joints' rows, named `<joint>_<what>`.
    pub rows: Vec<(Ident, Expr)>,
}

/// Writes the bodies' energies and the joints' rows.
pub fn write(robot: &Robot, bodies: &Bodies, gravity: Option<&Ident>) -> Written {
    let span = robot.file.span();
    let mut kinetic: Vec<Expr> = Vec::new();
    let mut height: Vec<Expr> = Vec::new();
    let magnitude = robot.gravity.iter().map(|g| g * g).sum::<f64>().sqrt();
    for body in &bodies.bodies {
        let ([x, y, z], r) = body_names(robot, body);
        let half_mass = number(0.5 * body.mass, span);
        let [i1, i2, i3] = body.moments.map(|i| number(i, span));
        kinetic.push(parse_quote_spanned!(span=>
            #half_mass * (dot(#x).powi(2) + dot(#y).powi(2) + dot(#z).powi(2))
                + rigid_kinetic(#r, #i1, #i2, #i3)
        ));
        if magnitude > 0.0 {
            for (coordinate, g) in [x, y, z].iter().zip(robot.gravity) {
                if g != 0.0 {
                    let factor = number(-body.mass * g / magnitude, span);
                    height.push(parse_quote_spanned!(span=> #factor * #coordinate));
                }
            }
        }
    }
    let kinetic = parse_quote_spanned!(span=> #(#kinetic)+*);
    let potential = match (gravity, height.is_empty()) {
        (Some(g), false) => Some(parse_quote_spanned!(span=> #g * (#(#height)+*))),
        _ => None,
    };
    let rows = robot
        .joints
        .iter()
        .filter(|joint| joint.kind.moves())
        .flat_map(|joint| joint_rows(robot, joint, span))
        .collect();
    Written {
        kinetic,
        potential,
        rows,
    }
}

/// The rows of one moving joint and, if it has one, of its mimic.
fn joint_rows(robot: &Robot, joint: &super::robot::Joint, span: Span) -> Vec<(Ident, Expr)> {
    let parent = link_literal(&robot.links[joint.parent].name, span);
    let child = link_literal(&robot.links[joint.child].name, span);
    let base = joint.ident.to_string().trim_start_matches("r#").to_string();
    let name = |what: &str| Ident::new(&format!("{base}_{what}"), span);
    let (u1, u2) = perpendiculars(joint.axis);
    // Directions of the joint frame in the parent link's frame (R_o v) and the axis.
    let in_parent = |v: [f64; 3]| apply(&joint.rotation, v);
    let direction = |link: &Expr, v: [f64; 3]| -> [Expr; 3] {
        let [a, b, c] = v.map(|x| number(x, span));
        ["x", "y", "z"].map(|axis| {
            let builtin = Ident::new(&format!("direction_{axis}"), span);
            parse_quote_spanned!(span=> #builtin(#link, #a, #b, #c))
        })
    };
    let position = |link: &Expr, p: [f64; 3]| -> [Expr; 3] {
        let [a, b, c] = p.map(|x| number(x, span));
        ["x", "y", "z"].map(|axis| {
            let builtin = Ident::new(&format!("position_{axis}"), span);
            parse_quote_spanned!(span=> #builtin(#link, #a, #b, #c))
        })
    };
    let dot = |a: &[Expr; 3], b: &[Expr; 3]| -> Expr {
        let (a0, a1, a2) = (&a[0], &a[1], &a[2]);
        let (b0, b1, b2) = (&b[0], &b[1], &b[2]);
        parse_quote_spanned!(span=> #a0 * #b0 + #a1 * #b1 + #a2 * #b2)
    };
    let p_parent = position(&parent, joint.translation);
    let p_child = position(&child, [0.0; 3]);
    let separation: [Expr; 3] = std::array::from_fn(|k| {
        let (c, p) = (&p_child[k], &p_parent[k]);
        parse_quote_spanned!(span=> (#c - #p))
    });
    let parent_u1 = direction(&parent, in_parent(u1));
    let parent_u2 = direction(&parent, in_parent(u2));
    let child_axis = direction(&child, joint.axis);
    let mut rows = Vec::new();
    if joint.kind.rotates() {
        for (k, axis) in ["x", "y", "z"].iter().enumerate() {
            let (p, c) = (&p_parent[k], &p_child[k]);
            rows.push((name(axis), parse_quote_spanned!(span=> #p - #c)));
        }
        rows.push((name("axis1"), dot(&parent_u1, &child_axis)));
        rows.push((name("axis2"), dot(&parent_u2, &child_axis)));
    } else {
        let child_u2 = direction(&child, u2);
        rows.push((name("axis1"), dot(&parent_u1, &child_axis)));
        rows.push((name("axis2"), dot(&parent_u2, &child_axis)));
        rows.push((name("twist"), dot(&parent_u1, &child_u2)));
        rows.push((name("slide1"), dot(&separation, &parent_u1)));
        rows.push((name("slide2"), dot(&separation, &parent_u2)));
    }
    if let Some(mimic) = &joint.mimic {
        let followed = &robot.joints[mimic.joint];
        let this = joint_position(robot, joint, span);
        let other = joint_position(robot, followed, span);
        let (multiplier, offset) = (number(mimic.multiplier, span), number(mimic.offset, span));
        rows.push((
            name("mimic"),
            parse_quote_spanned!(span=> #this - (#multiplier * #other + #offset)),
        ));
    }
    rows
}

/// The position of a joint as an expression of the maximal coordinates: its angle
/// `atan2((R_P R_o u_2)·(R_C u_1), (R_P R_o u_1)·(R_C u_1))` or its offset
/// `(p_C − p_P)·(R_P R_o a)`.
pub fn joint_position(robot: &Robot, joint: &super::robot::Joint, span: Span) -> Expr {
    let parent = link_literal(&robot.links[joint.parent].name, span);
    let child = link_literal(&robot.links[joint.child].name, span);
    let (u1, u2) = perpendiculars(joint.axis);
    let in_parent = |v: [f64; 3]| apply(&joint.rotation, v);
    let component = |kind: &str, link: &Expr, v: [f64; 3], axis: &str| -> Expr {
        let builtin = Ident::new(&format!("{kind}_{axis}"), span);
        let [a, b, c] = v.map(|x| number(x, span));
        parse_quote_spanned!(span=> #builtin(#link, #a, #b, #c))
    };
    let dot = |f: &dyn Fn(&str) -> Expr, g: &dyn Fn(&str) -> Expr| -> Expr {
        let [(a0, b0), (a1, b1), (a2, b2)] = ["x", "y", "z"].map(|axis| (f(axis), g(axis)));
        parse_quote_spanned!(span=> (#a0 * #b0 + #a1 * #b1 + #a2 * #b2))
    };
    if joint.kind.rotates() {
        let child_u1 = |axis: &str| component("direction", &child, u1, axis);
        let sine = dot(
            &|axis| component("direction", &parent, in_parent(u2), axis),
            &child_u1,
        );
        let cosine = dot(
            &|axis| component("direction", &parent, in_parent(u1), axis),
            &child_u1,
        );
        parse_quote_spanned!(span=> #sine.atan2(#cosine))
    } else {
        let separation = |axis: &str| -> Expr {
            let c = component("position", &child, [0.0; 3], axis);
            let p = component("position", &parent, joint.translation, axis);
            parse_quote_spanned!(span=> (#c - #p))
        };
        dot(&separation, &|axis| {
            component("direction", &parent, in_parent(joint.axis), axis)
        })
    }
}

/// Whether the robot's maximal coordinates are well posed: every body has mass and moments
/// that make its mass matrix positive definite. Returns the message for the first that does
/// not.
pub fn degenerate_body(robot: &Robot, bodies: &Bodies) -> Option<String> {
    bodies.bodies.iter().find_map(|body| {
        let name = &robot.links[body.top].name;
        let [a, b, c] = body.moments;
        let scale = a.max(b).max(c).max(f64::MIN_POSITIVE);
        let flat = [(a, b, c), (b, c, a), (c, a, b)]
            .iter()
            .any(|&(i, j, k)| i >= j + k - 1e-12 * scale);
        if body.mass <= 0.0 {
            Some(format!(
                "link `{name}` (with the links welded to it) has no mass, so its position in \
                 maximal coordinates has none; give it an `<inertial>`, or import the robot \
                 with `coordinates: joints`"
            ))
        } else if flat {
            Some(format!(
                "link `{name}` (with the links welded to it) has principal moments \
                 {a:.3e}, {b:.3e}, {c:.3e} about its centre of mass; a rotation matrix needs \
                 each below the sum of the other two (a rod or a point mass is not a rigid \
                 body of maximal coordinates); import the robot with `coordinates: joints`"
            ))
        } else {
            None
        }
    })
}

fn link_literal(name: &str, span: Span) -> Expr {
    let literal = syn::LitStr::new(name, span);
    parse_quote_spanned!(span=> #literal)
}

/// Two unit vectors completing the unit `axis` to a right-handed orthonormal frame
/// `(u1, u2, axis)`: `u2 = axis × u1`.
fn perpendiculars(axis: [f64; 3]) -> ([f64; 3], [f64; 3]) {
    // The coordinate axis least aligned with `axis`, made perpendicular to it.
    let k = (0..3)
        .min_by(|&i, &j| axis[i].abs().total_cmp(&axis[j].abs()))
        .unwrap_or(0);
    let mut e = [0.0; 3];
    e[k] = 1.0;
    let along: f64 = (0..3).map(|i| e[i] * axis[i]).sum();
    let u = [0, 1, 2].map(|i| e[i] - along * axis[i]);
    let norm = u.iter().map(|x| x * x).sum::<f64>().sqrt();
    let u1 = u.map(|x| x / norm);
    let u2 = [
        axis[1] * u1[2] - axis[2] * u1[1],
        axis[2] * u1[0] - axis[0] * u1[2],
        axis[0] * u1[1] - axis[1] * u1[0],
    ];
    (u1, u2)
}

fn apply(m: &Matrix3, v: [f64; 3]) -> [f64; 3] {
    [0, 1, 2].map(|i| (0..3).map(|k| m[i][k] * v[k]).sum())
}

fn number(x: f64, span: Span) -> Expr {
    super::number(x, span)
}

/// The eigenvalues and eigenvectors (as the columns of a rotation) of a symmetric 3 × 3
/// matrix, by cyclic Jacobi rotations (Golub & Van Loan, *Matrix Computations*, §8.5): each
/// sweep zeroes the off-diagonal entries in turn; converged to rounding in a few sweeps.
pub fn principal_axes(mut a: Matrix3) -> ([f64; 3], Matrix3) {
    let mut v = IDENTITY;
    for _ in 0..50 {
        let off: f64 = a[0][1].powi(2) + a[0][2].powi(2) + a[1][2].powi(2);
        let diagonal: f64 = (0..3).map(|i| a[i][i].powi(2)).sum();
        if off <= 1e-34 * diagonal || off == 0.0 {
            break;
        }
        for (p, q) in [(0, 1), (0, 2), (1, 2)] {
            if a[p][q] == 0.0 {
                continue;
            }
            let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
            let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
            let t = if theta == 0.0 { 1.0 } else { t };
            let c = 1.0 / (t * t + 1.0).sqrt();
            let s = t * c;
            // a ← Jᵀ a J with J the rotation in the (p, q) plane.
            for row in a.iter_mut() {
                let (akp, akq) = (row[p], row[q]);
                row[p] = c * akp - s * akq;
                row[q] = s * akp + c * akq;
            }
            let (row_p, row_q) = (a[p], a[q]);
            a[p] = std::array::from_fn(|k| c * row_p[k] - s * row_q[k]);
            a[q] = std::array::from_fn(|k| s * row_p[k] + c * row_q[k]);
            for row in v.iter_mut() {
                let (vkp, vkq) = (row[p], row[q]);
                row[p] = c * vkp - s * vkq;
                row[q] = s * vkp + c * vkq;
            }
        }
    }
    let determinant = v[0][0] * (v[1][1] * v[2][2] - v[1][2] * v[2][1])
        - v[0][1] * (v[1][0] * v[2][2] - v[1][2] * v[2][0])
        + v[0][2] * (v[1][0] * v[2][1] - v[1][1] * v[2][0]);
    if determinant < 0.0 {
        for row in v.iter_mut() {
            row[2] = -row[2];
        }
    }
    ([a[0][0], a[1][1], a[2][2]], v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn principal_axes_diagonalize_a_symmetric_matrix() {
        let m = [[2.0, 0.3, -0.1], [0.3, 1.5, 0.2], [-0.1, 0.2, 1.0]];
        let (moments, v) = principal_axes(m);
        // vᵀ m v is diagonal with the moments; v is a rotation.
        let d = multiply(&multiply(&transpose(&v), &m), &v);
        for i in 0..3 {
            for j in 0..3 {
                let expected = if i == j { moments[i] } else { 0.0 };
                assert!((d[i][j] - expected).abs() < 1e-14, "{d:?}");
            }
        }
        let trace: f64 = moments.iter().sum();
        assert!((trace - 4.5).abs() < 1e-14);
        let identity = multiply(&transpose(&v), &v);
        for (i, row) in identity.iter().enumerate() {
            for (j, &entry) in row.iter().enumerate() {
                assert!((entry - f64::from(u8::from(i == j))).abs() < 1e-14);
            }
        }
        let det = v[0][0] * (v[1][1] * v[2][2] - v[1][2] * v[2][1])
            - v[0][1] * (v[1][0] * v[2][2] - v[1][2] * v[2][0])
            + v[0][2] * (v[1][0] * v[2][1] - v[1][1] * v[2][0]);
        assert!((det - 1.0).abs() < 1e-14);
    }

    #[test]
    fn perpendiculars_complete_a_right_handed_frame() {
        for axis in [[0.0, 0.0, 1.0], [0.0, -1.0, 0.0], [0.6, 0.0, 0.8]] {
            let (u1, u2) = perpendiculars(axis);
            let dot = |a: [f64; 3], b: [f64; 3]| (0..3).map(|i| a[i] * b[i]).sum::<f64>();
            assert!(dot(u1, axis).abs() < 1e-15 && dot(u2, axis).abs() < 1e-15);
            assert!(dot(u1, u2).abs() < 1e-15);
            assert!((dot(u1, u1) - 1.0).abs() < 1e-15 && (dot(u2, u2) - 1.0).abs() < 1e-15);
        }
    }
}
