//! Robots imported from URDF files (`robots/`, example-robot-data's UR5 and Franka Panda, and
//! a planar four-bar): each in maximal coordinates (the default formulation, a constant mass
//! matrix for SPOOK and RATTLE) or in joint coordinates with a PD actuator on each joint, whose
//! torque `tau_i + kp (target_i − θ_i) − kd θ̇_i` is set by run-time parameters (zero by
//! default: the robot falls under gravity). Checked against Pinocchio in
//! `tests/it/urdf.rs`; stepped by `examples/robot.rs`.

use crate::mechanism;

mechanism! {
    /// The UR5 in maximal coordinates: six bodies, 72 coordinates, 66 rows.
    pub struct Ur5 {
        urdf: { file: "robots/ur5.urdf", ignore: [limits, transmissions, extensions] },
        integrators: [spook, rattle],
    }
}

mechanism! {
    /// The UR5 in joint coordinates, an actuator on each joint: the torque
    /// `tau_i + kp (target_i − θ_i) − kd θ̇_i`.
    pub struct Ur5Joints {
        urdf: {
            file: "robots/ur5.urdf",
            coordinates: joints,
            ignore: [limits, transmissions, extensions],
        },
        parameters: {
            /// Proportional gain of every joint's PD actuator (N·m/rad).
            kp = 0.0,
            /// Derivative gain (N·m·s/rad).
            kd = 0.0,
            tau1 = 0.0, tau2 = 0.0, tau3 = 0.0, tau4 = 0.0, tau5 = 0.0, tau6 = 0.0,
            target1 = 0.0, target2 = 0.0, target3 = 0.0, target4 = 0.0, target5 = 0.0,
            target6 = 0.0,
        },
        forces: {
            shoulder_pan_joint:
                tau1 + kp * (target1 - shoulder_pan_joint) - kd * dot(shoulder_pan_joint),
            shoulder_lift_joint:
                tau2 + kp * (target2 - shoulder_lift_joint) - kd * dot(shoulder_lift_joint),
            elbow_joint: tau3 + kp * (target3 - elbow_joint) - kd * dot(elbow_joint),
            wrist_1_joint: tau4 + kp * (target4 - wrist_1_joint) - kd * dot(wrist_1_joint),
            wrist_2_joint: tau5 + kp * (target5 - wrist_2_joint) - kd * dot(wrist_2_joint),
            wrist_3_joint: tau6 + kp * (target6 - wrist_3_joint) - kd * dot(wrist_3_joint),
        },
        integrators: [rk],
    }
}

mechanism! {
    /// The Panda in joint coordinates (its fingers' mimic a row, its joints' damping
    /// dissipation), an actuator on each joint as for the UR5.
    pub struct PandaJoints {
        urdf: { file: "robots/panda.urdf", coordinates: joints, ignore: [limits, extensions] },
        parameters: {
            kp = 0.0, kd = 0.0,
            tau1 = 0.0, tau2 = 0.0, tau3 = 0.0, tau4 = 0.0, tau5 = 0.0, tau6 = 0.0,
            tau7 = 0.0, tau8 = 0.0, tau9 = 0.0,
            target1 = 0.0, target2 = 0.0, target3 = 0.0, target4 = 0.0, target5 = 0.0,
            target6 = 0.0, target7 = 0.0, target8 = 0.0, target9 = 0.0,
        },
        forces: {
            panda_joint1: tau1 + kp * (target1 - panda_joint1) - kd * dot(panda_joint1),
            panda_joint2: tau2 + kp * (target2 - panda_joint2) - kd * dot(panda_joint2),
            panda_joint3: tau3 + kp * (target3 - panda_joint3) - kd * dot(panda_joint3),
            panda_joint4: tau4 + kp * (target4 - panda_joint4) - kd * dot(panda_joint4),
            panda_joint5: tau5 + kp * (target5 - panda_joint5) - kd * dot(panda_joint5),
            panda_joint6: tau6 + kp * (target6 - panda_joint6) - kd * dot(panda_joint6),
            panda_joint7: tau7 + kp * (target7 - panda_joint7) - kd * dot(panda_joint7),
            panda_finger_joint1:
                tau8 + kp * (target8 - panda_finger_joint1) - kd * dot(panda_finger_joint1),
            panda_finger_joint2:
                tau9 + kp * (target9 - panda_finger_joint2) - kd * dot(panda_finger_joint2),
        },
        integrators: [rk],
    }
}

mechanism! {
    /// A planar crank-rocker (`robots/four_bar.urdf`): the file's serial chain ground →
    /// crank → coupler → rocker in joint coordinates, its loop closed by the row that puts the
    /// rocker's end on the ground pivot at `(0.7, 0)`; gravity along −y (the plane vertical),
    /// an actuator torque `tau1 … tau3` on each joint.
    pub struct FourBar {
        urdf: {
            file: "robots/four_bar.urdf",
            coordinates: joints,
            gravity: [0.0, -9.81, 0.0],
            ignore: [limits],
        },
        parameters: { tau1 = 0.0, tau2 = 0.0, tau3 = 0.0 },
        holonomic: {
            /// The rocker's end on the ground pivot (the plane's two components).
            #[components(x, y)]
            closure: position(rocker, [0.6, 0.0, 0.0]) - [0.7, 0.0, 0.0],
        },
        forces: { crank_joint: tau1, coupler_joint: tau2, rocker_joint: tau3 },
        integrators: [rk],
    }
}

mechanism! {
    /// The four-bar in maximal coordinates: three bodies (36 coordinates), 17 rows besides
    /// their rotations' (the joints' and the loop's).
    pub struct FourBarMaximal {
        urdf: {
            file: "robots/four_bar.urdf",
            gravity: [0.0, -9.81, 0.0],
            ignore: [limits],
        },
        holonomic: {
            /// The rocker's end on the ground pivot.
            #[components(x, y)]
            closure: position(rocker, [0.6, 0.0, 0.0]) - [0.7, 0.0, 0.0],
        },
        integrators: [rattle],
    }
}
