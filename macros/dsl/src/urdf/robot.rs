//! A robot read from a URDF file, as plain data: its links in tree order with their inertia,
//! its joints with the transforms URDF defines, in the units and frames of the URDF
//! specification (metres, kilograms, radians; each link's frame is its parent joint's frame).

use std::path::PathBuf;

use syn::{Ident, LitStr};

/// A 3 × 3 matrix, row by row.
pub type Matrix3 = [[f64; 3]; 3];

/// A robot's kinematic tree with its inertia, read from a URDF file ([`super::file::read`]).
pub struct Robot {
    /// The `<robot name>`.
    pub name: String,
    /// The file, resolved against the crate's manifest directory.
    pub path: PathBuf,
    /// The user's file literal, where errors about the file point.
    pub file: LitStr,
    /// The links in depth-first order from the root (`links[0]`), children in file order —
    /// the order Pinocchio's URDF parser visits them.
    pub links: Vec<Link>,
    /// The joints, `joints[k]` the parent joint of `links[k + 1]`.
    pub joints: Vec<Joint>,
    /// The gravity vector, in the root link's frame (URDF's default: `(0, 0, −9.81)`).
    pub gravity: [f64; 3],
    /// The coordinates the robot is imported in.
    pub formulation: super::options::Formulation,
}

/// One link: its mass, centre of mass and inertia about the centre of mass, in the link frame.
pub struct Link {
    /// The `<link name>`.
    pub name: String,
    /// `<inertial><mass value>`; zero for a link without `<inertial>`.
    pub mass: f64,
    /// The centre of mass in the link frame (`<inertial><origin xyz>`).
    pub com: [f64; 3],
    /// The inertia tensor about the centre of mass in the link frame: `R I Rᵀ` with `I` the
    /// `<inertia>` of the file and `R` the rotation of `<inertial><origin rpy>`.
    pub inertia: Matrix3,
}

/// What a joint lets its child link do relative to its parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JointKind {
    /// A rotation about the axis, within limits the importer does not model.
    Revolute,
    /// A rotation about the axis, without limits.
    Continuous,
    /// A translation along the axis.
    Prismatic,
    /// No motion: the child is rigidly attached.
    Fixed,
}

impl JointKind {
    /// Returns whether the joint has a coordinate.
    pub fn moves(self) -> bool {
        self != JointKind::Fixed
    }

    /// Returns whether the joint rotates about its axis.
    pub fn rotates(self) -> bool {
        matches!(self, JointKind::Revolute | JointKind::Continuous)
    }
}

/// One joint: the child's frame is the parent's frame moved by `origin` and then by the
/// joint's motion about (or along) `axis`, as URDF defines.
pub struct Joint {
    /// The `<joint name>`.
    pub name: String,
    /// The coordinate's name: the joint's name made an identifier.
    pub ident: Ident,
    /// What the joint lets the child do.
    pub kind: JointKind,
    /// The parent link's index in [`Robot::links`].
    pub parent: usize,
    /// The child link's index in [`Robot::links`].
    pub child: usize,
    /// The rotation of `<origin rpy>`: `Rz(yaw) Ry(pitch) Rx(roll)`.
    pub rotation: Matrix3,
    /// `<origin xyz>`, in the parent's frame.
    pub translation: [f64; 3],
    /// `<axis xyz>` normalized, in the joint's frame (URDF's default `(1, 0, 0)`).
    pub axis: [f64; 3],
    /// `<dynamics damping>`: N·m·s/rad (or N·s/m) of a viscous joint damper.
    pub damping: f64,
    /// `<limit effort>`, recorded for the user (the largest actuator force or torque).
    pub effort: Option<f64>,
    /// `<mimic>`: this joint's coordinate follows another's.
    pub mimic: Option<Mimic>,
    /// The joint's line in the file, for messages.
    pub line: usize,
}

/// `<mimic joint multiplier offset>`: `q = multiplier · q_joint + offset`.
pub struct Mimic {
    /// The index in [`Robot::joints`] of the joint followed.
    pub joint: usize,
    /// The multiplier (default 1).
    pub multiplier: f64,
    /// The offset (default 0).
    pub offset: f64,
}

impl Robot {
    /// Returns the joints that have a coordinate, in the order of the model's coordinates.
    pub fn moving_joints(&self) -> impl Iterator<Item = &Joint> {
        self.joints.iter().filter(|j| j.kind.moves())
    }
}

/// Returns URDF's rotation of roll, pitch and yaw: `Rz(yaw) Ry(pitch) Rx(roll)`, rotations
/// about the fixed axes x, then y, then z.
pub fn rpy_matrix([roll, pitch, yaw]: [f64; 3]) -> Matrix3 {
    let (sr, cr) = roll.sin_cos();
    let (sp, cp) = pitch.sin_cos();
    let (sy, cy) = yaw.sin_cos();
    [
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ]
}

/// Returns `a b`.
pub fn multiply(a: &Matrix3, b: &Matrix3) -> Matrix3 {
    let mut out = [[0.0; 3]; 3];
    for (i, row) in out.iter_mut().enumerate() {
        for (j, entry) in row.iter_mut().enumerate() {
            *entry = (0..3).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    out
}

/// Returns `aᵀ`.
pub fn transpose(a: &Matrix3) -> Matrix3 {
    let mut out = [[0.0; 3]; 3];
    for (i, row) in out.iter_mut().enumerate() {
        for (j, entry) in row.iter_mut().enumerate() {
            *entry = a[j][i];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rpy_is_fixed_axis_roll_then_pitch_then_yaw() {
        // A quarter turn of yaw takes x to y; a quarter turn of pitch takes z to x; a quarter
        // turn of roll takes y to z.
        let quarter = std::f64::consts::FRAC_PI_2;
        let apply = |m: Matrix3, v: [f64; 3]| -> [f64; 3] {
            [0, 1, 2].map(|i| (0..3).map(|k| m[i][k] * v[k]).sum::<f64>())
        };
        let close = |a: [f64; 3], b: [f64; 3]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-15);
        assert!(close(
            apply(rpy_matrix([0.0, 0.0, quarter]), [1.0, 0.0, 0.0]),
            [0.0, 1.0, 0.0]
        ));
        assert!(close(
            apply(rpy_matrix([0.0, quarter, 0.0]), [0.0, 0.0, 1.0]),
            [1.0, 0.0, 0.0]
        ));
        assert!(close(
            apply(rpy_matrix([quarter, 0.0, 0.0]), [0.0, 1.0, 0.0]),
            [0.0, 0.0, 1.0]
        ));
        // Roll first, then pitch, about the fixed axes: y goes to z (roll), z to x (pitch).
        let both = rpy_matrix([quarter, quarter, 0.0]);
        assert!(close(apply(both, [0.0, 1.0, 0.0]), [1.0, 0.0, 0.0]));
        let product = multiply(&both, &transpose(&both));
        for (i, row) in product.iter().enumerate() {
            for (j, &entry) in row.iter().enumerate() {
                assert!((entry - f64::from(u8::from(i == j))).abs() < 1e-15);
            }
        }
    }
}
