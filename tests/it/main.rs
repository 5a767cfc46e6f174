//! Integration tests: one test binary (`cargo test -p sim-tests`).

mod bands;
mod bfq;
mod corpus;
mod determinism;
mod devices;
mod elision;
mod errors;
mod explosive;
mod fuzz;
mod import;
mod invariants;
mod io_invariants;
mod limiter;
mod perfetto;
mod periodic;
mod report_sections;
mod requests;
mod scenarios;
mod smp;
mod smp6x;
mod sweep;
mod tidy;
mod userspace_io;
mod values;
mod warmup;
