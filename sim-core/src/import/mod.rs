//! Traces of a real machine read into the simulator's terms: the text of
//! `perf sched script` (and `perf script`, ftrace) parsed into scheduler
//! records and summarised per thread and CPU. `sim-cli measure` reads its
//! recordings through it; `sim-cli import` (issue 35) will build a
//! scenario from the same records. Pure: text in, values out.

pub mod sched_text;
