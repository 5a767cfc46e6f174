#!/usr/bin/env python3
"""Exclusive instructions per event by concept, from the callgrind profiles
that docs/perf/profile-runs.sh writes (OUTDIR/runs.txt names them).

    python3 docs/perf/cost-by-concept.py OUTDIR [--functions RUN N]

A line's instructions go to the concept of its source file: callgrind, on a
build with line tables, keeps an inlined line in the file it comes from, so
a recorder inlined into the context switch still counts as a recorder.
Standard-library lines (bounds checks, Vec access) count for the function
they were inlined into. `--functions RUN N` lists RUN's N costliest
functions (by symbol, inlined callees included).
"""
import collections
import re
import subprocess
import sys

# First match wins: specific before general. Keys are source paths with "/"
# as "::" (sim-core/src/metrics/history.rs -> ...::metrics::history::), or,
# for lines outside sim-core/src, the function's symbol.
CONCEPTS = [
    ("invariant checks", r"invariants|check_invariants"),
    ("history ring", r"metrics::history"),
    ("occupancy and balance gap", r"metrics::occupancy|metrics::balance"),
    ("recorders and histograms", r"metrics::|LogLinear"),
    ("event queue and tick calendar", r"src::event::|src::tick::|sim_core::event::|sim_core::tick::"),
    ("workload sampling", r"workload::|rand_chacha|rand_core|src::rng::|sim_core::rng"),
    ("group shares", r"sched::group::|shares"),
    ("PELT and cpu_load", r"pelt|cpu_load|load_avg|util_est"),
    ("balancer and placement", r"sched::balance|topology|select_task_rq|cpuset"),
    ("EEVDF class", r"sched::eevdf"),
    ("CFS 4.4 class", r"sched::cfs44"),
    ("fair class, shared", r"sched::fair|sched::cfs_rq|sched::cfs_tasks|sched::class|sched::entity|sched::weights|sched::tunables"),
    ("RT, DL and stop classes", r"sched::rt|sched::deadline|sched::stop|rt_core|dl_core"),
    ("engine: dispatch, wakeup, switch, steps", r"engine::|event_mix::main|src::ids::|src::time::|src::task::|src::requests::"),
    ("libc and std (memcpy, sort, alloc)", r"."),
]


def profile(path):
    """(total, Ir by symbol, Ir by concept) of one callgrind output."""
    out = subprocess.run(
        ["callgrind_annotate", "--inclusive=no", "--auto=no", "--threshold=100", path],
        capture_output=True, text=True, check=True,
    ).stdout
    total, by_fn, by_concept = 0, collections.Counter(), collections.Counter()
    for line in out.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$", line)
        if not m:
            continue
        ir, rest = int(m.group(1).replace(",", "")), m.group(2)
        if rest.startswith("PROGRAM TOTALS"):
            total = ir
            continue
        rest = re.sub(r"\s+\[[^\]]*\]$", "", rest)
        file, sym = rest.split(":", 1) if ":" in rest else ("", rest)
        by_fn[sym] += ir
        key = file if "sim-core/src/" in file else sym
        key = key.replace("/", "::").replace(".rs", "::")
        for name, pattern in CONCEPTS:
            if re.search(pattern, key):
                by_concept[name] += ir
                break
    return total, by_fn, by_concept


def main():
    outdir = sys.argv[1]
    runs = [line.split() for line in open(f"{outdir}/runs.txt") if line.strip()]
    if len(sys.argv) == 5 and sys.argv[2] == "--functions":
        name, n = sys.argv[3], int(sys.argv[4])
        events = next(int(r[2]) for r in runs if r[0] == name)
        total, by_fn, _ = profile(f"{outdir}/{name}.out")
        print("| function | share | per event |\n|---|---:|---:|")
        for sym, ir in by_fn.most_common(n):
            print(f"| `{sym.replace('sim_core::', '')[:100]}` | {100 * ir / total:.1f} % | {ir / events:.0f} |")
        return
    cols = {}
    for name, _, events, _ in runs:
        total, _, by_concept = profile(f"{outdir}/{name}.out")
        cols[name] = (int(events), total, by_concept)
    names = [r[0] for r in runs]
    print("| concept | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for concept, _ in CONCEPTS:
        vals = [cols[n][2].get(concept, 0) / cols[n][0] for n in names]
        if max(vals) >= 0.5:
            print(f"| {concept} | " + " | ".join(f"{v:,.0f}" for v in vals) + " |")
    print("| **all, per event** | " + " | ".join(f"**{cols[n][1] / cols[n][0]:,.0f}**" for n in names) + " |")


if __name__ == "__main__":
    main()
