// The explorer page: UI state only. Parsing, overrides, the simulation, the
// reports, the baseline and the charts all live in the wasm module (the
// `web` crate over sim-core); this file wires controls to override keys,
// hands runs to Web Workers (worker.js: the simulation, in chunks, with
// previews), draws the views they send back, and keeps the URL in sync.
// A dropped trace is imported in the runner worker too (read, gunzipped,
// imported, replayed there); its scenario becomes the page's edited text.

import init, { Explorer, edited_name, scenario_files, scenario_text } from './pkg/web.js';

const $ = (id) => document.getElementById(id);
const CUSTOM = 'custom.toml';
const WASM = './pkg/web_bg.wasm';

const ui = {
  file: 'scenarios/jmx.toml',
  text: '',
  basedOn: '', // the shipped file an edited text started from, if known
  variant: '',
  overrides: new Map(), // key -> override text, in insertion order
  description: null,
  runId: 0,
  changedAt: null, // performance.now() of the change being run
  controlKey: null, // the control changed last (its errors show by it), until the override box is edited
  occupancyRows: 1, // CPU rows of the occupancy chart (its canvas height)
};

let explorer;
/// The compiled module, shared by the page and every worker (compiled once).
let wasmModule;
/// The worker that runs the page's runs (one at a time; a newer run supersedes).
let runner;
// Figures the browser test reads (and anyone curious, from the console).
// compareJobs: the compare pool's size (default: the CPUs, at most the runs).
window.schedlab = { imports: 0, import: null, runs: 0, lastRunMs: null, lastChartMs: null, lastLatencyMs: null, firstChartMs: null, report: null, events: 0, compares: 0, compare: null, compareJobs: null, band: null };

/// A simulation worker, initialised with the page's compiled module.
/// `onmessage` gets every message after `ready`.
function spawnWorker(onmessage) {
  const w = new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
  w.onmessage = (e) => onmessage(e.data);
  w.onerror = (e) => onmessage({ type: 'error', id: null, error: { file: '', origin: 'file', key: '', message: `the simulation worker failed: ${e.message}` } });
  w.postMessage({ type: 'init', module: wasmModule });
  return w;
}

function formatNs(ns) {
  if (ns >= 1e9) return `${+(ns / 1e9).toPrecision(3)} s`;
  if (ns >= 1e6) return `${+(ns / 1e6).toPrecision(3)} ms`;
  if (ns >= 1e3) return `${+(ns / 1e3).toPrecision(3)} µs`;
  return `${ns} ns`;
}

/// A duration as an override value the core parses (`"6ms"`, `"750us"`).
function nsText(ns) {
  if (ns % 1e6 === 0) return `"${ns / 1e6}ms"`;
  if (ns % 1e3 === 0) return `"${ns / 1e3}us"`;
  return `"${ns}ns"`;
}

/// Three significant digits: slider positions map to round values.
function roundNs(x) {
  const p = Math.pow(10, Math.floor(Math.log10(x)) - 2);
  return Math.round(x / p) * p;
}

function overridesText() {
  return [...ui.overrides].map(([k, v]) => `${k}=${v}`).join('\n');
}

function syncUrl() {
  const q = new URLSearchParams();
  q.set('scenario', ui.file);
  if (ui.variant) q.set('variant', ui.variant);
  for (const [k, v] of ui.overrides) q.append('set', `${k}=${v}`);
  let hash = '';
  if (ui.file === CUSTOM) {
    hash = '#toml=' + btoa(String.fromCharCode(...new TextEncoder().encode(ui.text)));
  }
  history.replaceState(null, '', `?${q}${hash}`);
  if (!$('share-box').hidden) $('share-url').value = location.href;
  const sets = [...ui.overrides].map(([k, v]) => ` --set '${k}=${v}'`).join('');
  $('cli').textContent = `sim-cli run ${ui.file === CUSTOM ? 'custom.toml' : ui.file}${ui.variant ? ` --variant ${ui.variant}` : ''}${sets}`;
  $('overrides').value = overridesText();
}

function readUrl() {
  const q = new URLSearchParams(location.search);
  const files = scenario_files();
  const file = q.get('scenario');
  if (file === CUSTOM && location.hash.startsWith('#toml=')) {
    const bytes = Uint8Array.from(atob(location.hash.slice(6)), (c) => c.charCodeAt(0));
    ui.file = CUSTOM;
    ui.text = new TextDecoder().decode(bytes);
  } else {
    ui.file = files.includes(file) ? file : 'scenarios/jmx.toml';
    ui.text = scenario_text(ui.file);
  }
  ui.variant = q.get('variant') || '';
  ui.overrides = new Map();
  for (const kv of q.getAll('set')) {
    const i = kv.indexOf('=');
    if (i > 0) ui.overrides.set(kv.slice(0, i), kv.slice(i + 1));
  }
}

/// What the page calls the scenario: the shipped file, or an edited text by
/// its `name` (`jmx (edited)`, or `edited scenario (based on …)`).
function scenarioName() {
  return ui.file === CUSTOM ? edited_name(ui.text, ui.basedOn) : ui.file;
}

/// The field an error comes from, which the error box is shown under: the
/// override box, the TOML editor (an edited scenario) or the variant.
/// The row of the control an error belongs to: the control with the
/// error's key, else the control changed last (a topology that no longer
/// multiplies to cpus is the core's error on machine.cpus).
function controlField(err) {
  if (err.origin !== 'override' || !ui.controlKey) return null;
  const input = document.querySelector(`#controls [data-key="${CSS.escape(err.key)}"]`)
    ?? document.querySelector(`#controls [data-key="${CSS.escape(ui.controlKey)}"]`);
  return input?.closest('.control') ?? null;
}

function errorField(err) {
  const control = controlField(err);
  if (control) return control;
  if (err.origin === 'override') return $('overrides');
  if (ui.file === CUSTOM) {
    $('edit').open = true;
    return $('run-toml');
  }
  if (err.origin?.startsWith('variant')) return $('variant').closest('.row');
  return null;
}

function showError(err) {
  const box = $('error');
  for (const f of document.querySelectorAll('[aria-invalid]')) f.removeAttribute('aria-invalid');
  if (!err) {
    box.hidden = true;
    box.textContent = '';
    // Out of the controls, which are rebuilt on every run.
    if (box.closest('#controls')) $('edit').after(box);
    return;
  }
  // Next to the field that caused it, so the message and the fix are in view together.
  const field = errorField(err) ?? $('edit');
  if (box.previousElementSibling !== field) field.after(box);
  const input = field.classList.contains('control') ? field.querySelector('[data-key]')
    : err.origin === 'override' ? $('overrides') : ui.file === CUSTOM ? $('toml') : null;
  input?.setAttribute('aria-invalid', 'true');
  input?.setAttribute('aria-describedby', 'error');
  box.hidden = false;
  box.replaceChildren();
  const h = document.createElement('strong');
  const fix = field.classList.contains('control') ? 'change the setting above'
    : err.origin === 'override' ? 'fix the override above'
    : ui.file === CUSTOM ? 'fix the text above and run it again'
      : err.origin?.startsWith('variant') ? 'choose another variant' : 'pick another scenario';
  h.textContent = err.file ? `${err.file} was not run (${fix}): ` : 'Not run: ';
  const where = document.createElement('span');
  where.className = 'where';
  where.textContent = [err.origin !== 'file' ? err.origin : '', err.key].filter(Boolean).join(' › ');
  const msg = document.createElement('span');
  msg.className = 'message';
  msg.textContent = err.message;
  box.append(h, where);
  if (where.textContent) box.append(document.createTextNode(': '));
  box.append(msg);
  box.scrollIntoView({ block: 'nearest' });
}

/// Says why the report shown is partial (its event budget ran out, or time
/// stalled): the core's words, the CLI's warning line.
function showNotice(text) {
  const box = $('notice');
  box.hidden = !text;
  box.replaceChildren();
  if (!text) return;
  const h = document.createElement('strong');
  h.textContent = 'Stopped early: ';
  box.append(h, document.createTextNode(text));
}

/// The overrides this run goes without (the variant's kernel model lacks
/// them), in the wasm side's words; hidden when it has every one.
function showNotes(notes) {
  const box = $('notes');
  box.hidden = !notes?.length;
  box.textContent = notes?.length ? `This variant runs without: ${notes.join('; ')}.` : '';
}

function setState(state, status) {
  document.body.dataset.state = state;
  $('status').textContent = status;
  $('cancel').disabled = state !== 'running';
  $('pin').disabled = state !== 'done';
}

// ---- controls -------------------------------------------------------------

function controlRow(c) {
  const row = document.createElement('div');
  row.className = 'control';
  const id = `ctl-${c.key.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  const label = document.createElement('label');
  label.htmlFor = id;
  label.textContent = c.label;
  if (c.help) label.title = c.help;
  let input;
  const out = document.createElement('output');
  out.htmlFor = id;
  const changed = c.value !== c.default;
  // A log slider's position as ns; with `c.zero` (what 0 means, e.g. "0 (off)")
  // one position left of the range stands for 0.
  const lowest = Math.round(Math.log10(c.min) * 100);
  const zeroAt = c.zero ? lowest - 1 : null;
  const sliderNs = () => (Number(input.value) === zeroAt ? 0 : roundNs(Math.pow(10, input.value / 100)));
  if (c.kind === 'log-ns') {
    input = document.createElement('input');
    input.type = 'range';
    input.min = zeroAt ?? lowest;
    input.max = Math.round(Math.log10(c.max) * 100);
    input.step = 1;
    input.value = c.value === 0 && zeroAt !== null ? zeroAt : Math.round(Math.log10(Math.max(c.value, c.min)) * 100);
    const show = (ns) => {
      const text = ns === 0 && c.zero ? c.zero : formatNs(ns);
      out.textContent = text;
      input.setAttribute('aria-valuetext', `${c.label} ${text}`);
    };
    show(c.value);
    input.addEventListener('input', () => show(sliderNs()));
    input.dataset.encode = 'log-ns';
  } else if (c.kind === 'bool') {
    input = document.createElement('input');
    input.type = 'checkbox';
    input.checked = c.value;
    row.classList.add('bool');
  } else if (c.kind === 'text') {
    input = document.createElement('input');
    input.type = 'text';
    input.value = c.value;
    input.placeholder = c.placeholder ?? '';
    input.spellcheck = false;
    input.size = 10;
  } else if (c.kind === 'select') {
    input = document.createElement('select');
    for (const o of c.options) {
      const opt = document.createElement('option');
      opt.value = o.value;
      opt.textContent = o.label;
      input.append(opt);
    }
    input.value = c.value;
  } else {
    input = document.createElement('input');
    input.type = 'number';
    input.min = c.min;
    input.max = c.max;
    input.step = 1;
    input.value = c.value;
    if (c.unit) out.textContent = c.unit;
  }
  input.id = id;
  input.dataset.key = c.key;
  // A setting the current choices leave without meaning (an RT priority of a fair task).
  input.disabled = Boolean(c.disabled);
  if (changed) row.classList.add('changed');
  const apply = () => {
    let text;
    if (c.kind === 'log-ns') {
      const ns = sliderNs();
      text = ns === c.default ? null : nsText(ns);
    } else if (c.kind === 'bool') {
      text = input.checked === c.default ? null : String(input.checked);
    } else if (c.kind === 'select') {
      text = input.value === c.default ? null : input.value;
    } else if (c.kind === 'text') {
      // A TOML string (JSON's quoting is TOML's for a CPU list).
      const v = input.value.trim();
      text = v === c.default ? null : JSON.stringify(v);
    } else {
      const v = input.value.trim();
      text = v === '' || Number(v) === c.default ? null : v;
    }
    if (text === null) ui.overrides.delete(c.key);
    else ui.overrides.set(c.key, text);
    // The overrides an option brings along or drops (a policy's RT priority
    // or deadline parameters), as the wasm side lists them.
    if (c.kind === 'select') {
      for (const [k, v] of c.options.find((o) => o.value === input.value)?.also ?? []) {
        if (v === null) ui.overrides.delete(k);
        else ui.overrides.set(k, v);
      }
    }
    // Another kernel: the tunables and features of the model left go (a CFS
    // knob is refused on 6.x); the core describes the new model's controls.
    if (c.switches_model) {
      for (const o of ui.description?.controls ?? []) if (o.model_specific) ui.overrides.delete(o.key);
    }
    ui.controlKey = c.key;
    rerun();
  };
  // Arrow keys, clicks and `change` run at once; a drag reruns after a pause.
  let timer;
  input.addEventListener('change', () => {
    clearTimeout(timer);
    ui.changedAt = performance.now();
    apply();
  });
  if (c.kind === 'log-ns') {
    input.addEventListener('input', () => {
      clearTimeout(timer);
      const at = performance.now();
      timer = setTimeout(() => {
        ui.changedAt = at;
        apply();
      }, 150);
    });
  }
  row.append(label, input, out);
  return row;
}

function renderControls(d) {
  const root = $('controls');
  // Controls are rebuilt from each run's description: keep keyboard focus on the same setting.
  const focused = document.activeElement?.dataset?.key;
  root.replaceChildren();
  const sections = new Map();
  for (const c of d.controls) {
    if (!sections.has(c.section)) {
      const fs = document.createElement('fieldset');
      const lg = document.createElement('legend');
      lg.textContent = c.section;
      fs.append(lg);
      sections.set(c.section, fs);
      root.append(fs);
    }
    sections.get(c.section).append(controlRow(c));
  }
  const v = $('variant');
  v.replaceChildren();
  for (const name of ['', ...d.variants]) {
    const o = document.createElement('option');
    o.value = name;
    o.textContent = name || '(base)';
    v.append(o);
  }
  v.value = ui.variant;
  if (focused) root.querySelector(`[data-key="${CSS.escape(focused)}"]`)?.focus();
  $('description').textContent = d.description ? `${d.name}: ${d.description}` : d.name;
}

// ---- runs -----------------------------------------------------------------

/// The run in progress: its id and what to do with its worker's messages.
let active = null;

function onRunnerMessage(m) {
  if (m.type === 'ready') return;
  if (m.type.startsWith('import')) {
    if (importing && m.id === importing.id) importing.handle(m);
    return;
  }
  if (m.type.startsWith('band')) {
    if (m.id === ui.runId) onBand(m);
    return;
  }
  if (active && (m.id === active.id || m.id === null)) active.handle(m);
}

/// The band over tick phases of the run shown (the worker's `band` after
/// `done`): shaded on the percentile chart, with a caption saying what it is.
function onBand(m) {
  const cap = $('band-caption');
  if (m.type === 'band-progress') {
    cap.hidden = false;
    cap.textContent = `Running the other tick phases for the band… ${(m.progress * 100).toFixed(0)}%`;
  } else if (m.type === 'band-error') {
    cap.hidden = false;
    cap.textContent = `No band: ${m.message}`;
  } else if (m.type === 'band' && explorer.load_band(m.view)) {
    cap.hidden = false;
    cap.textContent = explorer.band_caption();
    const drawn = (() => {
      try {
        explorer.draw_cdf('chart-cdf');
        return true;
      } catch (e) {
        return false;
      }
    })();
    window.schedlab.band = { points: explorer.band_points(), caption: explorer.band_caption(), view: JSON.parse(m.view).band, drawn };
  }
}

/// Runs the current state in the worker: resolves once the run is drawn,
/// has failed, or was superseded or cancelled.
async function rerun() {
  const id = ++ui.runId;
  // The run this one supersedes settles now (the worker drops it at its next chunk).
  active?.resolve(null);
  active = null;
  const t0 = ui.changedAt ?? performance.now();
  ui.changedAt = null;
  syncUrl();
  cancelCompare();
  const started = JSON.parse(explorer.prepare(scenarioName(), ui.text, ui.variant || undefined, overridesText()));
  // A run of another scenario drops the pinned baseline (see Explorer::start).
  $('unpin').disabled = !explorer.has_baseline();
  if (started.error) {
    runner.postMessage({ type: 'cancel' });
    active = null;
    showError(started.error);
    setState('error', 'not run: see the error by the field at fault');
    return;
  }
  showError(null);
  showNotice(null);
  showNotes(started.ok.notes);
  window.schedlab.band = null;
  $('band-caption').hidden = true;
  ui.description = started.ok;
  renderControls(started.ok);
  $('compare').disabled = false;
  setState('running', 'running…');
  // A new run starts its bar from zero, not at the last run's 100 %.
  $('progress').value = 0;
  const runStart = performance.now();
  let firstChart = null;
  const done = await new Promise((resolve) => {
    active = {
      id,
      resolve,
      handle(m) {
        if (m.type === 'progress') {
          $('progress').value = m.progress;
          $('status').textContent = `running… ${(m.progress * 100).toFixed(0)}%`;
        } else if (m.type === 'preview') {
          if (explorer.load_view(m.view)) {
            // The live region announces finished runs only; the preview's figures go in the status line.
            $('status').textContent = `running… ${(m.progress * 100).toFixed(0)}%. ${explorer.summary()}`;
            drawAll().then((drawn) => {
              if (drawn && id === ui.runId) firstChart ??= performance.now() - t0;
            });
          }
        } else if (m.type === 'done') {
          active = null;
          resolve(m);
        } else if (m.type === 'error') {
          active = null;
          showError(m.error);
          setState('error', 'not run: see the error by the field at fault');
          resolve(null);
        }
      },
    };
    runner.postMessage({
      type: 'run', id, file: scenarioName(), text: ui.text, variant: ui.variant, overrides: overridesText(), views: true,
      phases: Number($('phases').value),
    });
  });
  if (!done || id !== ui.runId) return;
  $('progress').value = 1;
  const json = done.json;
  explorer.load_view(done.view);
  const runMs = performance.now() - runStart;
  const stepMs = done.stepMs;
  const c0 = performance.now();
  await drawAll();
  if (id !== ui.runId) return;
  const chartMs = performance.now() - c0;
  const report = JSON.parse(json);
  Object.assign(window.schedlab, {
    runs: window.schedlab.runs + 1,
    lastRunMs: runMs,
    lastStepMs: stepMs,
    lastChartMs: chartMs,
    lastLatencyMs: performance.now() - t0,
    firstChartMs: firstChart ?? performance.now() - t0,
    report: json,
    events: report.events,
  });
  $('report-json').textContent = json;
  const dl = $('download');
  URL.revokeObjectURL(dl.href);
  dl.href = URL.createObjectURL(new Blob([json], { type: 'application/json' }));
  $('summary').textContent = explorer.summary();
  const s = window.schedlab;
  $('timing').textContent = `${report.events.toLocaleString('en')} events simulated in ${runMs.toFixed(0)} ms (wasm), charts drawn in ${chartMs.toFixed(0)} ms; change to first chart ${s.firstChartMs.toFixed(0)} ms, to final chart ${s.lastLatencyMs.toFixed(0)} ms.`;
  const notice = explorer.notice();
  showNotice(notice);
  setState('done', notice
    ? `stopped early: ${formatNs(report.sim_time_ns)} of ${formatNs(report.settings.duration_ns)} simulated (${report.stop_reason}); the report is partial`
    : `done: ${formatNs(report.sim_time_ns)} simulated (${report.stop_reason})`);
}

// ---- trace import -------------------------------------------------------------

/// The import in progress: its id and what to do with the worker's messages.
let importing = null;
let imports = 0;

/// The import report: per imported declaration, the trace's delays beside
/// the replay's (the table `sim-cli import --replay` prints).
function renderImport(name, r) {
  const im = r.import;
  const hz = `HZ ${im.hz} (${im.hz_inferred ? 'from the trace' : 'assumed; see the notes'})`;
  $('import-status').textContent = `${name}: ${im.lines.toLocaleString('en')} lines, ${im.records.toLocaleString('en')} scheduler records over ${formatNs(im.window_ns)}, ${im.tasks.length} declarations. Model: Linux ${im.kernel}, ${im.cpus} CPUs, ${hz}${im.victim ? `; victim ${im.victim}` : ''}. The scenario is in the editor below; the settings now act on it.`;
  const f = (d, k) => (d.count ? formatNs(d[k]) : '-');
  table($('table-import'), ['task', 'threads', 'trace n', 'p50', 'p99', 'max', 'replay n', 'p50', 'p99', 'max'],
    r.report.rows.map((x) => [x.name, x.background ? 'background' : x.threads, x.trace.count, f(x.trace, 'p50_ns'), f(x.trace, 'p99_ns'), f(x.trace, 'max_ns'),
      x.replay.count, f(x.replay, 'p50_ns'), f(x.replay, 'p99_ns'), f(x.replay, 'max_ns')]));
  const notes = $('import-notes');
  notes.replaceChildren();
  for (const n of im.notes) {
    const li = document.createElement('li');
    li.textContent = n;
    notes.append(li);
  }
}

/// Imports a trace file (perf sched script or ftrace text, or the same
/// gzipped) in the runner worker: it reads the file in chunks, imports,
/// replays and reports. The scenario it built then becomes the page's
/// edited text and runs, so every control acts on the user's workload.
async function importTrace(file) {
  if (!file) return;
  // The run in progress gives way (the worker drops it at its next chunk).
  ui.runId++;
  runner.postMessage({ type: 'cancel' });
  active?.resolve(null);
  active = null;
  cancelCompare();
  const id = ++imports;
  const box = $('import-box');
  box.hidden = false;
  box.classList.remove('failed');
  $('table-import').replaceChildren();
  $('import-notes').replaceChildren();
  $('import-status').textContent = `Importing ${file.name} (${(file.size / 1e6).toFixed(1)} MB)…`;
  setState('importing', `importing ${file.name}…`);
  const m = await new Promise((resolve) => {
    importing = {
      id,
      handle(msg) {
        if (msg.type === 'import-progress') {
          $('status').textContent = msg.replay
            ? `importing ${file.name}: ${msg.lines.toLocaleString('en')} lines read; replaying the scenario…`
            : `importing ${file.name}: ${msg.lines.toLocaleString('en')} lines read…`;
        } else {
          resolve(msg);
        }
      },
    };
    runner.postMessage({ type: 'import', id, file, victim: $('import-victim').value.trim() });
  });
  if (importing?.id !== id) return;
  importing = null;
  if (m.type === 'import-error') {
    box.classList.add('failed');
    $('import-status').textContent = `Not imported: ${m.message}`;
    setState('error', 'not imported: see the message under the import');
    return;
  }
  const r = JSON.parse(m.json);
  renderImport(file.name, r);
  window.schedlab.import = r;
  window.schedlab.imports++;
  ui.file = CUSTOM;
  ui.basedOn = file.name;
  ui.text = r.toml;
  ui.variant = '';
  ui.overrides = new Map();
  ui.controlKey = null;
  $('toml').value = r.toml;
  $('scenario').value = CUSTOM;
  $('edit').open = true;
  ui.changedAt = performance.now();
  await rerun();
}

// ---- compare ----------------------------------------------------------------

/// The compare in progress: its workers (terminated when it ends or is cancelled).
let comparePool = null;

/// Stops a compare in progress (the settings it ran with changed).
function cancelCompare() {
  if (!comparePool) return;
  comparePool.cancelled = true;
  for (const w of comparePool.workers) w.terminate();
  comparePool = null;
  $('compare-status').textContent = 'Compare cancelled: the settings changed.';
}

/// One row per run: its kernel model, the victim's delay percentiles, and
/// (when some run has them) the overrides its model lacks, which that run
/// went without (the wasm side's notes, e.g. a 4.4 CFS slider on a 6.18 variant).
function renderCompare(rows) {
  const cell = (r, k) => (r.delay ? formatNs(r.delay[k]) : '-');
  const notes = rows.some((r) => r.notes.length > 0);
  table($('table-compare'), ['variant', 'kernel', 'victim delay p50', 'p99', 'p99.9', 'max', 'events', ...(notes ? ['notes'] : []), 'progress'],
    rows.map((r) => [r.label, r.model ?? '-', cell(r, 'p50_ns'), cell(r, 'p99_ns'), cell(r, 'p999_ns'), cell(r, 'max_ns'),
      r.events.toLocaleString('en'), ...(notes ? [r.notes.join('; ')] : []),
      r.error ? `error: ${r.error}` : r.done ? 'done' : `${(r.progress * 100).toFixed(0)}%`]));
  // Figures stay on one line; a note wraps.
  if (notes) for (const tr of $('table-compare').tBodies[0].rows) tr.cells[7].className = 'note';
}

/// "Compare variants": the base and each variant of the current scenario,
/// with the current overrides (as `sim-cli compare --set …`), in a pool of
/// workers (as many as the CPUs, at most one per run). Each row fills in as
/// its run progresses (events every chunk, delay figures at each preview)
/// and ends with the run's figures.
async function compare() {
  cancelCompare();
  const d = ui.description;
  if (!d) return;
  const runs = [{ label: '(base)', variant: '' }, ...d.variants.map((v) => ({ label: v, variant: v }))];
  const rows = runs.map((r) => ({ label: r.label, variant: r.variant, model: null, notes: [], delay: null, events: 0, progress: 0, done: false, error: null, stepMs: 0, updates: 0 }));
  const cpus = navigator.hardwareConcurrency || 1;
  const jobs = Math.max(1, Math.min(window.schedlab.compareJobs ?? cpus, runs.length));
  const pool = { workers: [], cancelled: false };
  comparePool = pool;
  $('compare-box').hidden = false;
  renderCompare(rows);
  const status = $('compare-status');
  status.textContent = `Comparing ${runs.length} runs in ${jobs} worker${jobs > 1 ? 's' : ''}…`;
  const [file, text, overrides] = [scenarioName(), ui.text, overridesText()];
  const t0 = performance.now();
  let next = 0;
  let finished = 0;
  await new Promise((resolve) => {
    const startNext = (w) => {
      if (next >= runs.length) return;
      const i = next++;
      w.job = i;
      w.postMessage({ type: 'run', id: i + 1, file, text, variant: runs[i].variant, overrides, views: false });
    };
    for (let k = 0; k < jobs; k++) {
      const w = spawnWorker((m) => {
        if (pool.cancelled || m.type === 'ready') return;
        const r = rows[m.id ? m.id - 1 : w.job];
        if (m.type === 'started') {
          r.notes = m.notes;
        } else if (m.type === 'progress') {
          r.updates++;
          Object.assign(r, { progress: m.progress, events: m.events });
        } else if (m.type === 'preview') {
          const f = JSON.parse(m.figures);
          Object.assign(r, { progress: m.progress, events: f.events, delay: f.delay, model: f.model });
        } else if (m.type === 'done' || m.type === 'error') {
          if (m.type === 'done') {
            const f = JSON.parse(m.figures);
            Object.assign(r, { progress: 1, events: f.events, delay: f.delay, model: f.model, done: true, stepMs: m.stepMs });
          } else {
            r.error = `${m.error.key ? `${m.error.key}: ` : ''}${m.error.message}`;
          }
          finished++;
          if (finished === runs.length) resolve();
          else startNext(w);
        }
        renderCompare(rows);
      });
      pool.workers.push(w);
      startNext(w);
    }
  });
  if (pool.cancelled) return;
  const wallMs = performance.now() - t0;
  for (const w of pool.workers) w.terminate();
  comparePool = null;
  const sum = rows.reduce((n, r) => n + r.stepMs, 0);
  status.textContent = `${runs.length} runs in ${(wallMs / 1000).toFixed(2)} s with ${jobs} worker${jobs > 1 ? 's' : ''} (simulation alone: ${(sum / 1000).toFixed(2)} s in all).`;
  window.schedlab.compare = { jobs, wallMs, rows: rows.map(({ label, variant, model, notes, delay, events, error, stepMs, updates }) => ({ label, variant, model, notes, delay, events, error, stepMs, updates })) };
  window.schedlab.compares++;
}

/// Gives each chart canvas as many pixels as it shows: the column's width in
/// CSS pixels, times devicePixelRatio. The wasm side draws in CSS pixels
/// (lib.rs `canvas`), so chart text keeps its size on a phone. The timeline
/// needs 640 px to lay out its rows; narrower, it is scaled down to fit.
function fitCanvases() {
  const column = $('fig-hist').clientWidth;
  if (!column) return false;
  const dpr = window.devicePixelRatio || 1;
  let changed = false;
  for (const c of document.querySelectorAll('#results canvas')) {
    const timeline = c.id === 'chart-timeline';
    const css = Math.max(timeline ? 640 : 300, Math.min(column, 1200)) - 2; // less the 1 px border
    // The occupancy chart: 30 px per CPU row for the first 8, 12 px for more (up to 1000 px).
    const rows = ui.occupancyRows;
    const cssH = timeline ? 520 : c.id === 'chart-limiter' ? 460 : c.id === 'chart-occupancy'
      ? Math.min(1000, 140 + 30 * Math.min(rows, 8) + 12 * Math.max(0, rows - 8))
      : Math.round(Math.max(260, Math.min(420, css * 0.42)));
    const w = Math.round(css * dpr);
    const h = Math.round(cssH * dpr);
    if (c.width !== w || c.height !== h) {
      c.width = w;
      c.height = h;
      changed = true;
    }
    c.style.width = `${Math.min(css, column - 2) + 2}px`;
  }
  return changed;
}

const nextTask = () => new Promise((resolve) => {
  const ch = new MessageChannel();
  ch.port1.onmessage = () => resolve();
  ch.port2.postMessage(null);
});

let drawGeneration = 0;

/// Drawing time after which drawAll yields to input before the next chart.
const DRAW_SLICE_MS = 8;

/// Draws every chart and table of the current report, yielding between
/// charts once a task has drawn for DRAW_SLICE_MS (and before the first): each chart takes a few
/// ms to ~20 ms (the occupancy heat map of 32 CPUs the most), all together
/// up to ~50 ms, so input waits for one or two charts at most. A newer
/// drawAll supersedes one still under way; resolves to false then.
async function drawAll() {
  const gen = ++drawGeneration;
  let tables;
  const steps = [
    () => {
      tables = JSON.parse(explorer.tables());
      ui.occupancyRows = tables.occupancy?.rows ?? 1;
      fitCanvases();
    },
    () => explorer.draw_histogram('chart-hist'),
    () => explorer.draw_cdf('chart-cdf'),
    () => {
      $('chart-timeline').closest('figure').hidden = !explorer.draw_timeline('chart-timeline');
    },
    () => {
      $('fig-q2d').hidden = !explorer.draw_q2d('chart-q2d');
    },
    () => {
      $('fig-occupancy').hidden = !explorer.draw_occupancy('chart-occupancy');
    },
    () => {
      $('fig-limiter').hidden = !explorer.draw_limiter('chart-limiter');
    },
    () => renderTables(tables),
  ];
  // Not in the caller's task (which loaded the view, or rebuilt the controls).
  let slice = -Infinity;
  for (const step of steps) {
    // A chart more in this task while it stays short; else yield first.
    if (performance.now() - slice > DRAW_SLICE_MS) {
      await nextTask();
      if (gen !== drawGeneration) return false;
      slice = performance.now();
    }
    step();
  }
  return true;
}

function table(el, head, rows) {
  el.replaceChildren();
  const thead = el.createTHead().insertRow();
  for (const h of head) {
    const th = document.createElement('th');
    th.scope = 'col';
    th.textContent = h;
    thead.append(th);
  }
  const body = el.createTBody();
  for (const r of rows) {
    const tr = body.insertRow();
    for (const c of r) tr.insertCell().textContent = c;
  }
}

/// The timeline chart's colour key as HTML (canvas pixels are invisible to
/// assistive technology): one swatch per task colour and state glyph.
function renderTimelineKey(tl) {
  const key = $('key-timeline');
  key.replaceChildren();
  key.hidden = !tl;
  if (!tl) return;
  for (const k of tl.key) {
    const li = document.createElement('li');
    const sw = document.createElement('span');
    sw.className = `swatch ${k.glyph}`;
    sw.setAttribute('aria-hidden', 'true');
    if (k.glyph === 'TriangleFilled') sw.textContent = '▲';
    else if (k.glyph === 'TriangleOpen') sw.textContent = '△';
    else if (k.glyph === 'Outline') sw.style.borderColor = k.colour;
    else sw.style.background = k.colour;
    li.append(sw, k.label);
    key.append(li);
  }
}

function renderTables(t) {
  const runs = t.delay.map((d) => d.label);
  const buckets = new Map();
  t.delay.forEach((d, i) => {
    for (const b of d.histogram) {
      const k = `${b.low_ns}`;
      if (!buckets.has(k)) buckets.set(k, { b, counts: runs.map(() => 0) });
      buckets.get(k).counts[i] = b.count;
    }
  });
  const rows = [...buckets.values()].sort((a, b) => a.b.low_ns - b.b.low_ns)
    .map(({ b, counts }) => [b.high_ns <= 1 ? '0' : `${formatNs(b.low_ns)} – ${formatNs(b.high_ns)}`, ...counts]);
  table($('table-hist'), ['delay', ...runs.map((r) => `${r} (count)`)], rows);
  const ps = [['p50', 'p50_ns'], ['p90', 'p90_ns'], ['p99', 'p99_ns'], ['p99.9', 'p999_ns'], ['max', 'max_ns']];
  table($('table-cdf'), ['percentile', ...runs],
    [['delays', ...t.delay.map((d) => d.summary.count)], ...ps.map(([n, k]) => [n, ...t.delay.map((d) => formatNs(d.summary[k]))])]);
  renderTimelineKey(t.timeline);
  if (t.timeline) {
    const tl = t.timeline;
    // Absolute simulated time, as the report's history prints it.
    const sec = (ns) => (ns / 1e9).toFixed(6);
    const rowsT = tl.entries.map((e) => [
      sec(e.start_ns),
      e.end_ns === null ? '' : sec(e.end_ns),
      e.end_ns === null ? '' : formatNs(e.end_ns - e.start_ns),
      e.task,
      e.state,
    ]);
    table($('table-timeline'), [`from (s, CPU ${tl.cpu})`, 'to (s)', 'for', 'task', 'state'], rowsT);
  }
  // Bios still queued at the end are in no percentile: the max says so, and
  // a device with none dispatched shows only its open ones.
  const q2dMax = (s) => {
    if (s.count === 0) return s.open_count > 0 ? `no completions; ${s.open_count} open, oldest ${formatNs(s.open_max_ns)}` : '-';
    if (s.open_count > 0 && s.open_max_ns > s.max_ns) return `> ${formatNs(s.open_max_ns)}, still waiting at end (${s.open_count} open)`;
    return formatNs(s.max_ns);
  };
  // Per CPU: busy share of the run, balance gap, migrations (the report's figures).
  const pct = (part, whole) => (whole ? `${(100 * part / whole).toFixed(1)} %` : '-');
  table($('table-cpus'), ['CPU', 'busy', 'balance gap', 'migrations in', 'migrations out', 'switches'],
    t.cpus.map((c) => [c.label, pct(c.busy_ns, c.sim_time_ns), formatNs(c.balance_gap_ns), c.migrations_in, c.migrations_out, c.switches]));
  table($('table-q2d'), ['run: device (elevator)', 'bios', 'p50', 'p99', 'max'],
    t.io.map((d) => [d.label, d.summary.count, d.summary.count ? formatNs(d.summary.p50_ns) : '-', d.summary.count ? formatNs(d.summary.p99_ns) : '-', q2dMax(d.summary)]));
}

// ---- wiring ---------------------------------------------------------------

/// "Share this what-if": the URL already holds the whole state (scenario,
/// variant, overrides, an edited text); copy it, and show it to copy by hand
/// where the clipboard is not available (plain http, a refused permission).
async function share() {
  const box = $('share-box');
  const field = $('share-url');
  box.hidden = false;
  field.value = location.href;
  let copied = false;
  try {
    await navigator.clipboard.writeText(field.value);
    copied = true;
  } catch {
    // No clipboard here: the selected field is the fallback.
  }
  field.focus();
  field.select();
  $('share-status').textContent = copied ? 'Link copied.' : 'Copy the selected link (Ctrl+C or ⌘C).';
}

function loadScenario(file) {
  ui.file = file;
  ui.text = scenario_text(file);
  ui.variant = '';
  ui.overrides = new Map();
  $('toml').value = ui.text;
}

async function main() {
  wasmModule = await WebAssembly.compileStreaming(fetch(WASM));
  await init({ module_or_path: wasmModule });
  explorer = new Explorer();
  runner = spawnWorker(onRunnerMessage);
  readUrl();
  const sel = $('scenario');
  for (const f of [...scenario_files(), CUSTOM]) {
    const o = document.createElement('option');
    o.value = f;
    o.textContent = f === CUSTOM ? 'custom (edited text)' : f;
    sel.append(o);
  }
  sel.value = ui.file;
  $('toml').value = ui.text;
  sel.addEventListener('change', () => {
    if (sel.value === CUSTOM) {
      $('edit').open = true;
      return;
    }
    loadScenario(sel.value);
    $('import-box').hidden = true;
    ui.changedAt = performance.now();
    rerun();
  });
  $('phases').addEventListener('change', () => {
    ui.changedAt = performance.now();
    rerun();
  });
  $('variant').addEventListener('change', () => {
    ui.variant = $('variant').value;
    ui.changedAt = performance.now();
    rerun();
  });
  $('run-toml').addEventListener('click', () => {
    if (ui.file !== CUSTOM) ui.basedOn = ui.file;
    ui.file = CUSTOM;
    ui.text = $('toml').value;
    sel.value = CUSTOM;
    rerun();
  });
  $('overrides').addEventListener('change', () => {
    ui.controlKey = null;
    ui.overrides = new Map();
    for (const line of $('overrides').value.split('\n').map((l) => l.trim()).filter(Boolean)) {
      const i = line.indexOf('=');
      ui.overrides.set(i > 0 ? line.slice(0, i).trim() : line, i > 0 ? line.slice(i + 1).trim() : '');
    }
    rerun();
  });
  $('reset').addEventListener('click', () => {
    ui.overrides = new Map();
    rerun();
  });
  $('cancel').addEventListener('click', () => {
    ui.runId++;
    runner.postMessage({ type: 'cancel' });
    active?.resolve(null);
    active = null;
    setState('cancelled', 'cancelled: the charts show the run as far as it got');
  });
  $('trace').addEventListener('change', () => {
    importTrace($('trace').files[0]);
    $('trace').value = '';
  });
  // A file dropped anywhere on the page is imported (the import row lights up).
  const zone = $('import');
  document.addEventListener('dragover', (e) => {
    if (!e.dataTransfer?.types.includes('Files')) return;
    e.preventDefault();
    zone.classList.add('over');
  });
  document.addEventListener('dragleave', (e) => {
    if (!e.relatedTarget) zone.classList.remove('over');
  });
  document.addEventListener('drop', (e) => {
    zone.classList.remove('over');
    if (!e.dataTransfer?.files.length) return;
    e.preventDefault();
    importTrace(e.dataTransfer.files[0]);
  });
  $('share').addEventListener('click', share);
  $('compare').addEventListener('click', compare);
  let resized;
  window.addEventListener('resize', () => {
    clearTimeout(resized);
    resized = setTimeout(() => {
      if (explorer.summary() && fitCanvases()) drawAll();
    }, 100);
  });
  $('pin').addEventListener('click', () => {
    if (explorer.pin()) {
      $('unpin').disabled = false;
      drawAll();
      $('summary').textContent = explorer.summary();
    }
  });
  $('unpin').addEventListener('click', () => {
    explorer.unpin();
    $('unpin').disabled = true;
    drawAll();
    $('summary').textContent = explorer.summary();
  });
  await rerun();
}

main().catch((e) => {
  showError({ file: '', origin: 'file', key: '', message: `the page failed to start: ${e}` });
  setState('error', 'failed to start');
});
