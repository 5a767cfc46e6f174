//! `rq->cpu_load[]` of Linux 4.4 (fair.c, "per rq 'load' array"): per CPU,
//! five exponentially decayed histories of `weighted_cpuload`, updated once
//! a tick (`update_cpu_load_active`) and caught up after tickless idle
//! (`update_idle_cpu_load`, `update_cpu_load_nohz`), plus the readers the
//! load balancer and `wake_affine` use: `source_load`, `target_load`,
//! `cpu_avg_load_per_task`.
//!
//! `cpu_load[i]` moves by 1/2^i of the difference per tick:
//! `(old · (2^i − 1) + new) >> i`, rounding up while the load rises. Missed
//! ticks decay `old` with `decay_load_missed`, which approximates
//! `((2^i − 1)/2^i)^n` on a 128-point scale and calls it zero after
//! `degrade_zero_ticks[i]` ticks; so a catch-up over n ticks is close to, but
//! not always equal to, n zero-load ticks.
//!
//! The caller passes `weighted_cpuload(cpu)` (`FairCore::weighted_cpuload`) and
//! `jiffies`; nothing here reads a clock.

/// `CPU_LOAD_IDX_MAX` (4.4 sched.h).
pub const CPU_LOAD_IDX_MAX: usize = 5;

/// `DEGRADE_SHIFT` (4.4 fair.c): the factors are in 1/128ths.
const DEGRADE_SHIFT: u32 = 7;

/// `degrade_zero_ticks` (4.4 fair.c): missed ticks after which `cpu_load[idx]`
/// is taken to have decayed to zero.
const DEGRADE_ZERO_TICKS: [u64; CPU_LOAD_IDX_MAX] = [0, 8, 32, 64, 128];

/// `degrade_factor` (4.4 fair.c): row `idx`, column `j` is
/// `((2^idx − 1)/2^idx)^(2^j)` in 1/128ths (missing initialisers are 0).
const DEGRADE_FACTOR: [[u64; DEGRADE_SHIFT as usize + 1]; CPU_LOAD_IDX_MAX] = [
    [0, 0, 0, 0, 0, 0, 0, 0],
    [64, 32, 8, 0, 0, 0, 0, 0],
    [96, 72, 40, 12, 1, 0, 0, 0],
    [112, 98, 75, 43, 15, 1, 0, 0],
    [120, 112, 98, 76, 45, 16, 2, 0],
];

/// `decay_load_missed` (4.4 fair.c): `load · ((2^idx − 1)/2^idx)^missed_updates`,
/// one multiply per set bit of `missed_updates`.
pub fn decay_load_missed(mut load: u64, mut missed_updates: u64, idx: usize) -> u64 {
    if missed_updates == 0 {
        return load;
    }
    if missed_updates >= DEGRADE_ZERO_TICKS[idx] {
        return 0;
    }
    if idx == 1 {
        return load >> missed_updates;
    }
    // Bounded: missed_updates < 128 has at most 7 bits.
    let mut j = 0;
    while missed_updates != 0 {
        if missed_updates % 2 == 1 {
            load = (load * DEGRADE_FACTOR[idx][j]) >> DEGRADE_SHIFT;
        }
        missed_updates >>= 1;
        j += 1;
    }
    load
}

/// `cpu_avg_load_per_task` (4.4 fair.c): `weighted_cpuload / rq->cfs.h_nr_running`,
/// 0 for an empty queue.
pub fn cpu_avg_load_per_task(weighted: u64, h_nr_running: u32) -> u64 {
    weighted.checked_div(u64::from(h_nr_running)).unwrap_or(0)
}

/// A CPU's `cpu_load[]` and `last_load_update_tick` (4.4 `struct rq`).
#[derive(Clone, Debug, Default)]
pub struct CpuLoad {
    pub cpu_load: [u64; CPU_LOAD_IDX_MAX],
    /// jiffies of the last update.
    pub last_load_update_tick: u64,
}

impl CpuLoad {
    /// `__update_cpu_load` (4.4 fair.c): fold `this_load` into every index,
    /// `pending_updates` ticks after the last update.
    fn update(&mut self, this_load: u64, pending_updates: u64) {
        self.cpu_load[0] = this_load; // fast track for idx 0
        for i in 1..CPU_LOAD_IDX_MAX {
            let scale = 1u64 << i;
            let old_load = decay_load_missed(self.cpu_load[i], pending_updates - 1, i);
            let mut new_load = this_load;
            // Round up the averaging division if load is increasing, so that a
            // load of 10 is not stuck at 9.
            if new_load > old_load {
                new_load += scale - 1;
            }
            self.cpu_load[i] = (old_load * (scale - 1) + new_load) >> i;
        }
    }

    /// `update_cpu_load_active` (4.4 fair.c, from `scheduler_tick`):
    /// `this_load` is `weighted_cpuload`, one pending update.
    pub fn update_cpu_load_active(&mut self, this_load: u64, jiffies: u64) {
        self.last_load_update_tick = jiffies;
        self.update(this_load, 1);
    }

    /// `update_idle_cpu_load` (4.4 fair.c, from `nohz_idle_balance` for an
    /// idle CPU whose tick is stopped): catch up `jiffies − last` ticks, but
    /// only if the CPU has no load (a woken task's load makes it bail) and
    /// missed a tick. 4.4 does not look at `nr_running` here (later kernels
    /// do); the argument is accepted for callers and ignored. Returns
    /// whether `__update_cpu_load` ran (it ends with `sched_avg_update`).
    pub fn update_idle_cpu_load(&mut self, this_load: u64, nr_running: u32, jiffies: u64) -> bool {
        let _ = nr_running; // 4.4: only `load` is tested
        if this_load != 0 || jiffies == self.last_load_update_tick {
            return false;
        }
        let pending_updates = jiffies.wrapping_sub(self.last_load_update_tick);
        self.last_load_update_tick = jiffies;
        self.update(this_load, pending_updates);
        true
    }

    /// `update_cpu_load_nohz` (4.4 fair.c, from `tick_nohz_idle_exit`): catch
    /// up the ticks missed while idle with a load of 0 ("we were idle"), even
    /// if a remote wakeup already queued load: 4.4 ignores `this_load` and
    /// `nr_running` here.
    /// Returns whether `__update_cpu_load` ran.
    pub fn update_cpu_load_nohz(&mut self, this_load: u64, nr_running: u32, jiffies: u64) -> bool {
        let _ = (this_load, nr_running); // 4.4 passes 0 to __update_cpu_load
        if jiffies == self.last_load_update_tick {
            return false;
        }
        let pending_updates = jiffies.wrapping_sub(self.last_load_update_tick);
        self.last_load_update_tick = jiffies;
        self.update(0, pending_updates);
        true
    }

    /// `source_load` (4.4 fair.c): a low guess at a migration source's load,
    /// `min(cpu_load[type − 1], weighted)`; `weighted` (`weighted_cpuload`) for
    /// type 0 or without LB_BIAS.
    pub fn source_load(&self, weighted: u64, type_idx: usize, lb_bias: bool) -> u64 {
        if type_idx == 0 || !lb_bias {
            return weighted;
        }
        self.cpu_load[type_idx - 1].min(weighted)
    }

    /// `target_load` (4.4 fair.c): a high guess at a migration target's load,
    /// `max(cpu_load[type − 1], weighted)`; `weighted` for type 0 or without
    /// LB_BIAS.
    pub fn target_load(&self, weighted: u64, type_idx: usize, lb_bias: bool) -> u64 {
        if type_idx == 0 || !lb_bias {
            return weighted;
        }
        self.cpu_load[type_idx - 1].max(weighted)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-computed from the degrade tables: idx 1 shifts; idx 2..4 multiply
    /// by degrade_factor[idx][j] / 128 for each set bit j; at or past
    /// degrade_zero_ticks[idx] the result is 0.
    #[test]
    fn decay_load_missed_follows_the_degrade_tables() {
        let d = |m, idx| decay_load_missed(1024, m, idx);
        // 0 missed: unchanged at every index.
        assert_eq!([d(0, 1), d(0, 2), d(0, 3), d(0, 4)], [1024; 4]);
        // 1 missed: factor column 0 (64, 96, 112, 120).
        assert_eq!([d(1, 1), d(1, 2), d(1, 3), d(1, 4)], [512, 768, 896, 960]);
        // 3 missed (bits 0, 1): 1024·96/128 = 768, ·72/128 = 432 = 1024·(3/4)^3.
        assert_eq!(d(3, 2), 432);
        // 8 missed: idx 1 reaches degrade_zero_ticks[1] = 8; column 3 for the others.
        assert_eq!([d(8, 1), d(8, 2), d(8, 3), d(8, 4)], [0, 96, 344, 608]);
        // 33 = 32 + 1: idx 2 is zero (32 ticks); idx 3: 1024·112/128 = 896, ·1/128 = 7;
        // idx 4: 960·16/128 = 120.
        assert_eq!([d(33, 1), d(33, 2), d(33, 3), d(33, 4)], [0, 0, 7, 120]);
        // 64 missed: idx 3 reaches 64; idx 4 uses column 6: 1024·2/128 = 16.
        assert_eq!([d(64, 1), d(64, 2), d(64, 3), d(64, 4)], [0, 0, 0, 16]);
        // 127 is the last index-4 value below 128 (7 factors, ends at 0); 128+ is 0.
        assert_eq!([d(127, 4), d(128, 4), d(1000, 4)], [0, 0, 0]);
    }

    /// __update_cpu_load from idle to a busy load of 1024 over 3 ticks:
    /// cpu_load[i] = (old·(2^i − 1) + new + 2^i − 1) >> i while rising.
    #[test]
    fn update_cpu_load_active_rises_with_round_up() {
        let mut c = CpuLoad::default();
        c.update_cpu_load_active(1024, 1);
        // (0 + 1024 + 2^i − 1) >> i
        assert_eq!(c.cpu_load, [1024, 512, 256, 128, 64]);
        c.update_cpu_load_active(1024, 2);
        // i=2: (256·3 + 1027) >> 2 = 1795 >> 2 = 448; i=4: (64·15 + 1039) >> 4 = 124.
        assert_eq!(c.cpu_load, [1024, 768, 448, 240, 124]);
        c.update_cpu_load_active(1024, 3);
        // i=3: (240·7 + 1031) >> 3 = 2711 >> 3 = 338; i=4: (124·15 + 1039) >> 4 = 181.
        assert_eq!(c.cpu_load, [1024, 896, 592, 338, 181]);
        assert_eq!(c.last_load_update_tick, 3);
        // Falling: no round-up. i=1: (896 + 0) >> 1 = 448.
        c.update_cpu_load_active(0, 4);
        assert_eq!(c.cpu_load[..2], [0, 448]);
    }

    /// source_load is min(cpu_load[type-1], weighted), target_load the max;
    /// type 0 or LB_BIAS off gives weighted_cpuload itself.
    #[test]
    fn source_and_target_load_bias() {
        let c = CpuLoad { cpu_load: [100, 200, 300, 400, 500], last_load_update_tick: 0 };
        assert_eq!(c.source_load(250, 2, true), 200);
        assert_eq!(c.target_load(250, 2, true), 250);
        assert_eq!(c.source_load(250, 3, true), 250);
        assert_eq!(c.target_load(250, 3, true), 300);
        assert_eq!((c.source_load(250, 0, true), c.target_load(250, 0, true)), (250, 250));
        assert_eq!((c.source_load(250, 3, false), c.target_load(250, 3, false)), (250, 250));
    }

    /// update_cpu_load_nohz after 10 idle jiffies does one __update_cpu_load
    /// with pending_updates = 10: decay_load_missed(old, 9, i), then one
    /// zero-load step. That approximates ten zero-load ticks; it is not equal
    /// (idx 1: 9 ≥ degrade_zero_ticks = 8 gives 0 where ten shifts give 2).
    #[test]
    fn nohz_catch_up_after_ten_idle_jiffies() {
        let mut busy = CpuLoad::default();
        for j in 1..=100 {
            busy.update_cpu_load_active(2048, j);
        }
        assert_eq!(busy.cpu_load, [2048; 5]);
        let mut caught_up = busy.clone();
        caught_up.update_cpu_load_nohz(777, 1, 110); // 4.4 uses load 0 whatever is queued
        let mut ticked = busy.clone();
        for j in 101..=110 {
            ticked.update_cpu_load_active(0, j);
        }
        // 9 missed = bits 0 and 3 (columns 0 and 3), then one zero-load step:
        // idx 2: 2048·96>>7 = 1536, ·12>>7 = 144, ·3>>2 = 108;
        // idx 3: 2048·112>>7 = 1792, ·43>>7 = 602, ·7>>3 = 526;
        // idx 4: 2048·120>>7 = 1920, ·76>>7 = 1140, ·15>>4 = 1068.
        assert_eq!(caught_up.cpu_load, [0, 0, 108, 526, 1068]);
        assert_eq!(ticked.cpu_load, [0, 2, 114, 537, 1071]);
        assert_eq!(caught_up.last_load_update_tick, 110);
        // The same jiffy again is a no-op.
        let before = caught_up.cpu_load;
        caught_up.update_cpu_load_nohz(0, 0, 110);
        assert_eq!(caught_up.cpu_load, before);
        // update_idle_cpu_load catches up the same way, but bails with load queued.
        let mut idle = busy.clone();
        idle.update_idle_cpu_load(1024, 1, 110);
        assert_eq!((idle.cpu_load, idle.last_load_update_tick), (busy.cpu_load, 100), "load != 0: bail");
        idle.update_idle_cpu_load(0, 0, 110);
        assert_eq!(idle.cpu_load, caught_up.cpu_load);
    }

    #[test]
    fn avg_load_per_task() {
        assert_eq!(cpu_avg_load_per_task(3000, 3), 1000);
        assert_eq!(cpu_avg_load_per_task(3000, 0), 0);
    }
}
