//! Command-line arguments.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(name = "sim-cli", version, about = "Deterministic simulator of the Linux CFS scheduler")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one scenario (its base, or one variant) and report delays.
    Run {
        #[command(flatten)]
        common: Common,
        /// Apply this `[variants.NAME]` section.
        #[arg(long)]
        variant: Option<String>,
        /// List every task instance instead of merging instances by name.
        #[arg(long)]
        per_task: bool,
        /// Also print blkparse lines for the events up to each device's
        /// longest Q2D (text output only).
        #[arg(long)]
        blkparse: bool,
    },
    /// Run the base and every variant and print them side by side.
    Compare {
        #[command(flatten)]
        common: Common,
    },
    /// Serve the browser explorer (built by `web/build.sh`) on 127.0.0.1.
    Serve {
        /// The built page.
        #[arg(long, default_value = "web/www")]
        dir: PathBuf,
        /// Port on 127.0.0.1 (0 picks a free one).
        #[arg(long, default_value_t = 8000)]
        port: u16,
    },
}

#[derive(Debug, Args)]
pub struct Common {
    /// Scenario file (TOML).
    pub file: PathBuf,
    /// Override a scalar: `--set cfs.sched_latency_ns=1ms` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Print the report as JSON (the documented schema) instead of text.
    #[arg(long)]
    pub json: bool,
}
