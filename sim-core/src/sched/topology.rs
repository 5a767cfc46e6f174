//! STUB (lead): replaced by the topology helper's module at merge.
#![allow(dead_code)]
use crate::cpuset::CpuSet;
use crate::ids::CpuId;
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
pub const SCHED_CAPACITY_SCALE: u64 = 1024;
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MachineShape { pub sockets: u16, pub cores_per_socket: u16, pub threads_per_core: u16, pub numa_nodes: u16 }
impl MachineShape {
    pub fn flat(cpus: u16) -> MachineShape { MachineShape { sockets: 1, cores_per_socket: cpus, threads_per_core: 1, numa_nodes: 1 } }
    pub fn cpus(&self) -> u16 { self.sockets * self.cores_per_socket * self.threads_per_core }
}
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DomainLevel { Smt, Mc, Die, Numa }
#[derive(Clone, Debug)]
pub struct SchedGroup { pub span: CpuSet, pub group_weight: u32, pub capacity: u64 }
#[derive(Clone, Debug)]
pub struct SchedDomain {
    pub level: DomainLevel, pub span: CpuSet, pub span_weight: u32, pub flags: u32,
    pub min_interval: u64, pub max_interval: u64, pub balance_interval: u64,
    pub busy_factor: u32, pub imbalance_pct: u32, pub cache_nice_tries: u32,
    pub busy_idx: usize, pub idle_idx: usize, pub newidle_idx: usize, pub wake_idx: usize, pub forkexec_idx: usize,
    pub smt_gain: u64, pub groups: Vec<SchedGroup>,
}
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct DomainId(pub u32);
#[derive(Clone, Debug)]
pub struct Topology {
    pub shape: MachineShape, pub isolated: CpuSet, pub domains: Vec<SchedDomain>,
    pub cpu_domains: Vec<Vec<DomainId>>, pub sd_llc: Vec<Option<usize>>,
    pub llc_id: Vec<CpuId>, pub llc_size: Vec<u32>, pub cpu_capacity: Vec<u64>,
}
impl Topology {
    pub fn build(shape: MachineShape, isolated: &CpuSet) -> Topology {
        let n = shape.cpus();
        let mut span = CpuSet::empty(n);
        for c in 0..n { if !isolated.contains(CpuId(c)) { span.insert(CpuId(c)); } }
        let w = span.len() as u32;
        let groups = span.iter().map(|c| { let mut s = CpuSet::empty(n); s.insert(c); SchedGroup { span: s, group_weight: 1, capacity: 1024 } }).collect();
        let d = SchedDomain { level: DomainLevel::Mc, span: span.clone(), span_weight: w,
            flags: SD_LOAD_BALANCE | SD_BALANCE_NEWIDLE | SD_BALANCE_EXEC | SD_BALANCE_FORK | SD_WAKE_AFFINE | SD_SHARE_PKG_RESOURCES,
            min_interval: w as u64, max_interval: 2 * w as u64, balance_interval: w as u64, busy_factor: 32, imbalance_pct: 117,
            cache_nice_tries: 1, busy_idx: 2, idle_idx: 0, newidle_idx: 0, wake_idx: 0, forkexec_idx: 0, smt_gain: 0, groups };
        let multi = w > 1;
        Topology {
            shape, isolated: isolated.clone(), domains: if multi { vec![d] } else { vec![] },
            cpu_domains: (0..n).map(|c| if multi && span.contains(CpuId(c)) { vec![DomainId(0)] } else { vec![] }).collect(),
            sd_llc: (0..n).map(|c| if multi && span.contains(CpuId(c)) { Some(0) } else { None }).collect(),
            llc_id: (0..n).map(|c| if multi && span.contains(CpuId(c)) { span.iter().next().unwrap() } else { CpuId(c) }).collect(),
            llc_size: (0..n).map(|c| if multi && span.contains(CpuId(c)) { w } else { 1 }).collect(),
            cpu_capacity: vec![1024; n as usize],
        }
    }
    pub fn cpus(&self) -> u16 { self.shape.cpus() }
    pub fn domain(&self, id: DomainId) -> &SchedDomain { &self.domains[id.0 as usize] }
    pub fn local_group(&self, d: DomainId, cpu: CpuId) -> usize { self.domain(d).groups.iter().position(|g| g.span.contains(cpu)).unwrap() }
    pub fn balance_span_ids(&self) -> Vec<u16> { (0..self.cpus()).map(|c| if self.isolated.contains(CpuId(c)) { c + 1 } else { 0 }).collect() }
}
