//! B-WF2Q+ (6.18 block/bfq-wf2q.c): entities (queues and groups) with start
//! and finish stamps in virtual time, one service tree per ioprio class in
//! each group's scheduling data, virtual time that advances by the service
//! given divided by the tree's weight sum, and idle trees that remember the
//! finish stamp of an entity that went idle early.
//!
//! Simplified against the kernel (listed in `bfq/mod.rs` too): the scheduler
//! looks up the next entity when it needs one instead of caching
//! `next_in_service` on every tree change, so the class-idle guard
//! (`BFQ_CL_IDLE_TIMEOUT`) is checked at each selection only; a group's
//! budget is the budget of the child queue that activated or requeued it
//! (`bfq_update_parent_budget` uses its `next_in_service`'s).

use std::collections::BTreeSet;

/// `WFQ_SERVICE_SHIFT`.
const SERVICE_SHIFT: u32 = 22;
/// `BFQ_IOPRIO_CLASSES`: RT, BE, IDLE.
pub const CLASSES: usize = 3;
pub const CLASS_IDLE: usize = 2;

/// `bfq_gt`: wrapping comparison of virtual times.
pub fn gt(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) > 0
}

/// `bfq_delta`: service scaled to virtual time.
pub fn delta(service: u64, weight: u64) -> u64 {
    ((u128::from(service) << SERVICE_SHIFT) / u128::from(weight.max(1))) as u64
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tree {
    None,
    Active,
    Idle,
}

/// `struct bfq_entity`.
#[derive(Clone, Debug)]
pub struct Entity {
    /// Current weight (a queue's `orig_weight * wr_coeff`).
    pub weight: u64,
    pub start: u64,
    pub finish: u64,
    /// Sectors.
    pub budget: u64,
    pub service: u64,
    /// Scheduling data it is queued in (a group index; 0 is the root).
    pub sd: usize,
    /// For a group's entity, the scheduling data it owns.
    pub my_sd: Option<usize>,
    /// For a queue's entity, the queue.
    pub queue: Option<u32>,
    pub class: usize,
    pub tree: Tree,
    /// `on_st_or_in_serv`: counted in its tree's `wsum`.
    pub on_st: bool,
}

/// `struct bfq_service_tree`.
#[derive(Clone, Debug, Default)]
pub struct ServiceTree {
    pub vtime: u64,
    pub wsum: u64,
    /// (finish, entity).
    active: BTreeSet<(u64, u32)>,
    /// (finish, entity).
    idle: BTreeSet<(u64, u32)>,
}

/// `struct bfq_sched_data`.
#[derive(Clone, Debug)]
pub struct SchedData {
    pub st: [ServiceTree; CLASSES],
    pub in_service: Option<u32>,
    /// `bfq_class_idle_last_service`, jiffies.
    pub class_idle_last_service: i64,
    /// The group's own entity (none for the root).
    pub entity: Option<u32>,
}

#[derive(Clone, Debug)]
pub struct Wf2q {
    pub ents: Vec<Entity>,
    pub sds: Vec<SchedData>,
}

impl Wf2q {
    /// One scheduling data per group; `groups[g]` is (parent, weight) and
    /// group 0 is the root (its entry is ignored).
    pub fn new(groups: &[(Option<usize>, u64)], jiffies: i64) -> Wf2q {
        let mut w = Wf2q { ents: Vec::new(), sds: Vec::new() };
        for _ in groups {
            w.sds.push(SchedData {
                st: Default::default(),
                in_service: None,
                class_idle_last_service: jiffies,
                entity: None,
            });
        }
        for (g, &(parent, weight)) in groups.iter().enumerate().skip(1) {
            // bfq_init_entity of a group: BE class (BFQ_DEFAULT_GRP_CLASS).
            let e = w.add(parent.unwrap_or(0), weight, 1, None);
            w.ents[e as usize].my_sd = Some(g);
            w.sds[g].entity = Some(e);
        }
        w
    }

    pub fn add(&mut self, sd: usize, weight: u64, class: usize, queue: Option<u32>) -> u32 {
        self.ents.push(Entity {
            weight,
            start: 0,
            finish: 0,
            budget: 0,
            service: 0,
            sd,
            my_sd: None,
            queue,
            class,
            tree: Tree::None,
            on_st: false,
        });
        (self.ents.len() - 1) as u32
    }

    fn st(&mut self, e: u32) -> &mut ServiceTree {
        let (sd, class) = (self.ents[e as usize].sd, self.ents[e as usize].class);
        &mut self.sds[sd].st[class]
    }

    fn parent(&self, e: u32) -> Option<u32> {
        self.sds[self.ents[e as usize].sd].entity
    }

    fn extract(&mut self, e: u32) {
        let (tree, finish) = (self.ents[e as usize].tree, self.ents[e as usize].finish);
        let st = self.st(e);
        match tree {
            Tree::Active => st.active.remove(&(finish, e)),
            Tree::Idle => st.idle.remove(&(finish, e)),
            Tree::None => false,
        };
        self.ents[e as usize].tree = Tree::None;
    }

    fn insert(&mut self, e: u32, tree: Tree) {
        let finish = self.ents[e as usize].finish;
        let st = self.st(e);
        match tree {
            Tree::Active => st.active.insert((finish, e)),
            Tree::Idle => st.idle.insert((finish, e)),
            Tree::None => false,
        };
        self.ents[e as usize].tree = tree;
    }

    /// `bfq_calc_finish`.
    /// The trees here are keyed by the finish stamp, so it moves only while
    /// the entity is on none of them.
    fn calc_finish(&mut self, e: u32, service: u64) {
        debug_assert_eq!(self.ents[e as usize].tree, Tree::None, "bfq_calc_finish of entity {e} on a tree");
        let en = &mut self.ents[e as usize];
        en.finish = en.start.wrapping_add(delta(service, en.weight));
    }

    /// Changes an entity's weight (`__bfq_entity_update_weight_prio`): the
    /// tree's weight sum follows if the entity is counted in it.
    pub fn set_weight(&mut self, e: u32, weight: u64) {
        let (old, on_st) = (self.ents[e as usize].weight, self.ents[e as usize].on_st);
        if on_st {
            let st = self.st(e);
            st.wsum = st.wsum - old + weight;
        }
        self.ents[e as usize].weight = weight;
    }

    /// `__bfq_activate_entity` (no backshifting: `non_blocking_wait_rq` is
    /// not modelled), then `bfq_update_fin_time_enqueue`.
    fn activate_one(&mut self, e: u32) {
        let vtime = self.st(e).vtime;
        if self.ents[e as usize].tree == Tree::Idle {
            self.extract(e);
            let en = &mut self.ents[e as usize];
            // An entity back from the idle tree keeps its finish stamp.
            en.start = if gt(vtime, en.finish) { vtime } else { en.finish };
        } else if !self.ents[e as usize].on_st {
            self.ents[e as usize].start = vtime;
            self.ents[e as usize].on_st = true;
            let w = self.ents[e as usize].weight;
            self.st(e).wsum += w;
        } else {
            // Already active (a group entity): leave its stamps alone.
            return;
        }
        let budget = self.ents[e as usize].budget;
        self.calc_finish(e, budget);
        self.insert(e, Tree::Active);
    }

    /// `bfq_activate_bfqq` → `bfq_activate_requeue_entity`: activates the
    /// queue's entity and any ancestor group entity that was not active.
    pub fn activate(&mut self, e: u32) {
        let mut cur = Some(e);
        let budget = self.ents[e as usize].budget;
        while let Some(x) = cur {
            let was_on = self.ents[x as usize].on_st && self.ents[x as usize].tree != Tree::Idle;
            if was_on {
                break;
            }
            if self.ents[x as usize].my_sd.is_some() {
                self.ents[x as usize].budget = budget;
            }
            self.activate_one(x);
            cur = self.parent(x);
        }
    }

    /// `__bfq_requeue_entity`: the in-service entity is charged what it
    /// received (`start = finish`), then reinserted with its budget.
    fn requeue_one(&mut self, e: u32) {
        let sd = self.ents[e as usize].sd;
        // The in-service entity may be on the active tree (requeued while in
        // service, as a group whose budget changed); it leaves the tree
        // before its stamps move (`if (entity->tree) bfq_active_extract`).
        self.extract(e);
        if self.sds[sd].in_service == Some(e) {
            let service = self.ents[e as usize].service;
            self.calc_finish(e, service);
            self.ents[e as usize].start = self.ents[e as usize].finish;
        }
        let budget = self.ents[e as usize].budget;
        self.calc_finish(e, budget);
        self.insert(e, Tree::Active);
    }

    /// `bfq_requeue_bfqq` on expiry: the queue and each ancestor.
    pub fn requeue(&mut self, e: u32) {
        let budget = self.ents[e as usize].budget;
        let mut cur = Some(e);
        while let Some(x) = cur {
            if self.ents[x as usize].my_sd.is_some() {
                self.ents[x as usize].budget = budget;
            }
            self.requeue_one(x);
            cur = self.parent(x);
        }
    }

    /// `bfq_requeue_bfqq` of an active entity not in service
    /// (`bfq_updated_next_req`): new finish from its new budget.
    pub fn reposition(&mut self, e: u32) {
        self.extract(e);
        let budget = self.ents[e as usize].budget;
        self.calc_finish(e, budget);
        self.insert(e, Tree::Active);
    }

    /// `__bfq_deactivate_entity`: returns false if it was not queued.
    fn deactivate_one(&mut self, e: u32, ins_into_idle_tree: bool) -> bool {
        if !self.ents[e as usize].on_st {
            return false;
        }
        let sd = self.ents[e as usize].sd;
        let in_service = self.sds[sd].in_service == Some(e);
        // bfq_active_extract / bfq_idle_extract unlink the rb node whatever
        // its key; the trees here are keyed by finish, so the entity leaves
        // its tree before bfq_calc_finish moves the stamp.
        self.extract(e);
        let service = self.ents[e as usize].service;
        self.calc_finish(e, service);
        if in_service {
            self.sds[sd].in_service = None;
        } else {
            self.ents[e as usize].service = 0;
        }
        let vtime = self.st(e).vtime;
        if !ins_into_idle_tree || !gt(self.ents[e as usize].finish, vtime) {
            self.forget(e);
        } else {
            self.insert(e, Tree::Idle);
        }
        true
    }

    /// `bfq_forget_entity`.
    fn forget(&mut self, e: u32) {
        self.ents[e as usize].on_st = false;
        let w = self.ents[e as usize].weight;
        self.st(e).wsum -= w;
    }

    /// `bfq_deactivate_entity`: deactivates the entity, then each ancestor
    /// group left with nothing active or in service; the first ancestor that
    /// still has work is requeued (charged its service if in service).
    pub fn deactivate(&mut self, e: u32, ins_into_idle_tree: bool) {
        if !self.deactivate_one(e, ins_into_idle_tree) {
            return;
        }
        let mut cur = self.parent(e);
        while let Some(g) = cur {
            let sd = self.ents[g as usize].my_sd.expect("a parent is a group");
            let busy = self.sds[sd].in_service.is_some() || self.sds[sd].st.iter().any(|s| !s.active.is_empty());
            if busy {
                // The remaining ancestors are requeued with their service.
                let mut up = Some(g);
                while let Some(x) = up {
                    if self.ents[x as usize].on_st {
                        self.requeue_one(x);
                    }
                    up = self.parent(x);
                }
                return;
            }
            self.deactivate_one(g, true);
            cur = self.parent(g);
        }
    }

    /// `bfq_bfqq_served`: charge the queue and its ancestors; each tree's
    /// virtual time advances by `served / wsum`.
    pub fn served(&mut self, e: u32, served: u64) {
        let mut cur = Some(e);
        while let Some(x) = cur {
            self.ents[x as usize].service += served;
            let st = self.st(x);
            st.vtime = st.vtime.wrapping_add(delta(served, st.wsum));
            let (sd, class) = (self.ents[x as usize].sd, self.ents[x as usize].class);
            self.forget_idle(sd, class);
            cur = self.parent(x);
        }
    }

    /// `bfq_forget_idle`.
    fn forget_idle(&mut self, sd: usize, class: usize) {
        let st = &mut self.sds[sd].st[class];
        if st.active.is_empty()
            && let Some(&(last, _)) = st.idle.last()
            && !gt(last, st.vtime)
        {
            st.vtime = last;
        }
        if let Some(&(first, e)) = st.idle.first()
            && !gt(first, st.vtime)
        {
            // bfq_put_idle_entity.
            st.idle.remove(&(first, e));
            self.ents[e as usize].tree = Tree::None;
            self.forget(e);
        }
    }

    /// Resets the service of the queue's ancestors at expiry (`bfq_bfqq_expire`)
    /// and clears `in_service_entity` along the path (`__bfq_bfqd_reset_in_service`).
    pub fn reset_in_service(&mut self, e: u32) {
        let mut cur = Some(e);
        while let Some(x) = cur {
            let sd = self.ents[x as usize].sd;
            if self.sds[sd].in_service == Some(x) {
                self.sds[sd].in_service = None;
            }
            if x != e {
                self.ents[x as usize].service = 0;
            }
            cur = self.parent(x);
        }
    }

    /// `__bfq_lookup_next_entity`: jump the virtual time to the smallest
    /// start if nothing is eligible (`bfq_calc_vtime_jump`), then the
    /// eligible entity (start <= vtime) with the smallest finish
    /// (`bfq_first_active_entity`).
    fn lookup_in_tree(&mut self, sd: usize, class: usize) -> Option<u32> {
        let st = &self.sds[sd].st[class];
        let min_start =
            st.active.iter().map(|&(_, e)| self.ents[e as usize].start).reduce(|a, b| if gt(a, b) { b } else { a })?;
        let vtime = if gt(min_start, st.vtime) { min_start } else { st.vtime };
        let found = st.active.iter().map(|&(_, e)| e).find(|&e| !gt(self.ents[e as usize].start, vtime));
        if vtime != self.sds[sd].st[class].vtime {
            self.sds[sd].st[class].vtime = vtime;
            self.forget_idle(sd, class);
        }
        found
    }

    /// `bfq_lookup_next_entity` with the class-idle guard, then
    /// `bfq_get_next_queue`: descend from the root, marking each chosen
    /// entity in service and taking it off its active tree.
    pub fn next_queue(&mut self, jiffies: i64, hz: u32) -> Option<u32> {
        let mut sd = 0;
        loop {
            let mut class = 0;
            // BFQ_CL_IDLE_TIMEOUT (HZ/5): serve the idle class if it waited that long.
            if self.sds[sd].class_idle_last_service + i64::from(hz / 5) < jiffies {
                if !self.sds[sd].st[CLASS_IDLE].active.is_empty() {
                    class = CLASS_IDLE;
                }
                self.sds[sd].class_idle_last_service = jiffies;
            }
            let mut found = None;
            for c in class..CLASSES {
                if let Some(e) = self.lookup_in_tree(sd, c) {
                    found = Some(e);
                    break;
                }
            }
            let e = found?;
            self.extract(e);
            self.sds[sd].in_service = Some(e);
            match (self.ents[e as usize].my_sd, self.ents[e as usize].queue) {
                (Some(child), _) => sd = child,
                (None, Some(q)) => return Some(q),
                (None, None) => return None,
            }
        }
    }

    /// Each tree's weight sum is the weight of the entities counted in it,
    /// and each tree is keyed by its entities' finish stamps (for `check`).
    pub fn check(&self) -> Result<(), String> {
        let mut sums = vec![[0u64; CLASSES]; self.sds.len()];
        for e in self.ents.iter().filter(|e| e.on_st) {
            sums[e.sd][e.class] += e.weight;
        }
        for (i, sd) in self.sds.iter().enumerate() {
            // A group with an active or in-service child is itself active or
            // in service in its parent.
            let has_work = sd.in_service.is_some() || sd.st.iter().any(|st| !st.active.is_empty());
            if let Some(g) = sd.entity
                && has_work
            {
                let ge = &self.ents[g as usize];
                let serving = self.sds[ge.sd].in_service == Some(g);
                if !(ge.tree == Tree::Active || serving) {
                    return Err(format!("bfq: group {i} has work but its entity is {:?}, not in service", ge.tree));
                }
            }
            for (c, st) in sd.st.iter().enumerate() {
                if sums[i][c] != st.wsum {
                    return Err(format!(
                        "bfq: group {i} class {c} wsum {} but its entities weigh {}",
                        st.wsum, sums[i][c]
                    ));
                }
                for &(f, e) in st.active.iter().chain(st.idle.iter()) {
                    if self.ents[e as usize].finish != f {
                        return Err(format!(
                            "bfq: entity {e} keyed at finish {f}, has {}",
                            self.ents[e as usize].finish
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Root plus one group (weight 100) holding three BE queues of budget
    /// 1000, all active, the group and its first queue in service.
    fn group_of_three() -> (Wf2q, [u32; 3]) {
        let mut w = Wf2q::new(&[(None, 0), (Some(0), 100)], 0);
        let qs = [0, 1, 2].map(|i| {
            let e = w.add(1, 100, 1, Some(i));
            w.ents[e as usize].budget = 1000;
            w.activate(e);
            e
        });
        assert_eq!(w.next_queue(0, 1000), Some(0));
        w.served(qs[0], 300);
        w.check().unwrap();
        (w, qs)
    }

    /// `__bfq_deactivate_entity` of an active queue not in service (a merge
    /// emptied it): it leaves the active tree under the key it was filed by.
    #[test]
    fn deactivating_a_queue_not_in_service_unfiles_it() {
        let (mut w, qs) = group_of_three();
        w.deactivate(qs[1], true);
        w.check().unwrap();
        assert_ne!(w.ents[qs[1] as usize].tree, Tree::Active);
    }

    /// `__bfq_requeue_entity` of the in-service group twice: the first puts
    /// it back on its active tree while still in service, the second must
    /// take it off before its stamps move.
    #[test]
    fn requeueing_the_in_service_group_twice_keeps_the_tree_keyed() {
        let (mut w, qs) = group_of_three();
        let g = w.sds[1].entity.unwrap();
        w.deactivate(qs[1], true);
        assert_eq!((w.ents[g as usize].tree, w.sds[0].in_service), (Tree::Active, Some(g)));
        w.deactivate(qs[2], true);
        w.check().unwrap();
    }
}
