#!/usr/bin/env bash
# A sweep as a Slurm job array: one array task per shard. sim-cli's shards
# are numbered 1..N (`--shard K/N`), so the array is 1-N and the task id is
# K as it is. N is written here, not taken from SLURM_ARRAY_TASK_COUNT, so
# that re-running one shard (`sbatch --array=3 docs/sweeps/slurm-array.sh`,
# the command line overrides the #SBATCH line) is still shard 3 of 8.
# sim-cli/src/batch_examples.rs checks the wiring: --array=1-N agrees with
# N below, and the task ids 1..N run every point once. See docs/sweeps/README.md.
#
# Submit from the repository root (on a shared file system), then merge
# when every task has succeeded (Slurm opens the --output file before the
# script runs, so its directory must exist first):
#   mkdir -p sweep-out && jobid=$(sbatch --parsable docs/sweeps/slurm-array.sh)
#   sbatch --dependency=afterok:$jobid --wrap 'sim-cli merge sweep-out/shard-*.jsonl --budget 2ms > sweep-out/result.txt'
#
#SBATCH --job-name=schedlab-sweep
#SBATCH --array=1-8
#SBATCH --cpus-per-task=1
#SBATCH --mem=512M
#SBATCH --time=00:30:00
#SBATCH --output=sweep-out/slurm-%A_%a.log
set -euo pipefail

N=8
out=sweep-out
mkdir -p "$out"
K=${SLURM_ARRAY_TASK_ID:?run this with sbatch (a job array task)}

# Written under a temporary name and renamed when complete: a task killed
# half-way leaves no shard file for merge to read, and its re-run rewrites it.
sim-cli sweep scenarios/two-hogs.toml --set machine.hz=1000 --vary cfs.sched_latency_ns=1ms..24ms:log:8 --jobs "${SLURM_CPUS_PER_TASK:-1}" --json --shard "${SLURM_ARRAY_TASK_ID}/$N" > "$out/.shard-$K.jsonl.tmp"
mv "$out/.shard-$K.jsonl.tmp" "$out/shard-$K.jsonl"
