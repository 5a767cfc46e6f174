//! `sim-cli`: the command-line front end of schedlab, a thin adapter over
//! `sim-core` (parse scenario → apply overrides → run → report).
//!
//! Exit status: 0 on success, 2 on bad input (the message names the file, the
//! key and what is allowed). It never panics on user input. A valid scenario
//! that stops early (its event budget ran out, or time stalled) is a success
//! too: exit 0, a partial report, and a `warning:` line saying why (in the
//! text report, or on stderr with `--json`).

mod args;
mod charts;
mod hgrm;
mod io_output;
mod output;
mod progress;
mod run;
mod serve;
mod sweep;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = args::Cli::parse();
    match run::execute(cli) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
