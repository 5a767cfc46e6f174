//! Criterion benchmarks: the event queue, the CFS class on its own (switch
//! cycles per second), whole scenario runs reported in simulated events per
//! second (`thrpt` in elements/s), how that rate scales with CPUs and tasks,
//! and the trace exports in scheduling records per second.
//!
//! `cargo bench -p schedlab-core --features internals --bench engine`; `cargo run -p schedlab-core --features internals --example
//! bench_table` then prints the README's tables from `target/criterion`.

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use sim_core::cpuset::CpuSet;
use sim_core::event::{Event, EventQueue};
use sim_core::ids::{CfsRqId, CpuId, EntityId};
use sim_core::sched::SchedClass;
use sim_core::sched::entity::SchedEntity;
use sim_core::sched::fair::{Cfs, DEQUEUE_SLEEP, ENQUEUE_WAKEUP, ENQUEUE_WAKING};
use sim_core::sched::group::{GroupLoad, ROOT_GROUP};
use sim_core::sched::tunables::{CfsTunables, TunableScaling, TunableValue};
use sim_core::sched::weights::LoadWeight;
use sim_core::time::SimTime;
use sim_core::workload::Policy;
use sim_core::{Scenario, Simulation};
use std::hint::black_box;

/// Loads a scenario file; `path` is relative to sim-core/.
fn scenario_file(path: &str) -> Scenario {
    let path = format!("{}/{path}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("scenario file");
    Scenario::from_toml(&path, &text).expect("valid scenario")
}

fn scenario(name: &str) -> Scenario {
    scenario_file(&format!("../scenarios/{name}.toml"))
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

/// One CPU whose fair class holds `n` nice-0 tasks, forked in turn, the
/// first of them picked to run: built through the same calls the engine
/// makes (`set_task_rq`, `task_fork`, `enqueue_task`, `pick_next_task`).
/// With `grouped`, the tasks sit in one cgroup below the root, as jmx.toml's
/// tasks sit in their autogroups: two levels, PELT group shares.
fn cfs_with_tasks(n: u32, grouped: bool) -> (Cfs, EntityId) {
    let d = TunableValue::Default;
    let tunables = CfsTunables::resolve(1, TunableScaling::Log, d, d, d);
    let mut cfs = Cfs::new(
        sim_core::sched::fair::FairConfig::of(sim_core::sched::model::KernelModel::Linux44, tunables),
        GroupLoad::Pelt,
        1,
    );
    // Task entities first (EntityId(task)), group entities after, as the engine lays them out.
    for _ in 0..n {
        cfs.entities.push(SchedEntity::new(LoadWeight::for_task(Policy::Normal, 0), CfsRqId(0), Policy::Normal));
    }
    let group =
        if grouped { cfs.create_group("/bench".to_string(), ROOT_GROUP, 1024, &CpuSet::all(1)) } else { ROOT_GROUP };
    for i in 0..n {
        let se = EntityId(i);
        cfs.set_task_rq(se, group, CpuId(0));
        cfs.task_fork(cfs.se(se).cfs_rq, se);
        cfs.enqueue_task(se, 0);
    }
    let curr = cfs.pick_next_task(CfsRqId(0), None).expect("at least one task");
    (cfs, curr)
}

/// The fair class alone, driven as the engine drives it when a running task
/// blocks and is woken again (a reactor between two requests): after 100 us
/// of running, `__schedule` dequeues it (`dequeue_task`, DEQUEUE_SLEEP) and
/// calls `pick_next_task` with it as prev (which puts it); then
/// `try_to_wake_up` makes its vruntime relative (`task_waking`), enqueues it
/// as a wakeup and runs `check_preempt_wakeup` against the new curr. The CPU
/// has `n` runnable tasks before and after each cycle, and they take turns.
/// `thrpt` is cycles per second. `flat`: the tasks in the CPU's root queue;
/// `group`: in one cgroup (two levels).
fn cfs_cycles(c: &mut Criterion) {
    let mut g = c.benchmark_group("cfs_cycle");
    g.throughput(Throughput::Elements(1));
    for (name, grouped) in [("flat", false), ("group", true)] {
        for n in [2u32, 16, 1000] {
            let (mut cfs, mut curr) = cfs_with_tasks(n, grouped);
            let root = CfsRqId(0);
            g.bench_function(format!("{name}/{n}"), |b| {
                b.iter(|| {
                    cfs.clock += 100_000;
                    cfs.dequeue_task(curr, DEQUEUE_SLEEP);
                    let next = cfs.pick_next_task(root, Some(curr)).expect("n - 1 tasks still runnable");
                    cfs.task_waking(curr);
                    cfs.enqueue_task(curr, ENQUEUE_WAKEUP | ENQUEUE_WAKING);
                    black_box(cfs.wakeup_preempt(next, curr, 0, false));
                    curr = next;
                });
            });
        }
    }
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
        // EEVDF 6.18 with the 6.x balancer on the same machine and load:
        // the issue-33 budget is within 1.25x of `jmx` (CFS 4.4, 4.4
        // balancer); `budget_6x` prints the ratio after the group.
        ("jmx", Some("linux618")),
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
    // NO_HZ idle off: every idle CPU ticks (and balances from its tick), the
    // pair shows what the tickless idle CPUs save.
    let s = scenario("jmx").with_overrides(&[("machine.nohz", "false")]).expect("override");
    g.throughput(Throughput::Elements(sim_core::run(&s).events));
    bench_run(&mut g, "jmx/nohz-off".to_string(), &s);
    // A big machine: 256 CPUs (4 sockets x 32 cores x 2 threads, 4 NUMA
    // nodes), 1000 tasks (pinned reactors with Poisson requests and kernel
    // threads; a batch cgroup, agents and a JVM left to the balancer); the
    // file describes it. A test of per-CPU and per-task structures and of
    // balancing at scale.
    let s = scenario_file("benches/large-machine.toml");
    g.throughput(Throughput::Elements(sim_core::run(&s).events));
    bench_run(&mut g, "large-machine".to_string(), &s);
    // The same 256 CPUs under 6.18 (EEVDF, the 6.x balancer): per-event
    // work must not grow with the CPUs beyond the domain spans.
    let s = s.with_overrides(&[("kernel.version", "\"6.18\"")]).expect("override");
    g.throughput(Throughput::Elements(sim_core::run(&s).events));
    bench_run(&mut g, "large-machine/6.18".to_string(), &s);
    g.finish();
    budget_6x();
}

/// Criterion's mean time of one benchmark of `scenario_end_to_end` as it
/// just wrote it (`target/criterion/<group>/<id>/new/estimates.json`).
fn mean_ns(id: &str) -> Option<f64> {
    let dir = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "../target".to_string());
    let path = format!("{dir}/criterion/scenario_end_to_end/{id}/new/estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v["mean"]["point_estimate"].as_f64()
}

/// Prints the issue-33 budget: EEVDF 6.18 jmx (6.x balancer) events per
/// second against CFS 4.4 jmx (4.4 balancer), which must stay within 1.25x.
fn budget_6x() {
    let events = |v: Option<&str>| {
        let mut s = scenario("jmx");
        if let Some(v) = v {
            s = s.with_variant(v).expect("variant");
        }
        sim_core::run(&s).events as f64
    };
    let (Some(t44), Some(t618)) = (mean_ns("jmx"), mean_ns("jmx_linux618")) else {
        println!("budget_6x: run both jmx and jmx/linux618 to compare them");
        return;
    };
    let (r44, r618) = (events(None) / t44 * 1e9, events(Some("linux618")) / t618 * 1e9);
    println!(
        "budget_6x: jmx CFS 4.4 {:.3} Melem/s, EEVDF 6.18 + 6.x balancer {:.3} Melem/s: 4.4 is {:.2}x faster (budget 1.25x)",
        r44 / 1e6,
        r618 / 1e6,
        r44 / r618
    );
}

/// Events per cell of the scaling grid: every run stops at this event count.
const SCALING_EVENTS: u64 = 1_000_000;

/// The scaling grid's workload, one generator for every cell: `tasks`
/// identical threads on `cpus` CPUs, all in the root group, thread *i*
/// pinned to CPU *i* mod `cpus` (`pin_each`), the even spread a load balancer
/// would keep (unpinned threads that start by sleeping would all be forked
/// onto the first idle CPU and stay there). Each loops `sleep
/// exp(S)`, `run exp(200us)`, with S chosen so its duty cycle is
/// 0.5 × min(1, cpus / tasks): every CPU that has tasks is about 50% busy and
/// sees the same rate of bursts (2,500 a second) and ticks whatever the cell,
/// so the cells differ only in how many CPUs and tasks the engine tracks.
/// With fewer tasks than CPUs, the CPUs without a task stay idle (no tick).
/// Runs stop after `SCALING_EVENTS` events (`limits.events_max`); the
/// simulated duration is what that takes (0.7 s with 256 busy CPUs, about
/// 170 s with one).
fn scaling_toml(cpus: u16, tasks: u32) -> String {
    let run_ns: u64 = 200_000;
    // duty = run / (run + sleep)  =>  sleep = run × (1 − duty) / duty, duty = 0.5 × min(1, cpus/tasks).
    let (num, den) = (u64::from(cpus).min(u64::from(tasks)), 2 * u64::from(tasks));
    let sleep_ns = run_ns * (den - num) / num;
    let last = cpus - 1;
    format!(
        r#"
        schema = 1
        name = "scaling-{cpus}cpus-{tasks}tasks"
        seed = 1
        duration = "3600s"
        [kernel]
        version = "4.4"
        [machine]
        cpus = {cpus}
        hz = 1000
        [limits]
        events_max = {SCALING_EVENTS}
        [[tasks]]
        name = "worker"
        count = {tasks}
        cpus = "0-{last}"
        pin_each = true
        program = [{{ sleep = "exp({sleep_ns}ns)" }}, {{ run = "exp({run_ns}ns)" }}]
        "#
    )
}

/// Simulated events per second over a 3 × 3 grid of machine sizes (1, 32,
/// 256 CPUs) and task counts (10, 100, 1000) of one workload (`scaling_toml`).
/// `cargo run -p schedlab-core --features internals --example bench_table` prints the table.
fn scaling(c: &mut Criterion) {
    let mut g = c.benchmark_group("scaling");
    g.sample_size(10);
    for cpus in [1u16, 32, 256] {
        for tasks in [10u32, 100, 1000] {
            let text = scaling_toml(cpus, tasks);
            let s = Scenario::from_toml("scaling.toml", &text).expect("valid scaling scenario");
            g.throughput(Throughput::Elements(sim_core::run(&s).events));
            bench_run(&mut g, format!("cpus_{cpus}/tasks_{tasks}"), &s);
        }
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

/// I/O-heavy scenarios of issue 21 (blk-mq schedulers, curve devices, the
/// userspace I/O layer), base and every variant. Throughput is in simulated
/// I/O events: the block layer's actions as blktrace records them (Q, M/F,
/// G, P, U, I, D, C; `Simulation::blk_actions`). Budget: at least 2 M per
/// second of wall time.
fn io_events(c: &mut Criterion) {
    let mut g = c.benchmark_group("io_events");
    g.sample_size(10);
    for file in ["scylla-io", "mq-starvation", "mixed-rw"] {
        let path = format!("{}/../scenarios/{file}.toml", env!("CARGO_MANIFEST_DIR"));
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let base = Scenario::from_toml(&path, &text).expect("valid scenario");
        let mut runs = vec![("base".to_string(), base.clone())];
        for v in base.variant_names() {
            runs.push((v.to_string(), base.with_variant(v).expect("variant")));
        }
        for (name, s) in runs {
            let mut sim = Simulation::new(&s);
            sim.run_to_end();
            g.throughput(Throughput::Elements(sim.blk_actions()));
            bench_run(&mut g, format!("{file}/{name}"), &s);
        }
    }
    g.finish();
}

/// `--trace` and `--timehist` of `jmx.toml`'s first 200,000 scheduling
/// records (the CLI's default cap): the export alone, run excluded.
fn trace_exports(c: &mut Criterion) {
    use sim_core::export::{Trace, chrome, timehist};
    use sim_core::metrics::recorder::TraceWindow;
    let mut sim = Simulation::new(&scenario("jmx"));
    sim.enable_trace(TraceWindow::all(200_000)).expect("traced from the start");
    sim.run_to_end();
    let trace = Trace::from_sim(&mut sim).expect("tracing was on");
    let mut g = c.benchmark_group("trace_export");
    g.sample_size(10);
    g.throughput(Throughput::Elements(trace.records.len() as u64));
    g.bench_function("jmx/chrome_json_200k", |b| b.iter(|| black_box(chrome::to_json(&trace, "bench").len())));
    g.bench_function("jmx/timehist_200k", |b| b.iter(|| black_box(timehist::render(&trace).len())));
    g.finish();
}

/// The same scenarios under each kernel model: CFS 4.4 against EEVDF 6.6,
/// 6.12 and 6.18 (the issue's budget: EEVDF events/s within 1.25x of CFS).
/// Throughput is each model's own event count, so the figures compare
/// events per second; `bench_table` prints them side by side.
fn kernel_models(c: &mut Criterion) {
    let mut g = c.benchmark_group("kernel_models");
    g.sample_size(10);
    for name in ["jmx", "desktop-build", "two-hogs"] {
        for version in ["4.4", "6.6", "6.12", "6.18"] {
            let s = scenario(name).with_overrides(&[("kernel.version", version)]).expect("kernel override");
            g.throughput(Throughput::Elements(sim_core::run(&s).events));
            bench_run(&mut g, format!("{name}/{version}"), &s);
        }
    }
    g.finish();
}

/// CFS bandwidth control's cost (issue 20's budget: at most 10 % fewer
/// events/s on scenarios without quotas). `benches/quota.toml` three ways: no
/// limit (`cpu.max` = max: accounting off, one predicted branch per charge),
/// a limit it never reaches (8 CPUs' worth: every charge accounted, no
/// throttle), and its 2-CPU limit (throttling, timers). The quota-free
/// shipped scenarios are in `scenario_end_to_end`, comparable across commits
/// with criterion's baselines (`--save-baseline` / `--baseline`).
fn bandwidth(c: &mut Criterion) {
    let mut g = c.benchmark_group("bandwidth");
    g.sample_size(10);
    let base = scenario_file("benches/quota.toml");
    for (id, cpu_max) in
        [("no-quota", "max 100000"), ("quota-unreached", "800000 100000"), ("quota-2cpu", "200000 100000")]
    {
        let s = base.with_overrides(&[("groups.\"/svc\".\"cpu.max\"", cpu_max)]).expect("override");
        g.throughput(Throughput::Elements(sim_core::run(&s).events));
        bench_run(&mut g, format!("quota/{id}"), &s);
    }
    g.finish();
}

/// Issue 22: exact event elision (`tick.rs`). Each case runs with elision
/// off (every tick an event, as before) and on; the ids end in `/off` and
/// `/on`, and the events of each are printed once, so the bench shows both
/// ratios the issue asks for: events and wall time per simulated second.
/// Cases: jmx (32 CPUs, 10 s), two hogs on one CPU at HZ 1000, a lone hog,
/// isolcpus, the wide thread pool, and 256-CPU machines (2 sockets × 64
/// cores × 2 threads) with 1, 16 and 128 busy CPUs (one pinned hog each),
/// the rest idle: what grows with the busy CPUs and what with all of them.
fn elision(c: &mut Criterion) {
    let mut g = c.benchmark_group("elision");
    g.sample_size(10);
    let mut cases: Vec<(String, Scenario)> = vec![
        ("jmx".into(), scenario("jmx")),
        (
            "two-hogs-hz1000-10s".into(),
            scenario("two-hogs").with_overrides(&[("machine.hz", "1000"), ("duration", "10s")]).expect("override"),
        ),
        ("isolcpus".into(), scenario("isolcpus")),
        ("threadpool-wide".into(), scenario("threadpool").with_variant("wide").expect("variant")),
    ];
    let lone = "schema = 1\nseed = 1\nduration = \"10s\"\n[kernel]\nversion = \"4.4\"\n[machine]\ncpus = 1\nhz = 1000\n[[tasks]]\nname = \"hog\"\nprogram = [{ run = \"100s\" }]\n";
    cases.push(("lone-hog-10s".into(), Scenario::from_toml("lone.toml", lone).expect("valid")));
    for busy in [1u32, 16, 128] {
        let text = format!(
            "schema = 1\nseed = 1\nduration = \"2s\"\n[kernel]\nversion = \"4.4\"\n[machine]\ncpus = 256\nsockets = 2\ncores_per_socket = 64\nthreads_per_core = 2\nnuma_nodes = 2\nhz = 250\n[[tasks]]\nname = \"hog\"\ncount = {busy}\ncpus = \"0-{}\"\npin_each = true\nprogram = [{{ run = \"100s\" }}]\n",
            busy - 1
        );
        cases.push((format!("256cpus-{busy}busy-2s"), Scenario::from_toml("idle256.toml", &text).expect("valid")));
    }
    for (name, s) in &cases {
        let count = |on: bool| {
            let mut sim = Simulation::new(s);
            sim.set_elision(on);
            sim.run_to_end();
            sim.events()
        };
        let (off, on) = (count(false), count(true));
        let sim_s = s.spec.duration_ns as f64 / 1e9;
        println!(
            "elision {name}: events per simulated s {:.0} off, {:.0} on: {:.2}x fewer",
            off as f64 / sim_s,
            on as f64 / sim_s,
            off as f64 / on.max(1) as f64
        );
        for on in [false, true] {
            g.bench_function(format!("{name}/{}", if on { "on" } else { "off" }), |b| {
                b.iter_batched(
                    || {
                        let mut sim = Simulation::new(s);
                        sim.set_elision(on);
                        sim
                    },
                    |mut sim| {
                        sim.run_to_end();
                        black_box(sim.events())
                    },
                    BatchSize::LargeInput,
                );
            });
        }
    }
    g.finish();
}

/// `tasks` periodic tasks on one CPU, like the peer simulator's task sets:
/// task *i* wakes every `(4 + 2i)` ms (`sleep_until`, offset `i` × 100 us so
/// they do not all wake at once) and runs `(150 + 50i)` us, about 25-35 %
/// of the CPU in all; `duration` simulated.
fn periodic_toml(tasks: u32, duration: &str) -> String {
    let mut text = format!(
        r#"
        schema = 1
        name = "periodic-{tasks}"
        seed = 1
        duration = "{duration}"
        [kernel]
        version = "4.4"
        [machine]
        cpus = 1
        hz = 250
        "#
    );
    for i in 0..tasks {
        let (period_ms, offset_us, run_us) = (4 + 2 * i, 100 * i, 150 + 50 * i);
        text.push_str(&format!(
            r#"
            [[tasks]]
            name = "periodic-{i}"
            cpus = "0"
            program = [{{ sleep_until = "{period_ms}ms", offset = "{offset_us}us" }}, {{ run = "{run_us}us" }}]
            "#
        ));
    }
    text
}

/// The median wall time of `f` over `n` calls (a figure for the ratio line:
/// criterion's own estimates are not readable from the bench). A bench
/// outside the core may read the wall clock.
#[allow(clippy::disallowed_methods)]
fn median_ns(n: usize, mut f: impl FnMut()) -> u128 {
    let mut times: Vec<u128> = (0..n)
        .map(|_| {
            let t = std::time::Instant::now();
            f();
            t.elapsed().as_nanos()
        })
        .collect();
    times.sort_unstable();
    times[n / 2]
}

/// What building the report costs against the run it reports (issue 22:
/// report building must not cost more than the simulation). Per scenario:
/// `sim` is `Simulation::new` + `run_to_end`, `report` is `sim.report()` of
/// the finished run (every section), `report_printed` the sections the JSON
/// and text reports print (`ReportSections::PRINTED`), `json` is
/// `report_json` of the report. Each scenario also prints one line: median
/// times and the ratios to the run.
fn report(c: &mut Criterion) {
    use sim_core::report::json::report_json;
    use sim_core::report::run::ReportSections;
    let mut runs: Vec<(String, Scenario)> = Vec::new();
    for (name, duration) in [("two-hogs", "200ms"), ("two-hogs", "1s"), ("jmx", "1s")] {
        let s = scenario(name).with_overrides(&[("duration", duration)]).expect("duration override");
        runs.push((format!("{name}/{duration}"), s));
    }
    for (tasks, duration) in [(4u32, "1s"), (8, "1s"), (8, "10s")] {
        let s = Scenario::from_toml("periodic.toml", &periodic_toml(tasks, duration)).expect("valid periodic set");
        runs.push((format!("periodic-{tasks}/{duration}"), s));
    }
    let mut g = c.benchmark_group("report");
    g.sample_size(10);
    for (id, s) in &runs {
        g.bench_function(format!("{id}/sim"), |b| {
            b.iter(|| {
                let mut sim = Simulation::new(s);
                sim.run_to_end();
                black_box(sim.events())
            });
        });
        let mut sim = Simulation::new(s);
        sim.run_to_end();
        g.bench_function(format!("{id}/report"), |b| b.iter(|| black_box(sim.report())));
        g.bench_function(format!("{id}/report_printed"), |b| {
            b.iter(|| black_box(sim_core::RunReport::of_sections(&sim, ReportSections::PRINTED)))
        });
        let r = sim.report();
        g.bench_function(format!("{id}/json"), |b| b.iter(|| black_box(report_json(&r).len())));
        let n = 21;
        let sim_ns = median_ns(n, || {
            let mut sim = Simulation::new(s);
            sim.run_to_end();
            black_box(sim.events());
        });
        let report_ns = median_ns(n, || {
            black_box(sim.report());
        });
        let printed_ns = median_ns(n, || {
            black_box(sim_core::RunReport::of_sections(&sim, ReportSections::PRINTED).ok());
        });
        let json_ns = median_ns(n, || {
            black_box(report_json(&r).len());
        });
        let ms = |ns: u128| ns as f64 / 1e6;
        println!(
            "report-ratio {id}: events {} sim {:.3} ms, report {:.3} ms, printed {:.3} ms, json {:.3} ms; \
             report/sim {:.3}, printed/sim {:.3}, (printed+json)/sim {:.3}",
            sim.events(),
            ms(sim_ns),
            ms(report_ns),
            ms(printed_ns),
            ms(json_ns),
            report_ns as f64 / sim_ns as f64,
            printed_ns as f64 / sim_ns as f64,
            (printed_ns + json_ns) as f64 / sim_ns as f64
        );
    }
    g.finish();
}

criterion_group!(
    benches,
    event_queue,
    cfs_cycles,
    whole_runs,
    scaling,
    io_runs,
    io_events,
    trace_exports,
    kernel_models,
    bandwidth,
    elision,
    report
);
criterion_main!(benches);
