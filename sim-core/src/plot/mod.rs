//! Charts of a run. `data` turns a `RunReport` into the series a chart shows
//! (plain data, also what the web page lists as tables); `draw` (feature
//! `plot`) draws them on any plotters backend, so the CLI's SVG files and the
//! web page's canvas share one drawing code.

pub mod data;
#[cfg(feature = "plot")]
pub mod draw;

pub use data::{DelayChart, IoChart, Timeline, io_charts};
