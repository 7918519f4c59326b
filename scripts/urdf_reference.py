#!/usr/bin/env python3
"""Reference rigid-body dynamics data for URDF importer tests, computed with Pinocchio.

What it produces
----------------
One JSON file per robot in ``tests/data/urdf/`` (paths relative to the repository's
root, which holds ``scripts/`` and ``robots/``), read by the tests of ``tests/it/urdf.rs``:

* ``tests/data/urdf/ur5.json``       from ``robots/ur5.urdf``   (example-robot-data ur5_robot.urdf, unchanged)
* ``tests/data/urdf/panda.json``     from ``robots/panda.urdf`` (example-robot-data panda.urdf, unchanged)
* ``tests/data/urdf/four_bar.json``  from ``robots/four_bar.urdf`` (hand-written planar crank-rocker)

Each file holds 20 states (q, v, tau) and, per state, Pinocchio's joint-space
mass matrix M(q) (full, symmetrised), generalized gravity g(q), nonlinear effects
nle(q, v) = C(q, v) v + g(q), forward dynamics ddq = ABA(q, v, tau), kinetic and
potential energy, and for Panda / four-bar the accelerations and multipliers of
the constrained (mimic / loop-closure) system.

Models are built with ``pin.buildModelFromUrdf(path)``: fixed base, no free-flyer,
no mimic handling (every URDF joint with a degree of freedom is an independent
coordinate; fixed joints are merged into their parent body by Pinocchio).
URDF <dynamics damping/friction> is NOT part of any quantity: Pinocchio stores it
in model.damping / model.friction but rnea/aba/crba/nle ignore it.

Conventions
-----------
* q order = Pinocchio joint order = ``joints`` in the JSON (all joints have nq = nv = 1).
* potential_energy = pin.computePotentialEnergy = -sum_i m_i g^T c_i (world frame),
  summed over bodies attached to moving joints only (bodies rigidly fixed to the
  world/root, e.g. UR5 base_link and Panda panda_link0, are NOT included).  With
  g = (0, 0, -9.81) this is sum_i m_i 9.81 z_i; its zero is at world z = 0
  (four-bar: world y = 0).
* kinetic_energy = 1/2 v^T M v.
* Constrained systems: with a constraint Jacobian J (rows x nv) and gamma = -Jdot v,
      [M  J^T] [ddq   ]   [tau - nle]
      [J  0  ] [lambda] = [gamma    ]
  i.e. M ddq = tau - nle - J^T lambda  (lambda is the NEGATIVE of the generalized
  constraint force multiplier in the "M ddq = tau - nle + J^T f" convention).
* Panda mimic: panda_finger_joint2 mimics panda_finger_joint1 with multiplier 1,
  offset 0 (URDF defaults; the <mimic> tag gives neither).  The row is
  q_f2 - multiplier q_f1 - offset = 0, J = e_f2 - multiplier e_f1, Jdot v = 0.
  The stored q/v already satisfy it (q_f2, v_f2 overwritten), and ALL quantities
  of a Panda state (M, g, nle, aba, energies) are evaluated at that q, v.
* Four-bar loop: rows x, y (world frame) of
      p_world(rocker, [0.6, 0, 0]) - p_world(ground, [0.7, 0, 0]) = 0.
  States lie on the constraint (position and velocity level, J v = 0).
  "constrained_accelerations"/"multipliers" use the state's random tau,
  "constrained_accelerations_tau0"/"multipliers_tau0" use tau = 0.

Sampling (numpy.random.default_rng(20261129), one generator for the whole run, robots
in the order ur5, panda, four_bar):
* q_i ~ U[lower_i, upper_i] from the URDF limits as Pinocchio reads them
  (for a non-finite / missing range: U[-pi, pi]); v ~ N(0, 1); tau ~ 10 N(0, 1).
  Per state the draws are: q (nq values), v (nv), tau (nv), in that order.
* four-bar: crank angle ~ U[-pi, pi], then (coupler, rocker) angles by Newton on the
  loop equation, on the "elbow up" branch (coupler end point above the line from
  the crank tip to the ground pivot, i.e. y > 0 at crank angle 0); then a scalar
  s ~ N(0, 1), v = s * n with n the unit null vector of the 2x3 loop Jacobian
  (sign fixed so that n[0] > 0); then tau ~ 10 N(0, 1) (3 values).  Samples where
  Newton fails or the Jacobian is near singular are skipped (after all their draws).

How to regenerate
-----------------
    python3 -m venv venv
    venv/bin/pip install pin==4.1.0 numpy==2.4.6 example-robot-data==6.0.0
    venv/bin/python scripts/urdf_reference.py          # run from the repository root (urdf-ref/)

(pin 4.1.0 pulls libpinocchio 4.1.0, eigenpy 3.13.0, coal 3.0.3, cmeel-* deps.)
example-robot-data is only needed to obtain the robot URDFs (already copied to
robots/).  The script cross-checks every state and aborts on any failure.
"""

import json
import math
import os
import sys

import numpy as np
import pinocchio as pin

SEED = 20261129
N_STATES = 20
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROBOTS = os.path.join(ROOT, "robots")
DATA = os.path.join(ROOT, "tests", "data", "urdf")

TOL = 1e-10


def check(cond, what):
    if not cond:
        raise SystemExit("CROSS-CHECK FAILED: " + what)


def rel_close(a, b, tol=TOL):
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    scale = max(1.0, float(np.max(np.abs(a))), float(np.max(np.abs(b))))
    return float(np.max(np.abs(a - b))) <= tol * scale


def floats(x):
    """Convert numpy arrays/scalars to plain Python floats (json writes repr = shortest round-trip)."""
    if isinstance(x, np.ndarray):
        return [floats(e) for e in x]
    if isinstance(x, (list, tuple)):
        return [floats(e) for e in x]
    return float(x)


def build(name):
    path = os.path.join(ROBOTS, name + ".urdf")
    model = pin.buildModelFromUrdf(path)  # fixed base, mimic=False (default)
    for j in model.joints[1:]:
        check(j.nq == 1 and j.nv == 1, "joint with nq != 1 in " + name)
    return model


def sample_q(model, rng):
    lo = model.lowerPositionLimit
    hi = model.upperPositionLimit
    q = np.empty(model.nq)
    for i in range(model.nq):
        a, b = lo[i], hi[i]
        if not (np.isfinite(a) and np.isfinite(b)) or a >= b:
            a, b = -math.pi, math.pi
        q[i] = rng.uniform(a, b)
    return q


def kkt_solve(M, J, rhs_dyn, gamma):
    n = M.shape[0]
    m = J.shape[0]
    K = np.zeros((n + m, n + m))
    K[:n, :n] = M
    K[:n, n:] = J.T
    K[n:, :n] = J
    sol = np.linalg.solve(K, np.concatenate([rhs_dyn, gamma]))
    return sol[:n], sol[n:]


def dynamics(model, data, q, v, tau):
    """All unconstrained quantities + independent cross-checks."""
    M = pin.crba(model, data, q).copy()
    M = np.triu(M) + np.triu(M, 1).T  # crba fills the upper triangle only
    g = pin.computeGeneralizedGravity(model, data, q).copy()
    nle = pin.nonLinearEffects(model, data, q, v).copy()
    ddq = pin.aba(model, data, q, v, tau).copy()
    ke = float(pin.computeKineticEnergy(model, data, q, v))
    pe = float(pin.computePotentialEnergy(model, data, q))

    zero = np.zeros(model.nv)
    # cross-checks
    check(np.all(np.linalg.eigvalsh(M) > 0), "M positive definite")
    check(rel_close(pin.rnea(model, data, q, zero, zero), g), "rnea(q,0,0) == g")
    check(rel_close(pin.rnea(model, data, q, v, zero), nle), "rnea(q,v,0) == nle")
    check(rel_close(M @ ddq + nle, tau), "M aba + nle == tau")
    check(rel_close(pin.rnea(model, data, q, v, ddq), tau), "rnea(q,v,aba) == tau")
    check(rel_close(np.linalg.solve(M, tau - nle), ddq, 1e-8), "M^-1 (tau - nle) == aba")
    check(abs(ke - 0.5 * v @ M @ v) <= TOL * max(1.0, ke), "KE == v^T M v / 2")
    # columns of M from rnea with unit accelerations (no gravity, no velocity)
    g_saved = model.gravity.copy()
    model.gravity = pin.Motion.Zero()
    Mr = np.column_stack([pin.rnea(model, data, q, zero, e) for e in np.eye(model.nv)])
    model.gravity = g_saved
    check(rel_close(M, Mr), "M == rnea unit-acceleration columns")
    # g == gradient of the potential energy (central differences)
    h = 1e-6
    dpe = np.empty(model.nv)
    for i in range(model.nv):
        e = np.zeros(model.nq)
        e[i] = h
        dpe[i] = (pin.computePotentialEnergy(model, data, q + e)
                  - pin.computePotentialEnergy(model, data, q - e)) / (2 * h)
    check(rel_close(dpe, g, 1e-6), "g == dV/dq (finite differences)")
    # M == Hessian of KE w.r.t. v (KE quadratic in v: exact up to round-off)
    Mk = np.empty_like(M)
    for i in range(model.nv):
        for j in range(model.nv):
            ei = np.eye(model.nv)[i]
            ej = np.eye(model.nv)[j]
            Mk[i, j] = (pin.computeKineticEnergy(model, data, q, ei + ej)
                        - pin.computeKineticEnergy(model, data, q, ei - ej)) / 2.0
    check(rel_close(M, Mk, 1e-9), "M == d2 KE / dv2")
    # Coriolis part is quadratic in v: nle(q, 2v) - g == 4 (nle(q, v) - g)
    nle2 = pin.nonLinearEffects(model, data, q, 2 * v)
    check(rel_close(nle2 - g, 4 * (nle - g), 1e-9), "C(q,v)v quadratic in v")

    return {
        "mass_matrix": M,
        "gravity_torques": g,
        "nonlinear_effects": nle,
        "aba": ddq,
        "kinetic_energy": ke,
        "potential_energy": pe,
    }


def state_record(q, v, tau, dyn):
    rec = {"q": floats(q), "v": floats(v), "tau": floats(tau)}
    for k in ("mass_matrix", "gravity_torques", "nonlinear_effects", "aba"):
        rec[k] = floats(dyn[k])
    rec["kinetic_energy"] = dyn["kinetic_energy"]
    rec["potential_energy"] = dyn["potential_energy"]
    return rec


def header(model, urdf_name):
    return {
        "source": urdf_name,
        "generator": "scripts/urdf_reference.py",
        "pinocchio": pin.__version__,
        "gravity": floats(model.gravity.linear),
        "joints": list(model.names[1:]),
    }


# --------------------------------------------------------------------------- UR5
def gen_ur5(rng):
    model = build("ur5")
    data = model.createData()
    out = header(model, "ur5.urdf")
    out["mimic"] = []
    out["states"] = []
    for _ in range(N_STATES):
        q = sample_q(model, rng)
        v = rng.standard_normal(model.nv)
        tau = 10.0 * rng.standard_normal(model.nv)
        out["states"].append(state_record(q, v, tau, dynamics(model, data, q, v, tau)))
    return out


# --------------------------------------------------------------------------- Panda
def gen_panda(rng):
    model = build("panda")
    data = model.createData()
    out = header(model, "panda.urdf")
    mimic = {"joint": "panda_finger_joint2", "of": "panda_finger_joint1",
             "multiplier": 1.0, "offset": 0.0}
    out["mimic"] = [mimic]
    out["states"] = []
    i1 = model.joints[model.getJointId(mimic["of"])].idx_v
    i2 = model.joints[model.getJointId(mimic["joint"])].idx_v
    J = np.zeros((1, model.nv))
    J[0, i2] = 1.0
    J[0, i1] = -mimic["multiplier"]
    for _ in range(N_STATES):
        q = sample_q(model, rng)
        v = rng.standard_normal(model.nv)
        tau = 10.0 * rng.standard_normal(model.nv)
        q[i2] = mimic["multiplier"] * q[i1] + mimic["offset"]
        v[i2] = mimic["multiplier"] * v[i1]
        check(abs(J @ v).max() == 0.0, "mimic velocity")
        dyn = dynamics(model, data, q, v, tau)
        ddq_c, lam = kkt_solve(dyn["mass_matrix"], J, tau - dyn["nonlinear_effects"], np.zeros(1))
        check(abs(float((J @ ddq_c)[0])) <= TOL * max(1.0, np.abs(ddq_c).max()), "Panda J ddq == 0")
        check(rel_close(dyn["mass_matrix"] @ ddq_c + J.T @ lam + dyn["nonlinear_effects"], tau),
              "Panda KKT first row")
        rec = state_record(q, v, tau, dyn)
        rec["constrained_accelerations"] = floats(ddq_c)
        rec["multipliers"] = floats(lam)
        out["states"].append(rec)
    return out


# --------------------------------------------------------------------------- four-bar
CRANK, COUPLER, ROCKER, GROUND = 0.3, 0.8, 0.6, 0.7
GROUND_POINT = np.array([GROUND, 0.0, 0.0])


def gen_four_bar(rng):
    model = build("four_bar")
    model.gravity.linear = np.array([0.0, -9.81, 0.0])
    rocker_jid = model.getJointId("rocker_joint")
    rocker_fid = model.getFrameId("rocker")
    tip = model.addFrame(pin.Frame("rocker_tip", rocker_jid, rocker_fid,
                                   pin.SE3(np.eye(3), np.array([ROCKER, 0.0, 0.0])),
                                   pin.FrameType.OP_FRAME))
    data = model.createData()
    zero = np.zeros(model.nv)

    def residual(q):
        pin.framesForwardKinematics(model, data, q)
        return (data.oMf[tip].translation - GROUND_POINT)[:2]

    def loop_jac(q):
        pin.computeJointJacobians(model, data, q)
        pin.updateFramePlacements(model, data)
        Jf = pin.getFrameJacobian(model, data, tip, pin.LOCAL_WORLD_ALIGNED)
        Jc = pin.computeFrameJacobian(model, data, q, tip, pin.LOCAL_WORLD_ALIGNED)
        check(rel_close(Jf, Jc), "frame Jacobian consistency")
        return Jc[:2, :].copy()

    def solve_angles(th1):
        # initial guess: closed-form elbow-up circle intersection
        A = CRANK * np.array([math.cos(th1), math.sin(th1)])
        G = GROUND_POINT[:2]
        d = np.linalg.norm(G - A)
        ex = (G - A) / d
        ey = np.array([-ex[1], ex[0]])  # left of A->G  ("elbow up")
        x = (COUPLER ** 2 - ROCKER ** 2 + d ** 2) / (2 * d)
        y = math.sqrt(max(COUPLER ** 2 - x ** 2, 0.0))
        B = A + x * ex + y * ey
        phi_c = math.atan2(B[1] - A[1], B[0] - A[0])
        phi_r = math.atan2(G[1] - B[1], G[0] - B[0])
        th2 = phi_c - th1
        th3 = phi_r - phi_c
        q = np.array([th1, th2, th3])
        # perturb the guess so that Newton actually does the work (deterministic)
        q[1:] += 0.05
        for _ in range(50):
            r = residual(q)
            if np.linalg.norm(r) < 1e-14:
                break
            Jq = loop_jac(q)[:, 1:]
            if abs(np.linalg.det(Jq)) < 1e-6:
                return None
            q[1:] -= np.linalg.solve(Jq, r)
        if np.linalg.norm(residual(q)) > 1e-13:
            return None
        q[1:] = (q[1:] + math.pi) % (2 * math.pi) - math.pi  # wrap to [-pi, pi)
        # branch check: coupler end point left of A->G
        pin.framesForwardKinematics(model, data, q)
        Bw = data.oMi[rocker_jid].translation[:2]
        if (ex[0] * (Bw - A)[1] - ex[1] * (Bw - A)[0]) <= 0:
            return None
        return q

    out = header(model, "four_bar.urdf")
    out["gravity"] = floats(model.gravity.linear)
    out["mimic"] = []
    out["loop"] = {
        "link": "rocker",
        "point": [ROCKER, 0.0, 0.0],
        "ground_link": "ground",
        "ground_point": floats(GROUND_POINT),
        "components": ["x", "y"],
        "frame": "world",
        "constraint": "p_world(link, point) - p_world(ground_link, ground_point) = 0, rows x and y",
        "lengths": {"ground": GROUND, "crank": CRANK, "coupler": COUPLER, "rocker": ROCKER},
        "branch": "elbow up: coupler end point (rocker pivot) left of the line crank tip -> ground pivot",
    }
    out["states"] = []
    skipped = 0
    while len(out["states"]) < N_STATES:
        th1 = rng.uniform(-math.pi, math.pi)
        s = rng.standard_normal()
        tau = 10.0 * rng.standard_normal(model.nv)
        q = solve_angles(th1)
        if q is None:
            skipped += 1
            continue
        J = loop_jac(q)
        sv = np.linalg.svd(J, compute_uv=False)
        if sv[-1] < 1e-3:
            skipped += 1
            continue
        n = np.linalg.svd(J)[2][-1]
        n = n / np.linalg.norm(n)
        if n[0] < 0:
            n = -n
        v = s * n
        check(np.abs(J @ v).max() <= 1e-14, "J v == 0")
        check(np.abs(residual(q)).max() <= 1e-13, "loop closed")

        # Jdot v from the classical acceleration of the tip with ddq = 0
        pin.forwardKinematics(model, data, q, v, zero)
        pin.updateFramePlacements(model, data)
        Jdv = pin.getFrameClassicalAcceleration(model, data, tip, pin.LOCAL_WORLD_ALIGNED).linear[:2].copy()
        # independent check: d/dt (J v) along v by central differences
        h = 1e-6
        Jdv_fd = (loop_jac(q + h * v) @ v - loop_jac(q - h * v) @ v) / (2 * h)
        check(rel_close(Jdv, Jdv_fd, 1e-7), "Jdot v == finite-difference")

        dyn = dynamics(model, data, q, v, tau)
        J = loop_jac(q)
        rec = state_record(q, v, tau, dyn)
        for suffix, t in (("", tau), ("_tau0", zero)):
            ddq_c, lam = kkt_solve(dyn["mass_matrix"], J, t - dyn["nonlinear_effects"], -Jdv)
            check(np.abs(J @ ddq_c + Jdv).max() <= TOL, "four-bar J ddq + Jdot v == 0")
            check(rel_close(dyn["mass_matrix"] @ ddq_c + J.T @ lam + dyn["nonlinear_effects"], t),
                  "four-bar KKT first row")
            # tip acceleration with ddq_c is zero (x, y)
            pin.forwardKinematics(model, data, q, v, ddq_c)
            pin.updateFramePlacements(model, data)
            acc = pin.getFrameClassicalAcceleration(model, data, tip, pin.LOCAL_WORLD_ALIGNED).linear[:2]
            check(np.abs(acc).max() <= 1e-9, "four-bar tip acceleration == 0")
            rec["constrained_accelerations" + suffix] = floats(ddq_c)
            rec["multipliers" + suffix] = floats(lam)
        out["states"].append(rec)
    out["skipped_samples"] = skipped
    return out


def main():
    os.makedirs(DATA, exist_ok=True)
    rng = np.random.default_rng(SEED)
    for name, fn in (("ur5", gen_ur5), ("panda", gen_panda), ("four_bar", gen_four_bar)):
        out = fn(rng)
        path = os.path.join(DATA, name + ".json")
        with open(path, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")
        print("wrote %s (%d states)" % (os.path.relpath(path, ROOT), len(out["states"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
