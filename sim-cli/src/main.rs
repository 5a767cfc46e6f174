//! `sim-cli`: the command-line front end of schedlab, a thin adapter over
//! `sim-core` (parse scenario → apply overrides → run → report).
//!
//! Exit status: 0 on success, 2 on bad input (the message names the file, the
//! key and what is allowed). It never panics on user input.

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
