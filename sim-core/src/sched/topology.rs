//! Machine topology and scheduling domains, as Linux 4.4 builds them at boot
//! (kernel/sched/core.c: `sched_init_numa`, `build_sched_domains`, `sd_init`,
//! `build_sched_groups`, `build_overlap_sched_groups`, `sd_degenerate`,
//! `sd_parent_degenerate`, `cpu_attach_domain`, `update_top_cache_domain`;
//! arch/x86/kernel/smpboot.c for the masks). Pure data, built once. 6.x
//! builds the same `Topology` its own way (`topology6x.rs`,
//! `Topology::build_6x`); the machine's shape is `topology_shape.rs`.
//!
//! # CPU numbering
//! Like a typical x86 server enumerates them: the first thread of every core,
//! socket by socket, then the second threads, and so on:
//! `cpu = thread * (sockets * cores_per_socket) + socket * cores_per_socket + core`.
//! So with two threads per core the SMT siblings of CPU `i` are `i` and
//! `i + total_cores`. NUMA nodes group whole sockets: `numa_nodes` divides
//! `sockets` and `node = socket / (sockets / numa_nodes)`.
//!
//! # Levels
//! x86 4.4 `default_topology` then `sched_init_numa`'s levels:
//! - SMT: `cpu_smt_mask` (the core's threads), flags of `cpu_smt_flags`;
//! - MC: `cpu_coregroup_mask` = `cpu_llc_shared_mask`; the LLC is the socket;
//! - DIE: `cpu_cpu_mask` = `cpumask_of_node(cpu_to_node(cpu))`, the NUMA node;
//! - NUMA: with SLIT distances 10 local / 21 remote there is one NUMA level,
//!   spanning every node (21 <= RECLAIM_DISTANCE 30, so `sd_init` keeps
//!   WAKE_AFFINE, BALANCE_FORK and BALANCE_EXEC on it).
//!
//! Isolated CPUs (`isolcpus=`) are taken out of the `cpu_map` first
//! (`init_sched_domains`: `cpu_active_mask & ~cpu_isolated_map`): they get no
//! domain and are in no span.
//!
//! # Sharing
//! The kernel keeps a per-CPU copy of every domain; the copies of one span
//! hold equal values. Here each distinct domain is stored once
//! (`Topology::domains`) and each CPU lists the ones it sees, bottom-up.

use crate::cpuset::CpuSet;
use crate::ids::CpuId;
use std::collections::BTreeMap;

#[path = "topology_shape.rs"]
mod shape;
#[path = "topology6x.rs"]
mod topology6x;
pub use shape::{MachineShape, THREADS_PER_CORE_MAX};
pub use topology6x::Topology6xRules;

// 4.4 include/linux/sched.h
pub const SD_LOAD_BALANCE: u32 = 0x0001;
pub const SD_BALANCE_NEWIDLE: u32 = 0x0002;
pub const SD_BALANCE_EXEC: u32 = 0x0004;
pub const SD_BALANCE_FORK: u32 = 0x0008;
pub const SD_BALANCE_WAKE: u32 = 0x0010;
pub const SD_WAKE_AFFINE: u32 = 0x0020;
pub const SD_SHARE_CPUCAPACITY: u32 = 0x0080;
pub const SD_SHARE_POWERDOMAIN: u32 = 0x0100;
pub const SD_SHARE_PKG_RESOURCES: u32 = 0x0200;
pub const SD_SERIALIZE: u32 = 0x0400;
pub const SD_ASYM_PACKING: u32 = 0x0800;
pub const SD_PREFER_SIBLING: u32 = 0x1000;
pub const SD_OVERLAP: u32 = 0x2000;
pub const SD_NUMA: u32 = 0x4000;
/// 6.12+ include/linux/sched/sd_flags.h `SD_CLUSTER` (the cluster level;
/// 6.6 has no such flag). The kernel numbers 6.x flags by their order in
/// sd_flags.h; here every flag keeps one bit, 4.4's where 4.4 has it.
pub const SD_CLUSTER: u32 = 0x8000;
/// 6.12 sd_flags.h `SD_SHARE_LLC`: 6.6's and 4.4's `SD_SHARE_PKG_RESOURCES`
/// renamed (same meaning, same bit here).
pub const SD_SHARE_LLC: u32 = SD_SHARE_PKG_RESOURCES;

/// 4.4 include/linux/sched.h `SCHED_CAPACITY_SCALE` (1 << SCHED_CAPACITY_SHIFT).
pub const SCHED_CAPACITY_SCALE: u64 = 1024;
/// 4.4 core.c:sd_init `smt_gain` of an SMT domain (~15%).
pub const SMT_GAIN: u64 = 1178;
/// 4.4 include/linux/topology.h `LOCAL_DISTANCE` and the remote SLIT distance assumed here.
pub const LOCAL_DISTANCE: u32 = 10;
pub const REMOTE_DISTANCE: u32 = 21;
/// 4.4 include/linux/topology.h `RECLAIM_DISTANCE`.
pub const RECLAIM_DISTANCE: u32 = 30;

/// Flags that need at least two groups (4.4 core.c:sd_degenerate).
const SD_FLAGS_NEED_GROUPS: u32 = SD_LOAD_BALANCE
    | SD_BALANCE_NEWIDLE
    | SD_BALANCE_FORK
    | SD_BALANCE_EXEC
    | SD_SHARE_CPUCAPACITY
    | SD_SHARE_PKG_RESOURCES
    | SD_SHARE_POWERDOMAIN;

/// A topology level (4.4 `struct sched_domain_topology_level`, by its name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DomainLevel {
    Smt,
    /// 6.x x86 CLS (`cpu_clustergroup_mask`, CONFIG_SCHED_CLUSTER; 5.16+).
    Cls,
    Mc,
    Die,
    /// 6.x's name for DIE (renamed in 6.7).
    Pkg,
    /// 6.x `sched_init_numa`'s NUMA identity level (the node).
    Node,
    Numa,
}

impl DomainLevel {
    /// The kernel's `SD_INIT_NAME`.
    pub fn name(self) -> &'static str {
        match self {
            DomainLevel::Smt => "SMT",
            DomainLevel::Cls => "CLS",
            DomainLevel::Mc => "MC",
            DomainLevel::Die => "DIE",
            DomainLevel::Pkg => "PKG",
            DomainLevel::Node => "NODE",
            DomainLevel::Numa => "NUMA",
        }
    }
}

/// A scheduling group (4.4 `struct sched_group` with its `sched_group_capacity`).
#[derive(Clone, Debug)]
pub struct SchedGroup {
    pub span: CpuSet,
    pub group_weight: u32,
    /// sgc->capacity: sum of its CPUs' cpu_capacity (at boot; a balancer's
    /// copy follows `update_group_capacity`)
    pub capacity: u64,
    /// 6.x `sg->flags`: the child domain's flags (get_group), as left by
    /// cpu_attach_domain; 0 in a 4.4 build (4.4 has no sg->flags). For an
    /// SD_NUMA (overlapping) domain every CPU has its own copies of the
    /// groups and only its local one follows the degeneration: this is the
    /// value the other CPUs' copies hold; read `Topology::group_flags`.
    pub flags: u32,
    /// 6.x `sg->cores` (init_sched_groups_capacity): the cores with a CPU in
    /// the span (SMT siblings count once); 0 in a 4.4 build.
    pub cores: u32,
}

/// One domain as 4.4 sd_init builds it (after degenerate levels are removed and PREFER_SIBLING moved down
/// as cpu_attach_domain does). Shared by every CPU of its span (the kernel has per-CPU copies with equal values).
#[derive(Clone, Debug)]
pub struct SchedDomain {
    pub level: DomainLevel,
    pub span: CpuSet,
    pub span_weight: u32,
    pub flags: u32,
    /// In ms (jiffies conversion is the caller's: msecs_to_jiffies).
    pub min_interval: u64,
    pub max_interval: u64,
    /// Initial value (ms) = sd_weight.
    pub balance_interval: u64,
    pub busy_factor: u32,
    pub imbalance_pct: u32,
    pub cache_nice_tries: u32,
    pub busy_idx: usize,
    pub idle_idx: usize,
    pub newidle_idx: usize,
    pub wake_idx: usize,
    pub forkexec_idx: usize,
    pub smt_gain: u64,
    /// The groups, in the order of their first CPU (for NUMA overlap groups: as 4.4 builds them).
    /// 6.x's `sd->groups` of a CPU starts at its local group (build_sched_groups walks
    /// `for_each_cpu_wrap` from the CPU) and goes round this order.
    pub groups: Vec<SchedGroup>,
    /// sd_init's `sd_weight` = `cpumask_weight(tl->mask(cpu))`: the level's mask, isolated CPUs
    /// included in a 6.x build (the 4.4 build uses the span's weight); the intervals derive from it.
    pub sd_weight: u32,
    /// 6.x `sd->imb_numa_nr` (build_sched_domains) as the domain's lowest CPU's copy holds it;
    /// 0 where unset and in a 4.4 build. Copies can differ under isolcpus: `Topology::imb_numa_nr`.
    pub imb_numa_nr: u32,
}

/// Index of a domain in `Topology::domains`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct DomainId(pub u32);

#[derive(Clone, Debug)]
pub struct Topology {
    pub shape: MachineShape,
    pub isolated: CpuSet,
    /// Every distinct domain, once.
    pub domains: Vec<SchedDomain>,
    /// Per CPU: its domains bottom-up (for_each_domain order); EMPTY for an isolated CPU (NULL domain).
    pub cpu_domains: Vec<Vec<DomainId>>,
    /// Per CPU: sd_llc (highest_flag_domain(cpu, SD_SHARE_PKG_RESOURCES)) as an index into cpu_domains[cpu].
    pub sd_llc: Vec<Option<usize>>,
    /// Per CPU: sd_llc_id (first CPU of the sd_llc span, else the CPU itself) and sd_llc_size.
    pub llc_id: Vec<CpuId>,
    pub llc_size: Vec<u32>,
    /// Per CPU: capacity as 4.4 update_cpu_capacity computes it with no RT load: arch_scale_cpu_capacity
    /// (smt_gain / span_weight on an SMT domain, i.e. 1178/2 = 589, else 1024) times scale_rt_capacity (1024) >> 10.
    pub cpu_capacity: Vec<u64>,
    /// Per CPU: `cpu_capacity_orig` (`arch_scale_cpu_capacity`), the boot
    /// value of `cpu_capacity`. A balancer's own copy of the topology keeps
    /// `rq->cpu_capacity` in `cpu_capacity` and `sgc->capacity` in the
    /// groups, lowered by RT and deadline time (`update_group_capacity`).
    pub cpu_capacity_orig: Vec<u64>,
    /// Per CPU, parallel to `cpu_domains`: the index of its local group (sd->groups) in each domain.
    local_groups: Vec<Vec<u32>>,
    /// 6.x: per CPU, the `sd_llc_shared` it points at (`sd_llc->shared`, one per LLC, keyed by
    /// `llc_id`), with `nr_busy_cpus`' initial value (sd_init: the LLC level's `sd_weight`); None
    /// without sd_llc (NULL) and in a 4.4 build.
    pub llc_shared: Vec<Option<LlcSharedInit>>,
    /// 6.12+ `sd_share_id`: the first CPU of the lowest SD_CLUSTER domain, else `llc_id`
    /// (update_top_cache_domain). `llc_id` in 6.6 and 4.4 builds (no SD_CLUSTER).
    pub sd_share_id: Vec<CpuId>,
    /// 6.x `sd_numa`: per CPU, the lowest SD_NUMA domain as an index into `cpu_domains[cpu]`.
    pub sd_numa: Vec<Option<usize>>,
    /// 6.12+ static key `sched_cluster_active`: some CPU has an SD_CLUSTER domain after
    /// degeneration (build_sched_domains).
    pub sched_cluster_active: bool,
    /// 6.x: per CPU, parallel to `cpu_domains`: that CPU's copy's `imb_numa_nr`.
    cpu_imb_numa_nr: Vec<Vec<u32>>,
    /// 6.x: per CPU, parallel to `cpu_domains`: `sd->groups->flags` (its local group's flags) as
    /// its own copy holds them (for an SD_NUMA domain each CPU has its own group copies).
    local_group_flags: Vec<Vec<u32>>,
}

/// What sd_init leaves in one LLC's `struct sched_domain_shared`
/// (`sd->shared = sdd->sds[cpumask_first(span)]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LlcSharedInit {
    /// Whose `sds` it is: the first CPU of the LLC domain's span (= `llc_id`).
    pub id: CpuId,
    /// `atomic_set(&sd->shared->nr_busy_cpus, sd_weight)`.
    pub nr_busy_cpus: u32,
}

/// One topology level as built (before degenerate domains are removed): each
/// CPU of the cpu_map belongs to one class (`tl->mask(cpu) & cpu_map`).
struct BuiltLevel {
    level: DomainLevel,
    /// Per CPU: its class, `u32::MAX` for a CPU outside the cpu_map.
    class_of: Vec<u32>,
    /// Per class: its CPUs in increasing order (empty if all are isolated).
    members: Vec<Vec<CpuId>>,
    /// Per class: the number of groups 4.4 builds for it.
    groups: Vec<u32>,
}

/// Flags and tunables of a fresh domain of `level` over `sd_weight` CPUs (4.4 core.c:sd_init).
fn sd_init(level: DomainLevel, sd_weight: u32) -> SchedDomain {
    let w = u64::from(sd_weight);
    let mut sd = SchedDomain {
        level,
        span: CpuSet::empty(0),
        span_weight: sd_weight,
        // 4.4 core.c:sd_init: SD_LOAD_BALANCE | NEWIDLE | EXEC | FORK | WAKE_AFFINE
        flags: SD_LOAD_BALANCE | SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE,
        min_interval: w,
        max_interval: 2 * w,
        balance_interval: w,
        busy_factor: 32,
        imbalance_pct: 125,
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
    // tl->sd_flags: 4.4 topology.h cpu_smt_flags, cpu_core_flags, cpu_numa_flags (DIE has none)
    sd.flags |= match level {
        DomainLevel::Smt => SD_SHARE_CPUCAPACITY | SD_SHARE_PKG_RESOURCES,
        DomainLevel::Mc => SD_SHARE_PKG_RESOURCES,
        DomainLevel::Die => 0,
        DomainLevel::Numa => SD_NUMA,
        DomainLevel::Cls | DomainLevel::Pkg | DomainLevel::Node => unreachable!("4.4 builds no {level:?} level"),
    };
    // 4.4 core.c:sd_init "Convert topological properties into behaviour"
    if sd.flags & SD_SHARE_CPUCAPACITY != 0 {
        sd.flags |= SD_PREFER_SIBLING;
        sd.imbalance_pct = 110;
        sd.smt_gain = SMT_GAIN;
    } else if sd.flags & SD_SHARE_PKG_RESOURCES != 0 {
        sd.imbalance_pct = 117;
        sd.cache_nice_tries = 1;
        sd.busy_idx = 2;
    } else if sd.flags & SD_NUMA != 0 {
        sd.cache_nice_tries = 2;
        sd.busy_idx = 3;
        sd.idle_idx = 2;
        sd.flags |= SD_SERIALIZE;
        if REMOTE_DISTANCE > RECLAIM_DISTANCE {
            sd.flags &= !(SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE);
        }
        // 4.4 core.c:build_sched_domains: SDTL_OVERLAP levels get SD_OVERLAP
        sd.flags |= SD_OVERLAP;
    } else {
        sd.flags |= SD_PREFER_SIBLING;
        sd.cache_nice_tries = 1;
        sd.busy_idx = 2;
        sd.idle_idx = 1;
    }
    sd
}

/// A domain of one CPU's chain while `cpu_attach_domain` trims it.
#[derive(Clone, Copy)]
struct ChainLink {
    /// Index into the built levels.
    level: usize,
    class: u32,
    flags: u32,
    weight: u32,
    groups: u32,
}

/// 4.4 core.c:sd_degenerate
fn sd_degenerate(d: &ChainLink) -> bool {
    if d.weight == 1 {
        return true;
    }
    // "Following flags need at least 2 groups"
    if d.flags & SD_FLAGS_NEED_GROUPS != 0 && d.groups > 1 {
        return false;
    }
    // "Following flags don't use groups"
    if d.flags & SD_WAKE_AFFINE != 0 {
        return false;
    }
    true
}

/// 4.4 core.c:sd_parent_degenerate. Spans are nested, so equal weights mean equal spans.
fn sd_parent_degenerate(child: &ChainLink, parent: &ChainLink, nr_node_ids: u16) -> bool {
    if sd_degenerate(parent) {
        return true;
    }
    if child.weight != parent.weight {
        return false;
    }
    let mut pflags = parent.flags;
    // "Flags needing groups don't count if only 1 group in parent"
    if parent.groups == 1 {
        pflags &= !(SD_FLAGS_NEED_GROUPS | SD_PREFER_SIBLING);
        if nr_node_ids == 1 {
            pflags &= !SD_SERIALIZE;
        }
    }
    !child.flags & pflags == 0
}

/// `"0-7,16-23"`: a CPU set in the taskset/cpulist syntax.
pub fn cpu_list(set: &CpuSet) -> String {
    cpus_text(set.iter().map(|c| c.0))
}

/// `"0-7,16-23"` from CPU numbers in ascending order (each once).
pub fn cpus_text(cpus: impl IntoIterator<Item = u16>) -> String {
    let mut out = String::new();
    let mut run: Option<(u16, u16)> = None;
    let flush = |out: &mut String, (a, b): (u16, u16)| {
        if !out.is_empty() {
            out.push(',');
        }
        if a == b {
            out.push_str(&a.to_string());
        } else {
            out.push_str(&format!("{a}-{b}"));
        }
    };
    for c in cpus {
        run = match run {
            Some((a, b)) if c == b + 1 => Some((a, c)),
            Some(r) => {
                flush(&mut out, r);
                Some((c, c))
            }
            None => Some((c, c)),
        };
    }
    if let Some(r) = run {
        flush(&mut out, r);
    }
    out
}

impl Topology {
    /// Builds the domains 4.4 attaches at boot for `shape` with `isolated`
    /// (isolcpus) CPUs left out. Panics on a shape `MachineShape::check` refuses.
    /// `clusters_per_socket` is not read: x86 4.4 has no CLS level (validation
    /// refuses clusters under the 4.4 model).
    pub fn build(shape: MachineShape, isolated: &CpuSet) -> Topology {
        if let Err((field, m)) = shape.check(u16::MAX) {
            panic!("Topology::build: bad machine shape ({field}: {m}): {shape:?}");
        }
        let mut topo = Topology::empty(shape, isolated);
        let n = shape.cpus();
        // 4.4 core.c:init_sched_domains: cpu_map = cpu_active_mask & ~cpu_isolated_map
        let in_map: Vec<bool> = (0..n).map(|c| !topo.isolated.contains(CpuId(c))).collect();
        let map_weight = in_map.iter().filter(|&&b| b).count() as u32;
        if map_weight == 0 {
            return topo;
        }
        let levels = topo.build_levels(&in_map, map_weight);
        let group_cpus = topo.attach_domains(&levels, &in_map);
        topo.update_cpu_capacity_and_llc();
        topo.update_group_capacity(&group_cpus);
        topo.sd_share_id = topo.llc_id.clone();
        topo
    }

    /// A machine of `shape` with `isolated` CPUs and no domain yet: every CPU
    /// its own LLC, at full capacity (what a CPU without domains keeps).
    fn empty(shape: MachineShape, isolated: &CpuSet) -> Topology {
        let n = shape.cpus();
        let ncpu = usize::from(n);
        Topology {
            shape,
            isolated: {
                let mut s = CpuSet::empty(n);
                for c in isolated.iter().filter(|c| c.0 < n) {
                    s.insert(c);
                }
                s
            },
            domains: Vec::new(),
            cpu_domains: vec![Vec::new(); ncpu],
            sd_llc: vec![None; ncpu],
            llc_id: (0..n).map(CpuId).collect(),
            llc_size: vec![1; ncpu],
            cpu_capacity: vec![SCHED_CAPACITY_SCALE; ncpu],
            cpu_capacity_orig: vec![SCHED_CAPACITY_SCALE; ncpu],
            local_groups: vec![Vec::new(); ncpu],
            llc_shared: vec![None; ncpu],
            sd_share_id: (0..n).map(CpuId).collect(),
            sd_numa: vec![None; ncpu],
            sched_cluster_active: false,
            cpu_imb_numa_nr: vec![Vec::new(); ncpu],
            local_group_flags: vec![Vec::new(); ncpu],
        }
    }

    /// The levels 4.4 builds for the CPUs in the cpu_map (`in_map`), bottom
    /// up, each with its classes (spans) and their group counts.
    fn build_levels(&self, in_map: &[bool], map_weight: u32) -> Vec<BuiltLevel> {
        // The levels 4.4 builds: default_topology (SMT, MC, DIE) and, with more than
        // one node, sched_init_numa's single level (one remote distance).
        let mut candidates = vec![DomainLevel::Smt, DomainLevel::Mc, DomainLevel::Die];
        if self.shape.numa_nodes > 1 {
            candidates.push(DomainLevel::Numa);
        }
        self.build_levels_of(&candidates, in_map, map_weight)
    }

    /// `(classes, class of cpu)` of a level: which `tl->mask(cpu)` a CPU has
    /// (SMT the core, CLS the cluster, MC the socket, DIE/PKG/NODE the node,
    /// NUMA every node within the one remote distance: all).
    fn level_class(&self, level: DomainLevel, cpu: CpuId) -> (usize, u32) {
        let shape = self.shape;
        match level {
            DomainLevel::Smt => (shape.total_cores() as usize, self.core_of(cpu)),
            DomainLevel::Cls => {
                let clusters = shape.total_cores() / u32::from(shape.cores_per_cluster());
                (clusters as usize, shape.cluster_of(cpu))
            }
            DomainLevel::Mc => (usize::from(shape.sockets), u32::from(self.socket_of(cpu))),
            DomainLevel::Die | DomainLevel::Pkg | DomainLevel::Node => {
                (usize::from(shape.numa_nodes), u32::from(self.node_of(cpu)))
            }
            DomainLevel::Numa => (1, 0),
        }
    }

    /// The `candidates` levels as built for the CPUs in the cpu_map
    /// (`in_map`), bottom up, up to the first that spans the cpu_map.
    fn build_levels_of(&self, candidates: &[DomainLevel], in_map: &[bool], map_weight: u32) -> Vec<BuiltLevel> {
        let n = self.shape.cpus();
        let ncpu = usize::from(n);
        let mut levels: Vec<BuiltLevel> = Vec::new();
        for &level in candidates {
            let classes = self.level_class(level, CpuId(0)).0;
            let mut class_of = vec![u32::MAX; ncpu];
            let mut members: Vec<Vec<CpuId>> = vec![Vec::new(); classes];
            for c in 0..n {
                if !in_map[usize::from(c)] {
                    continue;
                }
                let cpu = CpuId(c);
                let k = self.level_class(level, cpu).1;
                class_of[usize::from(c)] = k;
                members[k as usize].push(cpu);
            }
            // 4.4 core.c:build_sched_groups / build_overlap_sched_groups: one group per
            // child-domain span (the child as built); a bottom level has one group per CPU.
            let groups = members
                .iter()
                .map(|m| match levels.last() {
                    None => m.len() as u32,
                    Some(child) => {
                        let mut seen: Vec<u32> = m.iter().map(|c| child.class_of[c.index()]).collect();
                        seen.sort_unstable();
                        seen.dedup();
                        seen.len() as u32
                    }
                })
                .collect();
            let spans_map = members.iter().any(|m| m.len() as u32 == map_weight);
            levels.push(BuiltLevel { level, class_of, members, groups });
            // 4.4 core.c:build_sched_domains: stop once a span equals the cpu_map
            if spans_map {
                break;
            }
        }
        levels
    }

    /// Attaches each CPU's chain of domains (4.4 core.c:build_sched_domains
    /// and cpu_attach_domain), creating each domain once; returns, per
    /// domain, its groups' CPUs (for capacities and local groups).
    fn attach_domains(&mut self, levels: &[BuiltLevel], in_map: &[bool]) -> Vec<Vec<Vec<CpuId>>> {
        let shape = self.shape;
        let n = shape.cpus();
        // Trim each chain as 4.4 cpu_attach_domain does. CPUs of one bottom class
        // have the same chain, so each is trimmed once.
        let mut ids: BTreeMap<(usize, u32), DomainId> = BTreeMap::new();
        let mut chain_of_class: BTreeMap<u32, Vec<DomainId>> = BTreeMap::new();
        // Per domain: its groups' CPUs (for capacities and local groups below).
        let mut group_cpus: Vec<Vec<Vec<CpuId>>> = Vec::new();
        for c in 0..n {
            if !in_map[usize::from(c)] {
                continue;
            }
            let bottom = levels[0].class_of[usize::from(c)];
            if let Some(chain) = chain_of_class.get(&bottom) {
                self.cpu_domains[usize::from(c)] = chain.clone();
                continue;
            }
            let mut chain: Vec<ChainLink> = levels
                .iter()
                .enumerate()
                .map(|(i, l)| {
                    let class = l.class_of[usize::from(c)];
                    let weight = l.members[class as usize].len() as u32;
                    ChainLink {
                        level: i,
                        class,
                        flags: sd_init(l.level, weight).flags,
                        weight,
                        groups: l.groups[class as usize],
                    }
                })
                .collect();
            // 4.4 core.c:cpu_attach_domain "Remove the sched domains which do not contribute"
            let mut t = 0;
            while t + 1 < chain.len() {
                if sd_parent_degenerate(&chain[t], &chain[t + 1], shape.numa_nodes) {
                    // "Transfer SD_PREFER_SIBLING down in case of a degenerate parent"
                    if chain[t + 1].flags & SD_PREFER_SIBLING != 0 {
                        chain[t].flags |= SD_PREFER_SIBLING;
                    }
                    chain.remove(t + 1);
                } else {
                    t += 1;
                }
            }
            // 4.4 core.c:cpu_attach_domain: the base domain itself, once
            if chain.first().is_some_and(sd_degenerate) {
                chain.remove(0);
            }
            let mut out = Vec::with_capacity(chain.len());
            for link in &chain {
                let key = (link.level, link.class);
                let id = match ids.get(&key) {
                    Some(&id) => {
                        debug_assert_eq!(self.domains[id.0 as usize].flags, link.flags, "domain copies differ");
                        id
                    }
                    None => {
                        let id = DomainId(self.domains.len() as u32);
                        let l = &levels[link.level];
                        let mut sd = sd_init(l.level, link.weight);
                        sd.flags = link.flags;
                        sd.span = CpuSet::empty(n);
                        for &m in &l.members[link.class as usize] {
                            sd.span.insert(m);
                        }
                        // Groups in the order of their first CPU; capacities filled below.
                        let members = group_members(levels, link.level, link.class);
                        sd.groups = members
                            .iter()
                            .map(|m| {
                                let mut span = CpuSet::empty(n);
                                for &c in m {
                                    span.insert(c);
                                }
                                SchedGroup { span, group_weight: m.len() as u32, capacity: 0, flags: 0, cores: 0 }
                            })
                            .collect();
                        group_cpus.push(members);
                        self.domains.push(sd);
                        ids.insert(key, id);
                        id
                    }
                };
                out.push(id);
            }
            chain_of_class.insert(bottom, out.clone());
            self.cpu_domains[usize::from(c)] = out;
        }
        group_cpus
    }

    /// Each CPU's capacity and last-level-cache domain.
    fn update_cpu_capacity_and_llc(&mut self) {
        let ncpu = usize::from(self.shape.cpus());
        for c in 0..ncpu {
            let chain = &self.cpu_domains[c];
            // 4.4 sched.h:arch_scale_cpu_capacity on the base domain (fair.c:update_cpu_capacity),
            // times scale_rt_capacity = SCHED_CAPACITY_SCALE with no RT load, >> SCHED_CAPACITY_SHIFT
            if let Some(&base) = chain.first() {
                let sd = &self.domains[base.0 as usize];
                let arch = if sd.flags & SD_SHARE_CPUCAPACITY != 0 && sd.span_weight > 1 {
                    sd.smt_gain / u64::from(sd.span_weight)
                } else {
                    SCHED_CAPACITY_SCALE
                };
                self.cpu_capacity[c] = ((arch * SCHED_CAPACITY_SCALE) >> 10).max(1);
                self.cpu_capacity_orig[c] = arch;
            }
            // 4.4 core.c:update_top_cache_domain: sd_llc = highest_flag_domain(cpu, SD_SHARE_PKG_RESOURCES)
            let mut llc = None;
            for (i, id) in chain.iter().enumerate() {
                if self.domains[id.0 as usize].flags & SD_SHARE_PKG_RESOURCES == 0 {
                    break;
                }
                llc = Some(i);
            }
            self.sd_llc[c] = llc;
            if let Some(i) = llc {
                let sd = &self.domains[chain[i].0 as usize];
                self.llc_id[c] = sd.span.iter().next().unwrap_or(CpuId(c as u16));
                self.llc_size[c] = sd.span_weight;
            }
        }
    }

    /// Each group's capacity, and each CPU's local group in each of its domains.
    fn update_group_capacity(&mut self, group_cpus: &[Vec<Vec<CpuId>>]) {
        // sgc->capacity: the sum of the group's CPUs' capacity (fair.c:update_group_capacity at steady state)
        for (d, groups) in group_cpus.iter().enumerate() {
            let id = DomainId(d as u32);
            for (gi, m) in groups.iter().enumerate() {
                self.domains[d].groups[gi].capacity = m.iter().map(|c| self.cpu_capacity[c.index()]).sum();
                // sd->groups of each CPU: the group containing it
                for c in m {
                    let pos = self.cpu_domains[c.index()].iter().position(|&x| x == id);
                    let pos = pos.expect("a group's CPU has the domain");
                    let lg = &mut self.local_groups[c.index()];
                    if lg.len() < self.cpu_domains[c.index()].len() {
                        lg.resize(self.cpu_domains[c.index()].len(), u32::MAX);
                    }
                    lg[pos] = gi as u32;
                }
            }
        }
    }

    pub fn cpus(&self) -> u16 {
        self.shape.cpus()
    }

    pub fn domain(&self, id: DomainId) -> &SchedDomain {
        &self.domains[id.0 as usize]
    }

    /// The group of `d` that contains `cpu` (sd->groups for that CPU), as an index into d.groups.
    /// Panics if `d` is not one of `cpu`'s domains.
    pub fn local_group(&self, d: DomainId, cpu: CpuId) -> usize {
        self.local_groups[cpu.index()][self.level_of(cpu, d)] as usize
    }

    /// The level (index into `cpu_domains[cpu]`) of `cpu`'s domain `d`.
    /// Panics if `d` is not one of `cpu`'s domains.
    pub fn level_of(&self, cpu: CpuId, d: DomainId) -> usize {
        let chain = &self.cpu_domains[cpu.index()];
        chain.iter().position(|&x| x == d).unwrap_or_else(|| panic!("domain {d:?} is not one of CPU {cpu}'s"))
    }

    /// `cpu_smt_mask`: the hardware threads of `cpu`'s core, itself included
    /// (isolated ones too).
    pub fn smt_siblings(&self, cpu: CpuId) -> CpuSet {
        let n = self.cpus();
        let cores = self.shape.total_cores();
        let mut s = CpuSet::empty(n);
        for t in 0..u32::from(self.shape.threads_per_core) {
            s.insert(CpuId((t * cores + self.core_of(cpu)) as u16));
        }
        s
    }

    /// Global core index: `socket * cores_per_socket + core`.
    pub fn core_of(&self, cpu: CpuId) -> u32 {
        self.shape.core_of(cpu)
    }

    pub fn socket_of(&self, cpu: CpuId) -> u16 {
        self.shape.socket_of(cpu)
    }

    /// `cpu_to_node`: sockets are spread evenly over the nodes.
    pub fn node_of(&self, cpu: CpuId) -> u16 {
        self.socket_of(cpu) / (self.shape.sockets / self.shape.numa_nodes)
    }

    /// One line per level for reports, e.g. "SMT [0,16] MC [0-7,16-23] NUMA [0-31]" for CPU 0.
    pub fn describe_cpu(&self, cpu: CpuId) -> String {
        let chain = &self.cpu_domains[cpu.index()];
        if chain.is_empty() {
            return if self.isolated.contains(cpu) {
                "isolated (isolcpus): no sched domain".to_string()
            } else {
                "no sched domain".to_string()
            };
        }
        chain
            .iter()
            .map(|&id| {
                let sd = self.domain(id);
                format!("{} [{}]", sd.level.name(), cpu_list(&sd.span))
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Balance span id per CPU for metrics: CPUs in the same root domain share an id; each isolated CPU has its own.
    /// Ids are numbered from 0 in the order of each span's lowest CPU.
    pub fn balance_span_ids(&self) -> Vec<u16> {
        let mut next = 0u16;
        let mut root: Option<u16> = None;
        (0..self.cpus())
            .map(|c| {
                if self.isolated.contains(CpuId(c)) {
                    next += 1;
                    next - 1
                } else {
                    *root.get_or_insert_with(|| {
                        next += 1;
                        next - 1
                    })
                }
            })
            .collect()
    }
}

/// The groups' CPUs of class `class` of built level `li`, in the order of their
/// first CPU: the child level's spans (4.4 core.c:build_sched_groups, and
/// build_overlap_sched_groups with `sibling->child`), or single CPUs at the bottom.
fn group_members(levels: &[BuiltLevel], li: usize, class: u32) -> Vec<Vec<CpuId>> {
    let members = &levels[li].members[class as usize];
    if li == 0 {
        return members.iter().map(|&c| vec![c]).collect();
    }
    let child = &levels[li - 1];
    let mut out: Vec<Vec<CpuId>> = Vec::new();
    // child class -> index in `out`, assigned at its first CPU
    let mut slot: BTreeMap<u32, usize> = BTreeMap::new();
    for &c in members {
        let k = child.class_of[c.index()];
        let i = *slot.entry(k).or_insert_with(|| {
            out.push(Vec::new());
            out.len() - 1
        });
        out[i].push(c);
    }
    out
}

#[cfg(test)]
#[path = "topology_tests.rs"]
mod tests;
