//! The glue between the tasks and the block layer and userspace I/O queues:
//! preparing a submission from an I/O step, `submit_bio` (split into bios of
//! at most `max_sectors`), blk-mq's tag waits, the userspace queues'
//! admission, completions (`bio_endio`) and the wake-ups they cause.
//!
//! The block layer (`RequestQueue`) and the userspace I/O queues (`IoQueue`)
//! own their state and arm their own events; this glue never wakes or blocks
//! a task itself: it emits `Effect::IoWake` (which emits `Effect::Wake`) and
//! `Effect::Block`, and continues a completion through `Effect::BioDone`,
//! `Effect::IoQueueDone` and `Effect::RunQueue`, in the order the direct
//! calls ran.

use super::effects::{Effect, Submission};
use super::world::World;
use crate::block::RequestQueue;
use crate::block::queue::BioDone;
use crate::block::request::SECTOR_BYTES;
use crate::ids::{DeviceId, RequestId, TaskId};
use crate::scenario::validate::IO_SIZE_MAX;
use crate::task::{BlockOn, IoOp, IoWait, TaskState};
use crate::time::SimTime;
use crate::userspace_io::{IoQueue, PendingIo};
use crate::workload::{IoStep, Pattern};

/// Draws an I/O step's size and sector from the task's stream and gives the
/// submission its sequence number (`submit_io`'s task side; the bios are
/// counted by `max_sectors`, as `blk_queue_split` will cut them).
pub(super) fn prepare(task: TaskId, io: &IoStep, w: &mut World) -> Submission {
    let spec = &w.spec.devices[io.device.index()];
    let (cap, max) = (spec.capacity_sectors, spec.max_sectors);
    let t = &mut w.tasks[task.index()];
    let bytes = io.size.sample(&mut t.rng).clamp(1, IO_SIZE_MAX);
    let sectors = bytes.div_ceil(SECTOR_BYTES).min(io.span_sectors);
    let base = io.offset_sectors.unwrap_or_else(|| (u64::from(t.tid - 1) << 21) % cap);
    let base = base.min(cap - io.span_sectors);
    let sector = match io.pattern {
        Pattern::Sequential => {
            let pc = t.pc;
            let slot = match t.io.cursors.iter().position(|(p, _)| *p == pc) {
                Some(i) => i,
                None => {
                    t.io.cursors.push((pc, base));
                    t.io.cursors.len() - 1
                }
            };
            let mut at = t.io.cursors[slot].1;
            if at + sectors > base + io.span_sectors {
                at = base;
            }
            t.io.cursors[slot].1 = at + sectors;
            at
        }
        Pattern::Random => {
            // 4 KiB aligned within the region.
            let slots = (io.span_sectors - sectors) / 8;
            base + 8 * t.rng.range_inclusive(0, slots)
        }
    };
    let seq = t.io.next_seq;
    t.io.next_seq += 1;
    let nbios = sectors.div_ceil(u64::from(max)) as u32;
    t.io.ops.push(IoOp { seq, bios_left: nbios, write: io.flags.op == crate::block::Op::Write });
    Submission {
        task,
        device: io.device,
        io_class: io.io_class,
        seq,
        flags: io.flags,
        sector,
        sectors,
        bytes,
        wait: io.wait,
    }
}

/// Blocks the running task on I/O (`io_schedule`).
pub(super) fn block_io(task: TaskId, wait: IoWait, w: &mut World) {
    let now = w.now();
    let io = &mut w.tasks[task.index()].io;
    io.wait = Some(wait);
    io.blocked_at = now;
    w.emit(Effect::Block { task, state: TaskState::Blocked(BlockOn::Io) });
}

/// A prepared submission as a userspace I/O queue holds it, queued `now`.
fn pending_of(s: Submission, now: SimTime) -> PendingIo {
    PendingIo {
        task: s.task,
        seq: s.seq,
        flags: s.flags,
        sector: s.sector,
        sectors: s.sectors,
        bytes: s.bytes,
        queued_at: now,
    }
}

/// `submit_bio` of a submission, split into bios of at most `max_sectors`
/// (`blk_queue_split`), on a legacy (single-queue) request queue.
fn submit_split(q: &mut RequestQueue, now: SimTime, p: PendingIo) {
    let max = u64::from(q.device.spec.max_sectors);
    let mut at = p.sector;
    let mut left = p.sectors;
    while left > 0 {
        let n = left.min(max);
        q.submit_bio(now, p.task, p.seq, p.flags, at, n as u32);
        at += n;
        left -= n;
    }
}

/// The block layer and the userspace I/O queues, for one call.
pub(super) struct BlockIo<'a> {
    pub queues: &'a mut [RequestQueue],
    pub io_queues: &'a mut [IoQueue],
}

impl BlockIo<'_> {
    /// Submits a prepared request (`submit_bio`), split into bios of at most
    /// `max_sectors` (`blk_queue_split`), and runs the queue; or holds it in
    /// its userspace I/O queue, which may admit it at once.
    pub fn submit(&mut self, s: Submission, w: &mut World) {
        let now = w.now();
        if let Some(c) = s.io_class {
            let pending = pending_of(s, now);
            self.io_queues[usize::from(c.queue)].queue(usize::from(c.class), pending);
            self.userspace_io_dispatch(usize::from(c.queue), w);
            return;
        }
        let cpu = w.tasks[s.task.index()].cpu.index();
        let q = &mut self.queues[s.device.index()];
        if q.is_mq() {
            q.submit_mq(now, s.task, cpu, s.seq, s.flags, s.sector, s.sectors);
            self.run_queue(s.device, w);
            self.tag_wakes(s.device, w);
            return;
        }
        submit_split(q, now, pending_of(s, now));
        self.run_queue(s.device, w);
    }

    /// After a submission of the running task entered its queue: it sleeps
    /// until a tag frees (`blk_mq_get_tag` → `io_schedule`), or until the
    /// submission completes if the step waits. A submission through a
    /// userspace I/O queue never puts its task to sleep for a tag (see
    /// `userspace_io_dispatch`).
    pub fn submitted(&self, s: Submission, w: &mut World) {
        if s.io_class.is_none() && self.queues[s.device.index()].tag_waiting_seqs(s.task).any(|seq| seq == s.seq) {
            block_io(s.task, IoWait::Tag { seq: s.seq, then_wait: s.wait }, w);
        } else if s.wait {
            block_io(s.task, IoWait::Op(s.seq), w);
        }
    }

    fn run_queue(&mut self, device: DeviceId, w: &mut World) {
        let tasks = &*w.tasks;
        let comm = |t: TaskId| tasks[t.index()].comm.clone();
        self.queues[device.index()].run(w.clock.now, &mut w.queue, &comm);
    }

    /// The queue runs, then the submitters whose tag wait ended are told.
    pub fn run_queue_and_wake(&mut self, device: DeviceId, w: &mut World) {
        self.run_queue(device, w);
        self.tag_wakes(device, w);
    }

    /// A device completion: the request's bios finish (`Effect::BioDone`
    /// each), then the queue runs again (`Effect::RunQueue`).
    pub fn io_complete(&mut self, device: DeviceId, request: RequestId, w: &mut World) {
        let done = self.queues[device.index()].complete(w.clock.now, request, &mut w.queue);
        for b in done {
            w.emit(Effect::BioDone(b));
        }
        w.emit(Effect::RunQueue(device));
    }

    /// Submitters whose tag wait ended (their submission is all queued):
    /// awake, or on to waiting for the submission itself.
    fn tag_wakes(&mut self, device: DeviceId, w: &mut World) {
        let Some(mq) = self.queues[device.index()].mq.as_mut() else { return };
        if mq.tag_woken.is_empty() {
            return;
        }
        let woken = std::mem::take(&mut mq.tag_woken);
        for &(task, done) in &woken {
            let io = &mut w.tasks[task.index()].io;
            // Only the submission the task sleeps for ends its sleep (a
            // userspace I/O queue's submission of the same task waits apart).
            match io.wait {
                Some(IoWait::Tag { seq, then_wait: true }) if seq == done && io.ops.iter().any(|o| o.seq == seq) => {
                    io.wait = Some(IoWait::Op(seq));
                }
                Some(IoWait::Tag { seq, .. }) if seq == done => w.emit(Effect::IoWake(task)),
                _ => {}
            }
        }
        if let Some(mq) = self.queues[device.index()].mq.as_mut() {
            mq.tag_woken = woken;
            mq.tag_woken.clear();
        }
    }

    /// An elevator's timer: it may run the queue.
    pub fn io_timer(&mut self, device: DeviceId, generation: u32, w: &mut World) {
        if self.queues[device.index()].timer(w.clock.now, generation) {
            self.run_queue(device, w);
        }
    }

    /// `fair_queue::dispatch_requests` of I/O queue `q`: each submission it
    /// admits goes to the block layer as an unqueued one would
    /// (`blk_queue_split` into bios, then the queue runs).
    fn userspace_io_dispatch(&mut self, q: usize, w: &mut World) {
        let now = w.now();
        let admitted = self.io_queues[q].dispatch(now);
        if admitted.is_empty() {
            return;
        }
        let device = self.io_queues[q].spec.device;
        if self.queues[device.index()].is_mq() {
            // blk-mq: the submission goes through the plug and the tags as a
            // task's would. If no tag is free it waits in the tag queue
            // without putting its task to sleep: the reactor blocking in
            // io_submit is not modelled (the layer's limit keeps in flight
            // below nr_requests in the shipped scenarios).
            for p in admitted {
                let cpu = w.tasks[p.task.index()].cpu.index();
                self.queues[device.index()].submit_mq(now, p.task, cpu, p.seq, p.flags, p.sector, p.sectors);
            }
            self.run_queue(device, w);
            self.tag_wakes(device, w);
            return;
        }
        for p in admitted {
            submit_split(&mut self.queues[device.index()], now, p);
        }
        self.run_queue(device, w);
    }

    /// A submission's last bio completed: the I/O queue it went through (if
    /// any) releases what it held (`notify_requests_finished`) and admits more.
    pub fn userspace_io_done(&mut self, task: TaskId, seq: u64, w: &mut World) {
        let now = w.now();
        if let Some(q) = self.io_queues.iter_mut().position(|q| q.complete(now, task, seq)) {
            self.userspace_io_dispatch(q, w);
        }
    }
}

/// `bio_endio` for one bio: when the last bio of a submission completes,
/// the submitter and its `wait_io` waiters are woken if that is what they
/// wait for (`Effect::IoWake`), then its userspace I/O queue, if any, is
/// told (`Effect::IoQueueDone`).
pub(super) fn bio_done(b: BioDone, io_queues: bool, w: &mut World) {
    let io = &mut w.tasks[b.task.index()].io;
    let Some(i) = io.ops.iter().position(|o| o.seq == b.op_seq) else {
        debug_assert!(false, "completion for an unknown submission");
        return;
    };
    io.ops[i].bios_left -= 1;
    if io.ops[i].bios_left > 0 {
        return;
    }
    io.ops.remove(i);
    let wake_self = match io.wait {
        Some(IoWait::Op(seq)) => seq == b.op_seq,
        Some(IoWait::Depth(n)) => io.ops.len() < n as usize,
        Some(IoWait::Writes) => !io.ops.iter().any(|o| o.write),
        _ => false,
    };
    if wake_self {
        w.out.push(Effect::IoWake(b.task));
    }
    let mut i = 0;
    while i < io.waiters.len() {
        let (waiter, last) = io.waiters[i];
        if io.ops.iter().all(|o| o.seq > last) {
            io.waiters.remove(i);
            w.out.push(Effect::IoWake(waiter));
        } else {
            i += 1;
        }
    }
    if io_queues {
        w.emit(Effect::IoQueueDone { task: b.task, seq: b.op_seq });
    }
}

/// A task blocked on I/O is woken: its I/O wait is recorded and it goes
/// through `try_to_wake_up` (`Effect::Wake`). A task no longer blocked on
/// I/O (woken by an earlier completion) is left alone.
pub(super) fn io_wake(task: TaskId, w: &mut World) {
    let now = w.now();
    let t = &mut w.tasks[task.index()];
    if t.state != TaskState::Blocked(BlockOn::Io) {
        return;
    }
    t.io.wait = None;
    t.io.stall_from = Some(t.io.blocked_at);
    let waited = now.since(t.io.blocked_at);
    w.recorder.record_task_latency(task, |m| &mut m.io_wait, waited, now);
    w.emit(Effect::Wake { task, waker: None, sync: false });
}
