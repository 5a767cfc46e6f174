//! A worker process of `measure` (`sim-cli __measure-worker`, started by the
//! parent, never by hand): the tasks of one session and cgroup, as threads.
//!
//! Protocol, one line each way per step (stdin from the parent, stdout to it):
//! 1. parent: `WorkerInput` as JSON → worker: `setsid()` if it has a session,
//!    its autogroup nice, then `{"pid":N}`;
//! 2. parent (has moved the process into its cgroup): `threads` → worker
//!    starts every thread, each sets its name, timer slack, affinity, policy
//!    and nice, then `{"tids":[[task,tid],…],"wakers":[tid,…]}`;
//! 3. parent: `go T0 END` (CLOCK_MONOTONIC ns) → the threads run from T0 to END;
//!    `stop` on stdin ends them early;
//! 4. worker: `{"results":[…],"dropped":[…]}` and exit 0. On failure:
//!    `{"error":"…"}` and exit 1.

use super::plan::WorkerInput;
use super::thread::{self, Ctx, ThreadResult};
use anyhow::{Context, Result, anyhow, bail};
use serde::{Deserialize, Serialize};
use sim_core::{Scenario, SimRng};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier, mpsc};

/// What the worker reports after `threads`.
#[derive(Debug, Serialize, Deserialize)]
pub struct Tids {
    pub tids: Vec<(u32, u32)>,
    pub wakers: Vec<u32>,
}

/// What the worker reports at the end.
#[derive(Debug, Serialize, Deserialize)]
pub struct Results {
    pub results: Vec<ThreadResult>,
    /// Items each waker thread dropped (its target's FIFO was full).
    pub dropped: Vec<(u32, u64)>,
}

/// Opens a FIFO of the run for reading and writing, non-blocking (O_RDWR on
/// a FIFO never blocks in open and never sees end-of-file).
pub fn open_fifo(path: &Path) -> Result<File> {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .with_context(|| format!("opening the FIFO {}", path.display()))?;
    // Room for 65,536 items of 16 bytes (fs.pipe-max-size permitting).
    let _ = rustix::pipe::fcntl_setpipe_size(&f, 1 << 20);
    Ok(f)
}

fn line(out: &mut impl Write, v: &impl Serialize) -> Result<()> {
    let text = serde_json::to_string(v)?;
    writeln!(out, "{text}")?;
    out.flush()?;
    Ok(())
}

/// One line from stdin (locked for this call only, so the stop reader can
/// take it later).
fn read_line(what: &str) -> Result<String> {
    let mut s = String::new();
    if std::io::stdin().lock().read_line(&mut s)? == 0 {
        bail!("the parent closed the pipe before `{what}`");
    }
    Ok(s.trim_end().to_string())
}

/// The worker's main: returns the exit status.
pub fn main() -> u8 {
    // Ctrl-C reaches the whole foreground process group: the parent stops
    // the run (`stop`) and collects what was measured, so a worker must not die of it.
    let _ = super::signals::install();
    // Every worker opens every task's wake-up FIFO: room for large scenarios.
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    if let Some(max) = limit.maximum {
        let _ = rustix::process::setrlimit(
            rustix::process::Resource::Nofile,
            rustix::process::Rlimit { current: Some(max), maximum: Some(max) },
        );
    }
    let mut out = std::io::stdout().lock();
    match work(&mut out) {
        Ok(()) => 0,
        Err(e) => {
            let _ = line(&mut out, &serde_json::json!({ "error": format!("{e:#}") }));
            1
        }
    }
}

/// Per-thread settings from the plan.
struct Setup {
    name: String,
    cpus: Vec<u16>,
    nice: i32,
    policy: sim_core::Policy,
    /// `sched_priority` of a FIFO or RR task (1 to 99).
    rt_priority: u8,
    /// A deadline task's runtime, deadline and period.
    dl: Option<sim_core::DlParams>,
}

/// The nice value thread-priority 3.1 gives a `Crossplatform(p)` priority
/// under a normal policy (its unix.rs `to_posix`: 39 steps from nice 19 at
/// p = 0 to nice -20 at p = 99).
fn crossplatform_nice(p: u8) -> i32 {
    i32::from((39.0f32 * (1.0 - f32::from(p) / 99.0)) as i8) - 20
}

/// What an errno from `sched_setscheduler`/`sched_setattr` means for a
/// measured RT or deadline thread (6.18 syscalls.c:__sched_setscheduler).
fn policy_errno_hint(errno: i32, deadline: bool) -> &'static str {
    match rustix::io::Errno::from_raw_os_error(errno) {
        rustix::io::Errno::PERM if deadline => {
            "EPERM: no CAP_SYS_NICE, or the affinity does not cover the CPU's root domain while deadline admission \
             control is on (sched_rt_runtime_us >= 0)"
        }
        rustix::io::Errno::PERM => {
            "EPERM: no CAP_SYS_NICE and RLIMIT_RTPRIO below the priority, or (RT group scheduling) a cpu cgroup \
             with cpu.rt_runtime_us 0"
        }
        rustix::io::Errno::BUSY => "EBUSY: deadline admission refused, the root domain's bandwidth is taken",
        rustix::io::Errno::INVAL => "EINVAL: the kernel refused the parameters",
        _ => "",
    }
}

/// Makes the calling thread SCHED_FIFO/RR at `rt_priority`, or
/// SCHED_DEADLINE with `dl`, and reads the policy back.
fn set_rt_policy(s: &Setup) -> Result<()> {
    use sim_core::Policy;
    use std::time::Duration;
    use thread_priority::unix::{
        DeadlineFlags, RealtimeThreadSchedulePolicy as R, ThreadSchedulePolicy as P, set_thread_priority_and_policy,
        thread_schedule_policy_param,
    };
    let (policy, result) = match (s.policy, s.dl) {
        (Policy::Fifo | Policy::Rr, _) => {
            let policy = if s.policy == Policy::Fifo { R::Fifo } else { R::RoundRobin };
            // thread-priority 3.1.1 passes a Crossplatform value to a
            // realtime policy as the sched_priority itself
            // (`to_allowed_value_for_policy`, 1..=99 on Linux), through
            // pthread_setschedparam, which returns the errno.
            let value = thread_priority::ThreadPriorityValue::try_from(s.rt_priority).map_err(|e| anyhow!("{e}"))?;
            let r = set_thread_priority_and_policy(
                thread_priority::unix::thread_native_id(),
                thread_priority::ThreadPriority::Crossplatform(value),
                P::Realtime(policy),
            );
            (
                policy,
                r.map_err(|e| match e {
                    thread_priority::Error::OS(errno) => (errno, format!("{e:?}")),
                    other => (0, format!("{other:?}")),
                }),
            )
        }
        (Policy::Deadline, Some(dl)) => {
            // thread-priority 3.1.1 calls sched_setattr(2) with its "native
            // id" cast to a pid_t (unix.rs set_thread_priority_and_policy_deadline),
            // so it is given this thread's tid, not pthread_self(); and it
            // returns the call's -1, not the errno, which is read here at once.
            let tid = rustix::thread::gettid().as_raw_nonzero().get();
            let native = thread_priority::unix::ThreadId::try_from(tid).map_err(|e| anyhow!("tid {tid}: {e}"))?;
            let r = set_thread_priority_and_policy(
                native,
                thread_priority::ThreadPriority::Deadline {
                    runtime: Duration::from_nanos(dl.runtime_ns),
                    deadline: Duration::from_nanos(dl.deadline_ns),
                    period: Duration::from_nanos(dl.period_ns),
                    flags: DeadlineFlags::empty(),
                },
                P::Realtime(R::Deadline),
            );
            let errno = std::io::Error::last_os_error().raw_os_error().unwrap_or(0);
            (R::Deadline, r.map_err(|e| (errno, format!("{e:?}"))))
        }
        _ => return Err(anyhow!("{}: policy {} without its parameters", s.name, s.policy.name())),
    };
    if let Err((errno, e)) = result {
        let hint = policy_errno_hint(errno, policy == R::Deadline);
        let e = if errno > 0 { std::io::Error::from_raw_os_error(errno).to_string() } else { e };
        let what = match s.dl {
            Some(d) => format!(
                "sched_setattr(SCHED_DEADLINE, runtime {} ns, deadline {} ns, period {} ns)",
                d.runtime_ns, d.deadline_ns, d.period_ns
            ),
            None => format!("sched_setscheduler({policy:?}, priority {})", s.rt_priority),
        };
        bail!(
            "{}: {what} on CPUs {:?}: {e}{}",
            s.name,
            s.cpus,
            if hint.is_empty() { String::new() } else { format!(" ({hint})") }
        );
    }
    let (now, param) = thread_schedule_policy_param(thread_priority::unix::thread_native_id())
        .map_err(|e| anyhow!("{}: reading the policy back: {e:?}", s.name))?;
    let priority = if policy == R::Deadline { 0 } else { i32::from(s.rt_priority) };
    if (now, param.sched_priority) != (P::Realtime(policy), priority) {
        bail!(
            "{}: asked for {policy:?} at priority {priority}, the thread runs under {now:?} at priority {}",
            s.name,
            param.sched_priority
        );
    }
    Ok(())
}

/// Applies a thread's settings to the calling thread.
fn setup_thread(s: &Setup) -> Result<()> {
    let _ = rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(1));
    let mut set = rustix::thread::CpuSet::new();
    for &c in &s.cpus {
        set.set(usize::from(c));
    }
    // Before any RT or deadline policy: a deadline task's affinity may not
    // shrink below its root domain afterwards (6.18
    // syscalls.c:dl_task_check_affinity, EBUSY).
    rustix::thread::sched_setaffinity(None, &set)
        .with_context(|| format!("{}: sched_setaffinity to CPUs {:?}", s.name, s.cpus))?;
    use sim_core::Policy;
    use thread_priority::unix::{NormalThreadSchedulePolicy as N, ThreadSchedulePolicy as P};
    let policy = match s.policy {
        Policy::Normal => None,
        Policy::Batch => Some(N::Batch),
        Policy::Idle => Some(N::Idle),
        // plan::check_rt_tasks refuses a stop task before any worker starts.
        Policy::Stop => return Err(anyhow!("{}: a stop task cannot be made from userspace", s.name)),
        Policy::Fifo | Policy::Rr | Policy::Deadline => {
            // The nice value first, while the thread is still fair: an RT or
            // deadline task keeps it as its static priority only (6.18
            // syscalls.c:set_user_nice).
            rustix::process::setpriority_process(None, s.nice)
                .with_context(|| format!("{}: setpriority(nice {})", s.name, s.nice))?;
            return set_rt_policy(s);
        }
    };
    if let Some(p) = policy {
        // thread-priority sets the policy and then the nice value its 0..=99
        // priority maps to: take the one that maps to this task's nice, so
        // no step asks for more priority than the task has (which needs CAP_SYS_NICE).
        let value = (0u8..=99).find(|&v| crossplatform_nice(v) == s.nice).unwrap_or(48);
        let prio = thread_priority::ThreadPriority::Crossplatform(
            thread_priority::ThreadPriorityValue::try_from(value).map_err(|e| anyhow!("{e}"))?,
        );
        thread_priority::unix::set_thread_priority_and_policy(
            thread_priority::unix::thread_native_id(),
            prio,
            P::Normal(p),
        )
        .map_err(|e| anyhow!("{}: sched_setscheduler({p:?}): {e:?}", s.name))?;
    }
    // setpriority(PRIO_PROCESS, 0): on Linux, the calling thread only.
    rustix::process::setpriority_process(None, s.nice)
        .with_context(|| format!("{}: setpriority(nice {})", s.name, s.nice))?;
    Ok(())
}

fn work(out: &mut impl Write) -> Result<()> {
    let plan: WorkerInput = serde_json::from_str(&read_line("plan")?).context("reading the worker plan")?;
    if plan.worker.session.is_some() {
        rustix::process::setsid().context("setsid() for the task's session")?;
        if let Some(n) = plan.worker.autogroup_nice {
            std::fs::write("/proc/self/autogroup", n.to_string())
                .with_context(|| format!("writing {n} to /proc/self/autogroup"))?;
        }
    }
    line(out, &serde_json::json!({ "pid": std::process::id() }))?;
    let cmd = read_line("threads")?;
    if cmd != "threads" {
        bail!("expected `threads`, got `{cmd}`");
    }

    let base = Scenario::from_toml_with(&plan.file, &plan.text, &crate::input::set_pairs(&plan.sets)?)?;
    let scenario = match &plan.variant {
        Some(v) => base.with_variant(v)?,
        None => base,
    };
    let spec = Arc::new(scenario.spec.clone());
    let ntasks: usize = spec.tasks.iter().map(|t| t.count as usize).sum();
    let dir = Path::new(&plan.fifo_dir);
    let wake_out: Arc<Vec<File>> =
        Arc::new((0..ntasks).map(|t| open_fifo(&dir.join(format!("wake-{t}")))).collect::<Result<Vec<_>>>()?);

    let t0 = Arc::new(AtomicU64::new(0));
    let end = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let nthreads = plan.worker.tasks.len() + plan.worker.sources.len();
    let barrier = Arc::new(Barrier::new(nthreads + 1));
    let (tid_tx, tid_rx) = mpsc::channel::<Result<(u32, u32, bool)>>();
    let root_rng = SimRng::new(spec.seed);
    let mut handles = Vec::new();

    for &task in &plan.worker.tasks {
        let (si, instance) =
            spec.declaration_of(sim_core::TaskId(task)).ok_or_else(|| anyhow!("task {task} is not in the scenario"))?;
        let ts = &spec.tasks[si];
        let comm = ts.comm(instance);
        let setup = Setup {
            name: comm.clone(),
            cpus: ts.affinity[instance as usize].iter().map(|c| plan.cpu_map[usize::from(c.0)]).collect(),
            nice: i32::from(ts.nice),
            policy: ts.policy,
            rt_priority: ts.rt_priority,
            dl: ts.dl,
        };
        let wake_in = open_fifo(&dir.join(format!("wake-{task}")))?;
        let serves = ts.program.steps.contains(&sim_core::Step::Serve);
        let items_in = if serves { Some(open_fifo(&dir.join(format!("items-{task}")))?) } else { None };
        let rng = root_rng.stream(&format!("task/{comm}"));
        let (spec, wake_out, t0, end, stop, barrier, tx) =
            (spec.clone(), wake_out.clone(), t0.clone(), end.clone(), stop.clone(), barrier.clone(), tid_tx.clone());
        let gap_ns = plan.gap_ns;
        let h = std::thread::Builder::new()
            .name(comm.chars().take(15).collect())
            .spawn(move || -> ThreadResult {
                let tid = rustix::thread::gettid().as_raw_nonzero().get() as u32;
                let ok = setup_thread(&setup);
                let failed = ok.is_err();
                let _ = tx.send(ok.map(|()| (task, tid, false)));
                barrier.wait();
                let mut r = ThreadResult { task, tid, ..ThreadResult::default() };
                if failed {
                    return r;
                }
                let (start, stop_at) = (t0.load(Ordering::SeqCst), end.load(Ordering::SeqCst));
                let ts = &spec.tasks[si];
                thread::sleep_until(start + ts.start_ns);
                let (run0, delay0) = thread::schedstat();
                let sw0 = thread::ctxt_switches();
                let mut ctx = Ctx {
                    t0: start,
                    end: stop_at,
                    stop: &stop,
                    gap_ns,
                    rng,
                    wake_in,
                    items_in,
                    wake_out: &wake_out,
                    instance,
                };
                thread::run_program(&mut ctx, &ts.program, &mut r);
                let (run1, delay1) = thread::schedstat();
                r.runtime_ns = run1.saturating_sub(run0);
                r.run_delay_ns = delay1.saturating_sub(delay0);
                r.switches = thread::ctxt_switches().saturating_sub(sw0);
                r
            })
            .with_context(|| format!("starting the thread for {comm}"))?;
        handles.push(h);
    }

    let mut waker_handles = Vec::new();
    for &(source, target) in &plan.worker.sources {
        let src =
            spec.sources.get(source as usize).ok_or_else(|| anyhow!("source {source} is not in the scenario"))?.clone();
        let ts = &spec.tasks[src.target];
        let comm = ts.comm(target - ts.first.0);
        let mut rng = root_rng.stream(&format!("source/{}/{}", src.name, comm));
        let fifo = open_fifo(&dir.join(format!("items-{target}")))?;
        let setup = Setup {
            name: format!("src:{}", src.name),
            cpus: plan.waker_cpus.clone(),
            nice: 0,
            policy: sim_core::Policy::Normal,
            rt_priority: 0,
            dl: None,
        };
        let (t0, end, stop, barrier, tx) = (t0.clone(), end.clone(), stop.clone(), barrier.clone(), tid_tx.clone());
        let h = std::thread::Builder::new()
            .name(format!("src:{}", src.name).chars().take(15).collect())
            .spawn(move || -> (u32, u64) {
                let tid = rustix::thread::gettid().as_raw_nonzero().get() as u32;
                let ok = setup_thread(&setup);
                let failed = ok.is_err();
                let _ = tx.send(ok.map(|()| (target, tid, true)));
                barrier.wait();
                if failed {
                    return (target, 0);
                }
                let (start, stop_at) = (t0.load(Ordering::SeqCst), end.load(Ordering::SeqCst));
                (target, thread::run_source(start, stop_at, &stop, &src, &mut rng, &fifo))
            })
            .context("starting a request source's waker thread")?;
        waker_handles.push(h);
    }
    drop(tid_tx);

    let mut tids = Tids { tids: Vec::new(), wakers: Vec::new() };
    let mut first_error = None;
    for _ in 0..nthreads {
        match tid_rx.recv() {
            Ok(Ok((task, tid, false))) => tids.tids.push((task, tid)),
            Ok(Ok((_, tid, true))) => tids.wakers.push(tid),
            Ok(Err(e)) => {
                first_error.get_or_insert(e);
            }
            Err(_) => break,
        }
    }
    if let Some(e) = first_error {
        // Let the threads go (they return at once) before reporting.
        stop.store(true, Ordering::SeqCst);
        barrier.wait();
        return Err(e);
    }
    line(out, &tids)?;

    let go = read_line("go")?;
    let mut parts = go.split_whitespace();
    let (Some("go"), Some(a), Some(b)) = (parts.next(), parts.next(), parts.next()) else {
        stop.store(true, Ordering::SeqCst);
        barrier.wait();
        bail!("expected `go T0 END`, got `{go}`");
    };
    t0.store(a.parse().context("go: T0")?, Ordering::SeqCst);
    end.store(b.parse().context("go: END")?, Ordering::SeqCst);
    barrier.wait();

    // `stop` (or the parent going away) ends the run early.
    let stop_reader = stop.clone();
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::stdin().lock().read_line(&mut s);
        stop_reader.store(true, Ordering::SeqCst);
    });

    let mut results = Results { results: Vec::new(), dropped: Vec::new() };
    for h in handles {
        results.results.push(h.join().map_err(|_| anyhow!("a task thread panicked"))?);
    }
    for h in waker_handles {
        results.dropped.push(h.join().map_err(|_| anyhow!("a waker thread panicked"))?);
    }
    line(out, &results)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sim_core::Policy;

    /// Applies `setup` on a new thread, which then ends (so an RT or
    /// deadline thread lives only for the check).
    fn on_a_thread(setup: Setup) -> Result<()> {
        std::thread::spawn(move || setup_thread(&setup)).join().expect("thread")
    }

    fn setup(policy: Policy, cpus: Vec<u16>, rt_priority: u8, dl: Option<sim_core::DlParams>) -> Setup {
        Setup { name: format!("test-{}", policy.name()), cpus, nice: 0, policy, rt_priority, dl }
    }

    #[test]
    fn rt_and_deadline_policies_apply_to_a_thread() {
        if !rustix::process::geteuid().is_root() {
            return println!("SKIPPED: RT and deadline policies need CAP_SYS_NICE");
        }
        let host = super::super::host::probe().expect("probe");
        // Read back inside `set_rt_policy`: an Ok is the policy and priority asked for.
        on_a_thread(setup(Policy::Fifo, vec![0], 1, None)).expect("SCHED_FIFO 1");
        on_a_thread(setup(Policy::Rr, vec![0], 2, None)).expect("SCHED_RR 2");
        // A deadline task may take a whole root domain (1 ms every 10 ms).
        let dl = Some(sim_core::DlParams { runtime_ns: 1_000_000, deadline_ns: 10_000_000, period_ns: 10_000_000 });
        let Some(domain) = host.rt.root_domain_of(0).map(<[u16]>::to_vec) else {
            return println!("SKIPPED: deadline part, the root domains are unknown ({})", host.rt.root_domains_source);
        };
        on_a_thread(setup(Policy::Deadline, domain.clone(), 0, dl)).expect("SCHED_DEADLINE on the root domain");
        // Pinned inside a larger root domain while admission control is on: EPERM, explained.
        if domain.len() > 1 && host.rt.sched_rt_runtime_us.is_some_and(|r| r >= 0) {
            let e = on_a_thread(setup(Policy::Deadline, vec![0], 0, dl)).expect_err("EPERM");
            let e = format!("{e:#}");
            assert!(e.contains("EPERM") && e.contains("root domain"), "{e}");
            println!("{e}");
        }
    }
}
