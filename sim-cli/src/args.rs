//! Command-line arguments.

use clap::{Args, Parser, Subcommand};
use std::ffi::OsString;
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "sim-cli",
    version,
    about = "Deterministic simulator of the Linux CPU scheduler (EEVDF of 6.6, 6.12 and 6.18; CFS of 4.4) and block layer",
    long_about = "Deterministic simulator of the Linux CPU scheduler and block layer. The fair class is modelled \
                  as Linux 6.18, 6.12 and 6.6 (EEVDF) and 4.4 (CFS); a scenario without `[kernel] version` runs \
                  under the newest, Linux 6.18 (EEVDF). Reports give every scheduling delay as perf sched would."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one scenario (its base, or one variant) and report delays.
    Run(RunArgs),
    /// Run the base and every variant and print them side by side.
    Compare(CompareArgs),
    /// Run the scenario's workload for real on this Linux machine (threads,
    /// sleeps, wake-ups, affinity, nice, cgroups, sessions) and report its
    /// scheduling delays in `run`'s shape, measured by the threads' own
    /// timestamps and by `perf sched` where permitted.
    Measure(MeasureArgs),
    /// Measure K times, simulate the same scenario on the machine measured,
    /// and compare the delay percentiles per task (error and a ±25% verdict).
    Validate {
        #[command(flatten)]
        measure: MeasureArgs,
        /// Measurements to take (the table shows their median and min–max).
        #[arg(long, default_value_t = 3)]
        repeat: u32,
        /// Also predict with this kernel model (`4.4`, `6.6`, `6.12`, `6.18`)
        /// and show it in a column beside the scenario's model.
        #[arg(long, value_name = "VERSION")]
        also_kernel: Option<String>,
        /// Predict with this machine's measured noise: a `[machine.noise]`
        /// file (`sim-cli calibrate -o FILE`). The measurement is unchanged.
        #[arg(long, value_name = "FILE")]
        noise: Option<PathBuf>,
        /// Predict over N tick phases across one tick (1 to 64): each
        /// statistic as a band; the verdict takes the aligned phase's
        /// prediction when `measure` aligned the host's ticks, else the band's median.
        #[arg(long, value_name = "N", default_value_t = 8)]
        phases: u32,
        /// Predict over K seeds too (1 to 32; the noise draws and the workload's
        /// random draws); at the aligned phase the verdict takes their median,
        /// as the measured figure is the median over the repeats.
        #[arg(long, value_name = "K", default_value_t = 5)]
        seeds: u32,
        /// Measure nothing: predict again (this build, `--noise`, `--phases`,
        /// `--seeds`) against the measured figures a kept `validate --json`
        /// output holds. No root needed; its quota rows are not re-judged.
        #[arg(long, value_name = "OLD.json")]
        rejudge: Option<PathBuf>,
    },
    /// Measure this machine's own noise (wake-up latency onto an idle and
    /// onto a busy CPU, kernel time per activation, the host's background
    /// threads) from two fixed calibration runs (scenarios/calibration/), and
    /// print it as a `[machine.noise]` section for `run --noise` and
    /// `validate --noise`. Needs root and perf, like `measure`.
    Calibrate {
        /// Runs of each calibration scenario (1 to 20).
        #[arg(long, default_value_t = 3)]
        repeat: u32,
        /// How long each run lasts (e.g. `10s`), instead of the scenarios' 20 s.
        #[arg(long)]
        duration: Option<String>,
        /// Host CPUs to run on (`2`): the probe's CPU is the first listed.
        #[arg(long, value_name = "LIST")]
        cpus: Option<String>,
        /// Keep the recordings in DIR (`DIR/idle-K/`, `DIR/busy-K/`: perf.data and sched.txt).
        #[arg(long, value_name = "DIR")]
        keep: Option<PathBuf>,
        /// Read the recordings a `--keep DIR` run left instead of measuring.
        #[arg(long, value_name = "DIR", conflicts_with_all = ["keep", "duration", "cpus"])]
        from: Option<PathBuf>,
        /// Also write the section to FILE.
        #[arg(short = 'o', long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// The worker process of `measure` (started by it, not by hand).
    #[command(name = "__measure-worker", hide = true)]
    MeasureWorker,
    /// Run a grid of settings (`--vary`, in parallel over cores) and rank
    /// them by the target task's scheduling delay.
    Sweep(SweepArgs),
    /// Which setting fixes it: search the knobs the scenario's kernel has
    /// (placement, per-task policy, tunables, quotas, …) in the simulator,
    /// one change first, then combinations, each judged over tick phases and
    /// seeds, until every `--target` is met; rank the fixes with their cost
    /// to the other tasks and the commands that apply them.
    Advise(AdviseArgs),
    /// Merge the JSON lines of a sharded sweep (`sweep --shard K/N --json`)
    /// and print the same table as `sweep`.
    Merge {
        /// JSON-lines files written by `sweep --json` (one per shard).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// List the settings whose metric is at most this delay (e.g. `2ms`).
        #[arg(long)]
        budget: Option<String>,
        /// Print the merged points as JSON lines instead of the table.
        #[arg(long)]
        json: bool,
        /// Write `DIR/sweep.svg`: a line chart (one varied key) or heat map (two).
        #[arg(long, value_name = "DIR")]
        plot: Option<PathBuf>,
    },
    /// Print a shell completion script (install it as your shell reads
    /// completions, e.g. `sim-cli completions bash > ~/.local/share/bash-completion/completions/sim-cli`).
    Completions {
        /// The shell: bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), or write one page per command into a directory.
    Man {
        /// Write `sim-cli.1` and `sim-cli-COMMAND.1` here instead of printing.
        #[arg(long, value_name = "DIR")]
        out_dir: Option<PathBuf>,
    },
    /// Print the JSON Schema of the scenario format, the `--json` report or a
    /// `sweep --json` line (the committed copies are in docs/schema/).
    Schema {
        /// Which document: scenario, report or sweep-line.
        #[arg(value_enum)]
        what: SchemaKind,
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
    /// Fit the flash device model to fio `--output-format=json` results at
    /// several depths and block sizes; print a `[devices.NAME]` table and the
    /// fitted curve against the measurements.
    FitDevice {
        /// fio JSON output files (one or more runs each).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// The device's name in the printed table.
        #[arg(long, default_value = "fitted")]
        name: String,
    },
    /// Turn a scheduler trace of a real machine (`perf sched script` text,
    /// `perf script` of sched tracepoints, ftrace or `trace-cmd report`
    /// text; plain, gzip, or a perf.data file) into a scenario whose every
    /// inference is a comment; with `--replay`, run it and print the import
    /// report: the trace's delays per task beside the replay's.
    Import {
        /// The trace file, `-` for stdin.
        trace: PathBuf,
        /// Write the scenario here (default: stdout, unless --replay).
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
        /// The thread (comm, or its family such as `worker` for `worker/3`) the report explains.
        #[arg(long)]
        victim: Option<String>,
        /// Kernel model (`4.4`, `6.6`, `6.12`, `6.18`); default: the trace's `os release`, else the latest.
        #[arg(long)]
        kernel: Option<String>,
        /// The tick rate, when it cannot be inferred.
        #[arg(long)]
        hz: Option<u32>,
        /// Only this part of the trace: `A..B`, durations after its first record (`2s..5s`).
        #[arg(long, value_name = "A..B")]
        window: Option<String>,
        /// Run the scenario and print the import report.
        #[arg(long)]
        replay: bool,
        /// With --replay: override a key of the imported scenario for the replay
        /// (`--set tasks.sched-pipe.cpus=0`), to try what a trace cannot show.
        #[arg(long = "set", value_name = "KEY=VALUE", requires = "replay")]
        set: Vec<String>,
        /// The import (and the report with --replay) as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write the scenario (base or `--variant`, `--set` applied) as an rt-app
    /// JSON workload; each approximation is a `warning:` line on stderr.
    Export {
        /// Scenario file (TOML).
        file: PathBuf,
        /// The format: rt-app JSON (the only one so far).
        #[arg(long, required = true)]
        rt_app: bool,
        /// Apply this `[variants.NAME]` section.
        #[arg(long)]
        variant: Option<String>,
        /// Override a scalar: `--set cfs.sched_latency_ns=1ms` (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        set: Vec<String>,
        /// Write the JSON here instead of stdout.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

/// Parses the command line, exiting as clap does on an error, except that an
/// option given to the wrong subcommand gets told where it belongs.
pub fn parse() -> Cli {
    let args: Vec<OsString> = std::env::args_os().collect();
    let cli = Cli::try_parse_from(&args).unwrap_or_else(|e| {
        if let Some(msg) = misplaced_option(&e, &args) {
            eprintln!("error: {msg}");
            std::process::exit(2);
        }
        e.exit()
    });
    cli.resolve().unwrap_or_else(|msg| {
        eprintln!("error: {msg}");
        std::process::exit(2);
    })
}

/// `compare --variant NAME`: compare has no such option because it runs every
/// variant; say so and name the command that runs one (clap's own tip would
/// only suggest `--`).
pub fn misplaced_option(e: &clap::Error, args: &[OsString]) -> Option<String> {
    if e.kind() != clap::error::ErrorKind::UnknownArgument {
        return None;
    }
    let words: Vec<String> = args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    if words.get(1).map(String::as_str) != Some("compare") {
        return None;
    }
    let at = words.iter().position(|w| w == "--variant" || w.starts_with("--variant="))?;
    let name = match words[at].split_once('=') {
        Some((_, v)) => v.to_string(),
        None => words.get(at + 1).cloned().unwrap_or_else(|| "NAME".into()),
    };
    let file =
        words.iter().skip(2).find(|w| !w.starts_with('-') && w.ends_with(".toml")).map_or("FILE", |f| f.as_str());
    Some(format!(
        "compare has no --variant: it runs the base and every variant side by side; to run one variant, use `sim-cli run {file} --variant {name}`"
    ))
}

/// The documents `sim-cli schema` describes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SchemaKind {
    /// A scenario file (TOML, read as JSON by validators).
    Scenario,
    /// The report of `run --json` (and each run of `compare --json`).
    Report,
    /// One line of `sweep --json`.
    SweepLine,
}

/// What `run` can write besides its report.
#[derive(Debug, Args)]
pub struct Export {
    /// Write SVG charts into this directory: each task's delay histogram,
    /// the victim's delay CDF, the timeline of its CPU around its worst
    /// delay, and Q2D/Q2C distributions for I/O scenarios.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// Write the scheduling trace as Chrome/Perfetto JSON (CPU tracks,
    /// wakeups, nr_running and min_vruntime counters, ftrace text for
    /// Perfetto's native CPU view); a `.txt` file gets the ftrace text
    /// alone, which `sim-cli import` reads back.
    #[arg(long, value_name = "FILE.json|FILE.txt")]
    pub trace: Option<PathBuf>,
    /// Print the `perf sched timehist -w -M` listing (wakeups and
    /// migrations) instead of the report.
    #[arg(long, conflicts_with_all = ["json", "hgrm"])]
    pub timehist: bool,
    /// Print TASK's scheduling delays (default: the report's victim) as
    /// HdrHistogram percentile-distribution text (.hgrm, milliseconds)
    /// instead of the report.
    #[arg(long, value_name = "TASK", num_args = 0..=1, default_missing_value = "", conflicts_with = "json")]
    pub hgrm: Option<String>,
    /// The part of the run --trace and --timehist cover: `FROM..TO`
    /// (durations, e.g. `9.2s..9.3s`; either end may be left out), or
    /// `worst` for the victim's worst delay with `history_window` either
    /// side (the run is replayed with the same seed to find it).
    #[arg(long, value_name = "FROM..TO|worst")]
    pub window: Option<String>,
    /// Only these CPUs in --trace and --timehist (a list like `0,3-5`, as
    /// perf's `--cpu` and taskset take); without either, the CPUs the text
    /// report lists one per line (busy, migrations, balance gap).
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// At most this many scheduling records (switches and wakeups) in
    /// --trace and --timehist; the file says where the cap cut it.
    #[arg(long, value_name = "N", default_value_t = 200_000)]
    pub trace_max: usize,
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
    /// Leave the first D of simulated time out of every statistic (`100ms`):
    /// the same as `--set report.warmup=D`. The run itself is unchanged.
    #[arg(long, value_name = "D")]
    pub warmup: Option<String>,
}

impl Common {
    /// Moves `--warmup D` into the overrides as `report.warmup=D` (after the
    /// `--set`s, so it wins), where the scenario validates it like the key.
    fn fold_warmup(&mut self) {
        if let Some(d) = self.warmup.take() {
            self.set.push(format!("report.warmup={d}"));
        }
    }
}

impl Cli {
    /// The parsed command with `--warmup` folded into `--set`; `measure` and
    /// `validate` refuse it (a measured run reports all of its time).
    pub fn resolve(mut self) -> Result<Cli, String> {
        match &mut self.command {
            Command::Run(RunArgs { common, .. }) | Command::Compare(CompareArgs { common, .. }) => common.fold_warmup(),
            Command::Sweep(a) => a.common.fold_warmup(),
            Command::Advise(a) => a.common.fold_warmup(),
            Command::Measure(MeasureArgs { common, .. })
            | Command::Validate { measure: MeasureArgs { common, .. }, .. } => {
                if let Some(d) = &common.warmup {
                    return Err(format!(
                        "--warmup {d}: `measure` and `validate` report the whole measured run; the warm-up applies to \
                         simulated runs (`run`, `compare`, `sweep`)"
                    ));
                }
            }
            _ => {}
        }
        Ok(self)
    }
}

/// `sim-cli run`'s options.
#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub common: Common,
    /// A measured machine model: a TOML file holding only `[machine.noise]`,
    /// replacing the scenario's own (`Scenario::with_noise`).
    #[arg(long, value_name = "FILE")]
    pub noise: Option<PathBuf>,
    /// Apply this `[variants.NAME]` section.
    #[arg(long)]
    pub variant: Option<String>,
    /// List every task instance instead of merging instances by name.
    #[arg(long)]
    pub per_task: bool,
    /// Also print blkparse lines for the events up to each device's
    /// longest Q2D (text output only).
    #[arg(long)]
    pub blkparse: bool,
    /// Debugging only: turn event elision off, so every tick is
    /// dispatched as an event. The report is the same either way (the
    /// test suite checks it); only its event count differs.
    #[arg(long)]
    pub debug_no_elision: bool,
    #[command(flatten)]
    pub export: Export,
    #[command(flatten)]
    pub bands: BandArgs,
    /// With --phases/--seeds: runs at the same time, one per worker thread
    /// (1 to 256; default: the available CPUs, at most one per point).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=crate::parallel::JOBS_MAX as i64))]
    pub jobs: Option<u16>,
}

/// `--phases N --seeds K`: the scenario over the inputs it leaves open.
#[derive(Debug, Clone, Copy, Args)]
pub struct BandArgs {
    /// Also run the scenario at N tick phases spread evenly across one tick
    /// (1 to 64; 1 = only its own `machine.tick_offset`) and report each
    /// delay statistic as a median and a min–max band, flagged
    /// `phase-sensitive` where the band over phases is wider than ±25 %.
    #[arg(long, value_name = "N")]
    pub phases: Option<u32>,
    /// Also run the scenario at K consecutive seeds from its own (1 to 32),
    /// times the phases; flagged `seed-sensitive` as above.
    #[arg(long, value_name = "K")]
    pub seeds: Option<u32>,
}

/// `sim-cli compare`'s options.
#[derive(Debug, Args)]
pub struct CompareArgs {
    #[command(flatten)]
    pub common: Common,
    /// A measured machine model: a TOML file holding only `[machine.noise]`,
    /// replacing the scenario's own (`Scenario::with_noise`).
    #[arg(long, value_name = "FILE")]
    pub noise: Option<PathBuf>,
    /// Write SVG charts comparing the runs into this directory: the
    /// victim's delay CDF (one line per run), each run's histogram and
    /// timeline, and Q2D/Q2C per elevator for I/O scenarios.
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// Instead of the base and its variants, run the base scenario once
    /// per kernel model (`--kernels 4.4,6.18`: `--set kernel.version=X`
    /// for each, after the other `--set`s); columns are named by the
    /// model (`linux-6.18-eevdf`). The file's variants are not run.
    #[arg(long, value_name = "LIST")]
    pub kernels: Option<String>,
    /// Runs at the same time, one per worker thread (1 to 256; default:
    /// the available CPUs, at most one per run). The output is the same
    /// for any value: the runs are independent and printed in order.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=crate::parallel::JOBS_MAX as i64))]
    pub jobs: Option<u16>,
    #[command(flatten)]
    pub bands: BandArgs,
}

#[derive(Debug, Args)]
pub struct MeasureArgs {
    #[command(flatten)]
    pub common: Common,
    /// Apply this `[variants.NAME]` section.
    #[arg(long)]
    pub variant: Option<String>,
    /// How long to run (e.g. `5s`), instead of the scenario's duration.
    #[arg(long)]
    pub duration: Option<String>,
    /// Host CPUs to run on (`0-3`): scenario CPU i runs on the i-th listed
    /// CPU, wrapping when the scenario has more CPUs than listed.
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
    /// Write the sysctls and scheduler features the scenario sets (restored
    /// afterwards, also on Ctrl-C and on error). Without it, such scenarios are refused.
    #[arg(long)]
    pub apply_sysctls: bool,
    /// Measure a scenario with `[limiters]` without them: the elastic CPU
    /// limiter is simulated only (the report lists it as not reproduced).
    /// Without it, such scenarios are refused.
    #[arg(long)]
    pub ignore_limiters: bool,
    /// Directory for the I/O steps' files (I/O scenarios are refused for now).
    #[arg(long, value_name = "DIR")]
    pub io_dir: Option<PathBuf>,
    /// Do not record with `perf sched`: the threads' own timestamps only.
    #[arg(long)]
    pub no_perf: bool,
    /// Keep the perf recording in DIR (created if missing): `DIR/perf.data` and
    /// `DIR/sched.txt`, its `perf sched script -F comm,pid,tid,cpu,time,event,trace
    /// --ns --header` text, which `sim-cli import DIR/sched.txt` reads; files of
    /// those names are replaced. It needs the perf recording: refused with
    /// `--no-perf` or where perf cannot record (instead of falling back to the
    /// threads' timestamps). `validate` keeps one per measurement, in
    /// `DIR/repeat-1`, `DIR/repeat-2`, …
    #[arg(long, value_name = "DIR")]
    pub perf_data: Option<PathBuf>,
    /// List every task instance instead of merging instances by name.
    #[arg(long)]
    pub per_task: bool,
}

#[derive(Debug, Args)]
pub struct AdviseArgs {
    #[command(flatten)]
    pub common: Common,
    /// A goal: 'TASK STAT <= DURATION' or 'request SOURCE STAT <= DURATION',
    /// STAT one of p50, p90, p99, p999, max (repeatable; all must hold).
    #[arg(long, value_name = "GOAL", required = true)]
    pub target: Vec<String>,
    /// Knob families to search: placement, task, tunables, quota, io, hz,
    /// kernel, `default` (all but hz and kernel) or `all`.
    #[arg(long, value_name = "LIST", default_value = "default")]
    pub knobs: String,
    /// Simulation runs the search may spend (each candidate costs phases × seeds).
    #[arg(long, value_name = "N", default_value_t = 600)]
    pub budget: u64,
    /// Judge each candidate over K seeds (1 to 32).
    #[arg(long, value_name = "K", default_value_t = 3)]
    pub seeds: u32,
    /// … and over N tick phases across one tick (1 to 64).
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub phases: u32,
    /// A measured machine model (`[machine.noise]`, from `sim-cli calibrate`).
    #[arg(long, value_name = "FILE")]
    pub noise: Option<PathBuf>,
    /// Apply this `[variants.NAME]` section first.
    #[arg(long)]
    pub variant: Option<String>,
    /// Worker threads (default: the available cores). The answer is the same for any value.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=crate::parallel::JOBS_MAX as i64))]
    pub jobs: Option<u16>,
    /// Then run the first fix on this machine, as `validate` does (`measure`'s
    /// rules: Linux, root, perf), and print measured beside predicted.
    #[arg(long)]
    pub verify: bool,
    /// With --verify: measurements of the fix (1 to 100).
    #[arg(long, value_name = "N", default_value_t = 3, requires = "verify")]
    pub verify_repeat: u32,
    /// With --verify: write the scenario's sysctls (and features) for the measurement, restored after.
    #[arg(long, requires = "verify")]
    pub apply_sysctls: bool,
    /// With --verify: the host CPUs to measure on (`measure --cpus`).
    #[arg(long, value_name = "LIST", requires = "verify")]
    pub cpus: Option<String>,
}

#[derive(Debug, Args)]
pub struct SweepArgs {
    #[command(flatten)]
    pub common: Common,
    /// A key and its values: `KEY=A..B:log:N`, `KEY=A..B:lin:N` (or
    /// `A..B:N`), or `KEY=v1,v2,...` (repeatable; the grid is the product).
    #[arg(long, value_name = "KEY=SPEC", required = true)]
    pub vary: Vec<String>,
    /// Apply this `[variants.NAME]` section to every point.
    #[arg(long)]
    pub variant: Option<String>,
    /// The task whose scheduling delays are measured (default: the file's
    /// `report.victim`).
    #[arg(long, value_name = "TASK")]
    pub target: Option<String>,
    /// The figure points are ranked by: p99, p99.9, max or avg (of the
    /// target's scheduling delays), or request-p99 (the p99 end-to-end latency
    /// of the first source whose requests cross a hop).
    #[arg(long, default_value = "p99")]
    pub metric: String,
    /// List the settings whose metric is at most this delay (e.g. `2ms`),
    /// fewest context switches first.
    #[arg(long)]
    pub budget: Option<String>,
    /// Run only the points with `index % N == K-1` (1-based K, e.g. `2/4`).
    #[arg(long, value_name = "K/N")]
    pub shard: Option<String>,
    /// Worker threads (1 to 256, as for compare; default: the available
    /// cores). The output is the same for any value.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=crate::parallel::JOBS_MAX as i64))]
    pub jobs: Option<u16>,
    /// Write `DIR/sweep.svg`: a line chart (one varied key) or heat map (two).
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `compare --variant` used to get clap's generic "unexpected argument"
    /// tip; it now says what compare does and which command runs one variant.
    #[test]
    fn compare_variant_names_the_command_that_runs_one() {
        let args: Vec<OsString> =
            ["sim-cli", "compare", "scenarios/jmx.toml", "--variant", "tuned"].iter().map(OsString::from).collect();
        let e = Cli::try_parse_from(&args).unwrap_err();
        let msg = misplaced_option(&e, &args).expect("a specific message");
        assert!(msg.contains("runs the base and every variant"), "{msg}");
        assert!(msg.contains("`sim-cli run scenarios/jmx.toml --variant tuned`"), "{msg}");
        // Other mistakes keep clap's message.
        let other: Vec<OsString> = ["sim-cli", "compare", "x.toml", "--bogus"].iter().map(OsString::from).collect();
        assert_eq!(misplaced_option(&Cli::try_parse_from(&other).unwrap_err(), &other), None);
    }

    /// `compare --jobs` takes 1 to 256; clap refuses anything else, naming
    /// the range.
    #[test]
    fn warmup_is_report_warmup_after_the_sets_and_refused_by_measure() {
        let parse = |args: &[&str]| Cli::try_parse_from(args).unwrap().resolve();
        for cmd in ["run", "compare"] {
            match parse(&["sim-cli", cmd, "x.toml", "--warmup", "100ms", "--set", "report.warmup=1ms"])
                .map(|c| c.command)
            {
                Ok(Command::Run(RunArgs { common, .. }) | Command::Compare(CompareArgs { common, .. })) => {
                    assert_eq!(common.set, vec!["report.warmup=1ms", "report.warmup=100ms"]);
                    assert_eq!(common.warmup, None);
                }
                other => panic!("{cmd}: {other:?}"),
            }
        }
        match parse(&["sim-cli", "sweep", "x.toml", "--vary", "machine.hz=100,250", "--warmup", "5ms"])
            .map(|c| c.command)
        {
            Ok(Command::Sweep(a)) => assert_eq!(a.common.set, vec!["report.warmup=5ms"]),
            other => panic!("{other:?}"),
        }
        let e = parse(&["sim-cli", "measure", "x.toml", "--warmup", "5ms"]).unwrap_err();
        assert!(e.contains("--warmup 5ms") && e.contains("simulated runs"), "{e}");
    }

    #[test]
    fn compare_jobs_is_refused_outside_1_to_256() {
        let parse = |jobs: &str| Cli::try_parse_from(["sim-cli", "compare", "x.toml", &format!("--jobs={jobs}")]);
        for bad in ["0", "257", "-1", "many"] {
            let e = parse(bad).unwrap_err();
            assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation, "{bad}");
            assert!(e.to_string().contains(&format!("invalid value '{bad}' for '--jobs <N>'")), "{e}");
        }
        assert!(parse("0").unwrap_err().to_string().contains("0 is not in 1..=256"));
        // sweep --jobs has the same range (it allowed up to 1024).
        let sweep = |jobs: &str| {
            Cli::try_parse_from(["sim-cli", "sweep", "x.toml", "--vary", "a=1,2", &format!("--jobs={jobs}")])
        };
        assert!(sweep("257").unwrap_err().to_string().contains("257 is not in 1..=256"));
        assert!(sweep("1024").is_err() && sweep("256").is_ok() && sweep("1").is_ok());
        for good in [("1", 1), ("256", 256)] {
            match parse(good.0).map(|c| c.command) {
                Ok(Command::Compare(CompareArgs { jobs, .. })) => assert_eq!(jobs, Some(good.1)),
                other => panic!("{good:?}: {other:?}"),
            }
        }
    }
}
