//! Runs `perf sched record` system-wide beside a measured workload and reads
//! the recording back as `perf sched script` text (parsed by sim-core `import::sched_text`).
//!
//! perf records with `-k CLOCK_MONOTONIC`, the clock the runner stamps its own
//! events with, so both timelines line up without any offset guessing. perf is
//! started with its events disabled (`-D -1`) and enabled through its control
//! FIFO (`--control fifo:CTL,ACK`): perf's `ack` is the proof that it is really
//! recording, which a fixed sleep could only hope for. perf 6.1's `sched
//! record` records `sched_waking` (instead of `sched_wakeup`) when the kernel
//! has it; the host test checks that wake-ups do arrive. It also records
//! `sched_stat_runtime` (perf's builtin-sched.c __cmd_record), the kernel's
//! charge of each slice of a task's CPU time, which `collect` takes a
//! thread's run time from: it needs no switch-in, which perf may lose.

use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use rustix::fs::{Mode, OFlags};
use rustix::process::{Pid, Signal};

/// How long `start` waits for perf to acknowledge that it records.
const START_TIMEOUT: Duration = Duration::from_secs(5);
/// How long `stop` waits for perf to write its file and exit after SIGINT
/// (perf 6.1 takes about 1.5 s here even for a short recording).
const STOP_TIMEOUT: Duration = Duration::from_secs(20);
/// The fields `sim_core::parse_sched_text` reads, with nanosecond timestamps.
const SCRIPT_FIELDS: &str = "comm,tid,cpu,time,event,trace";

/// What `--perf-data DIR` keeps: perf's own file, and its text for `sim-cli import`.
pub const KEPT_DATA: &str = "perf.data";
pub const KEPT_TEXT: &str = "sched.txt";
/// The fields of the kept text: `pid/tid` (the thread's process too) and the
/// `# ` header lines (host, perf version, clock), beside what `stop` reads.
const KEPT_FIELDS: &str = "comm,pid,tid,cpu,time,event,trace";

/// Directories where the kernel's trace events may be listed.
const TRACEFS_EVENTS: [&str; 2] = ["/sys/kernel/tracing/events/sched", "/sys/kernel/debug/tracing/events/sched"];

/// Whether `perf sched record` can run here; Err is a sentence naming what is missing and how to
/// get it (no perf binary: "install linux-perf (Debian) / perf (Fedora)"; perf_event_paranoid > -1
/// and not root: "run as root or `sysctl kernel.perf_event_paranoid=-1`"; no sched tracepoints…).
///
/// Recording raw tracepoint samples system-wide needs root (or CAP_PERFMON)
/// or `perf_event_paranoid` at -1 (the kernel's `perf_trace_event_perm`), so
/// that is the threshold checked, and the one the message names.
pub fn check_available() -> Result<(), String> {
    match Command::new("perf").arg("--version").stdin(Stdio::null()).output() {
        Err(e) if e.kind() == ErrorKind::NotFound => {
            return Err("no `perf` program on PATH: install linux-perf (Debian) / perf (Fedora)".to_string());
        }
        Err(e) => return Err(format!("could not run `perf --version`: {e}")),
        Ok(out) if !out.status.success() => {
            let why = String::from_utf8_lossy(&out.stderr);
            let why = why.lines().next().unwrap_or("").trim();
            let sep = if why.is_empty() { "" } else { ": " };
            return Err(format!(
                "`perf --version` failed ({}{sep}{why}): install the perf that matches this kernel, \
                 linux-perf (Debian) / perf (Fedora)",
                out.status
            ));
        }
        Ok(_) => {}
    }
    if !rustix::process::geteuid().is_root() {
        let path = "/proc/sys/kernel/perf_event_paranoid";
        let level = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {path} ({e}) to see whether perf may record as non-root"))?;
        paranoid_allows_non_root(&level)?;
    }
    let Some(dir) = TRACEFS_EVENTS.iter().map(Path::new).find(|d| d.join("sched_switch").exists()) else {
        return Err(format!(
            "no sched tracepoints ({}/sched_switch is missing): mount tracefs with \
             `mount -t tracefs nodev /sys/kernel/tracing`, or use a kernel built with CONFIG_FTRACE",
            TRACEFS_EVENTS[0]
        ));
    };
    if !dir.join("sched_waking").exists() && !dir.join("sched_wakeup").exists() {
        return Err(format!(
            "no wake-up tracepoint ({0}/sched_waking and {0}/sched_wakeup are missing): \
             wakeup delays cannot be measured on this kernel",
            dir.display()
        ));
    }
    Ok(())
}

/// Whether a non-root process may record raw scheduler tracepoints
/// system-wide, given the text of `/proc/sys/kernel/perf_event_paranoid`.
fn paranoid_allows_non_root(text: &str) -> Result<(), String> {
    let path = "/proc/sys/kernel/perf_event_paranoid";
    let level: i32 = text.trim().parse().map_err(|_| format!("{path} holds `{}`, not a number", text.trim()))?;
    if level > -1 {
        return Err(format!(
            "kernel.perf_event_paranoid is {level} and this process is not root: \
             run as root or `sysctl kernel.perf_event_paranoid=-1` \
             (system-wide scheduler tracepoints need -1 without root or CAP_PERFMON)"
        ));
    }
    Ok(())
}

/// Makes `dir` ready to keep a recording in (`--perf-data DIR`): creates it
/// and its parents when missing, and refuses a path that is not a directory,
/// cannot be created or cannot be written (a probe file, removed at once: root
/// passes permission bits but not a read-only mount). Returns whether it
/// created `dir`; Err is the sentence to follow the flag and path.
pub fn prepare_keep_dir(dir: &Path) -> Result<bool, String> {
    if dir.as_os_str().is_empty() {
        return Err("an empty path; expected a directory (created if missing)".to_string());
    }
    let existed = match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => true,
        Ok(_) => return Err("exists and is not a directory; expected a directory (created if missing)".to_string()),
        Err(_) => false,
    };
    if !existed {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create the directory ({e})"))?;
    }
    let undo = || {
        if !existed {
            let _ = std::fs::remove_dir(dir);
        }
    };
    for name in [KEPT_DATA, KEPT_TEXT] {
        if dir.join(name).is_dir() {
            undo();
            return Err(format!("holds a directory named {name}, where the recording's file {name} would go"));
        }
    }
    let probe = dir.join(format!(".schedlab-probe-{}", std::process::id()));
    match File::create(&probe) {
        Ok(_) => {
            let _ = std::fs::remove_file(&probe);
            Ok(!existed)
        }
        Err(e) => {
            undo();
            Err(format!("cannot write into the directory ({e})"))
        }
    }
}

/// A running system-wide `perf sched record`. Dropping it without `stop`
/// kills perf (by its pid) and removes its files.
pub struct PerfRecorder {
    child: Option<Child>,
    data: PathBuf,
    log: PathBuf,
    ctl: PathBuf,
    ack: PathBuf,
}

impl PerfRecorder {
    /// Spawns system-wide `perf sched record` with CLOCK_MONOTONIC timestamps (`-k CLOCK_MONOTONIC` —
    /// verify it works here, and that sched_waking is recorded; add `-e sched:sched_waking` if not),
    /// writing into `dir`, and returns once perf is really recording (bounded wait, ≤ 5 s, else Err).
    /// `limit` bounds the recording even if this process dies without
    /// stopping it (SIGKILL): perf runs under coreutils' `timeout`, which
    /// forwards `stop`'s SIGINT to it and sends SIGINT itself at the limit.
    pub fn start(dir: &Path, limit: std::time::Duration) -> anyhow::Result<PerfRecorder> {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        // perf splits `--control fifo:CTL,ACK` at the comma.
        if dir.to_string_lossy().contains(',') {
            bail!(
                "perf record: the directory {} holds a `,`, which perf's --control option cannot take",
                dir.display()
            );
        }
        let stem = format!("schedlab-perf-{}-{}", std::process::id(), SEQ.fetch_add(1, Ordering::Relaxed));
        let mut rec = PerfRecorder {
            child: None,
            data: dir.join(format!("{stem}.data")),
            log: dir.join(format!("{stem}.log")),
            ctl: dir.join(format!("{stem}.ctl")),
            ack: dir.join(format!("{stem}.ack")),
        };
        for fifo in [&rec.ctl, &rec.ack] {
            rustix::fs::mkfifoat(rustix::fs::CWD, fifo.as_path(), Mode::RUSR | Mode::WUSR)
                .with_context(|| format!("perf record: creating the control FIFO {}", fifo.display()))?;
        }
        // Read-write and non-blocking, as perf opens them: neither open waits
        // for the other end, and the command waits in the pipe until perf reads it.
        let open_fifo = |p: &Path| -> anyhow::Result<File> {
            let fd = rustix::fs::open(p, OFlags::RDWR | OFlags::NONBLOCK | OFlags::CLOEXEC, Mode::empty())
                .with_context(|| format!("perf record: opening the control FIFO {}", p.display()))?;
            Ok(File::from(fd))
        };
        let mut ctl = open_fifo(&rec.ctl)?;
        let mut ack = open_fifo(&rec.ack)?;
        let log = File::create(&rec.log)
            .with_context(|| format!("perf record: creating its log file {}", rec.log.display()))?;
        let control = format!("fifo:{},{}", rec.ctl.display(), rec.ack.display());
        let child = Command::new("timeout")
            // --kill-after beyond STOP_TIMEOUT: stop() decides when perf has taken too long.
            .args(["--signal=INT", "--kill-after=60"])
            .arg(format!("{}s", limit.as_secs().max(1)))
            .args(["perf", "sched", "record", "-k", "CLOCK_MONOTONIC", "-D", "-1", "--control", &control, "-B", "-o"])
            .arg(&rec.data)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .context("perf record: starting `perf sched record` (is perf installed? see check_available)")?;
        rec.child = Some(child);
        ctl.write_all(b"enable\n").context("perf record: writing `enable` to its control FIFO")?;

        let deadline = Instant::now() + START_TIMEOUT;
        let mut got = Vec::new();
        loop {
            let mut buf = [0u8; 64];
            match ack.read(&mut buf) {
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(e) => return Err(e).context("perf record: reading its control acknowledgement"),
            }
            if got.windows(3).any(|w| w == b"ack") {
                return Ok(rec);
            }
            if let Some(status) = rec.child.as_mut().and_then(|c| c.try_wait().ok().flatten()) {
                bail!("perf record: `perf sched record` exited ({status}) before recording: {}", rec.log_tail());
            }
            if Instant::now() >= deadline {
                bail!(
                    "perf record: no acknowledgement from `perf sched record` within {} s: {}",
                    START_TIMEOUT.as_secs(),
                    rec.log_tail()
                );
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// SIGINT to perf, bounded wait, then `perf sched script -F comm,tid,cpu,time,event,trace --ns` (or the
    /// fields that give the format you parse) on the data; returns the text. Removes the data file,
    /// unless `keep` names a directory (`--perf-data`): then it becomes `keep/perf.data`, with
    /// `keep/sched.txt` beside it (`keep_in`).
    pub fn stop(mut self, keep: Option<&Path>) -> anyhow::Result<String> {
        let Some(mut child) = self.child.take() else { bail!("perf record: not running") };
        let pid = Pid::from_child(&child);
        // perf may have died on its own: then there is nothing to signal.
        if child.try_wait().context("perf record: checking whether perf still runs")?.is_none() {
            rustix::process::kill_process(pid, Signal::INT)
                .with_context(|| format!("perf record: sending SIGINT to perf (pid {})", child.id()))?;
        }
        let deadline = Instant::now() + STOP_TIMEOUT;
        let status = loop {
            if let Some(status) = child.try_wait().context("perf record: waiting for perf to exit")? {
                break status;
            }
            if Instant::now() >= deadline {
                // `timeout` and perf share a process group (timeout's own): end both.
                let _ = rustix::process::kill_process_group(pid, Signal::KILL);
                let _ = child.kill();
                let _ = child.wait();
                bail!(
                    "perf record: perf did not exit within {} s of SIGINT; killed it: {}",
                    STOP_TIMEOUT.as_secs(),
                    self.log_tail()
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        // perf record re-raises the SIGINT it caught once its file is written.
        let by_sigint = std::os::unix::process::ExitStatusExt::signal(&status) == Some(Signal::INT.as_raw());
        if !status.success() && !by_sigint {
            bail!("perf record: perf exited with {status}: {}", self.log_tail());
        }
        let size = std::fs::metadata(&self.data).map(|m| m.len()).unwrap_or(0);
        if size == 0 {
            bail!("perf record: perf left no data in {}: {}", self.data.display(), self.log_tail());
        }
        let out = Command::new("perf")
            .args(["sched", "script", "-F", SCRIPT_FIELDS, "--ns", "-i"])
            .arg(&self.data)
            .stdin(Stdio::null())
            .output()
            .context("perf script: running `perf sched script`")?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            bail!(
                "perf script: `perf sched script -i {}` failed ({}): {}",
                self.data.display(),
                out.status,
                err.trim()
            );
        }
        // Comms are bytes to the kernel; a stray non-UTF-8 one must not lose the trace.
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if let Some(dir) = keep {
            self.keep_in(dir)?;
        }
        Ok(text)
    }

    /// Moves the recording to `dir/perf.data` (copies it across file
    /// systems; `Drop` removes the original) and writes `dir/sched.txt`:
    /// `perf sched script -F comm,pid,tid,cpu,time,event,trace --ns --header`.
    fn keep_in(&self, dir: &Path) -> anyhow::Result<()> {
        std::fs::create_dir_all(dir).with_context(|| format!("--perf-data: creating {}", dir.display()))?;
        let data = dir.join(KEPT_DATA);
        if std::fs::rename(&self.data, &data).is_err() {
            std::fs::copy(&self.data, &data)
                .with_context(|| format!("--perf-data: copying {} to {}", self.data.display(), data.display()))?;
        }
        let path = dir.join(KEPT_TEXT);
        let file = File::create(&path).with_context(|| format!("--perf-data: creating {}", path.display()))?;
        let out = Command::new("perf")
            .args(["sched", "script", "-F", KEPT_FIELDS, "--ns", "--header", "-i"])
            .arg(&data)
            .stdin(Stdio::null())
            .stdout(file)
            .output()
            .context("perf script: running `perf sched script` for --perf-data")?;
        if !out.status.success() {
            // perf 6.1 also says `'trace' not valid for hardware events. Ignoring.` on success: shown only here.
            let err = String::from_utf8_lossy(&out.stderr);
            bail!(
                "perf script: `perf sched script -F {KEPT_FIELDS} --ns --header -i {}` failed ({}): {}",
                data.display(),
                out.status,
                err.trim()
            );
        }
        Ok(())
    }

    /// The last lines perf wrote to its stderr, for error messages.
    fn log_tail(&self) -> String {
        match std::fs::read_to_string(&self.log) {
            Ok(text) => {
                let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
                let tail = lines[lines.len().saturating_sub(3)..].join(" / ");
                if tail.is_empty() { format!("perf printed nothing ({})", self.log.display()) } else { tail }
            }
            Err(e) => format!("no perf log ({}: {e})", self.log.display()),
        }
    }
}

impl Drop for PerfRecorder {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take()
            && matches!(child.try_wait(), Ok(None))
        {
            // SIGTERM to our `timeout`, which forwards it to perf; SIGKILL
            // (this child's pid only) if that has not ended it within 5 s.
            let _ = rustix::process::kill_process(Pid::from_child(&child), Signal::TERM);
            let deadline = Instant::now() + Duration::from_secs(5);
            while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            // `timeout` runs in its own process group with perf: end both.
            let _ = rustix::process::kill_process_group(Pid::from_child(&child), Signal::KILL);
            let _ = child.kill();
            let _ = child.wait();
        }
        // perf renames an existing output to `.old`; none should exist, but leave nothing behind.
        let old = self.data.with_extension("data.old");
        for path in [&self.data, &old, &self.log, &self.ctl, &self.ack] {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim_core::{SchedEvent, parse_sched_text as parse_script, summarize_sched_text as summarize};
    use std::collections::BTreeSet;

    fn monotonic_ns() -> u64 {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
        u64::try_from(t.tv_sec).unwrap_or(0) * 1_000_000_000 + u64::try_from(t.tv_nsec).unwrap_or(0)
    }

    fn scratch_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("schedlab-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("create a scratch directory");
        dir
    }

    fn leftovers(dir: &Path) -> Vec<String> {
        let entries = std::fs::read_dir(dir).expect("read the scratch directory");
        entries.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect()
    }

    #[test]
    fn records_a_sleeping_child_on_clock_monotonic() {
        if let Err(why) = check_available() {
            println!("SKIPPED: {why}");
            return;
        }
        let dir = scratch_dir("perf-record");
        let before = monotonic_ns();
        let rec = PerfRecorder::start(&dir, Duration::from_secs(60)).expect("perf starts recording");
        let before_spawn = monotonic_ns();
        let mut child = Command::new("sleep").arg("0.3").spawn().expect("spawn sleep");
        let after_spawn = monotonic_ns();
        let tid = child.id();
        child.wait().expect("sleep exits");
        let text = rec.stop(None).expect("perf stops and perf script reads its file");
        let after = monotonic_ns();
        assert_eq!(leftovers(&dir), Vec::<String>::new(), "no perf.data, log or FIFO left behind");
        let _ = std::fs::remove_dir(&dir);

        let recs = parse_script(&text).expect("perf sched script output parses");
        assert!(recs.len() > 10, "a system-wide recording has events: {}", recs.len());
        let (first, last) = (recs[0].time_ns, recs[recs.len() - 1].time_ns);
        assert!(before <= first && last <= after, "records {first}..{last} outside CLOCK_MONOTONIC {before}..{after}");
        // Tighter: the child's sched_wakeup_new happens inside fork, during spawn().
        let born = recs
            .iter()
            .find(|r| matches!(r.event, SchedEvent::WakeupNew { pid, .. } if pid == tid))
            .expect("the child's sched_wakeup_new is recorded");
        assert!(
            before_spawn <= born.time_ns && born.time_ns <= after_spawn,
            "wakeup_new at {} outside spawn() {before_spawn}..{after_spawn}",
            born.time_ns
        );
        if Path::new(TRACEFS_EVENTS[0]).join("sched_waking").exists() {
            assert!(recs.iter().any(|r| matches!(r.event, SchedEvent::Waking { .. })), "sched_waking is recorded");
        }
        let s = summarize(&recs, before, after, Some(&BTreeSet::from([tid])));
        let me = s.threads.get(&tid).expect("the child is in the summary");
        assert!(!me.wakeup_delays.is_empty(), "the sleeping child was woken at least once: {me:?}");
        assert!(me.runtime_ns > 0 && me.switches >= 1, "{me:?}");
        // A fair task that ran is charged by update_curr() (6.18 fair.c update_se()).
        if Path::new(TRACEFS_EVENTS[0]).join("sched_stat_runtime").exists() {
            assert!(me.accounted_ns.is_some_and(|a| a > 0), "sched_stat_runtime is recorded: {me:?}");
        }
    }

    #[test]
    fn keeps_the_recording_and_its_text_when_asked() {
        if let Err(why) = check_available() {
            println!("SKIPPED: {why}");
            return;
        }
        let dir = scratch_dir("perf-keep");
        let keep = dir.join("kept");
        let rec = PerfRecorder::start(&dir, Duration::from_secs(60)).expect("perf starts recording");
        let mut child = Command::new("sleep").arg("0.05").spawn().expect("spawn sleep");
        let tid = child.id();
        child.wait().expect("sleep exits");
        let text = rec.stop(Some(&keep)).expect("perf stops and its recording is kept");
        assert!(!parse_script(&text).expect("the text measure reads parses").is_empty());
        assert!(std::fs::metadata(keep.join(KEPT_DATA)).is_ok_and(|m| m.len() > 0), "perf.data is kept");
        let kept = std::fs::read_to_string(keep.join(KEPT_TEXT)).expect("sched.txt is written");
        // `--header`: perf's `# ` lines (between `# ========` rules) come first.
        assert!(kept.starts_with("# ========\n# captured on"), "{}", &kept[..kept.len().min(200)]);
        assert!(kept.contains("\n# cmdline : ") && kept.contains("sched record -k CLOCK_MONOTONIC"), "header");
        // `pid/tid` and nanoseconds: the child's own switch shows `PID/TID [CPU] SECS.NNNNNNNNN:`
        // (perf pads the tid on the right: `  18/18    [000]`).
        let own = format!(" {tid}/{tid} ");
        let line = kept.lines().find(|l| l.contains(&own) && l.contains("sched:sched_switch:"));
        let line = line.unwrap_or_else(|| panic!("no sched_switch of the child {tid} in the kept text"));
        let time = line.split("] ").nth(1).and_then(|r| r.split(':').next()).unwrap_or("");
        assert!(time.split('.').nth(1).is_some_and(|ns| ns.len() == 9), "nanosecond time in {line}");
        // Only the kept files remain: no data, log or FIFO of the recorder.
        let mut left = leftovers(&dir);
        left.sort();
        assert_eq!(left, vec!["kept".to_string()]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn keep_dir_is_created_or_refused_with_a_reason() {
        let dir = std::env::temp_dir().join(format!("schedlab-keepdir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let nested = dir.join("a/b");
        assert_eq!(prepare_keep_dir(&nested), Ok(true), "created with its parents");
        assert!(nested.is_dir());
        assert_eq!(prepare_keep_dir(&nested), Ok(false), "an existing directory is taken as it is");
        assert_eq!(leftovers(&nested), Vec::<String>::new(), "the write probe is removed");

        let file = dir.join("plain");
        std::fs::write(&file, "x").expect("write a file");
        let err = prepare_keep_dir(&file).expect_err("a file is not a directory");
        assert!(err.starts_with("exists and is not a directory"), "{err}");
        let under = file.join("sub");
        let err = prepare_keep_dir(&under).expect_err("nothing can be created under a file");
        assert!(err.starts_with("cannot create the directory ("), "{err}");

        let clash = dir.join("clash");
        std::fs::create_dir_all(clash.join(KEPT_TEXT)).expect("a directory named sched.txt");
        let err = prepare_keep_dir(&clash).expect_err("sched.txt cannot be written over a directory");
        assert!(err.contains("named sched.txt"), "{err}");
        assert!(prepare_keep_dir(Path::new("")).is_err_and(|e| e.contains("empty path")));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn paranoid_levels_for_non_root() {
        assert_eq!(paranoid_allows_non_root("-1\n"), Ok(()));
        let err = paranoid_allows_non_root("2\n").expect_err("2 forbids tracepoints to non-root");
        assert!(
            err.starts_with("kernel.perf_event_paranoid is 2 and this process is not root: run as root or"),
            "{err}"
        );
        assert!(paranoid_allows_non_root("0").is_err());
        assert!(paranoid_allows_non_root("x").is_err_and(|e| e.contains("not a number")));
    }

    #[test]
    fn start_refuses_a_directory_perf_cannot_name() {
        let err = PerfRecorder::start(Path::new("/tmp/a,b"), Duration::from_secs(60))
            .err()
            .expect("a comma in the path is refused");
        assert!(err.to_string().contains("holds a `,`"), "{err}");
    }

    #[test]
    fn dropping_a_recorder_kills_perf_and_removes_its_files() {
        if let Err(why) = check_available() {
            println!("SKIPPED: {why}");
            return;
        }
        let dir = scratch_dir("perf-drop");
        let rec = PerfRecorder::start(&dir, Duration::from_secs(60)).expect("perf starts recording");
        let pid = rec.child.as_ref().map(Child::id).expect("perf runs");
        assert!(Path::new(&format!("/proc/{pid}")).exists());
        drop(rec);
        assert!(!Path::new(&format!("/proc/{pid}")).exists(), "perf (pid {pid}) is gone and reaped");
        assert_eq!(leftovers(&dir), Vec::<String>::new());
        let _ = std::fs::remove_dir(&dir);
    }
}
