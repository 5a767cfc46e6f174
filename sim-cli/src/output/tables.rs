//! The tables of a run's text report: per-task delays (as `perf sched
//! latency`), migrations, requests and periodic jobs, request hops, CPUs and
//! groups (with measured quota use).

use super::cells::{pct, summary_line};
use sim_core::{RunReport, TaskReport, format_duration, format_ms, format_secs as secs};
use std::fmt::Write;

/// Instances merged by declared name, as `perf sched latency` merges by comm.
pub(super) struct Row {
    label: String,
    runtime_ns: u64,
    switches: u64,
    count: u64,
    delay_sum: u128,
    max_ns: u64,
    max_at_ns: u64,
}

pub(super) fn rows(r: &RunReport, per_task: bool) -> Vec<Row> {
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
            let label = if per_task || ts.len() == 1 { key } else { format!("{key}:({})", ts.len()) };
            Row {
                // A host background thread of `[machine.noise]`, not the scenario's.
                label: if ts[0].background { format!("{label} (machine)") } else { label },
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

pub(super) fn latency_table(r: &RunReport, per_task: bool, out: &mut String) {
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

pub(super) fn requests(r: &RunReport, out: &mut String) {
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
pub(super) fn periodic_jobs(r: &RunReport, out: &mut String) {
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
pub(super) fn request_hops(r: &RunReport, out: &mut String) {
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
pub(super) fn cpus(r: &RunReport, selected: Option<&[u16]>, out: &mut String) {
    cpus_table(r, selected, out);
    above_fair(r, selected, out);
}

/// RT throttling and the fair server per CPU, when the scenario has a task
/// above the fair class: what the classes above fair left the fair tasks.
fn above_fair(r: &RunReport, selected: Option<&[u16]>, out: &mut String) {
    if r.cpus.iter().all(|c| c.above_fair.is_none()) {
        return;
    }
    let _ = writeln!(
        out,
        "
RT throttling (sched_rt_runtime_us) and the fair server (6.12+), whole run"
    );
    let _ = writeln!(
        out,
        "  {:<6} {:>16} {:>10} {:>14} {:>18}",
        "cpu", "RT throttled ms", "throttles", "server served", "fair via server ms"
    );
    for c in r.cpus.iter().filter(|c| selected.is_none_or(|s| s.contains(&c.cpu))).take(if selected.is_some() {
        usize::MAX
    } else {
        CPU_LINES_MAX
    }) {
        let Some(a) = c.above_fair else { continue };
        let _ = writeln!(
            out,
            "  {:<6} {:>16} {:>10} {:>14} {:>18}",
            format!("cpu{}", c.cpu),
            format_ms(a.rt_throttled_ns),
            a.rt_throttles,
            a.server_served,
            format_ms(a.server_served_ns)
        );
    }
}

fn cpus_table(r: &RunReport, selected: Option<&[u16]>, out: &mut String) {
    if let sim_core::ReportSource::Measured(m) = &r.source
        && m.delays_from != "perf"
    {
        let _ = writeln!(out, "\nCPUs: (per-CPU figures come from perf sched, which was not used)");
        return;
    }
    let moved: u64 = r.cpus.iter().map(|c| c.migrations_in).sum();
    if selected.is_some() || r.cpus.len() <= CPU_LINES_MAX {
        let _ = writeln!(out, "\nCPUs: utilisation, context switches, migrations and balance gap");
        // A measured report names the host CPU too (`cpu0 (host cpu1)`).
        let label = |c: u16| super::measured::cpu_label(r, c, "cpu");
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
        let name = super::measured::cpu_label(r, c.cpu, "cpu");
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
        let most = |f: fn(&sim_core::CpuReport) -> u64| {
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
pub(super) fn migrations(r: &RunReport, per_task: bool, out: &mut String) {
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
    let order: Vec<&str> = sim_core::MigrateCause::ALL.iter().map(|c| c.name()).collect();
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
pub(super) fn groups(r: &RunReport, out: &mut String) {
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
pub(super) fn measured_quota(r: &RunReport, out: &mut String) {
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
