#!/usr/bin/env bash
# Regenerates the calibration table of docs/validation.md on the machine it
# runs on: first the machine's wake-up noise, then `sim-cli validate --json`
# on every scenarios/validation/*.toml with that noise given to the model, and
# one Markdown row per (configuration, task, statistic), the model's
# prediction beside CFS 4.4's.
#
# Noise calibration: 01-alone (the reactor alone on its CPU) is measured
# first; its wake-up delays (perf view: wake-up → running) are all machine
# latency, nothing competes. Their median m and p99 q give
# machine.wakeup_latency = lognormal(m, sigma), sigma = ln(q/m)/2.326
# (`validate` prints the fit), passed to every prediction with --set.
#
# Usage: docs/validation.sh [REPEATS] [DURATION] [NAME...] > table.md   (needs root for perf and cgroups)
#   DURATION (e.g. 2s, or "" for the scenarios' own) shortens every run;
#   NAME... (e.g. 01-alone) validates only those configurations (the
#   calibration always runs); SIM_CLI=path uses that binary instead of
#   building a release one.
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=${1:-3}
duration=${2:-}
shift $(( $# < 2 ? $# : 2 ))
names=("$@")
also=4.4
if [[ -n "${SIM_CLI:-}" ]]; then
    sim=$SIM_CLI
else
    cargo build --release --bin sim-cli >&2
    sim=target/release/sim-cli
fi
dur=()
[[ -n "$duration" ]] && dur=(--duration "$duration")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "calibrate: measure 01-alone ($repeat repeats) for the machine's wake-up latency…" >&2
"$sim" validate scenarios/validation/01-alone.toml --repeat "$repeat" "${dur[@]}" --json > "$out/calibration.json"
noise=$(python3 - "$out/calibration.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
fits = [f for f in v["wakeup_fits"] if f["task"] == "reactor"]
if not fits:
    sys.exit("calibration: 01-alone measured no wake-ups of the reactor")
f = fits[0]
print(f"reactor wake-ups ({f['from']}): median {f['p50_ns']} ns, p99 {f['p99_ns']} ns", file=sys.stderr)
print(f["dist"])
PY
)
echo "calibrate: machine.wakeup_latency=$noise" >&2

if [[ ${#names[@]} -eq 0 ]]; then
    # The CPU-quota configurations (*-quota-*) have their own record,
    # docs/validation-quota.md, and the RT/deadline ones (rt-*) theirs in
    # docs/validation.md's RT section (they need --apply-sysctls and a host
    # with the model's RT group scheduling); name them to include them here.
    files=()
    for f in scenarios/validation/*.toml; do
        [[ $f == *-quota-* || $(basename "$f") == rt-* ]] || files+=("$f")
    done
else
    files=()
    for n in "${names[@]}"; do files+=("scenarios/validation/$n.toml"); done
fi
for f in "${files[@]}"; do
    n=$(basename "$f" .toml)
    echo "validate $n ($repeat repeats)…" >&2
    "$sim" validate "$f" --repeat "$repeat" "${dur[@]}" --also-kernel "$also" \
        --set "machine.wakeup_latency=$noise" --json > "$out/$n.json"
done
rm -f "$out/calibration.json"
python3 - "$out" "$noise" <<'PY'
import json, os, sys
d, noise = sys.argv[1], sys.argv[2]
def ms(ns):
    return "–" if ns is None else f"{ns/1e6:.3f}"
first = True
for name in sorted(os.listdir(d)):
    v = json.load(open(os.path.join(d, name)))
    also = v.get("also_kernel")
    if first:
        h = v["host"]
        tick = (f"host ticks aligned with the model's (start + {h['tick_offset_ns']} ns + k × tick)"
                if h.get("tick_offset_ns") is not None else f"host ticks NOT aligned: {h.get('tick_grid_missing')}")
        print(f"Host: Linux {h['kernel_release']} ({h['scheduler']}), HZ={h['hz']} ({h['hz_source']}), "
              f"preempt {h['preempt']}, cgroup {h['cgroup']}, CPUs {h['cpus_online']}, {h['cpu_model'] or 'CPU model unknown'}"
              f"{', virtualized: ' + h['virtualized'] if h.get('virtualized') else ''}; {tick}; "
              f"{v['repeats']} measurements per configuration; delays from {'/'.join(sorted(set(v['delays_from'])))}; "
              f"prediction: model {v['model']}{' with --set ' + ' '.join(v['sim_overrides']) if v['sim_overrides'] else ''}"
              f", machine.wakeup_latency={noise} (fitted to 01-alone's reactor wake-ups)"
              f"{'; column predicted ' + also + ': model ' + v['also_model'] + ', same settings' if also else ''}.\n")
        print(f"| configuration | task | stat | predicted ms |{' predicted ' + also + ' ms |' if also else ''}"
              " measured ms (median) | measured min–max ms | error | verdict |")
        print(f"|---|---|---|---:|{'---:|' if also else ''}---:|---:|---:|---|")
        first = False
    for r in v["rows"]:
        err = "–" if r["error_pct"] is None else f"{r['error_pct']:+.0f}%"
        col = f" {ms(r.get('predicted_also_ns'))} |" if also else ""
        print(f"| {name.removesuffix('.json')} | {r['task']} | {r['stat']} | {ms(r['predicted_ns'])} |{col} {ms(r['measured_ns'])} | "
              f"{ms(r['measured_min_ns'])}–{ms(r['measured_max_ns'])} | {err} | {r['verdict']} |")
PY
