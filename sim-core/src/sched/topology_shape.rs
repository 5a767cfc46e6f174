//! The machine's shape as the scenario gives it (`[machine]`): sockets of
//! cores of hardware threads, cores optionally split into clusters (an L2
//! shared by several cores, x86's CLS level since 5.16), sockets grouped in
//! NUMA nodes; and the CPU numbering every level's mask follows. The sched
//! domains are built from it (`topology.rs` for 4.4, `topology6x.rs` for
//! 6.x); `check` refuses what neither can express.

use crate::ids::CpuId;

/// Largest `threads_per_core` accepted.
pub const THREADS_PER_CORE_MAX: u16 = 8;

/// The shape of the machine: sockets x cores x threads, grouped in NUMA
/// nodes, the cores of a socket optionally split into clusters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MachineShape {
    pub sockets: u16,
    pub cores_per_socket: u16,
    pub threads_per_core: u16,
    pub numa_nodes: u16,
    /// Clusters per socket (`cpu_clustergroup_mask` = x86 `cpu_l2c_shared_mask`:
    /// cores sharing an L2, e.g. Intel E-core modules of 4); `None` = each
    /// core has its own L2, so the CLS level spans a core and degenerates.
    /// Divides `cores_per_socket`. Only the 6.x topology reads it.
    pub clusters_per_socket: Option<u16>,
}

impl MachineShape {
    /// One socket of `cpus` cores, one thread each, one node.
    pub fn flat(cpus: u16) -> MachineShape {
        MachineShape { sockets: 1, cores_per_socket: cpus, threads_per_core: 1, numa_nodes: 1, clusters_per_socket: None }
    }

    /// Logical CPUs: sockets x cores x threads (saturating; validation bounds it).
    pub fn cpus(&self) -> u16 {
        let n = u32::from(self.sockets) * u32::from(self.cores_per_socket) * u32::from(self.threads_per_core);
        n.min(u32::from(u16::MAX)) as u16
    }

    /// Physical cores in the machine.
    pub fn total_cores(&self) -> u32 {
        u32::from(self.sockets) * u32::from(self.cores_per_socket)
    }

    /// Global core index of `cpu` (`socket * cores_per_socket + core`): the
    /// numbering is thread-major, so CPU i's siblings are i + k·cores.
    pub fn core_of(&self, cpu: CpuId) -> u32 {
        u32::from(cpu.0) % self.total_cores()
    }

    pub fn socket_of(&self, cpu: CpuId) -> u16 {
        (self.core_of(cpu) / u32::from(self.cores_per_socket)) as u16
    }

    /// Which hardware thread of its core `cpu` is.
    pub fn thread_of(&self, cpu: CpuId) -> u16 {
        (u32::from(cpu.0) / self.total_cores()) as u16
    }

    /// Cores sharing one cluster (1 without clusters: the L2 is the core's).
    pub fn cores_per_cluster(&self) -> u16 {
        match self.clusters_per_socket {
            Some(k) if k > 0 => self.cores_per_socket / k,
            _ => 1,
        }
    }

    /// Global cluster index of `cpu` (`socket * clusters_per_socket + cluster`):
    /// consecutive cores of a socket form a cluster.
    pub fn cluster_of(&self, cpu: CpuId) -> u32 {
        self.core_of(cpu) / u32::from(self.cores_per_cluster())
    }

    /// The divisors of `n`, ascending, as "1, 2, 4, 8": the values a key
    /// that must divide `n` allows.
    pub fn divisors_text(n: u16) -> String {
        (1..=n).filter(|d| n.is_multiple_of(*d)).map(|d| d.to_string()).collect::<Vec<_>>().join(", ")
    }

    /// Why this shape cannot be built, if it cannot: every size at least 1,
    /// at most `cpus_max` CPUs, at most `THREADS_PER_CORE_MAX` threads,
    /// `numa_nodes` dividing `sockets`, `clusters_per_socket` dividing
    /// `cores_per_socket`. The message names the field.
    pub fn check(&self, cpus_max: u16) -> Result<(), (&'static str, String)> {
        for (name, v) in [
            ("sockets", self.sockets),
            ("cores_per_socket", self.cores_per_socket),
            ("threads_per_core", self.threads_per_core),
            ("numa_nodes", self.numa_nodes),
        ] {
            if v == 0 {
                return Err((name, "must be at least 1".to_string()));
            }
        }
        if self.threads_per_core > THREADS_PER_CORE_MAX {
            return Err((
                "threads_per_core",
                format!("{} is not allowed: 1 to {THREADS_PER_CORE_MAX}", self.threads_per_core),
            ));
        }
        let n = u64::from(self.sockets) * u64::from(self.cores_per_socket) * u64::from(self.threads_per_core);
        if n > u64::from(cpus_max) {
            return Err((
                "cores_per_socket",
                format!(
                    "{} sockets x {} cores x {} threads = {n} CPUs; the limit is {cpus_max}",
                    self.sockets, self.cores_per_socket, self.threads_per_core
                ),
            ));
        }
        if self.numa_nodes > self.sockets || !self.sockets.is_multiple_of(self.numa_nodes) {
            return Err((
                "numa_nodes",
                format!(
                    "{} does not divide sockets = {}: a NUMA node holds whole sockets, the same number each",
                    self.numa_nodes, self.sockets
                ),
            ));
        }
        if let Some(k) = self.clusters_per_socket
            && (k == 0 || !self.cores_per_socket.is_multiple_of(k))
        {
            return Err(("clusters_per_socket", self.clusters_refusal(u64::from(k))));
        }
        Ok(())
    }

    /// Why `k` clusters per socket cannot be built on these sockets, with the
    /// values allowed.
    pub fn clusters_refusal(&self, k: u64) -> String {
        format!(
            "{k} does not divide cores_per_socket = {}: a cluster (the CLS sched-domain level, cores sharing an \
             L2) holds whole cores, the same number in each (allowed: {})",
            self.cores_per_socket,
            Self::divisors_text(self.cores_per_socket)
        )
    }
}
