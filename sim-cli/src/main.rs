//! `sim-cli`: the command-line front end of schedlab, a thin adapter over
//! `sim-core` (parse scenario → apply overrides → run → report).
//!
//! Exit status: 0 on success, 2 on bad input (the message names the file, the
//! key and what is allowed). It never panics on user input. A valid scenario
//! that stops early (its event budget ran out, or time stalled) is a success
//! too: exit 0, a partial report, and a `warning:` line saying why (in the
//! text report, or on stderr with `--json`). A reader that closes stdout
//! early (`sim-cli run … | head`) ends the output quietly; any other failure
//! to write the report exits 1.

mod args;
mod bands;
#[cfg(test)]
mod batch_examples;
mod charts;
mod commands;
mod input;
mod output;
mod parallel;
mod progress;

use std::io::Write;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = args::parse();
    if let args::Command::MeasureWorker = cli.command {
        return ExitCode::from(commands::measure::worker::main());
    }
    match commands::execute(cli) {
        Ok(text) => match std::io::stdout().lock().write_all(text.as_bytes()) {
            // A reader that stops early (`| head`) is not an error.
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                let _ = writeln!(std::io::stderr(), "error: writing the report to stdout: {e}");
                ExitCode::FAILURE
            }
            _ => ExitCode::SUCCESS,
        },
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {}", commands::error_text(&e));
            ExitCode::from(2)
        }
    }
}
