//! A set of CPUs (a task's affinity mask, `cpus_allowed`), parsed from the
//! `taskset -c`/cpuset list syntax: `"0-3,8,10-11"`.

use crate::ids::CpuId;

/// The CPUs of word `i` of a set whose bits are `w`, in increasing order.
fn bits(i: usize, w: u64) -> impl Iterator<Item = CpuId> {
    let mut rest = w;
    std::iter::from_fn(move || {
        if rest == 0 {
            return None;
        }
        let b = rest.trailing_zeros() as usize;
        rest &= rest - 1;
        Some(CpuId((i * 64 + b) as u16))
    })
}

/// A bitmap over CPU numbers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuSet {
    words: Vec<u64>,
}

impl CpuSet {
    pub fn empty(ncpus: u16) -> CpuSet {
        CpuSet { words: vec![0; usize::from(ncpus).div_ceil(64)] }
    }

    pub fn all(ncpus: u16) -> CpuSet {
        let mut s = CpuSet::empty(ncpus);
        for c in 0..ncpus {
            s.insert(CpuId(c));
        }
        s
    }

    pub fn insert(&mut self, cpu: CpuId) {
        self.words[cpu.index() / 64] |= 1 << (cpu.index() % 64);
    }

    pub fn contains(&self, cpu: CpuId) -> bool {
        self.words.get(cpu.index() / 64).is_some_and(|w| w & (1 << (cpu.index() % 64)) != 0)
    }

    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// CPUs in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = CpuId> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| bits(i, w))
    }

    /// CPUs in both sets, in increasing order (`for_each_cpu_and`), without
    /// building the intersection.
    pub fn iter_and<'a>(&'a self, other: &'a CpuSet) -> impl Iterator<Item = CpuId> + 'a {
        self.words.iter().zip(&other.words).enumerate().flat_map(|(i, (&a, &b))| bits(i, a & b))
    }

    /// Adds every CPU of `other` (same machine size).
    pub fn union_with(&mut self, other: &CpuSet) {
        for (w, o) in self.words.iter_mut().zip(&other.words) {
            *w |= o;
        }
    }

    /// `cpumask_and(self, a, b)`: this set becomes `a ∩ b` (same machine
    /// size), reusing its storage.
    pub fn and_from(&mut self, a: &CpuSet, b: &CpuSet) {
        self.words.clear();
        self.words.extend(a.words.iter().zip(&b.words).map(|(x, y)| x & y));
    }

    pub fn remove(&mut self, cpu: CpuId) {
        if let Some(w) = self.words.get_mut(cpu.index() / 64) {
            *w &= !(1 << (cpu.index() % 64));
        }
    }

    /// `cpumask_intersects`.
    pub fn intersects(&self, other: &CpuSet) -> bool {
        self.words.iter().zip(&other.words).any(|(a, b)| a & b != 0)
    }

    /// `cpumask_first_and`: the lowest CPU in both sets.
    pub fn first_and(&self, other: &CpuSet) -> Option<CpuId> {
        for (i, (a, b)) in self.words.iter().zip(&other.words).enumerate() {
            let w = a & b;
            if w != 0 {
                return Some(CpuId((i * 64 + w.trailing_zeros() as usize) as u16));
            }
        }
        None
    }

    pub fn len(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// Parses `"0-3,8"` for a machine of `ncpus` CPUs. The error says what is wrong.
    pub fn parse(text: &str, ncpus: u16) -> Result<CpuSet, String> {
        let mut set = CpuSet::empty(ncpus);
        let last = ncpus.saturating_sub(1);
        let t = text.trim();
        // `-1` would otherwise split as a range with an empty start.
        if t.starts_with('-') {
            return Err(format!("`{t}`: CPU numbers cannot be negative; the machine has CPUs 0-{last}"));
        }
        let cpu = |s: &str| -> Result<u16, String> {
            let s = s.trim();
            let n: u32 = s.parse().map_err(|e: std::num::ParseIntError| match e.kind() {
                std::num::IntErrorKind::PosOverflow => {
                    format!("a CPU number in `{t}` is out of range (allowed: 0-{last})")
                }
                _ if s.is_empty() => {
                    format!("`{t}` has a range with an end missing (write e.g. \"0-3,8\"; CPUs 0-{last})")
                }
                _ => {
                    format!("`{s}` in `{t}` is not a CPU number (the machine has CPUs 0-{last}; write e.g. \"0-3,8\")")
                }
            })?;
            if n >= u32::from(ncpus) {
                return Err(format!("CPU {n} does not exist: the machine has CPUs 0-{last}"));
            }
            Ok(n as u16)
        };
        for part in text.split(',') {
            let part = part.trim();
            if part.is_empty() {
                return Err(format!("empty entry in CPU list `{text}` (write e.g. \"0-3,8\")"));
            }
            match part.split_once('-') {
                Some((a, b)) => {
                    let (a, b) = (cpu(a)?, cpu(b)?);
                    if a > b {
                        return Err(format!("range `{part}` runs backwards"));
                    }
                    for c in a..=b {
                        set.insert(CpuId(c));
                    }
                }
                None => set.insert(CpuId(cpu(part)?)),
            }
        }
        Ok(set)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists_and_ranges() {
        let s = CpuSet::parse("0-2, 5,70", 72).unwrap();
        assert_eq!(s.iter().map(|c| c.0).collect::<Vec<_>>(), vec![0, 1, 2, 5, 70]);
        assert_eq!(s.len(), 5);
        assert!(CpuSet::parse("3-1", 8).unwrap_err().contains("backwards"));
        assert!(CpuSet::parse("8", 8).unwrap_err().contains("does not exist"));
        assert!(CpuSet::parse("", 8).is_err());
        // A negative number names itself and the range, not an empty entry.
        let e = CpuSet::parse("-1", 8).unwrap_err();
        assert!(e.contains("`-1`") && e.contains("0-7") && !e.contains("``"), "{e}");
        let e = CpuSet::parse("3-", 8).unwrap_err();
        assert!(e.contains("`3-`") && e.contains("0-7"), "{e}");
        let e = CpuSet::parse(&"9".repeat(309), 8).unwrap_err();
        assert!(e.contains("out of range (allowed: 0-7)"), "{e}");
        let e = CpuSet::parse("1,x", 8).unwrap_err();
        assert!(e.contains("`x` in `1,x`") && e.contains("0-7"), "{e}");
    }
}
