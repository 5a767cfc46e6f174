//! Which CPU a new or waking task is queued on.
//!
//! This is a deliberately simple stand-in for `select_task_rq_fair` (4.4
//! fair.c): there is no wake-affine logic, no `select_idle_sibling` and no load
//! balancing yet, so a task stays where it was placed. ARCHITECTURE.md says so.

use crate::cpuset::CpuSet;
use crate::ids::CpuId;

/// A woken task goes back to the CPU it last ran on if allowed, otherwise to
/// the lowest-numbered idle allowed CPU, otherwise to the lowest-numbered
/// allowed CPU.
pub fn select_cpu_wake(prev: CpuId, allowed: &CpuSet, nr_running: impl Fn(CpuId) -> u32) -> CpuId {
    if allowed.contains(prev) {
        return prev;
    }
    allowed
        .iter()
        .find(|&c| nr_running(c) == 0)
        .or_else(|| allowed.iter().next())
        .expect("validated affinity is never empty")
}

/// A new task goes to the lowest-numbered idle allowed CPU, otherwise to the
/// allowed CPU with the fewest runnable tasks (lowest number on ties) — the
/// outcome `find_idlest_cpu` would reach on an unbalanced machine.
pub fn select_cpu_fork(allowed: &CpuSet, nr_running: impl Fn(CpuId) -> u32) -> CpuId {
    allowed.iter().min_by_key(|&c| (nr_running(c), c)).expect("validated affinity is never empty")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wake_prefers_the_previous_cpu_then_an_idle_one() {
        let all = CpuSet::all(4);
        let load = |c: CpuId| [2, 0, 1, 0][c.index()];
        assert_eq!(select_cpu_wake(CpuId(2), &all, load), CpuId(2));
        let some = CpuSet::parse("0,2-3", 4).unwrap();
        assert_eq!(select_cpu_wake(CpuId(1), &some, load), CpuId(3));
        assert_eq!(select_cpu_fork(&all, load), CpuId(1));
        assert_eq!(select_cpu_fork(&CpuSet::parse("0,2", 4).unwrap(), load), CpuId(2));
    }
}
