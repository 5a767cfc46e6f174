//! STUB (lead): the metrics helper's Recorder API, removed at merge.
#![allow(unused_variables)]
use super::recorder::Recorder;
use crate::ids::{CpuId, TaskId};
use crate::sched::migrate::MigrateCause;
use crate::time::SimTime;
impl Recorder {
    pub fn count_migration(&mut self, task: TaskId, from: CpuId, to: CpuId, cause: MigrateCause) {}
    pub fn cpu_nr_running(&mut self, cpu: CpuId, nr_running: u32, now: SimTime) {}
}
