//! Sched-domain construction checked against what 6.6, 6.12 and 6.18
//! attach at boot, each case worked out by hand from topology.c (the
//! comments give the deciding rule).

use super::*;

const R66: Topology6xRules = Topology6xRules { cluster_flag: false, package_level: DomainLevel::Die, numa_overlap: true };
const R612: Topology6xRules = Topology6xRules { cluster_flag: true, package_level: DomainLevel::Pkg, numa_overlap: true };
const R618: Topology6xRules = Topology6xRules { numa_overlap: false, ..R612 };

/// sd_init's flags on every level (SD_NUMA levels drop PREFER_SIBLING).
const BASE: u32 = SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE | SD_PREFER_SIBLING;
const SMT: u32 = BASE | SD_SHARE_CPUCAPACITY | SD_SHARE_LLC;
const LLC: u32 = BASE | SD_SHARE_LLC;
/// sd_init's NUMA branch: no PREFER_SIBLING, SD_SERIALIZE (distance 21 keeps EXEC, FORK, WAKE_AFFINE).
const NUMA: u32 = SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE | SD_NUMA | SD_SERIALIZE;

fn shape(sockets: u16, cores: u16, threads: u16, nodes: u16, clusters: Option<u16>) -> MachineShape {
    MachineShape {
        sockets,
        cores_per_socket: cores,
        threads_per_core: threads,
        numa_nodes: nodes,
        clusters_per_socket: clusters,
    }
}

fn build(s: MachineShape, rules: Topology6xRules) -> Topology {
    Topology::build_6x(s, &CpuSet::empty(s.cpus()), rules)
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

/// Per domain of CPU `cpu`: (imbalance_pct, cache_nice_tries, busy_factor, min, max, balance_interval).
fn tunables(t: &Topology, cpu: u16) -> Vec<(u32, u32, u32, u64, u64, u64)> {
    t.cpu_domains[usize::from(cpu)]
        .iter()
        .map(|&id| {
            let d = t.domain(id);
            (d.imbalance_pct, d.cache_nice_tries, d.busy_factor, d.min_interval, d.max_interval, d.balance_interval)
        })
        .collect()
}

/// Groups of CPU `cpu`'s domain `level` as seen from `cpu`: (span, weight, capacity, flags, cores).
fn groups(t: &Topology, cpu: u16, level: usize) -> Vec<(String, u32, u64, u32, u32)> {
    let id = t.cpu_domains[usize::from(cpu)][level];
    let d = t.domain(id);
    (0..d.groups.len())
        .map(|g| {
            let sg = &d.groups[g];
            (cpu_list(&sg.span), sg.group_weight, sg.capacity, t.group_flags(id, CpuId(cpu), g), sg.cores)
        })
        .collect()
}

#[test]
fn two_sockets_two_nodes_smt_under_66_and_612() {
    for (rules, overlap) in [(R66, SD_OVERLAP), (R612, SD_OVERLAP), (R618, 0)] {
        let t = build(shape(2, 8, 2, 2, None), rules);
        // Built: SMT [0,16], CLS [0,16] (L2 per core), MC = socket, DIE/PKG = node, NODE = node, NUMA = all.
        // cpu_attach_domain: CLS (equal span to SMT, one group: only WAKE_AFFINE counts) goes; DIE/PKG and
        // NODE (equal spans to MC, one group) go; NUMA (2 groups) stays. 6.12's SHARE_LLC is 6.6's
        // SHARE_PKG_RESOURCES (one bit here); 6.6/6.12 NUMA has SD_OVERLAP (SDTL_OVERLAP), 6.18 not.
        assert_eq!(
            chain(&t, 0),
            vec![("SMT", "0,16".into(), SMT), ("MC", "0-7,16-23".into(), LLC), ("NUMA", "0-31".into(), NUMA | overlap)],
            "{rules:?}"
        );
        assert_eq!(t.describe_cpu(CpuId(25)), "SMT [9,25] MC [8-15,24-31] NUMA [0-31]");
        assert_eq!(t.domains.len(), 16 + 2 + 1);
        // sd_init: pct 110 (SHARE_CPUCAPACITY) / 117 (SHARE_LLC) / 117 (NUMA); cache_nice_tries 0 / 1 / 2;
        // busy_factor 16; min = sd_weight, max = 2 sd_weight, balance_interval = sd_weight.
        assert_eq!(tunables(&t, 0), vec![(110, 0, 16, 2, 4, 2), (117, 1, 16, 16, 32, 16), (117, 2, 16, 32, 64, 32)]);
        let d = t.domain(t.cpu_domains[0][0]);
        assert_eq!((d.busy_idx, d.idle_idx, d.smt_gain), (0, 0, 0));
        // No smt_gain: every CPU at SCHED_CAPACITY_SCALE; groups at 1024 x weight.
        assert!(t.cpu_capacity.iter().all(|&c| c == 1024));
        // SMT groups: no child, sg->flags 0. MC groups: built with CLS's flags, then each CPU's
        // cpu_attach_domain, dropping CLS, wrote SMT's flags into its local group: every core is SMT.
        assert_eq!(groups(&t, 0, 0), vec![("0".into(), 1, 1024, 0, 1), ("16".into(), 1, 1024, 0, 1)]);
        let mc = groups(&t, 0, 1);
        assert_eq!((mc.len(), &mc[0], &mc[7]), (8, &("0,16".into(), 2, 2048, SMT, 1), &("7,23".into(), 2, 2048, SMT, 1)));
        // NUMA (overlapping: per-CPU group copies): CPU 0's local group took MC's flags when NODE went;
        // the other group keeps what build_group_from_child_sched_domain copied: NODE's flags as built.
        let numa = groups(&t, 0, 2);
        assert_eq!(numa, vec![("0-7,16-23".into(), 16, 16384, LLC, 8), ("8-15,24-31".into(), 16, 16384, BASE, 8)]);
        assert_eq!(groups(&t, 9, 2)[1].3, LLC);
        // imb_numa_nr: DIE/PKG is the first domain above the LLC; one LLC per node, so 16 >> 3 = 2,
        // carried up unscaled (NUMA spans imb_span = 32); 0 below.
        assert_eq!((0..3).map(|l| t.imb_numa_nr(CpuId(0), l)).collect::<Vec<_>>(), vec![0, 0, 2]);
        assert_eq!(t.domain(t.cpu_domains[0][2]).imb_numa_nr, 2);
        // update_top_cache_domain: sd_llc = MC; sd_llc_shared is MC's, nr_busy_cpus = sd_weight 16;
        // no SD_CLUSTER domain: sd_share_id = sd_llc_id, sched_cluster_active off; sd_numa = NUMA.
        assert_eq!((t.sd_llc[25], t.llc_id[25], t.llc_size[25]), (Some(1), CpuId(8), 16));
        assert_eq!(t.llc_shared[25], Some(LlcSharedInit { id: CpuId(8), nr_busy_cpus: 16 }));
        assert_eq!((t.sd_share_id[25], t.sched_cluster_active, t.sd_numa[25]), (CpuId(8), false, Some(2)));
    }
}

#[test]
fn one_node_keeps_die_in_66_and_pkg_from_612() {
    for (rules, name) in [(R66, "DIE"), (R612, "PKG")] {
        let t = build(shape(2, 8, 2, 1, None), rules);
        // DIE/PKG = the one node = the cpu_map: build_sched_domains stops there (no NODE); it has 2
        // groups (the sockets), so it stays. x86 build_sched_topology names it DIE in 6.6, PKG from 6.7.
        assert_eq!(chain(&t, 0)[2], (name, "0-31".into(), BASE));
        assert_eq!(tunables(&t, 0)[2], (117, 1, 16, 32, 64, 32));
        // Its groups are the MC spans, with MC's flags (MC was not dropped: no write).
        assert_eq!(groups(&t, 0, 2)[1], ("8-15,24-31".into(), 16, 16384, LLC, 8));
        // imb_numa_nr: two LLCs under it: nr_llcs = 2; no NUMA ancestor, imb_span = its own span.
        assert_eq!(t.imb_numa_nr(CpuId(0), 2), 2);
    }
}

#[test]
fn cluster_under_66_is_one_more_cache_level() {
    let t = build(shape(1, 8, 1, 1, Some(2)), R66);
    // 6.6 cpu_cluster_flags = SD_SHARE_PKG_RESOURCES: CLS [0-3] (4 groups) and MC (2 groups) both
    // share the package; SMT (one CPU) degenerates at the bottom.
    assert_eq!(chain(&t, 5), vec![("CLS", "4-7".into(), LLC), ("MC", "0-7".into(), LLC)]);
    assert_eq!(tunables(&t, 5), vec![(117, 1, 16, 4, 8, 4), (117, 1, 16, 8, 16, 8)]);
    // highest_flag_domain(SD_SHARE_PKG_RESOURCES) is MC: the LLC stays the socket. So in 6.6 a
    // cluster changes only the balancing levels: select_idle_sibling scans the whole MC, and there
    // is no sd_share_id / cluster scan (sd_share_id here is just sd_llc_id).
    assert_eq!((t.sd_llc[5], t.llc_id[5], t.llc_size[5]), (Some(1), CpuId(0), 8));
    assert_eq!(t.llc_shared[5], Some(LlcSharedInit { id: CpuId(0), nr_busy_cpus: 8 }));
    assert_eq!((t.sd_share_id[5], t.sched_cluster_active), (CpuId(0), false));
    // CLS groups: SMT's flags as built, cleared by each CPU when the degenerate SMT base goes.
    assert!(groups(&t, 5, 0).iter().all(|g| g.3 == 0 && g.4 == 1));
    // MC groups: the clusters, with CLS's flags.
    assert_eq!(groups(&t, 5, 1), vec![("0-3".into(), 4, 4096, LLC, 4), ("4-7".into(), 4, 4096, LLC, 4)]);
    assert!((0..2).all(|l| t.imb_numa_nr(CpuId(5), l) == 0));
}

#[test]
fn cluster_under_612_is_sd_cluster_below_the_llc() {
    let t = build(shape(1, 8, 2, 1, Some(2)), R612);
    // 16 CPUs: SMT [c, c+8]; CLS = 4 cores (8 CPUs, 4 groups); MC = all (2 groups). Nothing degenerates.
    let cls = BASE | SD_CLUSTER | SD_SHARE_LLC;
    assert_eq!(
        chain(&t, 13),
        vec![("SMT", "5,13".into(), SMT), ("CLS", "4-7,12-15".into(), cls), ("MC", "0-15".into(), LLC)]
    );
    // CLS has SHARE_LLC: pct 117, cache_nice_tries 1.
    assert_eq!(tunables(&t, 13)[1], (117, 1, 16, 8, 16, 8));
    // sd_llc is still MC (the highest SHARE_LLC domain); sd_share_id is the cluster's first CPU and
    // sched_cluster_active is on (a CPU has an SD_CLUSTER domain).
    assert_eq!((t.sd_llc[13], t.llc_id[13], t.llc_size[13]), (Some(2), CpuId(0), 16));
    assert_eq!((t.sd_share_id[13], t.sd_share_id[3], t.sched_cluster_active), (CpuId(4), CpuId(0), true));
    // MC's groups carry SD_CLUSTER (select_idle_cpu's `sg->flags & SD_CLUSTER`), 4 cores each
    // (init_sched_groups_capacity counts each cpu_smt_mask once); CLS's groups are SMT cores.
    assert_eq!(groups(&t, 13, 2), vec![("0-3,8-11".into(), 8, 8192, cls, 4), ("4-7,12-15".into(), 8, 8192, cls, 4)]);
    assert_eq!(groups(&t, 13, 1)[1], ("5,13".into(), 2, 2048, SMT, 1));
}

#[test]
fn one_cluster_per_socket_becomes_the_llc_domain() {
    let t = build(shape(1, 4, 1, 1, Some(1)), R612);
    // CLS spans the cpu_map: build_sched_domains stops there, so MC is never built; the degenerate
    // SMT base goes. The LLC domain is CLS, with SD_CLUSTER: sd_share_id = sd_llc_id.
    assert_eq!(chain(&t, 2), vec![("CLS", "0-3".into(), BASE | SD_CLUSTER | SD_SHARE_LLC)]);
    assert_eq!((t.sd_llc[2], t.llc_size[2], t.sd_share_id[2], t.sched_cluster_active), (Some(0), 4, CpuId(0), true));
    // Its groups' flags were cleared with the SMT base: no cluster scan below it.
    assert!(groups(&t, 2, 0).iter().all(|g| g.3 == 0));
}

#[test]
fn flat_machine_degenerates_to_mc() {
    for rules in [R66, R612, R618] {
        let t = build(MachineShape::flat(4), rules);
        // SMT and CLS span one CPU (sd_degenerate: weight 1); MC spans the cpu_map. Unlike 4.4, MC
        // keeps sd_init's SD_PREFER_SIBLING (every non-NUMA level has it in 6.x).
        assert_eq!(chain(&t, 3), vec![("MC", "0-3".into(), LLC)]);
        assert_eq!(t.domains.len(), 1);
        assert_eq!(tunables(&t, 3), vec![(117, 1, 16, 4, 8, 4)]);
        assert_eq!(groups(&t, 3, 0), (0..4).map(|c| (c.to_string(), 1, 1024, 0, 1)).collect::<Vec<_>>());
        assert_eq!(t.local_group(t.cpu_domains[3][0], CpuId(3)), 3);
        assert_eq!((t.sd_llc[3], t.llc_id[3], t.llc_size[3]), (Some(0), CpuId(0), 4));
        assert_eq!(t.llc_shared[3], Some(LlcSharedInit { id: CpuId(0), nr_busy_cpus: 4 }));
        assert_eq!((t.imb_numa_nr(CpuId(3), 0), t.sd_numa[3]), (0, None));
    }
    let t = build(MachineShape::flat(1), R612);
    assert!(t.domains.is_empty() && t.cpu_domains[0].is_empty());
    assert_eq!((t.sd_llc[0], t.llc_id[0], t.llc_size[0], t.llc_shared[0]), (None, CpuId(0), 1, None));
}

#[test]
fn single_core_sockets_keep_only_the_package() {
    let t = build(shape(2, 1, 1, 1, None), R612);
    // SMT, CLS and MC span one CPU; PKG has 2 groups. No SHARE_LLC domain is left: sd_llc NULL,
    // sd_llc_shared NULL, llc_id the CPU itself. PKG's local group was cleared with the SMT base.
    assert_eq!(chain(&t, 1), vec![("PKG", "0-1".into(), BASE)]);
    assert_eq!(groups(&t, 1, 0), vec![("0".into(), 1, 1024, 0, 1), ("1".into(), 1, 1024, 0, 1)]);
    assert_eq!((t.sd_llc[1], t.llc_id[1], t.llc_size[1], t.llc_shared[1]), (None, CpuId(1), 1, None));
    // imb_numa_nr: PKG sits above a one-CPU "LLC" (MC as built): nr_llcs = 2.
    assert_eq!(t.imb_numa_nr(CpuId(1), 0), 2);
}

#[test]
fn imb_numa_nr_on_two_and_four_nodes() {
    // 4 sockets of 4 cores, 2 nodes: PKG (a node, 2 sockets) is above the LLC: nr_llcs = 8 / 4 = 2;
    // NODE goes (equal to PKG), NUMA keeps imb x max(1, 16 / 16) = 2.
    let t = build(shape(4, 4, 1, 2, None), R612);
    assert_eq!(t.describe_cpu(CpuId(5)), "MC [4-7] PKG [0-7] NUMA [0-15]");
    assert_eq!((0..3).map(|l| t.imb_numa_nr(CpuId(5), l)).collect::<Vec<_>>(), vec![0, 2, 2]);
    // One socket per node: one LLC per node, 4 >> 3 = 0, so max(1, 0) = 1; PKG and NODE go.
    let t = build(shape(4, 4, 1, 4, None), R612);
    assert_eq!(t.describe_cpu(CpuId(5)), "MC [4-7] NUMA [0-15]");
    assert_eq!(t.imb_numa_nr(CpuId(5), 1), 1);
    // 16 cores x 2 threads per node: 32 >> 3 = 4.
    let t = build(shape(2, 16, 2, 2, None), R66);
    assert_eq!(t.imb_numa_nr(CpuId(0), 2), 4);
    // NUMA groups: the nodes (NODE spans as built), 4 sockets' worth of capacity each.
    let t = build(shape(4, 4, 1, 2, None), R66);
    assert_eq!(groups(&t, 5, 2)[1], ("8-15".into(), 8, 8192, BASE, 8));
}

#[test]
fn isolcpus_weigh_in_sd_init_but_not_in_spans() {
    let iso = CpuSet::parse("16", 32).unwrap();
    let t = Topology::build_6x(shape(2, 8, 2, 1, None), &iso, R612);
    assert!(t.cpu_domains[16].is_empty());
    assert_eq!((t.llc_shared[16], t.llc_id[16]), (None, CpuId(16)));
    // CPU 0's SMT and CLS span [0] alone and go; MC's group {0} was cleared with them.
    assert_eq!(chain(&t, 0), vec![("MC", "0-7,17-23".into(), LLC), ("PKG", "0-15,17-31".into(), BASE)]);
    let mc = groups(&t, 0, 0);
    assert_eq!((&mc[0], &mc[1]), (&("0".into(), 1, 1024, 0, 1), &("1,17".into(), 2, 2048, SMT, 1)));
    // sd_init's sd_weight is the mask's (isolated CPU included): intervals 16/32/16 and
    // nr_busy_cpus 16, though the span (and sd_llc_size) holds 15.
    assert_eq!(tunables(&t, 0)[0], (117, 1, 16, 16, 32, 16));
    assert_eq!((t.llc_size[0], t.llc_shared[0]), (15, Some(LlcSharedInit { id: CpuId(0), nr_busy_cpus: 16 })));
    // imb_numa_nr per copy: CPU 0's LLC holds 15 of PKG's 31 CPUs (nr_llcs 2), CPU 8's 16 (nr_llcs 1,
    // 31 >> 3 = 3).
    assert_eq!((t.imb_numa_nr(CpuId(0), 1), t.imb_numa_nr(CpuId(8), 2)), (2, 3));
    assert_eq!(t.domain(t.cpu_domains[8][2]).imb_numa_nr, 2);
}

#[test]
fn the_44_build_has_no_6x_fields() {
    let t = Topology::build(shape(2, 8, 2, 2, None), &CpuSet::empty(32));
    let numa = t.cpu_domains[0][2];
    assert_eq!((t.group_flags(numa, CpuId(0), 0), t.imb_numa_nr(CpuId(0), 2)), (0, 0));
    assert!(t.llc_shared.iter().all(Option::is_none) && !t.sched_cluster_active);
    assert_eq!(t.sd_share_id[25], CpuId(8));
}

#[test]
fn shape_check_refuses_uneven_clusters() {
    let (field, why) = shape(1, 8, 2, 1, Some(3)).check(4096).unwrap_err();
    assert_eq!(field, "clusters_per_socket");
    assert!(why.contains("3 does not divide cores_per_socket = 8") && why.contains("allowed: 1, 2, 4, 8"), "{why}");
    assert!(shape(1, 8, 2, 1, Some(0)).check(4096).is_err());
    assert!(shape(1, 8, 2, 1, Some(8)).check(4096).is_ok());
}

#[test]
fn large_machines_build_under_6x() {
    let t = build(shape(8, 256, 2, 4, Some(64)), R618);
    // 2048 SMT + 512 CLS + 8 MC + 4 PKG + 1 NUMA (NODE equals PKG and goes)
    assert_eq!(t.domains.len(), 2048 + 512 + 8 + 4 + 1);
    assert_eq!(t.describe_cpu(CpuId(2048)), "SMT [0,2048] CLS [0-3,2048-2051] MC [0-255,2048-2303] PKG [0-511,2048-2559] NUMA [0-4095]");
    let t = build(MachineShape::flat(4096), R612);
    assert_eq!(t.domains[0].groups.len(), 4096);
}

/// Over a grid of shapes, isolcpus and every version's rules: each CPU's
/// chain is nested bottom-up, its local group holds it, a domain's groups
/// partition its span, and the LLC and cluster ids lie inside the CPU's
/// own LLC and cluster domains.
#[test]
fn every_shape_builds_consistent_domains() {
    let mut built = 0;
    for rules in [R66, R612, R618] {
        for (s, c, t, n) in [(1, 4, 1, 1), (1, 8, 2, 1), (2, 4, 2, 1), (2, 4, 2, 2), (4, 2, 1, 4), (4, 6, 2, 2), (2, 1, 2, 2)] {
            for k in (1..=c).filter(|k| c % k == 0).map(Some).chain([None]) {
                let sh = shape(s, c, t, n, k);
                for iso in ["", "0", "1-2", "3,5"] {
                    let iso = CpuSet::parse(iso, sh.cpus()).unwrap_or_else(|_| CpuSet::empty(sh.cpus()));
                    if iso.len() == usize::from(sh.cpus()) {
                        continue;
                    }
                    check_consistent(&Topology::build_6x(sh, &iso, rules), &iso);
                    built += 1;
                }
            }
        }
    }
    assert!(built > 100, "{built}");
}

fn check_consistent(t: &Topology, iso: &CpuSet) {
    for cpu in (0..t.cpus()).map(CpuId) {
        let chain = &t.cpu_domains[cpu.index()];
        assert!(!iso.contains(cpu) || chain.is_empty(), "isolated {cpu} has a domain");
        let mut below: Option<&CpuSet> = None;
        for (i, &id) in chain.iter().enumerate() {
            let d = t.domain(id);
            assert!(d.span.contains(cpu) && !d.span.intersects(iso), "{cpu} {}", d.level.name());
            if let Some(b) = below {
                assert!(b.iter().all(|c| d.span.contains(c)) && b.len() < d.span.len(), "{cpu}: not nested");
            }
            below = Some(&d.span);
            assert!(d.groups[t.local_group(id, cpu)].span.contains(cpu));
            let mut union = CpuSet::empty(t.cpus());
            for g in &d.groups {
                assert!(!union.intersects(&g.span), "overlapping groups");
                union.union_with(&g.span);
            }
            assert_eq!(union.len(), d.span.len());
            assert!(d.sd_weight >= d.span_weight && d.min_interval == u64::from(d.sd_weight));
            assert!(t.imb_numa_nr(cpu, i) <= d.span_weight);
        }
        match t.sd_llc[cpu.index()] {
            Some(i) => {
                let llc = t.domain(chain[i]);
                assert!(llc.span.contains(t.llc_id[cpu.index()]) && llc.span.contains(t.sd_share_id[cpu.index()]));
                assert_eq!(t.llc_shared[cpu.index()].map(|s| s.id), Some(t.llc_id[cpu.index()]));
            }
            None => assert_eq!((t.llc_id[cpu.index()], t.llc_shared[cpu.index()]), (cpu, None)),
        }
    }
}
