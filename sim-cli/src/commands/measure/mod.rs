//! `sim-cli measure` and `sim-cli validate`: run a scenario's workload on the
//! real kernel this process runs on, and put the measurement beside the
//! simulator's prediction. Everything here is I/O; `sim-core` stays pure and
//! only turns the plain data measured into a report (`RunReport::measured`).
//!
//! A measurement: probe the host (`host`, its RT and deadline side in
//! `host_rt`) → plan workers and refuse what the
//! host cannot reproduce (`plan`) → restore what a killed run left behind →
//! write sysctls (`sysctl`, only with `--apply-sysctls`) → create cgroups
//! (`cgroup`) → FIFOs for wake-ups and work items → worker processes
//! (`worker`, one per session and cgroup; their threads run the programs,
//! `thread`) → `perf sched record` (`perf`) → go → results → `perf sched
//! script` parsed (sim-core `import::sched_text`) → the report (`collect`, with the foreign
//! CPU time on the workload's CPUs from `foreign`). Cleanup runs on every
//! path, Ctrl-C included (`signals`).

pub mod calibrate;
pub mod cgroup;
pub mod collect;
pub mod culprits;
pub mod debugfs;
pub mod foreign;
pub mod host;
pub mod host_rt;
pub mod perf;
pub mod plan;
pub mod settings;
pub mod signals;
pub mod sysctl;
pub mod thread;
pub mod tick;
pub mod validate;
pub mod worker;

use crate::args::MeasureArgs;
use anyhow::{Context, Result, anyhow, bail};
use plan::{Plan, WorkerInput};
use sim_core::{RunReport, Scenario};
use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Gaps longer than this inside a CPU burst count as preemption (the
/// thread's own view): above timer-interrupt and VM-exit noise (a few µs),
/// below any scheduling slice.
pub const GAP_NS: u64 = 20_000;

/// The longest `measure` run accepted.
pub const DURATION_MAX_NS: u64 = 3_600_000_000_000;

/// How a measurement is asked for.
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub variant: Option<String>,
    pub sets: Vec<String>,
    /// `--duration`: replaces the scenario's duration.
    pub duration: Option<String>,
    pub cpus: Option<String>,
    pub apply_sysctls: bool,
    /// `--ignore-limiters`: measure a scenario with `[limiters]` without them.
    pub ignore_limiters: bool,
    pub io_dir: Option<PathBuf>,
    /// Do not record with perf (threads' timestamps only).
    pub no_perf: bool,
    /// `--perf-data DIR`: keep the perf recording there (`perf.data`, `sched.txt`).
    pub perf_data: Option<PathBuf>,
    /// Progress and notes on stderr.
    pub progress: bool,
}

impl Options {
    /// The options `measure` and `validate` were given on the command line.
    pub fn from_args(m: &MeasureArgs) -> Options {
        Options {
            variant: m.variant.clone(),
            sets: m.common.set.clone(),
            duration: m.duration.clone(),
            cpus: m.cpus.clone(),
            apply_sysctls: m.apply_sysctls,
            ignore_limiters: m.ignore_limiters,
            io_dir: m.io_dir.clone(),
            no_perf: m.no_perf,
            perf_data: m.perf_data.clone(),
            progress: !m.common.json,
        }
    }
}

/// `sim-cli measure`: measures `m`'s scenario and returns its report as
/// text (in `run`'s shape) or JSON.
pub fn command(m: &MeasureArgs) -> Result<String> {
    let (report, host) = measure(&m.common.file, &Options::from_args(m))?;
    if m.common.json {
        return Ok(sim_core::report_json(&report) + "\n");
    }
    Ok(with_host_rt_line(&crate::output::run_text(&report, m.per_task, None), &host.rt))
}

/// The text report with the host's RT and deadline settings (`HostRt::line`)
/// after its `host:` line (the JSON report carries them as
/// `measurement.host.rt`, `HostFacts::rt`).
fn with_host_rt_line(text: &str, rt: &host_rt::HostRt) -> String {
    let mut out = String::with_capacity(text.len() + 256);
    let mut done = false;
    for line in text.split_inclusive('\n') {
        out.push_str(line);
        if !done && line.starts_with("host: ") {
            out.push_str(&rt.line());
            out.push('\n');
            done = true;
        }
    }
    out
}

/// The scenario as `run` would build it, with `--duration` applied, and
/// the file's text (which the workers parse the same way).
pub(crate) fn scenario(file: &Path, opts: &Options) -> Result<(String, Scenario)> {
    if let Some(d) = &opts.duration {
        check_duration(d)?;
    }
    let (text, base) = crate::input::load_text(file, &all_sets(opts))?;
    let s = match &opts.variant {
        Some(v) => base.with_variant(v)?,
        None => base,
    };
    if s.spec.duration_ns > DURATION_MAX_NS {
        bail!(
            "{}: duration = {}: a measurement runs in real time; at most 1h is accepted (use --duration)",
            file.display(),
            sim_core::format_duration(s.spec.duration_ns)
        );
    }
    Ok((text, s))
}

/// `--duration VALUE`: a duration from 1 ns to 1 h, said as the flag's own
/// error (it is applied as `duration=VALUE`, whose error would name `--set`).
fn check_duration(d: &str) -> Result<()> {
    let allowed = "a duration such as 5s, 500ms or 2500us (units ns, us, ms, s), above 0 and at most 1h";
    let ns = sim_core::parse_duration(d.trim()).map_err(|why| anyhow!("--duration {d}: {why}; expected {allowed}"))?;
    if ns == 0 || ns > DURATION_MAX_NS {
        bail!(
            "--duration {d}: {}; expected {allowed} (a measurement runs in real time)",
            if ns == 0 { "the run would be empty".to_string() } else { "longer than 1h".to_string() }
        );
    }
    Ok(())
}

/// A refusal that names the scenario file, the first thing its line says.
fn in_file(file: &Path, r: plan::Refusal) -> plan::Refusal {
    plan::Refusal(format!("{}: {}", file.display(), r.0))
}

/// The flags given that let a setting go unreproduced.
fn ignored_flags(opts: &Options) -> Vec<&'static str> {
    let mut v = Vec::new();
    if opts.ignore_limiters {
        v.push(settings::IGNORE_LIMITERS_FLAG);
    }
    v
}

/// The sets a worker applies: the user's, then the duration.
fn all_sets(opts: &Options) -> Vec<String> {
    let mut sets = opts.sets.clone();
    if let Some(d) = &opts.duration {
        sets.push(format!("duration={d}"));
    }
    sets
}

/// Checks everything `measure` would refuse, without running anything.
/// Returns the file's text with what was built from it.
pub fn preflight(file: &Path, opts: &Options) -> Result<(String, Scenario, host::HostInfo, Plan)> {
    if !cfg!(target_os = "linux") {
        bail!(in_file(file, plan::Refusal(
            "`measure` runs the workload on the Linux kernel it runs on; this host is not Linux. Run it on the Linux machine you want to measure".into()
        )));
    }
    let (text, scenario) = scenario(file, opts)?;
    let host = host::probe().context("reading the host's kernel, CPUs and cgroups")?;
    let ignored = ignored_flags(opts);
    let plan = plan::plan(
        &scenario,
        &host,
        &plan::PlanOptions {
            cpus: opts.cpus.as_deref(),
            apply_sysctls: opts.apply_sysctls,
            io_dir: opts.io_dir.as_deref(),
            ignored_flags: &ignored,
        },
    )
    .map_err(|r| in_file(file, r))?;
    if !plan.groups.is_empty() {
        cgroup::Cgroups::check_permission(&host).map_err(|why| {
            anyhow!(in_file(
                file,
                plan::Refusal(format!(
                    "groups: the scenario places tasks in cgroups ({}), and this process cannot create them: {why}",
                    plan.groups.iter().map(|g| g.0.as_str()).collect::<Vec<_>>().join(", ")
                ))
            ))
        })?;
    }
    if let Some(dir) = &opts.perf_data {
        check_perf_data(dir, opts.no_perf)?;
    }
    Ok((text, scenario, host, plan))
}

/// `--perf-data DIR`, checked before anything runs: refused with `--no-perf`
/// or where perf cannot record (a measurement would otherwise fall back to
/// the threads' timestamps and keep nothing), and when DIR is not, and
/// cannot be made, a writable directory. A DIR created here is removed again
/// when perf is refused.
fn check_perf_data(dir: &Path, no_perf: bool) -> Result<()> {
    let flag = format!("--perf-data {}", dir.display());
    if no_perf {
        bail!("{flag}: keeps the perf recording, and --no-perf turns perf off; give one or the other");
    }
    let created = perf::prepare_keep_dir(dir).map_err(|why| anyhow!("{flag}: {why}"))?;
    if let Err(why) = perf::check_available() {
        if created {
            let _ = std::fs::remove_dir(dir);
        }
        bail!("{flag}: keeps the perf recording, and perf cannot record here: {why}");
    }
    Ok(())
}

/// A started worker process.
struct Worker {
    child: Child,
    stdin: ChildStdin,
    lines: mpsc::Receiver<String>,
    /// Another sender into `lines`: wakes the runner when a signal arrives.
    wake: mpsc::Sender<String>,
    pid: u32,
}

/// What `wake_on_signal` puts in each worker's line channel: not JSON, so
/// never a worker's line.
const WAKE_LINE: &str = "\u{0}signal";
/// What a worker's reader thread sends when the worker's output ends. The
/// channel cannot say so by disconnecting: `Worker::wake` keeps a sender.
const EOF_LINE: &str = "\u{0}eof";

impl Worker {
    fn send(&mut self, line: &str) -> Result<()> {
        writeln!(self.stdin, "{line}").and_then(|()| self.stdin.flush()).context("writing to a worker process")
    }

    /// The next line, or an error naming the step (a worker's `{"error"}` included).
    fn recv(&self, step: &str, timeout: Duration) -> Result<String> {
        let line = self
            .lines
            .recv_timeout(timeout)
            .ok()
            .filter(|l| l != EOF_LINE)
            .ok_or_else(|| anyhow!("worker process {} did not answer at step `{step}`", self.pid))?;
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line)
            && let Some(e) = v.get("error").and_then(|e| e.as_str())
        {
            bail!("worker process {} at step `{step}`: {e}", self.pid);
        }
        Ok(line)
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // Only our own child, by its pid; reaped so no zombie is left.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// Cleans up after runs that were killed (SIGKILL): their FIFO directories
/// (`schedlab-measure-PID` in the temp dir, PID no longer alive) and any
/// process still naming such a directory on its command line (the `timeout
/// perf sched record` that run started, which stops at its limit anyway).
/// Returns what it did.
pub fn remove_stale_runs() -> Vec<String> {
    let mut done = Vec::new();
    let Ok(rd) = std::fs::read_dir(std::env::temp_dir()) else { return done };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(pid) = name.strip_prefix("schedlab-measure-").and_then(|p| p.parse::<u32>().ok()) else { continue };
        if Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        let dir = e.path();
        // The directory and a separator: `…-12/` must not match a live `…-123/`.
        let needle = format!("{}/", dir.display());
        for p in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Some(other) = p.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
            let cmdline = std::fs::read(p.path().join("cmdline")).unwrap_or_default();
            if String::from_utf8_lossy(&cmdline).contains(&needle)
                && let Some(pid) = rustix::process::Pid::from_raw(other)
                && rustix::process::kill_process(pid, rustix::process::Signal::TERM).is_ok()
            {
                done.push(format!("ended process {other}, left running by a killed run"));
            }
        }
        if std::fs::remove_dir_all(&dir).is_ok() {
            done.push(format!("removed {}, left by a killed run", dir.display()));
        }
    }
    done
}

/// The run's FIFOs, removed with their directory on drop.
struct FifoDir(PathBuf);

impl FifoDir {
    fn create(scenario: &Scenario) -> Result<FifoDir> {
        let dir = std::env::temp_dir().join(format!("schedlab-measure-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let d = FifoDir(dir);
        let mode = rustix::fs::Mode::from_raw_mode(0o600);
        for ts in &scenario.spec.tasks {
            for i in 0..ts.count {
                let t = ts.first.0 + i;
                rustix::fs::mkfifoat(rustix::fs::CWD, d.0.join(format!("wake-{t}")), mode).context("mkfifo")?;
                if ts.program.steps.contains(&sim_core::Step::Serve) {
                    rustix::fs::mkfifoat(rustix::fs::CWD, d.0.join(format!("items-{t}")), mode).context("mkfifo")?;
                }
            }
        }
        Ok(d)
    }
}

impl Drop for FifoDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn spawn_worker(input: &WorkerInput) -> Result<Worker> {
    let exe = std::env::current_exe().context("finding sim-cli's own executable to start a worker")?;
    let mut child = Command::new(exe)
        .arg("__measure-worker")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("starting a worker process")?;
    let pid = child.id();
    let stdin = child.stdin.take().ok_or_else(|| anyhow!("worker stdin"))?;
    let stdout = child.stdout.take().ok_or_else(|| anyhow!("worker stdout"))?;
    let (tx, lines) = mpsc::channel();
    let wake = tx.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
        let _ = tx.send(EOF_LINE.to_string());
    });
    let mut w = Worker { child, stdin, lines, wake, pid };
    w.send(&serde_json::to_string(input)?)?;
    Ok(w)
}

/// Everything one measured run produced, before it becomes a report.
pub struct Raw {
    pub t0: u64,
    pub end: u64,
    pub results: Vec<thread::ThreadResult>,
    pub dropped: Vec<(u32, u64)>,
    pub perf_text: Option<String>,
    pub perf_missing: Option<String>,
    pub applied: Vec<(String, String)>,
    /// How `t0` sits on the host's tick grid.
    pub tick: tick::Alignment,
    /// Each limited group's `cpu.stat` counters over the run (read just
    /// before the start and after the last results; the difference).
    pub cpu_stats: Vec<(String, cgroup::CpuStatCounts)>,
    /// The tasks of this process and of the processes it started (workers,
    /// perf), seen while the workload ran: not foreign (`foreign::own_tids`).
    pub own_tids: BTreeSet<u32>,
}

/// Runs the scenario's workload once on this host and reports it, with
/// the host record it ran on.
pub fn measure(file: &Path, opts: &Options) -> Result<(RunReport, host::HostInfo)> {
    let (text, scenario, host, plan) = preflight(file, opts)?;
    for w in &plan.warnings {
        eprintln!("note: {w}");
    }
    let raw = run_once(file, &text, &scenario, &host, &plan, opts)?;
    let report = collect::report(&scenario, &host, &plan, raw)?;
    warn_foreign(&report);
    Ok((report, host))
}

/// The foreign-CPU warning and the perf view's notes of a measured report,
/// on stderr (with `--json` too: stdout holds the JSON alone, which carries
/// them as well).
pub fn warn_foreign(report: &RunReport) {
    let sim_core::ReportSource::Measured(m) = &report.source else { return };
    if let Some(w) = m.foreign_cpu.as_ref().and_then(|f| f.warning.as_ref()) {
        eprintln!("WARNING: {w}");
    }
    for n in &m.perf_notes {
        eprintln!("note: {n}");
    }
}

/// One run: setup, workers, perf, go, results, cleanup (on every path).
pub fn run_once(
    file: &Path,
    text: &str,
    scenario: &Scenario,
    host: &host::HostInfo,
    plan: &Plan,
    opts: &Options,
) -> Result<Raw> {
    let flag = signals::install()?;
    for g in cgroup::remove_stale().unwrap_or_default() {
        eprintln!("note: removed the cgroup {} left by a killed run", g.display());
    }
    for s in sysctl::restore_stale().unwrap_or_default() {
        eprintln!("note: restored {s}, left changed by a killed run");
    }
    for s in remove_stale_runs() {
        eprintln!("note: {s}");
    }
    let perf_missing =
        if opts.no_perf { Some("--no-perf was given".to_string()) } else { perf::check_available().err() };
    if let (Some(dir), Some(why)) = (&opts.perf_data, &perf_missing) {
        bail!("--perf-data {}: keeps the perf recording, and perf is not used: {why}", dir.display());
    }
    if let (Some(why), true) = (&perf_missing, opts.progress) {
        eprintln!("note: delays from the threads' own timestamps only; perf sched is not used: {why}");
    }

    let mut applied = Vec::new();
    let mut located = Vec::new();
    for w in &plan.settings {
        let path = sysctl::locate(&w.name, host)
            .map_err(|why| anyhow!(in_file(file, plan::Refusal(format!("{}: {why}", w.key)))))?;
        located.push((path, w.value.clone()));
        // One entry per key and value: a per-CPU setting (the fair
        // server's) is written once per CPU of the run.
        if !applied.contains(&(w.key.clone(), w.value.clone())) {
            applied.push((w.key.clone(), w.value.clone()));
        }
    }
    let guard = if located.is_empty() {
        None
    } else {
        Some(sysctl::SysctlGuard::apply(&located).context("writing the scenario's kernel settings")?)
    };
    let cgroups = if plan.groups.is_empty() {
        None
    } else {
        Some(cgroup::Cgroups::create(host, &plan.groups).context("creating the scenario's cgroups")?)
    };
    if let Some(c) = &cgroups {
        for (path, b) in &plan.bandwidth {
            c.set_bandwidth(path, b).context("writing the scenario's CPU quotas")?;
        }
    }
    let fifos = FifoDir::create(scenario)?;

    let use_perf = perf_missing.is_none();
    let result = run_workers(file, text, scenario, host, plan, opts, cgroups.as_ref(), &fifos, &flag, use_perf);

    // Cleanup on every path; the first error wins, cleanup errors are said.
    drop(fifos);
    let mut cleanup_errors = Vec::new();
    if let Some(c) = cgroups
        && let Err(e) = c.remove()
    {
        cleanup_errors.push(format!("removing the cgroups: {e:#}"));
    }
    if let Some(g) = guard
        && let Err(e) = g.restore()
    {
        cleanup_errors.push(format!("restoring the kernel settings: {e:#}"));
    }
    for e in &cleanup_errors {
        eprintln!("error: cleanup: {e}");
    }
    let interrupted = signals::interrupted();
    // Ctrl-C goes back to its default (validate's prediction, the report).
    signals::uninstall();
    let (tick, end, results, dropped, perf_text, cpu_stats, own_tids) = result?;
    let t0 = tick.t0;
    if interrupted {
        bail!("interrupted: the workload was stopped; cgroups and kernel settings were cleaned up");
    }
    let lost: u64 = results.iter().map(|r| r.overflow).sum();
    if lost > 0 {
        eprintln!(
            "note: {lost} delay samples beyond {} per thread were not kept (the figures cover the rest)",
            thread::SAMPLES_MAX
        );
    }
    let left: u64 = results.iter().map(|r| r.items_left).sum();
    if left > 0 {
        eprintln!("note: {left} work items were still queued when the run ended");
    }
    if !cleanup_errors.is_empty() {
        bail!("cleanup failed: {}", cleanup_errors.join("; "));
    }
    if let Some(why) = &tick.missing {
        eprintln!("note: {why}");
    }
    Ok(Raw { t0, end, results, dropped, perf_text, perf_missing, applied, tick, cpu_stats, own_tids })
}

type WorkersOut = (
    tick::Alignment,
    u64,
    Vec<thread::ThreadResult>,
    Vec<(u32, u64)>,
    Option<String>,
    Vec<(String, cgroup::CpuStatCounts)>,
    BTreeSet<u32>,
);

/// The `cpu.stat` counters of the plan's groups with a quota (those whose
/// `cpu.stat` a simulated report shows).
fn quota_stats(plan: &Plan, cgroups: Option<&cgroup::Cgroups>) -> Result<Vec<(String, cgroup::CpuStatCounts)>> {
    let Some(c) = cgroups else { return Ok(Vec::new()) };
    let mut out = Vec::new();
    for (path, b) in &plan.bandwidth {
        if b.quota_ns.is_some() {
            out.push((path.clone(), c.read_cpu_stat(path).with_context(|| format!("cgroup {path}: cpu.stat"))?));
        }
    }
    Ok(out)
}

#[allow(clippy::too_many_arguments)]
fn run_workers(
    file: &Path,
    text: &str,
    scenario: &Scenario,
    host: &host::HostInfo,
    plan: &Plan,
    opts: &Options,
    cgroups: Option<&cgroup::Cgroups>,
    fifos: &FifoDir,
    flag: &std::sync::atomic::AtomicBool,
    use_perf: bool,
) -> Result<WorkersOut> {
    let mut workers = start_workers(file, text, plan, opts, cgroups, fifos)?;
    let recorder = if use_perf {
        // Bounded even if this process is killed: the run, plus a minute.
        let limit = Duration::from_nanos(scenario.spec.duration_ns) + Duration::from_secs(60);
        Some(perf::PerfRecorder::start(&fifos.0, limit).context("starting perf sched record")?)
    } else {
        None
    };
    // The workload starts at least 50 ms from now (every thread waiting at
    // its barrier), on the host's tick grid where it can be read, so that
    // the host ticks where the model does (`machine.tick_offset`).
    let grid = tick::read_grid(host.hz, &plan.cpu_map);
    let tick = tick::choose_t0(thread::now_ns() + 50_000_000, grid, scenario.spec.machine.tick_offset_ns);
    let t0 = tick.t0;
    let end = t0 + scenario.spec.duration_ns;
    // cpu.stat counts from the group's creation (setup ran in it): the run's
    // share is the difference with this snapshot, taken while every thread
    // waits for t0.
    let stat_before = quota_stats(plan, cgroups)?;
    for w in &mut workers {
        w.send(&format!("go {t0} {end}"))?;
    }
    // The measurement's own tasks, before and after the run (perf and the
    // workers live through it): told apart from foreign ones.
    let mut own_tids = foreign::own_tids();
    if opts.progress {
        announce(file, scenario, workers.len());
    }
    let bar = crate::progress::bar(scenario.spec.duration_ns.div_ceil(1_000_000_000), "s", opts.progress);
    let worker::Results { mut results, dropped } = collect_results(&mut workers, t0, end, opts, flag, &bar)?;
    bar.finish_and_clear();
    own_tids.extend(foreign::own_tids());
    let cpu_stats = quota_stats(plan, cgroups)?
        .into_iter()
        .map(|(path, after)| {
            let before = stat_before.iter().find(|b| b.0 == path).map(|b| b.1).unwrap_or_default();
            (path, after.since(&before))
        })
        .collect();
    let perf_text = match recorder {
        Some(r) => {
            let keep = opts.perf_data.as_deref();
            let text = r.stop(keep).context("reading the perf sched recording")?;
            if let (Some(dir), true) = (keep, opts.progress) {
                eprintln!(
                    "note: the perf recording is kept in {0}: {1} and {2} (`sim-cli import {0}/{2}`)",
                    dir.display(),
                    perf::KEPT_DATA,
                    perf::KEPT_TEXT
                );
            }
            Some(text)
        }
        None => None,
    };
    for mut w in workers {
        let _ = w.child.wait();
    }
    results.sort_by_key(|r| r.task);
    Ok((tick, end, results, dropped, perf_text, cpu_stats, own_tids))
}

/// Starts one worker process per planned group of threads, moves each into
/// its cgroup, and waits until every thread exists.
fn start_workers(
    file: &Path,
    text: &str,
    plan: &Plan,
    opts: &Options,
    cgroups: Option<&cgroup::Cgroups>,
    fifos: &FifoDir,
) -> Result<Vec<Worker>> {
    let setup = Duration::from_secs(10);
    let mut workers = Vec::new();
    for w in &plan.workers {
        let input = WorkerInput {
            file: file.display().to_string(),
            text: text.to_string(),
            variant: opts.variant.clone(),
            sets: all_sets(opts),
            worker: w.clone(),
            cpu_map: plan.cpu_map.clone(),
            waker_cpus: plan.waker_cpus.clone(),
            fifo_dir: fifos.0.display().to_string(),
            gap_ns: GAP_NS,
        };
        workers.push(spawn_worker(&input)?);
    }
    for (w, wp) in workers.iter().zip(&plan.workers) {
        w.recv("setsid", setup)?;
        // With cgroups: the scenario's groups live under our parent, which
        // stands for the scenario's root `/`, so root tasks go into it too
        // and meet the groups as in the scenario; a root task with a
        // session goes to the host's root cgroup, where autogroup applies
        // (`task_wants_autogroup`).
        // When the scenario has sessions, every root task stays at the
        // host's root, where the autogroups are its siblings as in the model.
        let sessions = plan.workers.iter().any(|w| w.session.is_some());
        if let Some(c) = cgroups {
            let target = match (wp.group.as_str(), &wp.session) {
                ("/", Some(_)) => cgroup::CgTarget::HostRoot,
                ("/", None) if sessions => cgroup::CgTarget::HostRoot,
                ("/", None) => cgroup::CgTarget::Parent,
                (g, _) => cgroup::CgTarget::Group(g),
            };
            c.move_process(target, w.pid)
                .with_context(|| format!("moving worker {} into the cgroup for {}", w.pid, wp.group))?;
        }
    }
    for w in &mut workers {
        w.send("threads")?;
    }
    for w in &workers {
        let line = w.recv("threads", setup)?;
        let _: worker::Tids = serde_json::from_str(&line).context("reading a worker's thread ids")?;
    }
    Ok(workers)
}

/// Waits for every worker's results (bounded: the run's end plus 10 s),
/// stopping them all at a signal.
fn collect_results(
    workers: &mut [Worker],
    t0: u64,
    end: u64,
    opts: &Options,
    flag: &std::sync::atomic::AtomicBool,
    bar: &indicatif::ProgressBar,
) -> Result<worker::Results> {
    let mut results = Vec::new();
    let mut dropped = Vec::new();
    let mut stopped: Option<u64> = None;
    // A signal wakes the wait below at once; otherwise the runner sleeps
    // until a worker answers (or the deadline), so it does not wake up on
    // the workload's CPUs during the window. The lab's 2-CPU ping-pong showed
    // what a 200 ms poll did: the wakee's CPU busy with the runner, then
    // pulled to the waker's (docs/validation.md, Multi-CPU). With the
    // progress bar (a terminal, not --json) it redraws once a second.
    let wakers: Vec<mpsc::Sender<String>> = workers.iter().map(|w| w.wake.clone()).collect();
    let _signal_watch = signals::wake_on_signal(move || {
        for w in &wakers {
            let _ = w.send(WAKE_LINE.to_string());
        }
    })?;
    for i in 0..workers.len() {
        // Bounded: the run's length plus a grace period.
        let deadline = end + 10_000_000_000;
        let line = loop {
            bar.set_position(thread::now_ns().saturating_sub(t0) / 1_000_000_000);
            if flag.load(std::sync::atomic::Ordering::Relaxed) {
                match stopped {
                    None => {
                        stopped = Some(thread::now_ns());
                        for w in workers.iter_mut() {
                            let _ = w.send("stop");
                        }
                    }
                    // A thread in a long sleep does not see `stop`: after a
                    // second the workers are killed (ours, by pid, on drop).
                    Some(at) if thread::now_ns() > at + 1_000_000_000 => {
                        bail!("interrupted: the workload was stopped; cgroups and kernel settings were cleaned up")
                    }
                    Some(_) => {}
                }
            }
            let now = thread::now_ns();
            let wait = match (stopped, opts.progress) {
                // After a stop: poll, to give up a second later.
                (Some(_), _) => Duration::from_millis(200),
                (None, true) => Duration::from_secs(1),
                (None, false) => Duration::from_nanos(deadline.saturating_sub(now).max(1)),
            };
            match workers[i].lines.recv_timeout(wait) {
                Ok(l) if l == WAKE_LINE => continue,
                Ok(l) if l == EOF_LINE => bail!("worker process {} ended without results", workers[i].pid),
                Ok(l) => break l,
                Err(mpsc::RecvTimeoutError::Timeout) if thread::now_ns() < deadline => continue,
                Err(_) => bail!("worker process {} ended without results", workers[i].pid),
            }
        };
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line)
            && let Some(e) = v.get("error").and_then(|e| e.as_str())
        {
            bail!("worker process {}: {e}", workers[i].pid);
        }
        let r: worker::Results = serde_json::from_str(&line).context("reading a worker's results")?;
        results.extend(r.results);
        dropped.extend(r.dropped);
    }
    Ok(worker::Results { results, dropped })
}

/// The progress line that opens a measurement.
fn announce(file: &Path, scenario: &Scenario, workers: usize) {
    let threads = scenario.spec.tasks.iter().map(|t| t.count).sum::<u32>();
    eprintln!(
        "measuring {} for {:.1} s on this host ({} worker process{}, {} thread{})…",
        if scenario.spec.name.is_empty() { file.display().to_string() } else { scenario.spec.name.clone() },
        scenario.spec.duration_ns as f64 / 1e9,
        workers,
        if workers == 1 { "" } else { "es" },
        threads,
        if threads == 1 { "" } else { "s" },
    );
}
