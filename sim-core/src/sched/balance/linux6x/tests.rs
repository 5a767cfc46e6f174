//! The engine's side of the 6.x policy: what it does to `rq->cfs_tasks`.
//! (Hand-computed cases of each rule on a mock machine are in
//! `lb_tests.rs` and `wake_tests.rs`.)

use crate::engine::{Simulation, cfs_tasks_order};
use crate::ids::{CpuId, TaskId};
use crate::scenario::Scenario;

/// Three hogs on one CPU, forked in order a, b, c: each enqueue puts its
/// task at the head of `cfs_tasks` (`account_entity_enqueue`: list_add),
/// so 4.4 keeps c, b, a whoever runs. 6.x moves the picked task to the
/// head at every pick (6.6 `pick_next_task_fair`, 6.12+
/// `__set_next_task_fair`: `list_move`), so the running task heads the
/// list and the tail is the least recently run, where `detach_tasks`
/// starts.
#[test]
fn the_picked_task_heads_cfs_tasks_from_6_x() {
    for (version, mru) in [("4.4", false), ("6.6", true), ("6.12", true), ("6.18", true)] {
        let toml = format!(
            "schema = 1\nseed = 1\nduration = \"50ms\"\n[kernel]\nversion = \"{version}\"\n[machine]\ncpus = 1\nhz = 1000\n[[tasks]]\nname = \"a\"\nprogram = [{{ run = \"1s\" }}]\n[[tasks]]\nname = \"b\"\nprogram = [{{ run = \"1s\" }}]\n[[tasks]]\nname = \"c\"\nprogram = [{{ run = \"1s\" }}]\n"
        );
        let mut sim = Simulation::new(&Scenario::from_toml("mru.toml", &toml).unwrap());
        sim.run_to_end();
        let order = cfs_tasks_order(&sim, CpuId(0));
        let curr = sim.curr(CpuId(0)).expect("a hog runs");
        assert_eq!(order.len(), 3, "{version}");
        if mru {
            assert_eq!(order[0], curr, "{version}: the running task heads the list ({order:?})");
        } else {
            assert_eq!(order, [TaskId(2), TaskId(1), TaskId(0)], "{version}: enqueue order, newest first");
        }
    }
}
