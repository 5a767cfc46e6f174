//! Independent runs on worker threads, results in their planned order.
//! `compare` (its runs) and `sweep` (its points) share it: the runs are
//! deterministic, so threads decide only *when* each one runs, never what it
//! computes, and the output is the same bytes for any number of threads.

use std::sync::atomic::{AtomicUsize, Ordering};

/// `f` of every item of `items` on `jobs` threads (at least one, at most one
/// per item), each taking the next item from a shared counter; the results
/// in `items` order. `what` names the workers in the message of a panic.
pub fn map_in_order<T: Sync, R: Send>(items: &[T], jobs: usize, what: &str, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let mut slots: Vec<(usize, R)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..jobs.min(items.len()).max(1))
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(k) else { break mine };
                        mine.push((k, f(item)));
                    }
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap_or_else(|_| panic!("a {what} worker panicked"))).collect()
    });
    slots.sort_by_key(|(k, _)| *k);
    slots.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Items of very different cost come back in their order, whatever the
    /// number of threads.
    #[test]
    fn results_keep_the_items_order() {
        let items: Vec<u64> = (0..40).map(|i| (i * 7919) % 97).collect();
        let slow_square = |&x: &u64| (0..x * 1000).fold(0u64, |a, _| a.wrapping_add(1)) / 1000 * x;
        let want: Vec<u64> = items.iter().map(|x| x * x).collect();
        for jobs in [1, 2, 8, 100] {
            assert_eq!(map_in_order(&items, jobs, "test", slow_square), want, "{jobs} jobs");
        }
        assert!(map_in_order(&[] as &[u64], 4, "test", slow_square).is_empty());
    }
}
