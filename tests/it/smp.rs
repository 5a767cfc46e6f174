//! Multi-CPU behaviour end to end (Linux 4.4 placement and balancing through
//! the whole engine): spreading, a worker leaving a pinned hog's CPU, fork
//! placement, newidle and active pulls, isolcpus, NO_HZ on and off. The rule
//! by rule cases with hand-computed numbers are in
//! `sim-core/src/sched/balance/linux44/tests.rs`.

use sim_core::{RunReport, Scenario};

fn run(toml: &str) -> RunReport {
    sim_core::run(&Scenario::from_toml("smp.toml", toml).unwrap_or_else(|e| panic!("{e}")))
}

fn busy_share(r: &RunReport, cpu: usize) -> f64 {
    r.cpus[cpu].busy_ns as f64 / r.sim_time_ns as f64
}

fn moves(r: &RunReport, task: &str, cause: &str) -> u64 {
    r.tasks
        .iter()
        .filter(|t| t.name == task)
        .flat_map(|t| t.migrations.iter())
        .filter(|(c, _)| *c == cause)
        .map(|(_, n)| n)
        .sum()
}

fn all_moves(r: &RunReport) -> u64 {
    r.tasks.iter().flat_map(|t| t.migrations.iter()).map(|(_, n)| n).sum()
}

/// N CPU hogs that sleep first, on M < N CPUs of several shapes, end up
/// keeping every CPU at least 90% busy over one simulated second: the
/// wake-ups spread them (`select_idle_sibling` finds idle CPUs in the LLC,
/// `find_idlest_group` across sockets at fork) and the balancer evens out
/// the rest. Before the SMP model all of them ran on CPU 0.
#[test]
fn sleep_first_hogs_spread_over_every_cpu() {
    for (machine, hogs) in [
        ("cpus = 4", 8),
        ("cpus = 4", 5),
        ("sockets = 1\ncores_per_socket = 2\nthreads_per_core = 2", 6),
        ("sockets = 2\ncores_per_socket = 2\nthreads_per_core = 2\nnuma_nodes = 2", 12),
        ("sockets = 2\ncores_per_socket = 4\nthreads_per_core = 1", 9),
    ] {
        let r = run(&format!(
            "schema = 1\nseed = 3\nduration = \"1s\"\n[kernel]\nversion = \"4.4\"\n[machine]\n{machine}\n\
             [[tasks]]\nname = \"hog\"\ncount = {hogs}\nprogram = [{{ sleep = \"1ms\" }}, {{ run = \"10s\" }}]\n"
        ));
        for c in 0..r.cpus.len() {
            assert!(busy_share(&r, c) >= 0.9, "{machine}, {hogs} hogs: cpu{c} busy {:.3}", busy_share(&r, c));
        }
    }
}

/// The example: 8 sleep-first hogs on 4 CPUs were 100/0/0/0% busy;
/// the first tenth of a second already has every CPU busy.
#[test]
fn eight_hogs_on_four_cpus_spread_within_100ms() {
    let r = run("schema = 1\nseed = 1\nduration = \"100ms\"\n[kernel]\nversion = \"4.4\"\n[machine]\ncpus = 4\n\
                 [[tasks]]\nname = \"hog\"\ncount = 8\nprogram = [{ sleep = \"1ms\" }, { run = \"10s\" }]\n");
    for c in 0..4 {
        assert!(busy_share(&r, c) >= 0.9, "cpu{c} busy {:.3}", busy_share(&r, c));
    }
}

/// An unpinned worker sharing CPU 0 with a pinned hog leaves for CPU 1 as
/// soon as CPU 1 goes idle: the task that ran there exits, CPU 1's
/// `idle_balance` (avg_idle above 0.5 ms, root domain overloaded since CPU 0
/// holds two tasks) finds CPU 0 overloaded and pulls the queued worker.
#[test]
fn unpinned_worker_leaves_the_pinned_hogs_cpu_when_another_goes_idle() {
    let r = run("schema = 1\nseed = 1\nduration = \"1s\"\n[kernel]\nversion = \"4.4\"\n[machine]\ncpus = 2\n\
                 [[tasks]]\nname = \"pinned\"\ncpus = \"0\"\nprogram = [{ run = \"10s\" }]\n\
                 [[tasks]]\nname = \"other\"\ncpus = \"1\"\niterations = 1\nprogram = [{ run = \"100ms\" }]\n\
                 [[tasks]]\nname = \"worker\"\nstart = \"1ms\"\nprogram = [{ run = \"10s\" }]\n");
    assert_eq!(moves(&r, "worker", "newidle"), 1, "{:?}", r.tasks.iter().map(|t| &t.migrations).collect::<Vec<_>>());
    assert_eq!(all_moves(&r), 1);
    // Both CPUs stay busy: CPU 1 idles only at the instant "other" exits.
    assert!(busy_share(&r, 1) > 0.99, "{}", busy_share(&r, 1));
    // The worker shared CPU 0 for the first 100 ms: about half of it.
    let worker = r.tasks.iter().find(|t| t.name == "worker").unwrap();
    assert!((940_000_000..960_000_000).contains(&worker.runtime_ns), "{}", worker.runtime_ns);
}

/// Forks at one instant on an idle 4-CPU machine: the first child leaves the
/// parent's CPU 0 for the first other group (all loads 0); each later child
/// finds the CPUs that have a child loaded (a new task starts with a full
/// load average) and takes the next idle one; the last finds the parent's
/// own CPU the idlest and stays (find_idlest_group returns NULL). Three fork
/// migrations, one hog per CPU, nothing else moves.
#[test]
fn forks_spread_through_find_idlest_group() {
    let r = run("schema = 1\nseed = 1\nduration = \"200ms\"\n[kernel]\nversion = \"4.4\"\n[machine]\ncpus = 4\n\
                 [[tasks]]\nname = \"hog\"\ncount = 4\nprogram = [{ run = \"10s\" }]\n");
    assert_eq!(moves(&r, "hog", "fork"), 3);
    assert_eq!(all_moves(&r), 3);
    for c in 0..4 {
        assert_eq!(r.cpus[c].busy_ns, r.sim_time_ns, "cpu{c}");
    }
}

/// The pinned-pair case for active balancing: CPU 0 runs a movable nice-0
/// hog almost all the time beside a nice-19 hog pinned there; CPU 1 goes
/// idle at 50 ms. Every pull fails (the movable task is running, the other
/// is pinned) until nr_balance_failed exceeds cache_nice_tries + 2; then
/// CPU 0's stopper pushes the running task to CPU 1.
#[test]
fn active_balance_moves_a_running_task_off_a_pinned_pair() {
    let r =
        run("schema = 1\nseed = 1\nduration = \"1s\"\n[kernel]\nversion = \"4.4\"\n[machine]\ncpus = 2\nhz = 1000\n\
                 [[tasks]]\nname = \"pinned\"\ncpus = \"0\"\nnice = 19\nprogram = [{ run = \"10s\" }]\n\
                 [[tasks]]\nname = \"other\"\ncpus = \"1\"\niterations = 1\nprogram = [{ run = \"50ms\" }]\n\
                 [[tasks]]\nname = \"mover\"\nstart = \"1ms\"\nprogram = [{ run = \"10s\" }]\n");
    assert!(moves(&r, "mover", "active") >= 1);
    // 4.4 then lets CPU 0 (nice-19 load 15 against 1024) pull the mover
    // back the same way every few busy balance intervals (fix_small_imbalance
    // sets the imbalance to the busiest group's load per task), and CPU 1,
    // newly idle, takes it straight back (migrate_task_rq_fair zeroes
    // exec_start: the task is never cache hot after a move). Every move is
    // one of those two.
    assert_eq!(all_moves(&r), moves(&r, "mover", "active") + moves(&r, "mover", "newidle"));
    assert!(busy_share(&r, 1) > 0.93, "{}", busy_share(&r, 1));
    // Four failed balances of CPU 1 at its 2 ms interval: CPU 0 had a task
    // waiting beside an idle CPU 1 for well under 20 ms.
    assert!(r.cpus[0].balance_gap_ns > 0 && r.cpus[0].balance_gap_ns < 20_000_000, "{}", r.cpus[0].balance_gap_ns);
}

/// isolcpus (4.4 semantics): unbound tasks get the non-isolated CPUs
/// (sched_init_smp), and no balancing reaches an isolated CPU, even when
/// work queues up elsewhere; a task pinned there runs there.
#[test]
fn isolated_cpus_run_only_what_is_pinned_there() {
    let r = run(
        "schema = 1\nseed = 1\nduration = \"500ms\"\n[kernel]\nversion = \"4.4\"\n[machine]\ncpus = 4\nisolcpus = \"2-3\"\n\
                 [[tasks]]\nname = \"hog\"\ncount = 6\nprogram = [{ sleep = \"1ms\" }, { run = \"10s\" }]\n\
                 [[tasks]]\nname = \"rt\"\ncpus = \"3\"\nprogram = [{ sleep = \"1ms\" }, { run = \"100us\" }]\n",
    );
    assert_eq!(r.cpus[2].busy_ns, 0, "nothing may run on isolated CPU 2");
    let rt = r.tasks.iter().find(|t| t.name == "rt").unwrap();
    assert_eq!(r.cpus[3].busy_ns, rt.runtime_ns, "only the pinned task runs on CPU 3");
    for c in 0..2 {
        assert!(busy_share(&r, c) > 0.99);
    }
    assert!(r.tasks.iter().all(|t| t.name == "rt" || t.cpus_allowed == "0-1"), "unbound tasks get CPUs 0-1");
}

/// NO_HZ idle (the default) stops an idle CPU's tick; periodic ticks on
/// every CPU cost events and change who balances, not what the busy CPUs do
/// here: with nohz off, idle CPUs balance from their own ticks.
#[test]
fn nohz_idle_removes_idle_ticks() {
    let toml = |nohz: bool| {
        format!(
            "schema = 1\nseed = 1\nduration = \"1s\"\n[kernel]\nversion = \"4.4\"\n[machine]\ncpus = 8\nhz = 1000\nnohz = {nohz}\n\
             [[tasks]]\nname = \"w\"\ncount = 2\nprogram = [{{ run = \"200us\" }}, {{ sleep = \"5ms\" }}]\n"
        )
    };
    // Counted with every tick an event (elision off): elision would not
    // count the idle ticks that do nothing in either run.
    let events = |nohz: bool| {
        let s = sim_core::Scenario::from_toml("nohz.toml", &toml(nohz)).unwrap();
        let mut sim = sim_core::Simulation::new(&s);
        sim.set_elision(false);
        sim.run_to_end();
        sim.events()
    };
    let (on, off) = (events(true), events(false));
    // Eight CPUs ticking 1000 times a second is 8000 tick events; the
    // tickless run keeps only the few ticks that fall while a task runs.
    assert!(off >= on + 7_000, "nohz on {on} events, off {off}");
}

/// RT pressure on fair capacity (docs/kernel/rt-capacity.md): an RT hog
/// pinned to CPU 0 and two fair hogs on 2 CPUs. Fork placement looks at
/// fair load only, so one fair hog starts on CPU 0 behind the RT hog.
/// With `cpu_capacity` lowered by the RT time (4.4 `rt_avg`, 6.x `avg_rt`
/// through `scale_rt_capacity`), CPU 0's group looks loaded and CPU 1's
/// periodic balance takes the starving task (`find_busiest_queue` does not
/// skip its lone task: `check_cpu_capacity`). Without it both CPUs carry
/// load 1024 on capacity 1024 and the task stays, getting what RT leaves:
/// nothing in 4.4 (RT_RUNTIME_SHARE lets CPU 0 borrow CPU 1's RT runtime),
/// 5% in 6.6 (throttling) and 6.12+ (the fair server).
/// - 4.4: CPU 0 (capacity 1, local avg_load 0) pulls a task back at its
///   own balance (`fix_small_imbalance` sets the imbalance to a task's
///   load), so the two fair hogs take turns on CPU 1: ping-pong, as 4.4.
/// - 6.x: CPU 0's group is overloaded (capacity 1 < runnable); CPU 0's own
///   balance (not idle, local has spare) computes `sibling_imbalance` 0,
///   so the task stays on CPU 1 and the two fair hogs share it.
#[test]
fn a_fair_task_leaves_a_cpu_an_rt_hog_takes() {
    for version in ["4.4", "6.6", "6.12", "6.18"] {
        let r = run(&format!(
            "schema = 1\nseed = 1\nduration = \"2s\"\n[kernel]\nversion = \"{version}\"\n[machine]\ncpus = 2\n\
             [[tasks]]\nname = \"rt\"\npolicy = \"fifo\"\nrt_priority = 50\ncpus = \"0\"\nprogram = [{{ run = \"100s\" }}]\n\
             [[tasks]]\nname = \"fair\"\nstart = \"1ms\"\ncount = 2\nprogram = [{{ run = \"100s\" }}]\n"
        ));
        let fair: Vec<u64> = r.tasks.iter().filter(|t| t.name == "fair").map(|t| t.runtime_ns).collect();
        let rt = r.tasks.iter().find(|t| t.name == "rt").map_or(0, |t| t.runtime_ns);
        // Both fair hogs get a fair share of CPU 1 (each ~1 s of 2 s; the
        // starving one would get 0-100 ms without the capacity model).
        assert!(fair.iter().all(|&ns| ns >= 600_000_000), "{version}: fair {fair:?}");
        assert!(moves(&r, "fair", "periodic") >= 1, "{version}");
        // The RT hog keeps CPU 0 (6.6 throttles it to 95%).
        assert!(rt >= 1_900_000_000, "{version}: rt {rt}");
    }
}
