//! Which kernel's scheduler a scenario runs under (`[kernel] version`).
//! Chosen once, when the simulation is built; one model per code path.

/// A modelled kernel version.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KernelModel {
    /// Linux 4.4: the CFS fair class (`kernel/sched/fair.c` of 4.4), 4.4 SMP.
    #[default]
    Linux44,
}

impl KernelModel {
    /// Every model this build has, as `[kernel] version` spells it.
    pub const ALL: [KernelModel; 1] = [KernelModel::Linux44];

    /// Versions that exist in Linux but are not modelled yet (the answer
    /// names them rather than calling them unknown).
    pub const NOT_YET: [&'static str; 3] = ["6.6", "6.12", "6.18"];

    /// The version as `[kernel] version` spells it.
    pub fn version(self) -> &'static str {
        match self {
            KernelModel::Linux44 => "4.4",
        }
    }

    /// The fair class it models.
    pub fn fair_class(self) -> &'static str {
        match self {
            KernelModel::Linux44 => "cfs",
        }
    }

    /// `linux-4.4-cfs`: how reports and `validate` name the model.
    pub fn label(self) -> String {
        format!("linux-{}-{}", self.version(), self.fair_class())
    }

    pub fn parse(version: &str) -> Option<KernelModel> {
        Self::ALL.into_iter().find(|m| m.version() == version)
    }

    /// `4.4` (or `4.4, 6.6` …): the versions accepted.
    pub fn allowed() -> String {
        Self::ALL.iter().map(|m| format!("\"{}\"", m.version())).collect::<Vec<_>>().join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_round_trip() {
        for m in KernelModel::ALL {
            assert_eq!(KernelModel::parse(m.version()), Some(m));
        }
        assert_eq!(KernelModel::parse("6.18"), None);
        assert_eq!(KernelModel::default().label(), "linux-4.4-cfs");
        assert_eq!(KernelModel::allowed(), "\"4.4\"");
    }
}
