//! The host's tick grid, read from `/proc/timer_list`, and the measured run's
//! time zero placed on it, so that the host's ticks fall where the model's do
//! (`machine.tick_offset + k × TICK_NSEC` from the workload's start).
//!
//! Each CPU's tick is an hrtimer (`tick_sched_timer`, renamed
//! `tick_nohz_handler` in 6.8) whose expiry `A` in `# expires at A-B nsecs` is
//! `CLOCK_MONOTONIC`, the clock the threads read. Without `sched_skew_tick`
//! every CPU's tick lies on one grid (`tick_next_period` is a multiple of
//! `TICK_NSEC`); a CPU in NO_HZ idle shows a later expiry, still on the grid.
//! Reading the file needs root; without it the run keeps an unaligned zero.

use anyhow::{Result, bail};

/// The tick grid the host's CPUs agree on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TickGrid {
    /// The tick period, `1e9 / HZ`.
    pub tick_ns: u64,
    /// Every tick expiry modulo `tick_ns` (`CLOCK_MONOTONIC`).
    pub phase_ns: u64,
    /// CPUs whose tick timer was read.
    pub cpus: u32,
}

/// The run's time zero, aligned or not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alignment {
    /// `CLOCK_MONOTONIC` of the workload's start.
    pub t0: u64,
    /// The grid used, when it could be read.
    pub grid: Option<TickGrid>,
    /// Host ticks fall at `t0 + tick_offset_ns + k × tick_ns` (aligned only).
    pub tick_offset_ns: Option<u64>,
    /// Why the zero is not aligned, when it is not.
    pub missing: Option<String>,
}

/// The tick timers' expiries `(cpu, expiry_ns)` in a `/proc/timer_list` text.
pub fn parse_tick_expiries(text: &str) -> Vec<(u32, u64)> {
    let mut out = Vec::new();
    let mut cpu: Option<u32> = None;
    let mut tick_next = false;
    for line in text.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("cpu:") {
            cpu = rest.trim().parse().ok();
            tick_next = false;
            continue;
        }
        // ` #0: <00000000…>, tick_nohz_handler, S:01`
        if l.starts_with('#') && !l.starts_with("# expires") {
            tick_next =
                l.split(',').nth(1).is_some_and(|f| matches!(f.trim(), "tick_sched_timer" | "tick_nohz_handler"));
            continue;
        }
        if let (true, Some(c), Some(rest)) = (tick_next, cpu, l.strip_prefix("# expires at ")) {
            if let Some(a) = rest.split('-').next().and_then(|a| a.trim().parse::<u64>().ok()) {
                out.push((c, a));
            }
            tick_next = false;
        }
    }
    out
}

/// The grid the expiries agree on, or why there is none.
pub fn grid_of(expiries: &[(u32, u64)], tick_ns: u64) -> Result<TickGrid> {
    if tick_ns == 0 {
        bail!("the host's HZ is unknown, so the tick period is");
    }
    let Some(&(_, first)) = expiries.first() else {
        bail!("no per-CPU tick timer (tick_sched_timer / tick_nohz_handler) in /proc/timer_list");
    };
    let phase_ns = first % tick_ns;
    if let Some(&(cpu, e)) = expiries.iter().find(|&&(_, e)| e % tick_ns != phase_ns) {
        bail!(
            "the CPUs' ticks are not on one grid (CPU {cpu} expires at {e} ns, {} ns into its {tick_ns} ns period, others at {phase_ns} ns; sched_skew_tick?)",
            e % tick_ns
        );
    }
    let mut cpus: Vec<u32> = expiries.iter().map(|e| e.0).collect();
    cpus.dedup();
    Ok(TickGrid { tick_ns, phase_ns, cpus: cpus.len() as u32 })
}

/// Reads the host's tick grid (`/proc/timer_list`, root only) on the host
/// CPUs the workload uses (`cpus`; all when empty): another CPU's tick may
/// sit on its own grid (this VM's CPU 1 does, 3.2 ms into the period).
pub fn read_grid(hz: u32, cpus: &[u16]) -> Result<TickGrid> {
    let path = "/proc/timer_list";
    let tick_ns = if hz == 0 { 0 } else { 1_000_000_000 / u64::from(hz) };
    // A CPU whose tick is stopped (NO_HZ idle) shows its next timer event,
    // off the grid, for a while: read again, a bounded number of times,
    // until every CPU's tick timer agrees.
    let mut last = None;
    for _ in 0..GRID_READS {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("reading {path} for the host's tick grid: {e} (it needs root)"))?;
        let mut expiries = parse_tick_expiries(&text);
        if !cpus.is_empty() {
            expiries.retain(|&(c, _)| cpus.iter().any(|&w| u32::from(w) == c));
        }
        match grid_of(&expiries, tick_ns) {
            Ok(g) => return Ok(g),
            Err(e) => last = Some((e, expiries)),
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    // Still no agreement: a stopped tick's timer is programmed for a later
    // event, while a running tick is due within one period, so the earliest
    // expiry is on the grid.
    match last {
        Some((_, expiries)) if tick_ns > 0 && !expiries.is_empty() => {
            let &(_, first) = expiries.iter().min_by_key(|&&(_, e)| e).expect("not empty");
            let cpus = expiries.iter().filter(|&&(_, e)| e % tick_ns == first % tick_ns).count() as u32;
            Ok(TickGrid { tick_ns, phase_ns: first % tick_ns, cpus })
        }
        Some((e, _)) => Err(anyhow::anyhow!("{path}: {e} (in each of {GRID_READS} reads)")),
        None => Err(anyhow::anyhow!("{path}: not read")),
    }
}

/// How often `read_grid` reads /proc/timer_list before giving up.
const GRID_READS: u32 = 50;

/// The first instant after `after` at which the host's ticks fall at
/// `t0 + tick_offset_ns + k × tick_ns`: `t0 ≡ phase − tick_offset (mod tick)`.
pub fn align_t0(after: u64, grid: &TickGrid, tick_offset_ns: u64) -> u64 {
    let tick = grid.tick_ns;
    let want = (grid.phase_ns + tick - tick_offset_ns % tick) % tick;
    let have = after % tick;
    // Strictly after `after`: a whole period when it already sits on the phase.
    let ahead = (want + tick - have) % tick;
    after + if ahead == 0 { tick } else { ahead }
}

/// The run's time zero: `after` itself when the grid cannot be read, else
/// the first aligned instant after it.
pub fn choose_t0(after: u64, grid: Result<TickGrid>, tick_offset_ns: u64) -> Alignment {
    match grid {
        Ok(g) => Alignment {
            t0: align_t0(after, &g, tick_offset_ns),
            grid: Some(g),
            tick_offset_ns: Some(tick_offset_ns % g.tick_ns),
            missing: None,
        },
        Err(e) => Alignment {
            t0: after,
            grid: None,
            tick_offset_ns: None,
            missing: Some(format!("the run's start is not aligned with the host's ticks: {e:#}")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Abridged from this project's Linux 6.18 VM (HZ=250, 2 CPUs).
    const TIMER_LIST_618: &str = "\
Timer List Version: v0.10
HRTIMER_MAX_CLOCK_BASES: 8
now at 29443605420658 nsecs

cpu: 0
 clock 0:
  .base:       00000000398167b3
  .index:      0
  .resolution: 1 nsecs
  .offset:     0 nsecs
active timers:
 #0: <000000005f89342f>, tick_nohz_handler, S:01
 # expires at 29443608000000-29443608000000 nsecs [in 2579342 to 2579342 nsecs]
 #1: <000000007c5fbb62>, hrtimer_wakeup, S:01
 # expires at 29443637081680-29443637131680 nsecs [in 31661022 to 31711022 nsecs]
 clock 1:
  .offset:     1795471372582464958 nsecs
active timers:
cpu: 1
 clock 0:
active timers:
 #0: <00000000a1b2c3d4>, hrtimer_wakeup, S:01
 # expires at 29443601000001-29443601050001 nsecs [in 1 to 2 nsecs]
 #1: <000000005f89342f>, tick_nohz_handler, S:01
 # expires at 29443640000000-29443640000000 nsecs [in 34579342 to 34579342 nsecs]
  .last_tick      : 29445384000000 nsecs
";

    /// A 4.x layout: the tick timer's older name, a skewed grid on CPU 1.
    const TIMER_LIST_SKEWED: &str = "\
cpu: 0
 #0: <ffff88007fc0e4a0>, tick_sched_timer, S:01, hrtimer_start_range_ns, swapper/0/0
 # expires at 5000000-5000000 nsecs [in 1 to 1 nsecs]
cpu: 1
 #0: <ffff88007fd0e4a0>, tick_sched_timer, S:01, hrtimer_start_range_ns, swapper/1/0
 # expires at 7000000-7000000 nsecs [in 1 to 1 nsecs]
";

    #[test]
    fn timer_list_tick_expiries_only() {
        // The hrtimer_wakeup entries are not ticks, whichever comes first.
        assert_eq!(parse_tick_expiries(TIMER_LIST_618), vec![(0, 29443608000000), (1, 29443640000000)]);
        assert_eq!(parse_tick_expiries(TIMER_LIST_SKEWED), vec![(0, 5000000), (1, 7000000)]);
        assert_eq!(parse_tick_expiries("garbage\n# expires at x-y\n"), vec![]);
    }

    #[test]
    fn grid_agreement_and_refusals() {
        let g = grid_of(&parse_tick_expiries(TIMER_LIST_618), 4_000_000).expect("one grid");
        assert_eq!(g, TickGrid { tick_ns: 4_000_000, phase_ns: 0, cpus: 2 });
        // With HZ=1000 the 5 ms and 7 ms ticks agree, with HZ=250 they do not.
        assert_eq!(grid_of(&parse_tick_expiries(TIMER_LIST_SKEWED), 1_000_000).map(|g| g.phase_ns).ok(), Some(0));
        let e = grid_of(&parse_tick_expiries(TIMER_LIST_SKEWED), 4_000_000).expect_err("skewed");
        assert!(e.to_string().contains("CPU 1"), "{e}");
        assert!(grid_of(&[], 4_000_000).is_err());
        assert!(grid_of(&[(0, 8)], 0).is_err());
    }

    #[test]
    fn t0_alignment() {
        let g = TickGrid { tick_ns: 4_000_000, phase_ns: 1_000, cpus: 2 };
        // Offset 0: t0 on the grid, strictly after `after`.
        assert_eq!(align_t0(10_000_000, &g, 0), 12_001_000);
        assert_eq!(align_t0(12_001_000, &g, 0), 16_001_000);
        assert_eq!(align_t0(12_000_999, &g, 0), 12_001_000);
        // Offset 1.5 ms: the ticks fall 1.5 ms after t0.
        let t0 = align_t0(10_000_000, &g, 1_500_000);
        assert_eq!(t0, 10_501_000);
        assert_eq!((t0 + 1_500_000) % 4_000_000, g.phase_ns);
        // An offset beyond the phase wraps; every result lies in (after, after + tick].
        for after in [0u64, 1, 999, 1_000, 3_999_999, 123_456_789] {
            for off in [0u64, 1, 1_000, 3_999_999] {
                let t0 = align_t0(after, &g, off);
                assert!(t0 > after && t0 <= after + g.tick_ns, "after {after} off {off}: {t0}");
                assert_eq!((t0 + off) % g.tick_ns, g.phase_ns, "after {after} off {off}");
            }
        }
    }

    #[test]
    fn unreadable_grid_keeps_the_start() {
        let a = choose_t0(7_777, Err(anyhow::anyhow!("no root")), 0);
        assert_eq!((a.t0, a.grid, a.tick_offset_ns), (7_777, None, None));
        assert!(a.missing.as_deref().is_some_and(|m| m.contains("no root")));
        let a = choose_t0(7_777, Ok(TickGrid { tick_ns: 4_000_000, phase_ns: 0, cpus: 1 }), 250_000);
        assert_eq!((a.t0, a.tick_offset_ns, a.missing), (3_750_000, Some(250_000), None));
    }
}
