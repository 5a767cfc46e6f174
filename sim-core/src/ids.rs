//! Newtype identifiers: an index into one of the engine's `Vec`s, never a bare `usize`.

use std::fmt;

macro_rules! id {
    ($(#[$doc:meta])* $name:ident($int:ty)) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub $int);

        impl $name {
            pub const fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

id!(
    /// A task (one instance of a scenario task declaration).
    TaskId(u32)
);
id!(
    /// A logical CPU.
    CpuId(u16)
);
id!(
    /// A scheduling entity (`struct sched_entity`): a task's, or a group's on one CPU.
    EntityId(u32)
);
id!(
    /// A CFS run queue (`struct cfs_rq`): the root one of a CPU, or a group's on one CPU.
    CfsRqId(u32)
);
id!(
    /// A task group (`struct task_group`): a cgroup or an autogroup; 0 is the root.
    GroupId(u32)
);
id!(
    /// An arrival source instance.
    SourceId(u32)
);
id!(
    /// A block device (`struct request_queue` and the disk behind it).
    DeviceId(u16)
);
id!(
    /// A block request (`struct request`) in a device's request slab.
    RequestId(u32)
);
id!(
    /// A bio (`struct bio`): one submitted piece of I/O, merged into a request.
    BioId(u32)
);
