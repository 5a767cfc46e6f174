//! Criterion benchmarks: the event queue, whole scenario runs reported in
//! simulated events per second (`thrpt` in elements/s), and the trace
//! exports in scheduling records per second.
//!
//! `cargo bench -p sim-core --bench engine`

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use sim_core::event::{Event, EventQueue};
use sim_core::ids::CpuId;
use sim_core::time::SimTime;
use sim_core::{Scenario, Simulation};
use std::hint::black_box;

fn scenario(name: &str) -> Scenario {
    let path = format!("{}/../scenarios/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("scenario file");
    Scenario::from_toml(&path, &text).expect("valid scenario")
}

fn event_queue(c: &mut Criterion) {
    let mut g = c.benchmark_group("event_queue");
    // A steady state like a 32-CPU run: ~100 pending events, one pop and one push per step.
    g.throughput(Throughput::Elements(1));
    g.bench_function("pop_push_100_pending", |b| {
        let mut q = EventQueue::new();
        let mut t = 0u64;
        for i in 0..100u64 {
            q.push(SimTime(i * 997 % 10_000), Event::Tick { cpu: CpuId((i % 32) as u16) });
        }
        b.iter(|| {
            let (at, ev) = q.pop().expect("non-empty");
            t = t.wrapping_add(7919);
            q.push(SimTime(at.ns() + 1 + t % 10_000), black_box(ev));
        });
    });
    g.finish();
}

/// Times whole runs of `s` (building the simulation is not timed).
fn bench_run(g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>, id: String, s: &Scenario) {
    g.bench_function(id, |b| {
        b.iter_batched(
            || Simulation::new(s),
            |mut sim| {
                sim.run_to_end();
                black_box(sim.events())
            },
            BatchSize::LargeInput,
        );
    });
}

fn whole_runs(c: &mut Criterion) {
    let mut g = c.benchmark_group("scenario_end_to_end");
    g.sample_size(10);
    // jmx runs in two autogroups; `same-group` is the same workload with every
    // task in the root group, so the pair shows what group scheduling costs.
    for (name, variant) in [
        ("jmx", None),
        ("jmx", Some("same-group")),
        ("jmx", Some("tuned")),
        ("desktop-build", None),
        ("autogroup-desktop", None),
    ] {
        let mut s = scenario(name);
        if let Some(v) = variant {
            s = s.with_variant(v).expect("variant");
        }
        // Count the events once so throughput reads as simulated events per second.
        let events = sim_core::run(&s).events;
        g.throughput(Throughput::Elements(events));
        bench_run(&mut g, format!("{name}{}", variant.map_or(String::new(), |v| format!("/{v}"))), &s);
    }
    g.finish();
}

/// The block layer: cfq-starvation.toml (20 s of a 2 MiB sync write stream
/// and an async metadata writer on an SSD) per elevator. Throughput is in
/// block requests (bios queued) per second of wall time.
fn io_runs(c: &mut Criterion) {
    let mut g = c.benchmark_group("io_requests");
    g.sample_size(10);
    for variant in ["cfq-4.4", "cfq-fixed", "deadline"] {
        let s = scenario("cfq-starvation").with_variant(variant).expect("variant");
        let r = sim_core::run(&s);
        let io = r.io.as_ref().expect("an I/O scenario");
        let requests: u64 = io.devices.iter().map(|d| d.queued[0] + d.queued[1]).sum();
        g.throughput(Throughput::Elements(requests));
        bench_run(&mut g, format!("cfq-starvation/{variant}"), &s);
    }
    g.finish();
}

/// `--trace` and `--timehist` of `jmx.toml`'s first 200,000 scheduling
/// records (the CLI's default cap): the export alone, run excluded.
fn trace_exports(c: &mut Criterion) {
    use sim_core::export::{Trace, chrome, timehist};
    use sim_core::metrics::recorder::TraceWindow;
    let mut sim = Simulation::new(&scenario("jmx"));
    sim.enable_trace(TraceWindow::all(200_000));
    sim.run_to_end();
    let trace = Trace::from_sim(&mut sim).expect("tracing was on");
    let mut g = c.benchmark_group("trace_export");
    g.sample_size(10);
    g.throughput(Throughput::Elements(trace.records.len() as u64));
    g.bench_function("jmx/chrome_json_200k", |b| b.iter(|| black_box(chrome::to_json(&trace, "bench").len())));
    g.bench_function("jmx/timehist_200k", |b| b.iter(|| black_box(timehist::render(&trace).len())));
    g.finish();
}

criterion_group!(benches, event_queue, whole_runs, io_runs, trace_exports);
criterion_main!(benches);
