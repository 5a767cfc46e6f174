//! The WebAssembly adapter: the browser explorer's entry point into
//! `sim-core`'s one API (parse scenario → apply overrides → run → report).
//!
//! JS holds UI state only. Runs, reports, the pinned baseline and the charts
//! live here: `explorer.rs` (state, tested natively), `controls.rs` (which
//! settings a scenario offers, as override keys), and the canvas drawing
//! below, which calls the same `sim_core::draw` as the CLI's SVG charts.

pub mod controls;
pub mod explorer;
pub mod import;

use explorer::Explorer;
use wasm_bindgen::prelude::*;

include!(concat!(env!("OUT_DIR"), "/scenarios.rs"));

#[wasm_bindgen(start)]
pub fn start() {
    console_error_panic_hook::set_once();
}

/// The shipped scenarios' file names (`scenarios/jmx.toml`, …).
#[wasm_bindgen]
pub fn scenario_files() -> Vec<String> {
    SCENARIOS.iter().map(|(f, _)| (*f).to_string()).collect()
}

/// The name an edited scenario goes by (`jmx (edited)`): see `explorer::edited_name`.
#[wasm_bindgen]
pub fn edited_name(toml: &str, based_on: &str) -> String {
    explorer::edited_name(toml, based_on)
}

/// The text of a shipped scenario.
#[wasm_bindgen]
pub fn scenario_text(file: &str) -> Option<String> {
    SCENARIOS.iter().find(|(f, _)| *f == file).map(|(_, t)| (*t).to_string())
}

/// The kernel versions the explorer can model, as `kernel.version` spells
/// them (`4.4`, `6.6`, `6.12`, `6.18`).
#[wasm_bindgen]
pub fn kernel_versions() -> Vec<String> {
    sim_core::KernelModel::ALL.iter().map(|m| m.version().to_string()).collect()
}

/// The scheduler feature names of a kernel version (`features.NAME`), in
/// the kernel's order; undefined for a version this build does not model.
#[wasm_bindgen]
pub fn kernel_features(version: &str) -> Option<Vec<String>> {
    controls::feature_names(version).map(|v| v.into_iter().map(str::to_string).collect())
}

/// A trace imported whole (`import::import_trace`): `{toml, import,
/// report, report_text}` as JSON, or the error naming the line.
#[wasm_bindgen]
pub fn import_trace(text: &str, name: &str, victim: Option<String>) -> Result<String, JsError> {
    import::import_trace(text, name, victim).map(|v| v.to_string()).map_err(|e| JsError::new(&e))
}

/// The scenario (file, variant, overrides as the page gives them) over
/// `phases` tick phases and `seeds` seeds: point 0's report JSON with its
/// `bands` object, byte for byte `sim-cli run FILE --phases N --seeds K
/// --json`; or the error.
#[wasm_bindgen]
pub fn bands_json(
    file: &str,
    toml: &str,
    variant: Option<String>,
    overrides: &str,
    phases: u32,
    seeds: u32,
) -> Result<String, JsError> {
    explorer::bands_report(file, toml, variant.as_deref(), overrides, phases, seeds).map_err(|e| JsError::new(&e))
}

/// A trace import for JS, fed in chunks as the worker reads the file.
#[wasm_bindgen(js_name = TraceImport)]
pub struct WebTraceImport {
    inner: Option<import::TraceImport>,
}

#[wasm_bindgen(js_class = TraceImport)]
impl WebTraceImport {
    #[wasm_bindgen(constructor)]
    pub fn new(name: &str, victim: Option<String>) -> WebTraceImport {
        WebTraceImport { inner: Some(import::TraceImport::new(name, victim)) }
    }

    /// The next piece of the text; the error names the line at fault.
    pub fn push(&mut self, chunk: &str) -> Result<(), JsError> {
        let t = self.inner.as_mut().ok_or_else(|| JsError::new("the import has finished"))?;
        t.push(chunk).map_err(|e| JsError::new(&e))
    }

    /// Lines read so far.
    pub fn lines(&self) -> f64 {
        self.inner.as_ref().map_or(0, import::TraceImport::lines) as f64
    }

    /// The scenario, the replay's import report: `{toml, import, report, report_text}` as JSON.
    pub fn finish(&mut self) -> Result<String, JsError> {
        let t = self.inner.take().ok_or_else(|| JsError::new("the import has finished"))?;
        t.finish().map(|v| v.to_string()).map_err(|e| JsError::new(&e))
    }
}

/// The explorer for JS: start a run, step it in chunks, finish, pin, draw.
#[wasm_bindgen(js_name = Explorer)]
#[derive(Default)]
pub struct WebExplorer {
    inner: Explorer,
}

#[wasm_bindgen(js_class = Explorer)]
impl WebExplorer {
    #[wasm_bindgen(constructor)]
    pub fn new() -> WebExplorer {
        WebExplorer::default()
    }

    /// `{"ok": description}` or `{"error": {file, key, origin, message}}`, as JSON.
    pub fn start(&mut self, file: &str, toml: &str, variant: Option<String>, overrides: &str) -> String {
        self.inner.start(file, toml, variant.as_deref(), overrides).to_string()
    }

    /// `start` without running: the description or the error, as JSON, and
    /// the source of the views `load_view` takes next (the page's side; the
    /// simulation runs in web/www/worker.js).
    pub fn prepare(&mut self, file: &str, toml: &str, variant: Option<String>, overrides: &str) -> String {
        self.inner.prepare(file, toml, variant.as_deref(), overrides).to_string()
    }

    /// Loads a view (`view`'s JSON, from the worker's Explorer) as the
    /// current report to draw; false if the text is not a view or nothing
    /// was prepared.
    pub fn load_view(&mut self, json: &str) -> bool {
        self.inner.load_view(json)
    }

    /// The current report's view as JSON (after `finish` or `preview`), for
    /// the page's `load_view`.
    pub fn view(&self) -> Option<String> {
        self.inner.view_json()
    }

    /// The current report's figures (victim delay percentiles, events,
    /// progress) as JSON, for the compare table.
    pub fn figures(&self) -> Option<String> {
        self.inner.figures().map(|v| v.to_string())
    }

    /// Progress in [0, 1] after at most `events` more events; -1 with no run.
    pub fn step(&mut self, events: u32) -> f64 {
        self.inner.step(u64::from(events))
    }

    /// The finished run's `--json` report.
    pub fn finish(&mut self) -> Option<String> {
        self.inner.finish()
    }

    pub fn cancel(&mut self) {
        self.inner.cancel();
    }

    /// Takes the band from a view the worker sent after `band_step` into the
    /// finished report shown (the page's side); false if it does not fit.
    pub fn load_band(&mut self, json: &str) -> bool {
        self.inner.load_band(json)
    }

    /// Begins the finished run's band over `phases` tick phases (the
    /// worker's side): the number of runs it takes, point 0 (the run shown)
    /// among them; 1 when there is nothing more to run.
    pub fn band_start(&mut self, phases: u32) -> Result<u32, JsError> {
        self.inner.band_start(phases).map_err(|e| JsError::new(&e))
    }

    /// Runs the band's next tick phase; 1 once the band is in the view, -1 with none.
    pub fn band_step(&mut self) -> f64 {
        self.inner.band_step()
    }

    /// The current view's band: how many tick phases (0 for none), and the
    /// caption that says what the shading is.
    pub fn band_points(&self) -> u32 {
        self.inner.current().map_or(0, |v| v.band_points)
    }

    pub fn band_caption(&self) -> String {
        self.inner.current().map(|v| v.band_caption.clone()).unwrap_or_default()
    }

    /// Events simulated so far by the run in progress (0 with none).
    pub fn events(&self) -> f64 {
        self.inner.events() as f64
    }

    /// Makes the run so far the current report (for progressive charts).
    pub fn preview(&mut self) -> bool {
        self.inner.preview()
    }

    pub fn pin(&mut self) -> bool {
        self.inner.pin()
    }

    pub fn unpin(&mut self) {
        self.inner.unpin();
    }

    pub fn has_baseline(&self) -> bool {
        self.inner.baseline().is_some()
    }

    pub fn summary(&self) -> String {
        self.inner.summary()
    }

    /// Why the finished report is partial (event budget ran out, or time
    /// stalled), in the CLI's words; undefined for a complete report.
    pub fn notice(&self) -> Option<String> {
        self.inner.notice()
    }

    /// The numbers behind the charts, as JSON.
    pub fn tables(&self) -> String {
        self.inner.tables().to_string()
    }
}

/// Chart drawing into `<canvas>` elements (browser only; natively the same
/// charts are tested through SVG in sim-core).
#[cfg(target_arch = "wasm32")]
#[wasm_bindgen(js_class = Explorer)]
impl WebExplorer {
    /// Draws the victim's delay histogram (current filled, baseline outlined).
    pub fn draw_histogram(&self, canvas_id: &str) -> Result<(), JsError> {
        let charts = self.inner.delay_charts();
        let victim = self.inner.current().map(|r| r.victim.clone()).unwrap_or_default();
        canvas::draw(canvas_id, |area| {
            let refs: Vec<_> = charts.iter().collect();
            sim_core::draw::delay_histogram(area, &victim, &refs)
        })
    }

    /// Draws the victim's delay CDF (current solid, baseline dashed), the
    /// current run's band over tick phases shaded under it when there is one.
    pub fn draw_cdf(&self, canvas_id: &str) -> Result<(), JsError> {
        let charts = self.inner.delay_charts();
        let victim = self.inner.current().map(|r| r.victim.clone()).unwrap_or_default();
        // The band (when the worker computed one) belongs to the current run, series 0.
        let band = self.inner.current().map(|r| r.band.as_slice()).unwrap_or_default();
        canvas::draw(canvas_id, |area| {
            let series: Vec<_> = charts
                .iter()
                .enumerate()
                .map(|(i, c)| if i == 0 { c.series(i).with_band(band) } else { c.series(i) })
                .collect();
            sim_core::draw::cdf(area, &format!("Scheduling delay of {victim}: CDF"), "delay", &series)
        })
    }

    /// Draws the victim's CPU around its worst delay, with vruntime lags.
    /// Returns false when the victim never waited (nothing to draw).
    pub fn draw_timeline(&self, canvas_id: &str) -> Result<bool, JsError> {
        let Some(t) = self.inner.current().and_then(|r| r.timeline.as_ref()) else {
            return Ok(false);
        };
        canvas::draw(canvas_id, |area| sim_core::draw::timeline(area, t)).map(|()| true)
    }

    /// Draws the per-CPU occupancy heat map of the current run; false with no report.
    pub fn draw_occupancy(&self, canvas_id: &str) -> Result<bool, JsError> {
        let Some(c) = self.inner.current().map(|r| &r.occupancy) else {
            return Ok(false);
        };
        canvas::draw(canvas_id, |area| sim_core::draw::occupancy(area, c)).map(|()| true)
    }

    /// Draws each elastic CPU limiter (limit and elastic CPU over time, the
    /// watched tasks' delay percentile against the target); false when the
    /// scenario has no limiter.
    pub fn draw_limiter(&self, canvas_id: &str) -> Result<bool, JsError> {
        let charts = self.inner.current().map(|r| r.limiters.as_slice()).unwrap_or_default();
        if charts.is_empty() {
            return Ok(false);
        }
        canvas::draw(canvas_id, |area| sim_core::draw::limiter(area, charts)).map(|()| true)
    }

    /// Draws Q2D per device and elevator; false when the scenario has no devices.
    pub fn draw_q2d(&self, canvas_id: &str) -> Result<bool, JsError> {
        let cur = self.inner.current().map(|r| r.io.clone()).unwrap_or_default();
        if cur.is_empty() {
            return Ok(false);
        }
        let base = self
            .inner
            .baseline()
            .zip(self.inner.baseline_label())
            .map(|(r, label)| r.io_charts(&label))
            .unwrap_or_default();
        canvas::draw(canvas_id, |area| sim_core::draw::q2d(area, &cur, &base)).map(|()| true)
    }
}

/// Drawing into a `<canvas>` (browser only).
///
/// The page gives each canvas as many pixels as it shows, times
/// `devicePixelRatio` (main.js `fitCanvases`); the charts are drawn in CSS
/// pixels on a context scaled by that ratio. So the charts' 12 px labels
/// are 12 px on screen at any width (a 900-px canvas shrunk to a phone's
/// width made them 5 px), and sharp on a high-density screen.
#[cfg(target_arch = "wasm32")]
mod canvas {
    use plotters::coord::Shift;
    use plotters::prelude::*;
    use plotters_canvas::CanvasBackend;
    use wasm_bindgen::{JsCast, JsError};
    use web_sys::{CanvasRenderingContext2d, HtmlCanvasElement};

    pub fn draw(
        id: &str,
        f: impl FnOnce(&DrawingArea<CanvasBackend, Shift>) -> sim_core::draw::DrawResult,
    ) -> Result<(), JsError> {
        let missing = || JsError::new(&format!("no <canvas id=\"{id}\">"));
        let window = web_sys::window().ok_or_else(missing)?;
        let canvas: HtmlCanvasElement = window
            .document()
            .and_then(|d| d.get_element_by_id(id))
            .and_then(|e| e.dyn_into().ok())
            .ok_or_else(missing)?;
        let context: CanvasRenderingContext2d = canvas
            .get_context("2d")
            .ok()
            .flatten()
            .and_then(|c| c.dyn_into().ok())
            .ok_or_else(|| JsError::new(&format!("<canvas id=\"{id}\"> has no 2d context")))?;
        let ratio = window.device_pixel_ratio();
        let ratio = if ratio.is_finite() && ratio > 0.0 { ratio } else { 1.0 };
        context.set_transform(ratio, 0.0, 0.0, ratio, 0.0, 0.0).map_err(|_| JsError::new("setTransform failed"))?;
        let css = |px: u32| (f64::from(px) / ratio).round() as u32;
        let (width, height) = (css(canvas.width()), css(canvas.height()));
        let backend = CanvasBackend::with_canvas_object(canvas).ok_or_else(missing)?;
        let root = backend.into_drawing_area();
        f(&root.clone().shrink((0, 0), (width, height))).map_err(|e| JsError::new(&e))?;
        root.present().map_err(|e| JsError::new(&e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shipped_scenario_is_embedded() {
        let files = scenario_files();
        assert!(files.contains(&"scenarios/jmx.toml".to_string()), "{files:?}");
        // The top-level `*.toml` files (`scenarios/validation/` holds the
        // calibration configurations of `sim-cli validate`, not embedded).
        let on_disk = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios"))
            .unwrap()
            .filter(|e| e.as_ref().is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".toml")))
            .count();
        assert_eq!(files.len(), on_disk);
        let jmx = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios/jmx.toml")).unwrap();
        assert_eq!(scenario_text("scenarios/jmx.toml").as_deref(), Some(jmx.as_str()));
    }
}
