//! CFQ's sysfs tunables (4.4 block/cfq-iosched.c), kept as the kernel keeps
//! them: times in jiffies, computed from `HZ` with integer division, so at
//! HZ=100 `slice_idle` (HZ/125) is 0 and idling is off.

/// Which CFQ: 4.4's, or 4.4 with commit 3932a86b4b9d ("cfq: fix starvation
/// of asynchronous writes", mainline 4.9, stable 4.8.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CfqBehaviour {
    V4_4,
    Fixed,
}

impl CfqBehaviour {
    pub fn name(self) -> &'static str {
        match self {
            CfqBehaviour::V4_4 => "4.4",
            CfqBehaviour::Fixed => "fixed",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CfqTunables {
    pub quantum: u32,
    /// `cfq_fifo_expire[0]` (async) and `[1]` (sync), jiffies.
    pub fifo_expire_j: [u64; 2],
    /// KiB.
    pub back_seek_max_kib: u64,
    pub back_seek_penalty: u32,
    /// `cfq_slice[0]` (async) and `[1]` (sync), jiffies.
    pub slice_j: [u64; 2],
    pub slice_async_rq: u32,
    pub slice_idle_j: u64,
    pub group_idle_j: u64,
    pub low_latency: bool,
    pub target_latency_j: u64,
    pub behaviour: CfqBehaviour,
}

impl CfqTunables {
    /// The 4.4 defaults at `hz`: `cfq_fifo_expire = {HZ/4, HZ/8}`,
    /// `cfq_slice_sync = HZ/10`, `cfq_slice_async = HZ/25`,
    /// `cfq_slice_idle = HZ/125`, `cfq_group_idle = HZ/125`,
    /// `cfq_target_latency = HZ*3/10`, quantum 8, back_seek_max 16 MiB,
    /// back_seek_penalty 2, slice_async_rq 2, low_latency 1. `cfq_init`
    /// raises a zero `slice_async`, `slice_idle` and `group_idle` to 1 jiffy
    /// (`CONFIG_CFQ_GROUP_IOSCHED=y`, as distributions build it), and
    /// `cfq_registered_queue` sets `slice_idle` to 0 on a non-rotational
    /// device (`nonrot`); sysfs writes in the scenario come after both.
    pub fn defaults(hz: u32, nonrot: bool) -> CfqTunables {
        let hz = u64::from(hz);
        CfqTunables {
            quantum: 8,
            fifo_expire_j: [hz / 4, hz / 8],
            back_seek_max_kib: 16 * 1024,
            back_seek_penalty: 2,
            slice_j: [(hz / 25).max(1), hz / 10],
            slice_async_rq: 2,
            slice_idle_j: if nonrot { 0 } else { (hz / 125).max(1) },
            group_idle_j: (hz / 125).max(1),
            low_latency: true,
            target_latency_j: hz * 3 / 10,
            behaviour: CfqBehaviour::Fixed,
        }
    }

    /// Sets a tunable by its sysfs name from the value written to sysfs (ms
    /// for times, converted with `msecs_to_jiffies`, which rounds up).
    pub fn set(&mut self, name: &str, value: u64, hz: u32) -> Result<(), String> {
        let j = msecs_to_jiffies(value, hz);
        let positive = |v: u64| if v == 0 { Err(format!("`{name}` must be at least 1")) } else { Ok(v) };
        match name {
            "quantum" => self.quantum = positive(value)?.min(u64::from(u32::MAX)) as u32,
            "fifo_expire_async" => self.fifo_expire_j[0] = j,
            "fifo_expire_sync" => self.fifo_expire_j[1] = j,
            "back_seek_max" => self.back_seek_max_kib = value,
            "back_seek_penalty" => self.back_seek_penalty = positive(value)?.min(u64::from(u32::MAX)) as u32,
            "slice_async" => self.slice_j[0] = positive(j)?,
            "slice_sync" => self.slice_j[1] = positive(j)?,
            "slice_async_rq" => self.slice_async_rq = positive(value)?.min(u64::from(u32::MAX)) as u32,
            "slice_idle" => self.slice_idle_j = j,
            "group_idle" => self.group_idle_j = j,
            "low_latency" => {
                if value > 1 {
                    return Err("`low_latency` is 0 or 1".into());
                }
                self.low_latency = value == 1;
            }
            "target_latency" => self.target_latency_j = positive(j)?,
            _ => return Err(format!("unknown CFQ tunable `{name}`; allowed: {}", CFQ_TUNABLES.join(", "))),
        }
        Ok(())
    }
}

/// CFQ's files under `/sys/block/<dev>/queue/iosched/` in 4.4.
pub const CFQ_TUNABLES: &[&str] = &[
    "quantum",
    "fifo_expire_sync",
    "fifo_expire_async",
    "back_seek_max",
    "back_seek_penalty",
    "slice_sync",
    "slice_async",
    "slice_async_rq",
    "slice_idle",
    "group_idle",
    "low_latency",
    "target_latency",
];

/// `msecs_to_jiffies` (4.4 include/linux/jiffies.h): rounds up.
pub fn msecs_to_jiffies(ms: u64, hz: u32) -> u64 {
    (u128::from(ms) * u128::from(hz)).div_ceil(1000).min(u128::from(u64::MAX / 1_000_000_000)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_truncate_at_hz() {
        let t = CfqTunables::defaults(250, false);
        assert_eq!((t.slice_idle_j, t.slice_j, t.fifo_expire_j, t.target_latency_j), (2, [10, 25], [62, 31], 75));
        let t = CfqTunables::defaults(100, false);
        assert_eq!((t.slice_idle_j, t.group_idle_j), (1, 1), "HZ/125 truncates to 0 and cfq_init raises it to 1");
        assert_eq!(t.fifo_expire_j, [25, 12]);
        assert_eq!(CfqTunables::defaults(1000, false).slice_idle_j, 8);
        assert_eq!(CfqTunables::defaults(1000, true).slice_idle_j, 0, "cfq_registered_queue on a non-rotational queue");
        let mut t = CfqTunables::defaults(300, false);
        t.set("slice_idle", 5, 300).unwrap();
        assert_eq!(t.slice_idle_j, 2, "5 ms at HZ=300 is 1.5 jiffies, rounded up");
        assert!(t.set("slice_sync", 0, 300).is_err());
        assert!(t.set("quantom", 1, 300).unwrap_err().contains("allowed: quantum"));
    }
}
