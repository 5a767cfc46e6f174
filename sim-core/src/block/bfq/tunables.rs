//! BFQ's sysfs tunables (6.18 block/bfq-iosched.c `bfq_attrs`), kept in the
//! units the kernel keeps them: `fifo_expire_*` and `slice_idle` in ns,
//! `timeout_sync` in jiffies, `max_budget` in sectors.
//!
//! The kernel's store functions clamp a value outside their range; a scenario
//! is refused instead, with the range in the message (issue 21, "Bad input").

use crate::block::cfq_tunables::msecs_to_jiffies;

const NS_PER_MS: u64 = 1_000_000;
const NS_PER_US: u64 = 1_000;
const INT_MAX: u64 = i32::MAX as u64;
const UINT_MAX: u64 = u32::MAX as u64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BfqTunables {
    /// `bfq_fifo_expire[0]` (async) and `[1]` (sync), ns.
    pub fifo_expire_ns: [u64; 2],
    /// `bfq_back_max`, KiB (the kernel compares `back_max * 2` with sectors).
    pub back_seek_max: u64,
    pub back_seek_penalty: u64,
    /// `bfq_slice_idle`, ns.
    pub slice_idle_ns: u64,
    /// `bfq_user_max_budget`, sectors; 0 is "automatic".
    pub max_budget: u64,
    /// `bfq_timeout`, jiffies.
    pub timeout_j: u64,
    pub strict_guarantees: bool,
    pub low_latency: bool,
}

impl BfqTunables {
    /// `bfq_init_queue` (6.18): `bfq_fifo_expire = {NSEC_PER_SEC/4,
    /// NSEC_PER_SEC/8}`, `bfq_back_max = 16*1024`, `bfq_back_penalty = 2`,
    /// `bfq_slice_idle = NSEC_PER_SEC/125`, `bfq_timeout = HZ/8`,
    /// `low_latency = true`. Unlike CFQ, BFQ keeps idling on non-rotational
    /// devices.
    pub fn defaults(hz: u32) -> BfqTunables {
        BfqTunables {
            fifo_expire_ns: [1_000_000_000 / 4, 1_000_000_000 / 8],
            back_seek_max: 16 * 1024,
            back_seek_penalty: 2,
            slice_idle_ns: 1_000_000_000 / 125,
            max_budget: 0,
            timeout_j: u64::from(hz / 8),
            strict_guarantees: false,
            low_latency: true,
        }
    }

    /// Writes a tunable by its sysfs name (`STORE_FUNCTION`s of 6.18
    /// bfq-iosched.c, with their MIN/MAX as the allowed range).
    pub fn set(&mut self, name: &str, value: u64, hz: u32) -> Result<(), String> {
        let range = |lo: u64, hi: u64| {
            if (lo..=hi).contains(&value) {
                Ok(value)
            } else {
                Err(format!("`{name}` = {value} is outside the kernel's range {lo} to {hi}"))
            }
        };
        match name {
            "fifo_expire_sync" => self.fifo_expire_ns[1] = range(1, INT_MAX)? * NS_PER_MS,
            "fifo_expire_async" => self.fifo_expire_ns[0] = range(1, INT_MAX)? * NS_PER_MS,
            "back_seek_max" => self.back_seek_max = range(0, INT_MAX)?,
            "back_seek_penalty" => self.back_seek_penalty = range(1, INT_MAX)?,
            "slice_idle" => self.slice_idle_ns = range(0, INT_MAX)? * NS_PER_MS,
            "slice_idle_us" => self.slice_idle_ns = range(0, UINT_MAX)? * NS_PER_US,
            // bfq_max_budget_store: 0 means "computed from the peak rate".
            "max_budget" => self.max_budget = range(0, INT_MAX)?,
            // bfq_timeout_sync_store: [1, INT_MAX] ms, msecs_to_jiffies.
            "timeout_sync" => self.timeout_j = msecs_to_jiffies(range(1, INT_MAX)?, hz),
            "strict_guarantees" => {
                let on = range(0, 1)? == 1;
                // bfq_strict_guarantees_store raises slice_idle to 8 ms.
                if !self.strict_guarantees && on && self.slice_idle_ns < 8 * NS_PER_MS {
                    self.slice_idle_ns = 8 * NS_PER_MS;
                }
                self.strict_guarantees = on;
            }
            "low_latency" => self.low_latency = range(0, 1)? == 1,
            _ => return Err(format!("unknown BFQ tunable `{name}`; allowed: {}", BFQ_TUNABLES.join(", "))),
        }
        Ok(())
    }

    /// `/sys/block/<dev>/queue/iosched/` as the `SHOW_FUNCTION`s print it.
    pub fn sysfs(&self, hz: u32) -> Vec<(&'static str, u64)> {
        vec![
            ("fifo_expire_sync", self.fifo_expire_ns[1] / NS_PER_MS),
            ("fifo_expire_async", self.fifo_expire_ns[0] / NS_PER_MS),
            ("back_seek_max", self.back_seek_max),
            ("back_seek_penalty", self.back_seek_penalty),
            ("slice_idle", self.slice_idle_ns / NS_PER_MS),
            ("slice_idle_us", self.slice_idle_ns / NS_PER_US),
            ("max_budget", self.max_budget),
            ("timeout_sync", self.timeout_j * 1000 / u64::from(hz)),
            ("strict_guarantees", u64::from(self.strict_guarantees)),
            ("low_latency", u64::from(self.low_latency)),
        ]
    }
}

/// BFQ's files under `/sys/block/<dev>/queue/iosched/` (6.18 `bfq_attrs`).
pub const BFQ_TUNABLES: &[&str] = &[
    "fifo_expire_sync",
    "fifo_expire_async",
    "back_seek_max",
    "back_seek_penalty",
    "slice_idle",
    "slice_idle_us",
    "max_budget",
    "timeout_sync",
    "strict_guarantees",
    "low_latency",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_ranges() {
        let t = BfqTunables::defaults(250);
        // HZ/8 at HZ=250 is 31 jiffies, shown as 31*1000/250 = 124 ms.
        assert_eq!(t.timeout_j, 31);
        let shown: Vec<u64> = t.sysfs(250).iter().map(|(_, v)| *v).collect();
        assert_eq!(shown, vec![125, 250, 16384, 2, 8, 8000, 0, 124, 0, 1]);
        let mut t = BfqTunables::defaults(1000);
        t.set("slice_idle", 0, 1000).unwrap();
        t.set("strict_guarantees", 1, 1000).unwrap();
        assert_eq!(t.slice_idle_ns, 8_000_000, "strict_guarantees raises slice_idle to 8 ms");
        t.set("slice_idle_us", 2500, 1000).unwrap();
        assert_eq!(t.slice_idle_ns, 2_500_000);
        assert!(t.set("timeout_sync", 0, 1000).unwrap_err().contains("range 1 to 2147483647"));
        assert!(t.set("low_latency", 2, 1000).unwrap_err().contains("range 0 to 1"));
        assert!(t.set("quantum", 1, 1000).unwrap_err().contains("allowed: fifo_expire_sync"));
    }
}
