#!/usr/bin/env bash
# Measures what the ladder written with families adds to `cargo build --release` of a crate
# (issue 12, item 3: under 3 s above an empty crate).
#
#   benches/build_time.sh            # 7 rebuilds of each crate, 2 jobs
#   RUNS=11 JOBS=4 benches/build_time.sh
#
# Creates two throwaway crates in a temporary directory, both depending on this workspace's
# `mechanism` by path (without its default features; the workspace's Cargo.lock, and
# `build-override` opt-level 3 as the README asks of users): `empty`, an empty library, and
# `ladder`, a library holding only the `Ladder` invocation of `src/models/families.rs` and a
# public function that builds it. They share one target directory, so the dependencies compile
# once; each is built once to warm up, then `touch src/lib.rs && cargo build --release` (a
# rebuild of that crate alone) is timed RUNS times for each, alternating, and the medians and
# their difference are printed. Not part of the test suite; the temporary directory is removed
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

manifest ladder
{
    echo '//! The ladder written with families, and nothing else.'
    echo
    # The `mechanism::mechanism! { … }` block that holds `pub struct Ladder`.
    awk '/^mechanism! \{/ { block = "mechanism::"; inside = 1 }
         inside { block = block $0 "\n" }
         inside && /^\}/ { inside = 0; if (block ~ /pub struct Ladder/) printf "%s", block }' \
        "$root/src/models/families.rs"
    echo
    echo '/// Builds the ladder of `links` links.'
    echo 'pub fn ladder(links: usize) -> Option<Ladder> {'
    echo '    Ladder::new(links).ok()'
    echo '}'
} >"$work/ladder/src/lib.rs"
grep -q 'pub struct Ladder' "$work/ladder/src/lib.rs" || {
    echo "no Ladder model in src/models/families.rs" >&2
    exit 1
}

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
build empty
build ladder

empty_times=()
ladder_times=()
for ((run = 1; run <= RUNS; run++)); do
    empty_times+=("$(rebuild empty)")
    ladder_times+=("$(rebuild ladder)")
done
empty_median=$(printf '%s\n' "${empty_times[@]}" | median)
ladder_median=$(printf '%s\n' "${ladder_times[@]}" | median)

printf 'touch src/lib.rs && cargo build --release -j %s, median of %s:\n' "$JOBS" "$RUNS"
printf '  empty crate:  %.2f s  (runs: %s)\n' "$empty_median" "$(printf '%.2f ' "${empty_times[@]}")"
printf '  ladder crate: %.2f s  (runs: %s)\n' "$ladder_median" "$(printf '%.2f ' "${ladder_times[@]}")"
printf '  difference:   %.2f s  (target: under 3 s)\n' "$(awk -v a="$empty_median" -v b="$ladder_median" 'BEGIN { print b - a }')"
