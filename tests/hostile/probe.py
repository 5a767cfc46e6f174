#!/usr/bin/env python3
"""Hostile-input probe of sim-cli (issue 31): 85 command lines a careless or
hostile user might type. Each must exit 0 or 2 (a refusal: 2), within 60 s and
a 3 GiB address-space cap, with no panic, no "out of memory", at most 4 KiB of
stderr and no raw ESC/BEL in the output.

    python3 tests/hostile/probe.py target/debug/sim-cli [REPO] [NAME-FILTER]

Not part of the test suite (the Rust tests pin each defect); run it after a
change to an input surface, and add a case for every new one."""
import os, sys, subprocess, resource, tempfile, json, threading, time
BIN = sys.argv[1]
REPO = sys.argv[2] if len(sys.argv) > 2 else '/work/main'
ONLY = sys.argv[3] if len(sys.argv) > 3 else None
T = tempfile.mkdtemp(prefix='probe-')
def f(name, text):
    p = os.path.join(T, name)
    mode = 'wb' if isinstance(text, bytes) else 'w'
    with open(p, mode) as fh: fh.write(text)
    return p
S = lambda n: os.path.join(REPO, 'scenarios', n)
base = open(S('two-hogs.toml')).read()
MINI = 'schema = 1\nseed = 1\nduration = "100ms"\n[machine]\ncpus = 1\n[[tasks]]\nname = "a"\nprogram = [{ run = "1ms" }, { sleep = "1ms" }]\n'
deep_key = '.'.join(['a'] * 30000)
cases = []  # (name, args, expect) expect: 'refuse' | 'ok' | 'any'
def c(name, args, expect='refuse'): cases.append((name, args, expect))
c('run-devzero', ['run', '/dev/zero'])
c('merge-devzero', ['merge', '/dev/zero'])
c('fit-devzero', ['fit-device', '/dev/zero'])
c('export-devzero', ['export', '--rt-app', '/dev/zero'])
c('run-dir', ['run', T])
c('run-missing', ['run', T + '/nope.toml'])
c('deep-variant', ['run', f('deep.toml', MINI + '[variants.x]\n' + deep_key + ' = 1\n')])
c('deep-set', ['run', f('mini.toml', MINI), '--set', deep_key + '=1'])
c('deep-inline', ['run', f('deepi.toml', MINI + 'x = ' + '{a=' * 20000 + '1' + '}' * 20000 + '\n')])
c('deep-array', ['run', f('deepa.toml', MINI + 'x = ' + '[' * 20000 + ']' * 20000 + '\n')])
c('fit-qd1', ['fit-device', os.path.join(REPO, 'tests/fio/vm-randread-4k-qd1.json')], 'any')
c('phantom-group', ['run', S('k8s-cpu-limit.toml'), '--set', 'groups."/kubepods/pod-apl"."cpu.max"=max'])
c('phantom-device', ['run', S('cfq-starvation.toml'), '--set', 'devices.sdb.elevator=noop'])
c('phantom-limiter', ['run', S('elastic-backup.toml'), '--set', 'limiters.bakcup.grant=1ms'])
c('phantom-source', ['run', S('request-hops.toml'), '--set', 'sources.nope.rate_per_s=5'])
c('set-newline', ['run', f('mini.toml', MINI), '--set', 'seed=5\nfoo'])
c('esc-name', ['run', f('esc.toml', MINI.replace('seed = 1', 'seed = 1\nname = "\x1b]0;pwned\x07\x1b[2J"'))])
c('esc-taskname', ['run', f('esc2.toml', MINI.replace('name = "a"', 'name = "a\x1b[2J"'))])
c('esc-path', ['run', f('e\x1b[2Jx.toml', 'garbage =')])
c('huge-key', ['run', f('hk.toml', MINI + 'k' * 3_000_000 + ' = 1\n')])
c('num309', ['run', f('n.toml', MINI.replace('seed = 1', 'seed = ' + '9' * 309))])
c('grant-1ns', ['run', S('elastic-backup.toml'), '--set', 'limiters.backup.grant=1ns'])
c('vary-neg', ['sweep', S('two-hogs.toml'), '--vary', 'tasks.hog1.nice=-20..19'], 'any')
c('vary-dup', ['sweep', S('two-hogs.toml'), '--vary', 'seed=1,1'])
c('vary-huge', ['sweep', f('mini.toml', MINI), '--vary', 'seed=1..100000000:lin:100000000'])
c('jobs-0', ['sweep', f('mini.toml', MINI), '--vary', 'seed=1,2', '--jobs', '0'])
c('jobs-huge', ['sweep', f('mini.toml', MINI), '--vary', 'seed=1,2', '--jobs', '18446744073709551615'])
c('shard-bad', ['sweep', f('mini.toml', MINI), '--vary', 'seed=1,2', '--shard', '3/2'])
c('shard-zero', ['sweep', f('mini.toml', MINI), '--vary', 'seed=1,2', '--shard', '0/0'])
c('window-junk', ['run', f('mini.toml', MINI), '--timehist', '--window', '5s..1s'])
c('window-huge', ['run', f('mini.toml', MINI), '--timehist', '--window', '0..99999999999d'], 'any')
c('cpus-junk', ['run', f('mini.toml', MINI), '--timehist', '--cpus', '5-2'])
c('cpus-huge', ['run', f('mini.toml', MINI), '--timehist', '--cpus', '0-4294967295'])
c('hgrm-unknown', ['run', f('mini.toml', MINI), '--hgrm', 'nope'])
c('plot-devfull', ['run', f('mini.toml', MINI), '--plot', '/dev/full'])
c('trace-dir', ['run', f('mini.toml', MINI), '--trace', T])
c('measure-dur-junk', ['measure', f('mini.toml', MINI), '--duration', 'junk'])
c('measure-cpus-junk', ['measure', f('mini.toml', MINI), '--cpus', '99999'])
c('kernels-junk', ['compare', f('mini.toml', MINI), '--kernels', '7.0'])
c('compare-jobs0', ['compare', f('mini.toml', MINI), '--jobs', '0'])
c('merge-junk', ['merge', f('j.jsonl', '{"a":1}\nnot json\n')])
c('merge-longline', ['merge', f('jl.jsonl', '{"x":"' + 'a' * 5_000_000 + '"}\n')])
c('merge-empty', ['merge', f('e.jsonl', '')])
c('fit-strings', ['fit-device', f('fs.json', json.dumps({"jobs": [{"jobname": "x", "read": {"iops": "iops", "bw": 1}}]}))])
c('fit-neg', ['fit-device', f('fn.json', json.dumps({"jobs": [{"jobname": "x", "job options": {"bs": "4k", "iodepth": "1", "rw": "randread"}, "read": {"iops": -5, "bw": -1, "clat_ns": {"mean": 100000}}}]}))])
c('fit-nested', ['fit-device', f('fd.json', '[' * 100000 + ']' * 100000)])
c('export-k8s', ['export', '--rt-app', S('k8s-cpu-limit.toml')], 'any')
c('export-dir-out', ['export', '--rt-app', f('mini.toml', MINI), '-o', T])
c('schema-bad', ['schema', 'nope'])
c('serve-port', ['serve', '--port', '99999'])
c('duration-flag-huge', ['run', f('mini.toml', MINI), '--set', 'duration=100000d'])
c('events-huge', ['run', f('mini.toml', MINI), '--set', 'events_max=18446744073709551615'], 'any')
c('tasks-many', ['run', f('many.toml', MINI.replace('name = "a"', 'name = "a"\ncount = 100000'))], 'any')
c('set-no-eq', ['run', f('mini.toml', MINI), '--set', 'seed'])
c('set-empty-key', ['run', f('mini.toml', MINI), '--set', '=5'])
c('set-variants', ['run', f('mini.toml', MINI), '--set', 'variants.x.seed=5'])
c('variant-missing', ['run', f('mini.toml', MINI), '--variant', 'nope'])
c('bom', ['run', f('bom.toml', '\ufeff' + MINI)], 'any')
c('nul', ['run', f('nul.toml', MINI + '\x00')])
c('latin1', ['run', f('l1.toml', MINI.encode() + b'# \xff\xfe\n')])
c('cpus-1', ['run', f('cn.toml', MINI.replace('cpus = 1', 'cpus = -1'))])
c('slice-dist', ['run', f('sd.toml', MINI.replace('[[tasks]]\nname = "a"', '[[tasks]]\nname = "a"\nslice = "exp(1ms)"'))])
c('version-float', ['run', f('vf.toml', MINI + '[kernel]\nversion = 6.12\n')])
c('cfsbw-own', ['run', f('bw.toml', MINI + '[kernel]\nversion = "6.18"\ncfs_bandwidth = "6.18"\n')], 'ok')
c('old-file', ['run', f('old.toml', MINI + '[variants.v]\n"cfs.sched_latency_ns" = "6ms"\n'), '--set', 'kernel.version=4.4'], 'ok')
c('dup-variant-key', ['run', f('dv.toml', MINI + '[variants.v]\n"kernel.version" = "6.18"\nkernel = { version = "6.12" }\n')])
c('warmup-bad', ['run', f('mini.toml', MINI), '--set', 'report.warmup=1s'])
c('completions-bad', ['completions', 'tcsh'])
c('validate-junk', ['validate', f('mini.toml', MINI), '--repeats', '0'], 'any')
c('sweep-metric', ['sweep', f('mini.toml', MINI), '--vary', 'seed=1,2', '--metric', 'p101'])
c('sweep-budget', ['sweep', f('mini.toml', MINI), '--vary', 'seed=1,2', '--budget', 'soon'])
c('sweep-target', ['sweep', f('mini.toml', MINI), '--vary', 'seed=1,2', '--target', 'nobody'])
c('sweep-3keys-plot', ['sweep', f('mini.toml', MINI), '--vary', 'seed=1,2', '--vary', 'tasks.a.nice=0,1', '--vary', 'machine.hz=250,1000', '--plot', T + '/pl'], 'any')
c('sweep-grid-huge', ['sweep', f('mini.toml', MINI), '--vary', 'seed=1..64:lin:64', '--vary', 'tasks.a.nice=-20..19:lin:40', '--vary', 'machine.hz=100,250,300,1000', '--vary', 'duration=1ms,2ms,3ms,4ms,5ms,6ms,7ms,8ms,9ms,10ms,11ms,12ms'], 'any')
c('trace-max0', ['run', f('mini.toml', MINI), '--timehist', '--trace-max', '0'], 'any')
c('trace-max-huge', ['run', f('mini.toml', MINI), '--timehist', '--trace-max', '18446744073709551615'], 'any')
c('window-worst-nodelay', ['run', f('mini.toml', MINI), '--timehist', '--window', 'worst'], 'any')
c('export-variant-missing', ['export', '--rt-app', f('mini.toml', MINI), '--variant', 'x'])
c('fifo-run', ['run', '/proc/self/fd/0'], 'any')
c('stdin-dash', ['run', '-'], 'any')
c('man-outdir-file', ['man', '--out-dir', '/dev/null'])
c('dup-set', ['run', f('mini.toml', MINI), '--set', 'seed=1', '--set', 'seed=2'], 'any')
c('set-bidi', ['run', f('mini.toml', MINI), '--set', 'name=\u202eevil'])
c('set-esc-value', ['run', f('mini.toml', MINI), '--set', 'tasks.a.nice=\x1b[2J'])
c('set-esc-key', ['run', f('mini.toml', MINI), '--set', 'tasks.\x1b[2J.nice=1'])
def limit():
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
bad = 0
for name, args, expect in cases:
    if ONLY and ONLY not in name: continue
    t0 = time.time()
    try:
        p = subprocess.run([BIN] + args, capture_output=True, timeout=60, preexec_fn=limit, cwd=REPO)
        rc, out, err = p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        rc, out, err = 'TIMEOUT', b'', b''
    dt = time.time() - t0
    probs = []
    if rc not in (0, 2): probs.append(f'exit {rc}')
    if expect == 'refuse' and rc != 2: probs.append('not refused')
    if expect == 'ok' and rc != 0: probs.append('refused')
    if len(err) > 4096: probs.append(f'stderr {len(err)} bytes')
    if b'\x1b' in err or b'\x07' in err: probs.append('raw control char in stderr')
    if b'\x1b' in out[:100000]: probs.append('raw ESC in stdout')
    if b'panicked' in err: probs.append('panic')
    if b'out of memory' in err or b'memory allocation' in err: probs.append('OOM (unbounded)')
    msg = err.decode('utf-8', 'replace').strip().replace('\n', ' | ')[:300]
    status = 'BAD ' if probs else 'ok  '
    bad += bool(probs)
    print(f'{status}{name:18} rc={rc} {dt:5.1f}s {",".join(probs)} :: {msg}')
import shutil
shutil.rmtree(T, ignore_errors=True)
print(f'{bad} bad of {len(cases)}')
sys.exit(1 if bad else 0)
