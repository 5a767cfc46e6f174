//! STUB (lead): the load helper's fair.rs API, removed at merge.
#![allow(unused_variables)]
use super::fair::Cfs;
use crate::ids::{CpuId, EntityId, GroupId};
impl Cfs {
    pub fn weighted_cpuload(&self, cpu: CpuId) -> u64 { self.rq(crate::ids::CfsRqId(cpu.0 as u32)).load.weight }
    pub fn cfs_rq_load_avg(&self, q: crate::ids::CfsRqId) -> u64 { self.rq(q).load.weight }
    pub fn task_load_avg(&self, se: EntityId) -> u64 { self.se(se).load.weight }
    pub fn task_h_load(&mut self, se: EntityId, jiffies: u64) -> u64 { self.se(se).load.weight }
    pub fn effective_load(&self, tg: GroupId, cpu: CpuId, wl: i64, wg: i64) -> i64 { wl }
    pub fn task_group_of(&self, se: EntityId) -> GroupId { self.rq(self.se(se).cfs_rq).tg }
    pub fn cpu_util(&self, cpu: CpuId) -> u64 { 0 }
}
