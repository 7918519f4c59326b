//! Reads a URDF file at compile time into a [`Robot`]: the file is parsed by `urdf-rs`, and
//! scanned once more with `quick-xml` for what `urdf-rs` drops (line numbers, `<transmission>`,
//! `<gazebo>`, attributes outside the specification), so that nothing in the file is ignored
//! without the user's `ignore: [..]`.
//!
//! Every mistake is an error at the user's file literal that names the file, the element and
//! its line: a missing or unreadable file, a joint type the importer does not model (`floating`,
//! `planar`, `spherical`), a link or joint named twice, a joint whose links do not exist, a
//! tree with no root or several, a loop of joints, a zero axis, a mimic of an unknown or fixed
//! joint, a negative or non-finite mass, inertia or damping.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use quick_xml::events::{BytesStart, Event};
use syn::{Ident, LitStr};

use super::options::{Omission, Options};
use super::robot::{multiply, rpy_matrix, transpose, Joint, JointKind, Link, Mimic, Robot};
use crate::errors::Errors;

/// Reads the robot of `options.file`, relative to the crate's manifest directory; `None` after
/// an error.
pub fn read(options: &Options, errors: &mut Errors) -> Option<Robot> {
    let file = &options.file;
    let path = resolve(&file.value());
    let shown = file.value();
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) => {
            errors.error_spanned(
                file,
                format!(
                    "cannot read the URDF file `{shown}`: {error}; the path is relative to the \
                     crate's manifest directory (`CARGO_MANIFEST_DIR`)"
                ),
            );
            return None;
        }
    };
    let inventory = match scan(&text) {
        Ok(inventory) => inventory,
        Err(message) => {
            errors.error_spanned(file, format!("`{shown}` is not a URDF file: {message}"));
            return None;
        }
    };
    let before = errors.is_empty();
    report_unknown(file, &shown, &inventory, errors);
    report_omissions(file, &shown, &inventory, &options.ignore, errors);
    let urdf = match urdf_rs::read_from_string(&text) {
        Ok(urdf) => urdf,
        Err(error) => {
            errors.error_spanned(
                file,
                format!("`{shown}` is not a URDF file urdf-rs can read: {error}"),
            );
            return None;
        }
    };
    let robot = build(&urdf, &inventory, options, &path, errors);
    (before && errors.is_empty()).then_some(robot?)
}

/// Resolves `file` against the crate being compiled (`CARGO_MANIFEST_DIR`), unless absolute.
fn resolve(file: &str) -> PathBuf {
    let file = Path::new(file);
    if file.is_absolute() {
        return file.to_path_buf();
    }
    match std::env::var_os("CARGO_MANIFEST_DIR") {
        Some(dir) => Path::new(&dir).join(file),
        None => file.to_path_buf(),
    }
}

/// What the XML says beyond what `urdf-rs` returns: where each joint and link is, and every
/// element or attribute the model leaves out.
#[derive(Default)]
struct Inventory {
    /// The line of each `<joint name>` directly under `<robot>`.
    joints: HashMap<String, usize>,
    /// What the model leaves out: the omission, what and whose it is, its line.
    omitted: Vec<(Omission, String, usize)>,
    /// Elements that are not URDF at all, with their lines.
    unknown: Vec<(String, usize)>,
}

/// Scans the XML: elements directly under `<robot>`, and the children of joints and links.
fn scan(text: &str) -> Result<Inventory, String> {
    let mut reader = quick_xml::Reader::from_str(text);
    let mut inventory = Inventory::default();
    // The names of the open elements, and the name attribute of the open top-level one.
    let mut open: Vec<String> = Vec::new();
    let mut owner = String::new();
    let line_of = |position: u64| {
        let end = (position as usize).min(text.len());
        text.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    };
    loop {
        let position = reader.buffer_position();
        let event = reader
            .read_event()
            .map_err(|e| format!("{e} (line {})", line_of(reader.error_position())))?;
        let (element, empty) = match &event {
            Event::Start(e) => (e, false),
            Event::Empty(e) => (e, true),
            Event::End(_) => {
                open.pop();
                continue;
            }
            Event::Eof => break,
            _ => continue,
        };
        let name = String::from_utf8_lossy(element.name().as_ref()).into_owned();
        let line = line_of(position)
            + text[position as usize..]
                .split('<')
                .next()
                .map_or(0, |gap| gap.matches('\n').count());
        let depth = open.len();
        if depth == 1 && open[0] == "robot" {
            owner = attribute(element, "name").unwrap_or_default();
            match name.as_str() {
                "joint" => {
                    inventory.joints.insert(owner.clone(), line);
                }
                "link" | "material" => {}
                "transmission" => inventory.omitted.push((
                    Omission::Transmissions,
                    format!("`<transmission name=\"{owner}\">`"),
                    line,
                )),
                "gazebo" => {
                    inventory
                        .omitted
                        .push((Omission::Extensions, "`<gazebo>`".to_string(), line))
                }
                other => inventory.unknown.push((format!("<{other}>"), line)),
            }
        } else if depth == 2 && open[1] == "joint" {
            joint_child(&mut inventory, element, &name, &owner, line);
        } else if depth == 2 && open[1] == "link" {
            if !["inertial", "visual", "collision"].contains(&name.as_str()) {
                inventory.omitted.push((
                    Omission::Extensions,
                    format!("`<{name}>` of link `{owner}`"),
                    line,
                ));
            }
        } else if depth == 0 && name != "robot" {
            return Err(format!("the root element is `<{name}>`, not `<robot>`"));
        }
        if !empty {
            open.push(name);
        }
    }
    Ok(inventory)
}

/// Records what the model leaves out of a joint's child element `name`.
fn joint_child(
    inventory: &mut Inventory,
    element: &BytesStart,
    name: &str,
    joint: &str,
    line: usize,
) {
    let mut omit = |omission, what: String| inventory.omitted.push((omission, what, line));
    match name {
        "origin" | "parent" | "child" | "axis" | "mimic" => {}
        "limit" => {
            let bounds: Vec<&str> = ["lower", "upper", "velocity"]
                .into_iter()
                .filter(|a| attribute(element, a).is_some())
                .collect();
            if !bounds.is_empty() {
                omit(
                    Omission::Limits,
                    format!("`<limit {}>` of joint `{joint}`", bounds.join(" ")),
                );
            }
        }
        "safety_controller" => omit(
            Omission::Limits,
            format!("`<safety_controller>` of joint `{joint}`"),
        ),
        "calibration" => omit(
            Omission::Calibration,
            format!("`<calibration>` of joint `{joint}`"),
        ),
        "dynamics" => {
            let friction = attribute(element, "friction")
                .and_then(|f| f.trim().parse::<f64>().ok())
                .unwrap_or(0.0);
            if friction != 0.0 {
                omit(
                    Omission::Friction,
                    format!("`<dynamics friction>` of joint `{joint}`"),
                );
            }
            let extra: Vec<String> = element
                .attributes()
                .flatten()
                .map(|a| String::from_utf8_lossy(a.key.as_ref()).into_owned())
                .filter(|key| key != "damping" && key != "friction")
                .collect();
            if !extra.is_empty() {
                omit(
                    Omission::Extensions,
                    format!("`<dynamics {}>` of joint `{joint}`", extra.join(" ")),
                );
            }
        }
        other => omit(
            Omission::Extensions,
            format!("`<{other}>` of joint `{joint}`"),
        ),
    }
}

/// Returns the unescaped value of attribute `key` of `element`.
fn attribute(element: &BytesStart, key: &str) -> Option<String> {
    element
        .try_get_attribute(key)
        .ok()
        .flatten()
        .and_then(|a| a.unescape_value().ok().map(|v| v.into_owned()))
}

/// Reports elements that are not URDF (such as unexpanded xacro macros).
fn report_unknown(file: &LitStr, shown: &str, inventory: &Inventory, errors: &mut Errors) {
    for (element, line) in &inventory.unknown {
        let hint = if element.starts_with("<xacro:") {
            "; the file is a xacro template: expand it first (`xacro robot.urdf.xacro > robot.urdf`)"
        } else {
            ""
        };
        errors.error_spanned(
            file,
            format!("`{shown}` line {line}: `{element}` is not an element of URDF{hint}"),
        );
    }
}

/// Reports each kind of omission the user did not acknowledge in `ignore`, once, with its
/// first occurrences.
fn report_omissions(
    file: &LitStr,
    shown: &str,
    inventory: &Inventory,
    ignore: &[Omission],
    errors: &mut Errors,
) {
    for omission in Omission::ALL {
        if ignore.contains(&omission) {
            continue;
        }
        let found: Vec<String> = inventory
            .omitted
            .iter()
            .filter(|(o, _, _)| *o == omission)
            .map(|(_, what, line)| format!("{what} (line {line})"))
            .collect();
        let Some(first) = found.first() else { continue };
        let more = match found.len() {
            1 => String::new(),
            2 => format!(" and {}", found[1]),
            n => format!(", {} and {} more", found[1], n - 2),
        };
        let consequence = match omission {
            Omission::Limits => {
                "the model does not keep the motion within the joints' ranges and speeds"
            }
            Omission::Friction => {
                "the model has no Coulomb friction in the joints (only `<dynamics damping>`)"
            }
            Omission::Transmissions => {
                "the model applies forces to the joints directly, without actuators or gear ratios"
            }
            Omission::Extensions => "the model reads only what the URDF specification defines",
            Omission::Calibration => "the model does not use encoder calibrations",
        };
        errors.error_spanned(
            file,
            format!(
                "`{shown}` has {first}{more}: {consequence}; add `ignore: [{}]` to the `urdf` \
                 options to import the robot without them",
                omission.keyword()
            ),
        );
    }
}

/// Builds the robot's tree from the parsed file, checking it.
fn build(
    urdf: &urdf_rs::Robot,
    inventory: &Inventory,
    options: &Options,
    path: &Path,
    errors: &mut Errors,
) -> Option<Robot> {
    let file = &options.file;
    let shown = file.value();
    let joint_line = |name: &str| inventory.joints.get(name).copied().unwrap_or(0);
    let mut fail = |message: String| errors.error_spanned(file, format!("`{shown}`: {message}"));

    let mut link_index: HashMap<&str, usize> = HashMap::new();
    for (i, link) in urdf.links.iter().enumerate() {
        if link_index.insert(link.name.as_str(), i).is_some() {
            fail(format!("link `{}` is defined twice", link.name));
        }
    }
    // The parent joint of each link, and the children of each link in file order.
    let mut parent_joint: Vec<Option<usize>> = vec![None; urdf.links.len()];
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); urdf.links.len()];
    let mut joint_names: HashMap<&str, usize> = HashMap::new();
    let mut sound = true;
    for (j, joint) in urdf.joints.iter().enumerate() {
        let line = joint_line(&joint.name);
        if joint_names.insert(joint.name.as_str(), j).is_some() {
            fail(format!(
                "joint `{}` (line {line}) is defined twice",
                joint.name
            ));
            sound = false;
        }
        let kind = format!("{:?}", joint.joint_type).to_lowercase();
        if matches!(
            joint.joint_type,
            urdf_rs::JointType::Floating
                | urdf_rs::JointType::Planar
                | urdf_rs::JointType::Spherical
        ) {
            fail(format!(
                "joint `{}` (line {line}) is `{kind}`, which the importer does not model; it \
                 reads `revolute`, `continuous`, `prismatic` and `fixed` joints",
                joint.name
            ));
            sound = false;
        }
        let parent = link_index.get(joint.parent.link.as_str()).copied();
        let child = link_index.get(joint.child.link.as_str()).copied();
        for (role, link, index) in [
            ("parent", &joint.parent.link, parent),
            ("child", &joint.child.link, child),
        ] {
            if index.is_none() {
                fail(format!(
                    "joint `{}` (line {line}) names {role} link `{link}`, which is not defined",
                    joint.name
                ));
                sound = false;
            }
        }
        let (Some(parent), Some(child)) = (parent, child) else {
            continue;
        };
        if let Some(other) = parent_joint[child].replace(j) {
            fail(format!(
                "link `{}` is the child of two joints, `{}` and `{}`; URDF describes a tree \
                 (close a loop with a row in `holonomic` instead)",
                joint.child.link, urdf.joints[other].name, joint.name
            ));
            sound = false;
        }
        children[parent].push(j);
    }
    if !sound {
        return None;
    }
    let roots: Vec<usize> = (0..urdf.links.len())
        .filter(|&i| parent_joint[i].is_none())
        .collect();
    let root = match roots.as_slice() {
        [root] => *root,
        [] => {
            fail(
                "no link is the root: every link is some joint's child, so the joints form a loop"
                    .into(),
            );
            return None;
        }
        several => {
            let names: Vec<String> = several
                .iter()
                .map(|&i| format!("`{}`", urdf.links[i].name))
                .collect();
            fail(format!(
                "the links {} are not connected by joints; a robot is one tree with one root",
                names.join(", ")
            ));
            return None;
        }
    };

    // Depth-first from the root, children in file order.
    let mut order = Vec::new();
    let mut joints_order = Vec::new();
    let mut stack = vec![(root, None::<usize>)];
    while let Some((link, via)) = stack.pop() {
        order.push(link);
        if let Some(j) = via {
            joints_order.push(j);
        }
        for &j in children[link].iter().rev() {
            let child = link_index[urdf.joints[j].child.link.as_str()];
            stack.push((child, Some(j)));
        }
    }
    if order.len() != urdf.links.len() {
        fail("some links are not reachable from the root: their joints form a loop".into());
        return None;
    }
    let position: HashMap<usize, usize> = order.iter().enumerate().map(|(k, &i)| (i, k)).collect();
    let joint_position: HashMap<&str, usize> = joints_order
        .iter()
        .enumerate()
        .map(|(k, &j)| (urdf.joints[j].name.as_str(), k))
        .collect();

    let mut links = Vec::new();
    for &i in &order {
        let link = &urdf.links[i];
        let inertial = &link.inertial;
        let mass = inertial.mass.value;
        let t = &inertial.inertia;
        let tensor = [
            [t.ixx, t.ixy, t.ixz],
            [t.ixy, t.iyy, t.iyz],
            [t.ixz, t.iyz, t.izz],
        ];
        if !(mass.is_finite() && mass >= 0.0) {
            fail(format!(
                "link `{}` has mass {mass}; a mass is finite and not negative",
                link.name
            ));
        }
        if tensor.iter().flatten().any(|x| !x.is_finite()) || (0..3).any(|k| tensor[k][k] < 0.0) {
            fail(format!(
                "link `{}` has an inertia tensor with a negative or non-finite moment",
                link.name
            ));
        }
        let rotation = rpy_matrix(inertial.origin.rpy.0);
        links.push(Link {
            name: link.name.clone(),
            mass,
            com: inertial.origin.xyz.0,
            inertia: multiply(&multiply(&rotation, &tensor), &transpose(&rotation)),
        });
    }

    let mut joints: Vec<Joint> = Vec::new();
    let mut idents: HashMap<String, String> = HashMap::new();
    for &j in &joints_order {
        let joint = &urdf.joints[j];
        let line = joint_line(&joint.name);
        let kind = match joint.joint_type {
            urdf_rs::JointType::Revolute => JointKind::Revolute,
            urdf_rs::JointType::Continuous => JointKind::Continuous,
            urdf_rs::JointType::Prismatic => JointKind::Prismatic,
            _ => JointKind::Fixed,
        };
        let axis = joint.axis.xyz.0;
        let norm = axis.iter().map(|a| a * a).sum::<f64>().sqrt();
        if kind.moves() && !(norm.is_finite() && norm > 0.0) {
            fail(format!(
                "joint `{}` (line {line}) has a zero axis",
                joint.name
            ));
        }
        let damping = joint.dynamics.as_ref().map_or(0.0, |d| d.damping);
        if !(damping.is_finite() && damping >= 0.0) {
            fail(format!(
                "joint `{}` (line {line}) has damping {damping}; a damping is finite and not negative",
                joint.name
            ));
        }
        let ident = identifier(&joint.name, file);
        if kind.moves() {
            if let Some(other) = idents.insert(ident.to_string(), joint.name.clone()) {
                fail(format!(
                    "joints `{other}` and `{}` both become the coordinate `{ident}`; rename one",
                    joint.name
                ));
            }
        }
        let mimic = joint.mimic.as_ref().and_then(|mimic| {
            let followed = joint_position.get(mimic.joint.as_str()).copied();
            let message = match followed.map(|k| &urdf.joints[joints_order[k]]) {
                None => Some(format!(
                    "joint `{}` (line {line}) mimics joint `{}`, which is not defined",
                    joint.name, mimic.joint
                )),
                Some(other) if other.name == joint.name => Some(format!(
                    "joint `{}` (line {line}) mimics itself",
                    joint.name
                )),
                Some(other) if other.joint_type == urdf_rs::JointType::Fixed => Some(format!(
                    "joint `{}` (line {line}) mimics joint `{}`, which is fixed",
                    joint.name, mimic.joint
                )),
                Some(_) if !kind.moves() => Some(format!(
                    "joint `{}` (line {line}) is fixed but has a `<mimic>`",
                    joint.name
                )),
                Some(_) => None,
            };
            if let Some(message) = message {
                fail(message);
                return None;
            }
            Some(Mimic {
                joint: followed?,
                multiplier: mimic.multiplier.unwrap_or(1.0),
                offset: mimic.offset.unwrap_or(0.0),
            })
        });
        joints.push(Joint {
            name: joint.name.clone(),
            ident,
            kind,
            parent: position[&link_index[joint.parent.link.as_str()]],
            child: position[&link_index[joint.child.link.as_str()]],
            rotation: rpy_matrix(joint.origin.rpy.0),
            translation: joint.origin.xyz.0,
            axis: if norm > 0.0 {
                axis.map(|a| a / norm)
            } else {
                axis
            },
            damping,
            effort: (joint.limit.effort > 0.0).then_some(joint.limit.effort),
            mimic,
            line,
        });
    }
    Some(Robot {
        name: urdf.name.clone(),
        path: path.to_path_buf(),
        file: file.clone(),
        links,
        joints,
        gravity: options.gravity,
        formulation: options.formulation,
    })
}

/// Returns the coordinate name of joint `name` ([`identifier_text`]); a Rust keyword becomes a
/// raw identifier.
fn identifier(name: &str, file: &LitStr) -> Ident {
    let mut ident = identifier_text(name);
    if ["self", "Self", "super", "crate"].contains(&ident.as_str()) {
        // These keywords cannot be raw identifiers.
        ident.push_str("_joint");
    }
    match syn::parse_str::<Ident>(&ident) {
        Ok(_) => Ident::new(&ident, file.span()),
        Err(_) => Ident::new_raw(&ident, file.span()),
    }
}

/// Returns a name of the file made an identifier's text: every character that cannot be in an
/// identifier replaced by `_`, and `_` before a leading digit.
pub fn identifier_text(name: &str) -> String {
    let mut ident: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if ident.is_empty() || ident.starts_with(|c: char| c.is_ascii_digit()) {
        ident.insert(0, '_');
    }
    if ident == "_" {
        ident.push_str("_link");
    }
    ident
}
