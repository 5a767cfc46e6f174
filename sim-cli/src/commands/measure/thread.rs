//! One task instance as a real thread: the scenario program's steps carried
//! out on the host, timestamped with the vDSO clock.
//!
//! - `run`: spin in user space reading `CLOCK_MONOTONIC` (vDSO, no system
//!   call, so the scheduler is not entered). A gap between two readings
//!   longer than `gap_ns` is time the thread was off the CPU while runnable
//!   (preempted); it is recorded as a preemption delay and not counted as work.
//!   With `enter_kernel_every`, every that much of the work the thread reads
//!   `CLOCK_THREAD_CPUTIME_ID`, a real system call on x86 that updates the
//!   scheduler's accounting (`task_sched_runtime` → `update_curr`) and may
//!   reschedule on its way out, as a program's system calls do.
//! - `sleep`, `sleep_until`: `clock_nanosleep(TIMER_ABSTIME)` on the deadline,
//!   timer slack 1 ns; the wake-up delay is the first reading after it minus
//!   the deadline.
//! - `wait`/`wake`: 8-byte messages (the waker's timestamp) through a FIFO,
//!   so the wake-up path is the kernel's pipe wake-up; one message is one
//!   pending wake-up, as the model's counter.
//! - `serve`: 16-byte items (send time, work) from a source's waker thread
//!   through the task's item FIFO; the wake-up delay runs from the send of
//!   the item that found the task blocked.

use rustix::event::{PollFd, PollFlags, poll};
use rustix::time::{ClockId, Timespec, clock_gettime};
use serde::{Deserialize, Serialize};
use sim_core::{Program, SimRng, Step};
use std::fs::File;
use std::sync::atomic::{AtomicBool, Ordering};

/// Samples kept per thread and kind; beyond this they are counted, not kept.
pub const SAMPLES_MAX: usize = 10_000_000;

/// `CLOCK_MONOTONIC` in nanoseconds (vDSO).
pub fn now_ns() -> u64 {
    let t = clock_gettime(ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Sleeps until `deadline_ns` (`CLOCK_MONOTONIC`, absolute), retrying on EINTR.
pub fn sleep_until(deadline_ns: u64) {
    let ts = Timespec { tv_sec: (deadline_ns / 1_000_000_000) as i64, tv_nsec: (deadline_ns % 1_000_000_000) as _ };
    // Bounded: each EINTR retry sleeps to the same deadline.
    for _ in 0..1000 {
        match rustix::thread::clock_nanosleep_absolute(ClockId::Monotonic, &ts) {
            Err(rustix::io::Errno::INTR) => continue,
            _ => return,
        }
    }
}

/// What one thread saw.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ThreadResult {
    pub task: u32,
    pub tid: u32,
    /// `(end, delay)`, `end` from the run's start.
    pub wakeups: Vec<(u64, u64)>,
    pub preempts: Vec<(u64, u64)>,
    pub responses: Vec<(u64, u64)>,
    /// Samples beyond `SAMPLES_MAX`, not kept.
    pub overflow: u64,
    /// From `/proc/thread-self/schedstat`: CPU time and run-queue wait over the run.
    pub runtime_ns: u64,
    pub run_delay_ns: u64,
    /// Voluntary + involuntary context switches over the run (`/proc/thread-self/status`).
    pub switches: u64,
    /// Host CPU the thread was on after its longest delay.
    pub worst_cpu: Option<u16>,
    /// Work items left unserved and wake-ups still pending at the end.
    pub items_left: u64,
    /// Kernel entries made for `enter_kernel_every` during CPU bursts.
    #[serde(default)]
    pub kernel_entries: u64,
}

impl ThreadResult {
    fn push(v: &mut Vec<(u64, u64)>, overflow: &mut u64, s: (u64, u64)) {
        if v.len() < SAMPLES_MAX {
            v.push(s);
        } else {
            *overflow += 1;
        }
    }
}

/// `(runtime, run_delay)` from `/proc/thread-self/schedstat`, zeros if unreadable.
pub fn schedstat() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    let mut it = text.split_whitespace().map(|f| f.parse::<u64>().unwrap_or(0));
    (it.next().unwrap_or(0), it.next().unwrap_or(0))
}

/// Voluntary + involuntary context switches from `/proc/thread-self/status`.
pub fn ctxt_switches() -> u64 {
    let text = std::fs::read_to_string("/proc/thread-self/status").unwrap_or_default();
    text.lines()
        .filter(|l| l.starts_with("voluntary_ctxt_switches") || l.starts_with("nonvoluntary_ctxt_switches"))
        .filter_map(|l| l.split(':').nth(1)?.trim().parse::<u64>().ok())
        .sum()
}

/// A thread's view of the run: clock origin, end, stop flag, its FIFOs.
pub struct Ctx<'a> {
    pub t0: u64,
    pub end: u64,
    pub stop: &'a AtomicBool,
    pub gap_ns: u64,
    pub rng: SimRng,
    /// Its wake-up FIFO (read end, non-blocking).
    pub wake_in: File,
    /// Its item FIFO, if it serves.
    pub items_in: Option<File>,
    /// Every task's wake-up FIFO (write ends), by task index.
    pub wake_out: &'a [File],
    /// Which instance of its declaration it is (for `wake` targets).
    pub instance: u32,
}

impl Ctx<'_> {
    fn over(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || now_ns() >= self.end
    }

    /// Spins for `work_ns` of CPU time, entering the kernel every
    /// `enter_kernel_every_ns` of it when given. Returns false if the run ended first.
    fn spin(&self, work_ns: u64, enter_kernel_every_ns: Option<u64>, out: &mut ThreadResult) -> bool {
        let mut done = 0u64;
        let mut last = now_ns();
        let mut n = 0u32;
        // The work done (time on the CPU, gaps excluded) at which to enter the kernel next.
        let every = enter_kernel_every_ns.filter(|&e| e > 0);
        let mut next_entry = every.unwrap_or(u64::MAX);
        while done < work_ns {
            if done >= next_entry {
                // The value is not needed: the call is the point. Its own
                // cost is CPU time of the thread, counted as work; a
                // reschedule on its return shows as a gap below.
                let _ = clock_gettime(ClockId::ThreadCPUTime);
                out.kernel_entries += 1;
                next_entry = every.map_or(u64::MAX, |e| done.saturating_add(e));
            }
            let t = now_ns();
            let d = t - last;
            if d > self.gap_ns {
                ThreadResult::push(&mut out.preempts, &mut out.overflow, (t - self.t0, d));
            } else {
                done += d;
            }
            last = t;
            n = n.wrapping_add(1);
            if t >= self.end || (n.is_multiple_of(4096) && self.stop.load(Ordering::Relaxed)) {
                return false;
            }
        }
        true
    }

    /// Sleeps until `deadline` and returns the time it ran again, or sleeps
    /// to the end of the run and returns None when the deadline is past it.
    fn sleep_to(&self, deadline: u64) -> Option<u64> {
        if deadline >= self.end {
            sleep_until(self.end);
            return None;
        }
        sleep_until(deadline);
        Some(now_ns())
    }

    /// Blocks until `fd` is readable or the run ends. Returns false at the end.
    /// One `poll` until the end (no periodic wake-up, which would be a real
    /// wake-up in the measurement); a stop request ends the worker process.
    fn block_on(&self, fd: &File) -> bool {
        // Bounded: each pass either returns or waits until the end (EINTR retries).
        for _ in 0..1000 {
            let left = self.end.saturating_sub(now_ns());
            if left == 0 || self.stop.load(Ordering::Relaxed) {
                return false;
            }
            let ts = Timespec { tv_sec: (left / 1_000_000_000) as i64, tv_nsec: (left % 1_000_000_000) as _ };
            let mut fds = [PollFd::new(fd, PollFlags::IN)];
            match poll(&mut fds, Some(&ts)) {
                Ok(n) if n > 0 => return true,
                _ => continue,
            }
        }
        false
    }
}

/// Reads one message of `N` bytes if one is there (non-blocking).
fn try_read<const N: usize>(f: &File) -> Option<[u8; N]> {
    let mut buf = [0u8; N];
    match rustix::io::read(f, &mut buf) {
        Ok(n) if n == N => Some(buf),
        _ => None,
    }
}

fn word(b: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[i * 8..i * 8 + 8]);
    u64::from_le_bytes(w)
}

/// Runs `program` until its iterations are done or the run ends.
pub fn run_program(ctx: &mut Ctx<'_>, program: &Program, out: &mut ThreadResult) {
    let mut worst = 0u64;
    let t0 = ctx.t0;
    let mut note_wakeup = |out: &mut ThreadResult, t: u64, delay: u64| {
        ThreadResult::push(&mut out.wakeups, &mut out.overflow, (t - t0, delay));
        if delay >= worst {
            worst = delay;
            out.worst_cpu = Some(rustix::thread::sched_getcpu() as u16);
        }
    };
    let passes = program.iterations.unwrap_or(u64::MAX);
    let mut pass = 0u64;
    'outer: while pass < passes {
        pass += 1;
        for step in &program.steps {
            if ctx.over() {
                break 'outer;
            }
            match step {
                Step::Run { work: d, enter_kernel_every_ns } => {
                    let w = d.sample(&mut ctx.rng);
                    if !ctx.spin(w, *enter_kernel_every_ns, out) {
                        break 'outer;
                    }
                }
                Step::Sleep(d) => {
                    let deadline = now_ns().saturating_add(d.sample(&mut ctx.rng));
                    let Some(t) = ctx.sleep_to(deadline) else { break 'outer };
                    note_wakeup(out, t, t.saturating_sub(deadline));
                }
                Step::SleepUntil { period_ns, offset_ns } => {
                    // As the model: the next multiple of the period after now, plus the offset.
                    let now = now_ns() - ctx.t0;
                    let k = if now < *offset_ns { 0 } else { (now - offset_ns) / period_ns + 1 };
                    let deadline = ctx.t0 + k.saturating_mul(*period_ns).saturating_add(*offset_ns);
                    let Some(t) = ctx.sleep_to(deadline) else { break 'outer };
                    note_wakeup(out, t, t.saturating_sub(deadline));
                }
                Step::Wait => {
                    if try_read::<8>(&ctx.wake_in).is_some() {
                        continue;
                    }
                    if !ctx.block_on(&ctx.wake_in) {
                        break 'outer;
                    }
                    let t = now_ns();
                    if let Some(m) = try_read::<8>(&ctx.wake_in) {
                        note_wakeup(out, t, t.saturating_sub(word(&m, 0)));
                    }
                }
                // A FIFO write wakes its reader with WF_SYNC whatever `sync`
                // says (pipe_write → wake_up_interruptible_sync_poll).
                Step::Wake { target, .. } => {
                    let to = target.resolve(ctx.instance).index();
                    if let Some(f) = ctx.wake_out.get(to) {
                        let _ = rustix::io::write(f, &now_ns().to_le_bytes());
                    }
                }
                Step::Serve => {
                    let Some(items) = ctx.items_in.as_ref() else { continue };
                    let mut served = 0u64;
                    // Bounded by the items that arrive before the end.
                    loop {
                        let item = match try_read::<16>(items) {
                            Some(m) => m,
                            None if served > 0 => break,
                            None => {
                                if !ctx.block_on(items) {
                                    break 'outer;
                                }
                                let t = now_ns();
                                let Some(m) = try_read::<16>(items) else { continue };
                                note_wakeup(out, t, t.saturating_sub(word(&m, 0)));
                                m
                            }
                        };
                        let (sent, work) = (word(&item, 0), word(&item, 1));
                        if !ctx.spin(work, None, out) {
                            break 'outer;
                        }
                        let t = now_ns();
                        ThreadResult::push(&mut out.responses, &mut out.overflow, (t - ctx.t0, t.saturating_sub(sent)));
                        served += 1;
                    }
                }
                Step::Yield => rustix::thread::sched_yield(),
                // Refused by the plan.
                Step::Io(_) | Step::Fdatasync | Step::WaitIo(_) => {}
            }
        }
    }
    if let Some(items) = ctx.items_in.as_ref() {
        while try_read::<16>(items).is_some() && out.items_left < 10_000_000 {
            out.items_left += 1;
        }
    }
}

/// A request source's waker thread: arrivals at the scenario's intervals,
/// `burst` items each, written to the target's item FIFO (non-blocking: a
/// full FIFO drops the item, as the model drops beyond its queue limit).
pub fn run_source(
    t0: u64,
    end: u64,
    stop: &AtomicBool,
    src: &sim_core::SourceSpec,
    rng: &mut SimRng,
    fifo: &File,
) -> u64 {
    let mut dropped = 0;
    let mut next = t0 + src.start_ns + src.interval.sample(rng);
    // Bounded by the run's end: each pass moves `next` forward by at least 1 ns.
    while next < end && !stop.load(Ordering::Relaxed) {
        sleep_until(next);
        for _ in 0..src.burst {
            let work = src.work.sample(rng);
            let mut msg = [0u8; 16];
            msg[..8].copy_from_slice(&now_ns().to_le_bytes());
            msg[8..].copy_from_slice(&work.to_le_bytes());
            if rustix::io::write(fifo, &msg).is_err() {
                dropped += 1;
            }
        }
        next += src.interval.sample(rng).max(1);
    }
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx<'a>(stop: &'a AtomicBool, wake_in: File) -> Ctx<'a> {
        let t0 = now_ns();
        Ctx {
            t0,
            end: t0 + 10_000_000_000,
            stop,
            gap_ns: 20_000,
            rng: SimRng::new(1),
            wake_in,
            items_in: None,
            wake_out: &[],
            instance: 0,
        }
    }

    #[test]
    fn spin_enters_the_kernel_every_n_of_work() {
        let stop = AtomicBool::new(false);
        let (r, _w) = rustix::pipe::pipe().expect("a pipe");
        let c = ctx(&stop, File::from(r));
        let mut out = ThreadResult::default();
        // 1 ms of work, an entry every 100 µs of it: at 100, 200, … 900 µs,
        // each counted from the previous one, which a reading late by at
        // most one gap (20 µs) can push back (so 8 or 9).
        assert!(c.spin(1_000_000, Some(100_000), &mut out));
        assert!((8..=9).contains(&out.kernel_entries), "{} entries", out.kernel_entries);
        let mut pure = ThreadResult::default();
        assert!(c.spin(1_000_000, None, &mut pure));
        assert_eq!(pure.kernel_entries, 0);
        // Work longer than the run stops at its end.
        stop.store(true, Ordering::Relaxed);
        let mut cut = ThreadResult::default();
        assert!(!c.spin(u64::MAX, Some(1_000), &mut cut));
    }
}
