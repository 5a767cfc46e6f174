//! Text rendering of the block I/O part of a report, in the shapes of btt
//! (`==== banner ====`, `ALL MIN AVG MAX N` in seconds, `%13.9f`) and
//! blkparse (the default line format, and `-t`'s per-process dispatch wait).

use sim_core::RunReport;
use sim_core::metrics::LatencySummary;
use sim_core::report::io::{DeviceIoReport, IoReport};
use crate::output::{format_max, format_max_short};
use sim_core::report::run::TaskReport;
use sim_core::time::{format_duration, format_secs};
use std::fmt::Write;

/// btt's seconds column.
fn btt_secs(ns: u64) -> String {
    format!("{:>13}", format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000))
}

/// btt's columns count finished waits only; waits still open at the end
/// follow on the same line, so a MAX of 0 next to a 19.9 s wait cannot be
/// read alone.
fn btt_row(out: &mut String, label: &str, s: &LatencySummary) {
    let open = if s.open_count == 0 {
        String::new()
    } else {
        format!("   + {}", sim_core::metrics::latency::still_waiting(s.open_count, &format_duration(s.open_max_ns)))
    };
    if s.count == 0 {
        let _ = writeln!(out, "{label:<15} {:>13} {:>13} {:>13} {:>11}{open}", "-", "-", "-", 0);
        return;
    }
    let _ = writeln!(
        out,
        "{label:<15} {} {} {} {:>11}   p50 {:>9}  p99 {:>9}  p99.9 {:>9}{open}",
        btt_secs(s.min_ns),
        btt_secs(s.avg_ns),
        btt_secs(s.max_ns),
        s.count,
        format_duration(s.p50_ns),
        format_duration(s.p99_ns),
        format_duration(s.p999_ns),
    );
}

fn banner(out: &mut String, title: &str) {
    let _ = writeln!(out, "\n==================== {title} ====================\n");
}

fn device_title(d: &DeviceIoReport) -> String {
    let behaviour = d.cfq_behaviour.map_or(String::new(), |b| format!(" {b}"));
    format!("{} ({}, {}{}, queue depth {})", d.name, d.kind, d.elevator, behaviour, d.queue_depth)
}

fn device(out: &mut String, d: &DeviceIoReport) {
    banner(out, &device_title(d));
    if !d.tunables.is_empty() {
        let list: Vec<String> = d.tunables.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = writeln!(out, "iosched: {}", list.join(" "));
    }
    let _ = writeln!(out, "{:>15} {:>13} {:>13} {:>13} {:>11}", "ALL", "MIN", "AVG", "MAX", "N");
    let _ = writeln!(out, "--------------- ------------- ------------- ------------- -----------");
    if let Some(mq) = &d.mq {
        // blk-mq: btt's Q2G, G2I and I2D before Q2D.
        btt_row(out, "Q2G", &mq.q2g);
        btt_row(out, "G2I", &mq.g2i);
        btt_row(out, "I2D", &mq.i2d);
    }
    btt_row(out, "Q2D", &d.q2d);
    btt_row(out, "D2C", &d.d2c);
    btt_row(out, "Q2C", &d.q2c);
    if let Some(mq) = &d.mq {
        let _ = writeln!(
            out,
            "
blk-mq: nr_hw_queues={} nr_requests={} tag sleeps {}",
            mq.nr_hw_queues, mq.nr_requests, mq.tag_waits
        );
    }
    let _ = writeln!(
        out,
        "\nReads  queued {:>8} ({:>10} KiB) merged {:>7} dispatched {:>8} completed {:>8}",
        d.queued[0], d.queued_kib[0], d.merged[0], d.dispatched[0], d.completed[0]
    );
    let _ = writeln!(
        out,
        "Writes queued {:>8} ({:>10} KiB) merged {:>7} dispatched {:>8} completed {:>8}",
        d.queued[1], d.queued_kib[1], d.merged[1], d.dispatched[1], d.completed[1]
    );
    if d.pending > 0 {
        let oldest = d.oldest_pending_ns.map_or("-".into(), format_duration);
        let _ = writeln!(out, "Pending at the end: {} requests, the oldest bio queued {oldest} ago", d.pending);
    }
    if let Some(w) = &d.worst {
        let _ = writeln!(
            out,
            "\nLongest Q2D: {} [{}] {} {} + {} {} {} in the {} (Q {} s, {} {} s)",
            w.comm,
            w.pid,
            w.rwbs,
            w.sector,
            w.nr_sectors,
            if w.open { "had waited" } else { "waited" },
            format_duration(w.q2d_ns),
            w.queue,
            format_secs(w.q_ns),
            if w.open { "still queued at the end," } else { "D" },
            format_secs(w.d_ns)
        );
        let mut parts: Vec<String> =
            w.meanwhile.iter().take(5).map(|(c, n, kib)| format!("{c} {n} requests / {kib} KiB")).collect();
        if w.meanwhile.len() > 5 {
            parts.push(format!("{} more", w.meanwhile.len() - 5));
        }
        let _ = writeln!(
            out,
            "  meanwhile the elevator dispatched {} requests{}: {}",
            w.dispatched_meanwhile,
            if w.meanwhile_truncated { " (breakdown of the latest only)" } else { "" },
            if parts.is_empty() { "nothing".into() } else { parts.join(", ") }
        );
    }
}

fn processes(out: &mut String, io: &IoReport) {
    banner(out, "Per Process");
    let _ = writeln!(
        out,
        "{:<24} {:<8} {:>7} {:>10} {:>10} {:>10} {:>10} {:>10} {:>14}",
        "comm (pid)", "device", "bios", "Q2D avg", "Q2D p99", "Q2D max", "Q2C p99", "Q2C max", "dispatch wait"
    );
    for p in &io.processes {
        let wait = match p.pending_q2d_ns {
            Some(open) if open > p.dispatch_wait_max_ns => format!("{} (open)", format_duration(open)),
            _ => format!("{} us", p.dispatch_wait_max_ns / 1000),
        };
        let _ = writeln!(
            out,
            "{:<24} {:<8} {:>7} {:>10} {:>10} {:>10} {:>10} {:>10} {:>14}",
            format!("{} ({})", p.comm, p.pid),
            p.device,
            p.bios,
            format_duration(p.q2d.avg_ns),
            format_duration(p.q2d.p99_ns),
            format_max_short(&p.q2d),
            format_duration(p.q2c.p99_ns),
            format_max_short(&p.q2c),
            wait
        );
    }
}

fn blocked_tasks(out: &mut String, r: &RunReport) {
    let blocked: Vec<_> = r.tasks.iter().filter(|t| t.io_wait.is_some() || t.io_wait_open_ns.is_some()).collect();
    if blocked.is_empty() {
        return;
    }
    let _ =
        writeln!(out, "\nTasks blocked on I/O (D state): the wait, and the wait plus the scheduling delay after it");
    let _ = writeln!(
        out,
        "  {:<22} {:>8} {:>10} {:>10} {:>10} {:>12} {:>14}",
        "comm", "waits", "avg", "p99", "max", "stall max", "open at end"
    );
    for t in blocked {
        let w = t.io_wait.unwrap_or_default();
        let stall = t.io_stall.map_or("-".into(), |s| format_max_short(&s));
        let _ = writeln!(
            out,
            "  {:<22} {:>8} {:>10} {:>10} {:>10} {:>12} {:>14}",
            t.comm,
            w.count,
            format_duration(w.avg_ns),
            format_duration(w.p99_ns),
            format_max_short(&w),
            stall,
            t.io_wait_open_ns.map_or("-".into(), format_duration)
        );
    }
}

/// The I/O sections of `sim-cli run`.
pub fn io_text(r: &RunReport, out: &mut String) {
    let Some(io) = &r.io else { return };
    for d in &io.devices {
        device(out, d);
    }
    processes(out, io);
    blocked_tasks(out, r);
}

/// blkparse's default lines for the events up to each device's longest Q2D.
pub fn blkparse_text(r: &RunReport) -> String {
    let mut out = String::new();
    let Some(io) = &r.io else { return out };
    for d in &io.devices {
        let Some(w) = &d.worst else { continue };
        let _ = writeln!(
            out,
            "# {}: the last {} blktrace events up to the dispatch of the longest Q2D ({} [{}] {} + {})",
            d.name,
            w.log.len(),
            w.comm,
            w.pid,
            w.sector,
            w.nr_sectors
        );
        for l in &w.log {
            // "%3d,%-3d %2d %8d %5d.%09lu %5u %2s %3s " (blkparse_fmt.c); CPU is not tracked: 0.
            let _ = writeln!(
                out,
                "{:>3},{:<3} {:>2} {:>8} {:>5}.{:09} {:>5} {:>2} {:>3} {} + {} [{}]",
                d.dev_t.0,
                d.dev_t.1,
                0,
                l.seq,
                l.at_ns / 1_000_000_000,
                l.at_ns % 1_000_000_000,
                l.pid,
                l.action,
                l.rwbs,
                l.sector,
                l.nr_sectors,
                l.comm
            );
        }
    }
    out
}

/// The longest of finished waits (`done`) and a wait still open at the end,
/// as `crate::output::format_max` writes it.
fn longest(done: u64, open: Option<u64>) -> String {
    let s = LatencySummary { max_ns: done, ..LatencySummary::default() };
    format_max(&open.map_or(s, |o| s.with_open(1, o)))
}

/// Rows `compare` adds for I/O scenarios: per device the elevator and its
/// worst Q2D and Q2C, per process the worst dispatch wait, and the victim's
/// I/O wait and stall. Every maximum counts the waits still open at the end.
pub fn compare_rows(runs: &[RunReport], line: &mut dyn FnMut(&str, Vec<String>)) {
    let Some(first) = runs[0].io.as_ref() else { return };
    fn dev(r: &RunReport, i: usize) -> Option<&DeviceIoReport> {
        r.io.as_ref().and_then(|io| io.devices.get(i))
    }
    for (i, d0) in first.devices.iter().enumerate() {
        line(
            &format!("{} elevator", d0.name),
            runs.iter()
                .map(|r| {
                    dev(r, i).map_or("-".into(), |d| match d.cfq_behaviour {
                        Some(b) => format!("{} {b}", d.elevator),
                        None => d.elevator.to_string(),
                    })
                })
                .collect(),
        );
        let cell = |f: &dyn Fn(&DeviceIoReport) -> String| {
            runs.iter().map(|r| dev(r, i).map_or("-".into(), f)).collect::<Vec<_>>()
        };
        line(&format!("  {} max Q2D", d0.name), cell(&|d| format_max(&d.q2d)));
        line(&format!("  {} p99 Q2C", d0.name), cell(&|d| format_duration(d.q2c.p99_ns)));
        line(&format!("  {} max Q2C", d0.name), cell(&|d| format_max(&d.q2c)));
    }
    let mut comms: Vec<&str> = first.processes.iter().map(|p| p.comm.as_str()).collect();
    comms.dedup();
    for comm in comms {
        line(
            &format!("dispatch wait max: {comm}"),
            runs.iter()
                .map(|r| {
                    let ps = r.io.as_ref().map(|io| io.processes.iter().filter(|p| p.comm == comm).collect::<Vec<_>>());
                    let Some(ps) = ps else { return "-".into() };
                    let done = ps.iter().map(|p| p.dispatch_wait_max_ns).max().unwrap_or(0);
                    longest(done, ps.iter().filter_map(|p| p.pending_q2d_ns).max())
                })
                .collect(),
        );
    }
    let victim_io = |r: &RunReport| r.tasks.iter().filter(|t| t.name == r.victim.name).cloned().collect::<Vec<_>>();
    // The victim's instances merged: the longest ended wait, and the open ones.
    let merged = |r: &RunReport, f: &dyn Fn(&TaskReport) -> Option<LatencySummary>| {
        let mut all = LatencySummary::default();
        for s in victim_io(r).iter().filter_map(f) {
            all.max_ns = all.max_ns.max(s.max_ns);
            all.add_open_of(&s);
        }
        format_max(&all)
    };
    if runs.iter().any(|r| victim_io(r).iter().any(|t| t.io_wait.is_some())) {
        line("victim max I/O wait (D state)", runs.iter().map(|r| merged(r, &|t| t.io_wait)).collect());
        line("victim max I/O stall (wait + sched)", runs.iter().map(|r| merged(r, &|t| t.io_stall)).collect());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfq_starvation() -> Vec<RunReport> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios/cfq-starvation.toml");
        let s = sim_core::Scenario::from_toml("cfq-starvation.toml", &std::fs::read_to_string(path).unwrap()).unwrap();
        [None, Some("cfq-4.4"), Some("deadline")]
            .into_iter()
            .map(|v| sim_core::run(&v.map_or_else(|| s.clone(), |v| s.with_variant(v).unwrap())))
            .collect()
    }

    /// The cells of the compare row labelled `label` (one per run).
    fn row(text: &str, label: &str) -> Vec<String> {
        let line = text.lines().find(|l| l.trim_start().starts_with(label)).unwrap_or_else(|| panic!("{label}:\n{text}"));
        let cells = &line[line.find(label).unwrap() + label.len()..];
        // Cells are right-aligned and may contain single spaces: split on runs of two or more.
        cells.split("  ").map(str::trim).filter(|c| !c.is_empty()).map(String::from).collect()
    }

    /// Under 4.4's CFQ the flusher's metadata write, queued at 0.1 s, is
    /// never dispatched: at the end of the 20 s run it has waited 19.9 s.
    /// Every maximum of that run must say so, not show the 0 ns of the
    /// commit log's writes (the only Q2D samples that ended).
    #[test]
    fn compare_maxima_count_the_waits_still_open_at_the_end() {
        let runs = cfq_starvation();
        let text = crate::output::compare_text(&runs);
        let open = "> 19.9s, still waiting at end";
        let q2d = row(&text, "nvme0 max Q2D");
        assert_eq!(q2d.len(), 3, "{q2d:?}");
        assert_eq!(q2d[1], open, "{text}");
        assert_eq!(row(&text, "nvme0 max Q2C")[1], open, "{text}");
        assert_eq!(row(&text, "dispatch wait max: xfsaild")[1], open, "{text}");
        // The blocked thread asked for the buffer at 0.101 s; its wait and its stall are open too.
        for label in ["victim max I/O wait (D state)", "victim max I/O stall (wait + sched)"] {
            let cell = &row(&text, label)[1];
            assert!(cell.starts_with("> 19.89") && cell.ends_with(", still waiting at end"), "{label}: {cell}\n{text}");
        }
        // Runs whose waits all ended keep plain maxima.
        assert!(!row(&text, "nvme0 max Q2D")[2].contains("still waiting"), "{text}");
        // The run's own btt table names the open Q2Ds next to its MAX column.
        let mut out = String::new();
        io_text(&runs[1], &mut out);
        let q2d_line = out.lines().find(|l| l.starts_with("Q2D ")).unwrap();
        let d = &runs[1].io.as_ref().unwrap().devices[0];
        assert!(
            q2d_line.ends_with(&format!("+ {} still waiting at end, oldest 19.9s", d.q2d.open_count)),
            "{q2d_line}"
        );
    }

    /// A task still runnable at the end (never picked) has an open
    /// scheduling delay: the victim's max delay rows count it.
    #[test]
    fn compare_victim_delay_counts_a_wait_still_open() {
        let toml = "schema = 1\nseed = 1\nduration = \"9500us\"\n[kernel]\nversion = \"4.4\"\n[machine]\ncpus = 1\nhz = 100\n[features]\nWAKEUP_PREEMPTION = false\n[report]\nvictim = \"s\"\n[[tasks]]\nname = \"hog\"\nprogram = [{ run = \"1s\" }]\n[[tasks]]\nname = \"s\"\nprogram = [{ sleep_until = \"9ms\" }, { run = \"50us\" }]\n";
        let r = sim_core::run(&sim_core::Scenario::from_toml("t.toml", toml).unwrap());
        // The hog holds the only CPU for the whole run (no tick before 10 ms, no wakeup preemption).
        assert_eq!(r.tasks[1].open_wait_ns, Some(9_500_000));
        let text = crate::output::compare_text(&[r]);
        for label in ["victim max wakeup delay", "victim max delay (wakeup or preempt)"] {
            assert_eq!(row(&text, label), ["> 9.5ms, still waiting at end"], "{text}");
        }
    }
}
