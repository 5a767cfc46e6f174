//! The declarations of an imported scenario, from the tracker's threads:
//! which threads are the workload and which the host's background, what
//! triggers each, who wakes whom, and which threads merge into one
//! declaration with `count`.

use std::collections::{BTreeMap, BTreeSet};

use super::fit::{self, BACKGROUND_SHARE, Decl, Trigger};
use super::sketch::Sketch;
use super::track::{ThreadTrack, Tracker};
use crate::time::format_duration as dur;
use crate::workload::dist::Dist;

/// The inputs the declarations need besides the threads.
pub struct Frame<'a> {
    pub origin: u64,
    pub window: u64,
    pub cpus: usize,
    pub victim: Option<&'a str>,
}

/// Per thread: its trigger and the evidence for it.
fn trigger_of(th: &ThreadTrack, fam: &BTreeMap<u32, String>, own_fam: &BTreeSet<String>, fr: &Frame) -> (Trigger, String) {
    if Tracker::is_hog(th) {
        let blocks = th.switches.saturating_sub(th.preemptions);
        let why = format!(
            "a CPU hog: ran {} of {} seen, blocking {blocks} time(s)",
            dur(th.runtime_ns),
            dur(th.last_ns - th.first_ns)
        );
        return (Trigger::Hog, why);
    }
    if th.bursts.count() == 0 && th.born_ns.is_some() && th.exited {
        // Made in the trace and never woken again: one run from its start (to its exit).
        let why = format!("made during the trace; ran {} from its start to its exit without a wake-up", dur(th.runtime_ns));
        return (Trigger::Sleep(Dist::Const(0)), why);
    }
    if let Some((by, share)) = fit::dominant_waker(th, fam)
        && own_fam.contains(&by)
    {
        let why = format!("woken by `{by}` in {:.0} % of {} wake-ups: waits for it", share * 100.0, th.wakes());
        return (Trigger::Wait { by }, why);
    }
    if let Some((period, why)) = fit::period_of(th) {
        let first = th.first_wake_ns.unwrap_or(fr.origin);
        let offset = first.saturating_sub(fr.origin) % period;
        return (Trigger::Periodic { period, offset }, why);
    }
    let sleeps = &th.sleeps;
    let d = if sleeps.count() > 0 { sleeps.dist() } else { Dist::Const(fr.window) };
    let why = format!(
        "woken by a timer, an interrupt or several threads: sleeps {} (mean {}, max {}) from {} blocks",
        if sleeps.count() > 0 { "as observed" } else { "(none complete: the whole window)" },
        dur(sleeps.mean().round() as u64),
        dur(sleeps.max()),
        sleeps.count()
    );
    (Trigger::Sleep(d), why)
}

/// The threads that are the workload: above the background share, the
/// victim's family, and every thread waking one of those in most of its wake-ups.
fn own_threads(tr: &Tracker, fam: &BTreeMap<u32, String>, fr: &Frame) -> BTreeSet<u32> {
    let mut own: BTreeSet<u32> = tr
        .threads
        .values()
        .filter(|t| {
            let share = t.runtime_ns as f64 / fr.window.max(1) as f64;
            share >= BACKGROUND_SHARE || fr.victim.is_some_and(|v| fam[&t.tid] == fit::family(v) || t.comm == v)
        })
        .map(|t| t.tid)
        .collect();
    // Wakers of own threads join (bounded: each pass adds or stops).
    for _ in 0..8 {
        let mut add = Vec::new();
        for t in own.iter().filter_map(|tid| tr.threads.get(tid)) {
            for (w, n) in &t.wakers {
                if let super::track::Waker::Thread(wt) = w
                    && !own.contains(wt)
                    && (*n as f64) >= 0.7 * t.wakes() as f64
                    && tr.threads.get(wt).is_some_and(|w| !Tracker::is_hog(w))
                {
                    add.push(*wt);
                }
            }
        }
        if add.is_empty() {
            break;
        }
        own.extend(add);
    }
    own
}

/// Builds the declarations (workload first, the victim's first of all, then host background per CPU).
pub fn declarations(tr: &Tracker, fr: &Frame) -> Vec<Decl> {
    let fam: BTreeMap<u32, String> = tr.threads.iter().map(|(&tid, t)| (tid, fit::family(&t.comm))).collect();
    let own = own_threads(tr, &fam, fr);
    let own_fam: BTreeSet<String> = own.iter().map(|t| fam[t].clone()).collect();
    let wakers: BTreeMap<u32, String> =
        fam.iter().filter(|(t, _)| !Tracker::is_hog(&tr.threads[t])).map(|(t, f)| (*t, f.clone())).collect();
    let triggers: BTreeMap<u32, (Trigger, String)> =
        own.iter().map(|&tid| (tid, trigger_of(&tr.threads[&tid], &wakers, &own_fam, fr))).collect();

    // Group by family, then split into runs of alike threads.
    let mut by_family: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for &tid in &own {
        by_family.entry(&fam[&tid]).or_default().push(tid);
    }
    let mut decls: Vec<Decl> = Vec::new();
    let mut names: BTreeSet<String> = BTreeSet::new();
    for (f, tids) in by_family {
        let set: BTreeSet<u32> = tids.iter().copied().collect();
        let apart = fit::wake_each_other(&set, &tr.threads);
        let mut groups: Vec<Vec<u32>> = Vec::new();
        for tid in tids {
            let th = &tr.threads[&tid];
            let g = groups.iter_mut().find(|g| {
                !apart && fit::alike(&tr.threads[&g[0]], th, &triggers[&g[0]].0, &triggers[&tid].0)
            });
            match g {
                Some(g) => g.push(tid),
                None => groups.push(vec![tid]),
            }
        }
        for g in groups {
            let name = unique(f, &mut names, g[0]);
            decls.push(declaration(tr, fr, &name, f, &g, &triggers));
        }
    }
    // Declarations in the order their threads appeared (lowest tid first):
    // tasks of one instant are forked in declaration order, and where each
    // lands depends on who came before it (fork balancing).
    decls.sort_by_key(|d| d.members.iter().min().copied().unwrap_or(u32::MAX));
    link_wakes(tr, &mut decls, fr.window);
    decls.extend(background(tr, fr, &own, &mut names));
    decls
}

fn unique(family: &str, names: &mut BTreeSet<String>, tid: u32) -> String {
    let name = if names.contains(family) { format!("{family}-t{tid}") } else { family.to_string() };
    names.insert(name.clone());
    name
}

fn declaration(tr: &Tracker, fr: &Frame, name: &str, family: &str, g: &[u32], triggers: &BTreeMap<u32, (Trigger, String)>) -> Decl {
    let ths: Vec<&ThreadTrack> = g.iter().map(|t| &tr.threads[t]).collect();
    let first = ths[0];
    let (trigger, why) = triggers[&g[0]].clone();
    let mut notes = Vec::new();
    let comms: BTreeSet<&str> = ths.iter().map(|t| t.comm.as_str()).collect();
    let tids: Vec<String> = g.iter().take(8).map(u32::to_string).collect();
    notes.push(format!(
        "{} thread(s) `{}` (tid {}{}), {:.2} % of a CPU",
        g.len(),
        comms.into_iter().take(4).collect::<Vec<_>>().join("`, `"),
        tids.join(", "),
        if g.len() > 8 { ", …" } else { "" },
        100.0 * ths.iter().map(|t| t.runtime_ns).sum::<u64>() as f64 / fr.window.max(1) as f64 / g.len() as f64
    ));
    notes.push(why);
    let bursts = fit::merged(ths.iter().map(|t| &t.bursts));
    let burst = if bursts.count() > 0 { bursts.dist() } else { fit::burst_of(first) };
    let one_shot = bursts.count() == 0 && first.born_ns.is_some() && first.exited;
    if !matches!(trigger, Trigger::Hog) {
        notes.push(format!(
            "bursts: {} activations, mean {}, p99 {}, max {}",
            bursts.count(),
            dur(bursts.mean().round() as u64),
            dur(bursts.quantile(0.99)),
            dur(bursts.max())
        ));
    }
    let (nice, rt_priority, pnote) = fit::policy_of(first.prio());
    notes.extend(pnote);
    let pins: Vec<Option<(u16, String)>> = ths.iter().map(|t| fit::pinned(t, fr.window, fr.cpus)).collect();
    let cpus = if pins.iter().all(Option::is_some) {
        let list: Vec<u16> = pins.iter().map(|p| p.as_ref().map_or(0, |p| p.0)).collect();
        notes.push(pins[0].as_ref().map_or(String::new(), |p| p.1.clone()));
        Some((list.iter().map(u16::to_string).collect::<Vec<_>>().join(","), g.len() > 1))
    } else {
        None
    };
    let hog = matches!(trigger, Trigger::Hog);
    // A hog starts where it was first seen (made, or first ran); one that
    // exited runs its observed time once.
    let start_ns = ths
        .iter()
        .map(|t| if hog { t.born_ns.unwrap_or(t.first_ns) } else { t.born_ns.unwrap_or(fr.origin) })
        .min()
        .map_or(0, |b| b.saturating_sub(fr.origin));
    let hog_exits = hog && ths.iter().all(|t| t.exited);
    let burst = if hog_exits { Dist::Const(ths.iter().map(|t| t.runtime_ns).max().unwrap_or(0).max(1_000)) } else { burst };
    if hog_exits {
        notes.push("it exited: runs its observed CPU time once".into());
    }
    let iterations = if one_shot || hog_exits {
        Some(1)
    } else if ths.iter().all(|t| t.exited) {
        Some(ths.iter().map(|t| t.bursts.count()).max().unwrap_or(1).max(1))
    } else if rarely_seen(&trigger, &bursts, ths.iter().map(|t| &t.sleeps), fr.window) {
        // Its observed sleeps and bursts cover under half the window: it spent
        // the rest blocked longer than any sleep seen, so looping on them would
        // invent work. It does what the trace saw, once.
        let n = bursts.count().max(1);
        notes.push(format!("its {n} activations with their sleeps cover under half the window: it runs them once (iterations)"));
        Some(n)
    } else {
        None
    };
    Decl {
        name: name.to_string(),
        family: family.to_string(),
        members: g.to_vec(),
        trigger,
        burst,
        wakes: Vec::new(),
        starts_running: false,
        nice,
        rt_priority,
        cpus,
        start_ns,
        iterations,
        notes,
        background: false,
        serve: false,
        forward: None,
        arrivals: None,
        rate_per_s: None,
    }
}

/// A sleeping thread whose observed activations (sleep + burst each) span
/// less than half of the window.
fn rarely_seen<'a>(trigger: &Trigger, bursts: &Sketch, sleeps: impl Iterator<Item = &'a Sketch>, window: u64) -> bool {
    if !matches!(trigger, Trigger::Sleep(_)) {
        return false;
    }
    let slept: u128 = sleeps.map(Sketch::sum).sum();
    (slept + bursts.sum()) * 2 < u128::from(window)
}

/// Wake steps: the declaration whose threads made most of a waiting
/// declaration's wake-ups gets, per activation, the wake-ups it made on
/// average (per-instance targets when it wakes every instance, the group
/// otherwise), `sync` when it blocked right after most of them; the first
/// of a wait cycle starts running.
fn link_wakes(tr: &Tracker, decls: &mut [Decl], window: u64) {
    let owner: BTreeMap<u32, usize> =
        decls.iter().enumerate().flat_map(|(i, d)| d.members.iter().map(move |&t| (t, i))).collect();
    for wi in 0..decls.len() {
        if !matches!(decls[wi].trigger, Trigger::Wait { .. }) {
            continue;
        }
        let mut by: BTreeMap<usize, u64> = BTreeMap::new();
        for t in &decls[wi].members {
            for (w, n) in &tr.threads[t].wakers {
                if let super::track::Waker::Thread(wt) = w
                    && let Some(&di) = owner.get(wt)
                    && di != wi
                {
                    *by.entry(di).or_default() += n;
                }
            }
        }
        let Some((di, _)) = by.into_iter().max_by_key(|&(_, n)| n) else {
            // Woken by its own declaration's threads only: keep it, but say so.
            decls[wi].notes.push("its wakers are threads of its own declaration: modelled as a sleep".into());
            decls[wi].trigger = Trigger::Sleep(tr.threads[&decls[wi].members[0]].sleeps.dist());
            continue;
        };
        let target = decls[wi].clone();
        decls[wi].trigger = Trigger::Wait { by: decls[di].name.clone() };
        let tset: BTreeSet<u32> = target.members.iter().copied().collect();
        let d = &mut decls[di];
        let ths: Vec<&ThreadTrack> = d.members.iter().map(|t| &tr.threads[t]).collect();
        let acts: u64 = ths.iter().map(|t| t.bursts.count()).sum::<u64>().max(1);
        let made: u64 =
            ths.iter().flat_map(|t| t.wakes_made.iter()).filter(|(w, _)| tset.contains(w)).map(|(_, n)| n).sum();
        let k = ((made as f64 / acts as f64).round() as usize).clamp(1, 256);
        let n = target.members.len();
        if n > 1 && k == 1 {
            // One wake-up per activation into a pool of several: a request
            // hop (the waker hands an item to whichever member is free).
            d.serve = true;
            d.forward = Some(target.name.clone());
            d.notes.push(format!(
                "hands one item per activation to the pool `{}` ({made} wake-ups in {acts} activations): a request hop (serve, forward)",
                target.name
            ));
            decls[wi].serve = true;
            continue;
        }
        if n > 1 && k == n && d.members.len() == 1 {
            d.wakes.extend((0..n).map(|i| format!("{}/{i}", target.name)));
        } else {
            d.wakes.extend(std::iter::repeat_n(target.name.clone(), k));
        }
        // WF_SYNC is not in a trace: blocking right after a wake-up is also what
        // any waker whose work ends with it does, so `sync` is left unset and the evidence said.
        let syncs: u64 = ths.iter().map(|t| t.sync_blocks).sum();
        d.notes.push(format!(
            "wakes `{}` {k} time(s) per activation ({made} wake-ups in {acts} activations); blocked within 10us after {syncs} of them (sync not inferred: a trace does not show WF_SYNC)",
            target.name,
        ));
    }
    // The head of a request chain serves items from a source whose
    // arrivals are its wake-ups (per instance).
    for head in 0..decls.len() {
        if decls[head].serve && !matches!(decls[head].trigger, Trigger::Wait { .. }) {
            request_chain(tr, decls, head, window);
        }
    }
    // A cycle of waits (A waits for B, B for A) needs an initiator.
    for i in 0..decls.len() {
        if let Trigger::Wait { by } = &decls[i].trigger {
            let (by, me) = (by.clone(), decls[i].name.clone());
            let cyc = decls.iter().any(|d| d.name == by && matches!(&d.trigger, Trigger::Wait { by: b } if *b == me));
            let already = decls.iter().any(|d| d.starts_running && (d.name == by || d.name == me));
            if cyc && !already {
                decls[i].starts_running = true;
                decls[i].notes.push("starts with its burst: it and its waker wait for each other".into());
            }
        }
    }
}

/// A request chain from its head: every request crosses each stage once,
/// so the chain's items are the most any stage saw (activations, or
/// hand-offs downstream: an activation that found several items queued
/// served them all in one burst). Each stage's work and the head's arrival
/// gaps are scaled from per activation to per item.
fn request_chain(tr: &Tracker, decls: &mut [Decl], head: usize, window: u64) {
    let mut stages = vec![head];
    while let Some(next) = decls[*stages.last().unwrap_or(&head)].forward.clone() {
        match decls.iter().position(|d| d.name == next) {
            Some(i) if !stages.contains(&i) && stages.len() < 64 => stages.push(i),
            _ => break,
        }
    }
    let acts = |d: &Decl| d.members.iter().map(|t| tr.threads[t].bursts.count()).sum::<u64>().max(1);
    // Hand-offs: wake-ups of the next stage's threads only (an interrupt that
    // lands while a stage runs shows that stage as the "waker" of its target).
    let handed = |i: usize| {
        let next: BTreeSet<u32> = stages
            .iter()
            .position(|&s| s == i)
            .and_then(|p| stages.get(p + 1))
            .map(|&n| decls[n].members.iter().copied().collect())
            .unwrap_or_default();
        let made = |t: &u32| tr.threads[t].wakes_made.iter().filter(|(w, _)| next.contains(w)).map(|(_, n)| n).sum::<u64>();
        decls[i].members.iter().map(made).sum::<u64>()
    };
    let items = stages.iter().map(|&i| acts(&decls[i]).max(handed(i))).max().unwrap_or(1);
    for &i in &stages {
        let k = acts(&decls[i]) as f64 / items as f64;
        let d = &mut decls[i];
        d.burst = super::fit::scaled(&d.burst, k);
        d.notes.push(format!(
            "work per item: {} activations for {items} items in the chain, so per-activation work scaled by {k:.3}",
            acts(d)
        ));
    }
    let d = &mut decls[head];
    let ths: Vec<&ThreadTrack> = d.members.iter().map(|t| &tr.threads[t]).collect();
    let gaps = super::fit::merged(ths.iter().map(|t| &t.wake_gaps));
    let k = acts(d) as f64 / items as f64;
    let cv = gaps.cv();
    if (0.7..=1.3).contains(&cv) {
        // Gaps with CV near 1 (queueing only thins them): Poisson arrivals at the chain's item rate.
        let rate = items as f64 / (window as f64 / 1e9) / d.members.len() as f64;
        d.rate_per_s = Some((rate * 100.0).round() / 100.0);
        d.notes.push(format!(
            "heads a request chain: {items} items in {} over {} instance(s), wake-up gaps CV {cv:.2}: Poisson arrivals at {rate:.1}/s each",
            dur(window),
            d.members.len()
        ));
    } else {
        d.notes.push(format!(
            "heads a request chain: its wake-ups (gaps mean {}, CV {cv:.2}, max {}) become a source's arrivals, the gaps scaled by {k:.3} to {items} items",
            dur(gaps.mean().round() as u64),
            dur(gaps.max())
        ));
        d.arrivals = Some(super::fit::scaled(&gaps.dist(), k));
    }
}

/// Threads outside the workload pooled per host CPU (the CPU each ran on
/// most): what `import` writes as `host-bg-cN` and `sim-cli calibrate` as
/// `[[machine.noise.background]]`, one code path for both.
#[derive(Clone, Debug, Default)]
pub struct BackgroundPool {
    pub bursts: Sketch,
    pub runtime_ns: u64,
    pub threads: u64,
    /// The span of trace the pool was seen in (summed when pools of several traces merge).
    pub window_ns: u64,
}

impl BackgroundPool {
    pub fn merge(&mut self, o: &BackgroundPool) {
        self.bursts.merge(&o.bursts);
        self.runtime_ns += o.runtime_ns;
        self.threads = self.threads.max(o.threads);
        self.window_ns += o.window_ns;
    }

    /// The pool as a task: exponential gaps at the pooled rate (arrivals
    /// assumed Poisson), and the pooled bursts.
    pub fn gap_and_burst(&self) -> (Dist, Dist) {
        let acts = self.bursts.count().max(1);
        let mean_gap = (self.window_ns as f64 / acts as f64 - self.bursts.mean()).max(1_000.0);
        (Dist::Exp { mean: mean_gap.round() as u64 }, self.bursts.dist())
    }

    /// The evidence, one sentence.
    pub fn note(&self, cpu: u16) -> String {
        format!(
            "host background on CPU {cpu}: {} thread(s), together {:.2} % of CPU {cpu} in {} activations (bursts mean {}, max {}); arrivals assumed Poisson",
            self.threads,
            100.0 * self.runtime_ns as f64 / self.window_ns.max(1) as f64,
            self.bursts.count(),
            dur(self.bursts.mean().round() as u64),
            dur(self.bursts.max())
        )
    }
}

/// The threads not in `own`, pooled per CPU.
pub fn background_pools(tr: &Tracker, window_ns: u64, own: &BTreeSet<u32>) -> BTreeMap<u16, BackgroundPool> {
    let mut per_cpu: BTreeMap<u16, BackgroundPool> = BTreeMap::new();
    for t in tr.threads.values().filter(|t| !own.contains(&t.tid) && t.runtime_ns > 0) {
        let cpu = t.cpu_time.iter().enumerate().max_by_key(|(_, n)| **n).map_or(0, |(c, _)| c as u16);
        let e = per_cpu.entry(cpu).or_insert_with(|| BackgroundPool { window_ns, ..BackgroundPool::default() });
        if t.bursts.count() > 0 {
            e.bursts.merge(&t.bursts);
        } else {
            e.bursts.add(t.runtime_ns);
        }
        e.runtime_ns += t.runtime_ns;
        e.threads += 1;
    }
    per_cpu
}

/// Threads below the share pooled per CPU as `host-bg-cN` (`background_pools`).
fn background(tr: &Tracker, fr: &Frame, own: &BTreeSet<u32>, names: &mut BTreeSet<String>) -> Vec<Decl> {
    let mut out = Vec::new();
    for (cpu, pool) in background_pools(tr, fr.window, own) {
        let name = format!("host-bg-c{cpu}");
        names.insert(name.clone());
        let (gap, burst) = pool.gap_and_burst();
        out.push(Decl {
            name,
            family: "host-bg".into(),
            members: Vec::new(),
            trigger: Trigger::Sleep(gap),
            burst,
            wakes: Vec::new(),
            starts_running: false,
            nice: 0,
            rt_priority: None,
            cpus: Some((cpu.to_string(), false)),
            start_ns: 0,
            iterations: None,
            notes: vec![format!(
                "{} (each thread under {:.1} % of a CPU)",
                pool.note(cpu),
                BACKGROUND_SHARE * 100.0
            )],
            background: true,
            serve: false,
            forward: None,
            arrivals: None,
            rate_per_s: None,
        });
    }
    out
}
