//! Text rendering of reports, in the shapes engineers know from `perf sched
//! latency` and `perf sched timehist`.

use sim_core::RunReport;
use sim_core::metrics::LatencySummary;
use sim_core::report::run::{HistoryRow, TaskReport};
use sim_core::time::{format_duration, format_ms, format_secs as secs};
use std::fmt::Write;

fn pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "0.0%".into();
    }
    let tenths = (u128::from(part) * 1000 + u128::from(whole) / 2) / u128::from(whole);
    format!("{}.{}%", tenths / 10, tenths % 10)
}

fn header(r: &RunReport, out: &mut String) {
    if let sim_core::report::measured::ReportSource::Measured(m) = &r.source {
        crate::measure::text::header(r, m, out);
        tasks_line(r, out);
        return;
    }
    let s = &r.settings;
    let _ = writeln!(
        out,
        "schedlab {} · scenario {}{} · seed {} · simulated {} s · {} events · stop: {}",
        env!("CARGO_PKG_VERSION"),
        if r.scenario.is_empty() { "(unnamed)" } else { &r.scenario },
        r.variant.as_ref().map_or(String::new(), |v| format!(" (variant {v})")),
        r.seed,
        secs(r.sim_time_ns),
        r.events,
        r.stop.name(),
    );
    if let Some(w) = sim_core::partial_warning(r) {
        let _ = writeln!(out, "warning: {w}");
    }
    if s.warmup_ns > 0 {
        // The figures the warm-up does not filter (README § A tour of the
        // output), named so the header never claims more than it did.
        let whole: Vec<&str> = [
            (r.io.is_some(), "block devices' blktrace figures"),
            (!r.userspace_io.is_empty(), "userspace I/O queues"),
            (!r.limiters.is_empty(), "limiters"),
        ]
        .into_iter()
        .filter_map(|(has, what)| has.then_some(what))
        .collect();
        let unfiltered =
            if whole.is_empty() { String::new() } else { format!("; the {} cover the whole run", whole.join(", ")) };
        let _ = writeln!(
            out,
            "warm-up: first {} excluded from every scheduling statistic ([report] warmup; waits and responses count if they ended after it){unfiltered}",
            format_duration(s.warmup_ns)
        );
    }
    let _ = writeln!(
        out,
        "kernel model: Linux {} ({}; [kernel] version)",
        s.kernel.version(),
        s.kernel.fair_class().to_uppercase()
    );
    let _ = writeln!(
        out,
        "machine: {}, HZ={} (tick {}), context switch {}",
        s.machine.describe(),
        s.hz,
        format_duration(s.tick_ns),
        format_duration(s.context_switch_ns)
    );
    let m = &s.machine;
    if m.tick_offset_ns != 0 || m.wakeup_latency.is_some() {
        let mut parts = Vec::new();
        if m.tick_offset_ns != 0 {
            parts.push(format!("ticks at {} + k x tick", format_duration(m.tick_offset_ns)));
        }
        if let Some(d) = &m.wakeup_latency {
            parts.push(format!("wake-up latency {d} (modelled machine noise, reported apart below)"));
        }
        let _ = writeln!(out, "machine timing: {}", parts.join("; "));
    }
    // The model's own settings (Settings::model_settings, shared with the
    // charts' footers and compare); every feature is on the line below.
    let settings: Vec<String> =
        s.model_settings().iter().filter(|(k, _)| k != "features").map(|(k, v)| format!("{k}={v}")).collect();
    let _ = writeln!(out, "{} (effective): {}", s.kernel.fair_class(), settings.join(", "));
    let features: Vec<(&str, bool)> =
        if s.kernel.is_eevdf() { s.eevdf_features.iter(s.kernel) } else { s.features.iter().collect() };
    tasks_line(r, out);
    let on: Vec<&str> = features.iter().filter(|f| f.1).map(|f| f.0).collect();
    let off: Vec<&str> = features.iter().filter(|f| !f.1).map(|f| f.0).collect();
    let _ = writeln!(out, "features: {} (off: {})", on.join(" "), off.join(" "));
}

/// Each task declaration as it ran (instances, nice, policy, CPUs, group),
/// so a `--set tasks.NAME.nice=5` shows in the header as `--set machine.hz`
/// does in the machine line.
fn tasks_line(r: &RunReport, out: &mut String) {
    let mut decls: Vec<(&str, Vec<&TaskReport>)> = Vec::new();
    for t in &r.tasks {
        match decls.iter_mut().find(|(n, _)| *n == t.name) {
            Some((_, v)) => v.push(t),
            None => decls.push((&t.name, vec![t])),
        }
    }
    let parts: Vec<String> = decls
        .iter()
        .map(|(name, ts)| {
            let first = ts[0];
            let mut p = if ts.len() > 1 { format!("{name}×{}", ts.len()) } else { name.to_string() };
            let _ = write!(p, " nice {}", first.nice);
            if first.policy != "normal" {
                let _ = write!(p, " {}", first.policy);
            }
            if ts.iter().all(|t| t.cpus_allowed == first.cpus_allowed) {
                let _ = write!(p, " cpus {}", first.cpus_allowed);
            } else {
                let last = ts[ts.len() - 1];
                let _ = write!(p, " cpus {}…{} (one list each)", first.cpus_allowed, last.cpus_allowed);
            }
            if first.group != "/" {
                let _ = write!(p, " group {}", first.group);
            }
            p
        })
        .collect();
    let _ = writeln!(out, "tasks: {}", parts.join(" · "));
}

/// Instances merged by declared name, as `perf sched latency` merges by comm.
struct Row {
    label: String,
    runtime_ns: u64,
    switches: u64,
    count: u64,
    delay_sum: u128,
    max_ns: u64,
    max_at_ns: u64,
}

fn rows(r: &RunReport, per_task: bool) -> Vec<Row> {
    let mut out: Vec<(String, Vec<&TaskReport>)> = Vec::new();
    // Row of each key: with --per-task every task has its own (thousands).
    let mut index: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for t in &r.tasks {
        let key = if per_task { format!("{}:{}", t.comm, t.tid) } else { t.name.clone() };
        let i = *index.entry(key.clone()).or_insert_with(|| {
            out.push((key, Vec::new()));
            out.len() - 1
        });
        out[i].1.push(t);
    }
    out.into_iter()
        .map(|(key, ts)| {
            let worst = ts.iter().max_by_key(|t| (t.delay.max_ns, std::cmp::Reverse(t.tid))).expect("non-empty");
            Row {
                label: if per_task || ts.len() == 1 { key } else { format!("{key}:({})", ts.len()) },
                runtime_ns: ts.iter().map(|t| t.runtime_ns).sum(),
                switches: ts.iter().map(|t| t.switches).sum(),
                count: ts.iter().map(|t| t.delay.count).sum(),
                delay_sum: ts.iter().map(|t| u128::from(t.delay.avg_ns) * u128::from(t.delay.count)).sum(),
                max_ns: worst.delay.max_ns,
                max_at_ns: worst.delay.max_at_ns,
            }
        })
        .collect()
}

fn latency_table(r: &RunReport, per_task: bool, out: &mut String) {
    let line = "-".repeat(112);
    let _ = writeln!(out, "\n {line}");
    let _ = writeln!(
        out,
        "  {:<24}|   Runtime ms  | Switches | Avg delay ms    | Max delay ms    | Max delay at     |",
        "Task"
    );
    let _ = writeln!(out, " {line}");
    let mut rows = rows(r, per_task);
    // perf's default sort: avg, max, switch, runtime (descending).
    rows.sort_by(|a, b| {
        let avg = |x: &Row| if x.count == 0 { 0 } else { x.delay_sum / u128::from(x.count) };
        avg(b).cmp(&avg(a)).then(b.max_ns.cmp(&a.max_ns)).then(b.switches.cmp(&a.switches)).then(a.label.cmp(&b.label))
    });
    let (mut rt, mut sw) = (0u64, 0u64);
    for row in &rows {
        let avg = if row.count == 0 { 0 } else { (row.delay_sum / u128::from(row.count)) as u64 };
        rt += row.runtime_ns;
        sw += row.switches;
        let _ = writeln!(
            out,
            "  {:<24}| {:>10} ms | {:>8} | avg: {:>7} ms | max: {:>7} ms | at: {:>11} s |",
            row.label,
            format_ms(row.runtime_ns),
            row.switches,
            format_ms(avg),
            format_ms(row.max_ns),
            secs(row.max_at_ns),
        );
    }
    let _ = writeln!(out, " {line}");
    let _ = writeln!(out, "  {:<24}| {:>10} ms | {:>8} |", "TOTAL:", format_ms(rt), sw);
    // Waits still open at the end are not in the statistics above; name the
    // ones longer than the task's worst completed delay.
    for t in &r.tasks {
        if let Some(w) = t.open_wait_ns
            && w > t.delay.max_ns
        {
            let _ = writeln!(
                out,
                "  note: {} was still waiting at the end, for {} ms (since {} s), longer than its max delay",
                t.comm,
                format_ms(w),
                secs(r.sim_time_ns - w)
            );
        }
    }
}

fn summary_line(label: &str, s: &LatencySummary) -> String {
    format!(
        "  {label:<22} n={:<9} avg {:>9}  p50 {:>9}  p90 {:>9}  p99 {:>9}  p99.9 {:>9}  max {:>9}",
        s.count,
        format_duration(s.avg_ns),
        format_duration(s.p50_ns),
        format_duration(s.p90_ns),
        format_duration(s.p99_ns),
        format_duration(s.p999_ns),
        format_max_short(s)
    )
}

fn requests(r: &RunReport, out: &mut String) {
    let serving: Vec<&TaskReport> = r.tasks.iter().filter(|t| t.response.is_some() && t.overruns.is_none()).collect();
    if serving.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nRequests: response time from arrival to completion");
    let mut names: Vec<&str> = serving.iter().map(|t| t.name.as_str()).collect();
    names.dedup();
    for name in names {
        let group: Vec<&&TaskReport> = serving.iter().filter(|t| t.name == name).collect();
        let dropped: u64 = group.iter().map(|t| t.dropped_items).sum();
        if name == r.victim.name
            && let Some(resp) = &r.victim.response
        {
            let _ = writeln!(out, "{}", summary_line(name, resp));
        } else {
            for t in group {
                let _ = writeln!(out, "{}", summary_line(&t.comm, t.response.as_ref().expect("filtered")));
            }
        }
        if dropped > 0 {
            let _ = writeln!(out, "  {name}: {dropped} items dropped (queue full)");
        }
    }
}

/// Periodic tasks (`sleep_until`): each job's response time, from its release
/// (the period boundary) to its completion (the next `sleep_until`), and the
/// jobs that overran (completed at or after their next release).
fn periodic_jobs(r: &RunReport, out: &mut String) {
    let periodic: Vec<&TaskReport> = r.tasks.iter().filter(|t| t.overruns.is_some()).collect();
    if periodic.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nPeriodic jobs: response time from release (period boundary) to completion");
    let mut names: Vec<&str> = periodic.iter().map(|t| t.name.as_str()).collect();
    names.dedup();
    for name in names {
        let group: Vec<&&TaskReport> = periodic.iter().filter(|t| t.name == name).collect();
        let overruns: u64 = group.iter().filter_map(|t| t.overruns).sum();
        if name == r.victim.name
            && let Some(resp) = &r.victim.response
        {
            let _ = writeln!(out, "{}", summary_line(name, resp));
        } else {
            for t in &group {
                let _ = writeln!(out, "{}", summary_line(&t.comm, t.response.as_ref().expect("periodic")));
            }
        }
        let _ = writeln!(
            out,
            "  {name}: {overruns} overrun{} (job still running at its next release)",
            if overruns == 1 { "" } else { "s" }
        );
    }
}

/// Requests that cross thread hops (`forward`): per source, end-to-end
/// latency against the scheduling delay of the tasks on its route, and the
/// amplification (p99 latency / p99 scheduling delay).
fn request_hops(r: &RunReport, out: &mut String) {
    if r.requests.is_empty() {
        return;
    }
    let line = "-".repeat(112);
    let _ = writeln!(
        out,
        "
Requests across hops: arrival at the first task to the end of the sink's burst"
    );
    let _ = writeln!(out, " {line}");
    let _ = writeln!(
        out,
        "  {:<24}| Hops | Completed | In flight | Dropped | p99 latency ms | p99 sched ms | Amplification |",
        "Source"
    );
    let _ = writeln!(out, " {line}");
    for q in &r.requests {
        let ampl = q.amplification_x100.map_or("-".to_string(), |a| format!("{}.{:02}x", a / 100, a % 100));
        let _ = writeln!(
            out,
            "  {:<24}| {:>4} | {:>9} | {:>9} | {:>7} | {:>14} | {:>12} | {:>13} |",
            q.source,
            q.route.len() - 1,
            q.completed,
            q.in_flight,
            q.dropped,
            format_ms(q.latency.p99_ns),
            format_ms(q.sched_delay_p99_ns),
            ampl
        );
    }
    let _ = writeln!(out, " {line}");
    for q in &r.requests {
        let _ = writeln!(out, "{}", summary_line(&q.source, &q.latency));
        let hops: Vec<String> = q
            .route
            .iter()
            .zip(&q.hop_delay_p99_ns)
            .map(|(t, &p)| format!("{t} (sched p99 {})", format_duration(p)))
            .collect();
        let _ = writeln!(out, "    route: {}", hops.join(" → "));
    }
}

/// CPUs shown one line each without `--cpus`: more would drown the report.
const CPU_LINES_MAX: usize = 8;

/// Per CPU: utilisation, context switches, tasks moved in and out, and the
/// balance gap (time with tasks waiting while another CPU of its balancing
/// span idled). One line per CPU for small machines or the CPUs `selected`
/// (`--cpus`); otherwise the compact utilisation listing and a summary.
fn cpus(r: &RunReport, selected: Option<&[u16]>, out: &mut String) {
    if let sim_core::report::measured::ReportSource::Measured(m) = &r.source
        && m.delays_from != "perf"
    {
        let _ = writeln!(out, "\nCPUs: (per-CPU figures come from perf sched, which was not used)");
        return;
    }
    let moved: u64 = r.cpus.iter().map(|c| c.migrations_in).sum();
    if selected.is_some() || r.cpus.len() <= CPU_LINES_MAX {
        let _ = writeln!(out, "\nCPUs: utilisation, context switches, migrations and balance gap");
        // A measured report names the host CPU too (`cpu0 (host cpu1)`).
        let label = |c: u16| crate::measure::text::cpu_label(r, c, "cpu");
        let width = r.cpus.iter().map(|c| label(c.cpu).chars().count()).max().unwrap_or(0).max(7);
        let _ = writeln!(
            out,
            "  {:<width$} {:>6} {:>9} {:>8} {:>8} {:>16}",
            "cpu", "busy", "switches", "migr in", "migr out", "balance gap ms"
        );
        for c in r.cpus.iter().filter(|c| selected.is_none_or(|s| s.contains(&c.cpu))) {
            let _ = writeln!(
                out,
                "  {:<width$} {:>6} {:>9} {:>8} {:>8} {:>16}",
                label(c.cpu),
                pct(c.busy_ns, r.sim_time_ns),
                c.switches,
                c.migrations_in,
                c.migrations_out,
                format_ms(c.balance_gap_ns)
            );
        }
        return;
    }
    let _ = writeln!(out, "\nCPUs: utilisation and context switches (one line per CPU: --cpus LIST)");
    let mut line = String::new();
    for (i, c) in r.cpus.iter().enumerate() {
        let name = crate::measure::text::cpu_label(r, c.cpu, "cpu");
        let _ = write!(line, "  {name:<6} {:>6} {:>8} sw", pct(c.busy_ns, r.sim_time_ns), c.switches);
        if i % 4 == 3 || i + 1 == r.cpus.len() {
            let _ = writeln!(out, "{}", line.trim_end());
            line.clear();
        }
    }
    let mut by_busy: Vec<(u64, u16)> = r.cpus.iter().map(|c| (c.busy_ns, c.cpu)).collect();
    by_busy.sort_unstable();
    let (lo, mid, hi) = (by_busy[0], by_busy[by_busy.len() / 2], by_busy[by_busy.len() - 1]);
    let _ = writeln!(
        out,
        "  busy: min {} (cpu{}) · median {} · max {} (cpu{})",
        pct(lo.0, r.sim_time_ns),
        lo.1,
        pct(mid.0, r.sim_time_ns),
        pct(hi.0, r.sim_time_ns),
        hi.1
    );
    let gap: u64 = r.cpus.iter().map(|c| c.balance_gap_ns).sum();
    let mut by_gap: Vec<(u64, u16)> =
        r.cpus.iter().filter(|c| c.balance_gap_ns > 0).map(|c| (c.balance_gap_ns, c.cpu)).collect();
    by_gap.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let top: Vec<String> = by_gap.iter().take(3).map(|(ns, c)| format!("cpu{c} {} ms", format_ms(*ns))).collect();
    let _ = writeln!(
        out,
        "  balance gap (tasks waiting while a CPU of the span idled): {} ms in all{}",
        format_ms(gap),
        if top.is_empty() { String::new() } else { format!("; most on {}", top.join(", ")) }
    );
    if moved > 0 {
        let most = |f: fn(&sim_core::report::run::CpuReport) -> u64| {
            r.cpus.iter().max_by_key(|c| (f(c), std::cmp::Reverse(c.cpu))).map_or((0, 0), |c| (c.cpu, f(c)))
        };
        let (i, n_in) = most(|c| c.migrations_in);
        let (o, n_out) = most(|c| c.migrations_out);
        let _ = writeln!(out, "  migrations: {moved}; most in: cpu{i} ({n_in}); most out: cpu{o} ({n_out})");
    }
}

/// Tasks shown in the migrations section, most moved first.
const MIGRATION_ROWS_MAX: usize = 20;

/// A migrations row: label, instances merged, `(cause, count)`.
type MigrationRow = (String, u32, Vec<(&'static str, u64)>);

/// Per task (merged by declared name unless `per_task`), how often it
/// changed CPU and why; only tasks that moved, and only if any did.
fn migrations(r: &RunReport, per_task: bool, out: &mut String) {
    let mut rows: Vec<MigrationRow> = Vec::new();
    // Row of each key: thousands of tasks may move.
    let mut index: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for t in r.tasks.iter().filter(|t| !t.migrations.is_empty()) {
        let key = if per_task { format!("{}:{}", t.comm, t.tid) } else { t.name.clone() };
        let i = *index.entry(key.clone()).or_insert_with(|| {
            rows.push((key, 0, Vec::new()));
            rows.len() - 1
        });
        let row = &mut rows[i];
        row.1 += 1;
        for &(cause, n) in &t.migrations {
            match row.2.iter_mut().find(|(c, _)| *c == cause) {
                Some(x) => x.1 += n,
                None => row.2.push((cause, n)),
            }
        }
    }
    if rows.is_empty() {
        return;
    }
    let order: Vec<&str> = sim_core::sched::migrate::MigrateCause::ALL.iter().map(|c| c.name()).collect();
    let total = |row: &MigrationRow| row.2.iter().map(|x| x.1).sum::<u64>();
    rows.sort_by(|a, b| total(b).cmp(&total(a)).then_with(|| a.0.cmp(&b.0)));
    let _ = writeln!(out, "\nMigrations (sched_migrate_task) per task, by cause");
    for row in rows.iter().take(MIGRATION_ROWS_MAX) {
        let mut causes = row.2.clone();
        causes.sort_by_key(|(c, _)| order.iter().position(|o| o == c));
        let list: Vec<String> = causes.iter().map(|(c, n)| format!("{c} {n}")).collect();
        let label = if per_task || row.1 == 1 { row.0.clone() } else { format!("{}:({})", row.0, row.1) };
        let _ = writeln!(out, "  {:<24} {:>8}  {}", label, total(row), list.join(", "));
    }
    if rows.len() > MIGRATION_ROWS_MAX {
        let _ = writeln!(out, "  … {} more moved", rows.len() - MIGRATION_ROWS_MAX);
    }
}

/// Task groups: shares, CPU time, and the weight their per-CPU entities had
/// when their tasks woke (what they competed with at the level above).
fn groups(r: &RunReport, out: &mut String) {
    if r.source.name() == "measured" {
        measured_quota(r, out);
        return;
    }
    let s = &r.settings;
    let _ = writeln!(
        out,
        "\nTask groups (autogroup {}; group entity weight = calc_cfs_shares, {} load)",
        if s.autogroup { "on" } else { "off" },
        s.group_load
    );
    if r.groups.is_empty() {
        let _ = writeln!(out, "  every task runs in the root group /");
        return;
    }
    let _ = writeln!(
        out,
        "  {:<28} {:>7} {:>6} {:>13} {:>7}   {:<24} {:>9}",
        "group", "shares", "tasks", "CPU time", "of busy", "entity weight at wakeups", "load_avg"
    );
    let busy: u64 = r.cpus.iter().map(|c| c.busy_ns).sum();
    for g in &r.groups {
        let weight = if g.weight_samples == 0 {
            "-".to_string()
        } else {
            format!("avg {} [{}-{}]", g.weight_avg, g.weight_min, g.weight_max)
        };
        let _ = writeln!(
            out,
            "  {:<28} {:>7} {:>6} {:>10.3} ms {:>7}   {:<24} {:>9}",
            g.path,
            g.shares,
            g.tasks,
            g.runtime_ns as f64 / 1e6,
            pct(g.runtime_ns, busy),
            weight,
            g.load_avg
        );
    }
    let limited: Vec<_> = r.groups.iter().filter_map(|g| g.cpu_stat.map(|c| (g, c))).collect();
    if limited.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nCPU quota (cpu.max; bandwidth rules of Linux {}) and cpu.stat", r.settings.cfs_bandwidth);
    let _ = writeln!(
        out,
        "  {:<28} {:>18} {:>10} {:>10} {:>12} {:>14} {:>9} {:>12}",
        "group", "cpu.max (µs)", "burst µs", "nr_periods", "nr_throttled", "throttled_usec", "nr_bursts", "burst_usec"
    );
    for (g, c) in limited {
        let _ = writeln!(
            out,
            "  {:<28} {:>18} {:>10} {:>10} {:>12} {:>14} {:>9} {:>12}",
            g.path,
            format!("{} {}", c.quota_ns / 1_000, c.period_ns / 1_000),
            c.burst_ns / 1_000,
            c.nr_periods,
            c.nr_throttled,
            c.throttled_time_ns / 1_000,
            c.nr_bursts,
            c.burst_time_ns / 1_000
        );
    }
}

/// A measured run's limited groups: their quota and `cpu.stat` over the run
/// (the difference of two reads, `sim-cli measure`); nothing without quotas.
fn measured_quota(r: &RunReport, out: &mut String) {
    let limited: Vec<_> = r.groups.iter().filter_map(|g| g.cpu_stat.map(|c| (g, c))).collect();
    if limited.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nCPU quota and cpu.stat over the run (read from this host's cgroups)");
    let _ = writeln!(
        out,
        "  {:<28} {:>18} {:>10} {:>13} {:>10} {:>12} {:>14} {:>9} {:>12}",
        "group",
        "quota period µs",
        "burst µs",
        "CPU time",
        "nr_periods",
        "nr_throttled",
        "throttled_usec",
        "nr_bursts",
        "burst_usec"
    );
    for (g, c) in limited {
        let _ = writeln!(
            out,
            "  {:<28} {:>18} {:>10} {:>10.3} ms {:>10} {:>12} {:>14} {:>9} {:>12}",
            g.path,
            format!("{} {}", c.quota_ns / 1_000, c.period_ns / 1_000),
            c.burst_ns / 1_000,
            g.runtime_ns as f64 / 1e6,
            c.nr_periods,
            c.nr_throttled,
            c.throttled_time_ns / 1_000,
            c.nr_bursts,
            c.burst_time_ns / 1_000
        );
    }
}

/// A bar on a log scale: every doubling of the count adds the same length, so
/// a handful of long delays stay visible next to thousands of short ones.
fn bar(count: u64, max: u64) -> String {
    let width = 30u64;
    let steps = |n: u64| if n == 0 { 0 } else { u64::from(n.ilog2()) + 1 };
    let n = if max == 0 { 0 } else { (steps(count) * width).div_ceil(steps(max)) as usize };
    "█".repeat(n)
}

fn shares(list: &[(String, u64)], total: u64, n: usize) -> String {
    list.iter().take(n).map(|(c, ns)| format!("{c} {}", pct(*ns, total))).collect::<Vec<_>>().join(", ")
}

fn victim(r: &RunReport, out: &mut String) {
    let v = &r.victim;
    let group = r.tasks.iter().find(|t| t.name == v.name).map_or("/", |t| t.group.as_str());
    let _ = writeln!(out, "\nVictim `{}` (group {group}): scheduling delay (wakeup or preemption to running)", v.name);
    let _ = writeln!(out, "{}", summary_line("all delays", &v.delay));
    let _ = writeln!(out, "{}", summary_line("wakeup delays", &v.wakeup_delay));
    if let Some(t) = &v.throttled_delay {
        let _ = writeln!(out, "{}", summary_line("throttled (quota)", t));
    }
    let measured = r.source.name() == "measured";
    if !measured {
        let _ = writeln!(
            out,
            "  one-hog bound ({}) = {}; max wakeup delay {} is {} it",
            r.settings.kernel.one_hog_bound_formula(),
            format_duration(v.one_hog_bound_ns),
            format_max(&v.wakeup_delay),
            if v.wakeup_delay.worst_ns() <= v.one_hog_bound_ns { "within" } else { "ABOVE" }
        );
    }
    // The first instance's share (a victim is usually one task).
    if let Some(noise) = r.tasks.iter().filter(|t| t.name == v.name).find_map(|t| t.wakeup_noise) {
        let _ = writeln!(out, "{}", summary_line("of them machine noise", &noise));
        let _ = writeln!(
            out,
            "  (the modelled wake-up latency, machine.wakeup_latency: timer/IPI delivery and idle exit, not the \
             scheduler; it is inside the delays above, as perf sched would see it)"
        );
    }
    if group != "/" && !measured {
        let _ = writeln!(
            out,
            "  (the bound assumes the victim and the hog share one run queue; in group {group} {})",
            r.settings.kernel.group_preemption_rule()
        );
    }
    let max = v.histogram.iter().map(|b| b.count).max().unwrap_or(0);
    let _ = writeln!(
        out,
        "\n  {:<22} {:>9}  {:<30}  CPU held by (share of the waiting time)",
        "delay", "count", "(log scale)"
    );
    for b in &v.histogram {
        let range = format!("[{}, {})", format_duration(b.low_ns), format_duration(b.high_ns));
        let total: u64 = b.culprits.iter().map(|c| c.1).sum();
        let _ = writeln!(
            out,
            "  {:<22} {:>9}  {:<30}  {}",
            range,
            b.count,
            bar(b.count, max),
            shares(&b.culprits, total, 3)
        );
    }
    // Indexed once: a report may list thousands of tasks and culprits.
    let name_of: std::collections::HashMap<&str, &str> =
        r.tasks.iter().map(|t| (t.comm.as_str(), t.name.as_str())).collect();
    let mut by_name: std::collections::BTreeMap<&str, u64> = std::collections::BTreeMap::new();
    for t in r.tasks.iter().filter(|t| t.name == v.name) {
        for (c, ns) in &t.long_delay_culprits {
            *by_name.entry(name_of.get(c.as_str()).copied().unwrap_or(c.as_str())).or_insert(0) += ns;
        }
    }
    let mut long: Vec<(String, u64)> = by_name.into_iter().map(|(n, ns)| (n.to_string(), ns)).collect();
    long.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let total: u64 = long.iter().map(|c| c.1).sum();
    if total > 0 {
        let _ = writeln!(
            out,
            "\n  Long delays (top 3 buckets of each instance) were spent behind: {}",
            shares(&long, total, 6)
        );
    }
}

fn history(r: &RunReport, out: &mut String) {
    let v = &r.victim;
    if let Some(none) = no_delay_text(r) {
        let _ = writeln!(out, "\n{none}");
        return;
    }
    let Some(w) = &v.worst else { return };
    let _ = writeln!(
        out,
        "\nWorst delay: {} waited {} ({}) on {}, from {} s to {} s",
        w.comm,
        format_duration(w.end_ns - w.start_ns),
        match w.kind {
            sim_core::metrics::recorder::WaitKind::Wakeup => "after a wakeup",
            sim_core::metrics::recorder::WaitKind::Preempt => "after being preempted",
            sim_core::metrics::recorder::WaitKind::Throttled => "while its group was throttled (out of CPU quota)",
        },
        crate::measure::text::cpu_label(r, w.cpu, "CPU "),
        secs(w.start_ns),
        secs(w.end_ns)
    );
    if v.history.is_empty() && r.source.name() == "measured" {
        let _ = writeln!(
            out,
            "(a measured run has no vruntime history; `perf sched timehist` on a recording shows the CPU around it)"
        );
        return;
    }
    // EEVDF models: each task's deadline, lag and eligibility, which decide the pick.
    let eevdf = r.settings.kernel.is_eevdf();
    if eevdf {
        let _ = writeln!(
            out,
            "History on CPU {} around it (perf sched timehist; * = victim; vruntimes, deadlines and lags in ns; \
             lag = V - vruntime (entity_lag), eligible when >= 0; why = the {} rule that decided a wakeup):",
            w.cpu,
            r.settings.kernel.describe()
        );
    } else {
        let _ = writeln!(
            out,
            "History on CPU {} around it (perf sched timehist; * = victim; vruntimes in ns; why = the {} rule \
             that decided a wakeup):",
            w.cpu,
            r.settings.kernel.describe()
        );
    }
    if v.history_truncated {
        let _ = writeln!(out, "  (older records had already left the history ring)");
    }
    let (eh, eu, ed) = if eevdf {
        (
            format!(" {:>16} {:>12} {:>5}", "deadline", "lag", "elig"),
            String::new(),
            format!(" {} {} -----", "-".repeat(16), "-".repeat(12)),
        )
    } else {
        (String::new(), String::new(), String::new())
    };
    let _ = writeln!(
        out,
        "  {:>15} {:>6}  {:<24} {:>9}  {:>9}  {:>9}  {:<5} {:>16} {:>16}{eh}  next",
        "time", "cpu", "task name", "wait time", "sch delay", "run time", "state", "vruntime", "min_vruntime"
    );
    let _ = writeln!(
        out,
        "  {:>15} {:>6}  {:<24} {:>9}  {:>9}  {:>9}{eu}",
        "", "", "[tid/pid]", "(msec)", "(msec)", "(msec)"
    );
    let _ = writeln!(
        out,
        "  {} ------  {} ---------  ---------  ---------  ----- ---------------- ----------------{ed}  ----",
        "-".repeat(15),
        "-".repeat(24)
    );
    // The EEVDF columns of a row (blank where the task is not known).
    let cols = |e: &Option<sim_core::report::run::EevdfView>| match e {
        _ if !eevdf => String::new(),
        None => format!(" {:>16} {:>12} {:>5}", "", "", ""),
        Some(e) => format!(
            " {:>16} {:>12} {:>5}",
            e.deadline.map_or("(asleep)".to_string(), |d| d.to_string()),
            e.lag,
            match e.eligible {
                Some(true) => "yes",
                Some(false) => "NO",
                None => "-",
            }
        ),
    };
    for row in &v.history {
        match row {
            HistoryRow::Switch {
                at_ns,
                cpu,
                task,
                wait_ns,
                sch_delay_ns,
                run_ns,
                state,
                vruntime,
                next,
                next_vruntime,
                min_vruntime,
                victim,
                prev_eevdf,
                next_eevdf,
            } => {
                let next_note = match next_eevdf {
                    Some(e) => format!(
                        "v={next_vruntime}, d={}, lag={}, {}",
                        e.deadline.map_or("-".to_string(), |d| d.to_string()),
                        e.lag,
                        if e.eligible == Some(true) { "eligible" } else { "NOT eligible" }
                    ),
                    None => format!("v={next_vruntime}"),
                };
                let _ = writeln!(
                    out,
                    "{} {:>15} [{:04}]  {:<24} {:>9}  {:>9}  {:>9}  {:<5} {:>16} {:>16}{}  {} ({})",
                    if *victim { "*" } else { " " },
                    secs(*at_ns),
                    cpu,
                    task,
                    format_ms(*wait_ns),
                    format_ms(*sch_delay_ns),
                    format_ms(*run_ns),
                    state.code(),
                    if task == "<idle>" { String::new() } else { vruntime.to_string() },
                    min_vruntime,
                    cols(prev_eevdf),
                    next,
                    next_note
                );
            }
            HistoryRow::Wakeup {
                at_ns,
                cpu,
                task,
                vruntime,
                preempt,
                verdict,
                group_level,
                eevdf: state,
                min_vruntime,
                victim,
                prev_cpu,
                placed_by,
            } => {
                // The CPU choice, when the wake-up moved the task.
                let moved = (prev_cpu != cpu).then(|| match placed_by {
                    Some(why) => format!("from cpu {prev_cpu}, {why}"),
                    None => format!("from cpu {prev_cpu}"),
                });
                let note = match (moved, *preempt) {
                    (Some(m), true) => format!("({m}; preempts curr)"),
                    (Some(m), false) => format!("({m})"),
                    (None, true) => "(preempts curr)".to_string(),
                    (None, false) => String::new(),
                };
                let _ = writeln!(
                    out,
                    "{} {:>15} [{:04}]  awakened: {:<14} {:>43}  {:>16} {:>16}{}  why: {}{}",
                    if *victim { "*" } else { " " },
                    secs(*at_ns),
                    cpu,
                    task,
                    note,
                    vruntime,
                    min_vruntime,
                    cols(state),
                    verdict.explain(),
                    if *group_level { " (between the group entities where the two meet)" } else { "" }
                );
            }
            HistoryRow::Migrate { at_ns, cpu, task, orig_cpu, dest_cpu, cause, victim } => {
                let _ = writeln!(
                    out,
                    "{} {:>15} [{:04}]  migrated: {:<14} cpu {} => {} ({})",
                    if *victim { "*" } else { " " },
                    secs(*at_ns),
                    cpu,
                    task,
                    orig_cpu,
                    dest_cpu,
                    cause
                );
            }
            HistoryRow::Throttle { at_ns, cpu, group, throttled } => {
                let what = if *throttled { "throttled (out of quota)" } else { "unthrottled (runtime granted)" };
                let _ = writeln!(out, "  {:>15} [{:04}]  {group} {what}", secs(*at_ns), cpu);
            }
        }
    }
}

/// What the report says instead of a worst-delay history when the victim
/// never waited for a CPU (its worst delay is 0 ns, or it has none), so
/// there is nothing to explain; `None` when it did wait.
pub fn no_delay_text(r: &RunReport) -> Option<String> {
    let v = &r.victim;
    let waited = v.worst.as_ref().is_some_and(|w| w.end_ns > w.start_ns) || v.delay.worst_ns() > 0;
    if waited || r.source.name() == "measured" && v.worst.is_none() {
        return None;
    }
    Some(format!(
        "Worst delay: none. `{}` never waited for a CPU ({} wake-ups or preemptions, every one picked at once: 0 ns), \
         so there is no worst-delay history to show.",
        v.name, v.delay.count
    ))
}

/// The full text report of one run.
/// With `cpus` (`--cpus`), one line for each of those CPUs in the CPU table.
pub fn run_text(r: &RunReport, per_task: bool, cpus: Option<&[u16]>) -> String {
    let mut out = String::new();
    header(r, &mut out);
    latency_table(r, per_task, &mut out);
    migrations(r, per_task, &mut out);
    requests(r, &mut out);
    periodic_jobs(r, &mut out);
    request_hops(r, &mut out);
    self::cpus(r, cpus, &mut out);
    groups(r, &mut out);
    crate::io_output::io_text(r, &mut out);
    crate::limiter_output::limiter_text(r, &mut out);
    crate::userspace_io_output::userspace_io_text(r, &mut out);
    victim(r, &mut out);
    history(r, &mut out);
    if let sim_core::report::measured::ReportSource::Measured(m) = &r.source {
        crate::measure::text::views(m, &mut out);
    }
    out
}

/// Runs side by side: one column per run, named `base` or by its variant.
#[cfg(test)]
pub fn compare_text(runs: &[RunReport]) -> String {
    let names: Vec<String> = runs.iter().map(|r| r.variant.clone().unwrap_or_else(|| "base".into())).collect();
    compare_text_named(runs, &names)
}

/// Runs side by side: one column per run, headed by `names` (`base` and the
/// variants, or the kernel models of `compare --kernels`).
pub fn compare_text_named(runs: &[RunReport], names: &[String]) -> String {
    let mut out = String::new();
    let first = &runs[0];
    let _ = writeln!(
        out,
        "schedlab {} · compare {} · seed {} · simulated {} s each · victim `{}`\n",
        env!("CARGO_PKG_VERSION"),
        first.scenario,
        first.seed,
        secs(first.sim_time_ns),
        first.victim.name
    );
    for (name, r) in names.iter().zip(runs) {
        if let Some(w) = sim_core::partial_warning(r) {
            let _ = writeln!(out, "warning: {name}: {w}\n");
        }
    }
    // Rows are collected first: each column is as wide as its widest cell
    // (a wait still open at the end makes a long one).
    let mut table: Vec<(String, Vec<String>)> = Vec::new();
    let mut line = |label: &str, cells: Vec<String>| table.push((label.to_string(), cells));
    line("", names.to_vec());
    line("kernel", runs.iter().map(|r| r.settings.kernel.label()).collect());
    if runs.iter().any(|r| r.settings.warmup_ns > 0) {
        line("warm-up excluded", runs.iter().map(|r| format_duration(r.settings.warmup_ns)).collect());
    }
    let d = |f: &dyn Fn(&RunReport) -> u64| runs.iter().map(|r| format_duration(f(r))).collect::<Vec<_>>();
    // Each model's own settings (Settings::model_settings): the union of
    // their names, in first-seen order; `-` where a run's model lacks one
    // (4.4 has no base slice, 6.x no sched_latency).
    let settings: Vec<Vec<(String, String)>> = runs.iter().map(|r| r.settings.model_settings()).collect();
    let mut names: Vec<&str> = Vec::new();
    for (name, _) in settings.iter().flatten() {
        if !names.contains(&name.as_str()) {
            names.push(name);
        }
    }
    for name in names {
        let cells = settings
            .iter()
            .map(|set| set.iter().find(|(n, _)| n == name).map_or_else(|| "-".to_string(), |(_, v)| v.clone()))
            .collect();
        line(name, cells);
    }
    line("HZ", runs.iter().map(|r| r.settings.hz.to_string()).collect());
    let group_of = |r: &RunReport, name: &str| {
        r.tasks.iter().find(|t| t.name == name).map_or("-".to_string(), |t| t.group.clone())
    };
    let culprit = |r: &RunReport| r.victim.histogram.last().and_then(|b| b.culprits.first()).map(|c| c.0.clone());
    line("autogroup", runs.iter().map(|r| if r.settings.autogroup { "on" } else { "off" }.to_string()).collect());
    line("victim's group", runs.iter().map(|r| group_of(r, &r.victim.name)).collect());
    line("culprit's group", runs.iter().map(|r| culprit(r).map_or("-".into(), |c| group_of(r, &c))).collect());
    let weight = |r: &RunReport, name: Option<String>| {
        let path = name.map(|n| group_of(r, &n));
        r.groups
            .iter()
            .find(|g| Some(&g.path) == path.as_ref())
            .map_or("-".to_string(), |g| if g.weight_samples == 0 { "-".into() } else { g.weight_avg.to_string() })
    };
    line("  victim group entity weight (avg)", runs.iter().map(|r| weight(r, Some(r.victim.name.clone()))).collect());
    line("  culprit group entity weight (avg)", runs.iter().map(|r| weight(r, culprit(r))).collect());
    line("victim max wakeup delay", runs.iter().map(|r| format_max(&r.victim.wakeup_delay)).collect());
    line("one-hog bound (formula below)", d(&|r| r.victim.one_hog_bound_ns));
    line(
        "  max wakeup delay within the bound",
        runs.iter()
            .map(
                |r| {
                    if r.victim.wakeup_delay.worst_ns() <= r.victim.one_hog_bound_ns {
                        "yes".into()
                    } else {
                        "NO".into()
                    }
                },
            )
            .collect(),
    );
    line("victim max delay (wakeup or preempt)", runs.iter().map(|r| format_max(&r.victim.delay)).collect());
    line("victim p99 delay", d(&|r| r.victim.delay.p99_ns));
    line("victim p99.9 delay", d(&|r| r.victim.delay.p999_ns));
    line("victim avg delay", d(&|r| r.victim.delay.avg_ns));
    if runs.iter().all(|r| r.victim.response.is_some()) {
        let resp = |f: &dyn Fn(&LatencySummary) -> u64| {
            runs.iter().map(|r| format_duration(f(r.victim.response.as_ref().expect("checked")))).collect::<Vec<_>>()
        };
        line("victim request p99 response", resp(&|s| s.p99_ns));
        line("victim request max response", resp(&|s| s.max_ns));
    }
    // Requests across hops: one row per source every run has.
    for q in &first.requests {
        let of = |r: &RunReport| r.requests.iter().find(|o| o.source == q.source).map(|o| o.latency.p99_ns);
        if runs.iter().all(|r| of(r).is_some()) {
            line(
                &format!("request p99 end to end ({})", q.source),
                runs.iter().map(|r| format_duration(of(r).unwrap_or(0))).collect(),
            );
        }
    }

    crate::io_output::compare_rows(runs, &mut line);
    crate::limiter_output::compare_rows(runs, &mut line);
    crate::userspace_io_output::compare_rows(runs, &mut line);
    line("worst delay spent behind", runs.iter().map(|r| culprit(r).unwrap_or_else(|| "-".into())).collect());
    line(
        "context switches (all CPUs)",
        runs.iter().map(|r| r.cpus.iter().map(|c| c.switches).sum::<u64>().to_string()).collect(),
    );
    line("events simulated", runs.iter().map(|r| r.events.to_string()).collect());
    let mut widths = vec![11usize; runs.len()];
    for (_, cells) in &table {
        for (w, c) in widths.iter_mut().zip(cells) {
            *w = (*w).max(c.chars().count());
        }
    }
    // The label column is as wide as its longest label (a task's slice row
    // carries the task's name).
    let label_w = table.iter().map(|(l, _)| l.chars().count()).max().unwrap_or(0).max(38);
    for (label, cells) in &table {
        // Two spaces between columns: a cell may contain one.
        let mut l = format!("  {label:<label_w$}");
        for (c, w) in cells.iter().zip(&widths) {
            let _ = write!(l, "  {c:>w$}");
        }
        let _ = writeln!(out, "{}", l.trim_end());
    }
    // The bound's formula, once per model in the table.
    let mut models: Vec<sim_core::sched::model::KernelModel> = runs.iter().map(|r| r.settings.kernel).collect();
    models.sort();
    models.dedup();
    for m in models {
        let _ = writeln!(out, "  one-hog bound under {}: {}", m.describe(), m.one_hog_bound_rule());
    }
    out
}

/// A maximum that counts the waits still open at the end (`LatencySummary`'s
/// `open_*`): `> 19.9s, still waiting at end` when an open wait is longer
/// than every wait that ended (it had lasted that long and was not over).
pub fn format_max(s: &LatencySummary) -> String {
    s.max_text(format_duration)
}

/// `format_max` for narrow columns: `>19.9s open`.
pub fn format_max_short(s: &LatencySummary) -> String {
    if s.worst_is_open() { format!(">{} open", format_duration(s.open_max_ns)) } else { format_duration(s.max_ns) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim_core::Scenario;

    /// The warm-up line says what it excluded and never claims more: in a
    /// scenario with block devices it names the blktrace figures, which
    /// cover the whole run; without devices it names nothing else.
    #[test]
    fn the_warm_up_line_names_the_figures_it_does_not_filter() {
        let line = |text: &str| {
            let s = Scenario::from_toml("t.toml", text)
                .unwrap()
                .with_overrides(&[("duration", "\"300ms\""), ("report.warmup", "\"50ms\"")])
                .unwrap();
            let mut out = String::new();
            header(&sim_core::run(&s), &mut out);
            out.lines().find(|l| l.starts_with("warm-up:")).unwrap_or_default().to_string()
        };
        let io = line(include_str!("../../scenarios/cfq-starvation.toml"));
        assert!(io.starts_with("warm-up: first 50ms excluded from every scheduling statistic"), "{io}");
        assert!(io.ends_with("the block devices' blktrace figures cover the whole run"), "{io}");
        let cpu = line(include_str!("../../scenarios/two-hogs.toml"));
        assert!(cpu.starts_with("warm-up: first 50ms") && !cpu.contains("whole run"), "{cpu}");
    }

    /// Defect: the header showed `--set machine.*` overrides (in the machine
    /// line) but not task-level ones such as `tasks.jvm-gc.nice=5`.
    #[test]
    fn the_header_shows_task_level_overrides() {
        let toml = "schema = 1\nseed = 1\nduration = \"20ms\"\n[kernel]\nversion = \"4.4\"\n[machine]\ncpus = 2\n\
            [[tasks]]\nname = \"reactor\"\nprogram = [{ run = \"1ms\" }, { sleep = \"1ms\" }]\n\
            [[tasks]]\nname = \"jvm-gc\"\ncount = 2\nprogram = [{ run = \"2ms\" }, { sleep = \"3ms\" }]\n";
        let header = |sets: &[(&str, &str)]| {
            let s = Scenario::from_toml("t.toml", toml).unwrap().with_overrides(sets).unwrap();
            let text = run_text(&sim_core::run(&s), false, None);
            text.lines().take_while(|l| !l.is_empty()).map(str::to_string).collect::<Vec<_>>().join("\n")
        };
        let base = header(&[("machine.hz", "1000")]);
        assert!(
            base.contains("HZ=1000") && base.contains("tasks: reactor nice 0 cpus 0-1 · jvm-gc×2 nice 0"),
            "{base}"
        );
        let set = header(&[("tasks.jvm-gc.nice", "5"), ("tasks.jvm-gc.policy", "batch"), ("tasks.reactor.cpus", "1")]);
        assert!(set.contains("reactor nice 0 cpus 1 · jvm-gc×2 nice 5 batch cpus 0-1"), "{set}");
    }

    fn report(cpus: u16) -> RunReport {
        let toml = format!(
            "schema = 1\nseed = 1\nduration = \"10ms\"\n[kernel]\nversion = \"4.4\"\n[machine]\ncpus = {cpus}\n\
             [[tasks]]\nname = \"w\"\ncount = 3\nprogram = [{{ run = \"1ms\" }}, {{ sleep = \"1ms\" }}]\n"
        );
        sim_core::run(&Scenario::from_toml("t.toml", &toml).unwrap())
    }

    fn section<'a>(text: &'a str, title: &str) -> Vec<&'a str> {
        text.lines().skip_while(|l| !l.starts_with(title)).take_while(|l| !l.is_empty()).collect()
    }

    /// Requests across hops: the table after the per-task one, with the
    /// route and each hop's p99 below it; compare gets a request p99 row;
    /// a scenario without `forward` has neither.
    #[test]
    fn request_hops_get_their_table_and_compare_row() {
        let toml = "schema = 1\nseed = 1\nduration = \"50ms\"\n[kernel]\nversion = \"4.4\"\n[machine]\ncpus = 1\n\
             [features]\nWAKEUP_PREEMPTION = false\n\
             [[tasks]]\nname = \"front\"\nprogram = [\"serve\"]\nforward = \"back\"\n\
             [[tasks]]\nname = \"back\"\ncount = 2\nprogram = [\"serve\"]\nhop_work = \"200us\"\n\
             [[tasks]]\nname = \"hog\"\nprogram = [{ run = \"3ms\" }, { sleep = \"1ms\" }]\n\
             [[sources]]\nname = \"rpc\"\ntarget = \"front\"\ninterval = \"1ms\"\nwork = \"100us\"\n";
        let r = sim_core::run(&Scenario::from_toml("t.toml", toml).unwrap());
        let q = &r.requests[0];
        assert!(q.completed > 10 && q.sched_delay_p99_ns > 0, "{q:?}");
        let text = run_text(&r, false, None);
        let table = section(&text, "Requests across hops");
        assert!(table[4].starts_with("  rpc ") && table[4].contains("|    1 |"), "{}", table.join("\n"));
        let ampl = q.amplification_x100.unwrap();
        assert!(table[4].contains(&format!("{}.{:02}x", ampl / 100, ampl % 100)), "{}", table[4]);
        assert!(table[7].contains("route: front (sched p99") && table[7].contains("→ back (sched p99"), "{}", table[7]);
        let cmp = compare_text(&[r.clone(), r]);
        assert!(cmp.lines().any(|l| l.trim_start().starts_with("request p99 end to end (rpc)")), "{cmp}");
        let plain = run_text(&report(1), false, None);
        assert!(!plain.contains("Requests across hops") && !compare_text(&[report(1)]).contains("request p99 end"));
    }

    /// Up to 8 CPUs (or those --cpus names): one line each with busy share,
    /// switches, migrations in/out and balance gap; tasks that moved are
    /// listed by cause (merged by name as the latency table merges).
    #[test]
    fn small_machines_get_one_line_per_cpu_and_moved_tasks_their_causes() {
        let mut r = report(2);
        // The run itself may move tasks: start from known counters.
        for c in &mut r.cpus {
            (c.migrations_in, c.migrations_out, c.balance_gap_ns) = (0, 0, 0);
        }
        for t in &mut r.tasks {
            t.migrations.clear();
        }
        r.cpus[1].migrations_in = 3;
        r.cpus[0].migrations_out = 3;
        r.cpus[1].balance_gap_ns = 1_500_000;
        r.tasks[0].migrations = vec![("wake_affine", 2)];
        r.tasks[2].migrations = vec![("fork", 1), ("periodic", 4)];
        let text = run_text(&r, false, None);
        let cpus = section(&text, "CPUs:");
        assert_eq!(cpus.len(), 4, "{text}");
        assert!(cpus[1].contains("migr in") && cpus[1].contains("balance gap ms"), "{}", cpus[1]);
        let one: Vec<&str> = cpus[3].split_whitespace().collect();
        assert_eq!((one[0], one[3], one[4], one[5]), ("cpu1", "3", "0", "1.500"), "{}", cpus[3]);
        let moved = section(&text, "Migrations");
        assert_eq!(
            moved[1].split_whitespace().collect::<Vec<_>>(),
            ["w:(2)", "7", "wake_affine", "2,", "fork", "1,", "periodic", "4"]
        );
        // --cpus 1: only that CPU's line.
        let only = run_text(&r, false, Some(&[1]));
        assert_eq!(section(&only, "CPUs:").len(), 3);
        // Nobody moved: no migrations section.
        for t in &mut r.tasks {
            t.migrations.clear();
        }
        assert!(!run_text(&r, false, None).contains("Migrations"));
    }

    /// The history around the worst delay shows a wake-up's CPU choice
    /// (`from cpu N, cause`) and the moves themselves (`migrated:`).
    #[test]
    fn the_history_shows_moves_and_wakeup_placement() {
        let mut r = report(2);
        // The run itself may move tasks: start from known counters.
        for c in &mut r.cpus {
            (c.migrations_in, c.migrations_out, c.balance_gap_ns) = (0, 0, 0);
        }
        for t in &mut r.tasks {
            t.migrations.clear();
        }
        r.victim.worst = Some(sim_core::report::run::WorstDelay {
            comm: "w/0".into(),
            cpu: 0,
            start_ns: 1_000_000,
            end_ns: 2_000_000,
            kind: sim_core::metrics::recorder::WaitKind::Wakeup,
        });
        r.victim.history = vec![
            HistoryRow::Migrate {
                at_ns: 1_000_000,
                cpu: 0,
                task: "w/0[1]".into(),
                orig_cpu: 1,
                dest_cpu: 0,
                cause: "wake_affine",
                victim: true,
            },
            HistoryRow::Wakeup {
                at_ns: 1_000_000,
                cpu: 0,
                task: "w/0[1]".into(),
                vruntime: 5,
                preempt: true,
                verdict: sim_core::sched::model::WakeupVerdict::BeyondGranularity,
                group_level: false,
                eevdf: None,
                min_vruntime: 3,
                victim: true,
                prev_cpu: 1,
                placed_by: Some("wake_affine"),
            },
        ];
        let text = run_text(&r, false, None);
        let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("* ")).collect();
        assert_eq!(rows.len(), 2, "{text}");
        assert!(rows[0].ends_with("migrated: w/0[1]         cpu 1 => 0 (wake_affine)"), "{}", rows[0]);
        assert!(rows[1].contains("(from cpu 1, wake_affine; preempts curr)"), "{}", rows[1]);
    }

    /// Past 8 CPUs: the compact listing plus a summary (busy min/median/max,
    /// total gap and the CPUs with most of it, migrations).
    #[test]
    fn large_machines_get_a_summary() {
        let mut r = report(16);
        // The run itself may move tasks: start from known counters.
        for c in &mut r.cpus {
            (c.migrations_in, c.migrations_out, c.balance_gap_ns) = (0, 0, 0);
        }
        for t in &mut r.tasks {
            t.migrations.clear();
        }
        r.cpus[5].balance_gap_ns = 2_000_000;
        r.cpus[9].balance_gap_ns = 3_000_000;
        r.cpus[9].migrations_in = 4;
        r.cpus[2].migrations_out = 4;
        let text = run_text(&r, false, None);
        let cpus = section(&text, "CPUs:");
        assert_eq!(cpus.len(), 1 + 4 + 3, "{text}");
        assert!(cpus[5].starts_with("  busy: min "), "{}", cpus[5]);
        assert!(cpus[6].ends_with("5.000 ms in all; most on cpu9 3.000 ms, cpu5 2.000 ms"), "{}", cpus[6]);
        assert_eq!(cpus[7], "  migrations: 4; most in: cpu9 (4); most out: cpu2 (4)");
    }

    /// Defect: `compare` under 6.x showed `-` in the three 4.4 rows and had
    /// no base slice row, so a short-slice variant's change was invisible;
    /// its one-hog bound label overflowed the label column. Rows are now
    /// the union of the models' settings, `-` only where a model lacks one,
    /// and every row's cells line up.
    #[test]
    fn compare_rows_are_the_settings_of_the_models_in_the_table() {
        let toml = "schema = 1\nseed = 1\nduration = \"20ms\"\n[machine]\ncpus = 1\n[report]\nvictim = \"s\"\n\
            [[tasks]]\nname = \"hog\"\nprogram = [{ run = \"1s\" }]\n\
            [[tasks]]\nname = \"s\"\nprogram = [{ sleep = \"2ms\" }, { run = \"100us\" }]\n\
            [variants.linux618-short-slice]\n\"cfs.base_slice_ns\" = \"300us\"\n\"tasks.s.slice\" = \"100us\"\n\
            [variants.old]\n\"kernel.version\" = \"4.4\"\n";
        let s = Scenario::from_toml("t.toml", toml).unwrap();
        let runs: Vec<RunReport> = [None, Some("linux618-short-slice"), Some("old")]
            .into_iter()
            .map(|v| sim_core::run(&v.map_or_else(|| s.clone(), |v| s.with_variant(v).unwrap())))
            .collect();
        let text = compare_text(&runs);
        let row = |name: &str| -> Vec<String> {
            let l =
                text.lines().find(|l| l.trim_start().starts_with(name)).unwrap_or_else(|| panic!("no {name}:\n{text}"));
            l[2 + name.len()..].split_whitespace().map(String::from).collect()
        };
        assert_eq!(row("base_slice_ns"), ["700us", "300us", "-"], "{text}");
        assert_eq!(row("sched_latency_ns"), ["-", "-", "6ms"], "{text}");
        assert_eq!(row("slice of s"), ["-", "100us", "-"], "{text}");
        assert_eq!(row("sched_wakeup_granularity_ns"), ["-", "-", "1ms"], "{text}");
        // The rows' cells end in the same column, the bound's among them.
        let len = |name: &str| {
            text.lines().find(|l| l.trim_start().starts_with(name)).map(|l| l.chars().count()).unwrap_or_default()
        };
        assert_eq!(len("kernel"), len("one-hog bound"), "{text}");
        assert_eq!(len("kernel"), len("base_slice_ns"), "{text}");
        // Each model's formula once, not a 4.4 formula for a 6.x run.
        assert!(text.contains("one-hog bound under Linux 6.18 (EEVDF): base_slice + 2 x tick"), "{text}");
        assert!(text.contains("one-hog bound under Linux 4.4 (CFS): sched_latency/2 + 2 x tick"), "{text}");
        // 6.x only: no 4.4 rows at all.
        let new_only = compare_text(&runs[..2]);
        assert!(!new_only.contains("sched_latency_ns") && !new_only.contains("granularity"), "{new_only}");
        // The run report's explanation speaks the model's rules.
        let one = run_text(&runs[0], false, None);
        assert!(one.contains("one-hog bound (base_slice + 2 x tick") && !one.contains("granularity"), "{one}");
    }

    /// Defect: a victim whose worst delay was 0 ns still got a worst-delay
    /// history (and a timeline chart). The report now says it never waited.
    #[test]
    fn a_victim_that_never_waited_gets_no_history() {
        let toml = "schema = 1\nseed = 1\nduration = \"20ms\"\n[machine]\ncpus = 2\n[report]\nvictim = \"s\"\n\
            [[tasks]]\nname = \"s\"\nprogram = [{ sleep = \"1ms\" }, { run = \"100us\" }]\n";
        let r = sim_core::run(&Scenario::from_toml("t.toml", toml).unwrap());
        assert_eq!(r.victim.delay.worst_ns(), 0, "{:?}", r.victim.delay);
        let text = run_text(&r, false, None);
        assert!(text.contains("Worst delay: none. `s` never waited for a CPU"), "{text}");
        assert!(!text.contains("History on CPU") && !text.contains("waited 0ns"), "{text}");
        assert!(sim_core::plot::data::Timeline::from_report(&r).is_none());
    }

    /// Defect: under 6.x the worst-delay history showed vruntime and
    /// min_vruntime only, not the deadline, lag and eligibility that decide
    /// an EEVDF pick, and nothing said why a wake-up did not preempt. Each
    /// row now has them, and each wake-up the model's rule that decided;
    /// under 4.4 the rule is the wakeup granularity's, and no EEVDF column.
    #[test]
    fn the_history_speaks_the_models_rules() {
        let toml = "schema = 1\nseed = 1\nduration = \"200ms\"\n[machine]\ncpus = 1\nhz = 1000\n[report]\nvictim = \"s\"\n\
            [[tasks]]\nname = \"hog\"\ncount = 2\nprogram = [{ run = \"1s\" }]\n\
            [[tasks]]\nname = \"s\"\nprogram = [{ sleep = \"exp(3ms)\" }, { run = \"100us\" }]\n";
        let s = Scenario::from_toml("t.toml", toml).unwrap();
        let new = sim_core::run(&s);
        let text = run_text(&new, false, None);
        let history: Vec<&str> = text.lines().skip_while(|l| !l.starts_with("History on CPU")).collect();
        assert!(history[0].contains("lag = V - vruntime") && history[1].contains("deadline"), "{text}");
        assert!(history[1].contains("lag") && history[1].contains("elig"), "{}", history[1]);
        let wakeups: Vec<&&str> = history.iter().filter(|l| l.contains("awakened:")).collect();
        assert!(!wakeups.is_empty() && wakeups.iter().all(|l| l.contains("  why: ")), "{text}");
        assert!(!text.contains("granularity"), "a 4.4 rule in a 6.18 report:\n{text}");
        // The victim's rows carry its EEVDF state; a queued task's
        // eligibility is its lag's sign.
        let mut seen = 0;
        for row in &new.victim.history {
            if let HistoryRow::Switch { next_eevdf: Some(e), .. } | HistoryRow::Wakeup { eevdf: Some(e), .. } = row {
                seen += 1;
                assert_eq!(e.eligible, e.deadline.map(|_| e.lag >= 0), "{row:?}");
            }
        }
        assert!(seen > 0, "{:?}", new.victim.history);
        let old = sim_core::run(&s.with_overrides(&[("kernel.version", "\"4.4\"")]).unwrap());
        let text = run_text(&old, false, None);
        let history: Vec<&str> = text.lines().skip_while(|l| !l.starts_with("History on CPU")).collect();
        assert!(!history[1].contains("deadline") && !history[0].contains("lag"), "{text}");
        assert!(history.iter().filter(|l| l.contains("awakened:")).all(|l| l.contains("  why: ")), "{text}");
        assert!(old.victim.history.iter().all(|h| !matches!(h, HistoryRow::Wakeup { eevdf: Some(_), .. })));
    }
}
