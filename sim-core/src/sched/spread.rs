//! The tail that `find_lowest_rq` (rt.c) and `find_later_rq` (deadline.c)
//! share: given the CPUs a class found acceptable (`lowest_mask`,
//! `later_mask`), prefer the task's own CPU, then the waking CPU within an
//! SD_WAKE_AFFINE domain of it, then a CPU of the mask in the nearest such
//! domain, then the waking CPU, then any. 6.x spreads the choice inside a
//! domain with `cpumask_any_and_distribute` (lib/cpumask.c), whose cursor
//! `distribute_cpu_mask_prev` is one per CPU for every caller: the RT and
//! deadline classes advance the same cursor.

use crate::cpuset::CpuSet;
use crate::ids::CpuId;

/// How a domain's CPU is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InDomain {
    /// The first CPU of the mask in the domain (4.4 rt.c `cpumask_first_and`)
    /// or round-robin from the executing CPU's last choice (6.x
    /// `cpumask_any_and_distribute`), as `CpuSpread::distribute` says.
    FirstOrDistribute,
    /// 4.4 deadline.c `find_later_rq`: only `best_cpu` (the mask's first
    /// CPU, `cpudl_find` → `cpumask_any`), if this domain holds it.
    Best,
}

/// Each CPU's SD_WAKE_AFFINE domain spans and the 6.x distribution cursor.
#[derive(Clone, Debug)]
pub struct CpuSpread {
    /// Per CPU: the spans of its SD_WAKE_AFFINE domains, bottom up.
    affine_spans: Vec<Vec<CpuSet>>,
    /// 6.x `cpumask_any_and_distribute` (`RtRules::lowest_distribute`).
    distribute: bool,
    /// `distribute_cpu_mask_prev` of each executing CPU.
    prev: Vec<u16>,
}

impl CpuSpread {
    pub fn new(affine_spans: Vec<Vec<CpuSet>>, distribute: bool) -> CpuSpread {
        let n = affine_spans.len();
        CpuSpread { affine_spans, distribute, prev: vec![0; n] }
    }

    /// One CPU of `cands` (ascending): the first, or (6.x) the next after
    /// `this_cpu`'s last choice, wrapping.
    fn pick_in(&mut self, this_cpu: CpuId, cands: impl Iterator<Item = CpuId>) -> Option<CpuId> {
        if !self.distribute {
            return cands.into_iter().next();
        }
        let prev = self.prev[this_cpu.index()];
        let mut first = None;
        let mut next = None;
        for c in cands {
            first.get_or_insert(c);
            if c.0 > prev {
                next = Some(c);
                break;
            }
        }
        let chosen = next.or(first)?;
        self.prev[this_cpu.index()] = chosen.0;
        Some(chosen)
    }

    /// The shared tail of `find_lowest_rq` (4.4 rt.c:1586-1622; 6.6
    /// rt.c:1917-1969) and `find_later_rq` (4.4 deadline.c:1486-1537; 6.6
    /// deadline.c:2150-2207): `mask` is non-empty.
    pub fn choose(&mut self, task_cpu: CpuId, this_cpu: CpuId, mask: &CpuSet, how: InDomain) -> Option<CpuId> {
        if mask.contains(task_cpu) {
            return Some(task_cpu);
        }
        let this = mask.contains(this_cpu).then_some(this_cpu);
        let best = mask.iter().next();
        for d in 0..self.affine_spans[task_cpu.index()].len() {
            if let Some(c) = this
                && self.affine_spans[task_cpu.index()][d].contains(c)
            {
                return Some(c);
            }
            let chosen = match how {
                InDomain::Best => best.filter(|&b| self.affine_spans[task_cpu.index()][d].contains(b)),
                InDomain::FirstOrDistribute => {
                    let span = self.affine_spans[task_cpu.index()][d].clone();
                    self.pick_in(this_cpu, span.iter_and(mask))
                }
            };
            if chosen.is_some() {
                return chosen;
            }
        }
        if this.is_some() {
            return this;
        }
        match how {
            InDomain::Best => best,
            // 6.x cpumask_any_distribute(lowest_mask); 4.4 cpumask_any.
            InDomain::FirstOrDistribute => self.pick_in(this_cpu, mask.iter()),
        }
    }
}
