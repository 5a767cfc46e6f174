//! The WebAssembly adapter: the browser explorer's entry point into
//! `sim-core`'s one API (parse scenario → apply overrides → run → report).
//!
//! JS holds UI state only. Runs, reports, the pinned baseline and the charts
//! live here: `explorer.rs` (state, tested natively), `controls.rs` (which
//! settings a scenario offers, as override keys), and the canvas drawing
//! below, which calls the same `sim_core::plot::draw` as the CLI's SVG charts.

pub mod controls;
pub mod explorer;

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

/// The text of a shipped scenario.
#[wasm_bindgen]
pub fn scenario_text(file: &str) -> Option<String> {
    SCENARIOS.iter().find(|(f, _)| *f == file).map(|(_, t)| (*t).to_string())
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
        let victim = self.inner.current().map(|r| r.victim.name.clone()).unwrap_or_default();
        canvas::draw(canvas_id, |area| {
            let refs: Vec<_> = charts.iter().collect();
            sim_core::plot::draw::delay_histogram(area, &victim, &refs)
        })
    }

    /// Draws the victim's delay CDF (current solid, baseline dashed).
    pub fn draw_cdf(&self, canvas_id: &str) -> Result<(), JsError> {
        let charts = self.inner.delay_charts();
        let victim = self.inner.current().map(|r| r.victim.name.clone()).unwrap_or_default();
        canvas::draw(canvas_id, |area| {
            let series: Vec<_> = charts.iter().enumerate().map(|(i, c)| c.series(i)).collect();
            sim_core::plot::draw::cdf(area, &format!("Scheduling delay of {victim}: CDF"), "delay", &series)
        })
    }

    /// Draws the victim's CPU around its worst delay, with vruntime lags.
    /// Returns false when the victim never waited (nothing to draw).
    pub fn draw_timeline(&self, canvas_id: &str) -> Result<bool, JsError> {
        let Some(t) = self.inner.current().and_then(sim_core::plot::Timeline::from_report) else {
            return Ok(false);
        };
        canvas::draw(canvas_id, |area| sim_core::plot::draw::timeline(area, &t)).map(|()| true)
    }

    /// Draws Q2D per device and elevator; false when the scenario has no devices.
    pub fn draw_q2d(&self, canvas_id: &str) -> Result<bool, JsError> {
        let cur = self.inner.current().map(|r| sim_core::plot::io_charts(r, "current")).unwrap_or_default();
        if cur.is_empty() {
            return Ok(false);
        }
        let base = self.inner.baseline().map(|r| sim_core::plot::io_charts(r, "baseline")).unwrap_or_default();
        canvas::draw(canvas_id, |area| sim_core::plot::draw::q2d(area, &cur, &base)).map(|()| true)
    }
}

/// Drawing into a `<canvas>` (browser only).
#[cfg(target_arch = "wasm32")]
mod canvas {
    use plotters::coord::Shift;
    use plotters::prelude::*;
    use plotters_canvas::CanvasBackend;
    use wasm_bindgen::JsError;

    pub fn draw(
        id: &str,
        f: impl FnOnce(&DrawingArea<CanvasBackend, Shift>) -> sim_core::plot::draw::DrawResult,
    ) -> Result<(), JsError> {
        let backend = CanvasBackend::new(id).ok_or_else(|| JsError::new(&format!("no <canvas id=\"{id}\">")))?;
        let root = backend.into_drawing_area();
        f(&root).map_err(|e| JsError::new(&e))?;
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
        let on_disk = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios")).unwrap().count();
        assert_eq!(files.len(), on_disk);
        let jmx = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios/jmx.toml")).unwrap();
        assert_eq!(scenario_text("scenarios/jmx.toml").as_deref(), Some(jmx.as_str()));
    }
}
