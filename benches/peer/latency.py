#!/usr/bin/env python3
"""The loop-carried critical path of one peer case: why a step takes the cycles it takes.

    python3 benches/peer/latency.py BINARY CASE [--function SUBSTRING] [--path]

BINARY is a `peer` executable (`cargo bench --bench peer --no-run`; for the instruction set of
`-C target-cpu=native` without AVX-512, which valgrind cannot run, build it with
`RUSTFLAGS="-C target-cpu=sapphirerapids -C target-feature=-avx512f"`). CASE is one of its
cases, e.g. `zss_dp`. Needs valgrind and objdump.

It runs the case under callgrind, takes the instructions of the hottest function that every
step executes (or of the function whose name contains SUBSTRING), follows them in the order
one step executes them (a branch goes where the step goes), and replays that trace for several
steps with a latency per instruction (Golden Cove, the cores of this machine class: add 2,
multiply and FMA 4, divide 13, a load 5, a store forwarded to a load 5, a cross-lane shuffle 3,
an in-lane one 1, a register move 0), through registers and through memory (a store to an
address and a later load from it, also across steps: the state, the carried acceleration and
the spills). A step that is bound by its dependencies, not by its throughput, takes about
the cycles per step printed; the breakdown says which operations the loop-carried path runs
through, and `--path` lists it.

Checked against the peer cases at `9a37430` on this machine (about 3.7 GHz), portable build:

| case | model | measured |
|---|---|---|
| zss_dp | 105 cycles | 109 (29.5 ns): bound by the path |
| zs_dp | 140 | 149 (40.3 ns): bound by the path |
| spook_dp | 68 | 92 (24.7 ns): bound by its throughput; 68 is its floor |
| zss_chain10 | 331 | 474 (128 ns): bound by its throughput |

With AVX2 + FMA, zss_dp gives 121 against 122 measured (32.9 ns): its path runs through eleven
4-cycle multiply-adds where the portable one runs through 2-cycle additions whose products are
off the path. A step with loops inside the function (zss_chain50) is not modelled: a loop is
passed once.

The model is an estimate: it knows no port limits (a step bound by its throughput runs slower
than printed) and one latency per instruction class; it follows one function (callees that are
not inlined are not on its path).
"""
import argparse
import collections
import re
import subprocess
import sys
import tempfile

# Latency (cycles) of a load and of a store forwarded to a load.
LOAD, FORWARD = 5, 5

# Plain moves: a load into a register, a store, or a register move.
MOVES = {"mov", "movsd", "movss", "movupd", "movups", "movapd", "movaps", "movdqa", "movdqu",
         "movq", "movd", "movabs"}
# Register-to-register moves that rename eliminates (`movsd` between registers merges, and
# `movq` between a general-purpose and a vector register crosses register files: they are not).
ELIMINATED = {"mov", "movupd", "movups", "movapd", "movaps", "movdqa", "movdqu", "movabs"}


def latency(op, operands):
    """Returns the latency of the instruction `op` with the operand text `operands`."""
    o = op[1:] if op.startswith("v") and not op.startswith("vf") else op
    wide = "ymm" in operands or "zmm" in operands
    rules = [
        (r"(add|sub)[sp]d", 2), (r"mul[sp]d", 4), (r"vf(n)?m(add|sub)", 4), (r"div[sp]d", 13),
        (r"sqrt", 15), (r"(max|min)[sp]d", 3), (r"(and|andn|or|xor)p[sd]|p(and|or|xor)", 1),
        (r"(extract|insert)[fi](128|32x4|64x2)|perm(pd|q)|perm2", 3),
        (r"broadcast", 3 if wide else 1),
        (r"shuf|unpck|movddup|permilpd|movhlps|movlhps|pshufd|punpck|blend", 1),
        (r"cmp.*[sp]d|ucomi|comi|test|ptest|movmsk", 3), (r"cvt", 4),
    ]
    for pattern, cycles in rules:
        if re.match(pattern, o):
            return cycles
    if o in ("movq", "movd") and "(" not in operands:
        return 3  # between a general-purpose and a vector register
    return 1


def register(name):
    """Returns the architectural register of an operand (`%ymm3` and `%xmm3` are one)."""
    name = name.lstrip("%")
    m = re.match(r"[xyz]mm(\d+)", name)
    return "v" + m.group(1) if m else name


def operands_of(text):
    """Splits AT&T operands at the commas outside parentheses."""
    out, depth, current = [], 0, ""
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            out.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        out.append(current.strip())
    return out


def hot_instructions(binary, case, function):
    """Runs `case` under callgrind; returns the function's name, and per address its count and
    instruction, for the function named by `function` or else the one with the most."""
    with tempfile.NamedTemporaryFile(suffix=".callgrind") as out:
        subprocess.run(["valgrind", "--tool=callgrind", "--dump-instr=yes",
                        f"--callgrind-out-file={out.name}", binary, case, "100000", "1"],
                       check=True, capture_output=True)
        counts, names, address, skip, in_binary = {}, {}, 0, False, False
        with open(out.name) as profile:
            lines = profile.readlines()
        for line in lines:
            m = re.match(r"c?ob=\((\d+)\)( (.*))?", line)
            if m:
                if m.group(3):
                    names[m.group(1)] = m.group(3).strip()
                if line.startswith("ob="):
                    in_binary = names.get(m.group(1), "").split("/")[-1] == binary.split("/")[-1]
                continue
            if line.startswith("calls="):
                skip = True
                continue
            m = re.match(r"^(0x[0-9a-f]+|[+-]\d+|\*)\s+(\S+)\s+(\d+)", line)
            if not m:
                continue
            a = m.group(1)
            address = int(a, 16) if a.startswith("0x") else address + (0 if a == "*" else int(a))
            if skip:
                skip = False
                continue
            if in_binary:
                counts[address] = counts.get(address, 0) + int(m.group(3))
    listing = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "-C", binary],
                             capture_output=True, text=True, check=True).stdout
    functions, name = collections.defaultdict(dict), None
    for line in listing.splitlines():
        if line.endswith(">:"):
            # Monomorphizations share a demangled name: keep them apart by their address.
            name = f"{line[line.index('<') + 1:-2]} at 0x{line.split()[0].lstrip('0')}"
            continue
        m = re.match(r"\s+([0-9a-f]+):\s+(.*)", line)
        if m and name:
            at = int(m.group(1), 16)
            functions[name][at] = (counts.get(at, 0), m.group(2))
    candidates = [n for n in functions if function in n] if function else list(functions)
    if not candidates:
        sys.exit(f"no function matches {function!r}")
    best = max(candidates, key=lambda n: sum(c for c, _ in functions[n].values()))
    return best, functions[best]


def step_trace(instructions):
    """Returns the instructions one call executes, in order, without branches: from the entry,
    a conditional branch falls through where the next instruction runs at least half as often
    as the entry, else it jumps (a loop inside the function is left after one pass)."""
    addresses = sorted(instructions)
    hot = instructions[addresses[0]][0] // 2
    following = dict(zip(addresses, addresses[1:]))
    at, trace = addresses[0], []
    while at in instructions and len(trace) < 20000:
        text = re.sub(r"\s*<.*>|\s*#.*", "", instructions[at][1]).strip()
        op = text.split()[0]
        if op == "ret":
            break
        if op.startswith("j"):
            target = int(text.split()[1], 16)
            fall = following.get(at)
            at = fall if op != "jmp" and fall in instructions and instructions[fall][0] >= hot \
                else target
            continue
        trace.append(text)
        at = following.get(at)
    return trace


def replay(trace, steps):
    """Replays `trace` `steps` times; returns the nodes (step, text, start, finish, predecessor)
    and the finish of each step."""
    ready, memory, nodes, ends = {}, {}, [], []
    for step in range(steps):
        alias = {}

        def address(operand):
            m = re.match(r"(-?0x[0-9a-f]+|-?\d+)?\((%\w+)?", re.sub(r"\{.*\}", "", operand))
            if not m or (m.group(2) or "") == "%rip":
                return None
            offset = int(m.group(1), 0) if m.group(1) else 0
            base = register(m.group(2)) if m.group(2) else ""
            return alias.get(base, base), offset

        for text in trace:
            op = text.split()[0]
            ops = operands_of(text[len(op):].strip())
            if op in ("push", "pop") or (ops and ops[-1] == "%rsp"):
                continue
            if op == "mov" and len(ops) == 2 and all(o.startswith("%r") for o in ops):
                alias[register(ops[1])] = alias.get(register(ops[0]), register(ops[0]))
            store = bool(ops) and "(" in ops[-1] and op.lstrip("v") in MOVES
            flags_only = re.match(r"v?(u?comi|k?test|ptest|cmp$|cmpb|cmpq|cmpl)", op)
            fused = re.match(r"vf(n)?m(add|sub)", op)
            merges = not op.startswith("v") and op not in MOVES and not op.startswith("lea")
            if op in ("movsd", "movss") and all(o.startswith("%") for o in ops):
                merges = True
            zeroing = re.match(r"v?(xorp[sd]|pxor)", op) and len(set(ops[:2])) == 1
            target = None if store or flags_only or not ops or not ops[-1].startswith("%") \
                else register(ops[-1])
            sources = ops if (store or merges or fused or target is None) else ops[:-1]
            start, pred = 0, None
            for operand in sources:
                if operand.startswith("%") and not zeroing:
                    r = register(operand)
                    if r not in ("rsp", "rip") and r in ready and ready[r][0] > start:
                        start, pred = ready[r]
            cycles = latency(op, text)
            for operand in ops:
                if "(" in operand and not (store and operand is ops[-1]) \
                        and not op.startswith("lea"):
                    key = address(operand)
                    loaded, source = LOAD, None
                    if key in memory:
                        loaded, source = max(LOAD, memory[key][0] + FORWARD), memory[key][1]
                    if loaded > start:
                        start, pred = loaded, source
            loads = any("(" in o for o in ops) and not store and not op.startswith("lea")
            if op.lstrip("v") in MOVES and (loads or op.lstrip("v") in ELIMINATED):
                cycles = 0  # a load's latency is in `loaded`; a register move is eliminated
            finish = start if store else start + cycles
            node = len(nodes)
            nodes.append((step, text, start, finish, pred))
            if store:
                memory[address(ops[-1])] = (finish, node)
            elif target:
                ready[target] = (finish, node)
        ends.append(max(n[3] for n in nodes if n[0] == step))
    return nodes, ends


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("binary")
    parser.add_argument("case")
    parser.add_argument("--function", help="a substring of the function to analyze")
    parser.add_argument("--path", action="store_true", help="list the loop-carried path")
    args = parser.parse_args()
    name, instructions = hot_instructions(args.binary, args.case, args.function)
    trace = step_trace(instructions)
    steps = 6
    nodes, ends = replay(trace, steps)
    per_step = [b - a for a, b in zip(ends, ends[1:])]
    print(f"function: {name}")
    print(f"instructions per step: {len(trace)}")
    print(f"cycles per step (loop-carried path): {per_step[-1]}")
    last = max((n for n in range(len(nodes)) if nodes[n][0] == steps - 1),
               key=lambda n: nodes[n][3])
    path, n = [], last
    while n is not None:
        path.append(n)
        n = nodes[n][4]
    segment = [n for n in reversed(path) if nodes[n][0] == steps - 2]
    by_class, count = collections.Counter(), collections.Counter()
    for n in segment:
        _, text, start, finish, pred = nodes[n]
        spent = finish - (nodes[pred][3] if pred is not None else start)
        op = text.split()[0]
        key = op + (" (stack)" if "(%rsp)" in text else "")
        by_class[key] += spent
        count[key] += 1
    print("on the path through one step (cycles, instructions):")
    for key, cycles in by_class.most_common():
        print(f"  {key:28s} {cycles:4d} {count[key]:3d}")
    if args.path:
        for n in segment:
            _, text, start, finish, _ = nodes[n]
            print(f"  {start:5d} {finish:5d}  {text}")


if __name__ == "__main__":
    main()
