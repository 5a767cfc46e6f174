//! The kyber I/O scheduler (6.18 block/kyber-iosched.c): requests are sorted
//! into scheduling domains by operation (`kyber_sched_domain`); each domain may
//! have at most `depth` requests in flight device-wide (its `domain_tokens`
//! sbitmap); completions feed per-domain latency histograms relative to the
//! domain's latency target, and a timer (`kyber_timer_fn`) shrinks the depth
//! of domains meeting their target while another domain misses its own, and
//! grows the depth of domains that miss theirs. Dispatch takes batches of
//! `kyber_batch_size` from one domain, then moves round-robin to the next
//! domain with a request and a free token (`kyber_dispatch_request`).
//!
//! Simplifications, each named where it applies:
//! - one request list per domain: the kernel keeps one per software queue
//!   (`kyber_ctx_queue`, per CPU) and splices them all, in CPU order, onto the
//!   hardware queue's list when a token is won (`kyber_flush_busy_kcqs`); with
//!   one submitting context that is FIFO order, which is what is kept here.
//!   Merging stays with the queue's `elv_merge` path (`kyber_bio_merge` is a
//!   `blk_bio_list_merge` over the same list).
//! - tokens are counted, not bit positions: after a shrink, the kernel may hand
//!   out a freed low bit while higher bits are still held, so in use can stay
//!   above the new depth a little longer; here a token is granted only while
//!   fewer than `depth` are in use.
//! - the 100 ms timer fires on its jiffy, not rounded up to the timer wheel's
//!   level granularity.
//! - the sim issues reads and writes only, so DISCARD and OTHER exist but stay
//!   empty.

use super::elv_ctx::ElvCtx;
use super::request::{Op, ReqFlags, Requests};
use crate::ids::RequestId;
use crate::time::SimTime;
use std::collections::VecDeque;

/// `KYBER_READ`, `KYBER_WRITE`, `KYBER_DISCARD`, `KYBER_OTHER`.
pub const KYBER_NUM_DOMAINS: usize = 4;
pub const KYBER_READ: usize = 0;
pub const KYBER_WRITE: usize = 1;
pub const KYBER_DISCARD: usize = 2;
/// Also the number of domains with a latency target and histograms.
pub const KYBER_OTHER: usize = 3;
pub const DOMAIN_NAMES: [&str; KYBER_NUM_DOMAINS] = ["READ", "WRITE", "DISCARD", "OTHER"];
/// `kyber_depth`: the maximum device-wide depth of each domain.
pub const KYBER_DEPTH: [u32; KYBER_NUM_DOMAINS] = [256, 128, 64, 16];
/// `kyber_batch_size`: requests dispatched in a row from one domain.
pub const KYBER_BATCH_SIZE: [u32; KYBER_NUM_DOMAINS] = [16, 8, 1, 1];
/// `kyber_latency_targets` (ns): READ 2 ms, WRITE 10 ms, DISCARD 5 s.
pub const KYBER_LATENCY_TARGETS: [u64; KYBER_OTHER] = [2_000_000, 10_000_000, 5_000_000_000];
/// `KYBER_ASYNC_PERCENT`: async requests may take 75% of the scheduler tags.
pub const KYBER_ASYNC_PERCENT: u32 = 75;
/// `KYBER_LATENCY_SHIFT`: buckets are a quarter of the target wide.
pub const KYBER_LATENCY_SHIFT: u32 = 2;
/// `KYBER_GOOD_BUCKETS`: buckets at or under the target.
pub const KYBER_GOOD_BUCKETS: usize = 1 << KYBER_LATENCY_SHIFT;
/// `KYBER_LATENCY_BUCKETS`: four good, four bad (the last is open-ended).
pub const KYBER_LATENCY_BUCKETS: usize = 2 << KYBER_LATENCY_SHIFT;
/// `KYBER_TOTAL_LATENCY` (allocation to completion) and `KYBER_IO_LATENCY`
/// (`blk_mq_start_request` to completion).
pub const KYBER_TOTAL_LATENCY: usize = 0;
pub const KYBER_IO_LATENCY: usize = 1;
/// `calculate_percentile` waits for this many samples (or one second).
pub const KYBER_MIN_SAMPLES: u32 = 500;

/// `blk_mq_default_nr_requests` (6.18 blk-mq.h): `2 * min(queue_depth,
/// BLKDEV_DEFAULT_RQ)`, 256 for a device with 128 or more tags.
pub const DEFAULT_NR_REQUESTS: u32 = 256;
/// `blk_bio_list_merge` looks at the last 8 requests of the list.
const MERGE_CHECKED: usize = 8;

/// kyber's files under `/sys/block/<dev>/queue/iosched/` (`kyber_sched_attrs`).
pub const KYBER_TUNABLES: &[&str] = &["read_lat_nsec", "write_lat_nsec"];

/// The sysfs tunables, in ns as the kernel keeps them (`latency_targets`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KyberTunables {
    pub read_lat_nsec: u64,
    pub write_lat_nsec: u64,
}

impl Default for KyberTunables {
    /// `kyber_queue_data_alloc`: `latency_targets[i] = kyber_latency_targets[i]`.
    fn default() -> Self {
        KyberTunables { read_lat_nsec: KYBER_LATENCY_TARGETS[0], write_lat_nsec: KYBER_LATENCY_TARGETS[1] }
    }
}

impl KyberTunables {
    /// `kyber_{read,write}_lat_store` (6.18): `kstrtoull`, so any u64 is
    /// accepted, 0 included (`add_latency_sample` then uses a divisor of 1).
    pub fn set(&mut self, name: &str, value: u64) -> Result<(), String> {
        match name {
            "read_lat_nsec" => self.read_lat_nsec = value,
            "write_lat_nsec" => self.write_lat_nsec = value,
            _ => return Err(format!("unknown kyber tunable `{name}`; allowed: {}", KYBER_TUNABLES.join(", "))),
        }
        Ok(())
    }
}

/// `kyber_sched_domain` (6.18): by `REQ_OP`. The sim has reads and writes only.
pub fn sched_domain(op: Op) -> usize {
    match op {
        Op::Read => KYBER_READ,
        Op::Write => KYBER_WRITE,
    }
}

/// `kyber_depth_updated` (6.18): `async_depth = nr_requests *
/// KYBER_ASYNC_PERCENT / 100`.
pub fn async_depth(nr_requests: u32) -> u32 {
    (u64::from(nr_requests) * u64::from(KYBER_ASYNC_PERCENT) / 100) as u32
}

/// `add_latency_sample` (6.18): the bucket of `latency` against `target`.
pub fn latency_bucket(target: u64, latency: u64) -> usize {
    if latency == 0 {
        return 0;
    }
    let divisor = (target >> KYBER_LATENCY_SHIFT).max(1);
    ((latency - 1) / divisor).min(KYBER_LATENCY_BUCKETS as u64 - 1) as usize
}

#[derive(Clone, Debug)]
pub struct Kyber {
    /// `latency_targets[READ, WRITE, DISCARD]`, ns.
    pub latency_targets: [u64; KYBER_OTHER],
    /// `domain_tokens[d].sb.depth`.
    depth: [u32; KYBER_NUM_DOMAINS],
    /// Tokens held by dispatched, uncompleted requests.
    in_use: [u32; KYBER_NUM_DOMAINS],
    /// After a shrink below what was in use: the most that may still be in
    /// use (falls as those requests complete), for `check`.
    ceiling: [u32; KYBER_NUM_DOMAINS],
    /// `khd->rqs[d]` (with the per-CPU `kcqs` folded in: see the module doc).
    rqs: [VecDeque<RequestId>; KYBER_NUM_DOMAINS],
    /// `khd->cur_domain`, `khd->batching`.
    cur_domain: usize,
    batching: u32,
    /// `kqd->latency_buckets[domain][type][bucket]` (the per-CPU histograms
    /// are summed into these by the timer; one CPU here, so kept summed).
    buckets: [[[u32; KYBER_LATENCY_BUCKETS]; 2]; KYBER_OTHER],
    /// `kqd->latency_timeout[domain]`, jiffies (0: not started).
    latency_timeout: [u64; KYBER_OTHER],
    /// `kqd->domain_p99[domain]` (-1: none remembered).
    domain_p99: [i32; KYBER_OTHER],
    /// `kqd->timer` expiry in jiffies, if pending.
    timer: Option<u64>,
    /// `kqd->async_depth` (`kyber_depth_updated`).
    pub async_depth: u32,
    hz: u32,
    jiffy_ns: u64,
    /// Depth changes made by the timer: (jiffies, domain, new depth), as
    /// `trace_kyber_adjust` reports them.
    pub adjustments: Vec<(u64, usize, u32)>,
}

impl Kyber {
    /// `kyber_queue_data_alloc` + `kyber_init_hctx`: full depths, targets from
    /// the tunables, no p99 remembered; `async_depth` from `nr_requests`.
    pub fn new(t: KyberTunables, nr_requests: u32, hz: u32, jiffy_ns: u64) -> Kyber {
        Kyber {
            latency_targets: [t.read_lat_nsec, t.write_lat_nsec, KYBER_LATENCY_TARGETS[KYBER_DISCARD]],
            depth: KYBER_DEPTH,
            in_use: [0; KYBER_NUM_DOMAINS],
            ceiling: [0; KYBER_NUM_DOMAINS],
            rqs: Default::default(),
            cur_domain: 0,
            batching: 0,
            buckets: [[[0; KYBER_LATENCY_BUCKETS]; 2]; KYBER_OTHER],
            latency_timeout: [0; KYBER_OTHER],
            domain_p99: [-1; KYBER_OTHER],
            timer: None,
            async_depth: async_depth(nr_requests),
            hz,
            jiffy_ns,
            adjustments: Vec::new(),
        }
    }

    /// `kyber_depth_updated`: `nr_requests` changed.
    pub fn depth_updated(&mut self, nr_requests: u32) {
        self.async_depth = async_depth(nr_requests);
    }

    /// `kyber_limit_depth` (6.18): async requests (`!op_is_sync`) allocate
    /// scheduler tags with `shallow_depth = async_depth`; sync ones are not
    /// limited (None). In 6.18 the shallow depth bounds the whole tag bitmap
    /// (`__map_depth_with_shallow` scales it per word).
    pub fn limit_depth(&self, flags: ReqFlags) -> Option<u32> {
        (!flags.is_sync()).then_some(self.async_depth)
    }

    /// The domains' current depths (`domain_tokens[d].sb.depth`).
    pub fn depths(&self) -> [u32; KYBER_NUM_DOMAINS] {
        self.depth
    }

    /// Tokens in use per domain.
    pub fn tokens_in_use(&self) -> [u32; KYBER_NUM_DOMAINS] {
        self.in_use
    }

    /// `kyber_insert_requests`: onto the tail of its domain's list.
    pub fn insert_request(&mut self, rqs: &Requests, rq: RequestId) {
        self.rqs[sched_domain(rqs.rq(rq).flags.op)].push_back(rq);
    }

    /// `kyber_bio_merge` → `blk_bio_list_merge` (6.18): the front-merge half,
    /// over the last 8 requests of the bio's domain list, newest first (back
    /// merges are found by the queue's hash).
    pub fn merge(&self, rqs: &Requests, op: Op, bio_end: u64) -> Option<RequestId> {
        self.rqs[sched_domain(op)].iter().rev().take(MERGE_CHECKED).copied().find(|&rq| rqs.rq(rq).sector == bio_end)
    }

    /// `kyber_get_domain_token` (`__sbitmap_queue_get`): a token if fewer than
    /// `depth` are in use. On failure the kernel waits on the sbitmap and
    /// reruns the queue when a token frees (`kyber_domain_wake`); here the
    /// queue is run after every completion anyway.
    fn get_domain_token(&mut self, d: usize) -> bool {
        if self.in_use[d] < self.depth[d] {
            self.in_use[d] += 1;
            true
        } else {
            false
        }
    }

    /// `kyber_dispatch_cur_domain`: the head of the current domain's list if
    /// a token can be had.
    fn dispatch_cur_domain(&mut self) -> Option<RequestId> {
        let d = self.cur_domain;
        if self.rqs[d].is_empty() || !self.get_domain_token(d) {
            return None;
        }
        self.batching += 1;
        self.rqs[d].pop_front()
    }

    /// `kyber_dispatch_request` (6.18): keep batching the current domain while
    /// `batching < kyber_batch_size`; otherwise (or if it has no request or no
    /// token) reset the batch and try each domain in turn, starting with the
    /// next one and wrapping back to the current one.
    pub fn dispatch_request(&mut self, _ctx: &mut ElvCtx<'_>) -> Option<RequestId> {
        if self.batching < KYBER_BATCH_SIZE[self.cur_domain]
            && let Some(rq) = self.dispatch_cur_domain()
        {
            return Some(rq);
        }
        self.batching = 0;
        for _ in 0..KYBER_NUM_DOMAINS {
            self.cur_domain = (self.cur_domain + 1) % KYBER_NUM_DOMAINS;
            if let Some(rq) = self.dispatch_cur_domain() {
                return Some(rq);
            }
        }
        None
    }

    /// `kyber_finish_request` (token back, `rq_clear_domain_token`) and
    /// `kyber_completed_request` (6.18): a total-latency sample (since the
    /// request was allocated, `start_time_ns`: its insertion here) and an
    /// I/O-latency sample (since `blk_mq_start_request`: its dispatch), then
    /// `timer_reduce(jiffies + HZ / 10)`. OTHER requests sample nothing.
    pub fn completed_request(&mut self, ctx: &mut ElvCtx<'_>, rq: RequestId) {
        let r = ctx.rqs.rq(rq);
        let d = sched_domain(r.flags.op);
        debug_assert!(self.in_use[d] > 0, "a completed request held a token");
        self.in_use[d] = self.in_use[d].saturating_sub(1);
        self.ceiling[d] = self.ceiling[d].min(self.in_use[d]);
        if d == KYBER_OTHER {
            return;
        }
        let target = self.latency_targets[d];
        let total = ctx.now.since(r.i_at);
        let io = ctx.now.since(r.d_at.unwrap_or(r.i_at));
        let total = &mut self.buckets[d][KYBER_TOTAL_LATENCY][latency_bucket(target, total)];
        *total = total.saturating_add(1);
        let io = &mut self.buckets[d][KYBER_IO_LATENCY][latency_bucket(target, io)];
        *io = io.saturating_add(1);
        let at = ctx.jiffies() + u64::from(self.hz / 10);
        self.timer = Some(self.timer.map_or(at, |t| t.min(at)));
    }

    /// When the timer fires, if pending.
    pub fn timer_at(&self) -> Option<SimTime> {
        self.timer.map(|j| SimTime(j * self.jiffy_ns))
    }

    /// `calculate_percentile` (6.18): the bucket holding the `percentile`
    /// rank, or -1 without samples, or while there are fewer than 500 and less
    /// than a second has passed since the first try (`latency_timeout`). A
    /// result clears the histogram.
    fn calculate_percentile(&mut self, d: usize, ty: usize, percentile: u32, jiffies: u64) -> i32 {
        let buckets = &mut self.buckets[d][ty];
        let samples = buckets.iter().fold(0u32, |a, &b| a.saturating_add(b));
        if samples == 0 {
            return -1;
        }
        if self.latency_timeout[d] == 0 {
            self.latency_timeout[d] = (jiffies + u64::from(self.hz)).max(1);
        }
        // time_is_after_jiffies(timeout): timeout > jiffies.
        if samples < KYBER_MIN_SAMPLES && self.latency_timeout[d] > jiffies {
            return -1;
        }
        self.latency_timeout[d] = 0;
        // DIV_ROUND_UP(samples * percentile, 100)
        let mut left = (u64::from(samples) * u64::from(percentile)).div_ceil(100) as u32;
        let mut bucket = 0;
        while bucket < KYBER_LATENCY_BUCKETS - 1 {
            if buckets[bucket] >= left {
                break;
            }
            left -= buckets[bucket];
            bucket += 1;
        }
        *buckets = [0; KYBER_LATENCY_BUCKETS];
        bucket as i32
    }

    /// `kyber_resize_domain`: clamp to 1..=`kyber_depth`.
    fn resize_domain(&mut self, d: usize, depth: u32, jiffies: u64) {
        let depth = depth.clamp(1, KYBER_DEPTH[d]);
        if depth != self.depth[d] {
            if self.in_use[d] > depth {
                self.ceiling[d] = self.in_use[d];
            }
            self.depth[d] = depth;
            self.adjustments.push((jiffies, d, depth));
        }
    }

    /// `kyber_timer_fn` (6.18): congestion if any domain's I/O-latency p90 is
    /// past its target; then each domain's total-latency p99 (or the one
    /// remembered from an earlier window when congested) scales its depth by
    /// `(p99 bucket + 1) / 4`: shrinks domains under target when another is
    /// congested, grows domains over target either way.
    pub fn timer(&mut self, ctx: &mut ElvCtx<'_>) {
        self.timer = None;
        let jiffies = ctx.jiffies();
        let mut bad = false;
        for d in 0..KYBER_OTHER {
            let p90 = self.calculate_percentile(d, KYBER_IO_LATENCY, 90, jiffies);
            if p90 >= KYBER_GOOD_BUCKETS as i32 {
                bad = true;
            }
        }
        for d in 0..KYBER_OTHER {
            let mut p99 = self.calculate_percentile(d, KYBER_TOTAL_LATENCY, 99, jiffies);
            if bad {
                if p99 < 0 {
                    p99 = self.domain_p99[d];
                }
                self.domain_p99[d] = -1;
            } else if p99 >= 0 {
                self.domain_p99[d] = p99;
            }
            if p99 < 0 {
                continue;
            }
            if bad || p99 >= KYBER_GOOD_BUCKETS as i32 {
                let depth = (self.depth[d] * (p99 as u32 + 1)) >> KYBER_LATENCY_SHIFT;
                self.resize_domain(d, depth, jiffies);
            }
        }
    }

    /// `kyber_has_work`.
    pub fn has_work(&self) -> bool {
        self.rqs.iter().any(|l| !l.is_empty())
    }

    pub fn queued(&self) -> usize {
        self.rqs.iter().map(VecDeque::len).sum()
    }

    /// A domain label for the worst-wait report.
    pub fn queue_label(&self, op: Op) -> String {
        format!("kyber {} domain", DOMAIN_NAMES[sched_domain(op)])
    }

    /// Tokens never exceed a domain's depth (or, after a shrink, what was
    /// already in use then), depths stay within 1..=`kyber_depth`, and the
    /// batch never runs past its size.
    pub fn check(&self) -> Result<(), String> {
        for d in 0..KYBER_NUM_DOMAINS {
            if !(1..=KYBER_DEPTH[d]).contains(&self.depth[d]) {
                return Err(format!(
                    "kyber: {} depth {} outside 1..={}",
                    DOMAIN_NAMES[d], self.depth[d], KYBER_DEPTH[d]
                ));
            }
            if self.in_use[d] > self.depth[d].max(self.ceiling[d]) {
                return Err(format!(
                    "kyber: {} has {} tokens in use, depth {}",
                    DOMAIN_NAMES[d], self.in_use[d], self.depth[d]
                ));
            }
        }
        if self.batching > KYBER_BATCH_SIZE[self.cur_domain] {
            return Err(format!("kyber: batch of {} past {}", self.batching, KYBER_BATCH_SIZE[self.cur_domain]));
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "kyber_tests.rs"]
mod tests;
