"""Runs CasADi's C driver and our timing binaries interleaved and prints the Markdown table.

Each repetition runs every program once per case (one timed run of the case's steps, after a
warm-up of 1000 steps), rotating which program goes first; a program's time is the median
over the repetitions, and max/min over them shows how noisy they were. Agreement is the
largest difference between CasADi's and our (portable) state (q, v) after 1 and after 1000
steps, absolute and relative to the largest entry of CasADi's state; one more column compares
our native build's state with our portable one's.

Usage: python compare.py DRIVER OURS_PORTABLE OURS_NATIVE [REPETITIONS]
"""

import statistics
import subprocess
import sys

# The cases and their steps per timed run (multiples of the restart interval, 1000).
CASES = [
    ("zss_dp", "penalized double pendulum, Z&Ss (ω = 20, β = 0.4, h = 0.1)", 1_000_000),
    ("zs_dp", "penalized double pendulum, Z&S (ω = 20, β = 0.4, h = 0.1)", 1_000_000),
    ("spook_dp", "double pendulum, SPOOK (h = 1/60, ε = 1e-8, τ = 2h)", 1_000_000),
    ("zss_chain10", "penalized chain n = 10, Z&Ss (ω = 20, β = 0.4, h = 0.05, L² = 5)", 200_000),
    ("zss_chain50", "penalized chain n = 50, Z&Ss (ω = 20, β = 0.4, h = 0.05, L² = 5)", 20_000),
]


def run(program, case, steps):
    """Runs `program case steps 1` and returns its time per step and its states."""
    out = subprocess.run(
        [program, case, str(steps), "1"], check=True, capture_output=True, text=True
    ).stdout
    fields = {}
    for line in out.splitlines():
        key, *values = line.split()
        fields[key] = values
    if fields.get("case") != [case]:
        raise RuntimeError(f"{program} printed no block for {case}:\n{out}")
    return (
        float(fields["ns_per_step"][0]),
        [float(x) for x in fields["state1"]],
        [float(x) for x in fields["state1000"]],
    )


def difference(reference, other):
    """Returns max |reference − other| and that over max |reference|."""
    if len(reference) != len(other):
        raise RuntimeError("states of different sizes")
    largest = max(abs(a - b) for a, b in zip(reference, other))
    return largest, largest / max(abs(x) for x in reference)


def agreement(difference):
    """Formats an absolute and a relative difference."""
    return f"{difference[0]:.1e} (rel. {difference[1]:.1e})"


def duration(ns):
    """Formats a time per step given in nanoseconds."""
    value, unit = (ns / 1000, "µs") if ns >= 1000 else (ns, "ns")
    decimals = 0 if value >= 100 else 1 if value >= 10 else 2
    return f"{value:.{decimals}f} {unit}"


def main():
    driver, portable, native = sys.argv[1:4]
    repetitions = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    programs = {"casadi": driver, "portable": portable, "native": native}
    order = list(programs)
    rows = []
    for case, title, steps in CASES:
        times = {name: [] for name in programs}
        states = {}
        for repetition in range(repetitions):
            rotated = order[repetition % len(order) :] + order[: repetition % len(order)]
            for name in rotated:
                ns, state1, state1000 = run(programs[name], case, steps)
                times[name].append(ns)
                states[name] = (state1, state1000)
            print(f"  {case}: repetition {repetition + 1}/{repetitions}", file=sys.stderr)
        median = {name: statistics.median(values) for name, values in times.items()}
        after1 = difference(states["casadi"][0], states["portable"][0])
        after1000 = difference(states["casadi"][1], states["portable"][1])
        native_vs_portable = difference(states["portable"][1], states["native"][1])
        spread = "/".join(f"{max(times[name]) / min(times[name]):.2f}" for name in order)
        rows.append((title, median, after1, after1000, native_vs_portable, spread))

    print(
        "| case | ours (portable) | ours (native) | CasADi-C | ours / CasADi "
        "| native / portable | agreement after 1 step | agreement after 1000 steps "
        "| ours native vs portable, 1000 steps | max/min time (CasADi/portable/native) |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for title, median, after1, after1000, native_vs_portable, spread in rows:
        print(
            f"| {title} | {duration(median['portable'])} | {duration(median['native'])} "
            f"| {duration(median['casadi'])} | {median['portable'] / median['casadi']:.2f} "
            f"| {median['native'] / median['portable']:.2f} | {agreement(after1)} "
            f"| {agreement(after1000)} | {agreement(native_vs_portable)} | {spread} |"
        )
    print(
        f"\nTimes per step: medians of {repetitions} interleaved repetitions, each from a warm "
        "start and restarted from the initial state every 1000 steps. Agreement: "
        "max |state_CasADi − state_ours| over (q, v), and relative to max |state_CasADi|."
    )


if __name__ == "__main__":
    main()
