#!/usr/bin/env bash
# Builds sim-cli with profile-guided optimisation (one command): an
# instrumented build runs every shipped scenario for 2 s of simulated time,
# under its own kernel model and under EEVDF 6.18, and the release build is
# then optimised for what those runs did (inlining, block layout). The binary
# is ${CARGO_TARGET_DIR:-target}/pgo/release/sim-cli; it prints exactly what
# `cargo build --release` gives (the same code, compiled differently), in
# about 25 % fewer instructions
# (docs/performance.md). Needs rustup's llvm-tools component, which it adds
# when missing. About 8 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."

rustup component list --installed 2>/dev/null | grep -q '^llvm-tools' || rustup component add llvm-tools
profdata=$(find "$(rustc --print sysroot)/lib/rustlib" -name llvm-profdata -type f | head -n 1)
[ -x "$profdata" ] || { echo "pgo.sh: llvm-profdata not found in the toolchain's llvm-tools" >&2; exit 1; }

target=${CARGO_TARGET_DIR:-target}
case "$target" in /*) ;; *) target="$PWD/$target" ;; esac
data=$(mktemp -d)
trap 'rm -rf "$data"' EXIT

RUSTFLAGS="-Cprofile-generate=$data" cargo build --release -p schedlab --bin sim-cli --target-dir "$target/pgo-gen"
gen="$target/pgo-gen/release/sim-cli"
runs=0
for f in scenarios/*.toml; do
    "$gen" run "$f" --set duration=2s >/dev/null
    # Not every file takes 6.18 (a 4.4-only key): its refusal trains nothing.
    "$gen" run "$f" --set duration=2s --set kernel.version=6.18 >/dev/null 2>&1 || true
    runs=$((runs + 1))
done
"$profdata" merge -o "$data/merged.profdata" "$data"/*.profraw
RUSTFLAGS="-Cprofile-use=$data/merged.profdata" cargo build --release -p schedlab --bin sim-cli --target-dir "$target/pgo"
echo "built $target/pgo/release/sim-cli (profile from $runs scenario files)"
