// Cross-target determinism: every shipped scenario (scenarios/*.toml), its
// base and every variant it declares, at full duration, plus the explosive
// scenarios (tests/explosive/*.toml, partial reports), and each shipped
// scenario's base under kernels 6.6, 6.12 and 6.18 (`--set kernel.version=X` natively,
// the same override in the page's module; equality only, whatever the
// EEVDF model does), bands over tick phases and seeds (`run --phases N
// --seeds K --json` against the module's `bands_json`), and a trace's import (`sim-cli import --replay --json`
// against the module's `import_trace`, then the imported scenario's run), run twice: natively by
// the release `sim-cli run FILE [--variant V] --json`, and as wasm32 by the
// page's own module (web/www/pkg, built by web/build.sh) under Node, through
// the same Explorer start/step/finish calls the page makes. The two JSON
// reports must be equal byte for byte; a difference prints the run, the
// first differing offset (line, column, the JSON key) and the text around it.
//
// Run by web/determinism-test.sh. Needs Node only: no browser, no npm package.
// Prints one line per run, the timings, then
// "test result: ok. N passed; M failed; 0 ignored (wasm32 vs native)".

import { initSync, Explorer, bands_json, import_trace, scenario_files, scenario_text } from '../www/pkg/web.js';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '../..');
// The release sim-cli web/determinism-test.sh built: under CARGO_TARGET_DIR when set (as browser.mjs).
const cli = join(resolve(repo, process.env.CARGO_TARGET_DIR || 'target'), 'release/sim-cli');
/// Events per Explorer.step call: the page's chunks are smaller and adaptive,
/// but the report must not depend on them (tests/it/explosive.rs, web's unit tests).
const CHUNK = 1_000_000;

initSync({ module: readFileSync(join(repo, 'web/www/pkg/web_bg.wasm')) });

const results = [];
function record(name, error) {
  results.push([name, error]);
  console.log(error ? `FAILED - ${name}: ${error}` : `ok - ${name}`);
}

/// The first offset where two byte buffers differ, or -1 if they are equal.
function firstDifference(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

/// The JSON key path of the value at byte `offset` of pretty-printed JSON
/// (from the indentation of the lines above it), array elements by index and
/// by their `comm`, `name` or `path` when they have one:
/// `tasks[3] (reactor/3) › delay › p99_ns`.
function keyPath(text, offset) {
  const lines = text.split('\n');
  const at = text.slice(0, offset).split('\n').length - 1;
  const indentOf = (l) => l.match(/^ */)[0].length;
  const path = [];
  let indent = Infinity;
  for (let i = at; i >= 0; i--) {
    const lead = indentOf(lines[i]);
    if (lead >= indent && i !== at) continue;
    const key = lines[i].match(/^ *"([^"]+)":/);
    if (key) {
      path.unshift(key[1]);
    } else if (/^ +\{$/.test(lines[i]) && i !== at) {
      // An array element: its index among the `{` lines at this indent, and a label.
      let index = 0;
      for (let j = i - 1; j >= 0 && indentOf(lines[j]) >= lead; j--) if (indentOf(lines[j]) === lead && /^ *\{$/.test(lines[j])) index++;
      let label = '';
      for (let j = i + 1; j < lines.length && indentOf(lines[j]) > lead; j++) {
        const m = indentOf(lines[j]) === lead + 2 && lines[j].match(/^ *"(comm|name|path)": "([^"]*)"/);
        if (m && (!label || m[1] === 'comm')) label = m[2];
      }
      path.unshift(`[${index}]${label ? ` (${label})` : ''}`);
    } else if (i !== at) {
      continue;
    }
    indent = lead;
  }
  return path.join(' › ').replace(/ › \[/g, '[') || '(top level)';
}

/// Explains where `wasm` differs from `native` (both Buffers).
function describeDifference(native, wasm) {
  const at = firstDifference(native, wasm);
  const text = native.toString('utf8', 0, Math.min(at, native.length));
  const line = text.split('\n').length;
  const column = at - text.lastIndexOf('\n');
  const around = (buf) => JSON.stringify(buf.toString('utf8', Math.max(0, at - 80), Math.min(buf.length, at + 80)));
  return [
    `reports differ at byte ${at} (line ${line}, column ${column}, key ${keyPath(native.toString('utf8'), at)});`,
    `native ${native.length} bytes, wasm ${wasm.length} bytes`,
    `    native: …${around(native)}…`,
    `    wasm:   …${around(wasm)}…`,
  ].join('\n');
}

function runNative(file, variant, sets = []) {
  const args = ['run', file, ...(variant ? ['--variant', variant] : []), ...sets.flatMap((kv) => ['--set', kv]), '--json'];
  const t0 = process.hrtime.bigint();
  const out = execFileSync(cli, args, { cwd: repo, maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'pipe'] });
  return { bytes: out, ms: Number(process.hrtime.bigint() - t0) / 1e6 };
}

function runWasm(explorer, file, text, variant, overrides = '') {
  const t0 = performance.now();
  const started = JSON.parse(explorer.start(file, text, variant ?? undefined, overrides));
  if (started.error) throw new Error(`the wasm build refused it: ${started.error.text}`);
  let chunks = 0;
  while (explorer.step(CHUNK) < 1) {
    if (++chunks > 1e6) throw new Error('the run did not end');
  }
  const json = explorer.finish();
  return { bytes: Buffer.from(json, 'utf8'), ms: performance.now() - t0, variants: started.ok.variants };
}

// ---- what to run ---------------------------------------------------------------

const tomlFiles = (dir) => readdirSync(join(repo, dir)).filter((f) => f.endsWith('.toml')).sort().map((f) => `${dir}/${f}`);
const shipped = tomlFiles('scenarios');
const explosive = tomlFiles('tests/explosive');

// The page's embedded copies are the files on disk (so the page runs what the CLI runs).
{
  const embedded = scenario_files();
  const same = JSON.stringify(embedded) === JSON.stringify(shipped) && shipped.every((f) => scenario_text(f) === readFileSync(join(repo, f), 'utf8'));
  record(`the wasm module embeds exactly scenarios/*.toml (${shipped.length} files)`, same ? null : `embedded ${JSON.stringify(embedded)}, on disk ${JSON.stringify(shipped)}`);
}

// ---- the comparison catches what it should (a check of the check) ------------

{
  const a = Buffer.from('{\n  "tasks": [\n    {\n      "delay": {\n        "p99_ns": 12345\n      }\n    }\n  ]\n}\n');
  const flipped = Buffer.from(a);
  const at = a.indexOf('3');
  flipped[at] = '4'.charCodeAt(0);
  const d = describeDifference(a, flipped);
  const ok = firstDifference(a, a) === -1 && firstDifference(a, flipped) === at && firstDifference(a, a.subarray(0, a.length - 1)) === a.length - 1 &&
    d.includes(`byte ${at} (line 5, column 21, key tasks[0] › delay › p99_ns)`);
  record('the comparison finds a one-byte change (offset, line, key) and a truncation', ok ? null : d);
}

// ---- the runs ----------------------------------------------------------------

const explorer = new Explorer();
let nativeMs = 0;
let wasmMs = 0;
let runs = 0;
let events = 0;
for (const file of [...shipped, ...explosive]) {
  const text = readFileSync(join(repo, file), 'utf8');
  let variants;
  try {
    variants = JSON.parse(explorer.start(file, text, undefined, '')).ok.variants;
    explorer.cancel();
    // The variants the core lists are the [variants.*] tables of the file.
    const declared = (text.match(/^\[variants\.[^\]]+\]/gm) || []).length;
    if (variants.length !== declared) throw new Error(`the core lists ${variants.length} variants, the file declares ${declared}`);
  } catch (e) {
    record(file, `cannot list its variants: ${e.message}`);
    continue;
  }
  // Each shipped scenario's base under every EEVDF model too: the page's
  // kernel selector sends this override, the CLI's --set the same.
  const eevdf = shipped.includes(file) ? ['6.6', '6.12', '6.18'].map((k) => ({ variant: null, kernel: k })) : [];
  for (const { variant, kernel } of [...[null, ...variants].map((v) => ({ variant: v, kernel: null })), ...eevdf]) {
    const name = `${file} ${variant ? `--variant ${variant}` : '(base)'}${kernel ? ` --set kernel.version=${kernel}` : ''}`;
    try {
      let native;
      try {
        native = runNative(file, variant, kernel ? [`kernel.version=${kernel}`] : []);
      } catch (e) {
        // A base whose devices use an elevator the EEVDF models lack (cfq on
        // cfq-starvation and mixed-rw: removed in 5.0) is refused under them;
        // both builds must refuse it, for the same reason.
        const why = kernel && /does not exist in the Linux [0-9.]+ \(EEVDF\) model/.exec(e.message);
        if (!why) throw e;
        const started = JSON.parse(explorer.start(file, text, undefined, `kernel.version="${kernel}"`));
        explorer.cancel();
        if (!started.error || !started.error.text.includes(why[0])) {
          throw new Error(`native refused it (${why[0]}), the wasm build did not: ${JSON.stringify(started.error ?? 'started')}`);
        }
        record(`${name}: refused by both builds (${why[0]})`, null);
        continue;
      }
      const wasm = runWasm(explorer, file, text, variant, kernel ? `kernel.version="${kernel}"` : '');
      nativeMs += native.ms;
      wasmMs += wasm.ms;
      runs++;
      const report = JSON.parse(native.bytes.toString('utf8'));
      events += report.events;
      if (report.variant !== variant) throw new Error(`native report is for variant ${report.variant}`);
      if (kernel && report.settings.kernel !== kernel) throw new Error(`native report is for kernel ${report.settings.kernel}`);
      if (firstDifference(native.bytes, wasm.bytes) !== -1) throw new Error(describeDifference(native.bytes, wasm.bytes));
      record(`${name}: ${native.bytes.length} bytes equal, ${report.events.toLocaleString('en')} events, ${report.stop_reason} (native ${native.ms.toFixed(0)} ms, wasm ${wasm.ms.toFixed(0)} ms)`, null);
    } catch (e) {
      record(name, e.message);
    }
  }
}

// ---- bands over tick phases and seeds ------------------------------------------

// The same plan gives the same band natively and in wasm32: point 0's report
// with its `bands` object, byte for byte.
for (const [file, sets, phases, seeds] of [
  ['scenarios/validation/02-hog-same-group.toml', ['cfs.base_slice_ns=1400us'], 8, 1],
  ['scenarios/validation/07-poller-5ms-20ms.toml', ['duration=2s'], 4, 3],
  ['scenarios/jmx.toml', ['duration=500ms'], 2, 2],
]) {
  const name = `${file} --phases ${phases} --seeds ${seeds}${sets.map((kv) => ` --set ${kv}`).join('')} (bands)`;
  try {
    const args = ['run', file, ...sets.flatMap((kv) => ['--set', kv]), '--phases', String(phases), '--seeds', String(seeds), '--json'];
    const t0 = process.hrtime.bigint();
    const nBytes = execFileSync(cli, args, { cwd: repo, maxBuffer: 1 << 28, stdio: ['ignore', 'pipe', 'pipe'] });
    const nMs = Number(process.hrtime.bigint() - t0) / 1e6;
    const w0 = performance.now();
    const wBytes = Buffer.from(bands_json(file, readFileSync(join(repo, file), 'utf8'), undefined, sets.join('\n'), phases, seeds), 'utf8');
    const wMs = performance.now() - w0;
    const band = JSON.parse(nBytes.toString('utf8')).bands;
    if (!band || band.points.length !== phases * seeds) throw new Error(`native band has ${band ? band.points.length : 'no'} points`);
    if (firstDifference(nBytes, wBytes) !== -1) throw new Error(describeDifference(nBytes, wBytes));
    record(`${name}: ${nBytes.length} bytes equal, ${band.points.length} points (native ${nMs.toFixed(0)} ms, wasm ${wMs.toFixed(0)} ms)`, null);
  } catch (e) {
    record(name, e.message);
  }
}

// ---- a trace's import ----------------------------------------------------------

{
  // A trace the simulator writes (`run --trace`), imported by both builds
  // under the same name; then the imported scenario run by both.
  const dir = join(tmpdir(), `schedlab-determinism-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const trace = join(dir, 'poller.txt');
  const name = `import of ${trace}`;
  try {
    execFileSync(cli, ['run', 'scenarios/validation/07-poller-5ms-20ms.toml', '--trace', trace, '--set', 'duration=1s'], { cwd: repo, stdio: 'ignore' });
    const t0 = process.hrtime.bigint();
    const native = JSON.parse(execFileSync(cli, ['import', trace, '--replay', '--json'], { cwd: repo, maxBuffer: 1 << 28 }).toString());
    const nMs = Number(process.hrtime.bigint() - t0) / 1e6;
    const w0 = performance.now();
    const wasm = JSON.parse(import_trace(readFileSync(trace, 'utf8'), trace, undefined));
    const wMs = performance.now() - w0;
    const [a, b] = [JSON.stringify(native, null, 2), JSON.stringify({ import: wasm.import, report: wasm.report }, null, 2)];
    if (a !== b) throw new Error(describeDifference(Buffer.from(a), Buffer.from(b)));
    if (!wasm.toml.includes('[[tasks]]')) throw new Error('no [[tasks]] in the imported scenario');
    record(`${name}: ${a.length} bytes of import and report equal, ${native.report.rows.length} declarations (native ${nMs.toFixed(0)} ms, wasm ${wMs.toFixed(0)} ms)`, null);
    const file = join(dir, 'imported.toml');
    writeFileSync(file, wasm.toml);
    const run = runNative(file, null);
    const got = runWasm(explorer, file, wasm.toml, null);
    if (firstDifference(run.bytes, got.bytes) !== -1) throw new Error(describeDifference(run.bytes, got.bytes));
    record(`${name}: the imported scenario's run, ${run.bytes.length} bytes equal`, null);
  } catch (e) {
    record(name, e.message);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const failed = results.filter(([, e]) => e).length;
const passed = results.length - failed;
console.log('');
console.log(`figure: ${runs} runs, ${events.toLocaleString('en')} events: native sim-cli ${(nativeMs / 1000).toFixed(1)} s (whole processes), wasm32 under Node ${process.version} ${(wasmMs / 1000).toFixed(1)} s, wasm/native ${(wasmMs / nativeMs).toFixed(2)}x`);
console.log(`test result: ${failed ? 'FAILED' : 'ok'}. ${passed} passed; ${failed} failed; 0 ignored (wasm32 vs native)`);
process.exit(failed ? 1 : 0);
