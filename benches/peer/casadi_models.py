"""The peer benchmark's cases as CasADi SX functions, generated as C.

Each case is the SAME step our integrators take (mechanism-runtime's rustdoc and code):

- Z&Ss (Tao-Owhadi 2014, eq. 18; `ZhangSkeelSimplified`), with the acceleration carried
  from step to step as ours carries it (one factorization per step):

      x1 = x + h v + h^2/2 a,   a1 = -(M + beta h^2 Hess W(x1))^-1 grad W(x1),
      v1 = v + h/2 (a + a1)

- Z&S (eq. 3; `ZhangSkeel`): the same update with the carried acceleration
  f = a - 1/2 (beta h^2)^2 M^-1 (a . W'''(x) . a), a as in Z&Ss. No Newton iteration:
  one factorization of M + beta h^2 Hess W and one solve with M per step, as ours.

- SPOOK (Lacoursiere 2007, eq. 27-30; `Spook`) with the Schur complement of eq. 30 that our
  fixed-size tier solves: r = M v - h grad V, t = Ups (G v - 4/h g),
  S = G M^-1 G^T + Sigma, lambda = S^-1 (t - G M^-1 r), v1 = M^-1 (r + G^T lambda),
  q1 = q + h v1, with Sigma = 4/h^2 eps Ups, Ups = 1/(1 + 4 tau/h).

W = V + 1/2 omega^2 |g|^2 is the penalized potential of `Penalized`. Linear systems are
solved with CasADi's symbolic sparse `ldl`/`ldl_solve` (AMD ordering); our fixed-size tier
factors the same matrices densely (Cholesky, LU if indefinite).

Per case `<case>` the C file has `<case>_init(q, v) -> state` (the carried acceleration at
the start, as ours recomputes it after a restart; the identity for SPOOK) and
`<case>_step(state) -> state`, where state = (q, v) or (q, v, a). `peer_cases.inc` lists the
cases and their initial (q, v) for `driver.c`.

Usage: python casadi_models.py OUTDIR
"""

import os
import sys

import casadi as ca

OMEGA = 20.0
BETA = 0.4
ZS_H = 0.1
SPOOK_H = 1.0 / 60.0
SPOOK_EPSILON = 1e-8
SPOOK_TAU = 2.0 * SPOOK_H
CHAIN_H = 0.05
CHAIN_LENGTH_SQUARED = 5.0

# The double pendulum of `models::DoublePendulum` (Tao-Owhadi 2014, section 4.1).
M1, M2, L1, L2, G = 1.0, 1.0, 1.0, 1.4142135623730951, 1.0


def double_pendulum():
    """Returns q, the masses, V(q), g(q) and the initial (q, v) of the double pendulum."""
    q = ca.SX.sym("q", 4)
    x1, y1, x2, y2 = q[0], q[1], q[2], q[3]
    potential = M1 * G * y1 + M2 * G * y2
    rows = ca.vertcat(
        x1**2 + y1**2 - L1**2,
        (x2 - x1) ** 2 + (y2 - y1) ** 2 - L2**2,
    )
    return q, [M1, M1, M2, M2], potential, rows, [0.0, -1.0, 1.0, -2.0] + [0.0] * 4


def chain(links):
    """Returns q, the masses, V(q), g(q) and the initial (q, v) of the chain of `links` pendula:
    M = I, V = sum y_i, rods |p_i - p_{i-1}|^2 - 5, bob i at (i, -2i) at rest."""
    q = ca.SX.sym("q", 2 * links)
    potential = sum(q[2 * i + 1] for i in range(links))
    rows = []
    for i in range(links):
        px, py = (0.0, 0.0) if i == 0 else (q[2 * i - 2], q[2 * i - 1])
        rows.append((q[2 * i] - px) ** 2 + (q[2 * i + 1] - py) ** 2 - CHAIN_LENGTH_SQUARED)
    start = []
    for i in range(1, links + 1):
        start += [float(i), -2.0 * i]
    return q, [1.0] * (2 * links), potential, ca.vertcat(*rows), start + [0.0] * (2 * links)


def solve(matrix, rhs):
    """Solves matrix x = rhs with CasADi's symbolic sparse LDL^T (AMD ordering)."""
    d, lt, p = ca.ldl(matrix, True)
    return ca.ldl_solve(rhs, d, lt, p)


def penalized(potential, rows):
    """Returns W = V + 1/2 omega^2 |g|^2."""
    return potential + 0.5 * OMEGA**2 * ca.dot(rows, rows)


def carried(name, model, h, full):
    """Returns the init and step functions of Z&Ss (full=False) or Z&S (full=True)."""
    q, masses, potential, rows, start = model
    n = q.numel()
    w = penalized(potential, rows)
    hess, grad = ca.hessian(w, q)
    beta_h2 = BETA * h * h
    a = -solve(ca.diag(ca.DM(masses)) + beta_h2 * hess, grad)
    if full:
        # a . W''' . a = grad_q (A^T Hess W(q) A) at A = a.
        direction = ca.SX.sym("direction", n)
        third = ca.gradient(ca.dot(direction, ca.mtimes(hess, direction)), q)
        contraction = ca.Function("third", [q, direction], [third])(q, a)
        a = a - 0.5 * beta_h2 * beta_h2 * contraction / ca.DM(masses)
    acceleration = ca.Function("acceleration", [q], [a])

    x, v, a_k = ca.SX.sym("x", n), ca.SX.sym("v", n), ca.SX.sym("a", n)
    x_next = x + h * v + 0.5 * h * h * a_k
    a_next = acceleration(x_next)
    v_next = v + 0.5 * h * (a_k + a_next)
    options = {"cse": True}
    step = ca.Function(
        f"{name}_step", [ca.vertcat(x, v, a_k)], [ca.vertcat(x_next, v_next, a_next)], options
    )
    init = ca.Function(
        f"{name}_init", [ca.vertcat(x, v)], [ca.vertcat(x, v, acceleration(x))], options
    )
    return init, step, start, 3 * n


def spook(name, model, h):
    """Returns the init (the identity) and step functions of SPOOK."""
    q, masses, potential, rows, start = model
    n, m = q.numel(), rows.numel()
    v = ca.SX.sym("v", n)
    minv = 1.0 / ca.DM(masses)
    jac = ca.jacobian(rows, q)
    r = ca.DM(masses) * v - h * ca.gradient(potential, q)
    upsilon = 1.0 / (1.0 + 4.0 * SPOOK_TAU / h)
    sigma = 4.0 / (h * h) * SPOOK_EPSILON * upsilon
    t = upsilon * (ca.mtimes(jac, v) - 4.0 / h * rows)
    minv_jac_t = ca.mtimes(ca.diag(minv), jac.T)
    schur = ca.mtimes(jac, minv_jac_t) + sigma * ca.SX.eye(m)
    minv_r = minv * r
    lam = solve(schur, t - ca.mtimes(jac, minv_r))
    v_next = minv_r + ca.mtimes(minv_jac_t, lam)
    q_next = q + h * v_next
    options = {"cse": True}
    state = ca.vertcat(q, v)
    step = ca.Function(f"{name}_step", [state], [ca.vertcat(q_next, v_next)], options)
    init = ca.Function(f"{name}_init", [state], [state], options)
    return init, step, start, 2 * n


def cases():
    """Returns the cases: (name, init, step, initial (q, v), state size)."""
    found = []
    for name, build in [
        ("zss_dp", lambda: carried("zss_dp", double_pendulum(), ZS_H, full=False)),
        ("zs_dp", lambda: carried("zs_dp", double_pendulum(), ZS_H, full=True)),
        ("spook_dp", lambda: spook("spook_dp", double_pendulum(), SPOOK_H)),
        ("zss_chain10", lambda: carried("zss_chain10", chain(10), CHAIN_H, full=False)),
        ("zss_chain50", lambda: carried("zss_chain50", chain(50), CHAIN_H, full=False)),
    ]:
        init, step, start, size = build()
        found.append((name, init, step, start, size))
    return found


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    generator = ca.CodeGenerator("peer_models.c", {"with_header": True})
    table = []
    starts = []
    for name, init, step, start, size in cases():
        generator.add(init)
        generator.add(step)
        values = ", ".join(repr(x) for x in start)
        starts.append(f"static const double {name}_start[] = {{{values}}};")
        table.append(
            f'    {{"{name}", {len(start)}, {size}, {name}_init, {name}_init_work, '
            f"{name}_step, {name}_step_work, {name}_start}},"
        )
    generator.generate(out + os.sep)
    with open(os.path.join(out, "peer_cases.inc"), "w") as inc:
        inc.write("/* Generated by benches/peer/casadi_models.py. */\n")
        inc.write("\n".join(starts) + "\n")
        inc.write("static const struct peer_case CASES[] = {\n" + "\n".join(table) + "\n};\n")
    print(f"casadi {ca.__version__}: wrote {out}/peer_models.c and peer_cases.inc")


if __name__ == "__main__":
    main()
