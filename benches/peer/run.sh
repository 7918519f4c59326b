#!/usr/bin/env bash
# The peer benchmark: our generated steppers against CasADi's generated C for the same steps
# (Z&Ss, Z&S and SPOOK on the double pendulum; Z&Ss on penalized chains of 10 and 50 links),
# timed interleaved in one run, with the states compared. Prints a Markdown table.
#
#   bash benches/peer/run.sh
#
# Needs python3 with venv (Debian/Ubuntu: apt install python3-venv), network access to PyPI
# (CasADi and NumPy, pinned, into target/peer-venv), a C compiler (`cc`, or $CC) and cargo.
# Everything it builds goes under target/: target/peer (generated C, driver), target/peer-venv,
# our binary in $CARGO_TARGET_DIR (default target/) and, built with `-C target-cpu=native`,
# in $PEER_NATIVE_TARGET_DIR (default target/peer-native). $PEER_REPETITIONS (default 5) sets
# the repetitions. Not part of the test command; time it on a quiet machine.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
HERE="$ROOT/benches/peer"
PEER="$ROOT/target/peer"
VENV="$ROOT/target/peer-venv"
PORTABLE_TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
NATIVE_TARGET="${PEER_NATIVE_TARGET_DIR:-$ROOT/target/peer-native}"
REPETITIONS="${PEER_REPETITIONS:-5}"
CC="${CC:-cc}"
CASADI_VERSION=3.7.2
NUMPY_VERSION=2.2.6

mkdir -p "$PEER"

if [ ! -x "$VENV/bin/pip" ]; then
    rm -rf "$VENV"
    if ! python3 -m venv "$VENV"; then
        rm -rf "$VENV"
        echo "error: 'python3 -m venv' failed; on Debian/Ubuntu install python3-venv" \
            "(apt install python3-venv) and rerun" >&2
        exit 1
    fi
fi
"$VENV/bin/pip" install --quiet --disable-pip-version-check \
    "casadi==$CASADI_VERSION" "numpy==$NUMPY_VERSION"
PYTHON="$VENV/bin/python"

echo "== CasADi: generating and compiling the steps" >&2
"$PYTHON" "$HERE/casadi_models.py" "$PEER/gen" >&2
"$CC" -O3 -march=native -c -o "$PEER/peer_models.o" "$PEER/gen/peer_models.c"
"$CC" -O3 -march=native -std=c99 -Wall -I"$PEER/gen" -o "$PEER/driver" \
    "$HERE/driver.c" "$PEER/peer_models.o" -lm

# Builds the `peer` bench target into the target directory $1 and prints its executable.
build_ours() {
    (cd "$ROOT" && CARGO_TARGET_DIR="$1" cargo bench --bench peer --no-run \
        --message-format=json-render-diagnostics) |
        "$PYTHON" -c '
import json, sys
for line in sys.stdin:
    message = json.loads(line)
    target = message.get("target", {})
    if message.get("reason") == "compiler-artifact" and target.get("name") == "peer" \
            and message.get("executable"):
        print(message["executable"])
'
}

echo "== ours: building portable and native" >&2
PORTABLE_BIN="$(unset RUSTFLAGS CARGO_ENCODED_RUSTFLAGS; build_ours "$PORTABLE_TARGET")"
NATIVE_BIN="$(unset CARGO_ENCODED_RUSTFLAGS; export RUSTFLAGS="-C target-cpu=native"
    build_ours "$NATIVE_TARGET")"
if [ -z "$PORTABLE_BIN" ] || [ -z "$NATIVE_BIN" ]; then
    echo "error: cargo built no executable for the bench target 'peer'" >&2
    exit 1
fi

# Prints the load average.
load() { uptime | sed 's/.*load average: *//'; }

LOAD_BEFORE="$(load)"
echo "== running interleaved ($REPETITIONS repetitions; load average $LOAD_BEFORE)" >&2
"$PYTHON" "$HERE/compare.py" "$PEER/driver" "$PORTABLE_BIN" "$NATIVE_BIN" "$REPETITIONS"
CPU="$(sed -n 's/^model name[^:]*: *//p' /proc/cpuinfo 2>/dev/null | head -n1)"
echo
echo "CasADi $("$PYTHON" -c 'import casadi; print(casadi.__version__)');" \
    "$("$CC" --version | head -n1); $(rustc --version); CPU: ${CPU:-unknown};" \
    "load average before the runs $LOAD_BEFORE, after $(load)."
