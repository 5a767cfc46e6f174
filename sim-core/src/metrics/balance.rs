//! The "balance gap": per CPU, the simulated time during which it had tasks
//! waiting (`nr_running >= 2`, the running one included) while at least one
//! other CPU that load balancing could move work to was idle
//! (`nr_running == 0`). `nr_running` here counts runnable tasks: the engine
//! leaves out those DELAY_DEQUEUE keeps queued asleep (6.12+), which the
//! kernel's `rq->nr_running` still holds but which wait for nothing. It
//! measures work the balancer (4.4 fair.c:
//! `load_balance`, `idle_balance`, `nohz_idle_balance`, `select_idle_sibling`)
//! left unspread, whatever the reason (balance intervals, affinity,
//! imbalance thresholds).
//!
//! O(1) per `nr_running` change, whatever the number of CPUs: each span (the
//! CPUs balancing can move work between) keeps its idle-CPU count and a "gap
//! clock" `G(t)`, the integral of `[idle_count > 0] dt`; a CPU that starts
//! waiting notes `G` and, when it stops, adds the growth of `G` since. A
//! waiting CPU is never idle itself, so "another CPU idle" is just
//! `idle_count > 0`.

use crate::ids::CpuId;
use crate::time::SimTime;

#[derive(Clone, Copy, Debug, Default)]
struct Span {
    /// CPUs of the span with `nr_running == 0`.
    idle: u32,
    /// The gap clock `G` at `at`.
    clock_ns: u64,
    at: SimTime,
}

impl Span {
    /// `G` at `now` (`now` not before the last update), counting only time
    /// from `from` on (the end of the warm-up).
    fn clock_at(&self, now: SimTime, from: SimTime) -> u64 {
        self.clock_ns + if self.idle > 0 { now.since(self.at.max(from)) } else { 0 }
    }

    fn advance(&mut self, now: SimTime, from: SimTime) {
        self.clock_ns = self.clock_at(now, from);
        self.at = self.at.max(now);
    }
}

#[derive(Clone, Copy, Debug, Default)]
struct CpuGap {
    nr_running: u32,
    /// Dense span index.
    span: u32,
    /// `G` of the span when the CPU began waiting (`nr_running >= 2`).
    waiting_since: Option<u64>,
    /// Gap of the waits that ended.
    gap_ns: u64,
}

/// Balance-gap accounting for every CPU.
#[derive(Clone, Debug, Default)]
pub struct BalanceGap {
    spans: Vec<Span>,
    cpus: Vec<CpuGap>,
    /// The gap counts from this time on (`[report] warmup`).
    from: SimTime,
}

impl BalanceGap {
    /// `balance_span[c]`: the id of CPU `c`'s balancing span (CPUs sharing an
    /// id can exchange work). Every CPU starts idle at time zero.
    pub fn new(balance_span: &[u16]) -> BalanceGap {
        // Dense span indices, in order of first appearance (ids may be sparse).
        let mut ids: Vec<u16> = Vec::new();
        let mut cpus = Vec::with_capacity(balance_span.len());
        for &id in balance_span {
            let span = match ids.iter().position(|&x| x == id) {
                Some(i) => i,
                None => {
                    ids.push(id);
                    ids.len() - 1
                }
            };
            cpus.push(CpuGap { span: span as u32, ..CpuGap::default() });
        }
        let mut spans = vec![Span::default(); ids.len()];
        for c in &cpus {
            spans[c.span as usize].idle += 1;
        }
        BalanceGap { spans, cpus, from: SimTime::ZERO }
    }

    /// Counts the gap from `from` on only (the end of the warm-up).
    pub fn set_from(&mut self, from: SimTime) {
        self.from = from;
    }

    /// `cpu`'s `rq->nr_running` became `nr_running` at `now`.
    #[inline]
    pub fn set_nr_running(&mut self, cpu: CpuId, nr_running: u32, now: SimTime) {
        let c = &mut self.cpus[cpu.index()];
        let old = c.nr_running;
        // Neither idle nor waiting changed (say 2 -> 3): the span's idle
        // count stays, so its clock needs no update now (`clock_at` from an
        // older `at` gives the same sum: `since` saturates at `from`).
        if (old == 0) == (nr_running == 0) && (old >= 2) == (nr_running >= 2) {
            c.nr_running = nr_running;
            return;
        }
        let span = &mut self.spans[c.span as usize];
        debug_assert!(now >= span.at, "nr_running of cpu {} reported at {now} after {}", cpu.0, span.at);
        // The clock runs up to now with the old idle count.
        span.advance(now, self.from);
        c.nr_running = nr_running;
        match (old == 0, nr_running == 0) {
            (true, false) => span.idle -= 1,
            (false, true) => span.idle += 1,
            _ => {}
        }
        match (old >= 2, nr_running >= 2) {
            (false, true) => c.waiting_since = Some(span.clock_ns),
            (true, false) => {
                if let Some(from) = c.waiting_since.take() {
                    c.gap_ns += span.clock_ns - from;
                }
            }
            _ => {}
        }
    }

    /// `cpu`'s balance gap up to `now`, its open wait included.
    pub fn gap_ns(&self, cpu: CpuId, now: SimTime) -> u64 {
        let c = &self.cpus[cpu.index()];
        let open = c.waiting_since.map_or(0, |from| self.spans[c.span as usize].clock_at(now, self.from) - from);
        c.gap_ns + open
    }

    /// The last `nr_running` reported for `cpu`.
    pub fn nr_running(&self, cpu: CpuId) -> u32 {
        self.cpus[cpu.index()].nr_running
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> SimTime {
        SimTime(ms * 1_000_000)
    }

    const MS: u64 = 1_000_000;

    /// Three CPUs in one span, hand timeline (ms):
    /// cpu0: nr 1 at 0, 2 at 10, 3 at 15, 1 at 40 (waits 10..40)
    /// cpu1: nr 1 at 0, idle 20..30, 1 again at 30, 2 at 35 (waits 35..end)
    /// cpu2: nr 1 at 0, idle 25..50, 1 at 50
    /// Idle-other intervals: 20..50 (cpu1 20..30, cpu2 25..50).
    /// cpu0's gap: wait 10..40 ∩ 20..50 = 20 ms.
    /// cpu1's gap: wait 35..60 (report at 60) ∩ 25..50 = 15 ms.
    #[test]
    fn overlapping_waits_and_idles_count_only_while_another_cpu_is_idle() {
        let mut g = BalanceGap::new(&[0, 0, 0]);
        for c in 0..3 {
            g.set_nr_running(CpuId(c), 1, at(0));
        }
        g.set_nr_running(CpuId(0), 2, at(10));
        g.set_nr_running(CpuId(0), 3, at(15));
        g.set_nr_running(CpuId(1), 0, at(20));
        g.set_nr_running(CpuId(2), 0, at(25));
        g.set_nr_running(CpuId(1), 1, at(30));
        g.set_nr_running(CpuId(1), 2, at(35));
        g.set_nr_running(CpuId(0), 1, at(40));
        g.set_nr_running(CpuId(2), 1, at(50));
        assert_eq!(g.gap_ns(CpuId(0), at(60)), 20 * MS);
        // cpu1's wait is still open at 60: finished at report time.
        assert_eq!(g.gap_ns(CpuId(1), at(60)), 15 * MS);
        assert_eq!(g.gap_ns(CpuId(2), at(60)), 0);
        // Asking again later adds nothing while no CPU is idle.
        assert_eq!(g.gap_ns(CpuId(1), at(70)), 15 * MS);
    }

    /// An idle CPU in another span does not count: balancing cannot reach it
    /// (an isolated CPU has a span of its own).
    #[test]
    fn an_idle_cpu_of_another_span_is_no_gap() {
        let mut g = BalanceGap::new(&[0, 0, 7]);
        g.set_nr_running(CpuId(0), 2, at(0));
        // cpu1 (same span) idle from 0; cpu2 (span 7) idle throughout.
        g.set_nr_running(CpuId(1), 1, at(5));
        assert_eq!(g.gap_ns(CpuId(0), at(10)), 5 * MS);
        // A waiting CPU alone in its span never has a gap.
        g.set_nr_running(CpuId(2), 3, at(10));
        assert_eq!(g.gap_ns(CpuId(2), at(20)), 0);
    }

    /// Waits that start and end while the other CPU stays idle, twice: both
    /// counted; nr_running going 2 -> 3 -> 2 is one wait, not several.
    #[test]
    fn repeated_waits_accumulate() {
        let mut g = BalanceGap::new(&[0, 0]);
        g.set_nr_running(CpuId(0), 2, at(1));
        g.set_nr_running(CpuId(0), 3, at(2));
        g.set_nr_running(CpuId(0), 2, at(3));
        g.set_nr_running(CpuId(0), 1, at(4));
        g.set_nr_running(CpuId(0), 2, at(10));
        g.set_nr_running(CpuId(0), 0, at(12));
        assert_eq!(g.gap_ns(CpuId(0), at(20)), 5 * MS);
        assert_eq!(g.nr_running(CpuId(0)), 0);
    }
}
