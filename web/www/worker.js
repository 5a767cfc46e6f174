// The explorer's simulation thread: a module Web Worker with its own wasm
// instance and Explorer (start/step/finish, as the page used to call them on
// the main thread). The page draws; this runs. Messages:
//
//   in:  {type: 'init', module}            the compiled WebAssembly.Module (compiled once by the page)
//        {type: 'run', id, file, text, variant, overrides, views}
//                                          start run `id` (dropping any other); `views`: send
//                                          previews as views (the page's charts), else as figures
//                                          (a row of the compare table)
//                                          `phases` > 1: after `done`, the band over that many
//                                          tick phases (the run shown is phase 0)
//        {type: 'cancel'}                  drop the run in progress
//        {type: 'import', id, file, victim}  import a trace (a File: perf sched script or ftrace
//                                          text, or the same gzipped), replay it, report
//   out: {type: 'ready'}
//        {type: 'started', id, notes}      the run began; notes: the overrides its kernel model
//                                          lacks, not applied (`cfs.… not in Linux 6.18 (EEVDF): not applied`)
//        {type: 'progress', id, progress, events}            after every chunk
//        {type: 'preview', id, progress, view | figures}     a preview of the run so far
//        {type: 'done', id, json, view, figures, stepMs, runMs}   json: the `sim-cli run --json` bytes
//        {type: 'band-progress', id, progress}   after each tick phase of the band
//        {type: 'band', id, view, points}  the view with the victim's band (`Explorer.load_band`)
//        {type: 'band-error', id, message} the band could not be run
//        {type: 'error', id, error}        the scenario's error ({file, key, origin, message})
//        {type: 'import-progress', id, lines, bytes}   while the trace is read
//        {type: 'imported', id, json}      the import: {toml, import, report, report_text}
//        {type: 'import-error', id, message}   why the trace cannot be imported (names the line)
//
// A newer run (or a cancel) supersedes the one in progress at its next chunk
// boundary: chunks last about CHUNK_MS, so that is how late a cancel can be.

import init, { Explorer, TraceImport } from './pkg/web.js';

/// Wall-clock time one chunk of events may take before the worker looks at its messages.
const CHUNK_MS = 25;
/// The first preview after this long, then every PREVIEW_EVERY_MS (each costs a report).
const PREVIEW_MS = 150;
const PREVIEW_EVERY_MS = 500;

let explorer = null;
let current = 0; // the id of the run to work on; 0: none
const pending = [];

const nextTask = () => new Promise((resolve) => {
  const ch = new MessageChannel();
  ch.port1.onmessage = () => resolve();
  ch.port2.postMessage(null);
});

async function run(m) {
  const { id } = m;
  const started = JSON.parse(explorer.start(m.file, m.text, m.variant || undefined, m.overrides));
  if (started.error) {
    postMessage({ type: 'error', id, error: started.error });
    return;
  }
  postMessage({ type: 'started', id, notes: started.ok.notes ?? [] });
  const runStart = performance.now();
  let budget = 20000;
  let stepMs = 0;
  let lastPreview = runStart;
  let previews = 0;
  for (;;) {
    const c0 = performance.now();
    const progress = explorer.step(budget);
    const spent = performance.now() - c0;
    stepMs += spent;
    budget = Math.max(1000, Math.min(5_000_000, Math.round(budget * CHUNK_MS / Math.max(spent, 0.5))));
    if (progress < 0) return; // cancelled
    if (progress >= 1) break;
    postMessage({ type: 'progress', id, progress, events: explorer.events() });
    if (performance.now() - lastPreview >= (previews ? PREVIEW_EVERY_MS : PREVIEW_MS) && explorer.preview()) {
      postMessage(m.views
        ? { type: 'preview', id, progress, view: explorer.view() }
        : { type: 'preview', id, progress, figures: explorer.figures() });
      previews++;
      lastPreview = performance.now();
    }
    await nextTask();
    if (id !== current) return; // superseded or cancelled
  }
  const json = explorer.finish();
  const runMs = performance.now() - runStart;
  postMessage({
    type: 'done', id, json, view: m.views ? explorer.view() : null, figures: explorer.figures(), stepMs, runMs,
  });
  if (m.views && (m.phases ?? 1) > 1) await band(id, m.phases);
}

/// The band of the run just finished over `phases` tick phases: one phase
/// per step, looking at messages between them, so a newer run supersedes it.
async function band(id, phases) {
  let points;
  try {
    points = explorer.band_start(phases);
  } catch (e) {
    postMessage({ type: 'band-error', id, message: e.message ?? String(e) });
    return;
  }
  if (points <= 1) return;
  for (;;) {
    await nextTask();
    if (id !== current) return; // superseded or cancelled
    const progress = explorer.band_step();
    if (progress < 0) {
      postMessage({ type: 'band-error', id, message: 'the band could not be run' });
      return;
    }
    if (progress >= 1) break;
    postMessage({ type: 'band-progress', id, progress });
  }
  postMessage({ type: 'band', id, view: explorer.view(), points });
}

/// Imports a trace file in chunks as it is read (and gunzipped when it
/// starts with gzip's magic 1f 8b): memory follows the trace's threads, not
/// its length. Then the replay and the report (TraceImport.finish).
async function importTrace(m) {
  const { id, file } = m;
  const head = new Uint8Array(await file.slice(0, 2).arrayBuffer());
  let stream = file.stream();
  if (head[0] === 0x1f && head[1] === 0x8b) stream = stream.pipeThrough(new DecompressionStream('gzip'));
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  const im = new TraceImport(file.name, m.victim || undefined);
  try {
    let bytes = 0;
    let last = performance.now();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      im.push(value);
      bytes += value.length;
      if (performance.now() - last > 100) {
        postMessage({ type: 'import-progress', id, lines: im.lines(), bytes });
        last = performance.now();
      }
    }
    postMessage({ type: 'import-progress', id, lines: im.lines(), bytes, replay: true });
    postMessage({ type: 'imported', id, json: im.finish() });
  } catch (e) {
    reader.cancel().catch(() => {});
    // A JsError's message names the line; a stream's error says the gzip is corrupt.
    const why = e instanceof TypeError ? `${file.name}: the file cannot be read (${e.message}; a corrupt or truncated gzip stream?)` : e.message ?? String(e);
    postMessage({ type: 'import-error', id, message: why });
  } finally {
    im.free();
  }
}

async function handle(m) {
  if (m.type === 'init') {
    await init({ module_or_path: m.module });
    explorer = new Explorer();
    postMessage({ type: 'ready' });
    for (const p of pending.splice(0)) handle(p);
  } else if (!explorer) {
    pending.push(m);
  } else if (m.type === 'run') {
    current = m.id;
    try {
      await run(m);
    } catch (e) {
      // A panic in the module: the page shows it instead of waiting forever.
      postMessage({ type: 'error', id: m.id, error: { file: '', origin: 'file', key: '', message: `the simulation failed: ${e}` } });
    }
  } else if (m.type === 'import') {
    await importTrace(m);
  } else if (m.type === 'cancel') {
    current = 0;
    explorer.cancel();
  }
}

onmessage = (e) => {
  handle(e.data);
};
