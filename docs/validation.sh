#!/usr/bin/env bash
# Regenerates the calibration table of docs/validation.md on the machine it
# runs on: `sim-cli validate --json` on every scenarios/validation/*.toml,
# then one Markdown row per (configuration, task, statistic).
# Usage: docs/validation.sh [REPEATS] > table.md   (needs root for perf and cgroups)
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=${1:-3}
cargo build --release --bin sim-cli >&2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for f in scenarios/validation/*.toml; do
    n=$(basename "$f" .toml)
    echo "validate $n ($repeat repeats)…" >&2
    target/release/sim-cli validate "$f" --repeat "$repeat" --json > "$out/$n.json"
done
python3 - "$out" <<'PY'
import json, os, sys
d = sys.argv[1]
def ms(ns):
    return f"{ns/1e6:.3f}"
first = True
for name in sorted(os.listdir(d)):
    v = json.load(open(os.path.join(d, name)))
    if first:
        h = v["host"]
        print(f"Host: Linux {h['kernel_release']} ({h['scheduler']}), HZ={h['hz']} ({h['hz_source']}), "
              f"preempt {h['preempt']}, cgroup {h['cgroup']}, CPUs {h['cpus_online']}, {h['cpu_model'] or 'CPU model unknown'}"
              f"{', virtualized: ' + h['virtualized'] if h.get('virtualized') else ''}; "
              f"{v['repeats']} measurements per configuration; delays from {'/'.join(sorted(set(v['delays_from'])))}; "
              f"prediction: model {v['model']}{' with --set ' + ' '.join(v['sim_overrides']) if v['sim_overrides'] else ''}.\n")
        print("| configuration | task | stat | predicted ms | measured ms (median) | measured min–max ms | error | verdict |")
        print("|---|---|---|---:|---:|---:|---:|---|")
        first = False
    for r in v["rows"]:
        err = "–" if r["error_pct"] is None else f"{r['error_pct']:+.0f}%"
        print(f"| {name.removesuffix('.json')} | {r['task']} | {r['stat']} | {ms(r['predicted_ns'])} | {ms(r['measured_ns'])} | "
              f"{ms(r['measured_min_ns'])}–{ms(r['measured_max_ns'])} | {err} | {r['verdict']} |")
PY
