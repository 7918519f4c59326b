#!/usr/bin/env bash
# Measures what a model adds to `cargo build --release` of a crate: the ladder written with
# families (issue 12, item 3: under 3 s above an empty crate), or the double pendulum or the
# ladder without and with `derivatives: [step_jacobians]` (issue 30: models without it compile
# as before).
#
#   benches/build_time.sh                        # 7 rebuilds of each crate, 2 jobs
#   MODEL=double_pendulum benches/build_time.sh
#   MODEL=ladder_derivatives benches/build_time.sh
#   MODEL=robot_arm benches/build_time.sh
#   RUNS=11 JOBS=4 benches/build_time.sh
#
# Creates throwaway crates in a temporary directory, all depending on this workspace's
# `mechanism` by path (without its default features; the workspace's Cargo.lock, and
# `build-override` opt-level 3 as the README asks of users): `empty`, an empty library, and
# libraries holding only one `mechanism!` invocation of `src/models/` (`ladder`; or `plain` and
# `derived`, `DoublePendulum` without and with its `derivatives` line) and a public function
# that builds it. They share one target directory, so the dependencies compile once; each is
# built once to warm up, then `touch src/lib.rs && cargo build --release` (a rebuild of that
# crate alone) is timed RUNS times for each, alternating, and the medians and the difference of
# the last two are printed. Not part of the test suite; the temporary directory is removed
# at the end (KEEP=1 keeps it).
set -euo pipefail

RUNS=${RUNS:-7}
JOBS=${JOBS:-2}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d -t mechanism-build-time.XXXXXX)
if [ -z "${KEEP:-}" ]; then
    trap 'rm -rf "$work"' EXIT
fi
export CARGO_TARGET_DIR="$work/target"

# Writes the manifest of crate $1 with the workspace's lock file.
manifest() {
    mkdir -p "$work/$1/src"
    cat >"$work/$1/Cargo.toml" <<EOF
[package]
name = "$1"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
mechanism = { path = "$root", default-features = false }

[profile.release.build-override]
opt-level = 3

[workspace]
EOF
    cp "$root/Cargo.lock" "$work/$1/Cargo.lock"
}

manifest empty
echo '//! Nothing: the baseline.' >"$work/empty/src/lib.rs"

# Prints the `mechanism::mechanism! { … }` block of file $1 that holds `pub struct $2`.
extract() {
    awk -v name="pub struct $2 " '/^mechanism! \{/ { block = "mechanism::"; inside = 1 }
         inside { block = block $0 "\n" }
         inside && /^\}/ { inside = 0; if (index(block, name)) printf "%s", block }' \
        "$root/$1"
}

# Writes crate $1 holding the model block $2 and the function $3 that builds it.
model_crate() {
    manifest "$1"
    printf '//! One model, and nothing else.\n\n%s\n%s\n' "$2" "$3" >"$work/$1/src/lib.rs"
    grep -q 'pub struct' "$work/$1/src/lib.rs" || {
        echo "no model block for crate $1" >&2
        exit 1
    }
}

# Sets up the crates `plain` and `derived`: the model `$2` of file `$1` without and with its
# `derivatives: [step_jacobians]` line, built by the function `$3`.
with_and_without_derivatives() {
    crates=(empty plain derived)
    local block
    block=$(extract "$1" "$2")
    grep -q 'derivatives: \[.*step_jacobians.*\]' <<<"$block" || {
        echo "$2 has no derivatives: [step_jacobians] to remove" >&2
        exit 1
    }
    model_crate derived "$block" "$3"
    model_crate plain "$(grep -v 'derivatives: \[.*step_jacobians.*\]' <<<"$block")" "$3"
    target="derived − plain: what step_jacobians adds"
}

# MODEL=ladder (the default): the ladder written with families against the empty crate.
# MODEL=double_pendulum: `models::DoublePendulum` without and with `derivatives:
# [step_jacobians]` (issue 30: what the step Jacobians' derivatives add to a model's build);
# MODEL=ladder_derivatives: the same for the ladder (a model with families); MODEL=robot_arm:
# the same for `models::RobotArmParabola` (a configuration-dependent `M` compiled for `rk`,
# whose step Jacobians need third derivatives of `T`).
case "${MODEL:-ladder}" in
ladder)
    crates=(empty ladder)
    model_crate ladder "$(extract src/models/families.rs Ladder)" \
        'pub fn ladder(links: usize) -> Option<Ladder> { Ladder::new(links).ok() }'
    target="ladder − empty under 3 s"
    ;;
double_pendulum)
    with_and_without_derivatives src/models/double_pendulum.rs DoublePendulum \
        'pub fn model() -> DoublePendulum { DoublePendulum::default() }'
    ;;
ladder_derivatives)
    with_and_without_derivatives src/models/families.rs Ladder \
        'pub fn ladder(links: usize) -> Option<Ladder> { Ladder::new(links).ok() }'
    ;;
robot_arm)
    with_and_without_derivatives src/models/robot_arm.rs RobotArmParabola \
        'pub fn model() -> RobotArmParabola { RobotArmParabola::default() }'
    ;;
*)
    echo "unknown MODEL=$MODEL (ladder, double_pendulum, ladder_derivatives or robot_arm)" >&2
    exit 1
    ;;
esac

build() {
    (cd "$work/$1" && cargo build --release --quiet -j "$JOBS")
}

# Prints the seconds that one rebuild of crate $1 takes.
rebuild() {
    touch "$work/$1/src/lib.rs"
    local start end
    start=$(date +%s.%N)
    build "$1"
    end=$(date +%s.%N)
    awk -v a="$start" -v b="$end" 'BEGIN { print b - a }'
}

median() {
    sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

echo "warming up: building the dependencies once (in $work)" >&2
for crate in "${crates[@]}"; do
    build "$crate"
done

declare -A times
for ((run = 1; run <= RUNS; run++)); do
    for crate in "${crates[@]}"; do
        times[$crate]+="$(rebuild "$crate") "
    done
done

printf 'touch src/lib.rs && cargo build --release -j %s, median of %s:\n' "$JOBS" "$RUNS"
declare -A medians
for crate in "${crates[@]}"; do
    medians[$crate]=$(tr ' ' '\n' <<<"${times[$crate]}" | grep . | median)
    printf '  %-8s %.2f s  (runs: %s)\n' "$crate:" "${medians[$crate]}" "${times[$crate]}"
done
last=${crates[-1]}
previous=${crates[-2]}
printf '  %s − %s: %.2f s  (%s)\n' "$last" "$previous" \
    "$(awk -v a="${medians[$previous]}" -v b="${medians[$last]}" 'BEGIN { print b - a }')" "$target"
