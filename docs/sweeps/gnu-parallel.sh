#!/usr/bin/env bash
# A sweep in N shards run by GNU parallel, then merged: on one big host, or
# on a few hosts with `parallel --sshlogin` (each with sim-cli on its PATH
# and the repository at the same path). See docs/sweeps/README.md.
#
# On one host `sim-cli sweep --jobs` alone already uses every core. Shards
# add restart points: a shard that failed (a killed job, a host gone away)
# is re-run alone with RESUME=1, and the finished ones are kept (the job
# log). sim-cli/src/batch_examples.rs runs this file's command line for
# every shard, merges as below, and compares with the unsharded sweep.
#
# Usage, from the repository root: docs/sweeps/gnu-parallel.sh [OUT_DIR]
#   RESUME=1 docs/sweeps/gnu-parallel.sh [OUT_DIR]   re-runs only the shards that failed
set -euo pipefail

N=8                  # shards: a multiple of the cores, so they finish together
out=${1:-sweep-out}  # shard-K.jsonl, one per shard, and parallel's job log
mkdir -p "$out"

# Each shard runs its points one after another (--jobs 1): parallel runs
# as many shards at once as there are cores. `{}` is the shard number K, 1..N.
# --halt soon,fail=1: a failed shard stops new ones (merge would refuse the gap).
seq 1 "$N" | parallel --halt soon,fail=1 --joblog "$out/joblog" ${RESUME:+--resume-failed} \
    "sim-cli sweep scenarios/two-hogs.toml --set machine.hz=1000 --vary cfs.sched_latency_ns=1ms..24ms:log:8 --jobs 1 --json --shard {}/$N > $out/shard-{}.jsonl"

sim-cli merge "$out"/shard-*.jsonl --budget 2ms
