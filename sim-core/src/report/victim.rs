//! The victim's part of a simulated run's report: its delays merged over
//! its instances, its delay histogram with who held the CPU, its worst
//! delay and the history of switches and wake-ups around it.

use super::run::{
    BucketRow, EevdfView, HistoryRow, NamedDelay, TaskReport, VictimReport, WorstDelay, has_response, one_hog_bound_ns,
};
use crate::ids::TaskId;
use crate::metrics::history::{RecordKind, SchedRecord};
use crate::metrics::latency::{DELAY_BUCKETS, LatencyStats, delay_bucket};
use crate::metrics::recorder::{Culprit, TaskMetrics};
use crate::view::RunView;
use std::collections::BTreeMap;

/// The victim: all instances of one declaration, merged.
pub(super) fn victim_report(v: &RunView, tasks: &[TaskReport], task_delays: &[NamedDelay]) -> VictimReport {
    let spec = v.spec;
    let rec = v.recorder;
    let vs = &spec.tasks[spec.victim];
    let range = vs.first.index()..vs.first.index() + vs.count as usize;
    let delays = &task_delays[spec.victim];
    let victims = &rec.tasks[range.clone()];
    let victim_tasks = &tasks[range];
    let summary_of = |part: fn(&TaskMetrics) -> &LatencyStats| {
        LatencyStats::summary_of(&victims.iter().map(part).collect::<Vec<_>>())
    };
    let cap = &rec.capture;
    VictimReport {
        name: vs.name.clone(),
        delay: delays.delay,
        delay_cdf: delays.cdf.clone(),
        // One instance (the usual victim): its own figures are the merge's.
        wakeup_delay: match victim_tasks {
            [t] => t.wakeup_delay,
            _ => {
                let mut w = summary_of(|m| &m.wakeup_delay);
                for t in victim_tasks {
                    w.add_open_of(&t.wakeup_delay);
                }
                w
            }
        },
        throttled_delay: match victim_tasks {
            [t] => t.throttled_delay,
            _ => {
                let mut w = summary_of(|m| &m.throttled_delay);
                let mut any = w.count > 0;
                for t in victim_tasks {
                    if let Some(d) = &t.throttled_delay {
                        w.add_open_of(d);
                        any = true;
                    }
                }
                any.then_some(w)
            }
        },
        response: match victim_tasks {
            [t] => t.response,
            _ => has_response(&vs.program).then(|| summary_of(|m| &m.response)),
        },
        worst: match (cap.victim, cap.cpu, cap.kind) {
            (Some(victim), Some(cpu), Some(kind)) => Some(WorstDelay {
                comm: v.task_comm(victim).to_string(),
                cpu: cpu.0,
                start_ns: cap.wait_start.ns(),
                end_ns: cap.wait_end.ns(),
                kind,
            }),
            _ => None,
        },
        histogram: histogram(v, victims, delays),
        history: history(v),
        history_truncated: cap.truncated,
        one_hog_bound_ns: one_hog_bound_ns(spec, v.tick_ns),
    }
}

/// The victim's delay histogram, each bucket with who held the CPU
/// (aggregated by declared name, largest first).
fn histogram(v: &RunView, victims: &[TaskMetrics], delays: &NamedDelay) -> Vec<BucketRow> {
    let name_of = |c: Culprit| {
        c.map_or_else(|| "(history not kept)".to_string(), |t| v.spec.tasks[v.tasks[t.index()].spec].name.clone())
    };
    let mut by_name: Vec<BTreeMap<String, u64>> = vec![BTreeMap::new(); DELAY_BUCKETS];
    for m in victims {
        for (&(b, who), &ns) in &m.culprits {
            *by_name[usize::from(b)].entry(name_of(who)).or_insert(0) += ns;
        }
    }
    let mut bucket_culprits: Vec<Vec<(String, u64)>> = by_name.into_iter().map(|m| m.into_iter().collect()).collect();
    delays
        .histogram
        .iter()
        .map(|&(low_ns, high_ns, count)| {
            let mut culprits = std::mem::take(&mut bucket_culprits[delay_bucket(low_ns)]);
            culprits.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            BucketRow { low_ns, high_ns, count, culprits }
        })
        .collect()
}

/// The history window captured around the worst delay, as report rows.
fn history(v: &RunView) -> Vec<HistoryRow> {
    let spec = v.spec;
    let cap = &v.recorder.capture;
    // Each task's `comm[tid]` is written once: the window holds up to
    // `CAPTURE_ROWS_MAX` rows of one or two names, mostly the same few tasks.
    let mut labels: BTreeMap<TaskId, String> = BTreeMap::new();
    let mut label = |t: Option<TaskId>| match t {
        None => "<idle>".to_string(),
        Some(t) => labels.entry(t).or_insert_with(|| format!("{}[{}]", v.task_comm(t), v.tasks[t.index()].tid)).clone(),
    };
    let is_victim = |t: Option<TaskId>| t.is_some() && t == cap.victim;
    // Deadlines and lags decide the pick under EEVDF only.
    let eevdf = spec.kernel.picks_by_lag_and_deadline();
    let fair = |t: Option<TaskId>| t.is_some_and(|t| v.tasks[t.index()].policy.class() == crate::sched::ClassKind::Fair);
    let prio_of = |t: Option<TaskId>| {
        t.filter(|_| !fair(t)).map(|t| {
            let task = &v.tasks[t.index()];
            task.policy.kernel_prio(task.nice, spec.tasks[task.spec].rt_priority)
        })
    };
    cap.records
        .iter()
        .enumerate()
        .map(|(i, r)| match r.kind {
            RecordKind::Switch {
                prev,
                prev_state,
                prev_sched_in,
                prev_wait_ns,
                prev_sch_delay_ns,
                prev_vruntime,
                next,
                next_vruntime,
                prev_eevdf,
                next_eevdf,
            } => HistoryRow::Switch {
                at_ns: r.at.ns(),
                cpu: r.cpu.0,
                task: label(prev),
                wait_ns: prev_wait_ns,
                sch_delay_ns: prev_sch_delay_ns,
                run_ns: r.at.since(prev_sched_in),
                state: prev_state,
                vruntime: prev_vruntime,
                next: label(next),
                next_vruntime,
                min_vruntime: r.min_vruntime,
                victim: is_victim(prev) || is_victim(next),
                prev_eevdf: eevdf.then(|| prev.filter(|_| fair(prev)).map(|_| EevdfView::of(prev_eevdf))).flatten(),
                next_eevdf: eevdf.then(|| next.filter(|_| fair(next)).map(|_| EevdfView::of(next_eevdf))).flatten(),
                next_prio: prio_of(next),
            },
            RecordKind::Wakeup { task, vruntime, preempt, prev_cpu, verdict, group_level, eevdf: state, .. } => {
                HistoryRow::Wakeup {
                    at_ns: r.at.ns(),
                    cpu: r.cpu.0,
                    task: label(Some(task)),
                    vruntime,
                    preempt,
                    verdict,
                    group_level,
                    eevdf: eevdf.then(|| EevdfView::of(state)),
                    min_vruntime: r.min_vruntime,
                    victim: is_victim(Some(task)),
                    prev_cpu: prev_cpu.0,
                    placed_by: if prev_cpu != r.cpu { placed_by(&cap.records[..i], task, r.at) } else { None },
                }
            }
            RecordKind::Migrate { task, orig_cpu, dest_cpu, cause } => HistoryRow::Migrate {
                at_ns: r.at.ns(),
                cpu: r.cpu.0,
                task: label(Some(task)),
                orig_cpu: orig_cpu.0,
                dest_cpu: dest_cpu.0,
                cause: cause.name(),
                victim: is_victim(Some(task)),
            },
            RecordKind::Throttle { group, throttled } => HistoryRow::Throttle {
                at_ns: r.at.ns(),
                cpu: r.cpu.0,
                group: spec.groups.groups[group.index()].path.clone(),
                throttled,
            },
            RecordKind::RtThrottle { throttled } => HistoryRow::Throttle {
                at_ns: r.at.ns(),
                cpu: r.cpu.0,
                group: "RT class (sched_rt_runtime_us)".to_string(),
                throttled,
            },
        })
        .collect()
}

/// Why a wake-up at `at` moved `task`: the cause of its placement `Migrate`
/// record (a `select_task_rq` cause: set_task_cpu runs just before the
/// task is queued, 4.4 core.c:try_to_wake_up / wake_up_new_task) among the
/// `earlier` records of the same instant.
fn placed_by(earlier: &[SchedRecord], task: TaskId, at: crate::time::SimTime) -> Option<&'static str> {
    earlier.iter().rev().take_while(|p| p.at == at).find_map(|p| match p.kind {
        RecordKind::Migrate { task: t, cause, .. } if t == task && cause.is_placement() => Some(cause.name()),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::CpuId;
    use crate::sched::migrate::MigrateCause;
    use crate::time::SimTime;

    fn rec(at: u64, kind: RecordKind) -> SchedRecord {
        SchedRecord { at: SimTime(at), cpu: CpuId(0), min_vruntime: 0, root_min_vruntime: 0, nr_running: 1, kind }
    }

    fn migrate(task: u32, cause: MigrateCause) -> RecordKind {
        RecordKind::Migrate { task: TaskId(task), orig_cpu: CpuId(1), dest_cpu: CpuId(0), cause }
    }

    /// A wake-up's reason is the placement Migrate of the same task at the
    /// same instant; a balancing pull (not a select_task_rq cause), another
    /// task's move or an earlier instant's move is not it.
    #[test]
    fn a_wakeup_is_explained_by_its_own_placement_at_the_same_instant() {
        let at = SimTime(10);
        let earlier = [rec(5, migrate(1, MigrateCause::WakeAffine)), rec(10, migrate(1, MigrateCause::IdleSibling))];
        assert_eq!(placed_by(&earlier, TaskId(1), at), Some("idle_sibling"));
        assert_eq!(placed_by(&earlier[..1], TaskId(1), at), None);
        let others = [rec(10, migrate(2, MigrateCause::WakeIdlest)), rec(10, migrate(1, MigrateCause::NewIdle))];
        assert_eq!(placed_by(&others, TaskId(1), at), None);
    }
}
