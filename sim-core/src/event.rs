//! The closed set of simulation events and the queue that orders them.
//!
//! Events are totally ordered by `(time, insertion sequence)`: two events at the
//! same nanosecond fire in the order they were scheduled, never in an order that
//! depends on the event's payload or on a hash. Cancelled events (a burst cut
//! short by preemption, a re-armed timer) are not removed from the queue; each
//! carries a generation number that the engine compares on pop.

use crate::ids::{CpuId, DeviceId, GroupId, RequestId, SourceId, TaskId};
use crate::time::SimTime;
use crate::workload::limiter::LimiterId;

/// Everything that can happen in a run. Dispatched by one `match` in `engine/mod.rs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// The periodic scheduler tick on one CPU (`scheduler_tick`).
    Tick { cpu: CpuId },
    /// The HRTICK high-resolution timer set by `hrtick_start_fair`.
    HrTick { cpu: CpuId, generation: u32 },
    /// A scenario task is created (forked) and becomes runnable.
    TaskStart { task: TaskId },
    /// The running task finished the CPU work of its current step.
    BurstEnd { task: TaskId, generation: u32 },
    /// The running task enters the kernel mid-burst (`enter_kernel_every`):
    /// `update_curr` runs, and a pending resched takes effect on return.
    KernelEntry { task: TaskId, generation: u32 },
    /// A sleeping task's timer expired (`hrtimer_wakeup`).
    TimerExpired { task: TaskId, generation: u32 },
    /// An arrival source delivers work items to its task.
    Arrival { source: SourceId },
    /// A CPU resumes settling after it used up its per-event step budget.
    Resume { cpu: CpuId },
    /// A block device finished a request (its completion interrupt).
    IoComplete { device: DeviceId, request: RequestId },
    /// An elevator's timer (CFQ's `idle_slice_timer`).
    IoTimer { device: DeviceId, generation: u32 },
    /// The NO_HZ idle-balance kick reaches the idle CPU chosen by
    /// `find_new_ilb` (4.4 fair.c `nohz_balancer_kick` → `scheduler_ipi`).
    NohzKick { cpu: CpuId },
    /// `cpu`'s stopper runs `active_load_balance_cpu_stop` (4.4 fair.c).
    ActiveBalance { cpu: CpuId },
    /// A CPU-limited group's period timer (`sched_cfs_period_timer`) or
    /// slack timer (`sched_cfs_slack_timer`); the class ignores a stale generation.
    BandwidthTimer { group: GroupId, slack: bool, generation: u32 },
    /// An elastic CPU limiter's controller period ends (`workload/limiter.rs`).
    LimiterAdjust { limiter: LimiterId },
    /// An elastic CPU limiter's bucket holds a grant for its first waiter.
    LimiterGrant { limiter: LimiterId, generation: u32 },
    /// The RT bandwidth period timer (`sched_rt_period_timer`).
    RtPeriodTimer { generation: u32 },
    /// A deadline entity's timer (`dl_task_timer`, `dl_server_timer`):
    /// `entity` is a task id, or `tasks + cpu` for a CPU's fair server.
    DlTimer { entity: u32, generation: u32 },
    /// RT_PUSH_IPI's push chain for `cpu`, which lowered its RT priority
    /// (`tell_cpu_to_push` → `rto_push_irq_work_func` on each overloaded CPU).
    RtPushIpi { cpu: CpuId },
}

impl Event {
    /// Names of the kinds, indexed by `kind()` (for event counts per kind).
    pub const KINDS: [&'static str; 18] = [
        "tick",
        "hrtick",
        "task_start",
        "burst_end",
        "kernel_entry",
        "timer_expired",
        "arrival",
        "resume",
        "io_complete",
        "io_timer",
        "nohz_kick",
        "active_balance",
        "bandwidth_timer",
        "limiter_adjust",
        "limiter_grant",
        "rt_period_timer",
        "dl_timer",
        "rt_push_ipi",
    ];

    /// This event's index in `KINDS`.
    pub fn kind(&self) -> usize {
        match self {
            Event::Tick { .. } => 0,
            Event::HrTick { .. } => 1,
            Event::TaskStart { .. } => 2,
            Event::BurstEnd { .. } => 3,
            Event::KernelEntry { .. } => 4,
            Event::TimerExpired { .. } => 5,
            Event::Arrival { .. } => 6,
            Event::Resume { .. } => 7,
            Event::IoComplete { .. } => 8,
            Event::IoTimer { .. } => 9,
            Event::NohzKick { .. } => 10,
            Event::ActiveBalance { .. } => 11,
            Event::BandwidthTimer { .. } => 12,
            Event::LimiterAdjust { .. } => 13,
            Event::LimiterGrant { .. } => 14,
            Event::RtPeriodTimer { .. } => 15,
            Event::DlTimer { .. } => 16,
            Event::RtPushIpi { .. } => 17,
        }
    }
}

/// A queued event with its sort key: time in the high 64 bits, insertion
/// sequence in the low 64, so one integer comparison orders by (time, seq).
#[derive(Clone, Copy, Debug)]
struct Entry {
    key: u128,
    event: Event,
}

/// A priority queue of events keyed by `(time, insertion sequence)`.
///
/// Two tiers: events due before `horizon` are kept in `near`, a calendar of
/// `BUCKETS` consecutive time slices of `1 << shift` ns from `base`, each a
/// small `Vec` sorted with the earliest last, so a push lands in its slice
/// (usually empty or a few entries long) and a pop is a `Vec::pop` from the
/// first non-empty slice, found in one step from the bitmap `occupied`. Later events (most sleep timers and
/// arrivals) wait unsorted in `far`. When `near` runs dry, the horizon moves
/// to the earliest far event plus `window` and the far events before it are
/// put in their slices. Every near event is earlier than every far one, so
/// pops come out in exact `(time, seq)` order.
///
/// The window adapts to the density of events: a refill that brings fewer
/// than `REFILL_LOW` events doubles it (each refill scans all of `far`, so a
/// sparse machine, say 1,000 timers on one CPU, would otherwise rescan them for
/// every pop); one that brings more than `REFILL_HIGH` narrows it in proportion
/// and keeps at most `NEAR_MAX` of them in `near`.
#[derive(Clone, Debug)]
pub struct EventQueue {
    /// `BUCKETS` slices; slice `i` holds the near events due in
    /// `[base + i << shift, base + (i + 1) << shift)` (slice 0 also any
    /// earlier ones), each descending by key: its next event is last.
    near: [Vec<Entry>; BUCKETS],
    /// Bit `i` is set when slice `i` is not empty.
    occupied: u64,
    /// Events in `near`.
    near_len: usize,
    /// Start and slice width (log2, ns) of the calendar, set by each refill.
    base: u64,
    shift: u32,
    far: Vec<Entry>,
    /// Events at or after this time go to `far`.
    horizon: u64,
    /// The earliest time in `far` (`u64::MAX` when it is empty), kept up to
    /// date so a refill scans `far` once, not twice.
    far_min: u64,
    /// Width of the next refill's window, in ns.
    window: u64,
    next_seq: u64,
    /// Events queued (`push`, `push_reserved`).
    pushed: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            near: std::array::from_fn(|_| Vec::new()),
            occupied: 0,
            near_len: 0,
            base: 0,
            shift: 0,
            far: Vec::new(),
            horizon: 0,
            far_min: u64::MAX,
            window: WINDOW_NS,
            next_seq: 0,
            pushed: 0,
        }
    }
}

/// Initial width of the near tier. Refills cost a scan of `far`, so the window
/// trades refill frequency against the length of `near`.
const WINDOW_NS: u64 = 200_000;
/// Bounds of the adaptive window: 1 µs to about 69 s.
const WINDOW_MIN_NS: u64 = 1_000;
const WINDOW_MAX_NS: u64 = 1 << 36;
/// A refill bringing fewer events than this widens the window, more than
/// `REFILL_HIGH` narrows it.
const REFILL_LOW: usize = 16;
const REFILL_HIGH: usize = 128;
/// Longest `near` gets before its later half is moved back to `far`.
const NEAR_MAX: usize = 256;
/// Slices of the near tier's calendar: one bit each in `occupied`.
const BUCKETS: usize = u64::BITS as usize;

impl EventQueue {
    pub fn new() -> EventQueue {
        EventQueue::default()
    }

    /// Schedules `event` at `at`; ties fire in insertion order.
    pub fn push(&mut self, at: SimTime, event: Event) {
        let key = self.reserve_key(at);
        self.push_reserved(key, event);
    }

    /// The key an event pushed now at `at` would get, without queueing one:
    /// an elided tick keeps its place in the `(time, seq)` order with it.
    pub fn reserve_key(&mut self, at: SimTime) -> u128 {
        let key = (u128::from(at.ns()) << 64) | u128::from(self.next_seq);
        self.next_seq += 1;
        key
    }

    /// Queues `event` under a key from `reserve_key`, where an event pushed
    /// when the key was reserved would have been.
    pub fn push_reserved(&mut self, key: u128, event: Event) {
        debug_assert!(key & u128::from(u64::MAX) < u128::from(self.next_seq), "key not reserved");
        self.pushed += 1;
        self.insert(Entry { key, event });
    }

    /// Events queued so far (reserved keys not counted until pushed).
    pub fn pushed(&self) -> u64 {
        self.pushed
    }

    /// The time of a `(time << 64 | seq)` key.
    pub fn key_time(key: u128) -> SimTime {
        SimTime((key >> 64) as u64)
    }

    #[inline]
    fn insert(&mut self, entry: Entry) {
        let at = Self::key_time(entry.key).ns();
        if at >= self.horizon {
            self.far_min = self.far_min.min(at);
            self.far.push(entry);
            return;
        }
        self.insert_near(entry);
        if self.near_len > NEAR_MAX {
            self.shrink();
        }
    }

    /// Puts a near event (`time < horizon`) in its slice.
    #[inline]
    fn insert_near(&mut self, entry: Entry) {
        let key = entry.key;
        // Slice 0 also takes a time before `base` (not pushed by the engine,
        // whose clock never goes back).
        let b = ((key >> 64) as u64).saturating_sub(self.base) >> self.shift;
        let b = b as usize % BUCKETS;
        debug_assert!(b == 0 || key >> 64 < u128::from(self.horizon), "near event past the horizon");
        self.occupied |= 1 << b;
        self.near_len += 1;
        let slice = &mut self.near[b];
        // Keys are unique; insert where the slice stays descending. Slices
        // hold a few entries, so walking down from the end beats a binary
        // search and a `memmove`.
        let mut i = slice.len();
        slice.push(entry);
        while i > 0 && slice[i - 1].key < key {
            slice[i] = slice[i - 1];
            i -= 1;
        }
        slice[i] = entry;
    }

    /// Keeps inserts cheap when many events fall in one window (thousands of
    /// tasks starting together): the later half of `near` goes back to `far`
    /// and the horizon moves down to the earliest of them; the window halves.
    /// Near keys stay below far keys: equal times left in `near` have smaller
    /// sequence numbers.
    #[cold]
    fn shrink(&mut self) {
        self.window = (self.window / 2).max(WINDOW_MIN_NS);
        let mut moving = self.near_len / 2;
        self.near_len -= moving;
        let mut horizon = self.horizon;
        for (b, slice) in self.near.iter_mut().enumerate().rev() {
            if moving == 0 {
                break;
            }
            // The latest entries of a slice are its first.
            let m = moving.min(slice.len());
            if m > 0 {
                horizon = (slice[m - 1].key >> 64) as u64;
                self.far.extend(slice.drain(..m));
                moving -= m;
                if slice.is_empty() {
                    self.occupied &= !(1 << b);
                }
            }
        }
        self.horizon = horizon;
        self.far_min = self.far_min.min(self.horizon);
    }

    /// Moves the horizon past the earliest far event and puts the far events
    /// before it in the near tier's slices.
    #[cold]
    #[inline(never)]
    fn refill(&mut self) {
        if self.far.is_empty() {
            return;
        }
        let min = self.far_min;
        debug_assert_eq!(Some(min), self.far.iter().map(|e| (e.key >> 64) as u64).min());
        debug_assert_eq!((self.near_len, self.occupied), (0, 0));
        self.horizon = min.saturating_add(self.window);
        // The narrowest slices that cover [min, horizon) with `BUCKETS`.
        let span_bits = u64::BITS - (self.window - 1).leading_zeros();
        self.shift = span_bits.saturating_sub(BUCKETS.trailing_zeros());
        self.base = min;
        // One pass: the events before the horizon move to `near` (the order
        // `far` is left in does not matter), the earliest of the others is
        // the next `far_min`.
        let mut rest_min = u64::MAX;
        let mut i = 0;
        while i < self.far.len() {
            let at = (self.far[i].key >> 64) as u64;
            if at < self.horizon {
                let e = self.far.swap_remove(i);
                self.insert_near(e);
            } else {
                rest_min = rest_min.min(at);
                i += 1;
            }
        }
        self.far_min = rest_min;
        let found = self.near_len;
        if found < REFILL_LOW {
            self.window = (self.window * 2).min(WINDOW_MAX_NS);
        } else if found > REFILL_HIGH {
            // Aim the next refill at half of REFILL_HIGH events.
            self.window = (self.window.saturating_mul(REFILL_HIGH as u64 / 2) / found as u64).max(WINDOW_MIN_NS);
        }
        while self.near_len > NEAR_MAX {
            self.shrink();
        }
    }

    /// The slice holding the next event, refilling `near` if it is empty.
    #[inline]
    fn next_slice(&mut self) -> Option<usize> {
        if self.occupied == 0 {
            self.refill();
            if self.occupied == 0 {
                return None;
            }
        }
        Some(self.occupied.trailing_zeros() as usize % BUCKETS)
    }

    pub fn pop(&mut self) -> Option<(SimTime, Event)> {
        let b = self.next_slice()?;
        let slice = &mut self.near[b];
        let e = slice.pop()?;
        if slice.is_empty() {
            self.occupied &= !(1 << b);
        }
        self.near_len -= 1;
        Some((Self::key_time(e.key), e.event))
    }

    pub fn peek_time(&mut self) -> Option<SimTime> {
        self.peek_key().map(Self::key_time)
    }

    /// The next event's `(time << 64 | seq)` key.
    pub fn peek_key(&mut self) -> Option<u128> {
        let b = self.next_slice()?;
        self.near[b].last().map(|e| e.key)
    }

    pub fn len(&self) -> usize {
        self.near_len + self.far.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_fire_in_insertion_order() {
        let mut q = EventQueue::new();
        q.push(SimTime(5), Event::Tick { cpu: CpuId(2) });
        q.push(SimTime(3), Event::Tick { cpu: CpuId(9) });
        q.push(SimTime(5), Event::Tick { cpu: CpuId(1) });
        q.push(SimTime(5), Event::Tick { cpu: CpuId(0) });
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        let cpus: Vec<u16> = order
            .iter()
            .map(|(_, e)| match e {
                Event::Tick { cpu } => cpu.0,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(cpus, vec![9, 2, 1, 0]);
        assert_eq!(order[0].0, SimTime(3));
    }

    #[test]
    fn many_events_in_one_window_keep_their_order() {
        let mut q = EventQueue::new();
        for i in 0..3000u32 {
            q.push(SimTime(u64::from(i % 7)), Event::Arrival { source: crate::ids::SourceId(i) });
        }
        let mut prev = (0u64, 0u32);
        let mut n = 0;
        while let Some((t, e)) = q.pop() {
            let Event::Arrival { source } = e else { unreachable!() };
            assert!((t.ns(), source.0) >= prev, "{:?} after {prev:?}", (t.ns(), source.0));
            prev = (t.ns(), source.0);
            n += 1;
            if n % 5 == 0 && n < 2000 {
                // Pushes during the drain land in the near tier or behind it.
                q.push(SimTime(t.ns() + 3), Event::Arrival { source: crate::ids::SourceId(10_000 + n) });
            }
        }
        assert_eq!(n, 3000 + 399);
    }

    #[test]
    fn pops_in_time_then_insertion_order_at_scale() {
        let mut q = EventQueue::new();
        let mut x: u64 = 12345;
        let mut pushed = Vec::new();
        for i in 0..5000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let at = (x >> 33) % 1000;
            pushed.push((at, i));
            q.push(SimTime(at), Event::Arrival { source: crate::ids::SourceId(i) });
            if i % 3 == 0 {
                // interleave pops with pushes
                let _ = q.pop().map(|(t, e)| {
                    pushed.retain(|p| !(p.0 == t.ns() && Event::Arrival { source: crate::ids::SourceId(p.1) } == e))
                });
            }
        }
        let mut rest: Vec<(u64, u32)> = std::iter::from_fn(|| q.pop())
            .map(|(t, e)| match e {
                Event::Arrival { source } => (t.ns(), source.0),
                _ => unreachable!(),
            })
            .collect();
        let mut sorted = rest.clone();
        sorted.sort();
        assert_eq!(rest, sorted, "(time, seq) order; seq grows with the id here");
        rest.sort();
        pushed.sort();
        assert_eq!(rest, pushed);
    }

    #[test]
    fn the_window_widens_when_sparse_and_narrows_when_dense() {
        // 1,000 timers spread over 400 ms: a 200 µs window would hold one.
        let mut q = EventQueue::new();
        for i in 0..1000u64 {
            q.push(SimTime(i * 400_000), Event::Arrival { source: crate::ids::SourceId(i as u32) });
        }
        for _ in 0..100 {
            q.pop();
        }
        assert!(q.window >= 16 * WINDOW_NS, "sparse: {}", q.window);
        // Then 5,000 events one microsecond apart, some 60 ms later.
        let now = 150 * 400_000;
        for i in 0..5000u64 {
            q.push(SimTime(now + i * 1000), Event::Arrival { source: crate::ids::SourceId(i as u32) });
        }
        let mut prev = 0;
        for _ in 0..3000 {
            let (t, _) = q.pop().expect("queued");
            assert!(t.ns() >= prev);
            prev = t.ns();
        }
        assert!(q.window <= WINDOW_NS, "dense: {}", q.window);
        assert!(q.near_len <= NEAR_MAX);
    }

    #[test]
    fn matches_a_sorted_reference_with_late_reserved_keys() {
        // Random pushes (bursts at one time, near and far delays, keys
        // reserved now and pushed later) interleaved with pops, against a
        // `BTreeMap` on the same keys.
        use std::collections::BTreeMap;
        for seed in 0..20u64 {
            let mut q = EventQueue::new();
            let mut reference: BTreeMap<u128, Event> = BTreeMap::new();
            let mut reserved: Vec<u128> = Vec::new();
            let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
            let mut rnd = |n: u64| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x % n
            };
            let mut now = 0u64;
            let mut pushed = 0u64;
            for id in 0..20_000u32 {
                let ev = Event::Arrival { source: crate::ids::SourceId(id) };
                match rnd(10) {
                    0..=3 => {
                        let delay = match rnd(4) {
                            0 => 0,
                            1 => rnd(2_000),
                            2 => rnd(300_000),
                            _ => rnd(50_000_000),
                        };
                        let n = if rnd(50) == 0 { 1 + rnd(400) } else { 1 };
                        for _ in 0..n {
                            let key = q.reserve_key(SimTime(now + delay));
                            q.push_reserved(key, ev);
                            reference.insert(key, ev);
                            pushed += 1;
                        }
                    }
                    4 => reserved.push(q.reserve_key(SimTime(now + rnd(1_000_000)))),
                    5 if !reserved.is_empty() => {
                        let key = reserved.swap_remove(rnd(reserved.len() as u64) as usize);
                        q.push_reserved(key, ev);
                        reference.insert(key, ev);
                        pushed += 1;
                    }
                    _ => {
                        let want = reference.first_key_value().map(|(k, e)| (*k, *e));
                        assert_eq!(q.peek_key(), want.map(|w| w.0), "seed {seed}");
                        let got = q.pop();
                        assert_eq!(got, want.map(|(k, e)| (EventQueue::key_time(k), e)), "seed {seed}");
                        if let Some((k, _)) = want {
                            reference.remove(&k);
                            now = now.max(EventQueue::key_time(k).ns());
                        }
                    }
                }
                assert_eq!(q.len(), reference.len());
                assert_eq!(q.pushed(), pushed);
            }
            while let Some((k, e)) = reference.pop_first() {
                assert_eq!(q.pop(), Some((EventQueue::key_time(k), e)), "seed {seed}");
            }
            assert!(q.is_empty() && q.pop().is_none());
        }
    }
}
