//! Text rendering of the userspace I/O queues of a report (Seastar's I/O
//! scheduler, `[io_queues.NAME]`): per queue its limits and in-flight
//! high-water marks, per class requests, bytes, MB/s, the time queued in
//! the layer and the end-to-end latency (avg, p99, max).

use sim_core::RunReport;
use sim_core::metrics::LatencySummary;
use sim_core::report::userspace_io::{IoClassReport, IoQueueReport};
use sim_core::time::format_duration;
use std::fmt::Write;

fn limit(v: Option<u64>) -> String {
    v.map_or("no limit".to_string(), |v| v.to_string())
}

fn lat(s: &LatencySummary) -> String {
    format!("{:>9} {:>9} {:>9}", format_duration(s.avg_ns), format_duration(s.p99_ns), s.max_text(format_duration))
}

/// The userspace I/O section (nothing when the scenario has no queue).
pub fn userspace_io_text(r: &RunReport, out: &mut String) {
    for q in &r.userspace_io {
        one(q, out);
    }
}

fn one(q: &IoQueueReport, out: &mut String) {
    let _ = writeln!(out, "\nUserspace I/O queue `{}` on {} (policy {})", q.name, q.device, q.policy);
    let _ = writeln!(
        out,
        "  in flight at most: requests {} of {}; weight {} of {}; size {} of {} (read-request units ×128)",
        q.high_water_requests,
        limit(q.max_requests),
        q.high_water_req_count,
        limit(q.max_req_count),
        q.high_water_bytes_count,
        limit(q.max_bytes_count),
    );
    let _ = writeln!(
        out,
        "  {:<14} {:>7} {:>9} {:>10} {:>9} | {:>9} {:>9} {:>9} | {:>9} {:>9} {:>9}",
        "class", "shares", "requests", "MiB", "MB/s", "wait avg", "p99", "max", "e2e avg", "p99", "max"
    );
    for c in &q.classes {
        row(c, out);
    }
}

fn row(c: &IoClassReport, out: &mut String) {
    let _ = writeln!(
        out,
        "  {:<14} {:>7} {:>9} {:>10.1} {:>9.1} | {} | {}",
        c.name,
        c.shares,
        c.completed,
        c.bytes as f64 / f64::from(1u32 << 20),
        c.bytes_per_s as f64 / 1e6,
        lat(&c.queue_wait),
        lat(&c.latency),
    );
}

/// Rows of `compare`: per class of the first run's queues, MB/s and the
/// end-to-end latency's average and p99 ("-" in a run without it).
pub fn compare_rows(runs: &[RunReport], line: &mut dyn FnMut(&str, Vec<String>)) {
    for q0 in &runs[0].userspace_io {
        for c0 in &q0.classes {
            let cell = |f: &dyn Fn(&IoClassReport) -> String| {
                runs.iter()
                    .map(|r| {
                        r.userspace_io
                            .iter()
                            .find(|q| q.name == q0.name)
                            .and_then(|q| q.classes.iter().find(|c| c.name == c0.name))
                            .map_or("-".into(), f)
                    })
                    .collect::<Vec<_>>()
            };
            line(&format!("io {}.{}: MB/s", q0.name, c0.name), cell(&|c| format!("{:.1}", c.bytes_per_s as f64 / 1e6)));
            line("  latency avg", cell(&|c| format_duration(c.latency.avg_ns)));
            line("  latency p99", cell(&|c| format_duration(c.latency.p99_ns)));
        }
    }
}

#[cfg(test)]
mod tests {
    use sim_core::Scenario;

    #[test]
    fn the_section_names_the_limits_and_classes() {
        let toml = "schema = 1\nseed = 1\nduration = \"100ms\"\n[kernel]\nversion = \"4.4\"\n[machine]\ncpus = 1\n[devices.ssd]\nkind = \"ssd\"\n\
                    elevator = \"noop\"\n[io_queues.disk]\ndevice = \"ssd\"\npolicy = \"max-io-requests\"\nmax_io_requests = 4\n\
                    [io_queues.disk.classes.query]\nshares = 100\n[[tasks]]\nname = \"r\"\n\
                    program = [{ read = \"4KiB\", io_class = \"disk.query\" }]\n";
        let r = sim_core::run(&Scenario::from_toml("t.toml", toml).unwrap());
        let mut out = String::new();
        super::userspace_io_text(&r, &mut out);
        assert!(out.contains("Userspace I/O queue `disk` on ssd (policy max-io-requests)"), "{out}");
        assert!(out.contains("requests 1 of 4; weight 128 of no limit"), "{out}");
        assert!(out.contains("  query "), "{out}");
    }
}
