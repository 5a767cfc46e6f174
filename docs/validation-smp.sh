#!/usr/bin/env bash
# Measures the multi-CPU probes (scenarios/validation/smp/*.toml) with
# `sim-cli measure`, in the kernel lab (Debian's vanilla 6.12 under QEMU TCG,
# ../shared/reference/kernel-lab.md) or on this host, on a quiet machine only.
#
# Usage (as root):
#   docs/validation-smp.sh lab|host [REPEATS] [PROBE...]
#     REPEATS  default 3; PROBE: spread escape pool pingpong reactors (default: all)
#   Environment:
#     OUT=DIR          results: DIR/<probe>/<lab|host>-<n>.{json,err,trace,facts,host,host-cpu,watch}
#                      (default /tmp/schedlab-smp)
#     SIM_CLI=PATH     sim-cli to use (default: target/release/sim-cli, built if missing)
#     LAB=PATH         kernel-lab.sh (default ../shared/tools/kernel-lab/kernel-lab.sh)
#     QUIET_PCT=15     the host counts as quiet below this busy % over 3 s ...
#     QUIET_DEADLINE=S ... with no cargo/rustc/cc1/ld running; waits for that at
#                      most until epoch second S (default: now + 90 min), then stops
#     HOST_AUTOGROUP=off  host runs only: `--set autogroup.enabled=false
#                      --apply-sysctls` (restored by measure), so that the
#                      workload runs in the root task group as in the lab's guest
#                      (whose command runs in init's session). Default: on (as is).
#
# Lab runs use SMP=2 PIN=1 APPEND="preempt=none tsc=reliable" (2 vCPUs pinned
# to the 2 host CPUs, preempt=none like the host; LAB_APPEND replaces the
# APPEND). Why tsc=reliable: under TCG the clocksource watchdog marks the TSC
# unstable a few seconds after boot ("Clocksource 'tsc' skewed 11 ms over
# watchdog 'hpet' interval of 474 ms"; dmesg) and switches to HPET. Then
# every clock_gettime is a system call with an emulated HPET read (the
# threads' vDSO spin becomes mostly system time), the spin's readings are
# often more than measure's 20 us gap apart, those gaps do not count as work,
# and a `run` step burns several times the CPU it asks for (a 50 ms run took
# ~270 ms of CPU in a trial). Marking the TSC unstable also switches
# sched_clock to its unstable mode. tsc=reliable keeps the TSC (QEMU derives
# it from the host clock) and the vDSO.
# Each run records, beside measure's JSON:
#   .trace     sched_migrate_task and sched_process_exit (ftrace, trace_clock
#              mono = CLOCK_MONOTONIC), for when tasks moved; the workload's
#              threads exit at the run's end, which places the window
#   .facts     kernel, command line, sched domains, preempt mode, features
#   .host-cpu  host CPU time per process over the run (anything but QEMU and
#              the workload is foreign load on the host)
#   .watch     builders (cargo, rustc, cc, ld, apt...) seen during the run, once
#              a second; a run with any is set aside under OUT/disturbed/ and
#              done again
# The foreign CPU time inside the guest (or on the host) is measure's own
# `measurement.foreign_cpu` (from perf sched: every task that is neither the
# workload nor measure's tools, on the workload's CPUs).
# The host mode mounts tracefs if needed and unmounts it afterwards.
#
# `inner PROBE OUTPREFIX` is the part that runs inside the guest (or on the host).
set -euo pipefail

TRACING=/sys/kernel/tracing

inner() {
    local probe=$1 pre=$2 sim=${SIM_IN:-/tmp/job/sim-cli} toml=${TOML_IN:-/tmp/job/$1.toml}
    local T=$TRACING
    {
        echo "uname: $(uname -r)"
        echo "cmdline: $(cat /proc/cmdline)"
        echo "clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
        echo "nproc: $(nproc)"
        echo "loadavg: $(cat /proc/loadavg)"
        echo "autogroup: $(cat /proc/sys/kernel/sched_autogroup_enabled 2>/dev/null) self: $(cat /proc/self/autogroup 2>/dev/null)"
        echo "preempt: $(cat /sys/kernel/debug/sched/preempt 2>/dev/null)"
        echo "base_slice_ns: $(cat /sys/kernel/debug/sched/base_slice_ns 2>/dev/null)"
        echo "features: $(cat /sys/kernel/debug/sched/features 2>/dev/null)"
        echo "l3 shared: $(cat /sys/devices/system/cpu/cpu0/cache/index3/shared_cpu_list 2>/dev/null)"
        for d in /sys/kernel/debug/sched/domains/cpu*/domain*; do
            [ -d "$d" ] && echo "domain $d: $(cat "$d/name") flags: $(cat "$d/flags") imbalance_pct: $(cat "$d/imbalance_pct" 2>/dev/null)"
        done
    } > "$pre.facts" 2>&1
    # ftrace: sched_migrate_task and sched_process_exit only, clock = CLOCK_MONOTONIC.
    local filtered=0 was_on
    was_on=$(cat $T/tracing_on)
    echo 0 > $T/tracing_on
    echo mono > $T/trace_clock
    echo > $T/trace
    if [ "$(cat $T/events/sched/sched_switch/enable)" = 1 ]; then
        # The lab's guest holds every sched tracepoint on from boot (no live
        # text patching under TCG): drop the others with a filter instead.
        filtered=1
        for e in $T/events/sched/*/; do
            case $(basename "$e") in
                sched_migrate_task|sched_process_exit) echo 0 > "$e/filter" ;;
                *) [ -f "$e/filter" ] && echo 'common_pid < 0' > "$e/filter" || true ;;
            esac
        done
    else
        echo 1 > $T/events/sched/sched_migrate_task/enable
        echo 1 > $T/events/sched/sched_process_exit/enable
    fi
    echo 1 > $T/tracing_on
    local rc=0
    "$sim" measure "$toml" --json ${MEASURE_ARGS:-} > "$pre.json" 2> "$pre.err" || rc=$?
    echo 0 > $T/tracing_on
    cat $T/trace > "$pre.trace"
    echo > $T/trace
    if [ $filtered = 0 ]; then
        echo 0 > $T/events/sched/sched_migrate_task/enable
        echo 0 > $T/events/sched/sched_process_exit/enable
    fi
    echo local > $T/trace_clock
    echo "$was_on" > $T/tracing_on
    {
        echo "measure rc=$rc"
        echo "clocksource after: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
        echo "dmesg clocksource/tsc/watchdog/oops: $(dmesg 2>/dev/null | grep -i -E 'unstable|skew|watchdog|oops|BUG|WARNING' | tail -5 | tr '\n' '|')"
    } >> "$pre.facts"
    return $rc
}

# Per-process CPU ticks (utime+stime) of the whole host, as "pid comm ticks".
proc_ticks() {
    python3 - <<'PY'
import os
for p in os.listdir("/proc"):
    if not p.isdigit(): continue
    try:
        s = open(f"/proc/{p}/stat").read()
    except OSError:
        continue
    comm = s[s.index("(") + 1:s.rindex(")")]
    f = s[s.rindex(")") + 2:].split()
    print(p, comm.replace(" ", "_"), int(f[11]) + int(f[12]))
PY
}

# Host CPU time (utime+stime) per process between two proc_ticks snapshots,
# largest first (processes that started and ended in between are not seen:
# the watcher below catches builders by name once a second).
ticks_diff() {
    python3 - "$1" "$2" <<'PY'
import sys
def load(p):
    d = {}
    for l in open(p):
        pid, comm, t = l.split()
        d[pid] = (comm, int(t))
    return d
a, b = load(sys.argv[1]), load(sys.argv[2])
rows = []
for pid, (comm, t) in b.items():
    dt = t - a.get(pid, (comm, 0))[1]
    if dt > 0:
        rows.append((dt, pid, comm))
for dt, pid, comm in sorted(rows, reverse=True)[:25]:
    print(f"{dt * 10:8d} ms  {pid:>7}  {comm}")
PY
}

BUILDERS='cargo|rustc|cc1|cc1plus|ld|ld.lld|rust-lld|clippy-driver|rustdoc|cc|c++|gcc|g++|apt|apt-get|dpkg'
builders() { ps -eo pid=,comm= | awk -v re="^($BUILDERS)\$" '$2 ~ re {print $1}'; }
builder_names() { ps -eo comm= | awk -v re="^($BUILDERS)\$" '$1 ~ re' | sort | uniq -c | xargs; }

host_busy_pct() {
    local a b tot=0 i idle
    a=($(head -1 /proc/stat)); sleep 3; b=($(head -1 /proc/stat))
    for i in 1 2 3 4 5 6 7 8; do tot=$(( tot + b[i] - a[i] )); done
    idle=$(( b[4] - a[4] + b[5] - a[5] ))
    echo $(( tot > 0 ? 100 * (tot - idle) / tot : 0 ))
}

# Waits until the host is quiet; returns 1 at the deadline.
wait_quiet() {
    local pct b
    while :; do
        b=$(builders)
        if [ -z "$b" ]; then
            pct=$(host_busy_pct)
            if [ "$pct" -lt "${QUIET_PCT:-15}" ] && [ -z "$(builders)" ]; then
                echo "$pct"
                return 0
            fi
        fi
        if [ "$(date +%s)" -ge "$QUIET_DEADLINE" ]; then
            return 1
        fi
        sleep 20
    done
}

main() {
    local mode=${1:?usage: docs/validation-smp.sh lab|host [REPEATS] [PROBE...]}
    shift
    case $mode in
        inner) inner "$@"; return ;;
        lab|host) ;;
        *) echo "usage: docs/validation-smp.sh lab|host [REPEATS] [PROBE...]" >&2; exit 2 ;;
    esac
    local repeat=${1:-3}
    [ $# -gt 0 ] && shift
    local probes=("$@")
    [ ${#probes[@]} -eq 0 ] && probes=(spread escape pool pingpong reactors)
    local root; root=$(cd "$(dirname "$0")/.." && pwd)
    local self=$root/docs/validation-smp.sh
    local sim=${SIM_CLI:-$root/target/release/sim-cli}
    if [ ! -x "$sim" ]; then
        (cd "$root" && cargo build --release -p schedlab --bin sim-cli >&2)
    fi
    local lab=${LAB:-$root/../shared/tools/kernel-lab/kernel-lab.sh}
    local out=${OUT:-/tmp/schedlab-smp}
    : "${QUIET_DEADLINE:=$(( $(date +%s) + 5400 ))}"
    export QUIET_DEADLINE
    local mounted=0
    if [ "$mode" = host ] && [ ! -e $TRACING/events ]; then
        mount -t tracefs nodev $TRACING && mounted=1
    fi
    # Expanded now: the EXIT trap runs after this function's locals are gone.
    trap "[ $mounted = 1 ] && umount $TRACING 2>/dev/null || true" EXIT
    local n p pre busy job try dist
    for n in $(seq 1 "$repeat"); do
        for p in "${probes[@]}"; do
            mkdir -p "$out/$p"
            pre=$out/$p/$mode-$n
            try=0
            while :; do
                try=$(( try + 1 ))
                if ! busy=$(wait_quiet); then
                    echo "[smp] $(date +%T) gave up waiting for a quiet host (deadline $(date -d @"$QUIET_DEADLINE" +%T)); builders: $(builder_names)" >&2
                    exit 3
                fi
                echo "[smp] $(date +%T) $mode $p #$n (try $try): host busy ${busy}%, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
                one_run "$mode" "$p" "$n" "$pre" "$busy"
                # Disturbed: a builder was seen during the run. Keep it aside and run it again.
                if [ -s "$pre.watch" ]; then
                    dist=$out/disturbed/$p; mkdir -p "$dist"
                    for f in "$pre".*; do mv "$f" "$dist/$(basename "$f" | sed "s/^$mode-$n\./$mode-$n-try$try./")"; done
                    echo "[smp] $(date +%T) $mode $p #$n disturbed (builders ran), kept in $dist; again" >&2
                    continue
                fi
                break
            done
        done
    done
}

one_run() {
    local mode=$1 p=$2 n=$3 pre=$4 busy=$5 job watcher
    { echo "host busy before: ${busy}%"; echo "host loadavg before: $(cat /proc/loadavg)"; echo "start: $(date -Is)"; } > "$pre.host"
    proc_ticks > "$pre.ticks0"
    local s0; s0=$(head -1 /proc/stat)
    # builders seen during the run, once a second
    ( while sleep 1; do b=$(builder_names); [ -n "$b" ] && echo "$(date +%T) $b"; done ) > "$pre.watch" &
    watcher=$!
    if [ "$mode" = lab ]; then
        job=smp-$p-$n
        JOB_FILES="$self $root/scenarios/validation/smp/$p.toml $sim" SMP=2 PIN=1 APPEND="${LAB_APPEND:-preempt=none tsc=reliable}" \
            "$lab" run "$job" "bash /tmp/job/validation-smp.sh inner $p /tmp/job/out" >&2
        local labdir=${LAB_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/schedlab-kernel-lab}/results/$job
        local x
        for x in json err trace facts; do
            cp "$labdir/out.$x" "$pre.$x" 2>/dev/null || echo "missing: out.$x" >> "$pre.host"
        done
        cp "$labdir/console.log" "$pre.console.log"
        cp "$labdir/pinning" "$pre.pinning" 2>/dev/null || true
        echo "wall_s: $(cat "$labdir/wall_s") qemu_rc: $(cat "$labdir/qemu_rc") guest_rc: $(cat "$labdir/rc" 2>/dev/null || echo none)" >> "$pre.host"
        if grep -aq -E 'Kernel panic|Oops:|BUG:|WARNING:' "$labdir/console.log"; then
            echo "CONSOLE: oops/panic/BUG/WARNING, see $pre.console.log" >> "$pre.host"
        fi
    else
        local args=""
        [ "${HOST_AUTOGROUP:-on}" = off ] && args="--set autogroup.enabled=false --apply-sysctls"
        SIM_IN=$sim TOML_IN=$root/scenarios/validation/smp/$p.toml MEASURE_ARGS=$args \
            inner "$p" "$pre" || echo "measure failed, see $pre.err" >&2
    fi
    kill "$watcher" 2>/dev/null || true
    wait "$watcher" 2>/dev/null || true
    proc_ticks > "$pre.ticks1"
    local s1; s1=$(head -1 /proc/stat)
    {
        echo "end: $(date -Is)"
        echo "host loadavg after: $(cat /proc/loadavg)"
        echo "builders after: $(builder_names)"
        python3 -c "import sys; a=[int(x) for x in sys.argv[1].split()[1:9]]; b=[int(x) for x in sys.argv[2].split()[1:9]]; d=[y-x for x,y in zip(a,b)]; t=sum(d); print('host busy over the run: %.1f%% of %d CPUs (%.1f s)' % (100*(t-d[3]-d[4])/max(t,1), $(nproc), (t-d[3]-d[4])/100))" "$s0" "$s1"
    } >> "$pre.host"
    ticks_diff "$pre.ticks0" "$pre.ticks1" > "$pre.host-cpu"
    rm -f "$pre.ticks0" "$pre.ticks1"
}

main "$@"
