//! The EEVDF timeline: queued entities in an augmented balanced tree, so that
//! `__pick_eevdf` is O(log n) instead of a scan.
//!
//! Linux keeps each `cfs_rq`'s queued entities (not `curr`) in an augmented
//! rbtree (kernel/sched/fair.c):
//! - 6.6 orders it by vruntime and augments each node with the `min_deadline`
//!   of its subtree; `__pick_eevdf` returns the eligible entity with the
//!   earliest deadline ([`EevdfTree::earliest_deadline_eligible`]).
//! - 6.12+ orders it by deadline and augments each node with the
//!   `min_vruntime` and `min_slice` of its subtree; `__pick_eevdf` returns the
//!   first eligible entity in deadline order ([`EevdfTree::first_eligible`]).
//!
//! Here the tree is a treap ordered by `(key, seq)`: the caller chooses the key
//! (vruntime on 6.6, deadline on 6.12+) and `seq`, an insertion sequence number,
//! breaks ties so that equal keys go right, as `rb_add_augmented_cached` does.
//! Node priorities are a fixed hash (splitmix64) of an insertion counter, so the
//! shape — and every answer — depends only on the sequence of operations: no
//! randomness source and no hash map. Nodes live in a `Vec` arena indexed by
//! `u32`, with an intrusive free list; once the arena has held the largest
//! queue size, inserts and removes never allocate.
//!
//! Each node keeps, over its subtree: `min_vruntime`, `max_vruntime`,
//! `min_deadline` and `min_slice`.
//!
//! Eligibility (`entity_eligible`: `avg >= (v - min_vruntime) * load`) is a
//! predicate on vruntime, monotone: true up to some threshold, false above.
//! The caller passes it as a closure; a subtree holds an eligible entity iff
//! its `min_vruntime` is eligible, and all its entities are eligible iff its
//! `max_vruntime` is.
//!
//! Complexity, with `d` the tree depth (expected O(log n) for a treap):
//! - `insert`, `remove`, `first`: O(d); `len`, `min_vruntime`, `min_slice`: O(1).
//! - `first_eligible`: O(d), one root-to-leaf descent.
//! - `earliest_deadline_eligible`: a left-to-right search that skips subtrees
//!   with no eligible entity (by `min_vruntime`) or no deadline earlier than the
//!   best found so far (by `min_deadline`), and takes a subtree that is wholly
//!   eligible (by `max_vruntime`) through its `min_deadline` in O(d). When the
//!   key is vruntime (6.6), the partially eligible subtrees lie on one path:
//!   O(d). When the key is deadline, the first eligible entity found ends the
//!   search: O(d). For an arbitrary key order it is still correct, but can
//!   visit O(n) nodes when eligible and ineligible entities interleave.

use crate::ids::EntityId;

/// One queued entity, as the tree orders and augments it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Item {
    /// The ordering key: vruntime (6.6) or deadline (6.12+).
    pub key: i64,
    /// Tie-break among equal keys (an insertion sequence number); `(key, seq)` is unique.
    pub seq: u64,
    pub se: EntityId,
    pub vruntime: i64,
    pub deadline: i64,
    pub slice: u64,
}

impl Item {
    fn order(&self) -> (i64, u64) {
        (self.key, self.seq)
    }
}

/// No node: the empty subtree, and the end of the free list.
const NIL: u32 = u32::MAX;

#[derive(Clone, Debug)]
struct Node {
    item: Item,
    /// Left child; for a free node, the next free node.
    left: u32,
    right: u32,
    /// Heap priority: a parent's is at least its children's.
    prio: u64,
    min_vruntime: i64,
    max_vruntime: i64,
    min_deadline: i64,
    min_slice: u64,
}

/// The timeline of one run queue: see the module documentation.
#[derive(Clone, Debug)]
pub struct EevdfTree {
    nodes: Vec<Node>,
    root: u32,
    /// Head of the free list, threaded through `Node::left`.
    free: u32,
    len: usize,
    /// Counts inserts; its hash is the next node's priority.
    inserts: u64,
}

impl Default for EevdfTree {
    fn default() -> Self {
        Self::new()
    }
}

/// splitmix64's finaliser: a fixed, well-mixed priority for the n-th insert.
fn priority(n: u64) -> u64 {
    let mut z = n.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl EevdfTree {
    pub fn new() -> EevdfTree {
        EevdfTree { nodes: Vec::new(), root: NIL, free: NIL, len: 0, inserts: 0 }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Inserts `item`, ordered by `(key, seq)` ascending.
    ///
    /// Panics if an item with the same `(key, seq)` is queued (a caller bug).
    pub fn insert(&mut self, item: Item) {
        let prio = priority(self.inserts);
        self.inserts = self.inserts.wrapping_add(1);
        let node = Node {
            item,
            left: NIL,
            right: NIL,
            prio,
            min_vruntime: item.vruntime,
            max_vruntime: item.vruntime,
            min_deadline: item.deadline,
            min_slice: item.slice,
        };
        let n = if self.free == NIL {
            let n = u32::try_from(self.nodes.len()).ok().filter(|&n| n != NIL);
            let n = n.expect("EevdfTree: more than u32::MAX - 1 nodes");
            self.nodes.push(node);
            n
        } else {
            let n = self.free;
            self.free = self.nodes[n as usize].left;
            self.nodes[n as usize] = node;
            n
        };
        self.root = self.insert_at(self.root, n);
        self.len += 1;
    }

    /// Removes and returns the item with this `(key, seq)`, if queued.
    pub fn remove(&mut self, key: i64, seq: u64) -> Option<Item> {
        let (root, removed) = self.remove_at(self.root, (key, seq));
        self.root = root;
        if removed == NIL {
            return None;
        }
        let node = &mut self.nodes[removed as usize];
        node.left = self.free;
        node.right = NIL;
        self.free = removed;
        self.len -= 1;
        Some(node.item)
    }

    /// The leftmost item in `(key, seq)` order.
    pub fn first(&self) -> Option<&Item> {
        let mut t = self.root;
        if t == NIL {
            return None;
        }
        while self.nodes[t as usize].left != NIL {
            t = self.nodes[t as usize].left;
        }
        Some(&self.nodes[t as usize].item)
    }

    /// The smallest vruntime over all items.
    pub fn min_vruntime(&self) -> Option<i64> {
        self.node(self.root).map(|n| n.min_vruntime)
    }

    /// The smallest slice over all items.
    pub fn min_slice(&self) -> Option<u64> {
        self.node(self.root).map(|n| n.min_slice)
    }

    /// 6.12+ `__pick_eevdf`: the leftmost item (in `(key, seq)` order) whose
    /// vruntime is eligible. `eligible` must be monotone (true up to a
    /// threshold, false above). O(depth).
    pub fn first_eligible(&self, eligible: impl Fn(i64) -> bool) -> Option<&Item> {
        let mut t = self.root;
        while let Some(n) = self.node(t) {
            // The left subtree holds an eligible item iff its minimum is eligible.
            if self.node(n.left).is_some_and(|l| eligible(l.min_vruntime)) {
                t = n.left;
            } else if eligible(n.item.vruntime) {
                return Some(&n.item);
            } else if self.node(n.right).is_some_and(|r| eligible(r.min_vruntime)) {
                t = n.right;
            } else {
                return None;
            }
        }
        None
    }

    /// 6.6 `__pick_eevdf`: among items whose vruntime is eligible, the one with
    /// the smallest deadline; among equal deadlines, the leftmost in `(key, seq)`
    /// order. `eligible` must be monotone. See the module documentation for the
    /// complexity.
    pub fn earliest_deadline_eligible(&self, eligible: impl Fn(i64) -> bool) -> Option<&Item> {
        let mut best = Best::None;
        self.search_deadline(self.root, &eligible, &mut best);
        match best {
            Best::None => None,
            Best::Node(n) => Some(&self.nodes[n as usize].item),
            Best::Subtree(t) => Some(self.leftmost_min_deadline(t)),
        }
    }

    /// The items in `(key, seq)` order.
    pub fn iter(&self) -> impl Iterator<Item = &Item> + '_ {
        let mut stack = Vec::new();
        let mut t = self.root;
        std::iter::from_fn(move || {
            while t != NIL {
                stack.push(t);
                t = self.nodes[t as usize].left;
            }
            let n = stack.pop()?;
            t = self.nodes[n as usize].right;
            Some(&self.nodes[n as usize].item)
        })
    }

    fn node(&self, t: u32) -> Option<&Node> {
        if t == NIL { None } else { Some(&self.nodes[t as usize]) }
    }

    /// Recomputes `t`'s augmented fields from its item and children.
    fn pull(&mut self, t: u32) {
        let (left, right) = {
            let n = &self.nodes[t as usize];
            (n.left, n.right)
        };
        let item = self.nodes[t as usize].item;
        let (mut min_v, mut max_v, mut min_d, mut min_s) = (item.vruntime, item.vruntime, item.deadline, item.slice);
        for c in [left, right] {
            if let Some(c) = self.node(c) {
                min_v = min_v.min(c.min_vruntime);
                max_v = max_v.max(c.max_vruntime);
                min_d = min_d.min(c.min_deadline);
                min_s = min_s.min(c.min_slice);
            }
        }
        let n = &mut self.nodes[t as usize];
        n.min_vruntime = min_v;
        n.max_vruntime = max_v;
        n.min_deadline = min_d;
        n.min_slice = min_s;
    }

    /// Inserts node `n` into the subtree `t`; returns the subtree's new root.
    fn insert_at(&mut self, t: u32, n: u32) -> u32 {
        if t == NIL {
            return n;
        }
        let key = self.nodes[n as usize].item.order();
        let here = self.nodes[t as usize].item.order();
        assert!(key != here, "EevdfTree::insert: (key, seq) {key:?} is already queued");
        if self.nodes[n as usize].prio > self.nodes[t as usize].prio {
            let (l, r) = self.split(t, key);
            let node = &mut self.nodes[n as usize];
            node.left = l;
            node.right = r;
            self.pull(n);
            return n;
        }
        if key < here {
            let l = self.insert_at(self.nodes[t as usize].left, n);
            self.nodes[t as usize].left = l;
        } else {
            let r = self.insert_at(self.nodes[t as usize].right, n);
            self.nodes[t as usize].right = r;
        }
        self.pull(t);
        t
    }

    /// Splits subtree `t` into the items ordered before `key` and those after.
    fn split(&mut self, t: u32, key: (i64, u64)) -> (u32, u32) {
        if t == NIL {
            return (NIL, NIL);
        }
        let here = self.nodes[t as usize].item.order();
        assert!(key != here, "EevdfTree::insert: (key, seq) {key:?} is already queued");
        if here < key {
            let (l, r) = self.split(self.nodes[t as usize].right, key);
            self.nodes[t as usize].right = l;
            self.pull(t);
            (t, r)
        } else {
            let (l, r) = self.split(self.nodes[t as usize].left, key);
            self.nodes[t as usize].left = r;
            self.pull(t);
            (l, t)
        }
    }

    /// Joins subtrees `a` and `b`, every item of `a` ordered before `b`'s.
    fn merge(&mut self, a: u32, b: u32) -> u32 {
        if a == NIL {
            return b;
        }
        if b == NIL {
            return a;
        }
        if self.nodes[a as usize].prio > self.nodes[b as usize].prio {
            let r = self.merge(self.nodes[a as usize].right, b);
            self.nodes[a as usize].right = r;
            self.pull(a);
            a
        } else {
            let l = self.merge(a, self.nodes[b as usize].left);
            self.nodes[b as usize].left = l;
            self.pull(b);
            b
        }
    }

    /// Unlinks the node with `key` from subtree `t`: returns the subtree's new
    /// root and the unlinked node (`NIL` if absent).
    fn remove_at(&mut self, t: u32, key: (i64, u64)) -> (u32, u32) {
        if t == NIL {
            return (NIL, NIL);
        }
        let (left, right) = (self.nodes[t as usize].left, self.nodes[t as usize].right);
        let here = self.nodes[t as usize].item.order();
        if key == here {
            return (self.merge(left, right), t);
        }
        let removed = if key < here {
            let (l, removed) = self.remove_at(left, key);
            self.nodes[t as usize].left = l;
            removed
        } else {
            let (r, removed) = self.remove_at(right, key);
            self.nodes[t as usize].right = r;
            removed
        };
        if removed != NIL {
            self.pull(t);
        }
        (t, removed)
    }

    /// The earliest-deadline search of [`Self::earliest_deadline_eligible`]
    /// over subtree `t`, in order, so that an equal deadline found later (to
    /// the right) never replaces `best`.
    fn search_deadline<F: Fn(i64) -> bool>(&self, t: u32, eligible: &F, best: &mut Best) {
        let Some(n) = self.node(t) else { return };
        if !eligible(n.min_vruntime) {
            return;
        }
        if self.best_deadline(*best).is_some_and(|d| n.min_deadline >= d) {
            return;
        }
        if eligible(n.max_vruntime) {
            // Wholly eligible, and strictly earlier than `best`.
            *best = Best::Subtree(t);
            return;
        }
        self.search_deadline(n.left, eligible, best);
        if eligible(n.item.vruntime) && self.best_deadline(*best).is_none_or(|d| n.item.deadline < d) {
            *best = Best::Node(t);
        }
        self.search_deadline(n.right, eligible, best);
    }

    fn best_deadline(&self, best: Best) -> Option<i64> {
        match best {
            Best::None => None,
            Best::Node(n) => Some(self.nodes[n as usize].item.deadline),
            Best::Subtree(t) => Some(self.nodes[t as usize].min_deadline),
        }
    }

    /// The leftmost item of subtree `t` whose deadline is the subtree's `min_deadline`.
    fn leftmost_min_deadline(&self, mut t: u32) -> &Item {
        loop {
            let n = &self.nodes[t as usize];
            if self.node(n.left).is_some_and(|l| l.min_deadline == n.min_deadline) {
                t = n.left;
            } else if n.item.deadline == n.min_deadline {
                return &n.item;
            } else {
                t = n.right;
            }
        }
    }
}

/// The best candidate so far of the earliest-deadline search.
#[derive(Clone, Copy, Debug)]
enum Best {
    None,
    /// One node (its own item).
    Node(u32),
    /// A wholly eligible subtree: its leftmost item with its `min_deadline`.
    Subtree(u32),
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    impl EevdfTree {
        /// Checks order, heap priorities, augmented fields, `len` and the free
        /// list; panics on the first violation.
        fn check_invariants(&self) {
            let mut count = 0;
            self.check_subtree(self.root, None, None, u64::MAX, &mut count);
            assert_eq!(count, self.len, "len");
            let mut free = 0;
            let mut f = self.free;
            while f != NIL {
                free += 1;
                f = self.nodes[f as usize].left;
            }
            assert_eq!(free + self.len, self.nodes.len(), "every node is live or free");
        }

        fn check_subtree(
            &self,
            t: u32,
            lo: Option<(i64, u64)>,
            hi: Option<(i64, u64)>,
            prio_max: u64,
            count: &mut usize,
        ) -> Option<(i64, i64, i64, u64)> {
            let n = self.node(t)?;
            *count += 1;
            let key = n.item.order();
            assert!(lo.is_none_or(|lo| lo < key) && hi.is_none_or(|hi| key < hi), "order");
            assert!(n.prio <= prio_max, "heap");
            let mut agg = (n.item.vruntime, n.item.vruntime, n.item.deadline, n.item.slice);
            for (c, lo, hi) in [(n.left, lo, Some(key)), (n.right, Some(key), hi)] {
                if let Some(a) = self.check_subtree(c, lo, hi, n.prio, count) {
                    agg = (agg.0.min(a.0), agg.1.max(a.1), agg.2.min(a.2), agg.3.min(a.3));
                }
            }
            assert_eq!(agg, (n.min_vruntime, n.max_vruntime, n.min_deadline, n.min_slice), "augmented");
            Some(agg)
        }
    }

    fn item(key: i64, seq: u64, vruntime: i64, deadline: i64, slice: u64) -> Item {
        Item { key, seq, se: EntityId(seq as u32), vruntime, deadline, slice }
    }

    /// The sorted-`Vec` model answers every query by a scan.
    fn model_first_eligible(model: &[Item], t: i64) -> Option<Item> {
        model.iter().find(|i| i.vruntime <= t).copied()
    }

    fn model_earliest_deadline(model: &[Item], t: i64) -> Option<Item> {
        let mut best: Option<Item> = None;
        for i in model.iter().filter(|i| i.vruntime <= t) {
            if best.is_none_or(|b| i.deadline < b.deadline) {
                best = Some(*i);
            }
        }
        best
    }

    /// How the key relates to the item, as the kernels use it (plus any order).
    #[derive(Clone, Copy, Debug)]
    enum KeyIs {
        Vruntime,
        Deadline,
        Unrelated,
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert {
            key: i64,
            vruntime: i64,
            deadline: i64,
            slice: u64,
        },
        /// Removes the queued item at this index (modulo the length).
        Remove(usize),
        /// Removes a `(key, seq)` that may not be queued.
        RemoveMaybe(i64, u64),
        Query(i64),
    }

    fn small_or_any() -> impl Strategy<Value = i64> {
        // Mostly small values, so keys, vruntimes and deadlines tie often.
        prop_oneof![8 => -10i64..10, 1 => any::<i64>()]
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            6 => (small_or_any(), small_or_any(), small_or_any(), prop_oneof![1u64..5, any::<u64>()])
                .prop_map(|(key, vruntime, deadline, slice)| Op::Insert { key, vruntime, deadline, slice }),
            2 => any::<usize>().prop_map(Op::Remove),
            1 => (-10i64..10, 0u64..400).prop_map(|(k, s)| Op::RemoveMaybe(k, s)),
            2 => small_or_any().prop_map(Op::Query),
        ]
    }

    fn check_queries(tree: &EevdfTree, model: &[Item], thresholds: &[i64]) {
        tree.check_invariants();
        assert_eq!(tree.len(), model.len());
        assert_eq!(tree.is_empty(), model.is_empty());
        assert!(tree.iter().eq(model.iter()), "in-order iteration");
        assert_eq!(tree.first(), model.first());
        assert_eq!(tree.min_vruntime(), model.iter().map(|i| i.vruntime).min());
        assert_eq!(tree.min_slice(), model.iter().map(|i| i.slice).min());
        for &t in thresholds {
            let eligible = |v: i64| v <= t;
            assert_eq!(tree.first_eligible(eligible).copied(), model_first_eligible(model, t), "first_eligible t={t}");
            assert_eq!(
                tree.earliest_deadline_eligible(eligible).copied(),
                model_earliest_deadline(model, t),
                "earliest_deadline_eligible t={t}"
            );
        }
    }

    fn run(key_is: KeyIs, ops: &[Op]) {
        let mut tree = EevdfTree::new();
        let mut model: Vec<Item> = Vec::new();
        let mut seq = 0u64;
        for op in ops {
            match *op {
                Op::Insert { key, vruntime, deadline, slice } => {
                    if model.len() >= 200 {
                        continue;
                    }
                    let key = match key_is {
                        KeyIs::Vruntime => vruntime,
                        KeyIs::Deadline => deadline,
                        KeyIs::Unrelated => key,
                    };
                    let it = item(key, seq, vruntime, deadline, slice);
                    seq += 1;
                    tree.insert(it);
                    let at = model.partition_point(|m| m.order() < it.order());
                    model.insert(at, it);
                }
                Op::Remove(i) => {
                    if model.is_empty() {
                        assert_eq!(tree.remove(0, 0), None);
                        continue;
                    }
                    let it = model.remove(i % model.len());
                    assert_eq!(tree.remove(it.key, it.seq), Some(it));
                }
                Op::RemoveMaybe(k, s) => {
                    let at = model.iter().position(|m| m.order() == (k, s));
                    let expected = at.map(|at| model.remove(at));
                    assert_eq!(tree.remove(k, s), expected);
                }
                Op::Query(t) => {
                    // Around every queued vruntime, and the extremes, besides `t`.
                    let mut ts = vec![t, i64::MIN, i64::MAX];
                    for m in model.iter().take(8) {
                        ts.extend([m.vruntime.saturating_sub(1), m.vruntime, m.vruntime.saturating_add(1)]);
                    }
                    check_queries(&tree, &model, &ts);
                }
            }
            check_queries(&tree, &model, &[-3, 0, 3]);
        }
    }

    proptest! {
        #[test]
        fn matches_a_sorted_vec_keyed_by_vruntime(ops in prop::collection::vec(op(), 0..700)) {
            run(KeyIs::Vruntime, &ops);
        }

        #[test]
        fn matches_a_sorted_vec_keyed_by_deadline(ops in prop::collection::vec(op(), 0..700)) {
            run(KeyIs::Deadline, &ops);
        }

        #[test]
        fn matches_a_sorted_vec_with_any_key(ops in prop::collection::vec(op(), 0..700)) {
            run(KeyIs::Unrelated, &ops);
        }
    }

    #[test]
    fn empty_tree_answers_none() {
        let tree = EevdfTree::default();
        assert!(tree.is_empty());
        assert_eq!(tree.first(), None);
        assert_eq!(tree.min_vruntime(), None);
        assert_eq!(tree.min_slice(), None);
        assert_eq!(tree.first_eligible(|_| true), None);
        assert_eq!(tree.earliest_deadline_eligible(|_| true), None);
        assert_eq!(tree.iter().count(), 0);
    }

    #[test]
    fn picks_follow_each_kernel() {
        // Keyed by vruntime (6.6): A is leftmost but B, also eligible, has the
        // earlier deadline; C has the earliest deadline but is not eligible.
        let mut tree = EevdfTree::new();
        tree.insert(item(10, 0, 10, 50, 3));
        tree.insert(item(20, 1, 20, 40, 3));
        tree.insert(item(30, 2, 30, 30, 3));
        let eligible = |v: i64| v <= 25;
        assert_eq!(tree.earliest_deadline_eligible(eligible).map(|i| i.seq), Some(1));
        assert_eq!(tree.first_eligible(eligible).map(|i| i.seq), Some(0));
        // Keyed by deadline (6.12+): the first eligible in deadline order is B.
        let mut tree = EevdfTree::new();
        for i in [item(50, 0, 10, 50, 3), item(40, 1, 20, 40, 2), item(30, 2, 30, 30, 1)] {
            tree.insert(i);
        }
        assert_eq!(tree.first_eligible(eligible).map(|i| i.seq), Some(1));
        assert_eq!(tree.first().map(|i| i.seq), Some(2));
        assert_eq!(tree.min_slice(), Some(1));
        assert_eq!(tree.first_eligible(|v| v < 10), None);
    }

    #[test]
    fn steady_size_reuses_freed_nodes() {
        let mut tree = EevdfTree::new();
        let mut seq = 0u64;
        let mut queued = std::collections::VecDeque::new();
        let next = |seq: &mut u64| {
            *seq += 1;
            let x = priority(*seq) as i64 % 1000;
            item(x, *seq, x, x.wrapping_mul(7) % 1000, 1 + (*seq % 5))
        };
        for _ in 0..64 {
            let it = next(&mut seq);
            tree.insert(it);
            queued.push_back(it);
        }
        let (len, capacity) = (tree.nodes.len(), tree.nodes.capacity());
        for _ in 0..10_000 {
            let old = queued.pop_front().expect("64 queued");
            assert_eq!(tree.remove(old.key, old.seq), Some(old));
            let it = next(&mut seq);
            tree.insert(it);
            queued.push_back(it);
        }
        tree.check_invariants();
        assert_eq!(tree.len(), 64);
        assert_eq!(tree.nodes.len(), len, "the arena did not grow");
        assert_eq!(tree.nodes.capacity(), capacity, "the arena did not reallocate");
    }

    #[test]
    fn sorted_inserts_keep_the_tree_shallow() {
        fn depth(tree: &EevdfTree, t: u32) -> usize {
            tree.node(t).map_or(0, |n| 1 + depth(tree, n.left).max(depth(tree, n.right)))
        }
        // Ascending keys, the worst case of an unbalanced search tree (a list).
        let mut tree = EevdfTree::new();
        for s in 0..4096u64 {
            tree.insert(item(s as i64, s, s as i64, s as i64, 1));
        }
        tree.check_invariants();
        // A treap's expected depth is about 3 ln n (25 here); log2(4096) = 12.
        let d = depth(&tree, tree.root);
        assert!((12..=48).contains(&d), "depth {d}");
    }

    #[test]
    fn equal_deadlines_pick_the_leftmost() {
        let mut tree = EevdfTree::new();
        for s in 0..50u64 {
            tree.insert(item(s as i64, s, 100 - s as i64, 7, 1));
        }
        // Eligible: vruntime <= 80, i.e. seq >= 20; all deadlines equal.
        assert_eq!(tree.earliest_deadline_eligible(|v| v <= 80).map(|i| i.seq), Some(20));
        assert_eq!(tree.first_eligible(|v| v <= 80).map(|i| i.seq), Some(20));
    }
}
