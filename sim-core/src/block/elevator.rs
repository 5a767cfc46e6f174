//! The elevator of one queue (`struct elevator_queue`) and its choice with
//! tunables (`ElevatorSpec`): a closed set dispatched with one `match` per
//! operation (`elv_*` in 4.4 block/elevator.c, the mq hooks of 6.18). It sits
//! above the elevators it is built from; they see the world through `ElvCtx`.

use super::bfq::{Bfq, BfqGroupIo, BfqTaskIo, BfqTunables};
use super::cfq::{Cfq, IoPrio};
use super::cfq_tunables::CfqTunables;
use super::deadline::{Deadline, DeadlineTunables};
use super::elv_ctx::ElvCtx;
use super::kyber::{self, Kyber, KyberTunables};
use super::mq_deadline::{Ioprio, MqDeadline, MqDeadlineTunables};
use super::noop::Noop;
use super::request::{ReqFlags, Requests};
use crate::ids::{RequestId, TaskId};
use crate::time::SimTime;

/// Which elevator a device uses, with its tunables.
#[derive(Clone, Debug, PartialEq)]
pub enum ElevatorSpec {
    Noop,
    Deadline(DeadlineTunables),
    Cfq(CfqTunables),
    /// 6.18 kyber (block/kyber-iosched.c), run on this queue until the mq path takes it.
    Kyber(KyberTunables),
    /// BFQ (6.18), a documented subset: see `bfq/mod.rs`.
    Bfq(BfqTunables),
    /// blk-mq without a scheduler (`none`).
    MqNone,
    /// blk-mq `mq-deadline` (6.18).
    MqDeadline(MqDeadlineTunables),
}

impl ElevatorSpec {
    pub fn name(&self) -> &'static str {
        match self {
            ElevatorSpec::Noop => "noop",
            ElevatorSpec::Deadline(_) => "deadline",
            ElevatorSpec::Cfq(_) => "cfq",
            ElevatorSpec::Kyber(_) => "kyber",
            ElevatorSpec::Bfq(_) => "bfq",
            ElevatorSpec::MqNone => "none",
            ElevatorSpec::MqDeadline(_) => "mq-deadline",
        }
    }

    /// Whether the elevator runs the blk-mq path (6.18) rather than 4.4's
    /// single queue.
    pub fn is_mq(&self) -> bool {
        matches!(
            self,
            ElevatorSpec::MqNone | ElevatorSpec::MqDeadline(_) | ElevatorSpec::Kyber(_) | ElevatorSpec::Bfq(_)
        )
    }

    /// Writes a tunable by its sysfs name, as `[devices.X.<elevator>]` does
    /// (noop has none).
    pub fn set(&mut self, name: &str, value: u64, hz: u32) -> Result<(), String> {
        match self {
            ElevatorSpec::Noop => Err(format!("noop has no tunable `{name}`")),
            ElevatorSpec::Deadline(t) => t.set(name, value, hz),
            ElevatorSpec::Cfq(t) => t.set(name, value, hz),
            ElevatorSpec::Kyber(t) => t.set(name, value),
            ElevatorSpec::Bfq(t) => t.set(name, value, hz),
            ElevatorSpec::MqNone => Err(format!("none has no tunable `{name}`")),
            ElevatorSpec::MqDeadline(t) => t.set(name, value, hz),
        }
    }

    /// The tunables as `/sys/block/<dev>/queue/iosched/` shows them in 4.4
    /// (times in ms, converted back from jiffies with `jiffies_to_msecs`).
    pub fn sysfs(&self, hz: u32) -> Vec<(&'static str, u64)> {
        let ms = |j: u64| j * 1000 / u64::from(hz);
        match self {
            ElevatorSpec::Noop | ElevatorSpec::MqNone => Vec::new(),
            // async_depth unset shows 0 here; the running queue shows nr_requests.
            ElevatorSpec::MqDeadline(t) => t.sysfs(hz, 0),
            ElevatorSpec::Deadline(t) => vec![
                ("read_expire", ms(t.read_expire_j)),
                ("write_expire", ms(t.write_expire_j)),
                ("writes_starved", u64::from(t.writes_starved)),
                ("front_merges", u64::from(t.front_merges)),
                ("fifo_batch", u64::from(t.fifo_batch)),
            ],
            ElevatorSpec::Cfq(t) => vec![
                ("quantum", u64::from(t.quantum)),
                ("fifo_expire_sync", ms(t.fifo_expire_j[1])),
                ("fifo_expire_async", ms(t.fifo_expire_j[0])),
                ("back_seek_max", t.back_seek_max_kib),
                ("back_seek_penalty", u64::from(t.back_seek_penalty)),
                ("slice_sync", ms(t.slice_j[1])),
                ("slice_async", ms(t.slice_j[0])),
                ("slice_async_rq", u64::from(t.slice_async_rq)),
                ("slice_idle", ms(t.slice_idle_j)),
                ("group_idle", ms(t.group_idle_j)),
                ("low_latency", u64::from(t.low_latency)),
                ("target_latency", ms(t.target_latency_j)),
            ],
            // 6.18 kyber_sched_attrs: ns, as stored.
            ElevatorSpec::Kyber(t) => vec![("read_lat_nsec", t.read_lat_nsec), ("write_lat_nsec", t.write_lat_nsec)],
            // BFQ's SHOW_FUNCTIONs (6.18): ms, except slice_idle_us and max_budget (sectors).
            ElevatorSpec::Bfq(t) => t.sysfs(hz),
        }
    }
}

/// The elevator of one queue (`struct elevator_queue`): a closed set, so one
/// `match` per operation and no trait objects in the cloneable simulation.
#[derive(Clone, Debug)]
pub enum Elevator {
    Noop(Noop),
    Deadline(Deadline),
    Cfq(Box<Cfq>),
    Kyber(Box<Kyber>),
    Bfq(Box<Bfq>),
    /// `none`: requests go from the plug to the hctx dispatch lists.
    MqNone,
    MqDeadline(Box<MqDeadline>),
}

impl Elevator {
    /// `task_prio` is each task's I/O priority (CFQ picks queues by it).
    pub fn new(spec: &ElevatorSpec, task_prio: Vec<IoPrio>, hz: u32, jiffy_ns: u64) -> Elevator {
        match spec {
            ElevatorSpec::Noop => Elevator::Noop(Noop::default()),
            ElevatorSpec::Deadline(t) => Elevator::Deadline(Deadline::new(*t)),
            ElevatorSpec::Cfq(t) => Elevator::Cfq(Box::new(Cfq::new(*t, task_prio, hz, jiffy_ns))),
            // nr_requests: `blk_mq_default_nr_requests` for a device of 128 or
            // more tags; the mq path calls `Kyber::depth_updated` with its own.
            ElevatorSpec::Kyber(t) => {
                Elevator::Kyber(Box::new(Kyber::new(*t, kyber::DEFAULT_NR_REQUESTS, hz, jiffy_ns)))
            }
            // Every task in the root group until `with_bfq_groups`.
            ElevatorSpec::Bfq(t) => {
                let tasks = task_prio.into_iter().map(BfqTaskIo::from_ioprio).collect();
                Elevator::Bfq(Box::new(Bfq::new(*t, tasks, Vec::new(), hz)))
            }
            ElevatorSpec::MqNone => Elevator::MqNone,
            // Every task be/4 until `set_task_ioprio`.
            ElevatorSpec::MqDeadline(t) => Elevator::MqDeadline(Box::new(MqDeadline::new(*t, Vec::new()))),
        }
    }

    /// BFQ's blkcg groups: `groups[0]` is the root, `task_group[i]` task
    /// i's group. Other elevators ignore groups (4.4 CFQ here has none).
    pub fn with_bfq_groups(self, task_group: &[usize], groups: Vec<BfqGroupIo>) -> Elevator {
        match self {
            Elevator::Bfq(b) => Elevator::Bfq(Box::new(b.with_groups(task_group, groups))),
            other => other,
        }
    }

    /// The 6.18 ioprio of each task (`__get_task_ioprio`), for the mq
    /// schedulers that read it.
    pub fn set_task_ioprio(&mut self, prio: Vec<Ioprio>) {
        match self {
            Elevator::MqDeadline(d) => **d = MqDeadline::new(d.t, prio),
            Elevator::Bfq(b) => b.set_task_ioprio(&prio),
            _ => {}
        }
    }

    /// The elevator's own bookkeeping invariants (CFQ's counters).
    pub fn check(&self) -> Result<(), String> {
        match self {
            Elevator::Cfq(c) => c.check(),
            Elevator::Kyber(k) => k.check(),
            Elevator::Bfq(b) => b.check(),
            Elevator::MqDeadline(d) => d.check(),
            _ => Ok(()),
        }
    }

    /// `elv_iosched_allow_bio_merge`: may a bio from `task` join `rq`?
    pub fn allow_bio_merge(&self, rqs: &Requests, rq: RequestId, task: TaskId, flags: ReqFlags) -> bool {
        match self {
            Elevator::Cfq(c) => c.allow_bio_merge(rqs, rq, task, flags),
            Elevator::Bfq(b) => b.allow_bio_merge(rqs.rq(rq), task, flags.is_sync()),
            _ => true,
        }
    }

    /// `elevator_merge_fn`: a front-merge candidate (noop has none).
    pub fn merge(&self, rqs: &Requests, task: TaskId, flags: ReqFlags, bio_end: u64) -> Option<RequestId> {
        match self {
            Elevator::Noop(_) | Elevator::MqNone => None,
            Elevator::MqDeadline(d) => d.request_merge(flags.op, task, bio_end),
            Elevator::Deadline(d) => d.merge(rqs, flags.op, bio_end),
            Elevator::Cfq(c) => c.merge(rqs, task, flags, bio_end),
            Elevator::Kyber(k) => k.merge(rqs, flags.op, bio_end),
            Elevator::Bfq(b) => b.merge(rqs, task, flags.is_sync(), bio_end),
        }
    }

    /// `elevator_merged_fn` after a bio merge (a front merge moved `rq`'s start).
    pub fn merged_request(&mut self, rqs: &mut Requests, rq: RequestId, old_sector: u64, front: bool) {
        match self {
            Elevator::Noop(_) | Elevator::MqNone => {}
            Elevator::MqDeadline(d) => d.request_merged(rqs, rq, old_sector, front),
            Elevator::Deadline(d) => d.merged_request(rqs, rq, old_sector, front),
            Elevator::Cfq(c) => c.merged_request(rqs, rq, old_sector, front),
            Elevator::Kyber(_) => {}
            Elevator::Bfq(b) => b.merged_request(rqs, rq, old_sector, front),
        }
    }

    /// `elevator_add_req_fn`.
    pub fn add_request(&mut self, ctx: &mut ElvCtx<'_>, rq: RequestId) {
        match self {
            Elevator::Noop(n) => n.add_request(rq),
            Elevator::MqNone => debug_assert!(false, "none holds no requests"),
            Elevator::MqDeadline(d) => d.insert_request(ctx, rq),
            Elevator::Deadline(d) => d.add_request(ctx, rq),
            Elevator::Cfq(c) => c.insert_request(ctx, rq),
            Elevator::Kyber(k) => k.insert_request(ctx.rqs, rq),
            Elevator::Bfq(b) => b.insert_request(ctx, rq),
        }
    }

    /// `elevator_dispatch_fn` for one request (`force` 0): the request to
    /// send to the device now, if the elevator wants to send one.
    pub fn dispatch_request(&mut self, ctx: &mut ElvCtx<'_>) -> Option<RequestId> {
        match self {
            Elevator::Noop(n) => n.dispatch_request(ctx),
            Elevator::MqNone => None,
            Elevator::MqDeadline(d) => d.dispatch_request(ctx),
            Elevator::Deadline(d) => d.dispatch_request(ctx),
            Elevator::Cfq(c) => c.dispatch_requests(ctx),
            Elevator::Kyber(k) => k.dispatch_request(ctx),
            Elevator::Bfq(b) => b.dispatch_request(ctx),
        }
    }

    /// `elevator_completed_req_fn`.
    pub fn completed_request(&mut self, ctx: &mut ElvCtx<'_>, rq: RequestId) {
        match self {
            Elevator::Cfq(c) => c.completed_request(ctx, rq),
            Elevator::Kyber(k) => k.completed_request(ctx, rq),
            Elevator::Bfq(b) => b.completed_request(ctx, rq),
            _ => {}
        }
    }

    /// The elevator's timer fired (CFQ's `idle_slice_timer`).
    pub fn timer(&mut self, ctx: &mut ElvCtx<'_>) {
        match self {
            Elevator::Cfq(c) => c.idle_slice_timer(ctx),
            Elevator::Kyber(k) => k.timer(ctx),
            Elevator::Bfq(b) => b.idle_slice_timer(ctx),
            _ => {}
        }
    }

    /// When the elevator's timer should fire, if armed.
    pub fn timer_at(&self) -> Option<SimTime> {
        match self {
            Elevator::Cfq(c) => c.idle_timer_at(),
            Elevator::Kyber(k) => k.timer_at(),
            Elevator::Bfq(b) => b.idle_timer_at(),
            _ => None,
        }
    }

    /// Requests held in the elevator (not yet dispatched).
    pub fn queued(&self) -> usize {
        match self {
            Elevator::Noop(n) => n.queued(),
            Elevator::MqNone => 0,
            Elevator::MqDeadline(d) => d.queued(),
            Elevator::Deadline(d) => d.queued(),
            Elevator::Cfq(c) => c.queued(),
            Elevator::Kyber(k) => k.queued(),
            Elevator::Bfq(b) => b.queued(),
        }
    }

    /// A short name for the queue `rq` waits in (for the worst-wait report):
    /// `fifo`, `read`/`write`, or CFQ's `sync pid N be/4` / `async be/4`.
    pub fn queue_label(&self, rqs: &Requests, rq: RequestId, comm: impl Fn(TaskId) -> String) -> String {
        match self {
            Elevator::Noop(_) => "fifo".into(),
            Elevator::MqNone => "hctx dispatch".into(),
            Elevator::MqDeadline(d) => {
                let r = rqs.rq(rq);
                format!("{} {} fifo", d.ioprio_of(r.task).label(), r.flags.op.name())
            }
            Elevator::Deadline(_) => format!("{} fifo", rqs.rq(rq).flags.op.name()),
            Elevator::Cfq(c) => c.queue_label(rqs.rq(rq), comm),
            Elevator::Kyber(k) => k.queue_label(rqs.rq(rq).flags.op),
            Elevator::Bfq(b) => b.queue_label(rqs.rq(rq), comm),
        }
    }
}
