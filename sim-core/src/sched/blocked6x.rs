//! Blocked load under Linux 6.x (6.6, 6.12, 6.18 fair.c):
//! `update_blocked_averages` (6.12+ `sched_balance_update_blocked_averages`)
//! → `__update_blocked_fair` over the CPU's leaf list, and the list itself.
//!
//! The list holds every queue with something to decay, children before
//! parents, so one pass takes a group queue's change up through its group
//! entity before the parent queue is visited. A queue joins when it gets
//! its first entity (`list_add_leaf_cfs_rq`: before its parent if the
//! parent is listed, else on a branch at `tmp_alone_branch` that the next
//! level up connects) and leaves once fully decayed (`cfs_rq_is_decayed`,
//! `list_del_leaf_cfs_rq`); a throttled queue leaves when its PELT clock
//! stops (`tg_throttle_down`) and comes back at `tg_unthrottle_up`. 4.4
//! keeps every queue on its list for good (`fair_pelt44.rs`).

use super::fair_core::FairCore;
use super::fair_pelt6x::UPDATE_TG;
use super::pelt6x::load_avg_is_decayed;
use crate::ids::{CfsRqId, CpuId, EntityId};

impl FairCore {
    /// `update_blocked_averages` (6.x fair.c) for `cpu`: `__update_blocked_fair`
    /// ages every listed queue (children first), publishes `tg->load_avg`,
    /// passes pending propagation up through the group entity, and drops
    /// queues fully decayed. Returns whether blocked load remains
    /// (`!done`: `rq->has_blocked_load`); no RT, deadline, IRQ or thermal
    /// signal is modelled (`others_have_blocked` is false).
    pub(crate) fn update_blocked_averages6x(&mut self, cpu: CpuId) -> bool {
        let c = cpu.index();
        let mut done = true;
        let mut i = 0;
        // Bounded: each round drops the queue or moves past it.
        while i < self.leaf[c].len() {
            let q = self.leaf[c][i];
            let now = self.cfs_rq_clock_pelt(q);
            if self.update_cfs_rq_load_avg6x(now, q) {
                self.update_tg_load_avg6x(q);
                if self.rq(q).nr_running == 0 {
                    self.update_idle_cfs_rq_clock_pelt(q);
                }
            }
            // Propagate pending load changes to the parent, if any.
            if let Some(se) = self.rq(q).owner
                && !self.skip_blocked_update(se)
            {
                self.update_load_avg6x(se, UPDATE_TG);
            }
            if self.cfs_rq_is_decayed(q) {
                self.list_del_leaf_cfs_rq(q);
            } else {
                i += 1;
            }
            let avg = &self.rq(q).avg;
            if avg.load_avg != 0 || avg.util_avg != 0 {
                done = false; // cfs_rq_has_blocked
            }
        }
        !done
    }

    /// `skip_blocked_update` (6.x fair.c): a group entity with no load, no
    /// util and nothing to propagate needs no decay.
    fn skip_blocked_update(&self, se: EntityId) -> bool {
        let e = self.se(se);
        if e.avg.load_avg != 0 || e.avg.util_avg != 0 {
            return false;
        }
        let gq = e.my_q.expect("a queue's owner is a group entity");
        !self.rq(gq).p6.propagate
    }

    /// `cfs_rq_is_decayed` (6.x fair.c): empty, every sum 0, and no child
    /// queue just before it on the list (which must go first).
    /// 6.18.2 adds: nothing left in `tg->load_avg` (`tg_load_avg_contrib`).
    pub(crate) fn cfs_rq_is_decayed(&self, q: CfsRqId) -> bool {
        let rq = self.rq(q);
        rq.load.weight == 0
            && load_avg_is_decayed(&rq.avg)
            && !self.child_cfs_rq_on_list(q)
            && !(self.pelt6x().decayed_needs_no_contrib && rq.tg_load_avg_contrib != 0)
    }

    /// `child_cfs_rq_on_list` (6.18 fair.c; 6.6 and 6.12 read past the list
    /// head when the queue is first, which in practice finds no child): the
    /// queue before this one on the list (or at `tmp_alone_branch`) is a child.
    fn child_cfs_rq_on_list(&self, q: CfsRqId) -> bool {
        let rq = self.rq(q);
        let c = rq.cpu.index();
        let prev = if rq.on_list {
            let i = self.leaf[c].iter().position(|&x| x == q).expect("a listed queue is on its list");
            i.checked_sub(1).map(|j| self.leaf[c][j])
        } else {
            self.leaf_tmp[c]
        };
        prev.is_some_and(|p| self.groups[self.rq(p).tg.index()].parent == Some(rq.tg))
    }

    /// `list_add_leaf_cfs_rq` (6.x fair.c): a queue joins its CPU's list just
    /// before its parent if the parent is listed (the branch is connected:
    /// `tmp_alone_branch` back to the head); a root queue at the tail; else
    /// at the start of the branch being built, which its parent will join.
    /// Returns whether the branch is connected.
    #[inline]
    pub(crate) fn list_add_leaf_cfs_rq6x(&mut self, q: CfsRqId) -> bool {
        let rq = self.rq(q);
        if rq.on_list {
            return self.leaf_tmp[rq.cpu.index()].is_none();
        }
        self.list_add_leaf_unlisted6x(q)
    }

    /// `list_add_leaf_cfs_rq` of a queue not on the list yet (out of line:
    /// most enqueues find it listed).
    #[inline(never)]
    fn list_add_leaf_unlisted6x(&mut self, q: CfsRqId) -> bool {
        let rq = self.rq(q);
        let (cpu, tg) = (rq.cpu, rq.tg);
        let c = cpu.index();
        self.rq_mut(q).on_list = true;
        let parent = self.groups[tg.index()].parent;
        let parent_q = parent.map(|p| self.groups[p.index()].cfs_rq[c].expect("a parent covers its child's CPUs"));
        if let Some(pq) = parent_q
            && self.rq(pq).on_list
        {
            let i = self.leaf[c].iter().position(|&x| x == pq).expect("a listed queue is on its list");
            self.leaf[c].insert(i, q);
            self.leaf_tmp[c] = None;
            return true;
        }
        if parent.is_none() {
            self.leaf[c].push(q);
            self.leaf_tmp[c] = None;
            return true;
        }
        // The parent is not listed yet: it will be added after us.
        let i = match self.leaf_tmp[c] {
            None => 0,
            Some(t) => self.leaf[c].iter().position(|&x| x == t).expect("tmp_alone_branch is listed") + 1,
        };
        self.leaf[c].insert(i, q);
        self.leaf_tmp[c] = Some(q);
        false
    }

    /// `list_del_leaf_cfs_rq` (6.x fair.c); `tmp_alone_branch` moves back
    /// if it pointed at the queue.
    pub(crate) fn list_del_leaf_cfs_rq(&mut self, q: CfsRqId) {
        if !self.rq(q).on_list {
            return;
        }
        let c = self.rq(q).cpu.index();
        let i = self.leaf[c].iter().position(|&x| x == q).expect("a listed queue is on its list");
        if self.leaf_tmp[c] == Some(q) {
            self.leaf_tmp[c] = i.checked_sub(1).map(|j| self.leaf[c][j]);
        }
        self.leaf[c].remove(i);
        self.rq_mut(q).on_list = false;
    }

    /// `update_idle_cfs_rq_clock_pelt` (6.6/6.12 pelt.h): remember the
    /// queue's throttled time (or that it is throttled) for `migrate_se_pelt_lag`.
    pub(crate) fn update_idle_cfs_rq_clock_pelt(&mut self, q: CfsRqId) {
        let rq = self.rq_mut(q);
        rq.p6.throttled_pelt_idle =
            if rq.rt.throttle_count > 0 { u64::MAX } else { rq.p6.throttled_clock_pelt_time };
    }

    /// `tg_throttle_down` (6.6/6.12 fair.c), PELT part, for a queue whose
    /// `throttle_count` is about to leave 0: its PELT clock stops and it
    /// leaves the list.
    pub(crate) fn tg_throttle_down6x(&mut self, q: CfsRqId) {
        if self.rq(q).rt.throttle_count == 0 {
            self.rq_mut(q).p6.throttled_clock_pelt = self.clock;
            self.list_del_leaf_cfs_rq(q);
        }
    }

    /// `tg_unthrottle_up` (6.6/6.12 fair.c), PELT part, for a queue whose
    /// `throttle_count` just came back to 0: its clock resumes without the
    /// throttled time, and it rejoins the list unless fully decayed.
    pub(crate) fn tg_unthrottle_up6x(&mut self, q: CfsRqId) {
        if self.rq(q).rt.throttle_count != 0 {
            return;
        }
        let now = self.clock;
        let p6 = &mut self.rq_mut(q).p6;
        p6.throttled_clock_pelt_time += now - p6.throttled_clock_pelt;
        if !self.cfs_rq_is_decayed(q) {
            self.list_add_leaf_cfs_rq6x(q);
        }
    }

    /// `online_fair_sched_group` → `attach_entity_cfs_rq` (6.6/6.12 fair.c)
    /// for a new group's entity on one CPU: aged (ATTACH_AGE_LOAD) and
    /// attached to its parent queue at once, so its first enqueue finds it
    /// attached; then `propagate_entity_cfs_rq` lists the queues above and
    /// passes the (empty) attach up.
    pub(crate) fn attach_entity_cfs_rq6x(&mut self, se: EntityId) {
        self.update_load_avg6x(se, 0);
        let q = self.cfs_rq_of(se);
        self.attach_entity_load_avg(q, se);
        self.update_tg_load_avg6x(q);
        // propagate_entity_cfs_rq
        if self.cfs_rq_throttled(q) {
            return;
        }
        if !self.throttled_hierarchy(q) {
            self.list_add_leaf_cfs_rq6x(q);
        }
        let mut cur = self.parent(se);
        // Bounded by the hierarchy depth.
        while let Some(s) = cur {
            let q = self.cfs_rq_of(s);
            self.update_load_avg6x(s, UPDATE_TG);
            if self.cfs_rq_throttled(q) {
                break;
            }
            if !self.throttled_hierarchy(q) {
                self.list_add_leaf_cfs_rq6x(q);
            }
            cur = self.parent(s);
        }
    }

    /// `unthrottle_cfs_rq` (6.x fair.c) of a queue with nothing to run but
    /// still listed (something to decay): complete its branch up to a
    /// listed ancestor.
    pub(crate) fn unthrottle_complete_branch6x(&mut self, q: CfsRqId) {
        if !self.rq(q).on_list {
            return;
        }
        let mut se = self.rq(q).owner;
        // Bounded by the hierarchy depth.
        while let Some(s) = se {
            if self.list_add_leaf_cfs_rq6x(self.cfs_rq_of(s)) {
                break;
            }
            se = self.parent(s);
        }
    }
}
