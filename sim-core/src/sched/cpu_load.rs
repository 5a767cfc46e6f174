//! STUB (lead): replaced by the load helper's module at merge.
#![allow(dead_code, unused_variables)]
pub const CPU_LOAD_IDX_MAX: usize = 5;
#[derive(Clone, Debug, Default)]
pub struct CpuLoad { pub cpu_load: [u64; CPU_LOAD_IDX_MAX], pub last_load_update_tick: u64 }
impl CpuLoad {
    pub fn update_cpu_load_active(&mut self, this_load: u64, jiffies: u64) { self.cpu_load = [this_load; 5]; self.last_load_update_tick = jiffies; }
    pub fn update_idle_cpu_load(&mut self, this_load: u64, nr_running: u32, jiffies: u64) { self.last_load_update_tick = jiffies; }
    pub fn update_cpu_load_nohz(&mut self, this_load: u64, nr_running: u32, jiffies: u64) { self.last_load_update_tick = jiffies; }
    pub fn source_load(&self, weighted: u64, type_idx: usize, lb_bias: bool) -> u64 { if type_idx == 0 || !lb_bias { weighted } else { weighted.min(self.cpu_load[type_idx - 1]) } }
    pub fn target_load(&self, weighted: u64, type_idx: usize, lb_bias: bool) -> u64 { if type_idx == 0 || !lb_bias { weighted } else { weighted.max(self.cpu_load[type_idx - 1]) } }
}
pub fn cpu_avg_load_per_task(weighted: u64, h_nr_running: u32) -> u64 { if h_nr_running == 0 { 0 } else { weighted / h_nr_running as u64 } }
