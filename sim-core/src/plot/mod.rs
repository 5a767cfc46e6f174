//! Charts of a run. `data` turns a `RunReport` into the series a chart shows
//! (plain data, also what the web page lists as tables); `draw` (feature
//! `plot`) draws them on any plotters backend, so the CLI's SVG files and the
//! web page's canvas share one drawing code. `sweep` (feature `plot`) draws
//! a parameter sweep's results: a line chart or a heat map.

pub mod data;
#[cfg(feature = "plot")]
pub mod draw;
#[cfg(feature = "plot")]
pub mod sweep;

pub use data::{DelayChart, IoChart, LimiterChart, OccupancyChart, Timeline, io_charts, limiter_charts};

/// Two hogs and a sleeper that also writes to a disk: a scenario in which
/// every chart has data, for the chart tests here and in the front ends.
pub const CHART_TEST_SCENARIO: &str = r#"
    schema = 1
    seed = 1
    duration = "300ms"
    [kernel]
    version = "4.4"
    [machine]
    cpus = 1
    hz = 1000
    [report]
    victim = "sleeper"
    [[tasks]]
    name = "hog"
    count = 2
    program = [{ run = "1s" }]
    [[tasks]]
    name = "sleeper"
    program = [{ sleep = "exp(3ms)" }, { run = "100us" }, { write = "4k", device = "sda", wait = true }]
    [devices.sda]
    kind = "ssd"
    elevator = "deadline"
"#;
