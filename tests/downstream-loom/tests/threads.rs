//! The scheduler on real threads (a normal build, no loom): a binary tree of
//! tasks, every one run exactly once, and neither worker stopping early.
#![cfg(not(chase_lev_loom))]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use downstream_loom::{run, Termination};

/// Task `i` spawns tasks `2i + 1` and `2i + 2` while they are below this.
const TASKS: usize = 4_095;

#[test]
fn every_task_of_a_tree_runs_once_on_two_threads() {
    let ran: Arc<Vec<AtomicBool>> = Arc::new((0..TASKS).map(|_| AtomicBool::new(false)).collect());
    let seen = Arc::clone(&ran);
    let report = run(
        vec![0],
        move |task: usize| {
            assert!(
                !seen[task].swap(true, Ordering::Relaxed),
                "task {task} ran twice"
            );
            [2 * task + 1, 2 * task + 2]
                .into_iter()
                .filter(|&child| child < TASKS)
                .collect()
        },
        Termination::ChildrenFirst,
    );
    assert!(
        ran.iter().all(|task| task.load(Ordering::Relaxed)),
        "a task never ran"
    );
    assert_eq!(report.finished, TASKS);
    assert_eq!(report.finished_when_stopped, [TASKS, TASKS]);
}

mod pool {
    //! chase-lev's example pool on real threads: the claims of its docs that
    //! the loom model does not cover (more workers, a panicking task, a pool
    //! dropped without `join`).

    use std::panic::{self, AssertUnwindSafe};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    use downstream_loom::pool::Pool;

    /// Tasks `0..TASKS`, task `i` spawning `2i + 1` and `2i + 2`, with the
    /// marks of the tasks run.
    const TASKS: usize = 1_023;

    fn tree_pool(
        workers: usize,
        panicking_task: Option<usize>,
    ) -> (Pool<usize>, Arc<Vec<AtomicBool>>) {
        let ran: Arc<Vec<AtomicBool>> =
            Arc::new((0..TASKS).map(|_| AtomicBool::new(false)).collect());
        let seen = Arc::clone(&ran);
        let pool = Pool::new(workers, move |task: usize, spawner| {
            assert!(
                !seen[task].swap(true, Ordering::Relaxed),
                "task {task} ran twice"
            );
            for child in [2 * task + 1, 2 * task + 2] {
                if child < TASKS {
                    spawner.spawn(child);
                }
            }
            assert_ne!(Some(task), panicking_task, "the planted panic");
        });
        (pool, ran)
    }

    fn not_run(ran: &[AtomicBool]) -> Vec<usize> {
        (0..TASKS)
            .filter(|&task| !ran[task].load(Ordering::Relaxed))
            .collect()
    }

    #[test]
    fn every_task_of_a_tree_runs_once_on_one_to_eight_workers() {
        for workers in 1..=8 {
            for _ in 0..20 {
                let (pool, ran) = tree_pool(workers, None);
                pool.submit(0);
                let ran_by_worker = pool.join();
                assert_eq!(not_run(&ran), Vec::<usize>::new());
                assert_eq!(ran_by_worker.len(), workers);
                assert_eq!(ran_by_worker.iter().sum::<usize>(), TASKS);
            }
        }
    }

    #[test]
    fn a_panicking_task_ends_its_worker_the_others_run_the_rest_and_join_panics() {
        let (pool, ran) = tree_pool(4, Some(0));
        pool.submit(0);
        let joined = panic::catch_unwind(AssertUnwindSafe(|| pool.join()));
        assert!(joined.is_err(), "join returned despite a task's panic");
        // Task 0 spawned its children before it panicked: they all ran.
        assert_eq!(not_run(&ran), Vec::<usize>::new());
    }

    #[test]
    fn a_pool_dropped_without_join_runs_its_tasks() {
        let (pool, ran) = tree_pool(3, None);
        pool.submit(0);
        drop(pool);
        assert_eq!(not_run(&ran), Vec::<usize>::new());
    }
}
