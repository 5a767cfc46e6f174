//! Criterion benchmarks of `sim-cli import`, in lines per second (`thrpt`
//! in elements/s): the line parser `parse_sched_line` over ~200k generated
//! lines (`import/parse_sched_line`), and the whole import (parse, track,
//! fit, write the scenario) of a realistic trace: the ftrace text of
//! `scenarios/request-hops.toml`, 2 s of 26 threads on 8 CPUs, ~450k lines
//! (`import/importer_request_hops`). Issue 35's budget is ≥ 1 M lines/s natively.
//!
//! `cargo bench -p schedlab-core --bench import`

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use sim_core::{
    ImportOptions, Importer, Scenario, SchedLine, Simulation, Trace, TraceWindow, parse_sched_line, write_ftrace_text,
};
use std::fmt::Write;
use std::hint::black_box;

const LINES: usize = 200_000;

/// Comms as a desktop trace shows them: short, long, multi-word, with `/`, `:` and `-`.
const COMMS: [(&str, u32); 10] = [
    ("bash", 1190),
    ("Web Content", 4242),
    ("kworker/u16:1-events", 77),
    ("rcu_preempt", 15),
    ("memfd:sealed-91", 28259),
    ("Isolated Web Co", 5120),
    ("ksoftirqd/1", 22),
    ("rustc", 32613),
    ("gnome-shell", 1802),
    ("perf", 32623),
];

/// A small deterministic generator (64-bit LCG): the same text every run.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }
}

/// `LINES` lines: 45 % sched_switch, 40 % sched_waking/sched_wakeup, 5 %
/// sched_migrate_task, 10 % sched_stat_runtime; three in four in the `perf
/// sched script --ns` form, one in four in the 6.18 ftrace form.
fn trace_text() -> String {
    let mut rng = Lcg(35);
    let mut out = String::with_capacity(LINES * 170);
    let mut ns: u64 = 70_030_000_000_000;
    for _ in 0..LINES {
        ns += 1 + rng.next() % 20_000;
        let cpu = rng.next() % 4;
        let (comm, tid) = COMMS[(rng.next() % 10) as usize];
        let (other, opid) = COMMS[(rng.next() % 10) as usize];
        let payload = match rng.next() % 100 {
            0..45 => {
                let state = ["S", "R", "R+", "D", "I"][(rng.next() % 5) as usize];
                format!(
                    "sched_switch: prev_comm={comm} prev_pid={tid} prev_prio=120 prev_state={state} ==> next_comm={other} next_pid={opid} next_prio=120"
                )
            }
            45..65 => format!("sched_waking: comm={other} pid={opid} prio=120 target_cpu={:03}", rng.next() % 4),
            65..85 => format!("sched_wakeup: comm={other} pid={opid} prio=120 target_cpu={:03}", rng.next() % 4),
            85..90 => format!("sched_migrate_task: comm={other} pid={opid} prio=120 orig_cpu={cpu} dest_cpu=1"),
            _ => format!("sched_stat_runtime: comm={comm} pid={tid} runtime={} [ns]", rng.next() % 100_000),
        };
        let (secs, frac) = (ns / 1_000_000_000, ns % 1_000_000_000);
        if rng.next().is_multiple_of(4) {
            let _ = writeln!(out, "{:>16}-{tid:<7} [{cpu:03}] d..2. {secs:>5}.{:06}: {payload}", comm, frac / 1000);
        } else {
            let (name, rest) = payload.split_once(": ").unwrap_or((&payload, ""));
            let event = format!("sched:{name}");
            let _ = writeln!(out, "{comm:>16} {tid:>5} [{cpu:03}] {secs:>5}.{frac:09}: {event:>24}: {rest}");
        }
    }
    out
}

fn parse_lines(c: &mut Criterion) {
    let text = trace_text();
    let lines: Vec<&str> = text.lines().collect();
    let records = lines.iter().filter(|l| matches!(parse_sched_line(l), Ok(SchedLine::Record(_)))).count();
    let errors = lines.iter().filter(|l| parse_sched_line(l).is_err()).count();
    assert_eq!(errors, 0, "every generated line parses");
    assert!(records > LINES * 8 / 10, "{records} records of {LINES} lines");
    let mut g = c.benchmark_group("import");
    g.sample_size(10);
    g.throughput(Throughput::Elements(lines.len() as u64));
    g.bench_function("parse_sched_line", |b| {
        b.iter(|| {
            let mut kept = 0usize;
            for l in &lines {
                if let Ok(SchedLine::Record(r)) = parse_sched_line(black_box(l)) {
                    kept += usize::from(r.cpu);
                }
            }
            black_box(kept)
        });
    });
    g.finish();
}

/// The ftrace text of a shipped scenario, as `sim-cli run --trace X.txt` writes it.
fn request_hops_text() -> String {
    let toml = include_str!("../../scenarios/request-hops.toml");
    let s = Scenario::from_toml("request-hops.toml", toml).expect("the shipped scenario loads");
    let mut sim = Simulation::new(&s);
    sim.enable_trace(TraceWindow::all(1_000_000)).expect("traced from the start");
    sim.run_to_end();
    let t = Trace::from_sim(&mut sim).expect("a trace was recorded");
    let mut out = String::new();
    write_ftrace_text(&t, &mut out).expect("formatting into a String");
    out
}

fn import_whole(c: &mut Criterion) {
    let text = request_hops_text();
    let lines = text.lines().count();
    let opts = ImportOptions { source: "request-hops.txt".into(), ..ImportOptions::default() };
    let im = Importer::import_text(opts.clone(), &text).expect("the trace imports");
    assert!(im.tasks.len() >= 5, "the five pools are found");
    let mut g = c.benchmark_group("import");
    g.sample_size(10);
    g.throughput(Throughput::Elements(lines as u64));
    g.bench_function("importer_request_hops", |b| {
        b.iter(|| black_box(Importer::import_text(opts.clone(), black_box(&text)).map(|i| i.toml.len())));
    });
    g.finish();
}

criterion_group!(benches, parse_lines, import_whole);
criterion_main!(benches);
