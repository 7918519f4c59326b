//! The kinetic and potential energy of a robot in joint coordinates, built symbolically from
//! its composed transforms: the recursions of Featherstone's algorithms (*Rigid Body Dynamics
//! Algorithms*, 2008, §3.3 and §4.3) written out as expressions, so that the macro derives
//! `M(q)`, `∇V`, the velocity terms and every derivative an integrator asks for from them like
//! from any other model.
//!
//! With link `C` the child of joint `j` on link `P`, and the joint's origin `(R_o, t_o)` in
//! `P`'s frame, URDF puts `C`'s frame at `R_rel = R_o R_m(q_j)`, `r = t_o + R_o t_m(q_j)` in
//! `P`'s frame: a revolute joint turns by `R_m = exp(q_j [a]×)` (`t_m = 0`), a prismatic one
//! shifts by `t_m = a q_j` (`R_m = I`), about or along the joint's axis `a`. In world
//! coordinates (the root link's frame)
//!
//! ```text
//! R_C = R_P R_rel,        p_C = p_P + R_P r,
//! ```
//!
//! and in the link's own frame the angular velocity `ω` and the velocity `u` of its origin are
//!
//! ```text
//! ω_C = R_relᵀ ω_P + a q̇_j (revolute),   u_C = R_relᵀ (u_P + ω_P × r) + a q̇_j (prismatic).
//! ```
//!
//! A link of mass `m`, centre of mass `c` and inertia `I_c` about it (both in the link frame)
//! adds `T = ½ m |u + ω × c|² + ½ ωᵀ I_c ω` and `V = −m gᵀ (p + R c)`, with `g` the gravity
//! vector (its magnitude the run-time parameter `gravity`, its direction fixed by the file's
//! options).

use mechanism_cas::{Id, Store, Symbol};

use super::robot::{JointKind, Matrix3, Robot};

/// A link's pose in the world and its velocity in its own frame, as expressions.
#[derive(Clone, Copy)]
struct Frame {
    /// World from link.
    rotation: [[Id; 3]; 3],
    /// The link frame's origin in the world.
    origin: [Id; 3],
    /// The angular velocity, in the link frame.
    omega: [Id; 3],
    /// The velocity of the link frame's origin, in the link frame.
    velocity: [Id; 3],
}

/// The coordinate of a moving joint: its position and velocity symbols.
#[derive(Clone, Copy)]
pub struct JointSymbols {
    /// `q_j`.
    pub position: Symbol,
    /// `q̇_j`.
    pub velocity: Symbol,
}

/// The robot's energies in joint coordinates, and its links' poses for the built-ins
/// `position_x(link, ..)` and `direction_x(link, ..)`.
pub struct Energies {
    /// `T(q, q̇)`.
    pub kinetic: Id,
    /// `V(q)`, zero without gravity.
    pub potential: Id,
    /// Each link's pose in the world.
    pub poses: Poses,
}

/// The world pose of each link, as expressions of the joint coordinates.
pub struct Poses {
    /// By link, in [`Robot::links`] order: the link's name, its rotation (world from link) and
    /// its origin in the world.
    pub links: Vec<(String, [[Id; 3]; 3], [Id; 3])>,
}

impl Poses {
    /// Returns the rotation and origin of link `name`.
    pub fn get(&self, name: &str) -> Option<(&[[Id; 3]; 3], &[Id; 3])> {
        self.links
            .iter()
            .find(|(link, _, _)| link == name)
            .map(|(_, rotation, origin)| (rotation, origin))
    }

    /// Returns the links' names, for messages.
    pub fn names(&self) -> Vec<&str> {
        self.links
            .iter()
            .map(|(name, _, _)| name.as_str())
            .collect()
    }
}

/// Builds `T` and `V` of `robot` in joint coordinates: `coordinates[k]` are the symbols of the
/// `k`-th moving joint ([`Robot::moving_joints`]), `gravity` the symbol of the gravity's
/// magnitude (`None` when the robot's gravity vector is zero).
pub fn joint_space(
    robot: &Robot,
    store: &mut Store,
    coordinates: &[JointSymbols],
    gravity: Option<Symbol>,
) -> Energies {
    let zero = store.num(0.0);
    let one = store.num(1.0);
    let identity = [[one, zero, zero], [zero, one, zero], [zero, zero, one]];
    let root = Frame {
        rotation: identity,
        origin: [zero; 3],
        omega: [zero; 3],
        velocity: [zero; 3],
    };
    let mut frames = vec![root; robot.links.len()];
    let mut moving = coordinates.iter();
    for joint in &robot.joints {
        let parent = frames[joint.parent];
        let symbols = if joint.kind.moves() {
            moving.next().copied()
        } else {
            None
        };
        let axis = joint.axis.map(|a| store.num(a));
        let origin_rotation = constant(store, &joint.rotation);
        let (relative, offset) = match (joint.kind, symbols) {
            (JointKind::Revolute | JointKind::Continuous, Some(s)) => {
                let q = store.symbol(s.position);
                let turn = rotation_about(store, joint.axis, q);
                (
                    multiply(store, &origin_rotation, &turn),
                    constant_vector(store, joint.translation),
                )
            }
            (JointKind::Prismatic, Some(s)) => {
                let q = store.symbol(s.position);
                let shift = axis.map(|a| store.mul(a, q));
                let rotated = apply(store, &origin_rotation, shift);
                let translation = constant_vector(store, joint.translation);
                (origin_rotation, add(store, translation, rotated))
            }
            _ => (origin_rotation, constant_vector(store, joint.translation)),
        };
        let transposed = transpose(&relative);
        let mut omega = apply(store, &transposed, parent.omega);
        let carried = cross(store, parent.omega, offset);
        let carried = add(store, parent.velocity, carried);
        let mut velocity = apply(store, &transposed, carried);
        if let Some(s) = symbols {
            let rate = store.symbol(s.velocity);
            let along = axis.map(|a| store.mul(a, rate));
            if joint.kind.rotates() {
                omega = add(store, omega, along);
            } else {
                velocity = add(store, velocity, along);
            }
        }
        let moved = apply(store, &parent.rotation, offset);
        frames[joint.child] = Frame {
            rotation: multiply(store, &parent.rotation, &relative),
            origin: add(store, parent.origin, moved),
            omega,
            velocity,
        };
    }

    let magnitude = robot.gravity.iter().map(|g| g * g).sum::<f64>().sqrt();
    let mut kinetic = Vec::new();
    let mut height = Vec::new();
    for (link, frame) in robot.links.iter().zip(&frames) {
        let com = constant_vector(store, link.com);
        // ½ m |u + ω × c|² + ½ ωᵀ I ω.
        if link.mass > 0.0 {
            let spin = cross(store, frame.omega, com);
            let centre = add(store, frame.velocity, spin);
            let square = dot(store, centre, centre);
            let half_mass = store.num(0.5 * link.mass);
            kinetic.push(store.mul(half_mass, square));
        }
        let inertia = constant(store, &link.inertia);
        let spun = apply(store, &inertia, frame.omega);
        let rotational = dot(store, frame.omega, spun);
        let half = store.num(0.5);
        kinetic.push(store.mul(half, rotational));
        // −m ĝᵀ (p + R c), times the magnitude below.
        if link.mass > 0.0 && magnitude > 0.0 {
            let placed = apply(store, &frame.rotation, com);
            let centre = add(store, frame.origin, placed);
            let down = robot.gravity.map(|g| store.num(-link.mass * g / magnitude));
            height.push(dot(store, down, centre));
        }
    }
    let kinetic = store.sum(kinetic);
    let potential = match gravity {
        Some(g) if magnitude > 0.0 => {
            let g = store.symbol(g);
            let height = store.sum(height);
            store.mul(g, height)
        }
        _ => zero,
    };
    let poses = Poses {
        links: robot
            .links
            .iter()
            .zip(&frames)
            .map(|(link, frame)| (link.name.clone(), frame.rotation, frame.origin))
            .collect(),
    };
    Energies {
        kinetic,
        potential,
        poses,
    }
}

/// Returns the rotation by `angle` about the unit `axis`:
/// `R_ij = a_i a_j + (δ_ij − a_i a_j) cos θ − ε_ijk a_k sin θ`, whose constant zeros fold away
/// for an axis along a coordinate axis.
fn rotation_about(store: &mut Store, axis: [f64; 3], angle: Id) -> [[Id; 3]; 3] {
    let cos = store.cos(angle);
    let sin = store.sin(angle);
    let [x, y, z] = axis;
    let skew = [[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]];
    std::array::from_fn(|i| {
        std::array::from_fn(|j| {
            let outer = axis[i] * axis[j];
            let delta = if i == j { 1.0 } else { 0.0 };
            let fixed = store.num(outer);
            let c = store.num(delta - outer);
            let c = store.mul(c, cos);
            let s = store.num(skew[i][j]);
            let s = store.mul(s, sin);
            let turning = store.add(c, s);
            store.add(fixed, turning)
        })
    })
}

fn constant(store: &mut Store, m: &Matrix3) -> [[Id; 3]; 3] {
    m.map(|row| row.map(|x| store.num(x)))
}

fn constant_vector(store: &mut Store, v: [f64; 3]) -> [Id; 3] {
    v.map(|x| store.num(x))
}

fn transpose(m: &[[Id; 3]; 3]) -> [[Id; 3]; 3] {
    std::array::from_fn(|i| std::array::from_fn(|j| m[j][i]))
}

fn multiply(store: &mut Store, a: &[[Id; 3]; 3], b: &[[Id; 3]; 3]) -> [[Id; 3]; 3] {
    std::array::from_fn(|i| {
        std::array::from_fn(|j| {
            let terms: Vec<Id> = (0..3).map(|k| store.mul(a[i][k], b[k][j])).collect();
            store.sum(terms)
        })
    })
}

fn apply(store: &mut Store, m: &[[Id; 3]; 3], v: [Id; 3]) -> [Id; 3] {
    std::array::from_fn(|i| {
        let terms: Vec<Id> = (0..3).map(|k| store.mul(m[i][k], v[k])).collect();
        store.sum(terms)
    })
}

fn add(store: &mut Store, a: [Id; 3], b: [Id; 3]) -> [Id; 3] {
    std::array::from_fn(|i| store.add(a[i], b[i]))
}

fn cross(store: &mut Store, a: [Id; 3], b: [Id; 3]) -> [Id; 3] {
    std::array::from_fn(|i| {
        let (j, k) = ((i + 1) % 3, (i + 2) % 3);
        let first = store.mul(a[j], b[k]);
        let second = store.mul(a[k], b[j]);
        store.sub(first, second)
    })
}

fn dot(store: &mut Store, a: [Id; 3], b: [Id; 3]) -> Id {
    let terms: Vec<Id> = (0..3).map(|i| store.mul(a[i], b[i])).collect();
    store.sum(terms)
}
