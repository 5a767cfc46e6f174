//! Tests of the run and compare text reports: the header, tables, victim
//! history and compare columns on small scenarios run end to end.

use super::*;
use sim_core::{HistoryRow, Scenario};

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
    let io = line(include_str!("../../../scenarios/cfq-starvation.toml"));
    assert!(io.starts_with("warm-up: first 50ms excluded from every scheduling statistic"), "{io}");
    assert!(io.ends_with("the block devices' blktrace figures cover the whole run"), "{io}");
    let cpu = line(include_str!("../../../scenarios/two-hogs.toml"));
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
    assert!(base.contains("HZ=1000") && base.contains("tasks: reactor nice 0 cpus 0-1 · jvm-gc×2 nice 0"), "{base}");
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
    r.victim.worst = Some(sim_core::WorstDelay {
        comm: "w/0".into(),
        cpu: 0,
        start_ns: 1_000_000,
        end_ns: 2_000_000,
        kind: sim_core::WaitKind::Wakeup,
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
            verdict: sim_core::WakeupVerdict::BeyondGranularity,
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
        let l = text.lines().find(|l| l.trim_start().starts_with(name)).unwrap_or_else(|| panic!("no {name}:\n{text}"));
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
    assert!(sim_core::Timeline::from_report(&r).is_none());
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
