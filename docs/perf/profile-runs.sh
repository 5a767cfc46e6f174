#!/usr/bin/env bash
# The eight callgrind profiles of docs/performance.md § "The cost of each
# simulated event": jmx, threadpool, elastic-backup and a two-task validation
# scenario, each under CFS 4.4 and EEVDF 6.18, run by the `event_mix` example
# (the run alone: no report). Instructions are deterministic, so the machine's
# load does not matter. Then the table by concept:
#
#   docs/perf/profile-runs.sh OUTDIR            # about 5 minutes after the build
#   python3 docs/perf/cost-by-concept.py OUTDIR  # the markdown table
#
# Needs valgrind. Builds the `profiling` profile (release with line tables,
# which the concept table needs to put inlined code where it comes from).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: profile-runs.sh OUTDIR}
mkdir -p "$out"
cargo build --profile profiling -p schedlab-core --features internals --example event_mix
bin="${CARGO_TARGET_DIR:-target}/profiling/examples/event_mix"
run() {
    local name=$1
    shift
    valgrind --tool=callgrind --callgrind-out-file="$out/$name.out" "$bin" "$@" >"$out/$name.txt" 2>"$out/$name.err"
    local ir events
    ir=$(grep -m1 '^summary:\|^totals:' "$out/$name.out" | awk '{print $2}')
    events=$(head -n 1 "$out/$name.txt" | awk '{print $(NF-4)}')
    echo "$name $ir $events $((ir / events))" | tee -a "$out/runs.txt"
}
: >"$out/runs.txt"
run jmx-4.4 scenarios/jmx.toml duration=2s
run jmx-6.18 scenarios/jmx.toml linux618 duration=2s
run threadpool-4.4 scenarios/threadpool.toml
run threadpool-6.18 scenarios/threadpool.toml kernel.version=6.18
run elastic-backup-4.4 scenarios/elastic-backup.toml kernel.version=4.4 duration=5s
run elastic-backup-6.18 scenarios/elastic-backup.toml duration=5s
run two-tasks-4.4 scenarios/validation/02-hog-same-group.toml kernel.version=4.4
run two-tasks-6.18 scenarios/validation/02-hog-same-group.toml kernel.version=6.18
