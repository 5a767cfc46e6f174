//! Drawing the charts of `plot::data` on any plotters backend (SVG for the
//! CLI, an HTML canvas for the web page). Series are told apart without
//! colour: the current run is filled or solid, the baseline hollow or dashed,
//! and each task or device has its own marker shape.
//!
//! `style` holds what every chart shares (colours, labels, markers, the
//! caption strip); `cdf`, `timeline`, `occupancy` and `limiter` draw one
//! kind of chart each. The charts are re-exported here.

mod cdf;
mod limiter;
mod occupancy;
pub(crate) mod style;
#[cfg(test)]
mod tests;
mod timeline;

pub use cdf::{CdfSeries, IoStage, cdf, delay_histogram, io_cdf, q2d};
pub use limiter::limiter;
pub use occupancy::{ISOLATED_TINT, occupancy, occupancy_colour};
pub use style::{DrawResult, fmt_ns, with_caption};
pub use timeline::{KeyEntry, KeyGlyph, timeline, timeline_key};
