//! A fixed-column, line-per-event rendering of a traced run: the format unit
//! tests pin timelines with, and a plain listing for people.

use crate::metrics::history::{RecordKind, SchedRecord};
use crate::time::SimTime;
use crate::view::RunView;

/// Renders `records` one per line:
/// `time  cpu  event  task(s)  vruntime(s)  min_vruntime`.
pub fn render(v: &RunView, records: &[SchedRecord]) -> String {
    let name = |t: Option<crate::ids::TaskId>| t.map_or("<idle>", |t| v.task_comm(t)).to_string();
    let mut out = String::new();
    for r in records {
        let line = match r.kind {
            RecordKind::Switch { prev, prev_state, next, prev_vruntime, next_vruntime, .. } => format!(
                "{:>11} cpu{:<3} switch {:<12} {:<2} -> {:<12} v={:<12} next_v={:<12} min_v={}",
                SimTime(r.at.ns()).to_string(),
                r.cpu.0,
                name(prev),
                if prev.is_some() { prev_state.code() } else { "" },
                name(next),
                if prev.is_some() { prev_vruntime.to_string() } else { "-".into() },
                if next.is_some() { next_vruntime.to_string() } else { "-".into() },
                r.min_vruntime
            ),
            RecordKind::Wakeup { task, vruntime, preempt, .. } => format!(
                "{:>11} cpu{:<3} wakeup {:<12} {:<2}    {:<12} v={:<12} {:<19} min_v={}",
                SimTime(r.at.ns()).to_string(),
                r.cpu.0,
                name(Some(task)),
                "",
                if preempt { "preempts" } else { "" },
                vruntime,
                "",
                r.min_vruntime
            ),
            RecordKind::Migrate { task, orig_cpu, dest_cpu, cause } => format!(
                "{:>11} cpu{:<3} migrate {:<12} cpu{} -> cpu{} ({})",
                SimTime(r.at.ns()).to_string(),
                r.cpu.0,
                name(Some(task)),
                orig_cpu.0,
                dest_cpu.0,
                cause.name()
            ),
            RecordKind::Throttle { group, throttled } => format!(
                "{:>11} cpu{:<3} {} group {}",
                SimTime(r.at.ns()).to_string(),
                r.cpu.0,
                if throttled { "throttle" } else { "unthrottle" },
                group.0
            ),
            RecordKind::RtThrottle { throttled } => format!(
                "{:>11} cpu{:<3} {} RT (sched_rt_runtime_us)",
                SimTime(r.at.ns()).to_string(),
                r.cpu.0,
                if throttled { "throttle" } else { "unthrottle" },
            ),
        };
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
