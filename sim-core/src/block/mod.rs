//! The block layer of a 4.4 kernel's single-queue path: requests and bios,
//! the elevator core's merging (`elv_merge`), the three legacy elevators and
//! the disk that serves what they dispatch.
//!
//! - `request.rs`: `Request`, `Bio`, flags, the slab they live in.
//! - `queue.rs`: `RequestQueue`, one per device: submit (merge or insert),
//!   run the queue (dispatch while the device has a free tag), complete.
//! - `elevator.rs`: `Elevator` (the closed set, one `match` per `elv_*` call)
//!   and `ElevatorSpec`; `elv_ctx.rs`: `ElvCtx`, what an elevator sees.
//! - `noop.rs`, `deadline.rs`, `cfq.rs`, `kyber.rs`, `mq_deadline.rs`, `bfq/`:
//!   the elevators, below `Elevator`: they import `ElvCtx` and the request
//!   types, never the enum built from them. This file only declares and
//!   re-exports.
//! - `io_recorder.rs`: what the block layer records (btt's Q2D/D2C/Q2C,
//!   blktrace's ring, the worst wait), fed by the queue.
//! - `blk_mq.rs` (state and settings), `blk_mq_submit.rs` (the path on a
//!   `RequestQueue`), `blk_mq_merge.rs` (its merges): the 6.18 blk-mq path.
//! - `device.rs`: SSD and rotating-disk service times and queue depth.
//!
//! Elevators keep the kernel's jiffy arithmetic: their tunables are stored in
//! jiffies at the scenario's HZ, and their deadlines and timers fall on jiffy
//! boundaries (`jiffies = now / TICK_NSEC`).

pub mod bfq;
pub mod blk_mq;
mod blk_mq_merge;
mod blk_mq_submit;
pub mod cfq;
pub mod cfq_tunables;
pub mod deadline;
pub mod device;
pub mod elevator;
pub mod elv_ctx;
pub mod io_recorder;
pub mod kyber;
pub mod mq_deadline;
pub mod noop;
pub mod queue;
pub mod request;

#[cfg(test)]
mod tests;

pub use bfq::{BfqGroupIo, BfqTunables};
pub use blk_mq::BlkMqSettings;
pub use cfq::{IoClass, IoPrio};
pub use cfq_tunables::CfqTunables;
pub use deadline::DeadlineTunables;
pub use device::{Device, DeviceKind, DeviceSpec};
pub use elevator::{Elevator, ElevatorSpec};
pub use kyber::KyberTunables;
pub use mq_deadline::{Ioprio, IoprioClass, MqDeadlineTunables};
pub use queue::RequestQueue;
pub use request::{Op, ReqFlags};
