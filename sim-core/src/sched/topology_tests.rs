//! Sched-domain construction checked against what 4.4 attaches at boot.

use super::*;

fn shape(sockets: u16, cores_per_socket: u16, threads_per_core: u16, numa_nodes: u16) -> MachineShape {
    MachineShape { sockets, cores_per_socket, threads_per_core, numa_nodes, clusters_per_socket: None }
}

fn none(n: u16) -> CpuSet {
    CpuSet::empty(n)
}

/// CPU `cpu`'s domains as (level, span, flags).
fn chain(t: &Topology, cpu: u16) -> Vec<(&'static str, String, u32)> {
    t.cpu_domains[usize::from(cpu)]
        .iter()
        .map(|&id| {
            let d = t.domain(id);
            (d.level.name(), cpu_list(&d.span), d.flags)
        })
        .collect()
}

fn groups(t: &Topology, cpu: u16, level: usize) -> Vec<(String, u32, u64)> {
    let d = t.domain(t.cpu_domains[usize::from(cpu)][level]);
    d.groups.iter().map(|g| (cpu_list(&g.span), g.group_weight, g.capacity)).collect()
}

const BASE: u32 = SD_LOAD_BALANCE | SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE;

#[test]
fn numbering_threads_after_cores() {
    // Module doc: cpu = thread * total_cores + socket * cores_per_socket + core.
    let t = Topology::build(shape(2, 8, 2, 2), &none(32));
    assert_eq!(cpu_list(&t.smt_siblings(CpuId(0))), "0,16");
    assert_eq!(cpu_list(&t.smt_siblings(CpuId(25))), "9,25");
    assert_eq!(t.core_of(CpuId(25)), 9);
    assert_eq!(t.socket_of(CpuId(25)), 1);
    assert_eq!(t.node_of(CpuId(25)), 1);
    assert_eq!(t.node_of(CpuId(7)), 0);
    let t = Topology::build(shape(4, 2, 1, 2), &none(8));
    // node = socket / (sockets / numa_nodes)
    assert_eq!((0..8).map(|c| t.node_of(CpuId(c))).collect::<Vec<_>>(), vec![0, 0, 0, 0, 1, 1, 1, 1]);
}

#[test]
fn two_sockets_two_nodes_smt() {
    let t = Topology::build(shape(2, 8, 2, 2), &none(32));
    // DIE = cpu_cpu_mask = the node = the socket here: sd_parent_degenerate(MC, DIE) holds (equal spans,
    // DIE has one group so only WAKE_AFFINE counts, which MC has), and cpu_attach_domain moves DIE's
    // SD_PREFER_SIBLING down to MC. NUMA (one level, distance 21) spans all and is kept (2 groups).
    assert_eq!(
        chain(&t, 0),
        vec![
            ("SMT", "0,16".into(), BASE | SD_SHARE_CPUCAPACITY | SD_SHARE_PKG_RESOURCES | SD_PREFER_SIBLING),
            ("MC", "0-7,16-23".into(), BASE | SD_SHARE_PKG_RESOURCES | SD_PREFER_SIBLING),
            // sd_init NUMA branch: SD_SERIALIZE; 21 <= RECLAIM_DISTANCE keeps WAKE_AFFINE/FORK/EXEC;
            // SDTL_OVERLAP gives SD_OVERLAP
            ("NUMA", "0-31".into(), BASE | SD_NUMA | SD_SERIALIZE | SD_OVERLAP),
        ]
    );
    assert_eq!(t.describe_cpu(CpuId(0)), "SMT [0,16] MC [0-7,16-23] NUMA [0-31]");
    assert_eq!(t.describe_cpu(CpuId(24)), "SMT [8,24] MC [8-15,24-31] NUMA [0-31]");
    // Shared: 16 SMT + 2 MC + 1 NUMA
    assert_eq!(t.domains.len(), 19);
    let d: Vec<&SchedDomain> = t.cpu_domains[0].iter().map(|&id| t.domain(id)).collect();
    // sd_init: imbalance_pct 110 (SMT) / 117 (PKG_RESOURCES) / 125 (default)
    assert_eq!(d.iter().map(|d| d.imbalance_pct).collect::<Vec<_>>(), vec![110, 117, 125]);
    // sd_init: cache_nice_tries 0 / 1 / 2, busy_idx 0 / 2 / 3, idle_idx 0 / 0 / 2
    assert_eq!(d.iter().map(|d| d.cache_nice_tries).collect::<Vec<_>>(), vec![0, 1, 2]);
    assert_eq!(d.iter().map(|d| d.busy_idx).collect::<Vec<_>>(), vec![0, 2, 3]);
    assert_eq!(d.iter().map(|d| d.idle_idx).collect::<Vec<_>>(), vec![0, 0, 2]);
    assert!(d.iter().all(|d| d.newidle_idx == 0 && d.wake_idx == 0 && d.forkexec_idx == 0));
    // sd_init: smt_gain 1178 only on SMT
    assert_eq!(d.iter().map(|d| d.smt_gain).collect::<Vec<_>>(), vec![1178, 0, 0]);
    // update_cpu_capacity: arch_scale_cpu_capacity = smt_gain / span_weight = 589 on an SMT CPU
    assert!(t.cpu_capacity.iter().all(|&c| c == 589));
    // build_sched_groups: SMT groups are single CPUs; MC groups the SMT spans; capacity the sum
    assert_eq!(groups(&t, 0, 0), vec![("0".into(), 1, 589), ("16".into(), 1, 589)]);
    let mc = groups(&t, 0, 1);
    assert_eq!(mc.len(), 8);
    assert_eq!(mc[0], ("0,16".into(), 2, 1178));
    assert_eq!(mc[7], ("7,23".into(), 2, 1178));
    // build_overlap_sched_groups: one group per sibling->child span (DIE as built = the node)
    assert_eq!(groups(&t, 0, 2), vec![("0-7,16-23".into(), 16, 16 * 589), ("8-15,24-31".into(), 16, 16 * 589)]);
    // local group (sd->groups) of CPU 16: SMT group 1, MC group 0, NUMA group 0; of CPU 9: NUMA group 1
    let ids = &t.cpu_domains[16];
    assert_eq!(ids.iter().map(|&id| t.local_group(id, CpuId(16))).collect::<Vec<_>>(), vec![1, 0, 0]);
    assert_eq!(t.local_group(t.cpu_domains[9][2], CpuId(9)), 1);
    // update_top_cache_domain: sd_llc = highest domain with SD_SHARE_PKG_RESOURCES = MC
    assert_eq!(t.sd_llc[0], Some(1));
    assert_eq!((t.llc_id[0], t.llc_size[0]), (CpuId(0), 16));
    assert_eq!((t.llc_id[25], t.llc_size[25]), (CpuId(8), 16));
}

#[test]
fn two_sockets_one_node_keeps_die() {
    let t = Topology::build(shape(2, 8, 2, 1), &none(32));
    // DIE = the single node = every CPU: it has 2 groups (the MC spans), so it is not degenerate;
    // build_sched_domains stops there (span == cpu_map) and sched_init_numa adds no level (one node).
    assert_eq!(
        chain(&t, 0),
        vec![
            ("SMT", "0,16".into(), BASE | SD_SHARE_CPUCAPACITY | SD_SHARE_PKG_RESOURCES | SD_PREFER_SIBLING),
            ("MC", "0-7,16-23".into(), BASE | SD_SHARE_PKG_RESOURCES),
            // sd_init default branch: PREFER_SIBLING, cache_nice_tries 1, busy_idx 2, idle_idx 1
            ("DIE", "0-31".into(), BASE | SD_PREFER_SIBLING),
        ]
    );
    let die = t.domain(t.cpu_domains[0][2]);
    assert_eq!((die.imbalance_pct, die.cache_nice_tries, die.busy_idx, die.idle_idx), (125, 1, 2, 1));
    assert_eq!(groups(&t, 5, 2), vec![("0-7,16-23".into(), 16, 16 * 589), ("8-15,24-31".into(), 16, 16 * 589)]);
}

#[test]
fn flat_four_cpus_is_one_mc_level() {
    let t = Topology::build(MachineShape::flat(4), &none(4));
    // SMT spans one CPU (sd_degenerate: weight 1) and is dropped by cpu_attach_domain; MC already spans
    // the cpu_map, so build_sched_domains never builds DIE (it would be degenerate: 1 group, same span).
    assert_eq!(chain(&t, 2), vec![("MC", "0-3".into(), BASE | SD_SHARE_PKG_RESOURCES)]);
    assert_eq!(t.domains.len(), 1);
    // build_sched_groups with the (removed) SMT child: 4 groups of 1 CPU, capacity 1024 each
    assert_eq!(groups(&t, 0, 0), (0..4).map(|c| (c.to_string(), 1, 1024)).collect::<Vec<_>>());
    assert_eq!(t.local_group(t.cpu_domains[3][0], CpuId(3)), 3);
    // arch_scale_cpu_capacity: base domain is not SMT -> SCHED_CAPACITY_SCALE
    assert_eq!(t.cpu_capacity, vec![1024; 4]);
    assert_eq!((t.sd_llc[3], t.llc_id[3], t.llc_size[3]), (Some(0), CpuId(0), 4));
    let d = t.domain(t.cpu_domains[0][0]);
    // sd_init: min_interval = sd_weight, max_interval = 2*sd_weight, busy_factor 32, balance_interval = sd_weight
    assert_eq!((d.min_interval, d.max_interval, d.busy_factor, d.balance_interval), (4, 8, 32, 4));
}

#[test]
fn one_cpu_has_no_domain() {
    let t = Topology::build(MachineShape::flat(1), &none(1));
    // The SMT span equals the cpu_map (stop), and sd_degenerate (weight 1) removes it: rq->sd = NULL.
    assert!(t.cpu_domains[0].is_empty());
    assert!(t.domains.is_empty());
    // update_top_cache_domain without sd_llc: id = the CPU, size 1
    assert_eq!((t.sd_llc[0], t.llc_id[0], t.llc_size[0]), (None, CpuId(0), 1));
    assert_eq!(t.cpu_capacity, vec![1024]);
    assert_eq!(t.describe_cpu(CpuId(0)), "no sched domain");
}

#[test]
fn single_core_sockets_keep_only_die() {
    let t = Topology::build(shape(2, 1, 1, 1), &none(2));
    // MC spans one CPU: sd_parent_degenerate(SMT, MC) removes it (sd_degenerate(parent)); DIE has
    // 2 groups (the MC spans as built) and stays; the base SMT is degenerate. No domain shares the
    // package, so sd_llc is NULL and llc_id is the CPU itself.
    assert_eq!(chain(&t, 1), vec![("DIE", "0-1".into(), BASE | SD_PREFER_SIBLING)]);
    assert_eq!(groups(&t, 1, 0), vec![("0".into(), 1, 1024), ("1".into(), 1, 1024)]);
    assert_eq!((t.sd_llc[1], t.llc_id[1], t.llc_size[1]), (None, CpuId(1), 1));
}

#[test]
fn balance_intervals_follow_sd_weight() {
    let t = Topology::build(shape(2, 8, 2, 2), &none(32));
    // sd_init: min_interval = sd_weight, max_interval = 2*sd_weight, balance_interval = sd_weight, busy_factor 32
    let got: Vec<(u64, u64, u64, u32)> = t.cpu_domains[0]
        .iter()
        .map(|&id| {
            let d = t.domain(id);
            (d.min_interval, d.max_interval, d.balance_interval, d.busy_factor)
        })
        .collect();
    assert_eq!(got, vec![(2, 4, 2, 32), (16, 32, 16, 32), (32, 64, 32, 32)]);
}

#[test]
fn isolcpus_leave_the_cpu_map() {
    let iso = CpuSet::parse("16", 32).unwrap();
    let t = Topology::build(shape(2, 8, 2, 1), &iso);
    // Isolated CPU: no domain (NULL sd), in no span.
    assert!(t.cpu_domains[16].is_empty());
    assert_eq!(t.describe_cpu(CpuId(16)), "isolated (isolcpus): no sched domain");
    assert!(t.domains.iter().all(|d| !d.span.contains(CpuId(16))));
    // CPU 0's SMT span is [0] alone: sd_degenerate (weight 1) drops it; MC becomes its base domain.
    assert_eq!(
        chain(&t, 0),
        vec![
            ("MC", "0-7,17-23".into(), BASE | SD_SHARE_PKG_RESOURCES),
            ("DIE", "0-15,17-31".into(), BASE | SD_PREFER_SIBLING)
        ]
    );
    // Its capacity is then SCHED_CAPACITY_SCALE (base domain not SMT); its MC group is {0} alone.
    assert_eq!(t.cpu_capacity[0], 1024);
    assert_eq!(t.cpu_capacity[1], 589);
    assert_eq!(groups(&t, 0, 0)[0], ("0".into(), 1, 1024));
    assert_eq!(groups(&t, 0, 0)[1], ("1,17".into(), 2, 1178));
    // sd_llc of CPU 0 is its MC (index 0 now); sd_llc_size counts only the non-isolated CPUs
    assert_eq!((t.sd_llc[0], t.llc_id[0], t.llc_size[0]), (Some(0), CpuId(0), 15));
    assert_eq!((t.sd_llc[1], t.llc_id[1], t.llc_size[1]), (Some(1), CpuId(0), 15));
    assert_eq!((t.llc_id[24], t.llc_size[24]), (CpuId(8), 16));
    // The isolated CPU keeps its own llc id, size 1 (no sd_llc).
    assert_eq!((t.sd_llc[16], t.llc_id[16], t.llc_size[16]), (None, CpuId(16), 1));
    let ids = t.balance_span_ids();
    assert_eq!(ids[0], ids[31]);
    assert_ne!(ids[16], ids[0]);
}

#[test]
fn isolating_a_socket_shrinks_the_levels() {
    let iso = CpuSet::parse("8-15,24-31", 32).unwrap();
    let t = Topology::build(shape(2, 8, 2, 2), &iso);
    // cpu_map = socket 0: MC spans it, so build_sched_domains stops at MC (no DIE, no NUMA).
    assert_eq!(
        chain(&t, 3).iter().map(|(l, s, _)| format!("{l} [{s}]")).collect::<Vec<_>>(),
        vec!["SMT [3,19]", "MC [0-7,16-23]"]
    );
    assert_eq!(t.llc_size[3], 16);
    // balance_span_ids: one root domain, and each isolated CPU on its own
    let ids = t.balance_span_ids();
    assert_eq!(ids[0], 0);
    assert_eq!(ids[23], 0);
    assert_eq!(ids[8], 1);
    assert_eq!(ids[9], 2);
    assert_eq!(ids[31], 16);
}

#[test]
fn four_sockets_two_nodes() {
    let t = Topology::build(shape(4, 4, 1, 2), &none(16));
    // SMT degenerate (1 thread); MC = socket (4 groups); DIE = node, 2 sockets (2 groups); NUMA all (2 groups).
    assert_eq!(t.describe_cpu(CpuId(5)), "MC [4-7] DIE [0-7] NUMA [0-15]");
    assert_eq!(groups(&t, 5, 2), vec![("0-7".into(), 8, 8 * 1024), ("8-15".into(), 8, 8 * 1024)]);
    assert_eq!(t.local_group(t.cpu_domains[5][1], CpuId(5)), 1);
}

#[test]
fn large_machines_share_domains() {
    // 256 CPUs flat: one MC domain with 256 single-CPU groups, not per-CPU copies.
    let t = Topology::build(MachineShape::flat(256), &none(256));
    assert_eq!(t.domains.len(), 1);
    assert_eq!(t.domains[0].groups.len(), 256);
    assert!(t.cpu_domains.iter().all(|c| c == &vec![DomainId(0)]));
    // 4096 CPUs (the limit) build.
    let t = Topology::build(MachineShape::flat(4096), &none(4096));
    assert_eq!(t.domains[0].groups.len(), 4096);
    assert_eq!(t.local_group(DomainId(0), CpuId(4095)), 4095);
    let t = Topology::build(shape(8, 256, 2, 4), &none(4096));
    // 2048 SMT + 8 MC + 4 DIE + 1 NUMA
    assert_eq!(t.domains.len(), 2048 + 8 + 4 + 1);
    assert_eq!(t.describe_cpu(CpuId(2048)), "SMT [0,2048] MC [0-255,2048-2303] DIE [0-511,2048-2559] NUMA [0-4095]");
}

#[test]
fn shape_check_names_the_field() {
    assert_eq!(shape(2, 8, 2, 3).check(4096).unwrap_err().0, "numa_nodes");
    assert_eq!(shape(0, 8, 2, 1).check(4096).unwrap_err().0, "sockets");
    assert_eq!(shape(1, 8, 9, 1).check(4096).unwrap_err().0, "threads_per_core");
    assert!(shape(64, 64, 2, 1).check(4096).unwrap_err().1.contains("8192 CPUs"));
    assert!(shape(2, 8, 2, 2).check(4096).is_ok());
}
