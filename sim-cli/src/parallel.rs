//! Independent runs on worker threads, results in their planned order.
//! `compare` (its runs) and `sweep` (its points) share it: the runs are
//! deterministic, so threads decide only *when* each one runs, never what it
//! computes, and the output is the same bytes for any number of threads.
//!
//! A worker that cannot be started (a pids cgroup limit, `ulimit -u`, memory
//! for its stack) is not an error: the threads already started and the
//! calling thread itself share the work, with a note on stderr.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Most worker threads `compare --jobs` and `sweep --jobs` accept.
pub const JOBS_MAX: usize = 256;

/// `f` of every item of `items` on `jobs` threads (at least one, at most one
/// per item), each taking the next item from a shared counter; the results
/// in `items` order. `what` names the workers in messages.
pub fn map_in_order<T: Sync, R: Send>(items: &[T], jobs: usize, what: &str, f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    map_in_order_with(items, jobs, what, f, &|_| None)
}

/// [`map_in_order`], where `refuse(i)` may fail the spawn of worker `i` as
/// the OS would (tests inject failures so). The calling thread works too,
/// so every item runs even when no worker starts.
fn map_in_order_with<T: Sync, R: Send>(
    items: &[T],
    jobs: usize,
    what: &str,
    f: impl Fn(&T) -> R + Sync,
    refuse: &dyn Fn(usize) -> Option<std::io::Error>,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let work = || {
        let mut mine = Vec::new();
        // Bounded: each turn takes a new index; it stops past the last item.
        loop {
            let k = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(k) else { break mine };
            mine.push((k, f(item)));
        }
    };
    let threads = jobs.min(items.len()).max(1);
    let mut slots: Vec<(usize, R)> = std::thread::scope(|s| {
        // The calling thread is one of the `threads` workers.
        let mut workers = Vec::new();
        for i in 1..threads {
            let b = std::thread::Builder::new().name(format!("{what}-{i}"));
            let spawned = match refuse(i) {
                Some(e) => Err(e),
                None => b.spawn_scoped(s, work),
            };
            match spawned {
                Ok(h) => workers.push(h),
                Err(e) => {
                    eprintln!(
                        "note: {what}: could not start worker thread {} of {threads} ({e}); running on {} \
                         thread(s)",
                        i + 1,
                        workers.len() + 1
                    );
                    break;
                }
            }
        }
        let mut all = work();
        for w in workers {
            // A panic in `f` is a bug; re-raise it here with its own message.
            all.extend(w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        }
        all
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

    /// Defect: a worker that could not be spawned (`sweep --jobs 1024`
    /// under a pids limit) panicked the whole command. Spawns failing from
    /// the first, or after two, still give every result, in order.
    #[test]
    fn a_failed_spawn_falls_back_to_fewer_threads() {
        let items: Vec<u64> = (0..50).collect();
        let want: Vec<u64> = items.iter().map(|x| x * 3).collect();
        for allowed in [0usize, 2] {
            let started = AtomicUsize::new(0);
            let refuse = |_| {
                (started.fetch_add(1, Ordering::Relaxed) >= allowed)
                    .then(|| std::io::Error::new(std::io::ErrorKind::WouldBlock, "pids limit"))
            };
            let got = map_in_order_with(&items, 16, "test", |x| x * 3, &refuse);
            assert_eq!(got, want, "{allowed} spawns allowed");
            assert_eq!(started.load(Ordering::Relaxed), allowed + 1);
        }
    }
}
