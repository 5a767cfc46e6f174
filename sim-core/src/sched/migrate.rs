//! STUB (lead): replaced by the metrics helper's module at merge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MigrateCause { WakeAffine, IdleSibling, WakeIdlest, Fork, Periodic, NewIdle, Nohz, Active }
