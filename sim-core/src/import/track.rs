//! The importer's streaming pass: one state machine per thread, fed one
//! record at a time, keeping only bounded summaries (sketches, counters and
//! capped maps), so memory grows with the threads of a trace, not its length.
//!
//! An *activation* runs from a wake-up to the next block: its CPU time is a
//! burst, the time from the block to the next wake-up a sleep. Delays are
//! counted as `measure` and the simulator count them (`sched_text`): a
//! wake-up delay from the first `sched_waking` after a block to the switch
//! that runs the thread; a preemption delay from a switch-out in `R`/`R+` to
//! the next switch-in.

use std::collections::BTreeMap;

use super::sched_text::{SchedEvent, SchedRecord};
use super::sketch::Sketch;

/// Distinct wakers (and wakees) kept per thread; the rest are counted as "other".
const PEERS_MAX: usize = 32;
/// Tick-preemption candidates kept for the HZ inference.
pub const TICK_SAMPLES_MAX: usize = 8192;
/// A preemption with a wake-up or migration aimed at that CPU this recently was caused by it, not by the tick.
const WAKE_CAUSE_NS: u64 = 20_000;
/// A task woken at least this long before it preempts curr was waiting for a tick, not preempting at its wake-up.
const TICK_WAITER_NS: u64 = 200_000;
/// A waker that blocks this soon after its wake-up passed WF_SYNC in effect (a pipe write, a
/// futex hand-off).
const SYNC_BLOCK_NS: u64 = 10_000;
/// Waits at least this long while another CPU idled count against "pinned" being a choice.
pub const MISSED_CHANCE_NS: u64 = 50_000;

#[derive(Clone, Copy, Debug, Default, PartialEq)]
enum State {
    #[default]
    Unknown,
    Running,
    Preempted(u64),
    Blocked(u64),
}

/// Who woke a thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Waker {
    /// A thread running on the waking CPU (its tid).
    Thread(u32),
    /// An interrupt, a timer or the idle task: no thread of the trace.
    Irq,
}

#[derive(Clone, Debug, Default)]
pub struct ThreadTrack {
    pub tid: u32,
    pub pid: Option<u32>,
    pub comm: String,
    /// `prio` as the trace prints it → times seen.
    pub prios: BTreeMap<i32, u64>,
    /// Run time per CPU (index = CPU).
    pub cpu_time: Vec<u64>,
    pub first_ns: u64,
    pub last_ns: u64,
    /// Made during the trace (`sched_wakeup_new`): when.
    pub born_ns: Option<u64>,
    pub exited: bool,
    pub runtime_ns: u64,
    pub bursts: Sketch,
    pub sleeps: Sketch,
    /// Wake-up to wake-up.
    pub wake_gaps: Sketch,
    pub first_wake_ns: Option<u64>,
    pub last_wake_ns: Option<u64>,
    pub wakers: BTreeMap<Waker, u64>,
    /// Wake-ups this thread made, per woken tid (capped at PEERS_MAX, the rest in `wakes_other`).
    pub wakes_made: BTreeMap<u32, u64>,
    pub wakes_other: u64,
    /// Activations in which it woke someone and then blocked within SYNC_BLOCK_NS.
    pub sync_blocks: u64,
    pub wakeup_delay: Sketch,
    pub preempt_delay: Sketch,
    pub switches: u64,
    pub preemptions: u64,
    pub migrations: u64,
    /// Waits ≥ MISSED_CHANCE_NS that began while another CPU was idle.
    pub missed_chances: u64,
    /// CPU time of the activation that began at its fork (start-up, not a burst).
    pub startup_ns: u64,
    state: State,
    wake_at: Option<u64>,
    wait_began_with_idle: bool,
    waking_in_run: Option<u64>,
    burst_acc: u64,
    act_open: bool,
    /// The open activation began at a fork: its run is start-up, not a burst.
    act_from_fork: bool,
    forked: bool,
    last_wake_made: Option<u64>,
    run_since: u64,
}

impl ThreadTrack {
    fn on_cpu(&mut self, cpu: u16, ns: u64) {
        let c = usize::from(cpu);
        if self.cpu_time.len() <= c {
            self.cpu_time.resize(c + 1, 0);
        }
        self.cpu_time[c] += ns;
    }

    /// The prio seen most often (ties: the lower, the stronger).
    pub fn prio(&self) -> i32 {
        self.prios.iter().max_by_key(|&(p, n)| (*n, -p)).map_or(120, |(p, _)| *p)
    }

    /// CPUs it ran on.
    pub fn cpus_run(&self) -> impl Iterator<Item = u16> + '_ {
        self.cpu_time.iter().enumerate().filter(|(_, t)| **t > 0).map(|(c, _)| c as u16)
    }

    /// Switched out blocked (any state but R/R+) at least once.
    pub fn ever_blocked(&self) -> bool {
        self.sleeps.count() > 0 || self.bursts.count() > 0 || self.switches > self.preemptions
    }

    /// Wake-ups seen, from any waker.
    pub fn wakes(&self) -> u64 {
        self.wakers.values().sum()
    }
}

/// The streaming pass over a trace's records.
#[derive(Default)]
pub struct Tracker {
    pub threads: BTreeMap<u32, ThreadTrack>,
    /// Per CPU: the running tid (0 = idle) and since when.
    current: Vec<(u32, u64)>,
    /// Per CPU: the last wake-up or migration aimed at it.
    last_wake_on: Vec<u64>,
    pub busy: Vec<u64>,
    pub tick_candidates: Vec<u64>,
    pub first_ns: Option<u64>,
    pub last_ns: u64,
    pub records: u64,
    pub switches: u64,
    pub saw_waking: bool,
}

impl Tracker {
    fn cpu(&mut self, c: u16) -> usize {
        let c = usize::from(c);
        if self.current.len() <= c {
            self.current.resize(c + 1, (u32::MAX, 0));
            self.last_wake_on.resize(c + 1, 0);
            self.busy.resize(c + 1, 0);
        }
        c
    }

    pub fn cpus_seen(&self) -> usize {
        self.current.len()
    }

    fn idle_elsewhere(&self, c: usize) -> bool {
        self.current.iter().enumerate().any(|(i, &(tid, _))| i != c && tid == 0)
    }

    fn thread(&mut self, tid: u32, comm: &str, t: u64) -> &mut ThreadTrack {
        let th = self.threads.entry(tid).or_insert_with(|| ThreadTrack { tid, first_ns: t, ..ThreadTrack::default() });
        if th.comm != comm && !comm.is_empty() {
            comm.clone_into(&mut th.comm);
        }
        th.last_ns = t;
        th
    }

    pub fn push(&mut self, r: &SchedRecord) {
        let t = r.time_ns;
        self.first_ns.get_or_insert(t);
        self.last_ns = self.last_ns.max(t);
        self.records += 1;
        let c = self.cpu(r.cpu);
        if self.current[c].0 == u32::MAX {
            self.current[c] = (r.tid, t);
        }
        if r.tid != 0 {
            let pid = r.pid;
            let th = self.thread(r.tid, &r.comm, t);
            th.pid = th.pid.or(pid);
        }
        match &r.event {
            SchedEvent::Switch { prev_comm, prev_pid, prev_prio, prev_state, next_comm, next_pid, next_prio } => {
                self.switch(c, t, (*prev_pid, prev_comm, *prev_prio, prev_state), (*next_pid, next_comm, *next_prio));
            }
            SchedEvent::Waking { comm, pid, prio, target_cpu } => {
                self.saw_waking = true;
                self.woken(r, t, (*pid, comm, *prio), *target_cpu);
            }
            SchedEvent::Wakeup { comm, pid, prio, target_cpu } => self.woken(r, t, (*pid, comm, *prio), *target_cpu),
            SchedEvent::WakeupNew { comm, pid, prio, target_cpu } => {
                let _ = self.cpu(*target_cpu);
                if *pid != 0 {
                    let th = self.thread(*pid, comm, t);
                    th.born_ns.get_or_insert(t);
                    *th.prios.entry(*prio).or_default() += 1;
                    th.state = State::Blocked(t);
                    th.wake_at = Some(t);
                    th.forked = true;
                }
            }
            SchedEvent::Migrate { comm, pid, orig_cpu, dest_cpu, .. } => {
                let (_, d) = (self.cpu(*orig_cpu), self.cpu(*dest_cpu));
                self.last_wake_on[d] = t;
                if *pid != 0 {
                    self.thread(*pid, comm, t).migrations += 1;
                }
            }
            SchedEvent::Fork { .. } => {}
            // Importer::push_line does not pass these on.
            SchedEvent::StatRuntime { .. } => {}
            SchedEvent::Exit { comm, pid, .. } => {
                if *pid != 0 {
                    self.thread(*pid, comm, t).exited = true;
                }
            }
        }
    }

    fn woken(&mut self, r: &SchedRecord, t: u64, (pid, comm, prio): (u32, &str, i32), target: u16) {
        let tc = self.cpu(target);
        self.last_wake_on[tc] = t;
        if pid == 0 {
            return;
        }
        let waking = matches!(r.event, SchedEvent::Waking { .. });
        let waker = if r.in_irq || r.tid == 0 { Waker::Irq } else { Waker::Thread(r.tid) };
        // sched_wakeup fires where the task is queued, not always in the
        // waker's context: it names the waker only in a trace without sched_waking.
        let waker_known = waking || !self.saw_waking;
        let idle_elsewhere = self.idle_elsewhere(tc);
        let th = self.thread(pid, comm, t);
        *th.prios.entry(prio).or_default() += 1;
        let fresh = match th.state {
            State::Running => {
                if waking {
                    th.waking_in_run = Some(t);
                }
                false
            }
            State::Blocked(since) if th.wake_at.is_none() => {
                th.sleeps.add(t.saturating_sub(since));
                true
            }
            State::Unknown if th.wake_at.is_none() => true,
            _ => false,
        };
        if !fresh {
            return;
        }
        th.wake_at = Some(t);
        th.wait_began_with_idle = idle_elsewhere;
        if let Some(last) = th.last_wake_ns {
            th.wake_gaps.add(t.saturating_sub(last));
        }
        th.first_wake_ns.get_or_insert(t);
        th.last_wake_ns = Some(t);
        let waker = if waker_known { waker } else { Waker::Irq };
        if th.wakers.len() < PEERS_MAX || th.wakers.contains_key(&waker) {
            *th.wakers.entry(waker).or_default() += 1;
        } else {
            *th.wakers.entry(Waker::Irq).or_default() += 1;
        }
        if let Waker::Thread(w) = waker
            && w != pid
            && let Some(wt) = self.threads.get_mut(&w)
        {
            if wt.wakes_made.len() < PEERS_MAX || wt.wakes_made.contains_key(&pid) {
                *wt.wakes_made.entry(pid).or_default() += 1;
            } else {
                wt.wakes_other += 1;
            }
            wt.last_wake_made = Some(t);
        }
    }

    fn switch(&mut self, c: usize, t: u64, prev: (u32, &str, i32, &str), next: (u32, &str, i32)) {
        self.switches += 1;
        let (prev_pid, prev_comm, prev_prio, prev_state) = prev;
        let (cur, since) = self.current[c];
        if cur != 0 && cur != u32::MAX {
            self.busy[c] += t.saturating_sub(since);
        }
        let runnable = matches!(prev_state, "R" | "R+");
        // A tick ends curr's slice in favour of a task already waiting (switched
        // out runnable, or woken well before); a preemption in favour of a
        // freshly woken task is the wake-up's (its switch may lag the wake-up
        // by tens of µs on a real machine).
        let next_was_waiting = self.threads.get(&next.0).is_some_and(|n| match n.state {
            State::Preempted(_) => true,
            _ => n.wake_at.is_some_and(|w| w + TICK_WAITER_NS <= t),
        });
        if runnable
            && prev_pid != 0
            && next_was_waiting
            && self.last_wake_on[c] + WAKE_CAUSE_NS < t
            && self.tick_candidates.len() < TICK_SAMPLES_MAX
        {
            self.tick_candidates.push(t);
        }
        if prev_pid != 0 {
            let th = self.thread(prev_pid, prev_comm, t);
            *th.prios.entry(prev_prio).or_default() += 1;
            // A header/prev mismatch means lost events: credit nothing.
            let ran = match th.state {
                State::Running => t.saturating_sub(th.run_since),
                State::Unknown if cur == prev_pid => t.saturating_sub(since),
                _ => 0,
            };
            th.runtime_ns += ran;
            th.on_cpu(c as u16, ran);
            th.burst_acc += ran;
            th.switches += 1;
            if runnable {
                th.preemptions += 1;
                th.state = State::Preempted(t);
            } else {
                if th.act_open && th.act_from_fork {
                    th.startup_ns = th.burst_acc;
                }
                if th.act_open && !th.act_from_fork {
                    th.bursts.add(th.burst_acc);
                    if th.last_wake_made.is_some_and(|w| t.saturating_sub(w) <= SYNC_BLOCK_NS) {
                        th.sync_blocks += 1;
                    }
                }
                th.act_open = false;
                th.state = State::Blocked(t);
                th.exited |= matches!(prev_state, "X" | "Z");
                // Woken while still on its way out of __schedule (see sched_text's wake_instant).
                if let Some(w) = th.waking_in_run.take() {
                    th.wake_at = Some(w.max(t));
                }
            }
        }
        let (next_pid, next_comm, next_prio) = next;
        self.current[c] = (next_pid, t);
        if next_pid != 0 {
            let idle_elsewhere = self.idle_elsewhere(c);
            let th = self.thread(next_pid, next_comm, t);
            *th.prios.entry(next_prio).or_default() += 1;
            match th.state {
                State::Preempted(at) => {
                    let d = t.saturating_sub(at);
                    th.preempt_delay.add(d);
                    if d >= MISSED_CHANCE_NS && idle_elsewhere {
                        th.missed_chances += 1;
                    }
                }
                State::Blocked(_) | State::Unknown => {
                    if let Some(w) = th.wake_at {
                        let d = t.saturating_sub(w);
                        th.wakeup_delay.add(d);
                        if d >= MISSED_CHANCE_NS && th.wait_began_with_idle {
                            th.missed_chances += 1;
                        }
                        th.act_open = true;
                        th.act_from_fork = std::mem::take(&mut th.forked);
                        th.burst_acc = 0;
                        th.last_wake_made = None;
                    }
                }
                State::Running => {}
            }
            th.state = State::Running;
            th.wake_at = None;
            th.waking_in_run = None;
            th.run_since = t;
        }
    }

    /// Closes runs still on a CPU at `end`.
    pub fn finish(&mut self, end: u64) {
        for c in 0..self.current.len() {
            let (tid, since) = self.current[c];
            if tid == 0 || tid == u32::MAX {
                continue;
            }
            self.busy[c] += end.saturating_sub(since);
            if let Some(th) = self.threads.get_mut(&tid) {
                let ran = end.saturating_sub(since);
                th.runtime_ns += ran;
                th.on_cpu(c as u16, ran);
                th.run_since = end;
                th.last_ns = end;
            }
        }
    }

    /// A CPU hog: never blocked, or blocked at most three times (a start
    /// barrier, a page fault in D) while running at least half of the time
    /// it was seen. A hog cannot hand work off: the trace shows it as the
    /// "waker" of every timer or interrupt wake-up on its CPU.
    pub fn is_hog(th: &ThreadTrack) -> bool {
        let blocked_never = !th.ever_blocked() && !matches!(th.state, State::Blocked(_));
        let life = th.last_ns.saturating_sub(th.first_ns);
        let blocks = th.switches.saturating_sub(th.preemptions);
        blocked_never || (blocks <= 3 && life > 0 && th.runtime_ns.saturating_mul(2) >= life)
    }
}
