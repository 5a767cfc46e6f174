//! Scheduling domains as Linux 6.6, 6.12 and 6.18 build them at boot
//! (kernel/sched/topology.c: `sched_init_numa`, `build_sched_domains`,
//! `sd_init`, `get_group`/`build_sched_groups`, `build_overlap_sched_groups`,
//! `init_sched_groups_capacity`, `sd_degenerate`, `sd_parent_degenerate`,
//! `cpu_attach_domain`, `update_top_cache_domain`; arch/x86/kernel/smpboot.c
//! `build_sched_topology`), into the `Topology` the 4.4 build fills. Where
//! the versions differ the build asks `Topology6xRules`, never a version.
//!
//! # Levels
//! x86's table with CONFIG_SCHED_SMT, CONFIG_SCHED_CLUSTER and
//! CONFIG_SCHED_MC (as distribution kernels build), then `sched_init_numa`:
//! - SMT: `cpu_smt_mask`, `cpu_smt_flags` (SHARE_CPUCAPACITY | SHARE_LLC);
//! - CLS: `cpu_clustergroup_mask` = `cpu_l2c_shared_mask`: the scenario's
//!   cluster, else the core (its own L2), where it always degenerates;
//!   `cpu_cluster_flags`: 6.6 SD_SHARE_PKG_RESOURCES, 6.12+ SD_CLUSTER |
//!   SD_SHARE_LLC (rule `cluster_flag`);
//! - MC: `cpu_coregroup_mask` = `cpu_llc_shared_mask`, the socket; SHARE_LLC;
//! - DIE (6.6) or PKG (6.12+; rule `package_level`): the node
//!   (`cpu_cpu_mask` / `cpu_node_mask`), no flags (x86's SD_ASYM_PACKING
//!   needs ITMT: not modelled);
//! - NODE: `sched_init_numa`'s identity level (the node), no flags;
//! - NUMA, with more than one node (one remote distance, 21): SD_NUMA, and
//!   SD_OVERLAP in 6.6 and 6.12 (SDTL_OVERLAP; 6.18 has no SD_OVERLAP and
//!   builds overlapping groups for SD_NUMA; rule `numa_overlap`).
//!
//! 6.18's x86 `build_sched_topology` drops the SMT level with one thread per
//! core; a one-CPU SMT level degenerates in every version, leaving the same
//! domains and groups, so it is built here always.
//!
//! # What differs from 4.4 (`topology.rs`)
//! `sd_init` has no SD_LOAD_BALANCE, PREFER_SIBLING on every level but NUMA,
//! busy_factor 16, no load indices or `smt_gain` (every CPU has capacity
//! 1024); `sd_weight` is the level's mask, isolated CPUs included;
//! `SD_DEGENERATE_GROUPS_MASK` (every flag but WAKE_AFFINE) replaces 4.4's
//! list and SD_SERIALIZE gets no special case; groups carry their child's
//! flags (`sg->flags`) and `sg->cores`; `imb_numa_nr` is set per domain;
//! the LLC's `sd_llc_shared` starts with `nr_busy_cpus` = `sd_weight`;
//! 6.12+ has `sd_share_id` and `sched_cluster_active`. No asymmetric
//! capacities (SD_ASYM_CPUCAPACITY) and no ITMT packing are modelled.
//!
//! # Per-CPU copies
//! Domains are stored once per span, as in the 4.4 build; the two fields
//! whose copies can differ are kept per CPU as well: `imb_numa_nr` (under
//! isolcpus the LLCs below differ in weight) and the local group's flags of
//! an SD_NUMA domain (each CPU has its own copies of its groups there).

use super::*;

/// The topology rules of one 6.x version (from `Balance6xRules::topology`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Topology6xRules {
    /// CLS is `SD_CLUSTER | SD_SHARE_LLC` (6.12+ `cpu_cluster_flags`), not
    /// 6.6's `SD_SHARE_PKG_RESOURCES`.
    pub cluster_flag: bool,
    /// The package level: `DomainLevel::Die` (6.6) or `DomainLevel::Pkg`
    /// (renamed in 6.7; same mask and flags).
    pub package_level: DomainLevel,
    /// NUMA levels get SD_OVERLAP (`SDTL_OVERLAP`, 6.6 and 6.12; 6.18 dropped the flag).
    pub numa_overlap: bool,
}

/// 6.x topology.c `SD_DEGENERATE_GROUPS_MASK`: the sd_flags.h flags with
/// SDF_NEEDS_GROUPS, i.e. every modelled flag but SD_WAKE_AFFINE.
const SD_DEGENERATE_GROUPS_MASK: u32 = SD_BALANCE_NEWIDLE
    | SD_BALANCE_EXEC
    | SD_BALANCE_FORK
    | SD_BALANCE_WAKE
    | SD_SHARE_CPUCAPACITY
    | SD_CLUSTER
    | SD_SHARE_LLC
    | SD_SERIALIZE
    | SD_ASYM_PACKING
    | SD_PREFER_SIBLING
    | SD_OVERLAP
    | SD_NUMA;

/// A fresh domain of `level` whose mask holds `sd_weight` CPUs (6.x
/// topology.c:sd_init), with build_sched_domains' SD_OVERLAP.
fn sd_init_6x(level: DomainLevel, sd_weight: u32, rules: Topology6xRules) -> SchedDomain {
    let w = u64::from(sd_weight);
    // tl->sd_flags: cpu_smt_flags, x86_cluster_flags, x86_core_flags, none (DIE/PKG, NODE), cpu_numa_flags
    let tl_flags = match level {
        DomainLevel::Smt => SD_SHARE_CPUCAPACITY | SD_SHARE_LLC,
        // 6.12 topology.h:cpu_cluster_flags (6.18: kernel/sched/topology.c)
        DomainLevel::Cls if rules.cluster_flag => SD_CLUSTER | SD_SHARE_LLC,
        // 6.6 topology.h:cpu_cluster_flags
        DomainLevel::Cls => SD_SHARE_PKG_RESOURCES,
        DomainLevel::Mc => SD_SHARE_LLC,
        DomainLevel::Die | DomainLevel::Pkg | DomainLevel::Node => 0,
        DomainLevel::Numa => SD_NUMA,
    };
    let mut sd = SchedDomain {
        level,
        span: CpuSet::empty(0),
        span_weight: sd_weight,
        // 6.x topology.c:sd_init: NEWIDLE | EXEC | FORK | WAKE_AFFINE | PREFER_SIBLING | tl flags
        flags: SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE | SD_PREFER_SIBLING | tl_flags,
        min_interval: w,
        max_interval: 2 * w,
        balance_interval: w,
        busy_factor: 16,
        imbalance_pct: 117,
        cache_nice_tries: 0,
        busy_idx: 0,
        idle_idx: 0,
        newidle_idx: 0,
        wake_idx: 0,
        forkexec_idx: 0,
        smt_gain: 0,
        groups: Vec::new(),
        sd_weight,
        imb_numa_nr: 0,
    };
    // 6.x topology.c:sd_init "Convert topological properties into behaviour"
    if sd.flags & SD_SHARE_CPUCAPACITY != 0 {
        sd.imbalance_pct = 110;
    } else if sd.flags & SD_SHARE_LLC != 0 {
        sd.imbalance_pct = 117;
        sd.cache_nice_tries = 1;
    } else if sd.flags & SD_NUMA != 0 {
        sd.cache_nice_tries = 2;
        sd.flags &= !SD_PREFER_SIBLING;
        sd.flags |= SD_SERIALIZE;
        // numa distance 21 > node_reclaim_distance (30) is false: EXEC, FORK, WAKE_AFFINE stay
        if REMOTE_DISTANCE > RECLAIM_DISTANCE {
            sd.flags &= !(SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE);
        }
        // 6.6/6.12 topology.c:build_sched_domains: tl->flags & SDTL_OVERLAP gives SD_OVERLAP
        if rules.numa_overlap {
            sd.flags |= SD_OVERLAP;
        }
    } else {
        sd.cache_nice_tries = 1;
    }
    sd
}

/// One domain of one CPU's chain, from build to attach.
#[derive(Clone, Copy, Debug)]
struct Link6x {
    /// Index into the built levels.
    li: usize,
    class: u32,
    flags: u32,
    /// `span_weight`: the span's CPUs in the cpu_map.
    weight: u32,
    groups: u32,
    imb_numa_nr: u32,
    /// This CPU's `sd->groups->flags`.
    local_flags: u32,
}

/// 6.x topology.c:sd_degenerate
fn sd_degenerate_6x(d: &Link6x) -> bool {
    if d.weight == 1 {
        return true;
    }
    // "Following flags need at least 2 groups"
    if d.flags & SD_DEGENERATE_GROUPS_MASK != 0 && d.groups > 1 {
        return false;
    }
    // "Following flags don't use groups"
    if d.flags & SD_WAKE_AFFINE != 0 {
        return false;
    }
    true
}

/// 6.x topology.c:sd_parent_degenerate. Spans are nested, so equal weights mean equal spans.
fn sd_parent_degenerate_6x(child: &Link6x, parent: &Link6x) -> bool {
    if sd_degenerate_6x(parent) {
        return true;
    }
    if child.weight != parent.weight {
        return false;
    }
    let mut pflags = parent.flags;
    // "Flags needing groups don't count if only 1 group in parent"
    if parent.groups == 1 {
        pflags &= !SD_DEGENERATE_GROUPS_MASK;
    }
    !child.flags & pflags == 0
}

/// 6.x topology.c:build_sched_domains "Calculate an allowed NUMA imbalance
/// such that LLCs do not get imbalanced", over one CPU's chain as built.
fn set_imb_numa_nr(chain: &mut [Link6x]) {
    let (mut imb, mut imb_span) = (0u32, 1u32);
    for i in 0..chain.len() {
        let sd = chain[i];
        let child_llc = i > 0 && chain[i - 1].flags & SD_SHARE_LLC != 0;
        if sd.flags & SD_SHARE_LLC == 0 && child_llc {
            // "For a single LLC per node, allow an imbalance up to 12.5% of the node"
            let nr_llcs = sd.weight / chain[i - 1].weight;
            imb = if nr_llcs == 1 { sd.weight >> 3 } else { nr_llcs }.max(1);
            chain[i].imb_numa_nr = imb;
            // "Set span based on the first NUMA domain"
            imb_span = chain[i + 1..].iter().find(|p| p.flags & SD_NUMA != 0).map_or(sd.weight, |p| p.weight);
        } else {
            let factor = (sd.weight / imb_span).max(1);
            chain[i].imb_numa_nr = imb * factor;
        }
    }
}

/// 6.x topology.c:cpu_attach_domain's trimming of one CPU's chain. Every
/// `sd->groups->flags` it writes goes through `wrote` too (the domain
/// written to, its new local flags), in order, for the shared groups.
fn attach_chain_6x(chain: &mut Vec<Link6x>, wrote: &mut impl FnMut(&Link6x)) {
    // "Remove the sched domains which do not contribute to scheduling."
    let mut t = 0;
    while t + 1 < chain.len() {
        if sd_parent_degenerate_6x(&chain[t], &chain[t + 1]) {
            // parent->parent->groups->flags = tmp->flags
            if t + 2 < chain.len() {
                chain[t + 2].local_flags = chain[t].flags;
                wrote(&chain[t + 2]);
            }
            // "Transfer SD_PREFER_SIBLING down in case of a degenerate parent"
            if chain[t + 1].flags & SD_PREFER_SIBLING != 0 {
                chain[t].flags |= SD_PREFER_SIBLING;
            }
            chain.remove(t + 1);
        } else {
            t += 1;
        }
    }
    if chain.first().is_some_and(sd_degenerate_6x) {
        chain.remove(0);
        // "sched groups hold the flags of the child sched domain for convenience. Clear such
        // flags since the child is being destroyed." (the loop does not advance: sd->groups only)
        if let Some(base) = chain.first_mut() {
            base.local_flags = 0;
            wrote(base);
        }
    }
}

/// Per built level, per CPU: the index of the CPU's group in its domain
/// (groups in the order of their first CPU, as `group_members` lists them).
fn group_index_6x(levels: &[BuiltLevel], ncpu: usize) -> Vec<Vec<u32>> {
    let mut out = Vec::with_capacity(levels.len());
    for (li, l) in levels.iter().enumerate() {
        let mut idx = vec![u32::MAX; ncpu];
        for m in &l.members {
            let mut seen: BTreeMap<u32, u32> = BTreeMap::new();
            for &c in m {
                let k = if li == 0 { u32::from(c.0) } else { levels[li - 1].class_of[c.index()] };
                let next = seen.len() as u32;
                idx[c.index()] = *seen.entry(k).or_insert(next);
            }
        }
        out.push(idx);
    }
    out
}

/// The build's working state: the levels as built and what attaching leaves
/// in the groups every CPU of a span shares.
struct Build6x {
    rules: Topology6xRules,
    levels: Vec<BuiltLevel>,
    /// Per built level: sd_init's flags (equal for every span of a level).
    flags: Vec<u32>,
    /// Per built level, per CPU: its group's index (`group_index_6x`).
    group_index: Vec<Vec<u32>>,
    /// Shared (non-overlapping) groups written by cpu_attach_domain, per (level, class).
    group_flags: BTreeMap<(usize, u32), Vec<u32>>,
}

impl Build6x {
    /// `sg->flags` as get_group / build_group_from_child_sched_domain set it: the child's flags.
    fn built_group_flags(&self, li: usize) -> u32 {
        if li == 0 { 0 } else { self.flags[li - 1] }
    }

    /// Groups of an SD_NUMA domain are per-CPU copies (6.6/6.12 SD_OVERLAP, 6.18 SD_NUMA).
    fn overlapping(&self, li: usize) -> bool {
        self.flags[li] & SD_NUMA != 0
    }

    /// CPU `cpu`'s chain as build_sched_domains leaves it, with its `imb_numa_nr`.
    fn chain(&self, cpu: CpuId) -> Vec<Link6x> {
        let mut chain: Vec<Link6x> = self
            .levels
            .iter()
            .enumerate()
            .map(|(li, l)| {
                let class = l.class_of[cpu.index()];
                Link6x {
                    li,
                    class,
                    flags: self.flags[li],
                    weight: l.members[class as usize].len() as u32,
                    groups: l.groups[class as usize],
                    imb_numa_nr: 0,
                    local_flags: self.built_group_flags(li),
                }
            })
            .collect();
        set_imb_numa_nr(&mut chain);
        chain
    }

    /// Records cpu_attach_domain's write of `cpu`'s local group flags in a shared group.
    fn write_group_flags(&mut self, cpu: CpuId, d: &Link6x) {
        if self.overlapping(d.li) {
            return;
        }
        let init = self.built_group_flags(d.li);
        let ngroups = self.levels[d.li].groups[d.class as usize] as usize;
        let g = self.group_index[d.li][cpu.index()] as usize;
        self.group_flags.entry((d.li, d.class)).or_insert_with(|| vec![init; ngroups])[g] = d.local_flags;
    }

    /// Group `g`'s flags in the shared copy of domain (li, class), or as its child built them.
    fn shared_group_flags(&self, li: usize, class: u32, g: usize) -> u32 {
        self.group_flags.get(&(li, class)).map_or(self.built_group_flags(li), |v| v[g])
    }
}

impl Topology {
    /// Builds the domains 6.x attaches at boot for `shape` with `isolated`
    /// (isolcpus, `housekeeping_cpumask(HK_TYPE_DOMAIN)`) CPUs left out,
    /// under one version's `rules`. Panics on a shape `MachineShape::check`
    /// refuses.
    pub fn build_6x(shape: MachineShape, isolated: &CpuSet, rules: Topology6xRules) -> Topology {
        if let Err((field, m)) = shape.check(u16::MAX) {
            panic!("Topology::build_6x: bad machine shape ({field}: {m}): {shape:?}");
        }
        let mut topo = Topology::empty(shape, isolated);
        let n = shape.cpus();
        // 6.x topology.c:sched_init_domains: cpu_map = cpu_active_mask & housekeeping (not isolated)
        let in_map: Vec<bool> = (0..n).map(|c| !topo.isolated.contains(CpuId(c))).collect();
        let map_weight = in_map.iter().filter(|&&b| b).count() as u32;
        if map_weight == 0 {
            return topo;
        }
        // x86 build_sched_topology (SMT, CLS, MC, DIE/PKG) + sched_init_numa (NODE, NUMA)
        let mut candidates =
            vec![DomainLevel::Smt, DomainLevel::Cls, DomainLevel::Mc, rules.package_level, DomainLevel::Node];
        if shape.numa_nodes > 1 {
            candidates.push(DomainLevel::Numa);
        }
        let levels = topo.build_levels_of(&candidates, &in_map, map_weight);
        let flags = levels.iter().map(|l| sd_init_6x(l.level, 0, rules).flags).collect();
        let group_index = group_index_6x(&levels, usize::from(n));
        let mut b = Build6x { rules, levels, flags, group_index, group_flags: BTreeMap::new() };
        // 6.x topology.c:build_sched_domains "Attach the domains", CPU by CPU
        let mut chains: Vec<Vec<Link6x>> = vec![Vec::new(); usize::from(n)];
        for c in (0..n).map(CpuId).filter(|c| in_map[c.index()]) {
            let mut chain = b.chain(c);
            attach_chain_6x(&mut chain, &mut |d| b.write_group_flags(c, d));
            chains[c.index()] = chain;
        }
        topo.attach_6x(&b, &chains);
        topo.update_top_cache_domain_6x();
        topo
    }

    /// Creates each attached domain once, with its groups, and each CPU's
    /// list of domains, local groups and per-CPU fields.
    fn attach_6x(&mut self, b: &Build6x, chains: &[Vec<Link6x>]) {
        let mut ids: BTreeMap<(usize, u32), DomainId> = BTreeMap::new();
        for (c, chain) in chains.iter().enumerate() {
            for link in chain {
                let key = (link.li, link.class);
                let id = match ids.get(&key) {
                    Some(&id) => {
                        debug_assert_eq!(self.domains[id.0 as usize].flags, link.flags, "domain copies differ");
                        id
                    }
                    None => {
                        let id = DomainId(self.domains.len() as u32);
                        self.domains.push(self.domain_6x(b, link));
                        ids.insert(key, id);
                        id
                    }
                };
                let g = b.group_index[link.li][c];
                let local = if b.overlapping(link.li) {
                    link.local_flags
                } else {
                    b.shared_group_flags(link.li, link.class, g as usize)
                };
                self.cpu_domains[c].push(id);
                self.local_groups[c].push(g);
                self.cpu_imb_numa_nr[c].push(link.imb_numa_nr);
                self.local_group_flags[c].push(local);
            }
        }
    }

    /// One attached domain: sd_init's values over its span, its groups
    /// (get_group / build_group_from_child_sched_domain, init_sched_groups_capacity).
    fn domain_6x(&self, b: &Build6x, link: &Link6x) -> SchedDomain {
        let n = self.cpus();
        let l = &b.levels[link.li];
        // sd_init's sd_weight: cpumask_weight(tl->mask(cpu)), isolated CPUs included
        let sd_weight = self.mask_weight_6x(l.level);
        let mut sd = sd_init_6x(l.level, sd_weight, b.rules);
        sd.flags = link.flags;
        sd.span_weight = link.weight;
        sd.imb_numa_nr = link.imb_numa_nr;
        sd.span = CpuSet::empty(n);
        for &m in &l.members[link.class as usize] {
            sd.span.insert(m);
        }
        let overlapping = b.overlapping(link.li);
        sd.groups = group_members(&b.levels, link.li, link.class)
            .iter()
            .enumerate()
            .map(|(g, m)| {
                let mut span = CpuSet::empty(n);
                let mut cores: Vec<u32> = Vec::with_capacity(m.len());
                for &c in m {
                    span.insert(c);
                    cores.push(self.core_of(c));
                }
                // init_sched_groups_capacity: sg->cores counts each cpu_smt_mask once
                cores.sort_unstable();
                cores.dedup();
                SchedGroup {
                    span,
                    group_weight: m.len() as u32,
                    // update_group_capacity at steady state: every CPU at SCHED_CAPACITY_SCALE
                    capacity: SCHED_CAPACITY_SCALE * m.len() as u64,
                    flags: if overlapping {
                        b.built_group_flags(link.li)
                    } else {
                        b.shared_group_flags(link.li, link.class, g)
                    },
                    cores: cores.len() as u32,
                }
            })
            .collect();
        sd
    }

    /// `cpumask_weight(tl->mask(cpu))` of a level: the same for every CPU here.
    fn mask_weight_6x(&self, level: DomainLevel) -> u32 {
        let (classes, _) = self.level_class(level, CpuId(0));
        u32::from(self.cpus()) / classes as u32
    }

    /// 6.x topology.c:update_top_cache_domain for every CPU, and
    /// build_sched_domains' `sched_cluster_active` (capacities stay
    /// SCHED_CAPACITY_SCALE: `arch_scale_cpu_capacity` has no `smt_gain`).
    fn update_top_cache_domain_6x(&mut self) {
        for c in 0..usize::from(self.cpus()) {
            let chain = &self.cpu_domains[c];
            let flags = |i: usize| self.domains[chain[i].0 as usize].flags;
            // sd_llc = highest_flag_domain(cpu, SD_SHARE_LLC): SDF_SHARED_CHILD, stop at the first without
            let llc = (0..chain.len()).take_while(|&i| flags(i) & SD_SHARE_LLC != 0).last();
            self.sd_llc[c] = llc;
            if let Some(i) = llc {
                let sd = &self.domains[chain[i].0 as usize];
                let id = sd.span.iter().next().unwrap_or(CpuId(c as u16));
                self.llc_id[c] = id;
                self.llc_size[c] = sd.span_weight;
                // sd_init: sd->shared = sdds[first CPU]; nr_busy_cpus = sd_weight
                self.llc_shared[c] = Some(LlcSharedInit { id, nr_busy_cpus: sd.sd_weight });
            }
            // 6.12+: sd_share_id = first CPU of lowest_flag_domain(cpu, SD_CLUSTER), else sd_llc_id
            let cluster = (0..chain.len()).find(|&i| flags(i) & SD_CLUSTER != 0);
            self.sd_share_id[c] = match cluster {
                Some(i) => self.domains[chain[i].0 as usize].span.iter().next().unwrap_or(CpuId(c as u16)),
                None => self.llc_id[c],
            };
            self.sched_cluster_active |= cluster.is_some();
            // sd_numa = lowest_flag_domain(cpu, SD_NUMA)
            self.sd_numa[c] = (0..chain.len()).find(|&i| flags(i) & SD_NUMA != 0);
        }
    }

    /// `sg->flags` of group `g` of domain `d` in `cpu`'s copy (6.x): the local
    /// group's as cpu_attach_domain left it for that CPU, another group's
    /// as every CPU sees it (`SchedGroup::flags`). 0 in a 4.4 build.
    pub fn group_flags(&self, d: DomainId, cpu: CpuId, g: usize) -> u32 {
        self.group_flags_at(cpu, self.level_of(cpu, d), g)
    }

    /// `group_flags` of group `g` of `cpu`'s domain at `level` (an index
    /// into `cpu_domains[cpu]`), for callers that know the level.
    pub fn group_flags_at(&self, cpu: CpuId, level: usize, g: usize) -> u32 {
        let d = self.cpu_domains[cpu.index()][level];
        match self.local_group_flags[cpu.index()].get(level) {
            Some(&f) if self.local_groups[cpu.index()][level] as usize == g => f,
            _ => self.domains[d.0 as usize].groups[g].flags,
        }
    }

    /// `sd->imb_numa_nr` of `cpu`'s copy of its domain at `level` (an index
    /// into `cpu_domains[cpu]`); 0 in a 4.4 build.
    pub fn imb_numa_nr(&self, cpu: CpuId, level: usize) -> u32 {
        self.cpu_imb_numa_nr[cpu.index()].get(level).copied().unwrap_or(0)
    }
}

#[cfg(test)]
#[path = "topology6x_tests.rs"]
mod tests;
