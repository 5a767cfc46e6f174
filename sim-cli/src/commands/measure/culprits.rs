//! Who held the CPU while a measured task waited: the spans each task ran on
//! each CPU, from `perf sched`'s `sched_switch` records, and the overlap of
//! a delay with them. This fills the report's "CPU held by" column and the
//! long-delay culprits, as the simulator's recorder does for a simulated run.

use sim_core::{SchedEvent, SchedTextRecord as SchedRecord};
use std::collections::BTreeMap;

/// A task on a CPU from `start` to `end`.
#[derive(Clone, Debug, PartialEq)]
struct Span {
    start: u64,
    end: u64,
    tid: u32,
    comm: String,
}

/// Each CPU's run spans, in time order.
#[derive(Debug, Default)]
pub struct CpuSpans {
    by_cpu: BTreeMap<u16, Vec<Span>>,
}

impl CpuSpans {
    /// Spans from the switch records (in time order, as `perf sched script`
    /// prints them). A CPU's time before its first switch is not attributed.
    pub fn build(records: &[SchedRecord]) -> CpuSpans {
        let mut open: BTreeMap<u16, (u64, u32, String)> = BTreeMap::new();
        let mut by_cpu: BTreeMap<u16, Vec<Span>> = BTreeMap::new();
        let last = records.last().map_or(0, |r| r.time_ns);
        for r in records {
            if let SchedEvent::Switch { next_pid, next_comm, .. } = &r.event {
                if let Some((start, tid, comm)) = open.remove(&r.cpu) {
                    by_cpu.entry(r.cpu).or_default().push(Span { start, end: r.time_ns, tid, comm });
                }
                open.insert(r.cpu, (r.time_ns, *next_pid, next_comm.clone()));
            }
        }
        for (cpu, (start, tid, comm)) in open {
            by_cpu.entry(cpu).or_default().push(Span { start, end: last, tid, comm });
        }
        CpuSpans { by_cpu }
    }

    /// The CPU on which `tid` was switched in at `at`.
    pub fn cpu_of_switch_in(&self, tid: u32, at: u64) -> Option<u16> {
        self.by_cpu.iter().find_map(|(&cpu, spans)| {
            let i = spans.partition_point(|s| s.start < at);
            spans[i..].iter().take_while(|s| s.start == at).any(|s| s.tid == tid).then_some(cpu)
        })
    }

    /// Time each task other than `except` (and the idle task) held `cpu`
    /// during `[from, to)`: `(tid, comm, ns)`.
    pub fn holders(&self, cpu: u16, from: u64, to: u64, except: u32) -> Vec<(u32, String, u64)> {
        let Some(spans) = self.by_cpu.get(&cpu) else { return Vec::new() };
        let first = spans.partition_point(|s| s.end <= from);
        let mut out: Vec<(u32, String, u64)> = Vec::new();
        for s in spans[first..].iter().take_while(|s| s.start < to) {
            let ns = s.end.min(to).saturating_sub(s.start.max(from));
            if ns == 0 || s.tid == 0 || s.tid == except {
                continue;
            }
            match out.iter_mut().find(|o| o.0 == s.tid) {
                Some(o) => o.2 += ns,
                None => out.push((s.tid, s.comm.clone(), ns)),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn switch(t: u64, cpu: u16, prev: u32, next: u32, next_comm: &str) -> SchedRecord {
        SchedRecord {
            time_ns: t,
            cpu,
            tid: prev,
            pid: None,
            comm: "x".into(),
            in_irq: false,
            event: SchedEvent::Switch {
                prev_comm: "p".into(),
                prev_pid: prev,
                prev_prio: 120,
                prev_state: "R".into(),
                next_comm: next_comm.into(),
                next_pid: next,
                next_prio: 120,
            },
        }
    }

    #[test]
    fn holders_are_the_overlap_of_a_wait_with_each_span() {
        // CPU 0: hog 100..400, idle 400..500, kworker 500..520, victim 520..600.
        // CPU 1: victim 50..90.
        let recs = vec![
            switch(50, 1, 0, 7, "reactor"),
            switch(90, 1, 7, 0, "swapper/1"),
            switch(100, 0, 0, 9, "hog"),
            switch(400, 0, 9, 0, "swapper/0"),
            switch(500, 0, 0, 33, "kworker/0:1"),
            switch(520, 0, 33, 7, "reactor"),
            switch(600, 0, 7, 9, "hog"),
        ];
        let s = CpuSpans::build(&recs);
        assert_eq!(s.cpu_of_switch_in(7, 520), Some(0));
        assert_eq!(s.cpu_of_switch_in(7, 50), Some(1));
        assert_eq!(s.cpu_of_switch_in(7, 500), None);
        // The victim waited 300..520 on CPU 0: hog 100 ns, idle skipped, kworker 20 ns.
        assert_eq!(s.holders(0, 300, 520, 7), vec![(9, "hog".to_string(), 100), (33, "kworker/0:1".to_string(), 20)]);
        // The last span (hog from 600) ends at the last record: nothing after it.
        assert_eq!(s.holders(0, 600, 900, 7), vec![]);
        assert_eq!(s.holders(3, 0, 900, 7), vec![]);
    }
}
