//! Load weights and the fixed-point arithmetic CFS uses to turn real time into
//! virtual time (Linux 4.4 `kernel/sched/core.c` and `fair.c`).
//!
//! In 4.4 the extra `SCHED_LOAD_RESOLUTION` bits are compiled out, so weights are
//! the plain table values with `NICE_0_LOAD = 1024` (kernel.md §1.1).

use super::policy::Policy;

/// `NICE_0_LOAD` (4.4 sched.h with the high-resolution load bits disabled).
pub const NICE_0_LOAD: u64 = 1024;
/// `WMULT_CONST` = `~0U` (4.4 fair.c).
pub const WMULT_CONST: u64 = 0xffff_ffff;
/// `WMULT_SHIFT` (4.4 fair.c).
const WMULT_SHIFT: u32 = 32;
/// `WEIGHT_IDLEPRIO` / `WMULT_IDLEPRIO`: SCHED_IDLE tasks (4.4 sched.h).
pub const WEIGHT_IDLEPRIO: u64 = 3;
const WMULT_IDLEPRIO: u64 = 1_431_655_765;

/// `prio_to_weight[]` (4.4 kernel/sched/sched.h), indexed by nice + 20.
pub const PRIO_TO_WEIGHT: [u64; 40] = [
    88761, 71755, 56483, 46273, 36291, //
    29154, 23254, 18705, 14949, 11916, //
    9548, 7620, 6100, 4904, 3906, //
    3121, 2501, 1991, 1586, 1277, //
    1024, 820, 655, 526, 423, //
    335, 272, 215, 172, 137, //
    110, 87, 70, 56, 45, //
    36, 29, 23, 18, 15,
];

/// `prio_to_wmult[]` = 2^32 / weight (4.4 kernel/sched/sched.h), indexed by nice + 20.
pub const PRIO_TO_WMULT: [u64; 40] = [
    48388, 59856, 76040, 92818, 118348, //
    147320, 184698, 229616, 287308, 360437, //
    449829, 563644, 704093, 875809, 1099582, //
    1376151, 1717300, 2157191, 2708050, 3363326, //
    4194304, 5237765, 6557202, 8165337, 10153587, //
    12820798, 15790321, 19976592, 24970740, 31350126, //
    39045157, 49367440, 61356676, 76695844, 95443717, //
    119304647, 148102320, 186737708, 238609294, 286331153,
];

/// `struct load_weight`: a weight and its cached inverse (0 = not yet computed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadWeight {
    pub weight: u64,
    inv_weight: u64,
}

impl LoadWeight {
    /// A run queue's load starts at zero with no inverse cached.
    pub const ZERO: LoadWeight = LoadWeight { weight: 0, inv_weight: 0 };

    /// `set_load_weight` (4.4 core.c): SCHED_IDLE gets `WEIGHT_IDLEPRIO`, others
    /// the table entry for their nice value.
    pub fn for_task(policy: Policy, nice: i8) -> LoadWeight {
        if policy == Policy::Idle {
            return LoadWeight { weight: WEIGHT_IDLEPRIO, inv_weight: WMULT_IDLEPRIO };
        }
        let i = (i32::from(nice) + 20) as usize;
        LoadWeight { weight: PRIO_TO_WEIGHT[i], inv_weight: PRIO_TO_WMULT[i] }
    }

    /// A weight with no precomputed inverse (group entities, sums).
    pub fn from_weight(weight: u64) -> LoadWeight {
        LoadWeight { weight, inv_weight: 0 }
    }

    /// `update_load_add`: also drops the cached inverse.
    pub fn add(&mut self, w: u64) {
        self.weight += w;
        self.inv_weight = 0;
    }

    /// `update_load_sub`.
    pub fn sub(&mut self, w: u64) {
        debug_assert!(self.weight >= w, "load underflow");
        self.weight -= w;
        self.inv_weight = 0;
    }

    /// `__update_inv_weight` (4.4 fair.c), without caching the result.
    fn inv(&self) -> u64 {
        if self.inv_weight != 0 {
            return self.inv_weight;
        }
        let w = self.weight;
        if w >= WMULT_CONST { 1 } else { WMULT_CONST.checked_div(w).unwrap_or(WMULT_CONST) }
    }
}

/// `__calc_delta` (4.4 fair.c): `delta_exec * weight / lw->weight` in 32-bit
/// fixed point. It truncates, as the kernel does (3.10's `calc_delta_mine` rounded).
pub fn calc_delta(delta_exec: u64, weight: u64, lw: &LoadWeight) -> u64 {
    let mut fact = weight;
    let mut shift = WMULT_SHIFT;
    // `while (fact >> 32) { fact >>= 1; shift--; }`, as many times at once.
    let n = 32u32.saturating_sub(fact.leading_zeros());
    fact >>= n;
    shift -= n;
    // "hint to use a 32x32->64 mul"
    fact = (fact & 0xffff_ffff) * lw.inv();
    let n = 32u32.saturating_sub(fact.leading_zeros());
    fact >>= n;
    shift -= n;
    // mul_u64_u32_shr
    ((u128::from(delta_exec) * u128::from(fact)) >> shift) as u64
}

/// `calc_delta_fair` (4.4 fair.c): real time to virtual time for an entity of
/// weight `lw`; unchanged for a nice-0 weight.
pub fn calc_delta_fair(delta: u64, lw: &LoadWeight) -> u64 {
    if lw.weight != NICE_0_LOAD { calc_delta(delta, NICE_0_LOAD, lw) } else { delta }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_inverses_match_two_to_the_32() {
        for i in 0..40 {
            let exact = (1u64 << 32) / PRIO_TO_WEIGHT[i];
            assert!(PRIO_TO_WMULT[i].abs_diff(exact) <= 1, "nice {}", i as i32 - 20);
        }
    }

    #[test]
    fn nice_steps_are_about_one_point_two_five() {
        for i in 1..40 {
            let r = PRIO_TO_WEIGHT[i - 1] as f64 / PRIO_TO_WEIGHT[i] as f64;
            assert!((1.2..1.3).contains(&r), "step {i}: {r}");
        }
    }

    #[test]
    fn calc_delta_fair_scales_by_weight_and_truncates() {
        let nice0 = LoadWeight::for_task(Policy::Normal, 0);
        assert_eq!(calc_delta_fair(1_000_000, &nice0), 1_000_000);
        // nice 5 (335): 1ms of real time is 1024/335 ms of virtual time.
        let nice5 = LoadWeight::for_task(Policy::Normal, 5);
        let v = calc_delta_fair(1_000_000, &nice5);
        assert_eq!(v, ((1_000_000u128 * 1024 * 12820798) >> 32) as u64);
        assert!(v <= 1_000_000 * 1024 / 335);
        let idle = LoadWeight::for_task(Policy::Idle, 0);
        assert_eq!(idle.weight, 3);
        assert_eq!(calc_delta_fair(3, &idle), 1023); // 3 * 1024 * 1431655765 >> 32 truncated
    }

    /// The shifts done at once give what the kernel's one-bit loops give.
    #[test]
    fn calc_delta_shifts_as_the_loops_do() {
        fn looped(delta_exec: u64, weight: u64, lw: &LoadWeight) -> u64 {
            let (mut fact, mut shift) = (weight, WMULT_SHIFT);
            while fact >> 32 != 0 {
                fact >>= 1;
                shift -= 1;
            }
            fact = (fact & 0xffff_ffff) * lw.inv();
            while fact >> 32 != 0 {
                fact >>= 1;
                shift -= 1;
            }
            ((u128::from(delta_exec) * u128::from(fact)) >> shift) as u64
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for i in 0..20_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let weight = [0, 1, 2, 15, 1024, 88761, 1 << 31, 1 << 32, (1 << 33) + 7, x >> (33 + i % 31)][(i % 10) as usize];
            // Over 32 bits, a queue weight of at least 1024 keeps `shift` from going below 0.
            let mut lw = LoadWeight::ZERO;
            lw.add(if weight >> 32 != 0 { 1024 } else { 1 } + (x % (1 << (i % 40))));
            let delta = x.rotate_left(17) >> (i % 64);
            assert_eq!(calc_delta(delta, weight, &lw), looped(delta, weight, &lw), "{delta} {weight} {}", lw.weight);
        }
    }

    #[test]
    fn calc_delta_against_a_sum_of_weights() {
        // A slice of 24ms for one of two nice-0 entities: 12ms (sched_slice).
        let mut rq = LoadWeight::ZERO;
        rq.add(1024);
        rq.add(1024);
        let s = calc_delta(24_000_000, 1024, &rq);
        // WMULT_CONST / 2048 truncates, so the result is a hair under 12ms.
        assert!((11_999_000..=12_000_000).contains(&s), "{s}");
    }
}
