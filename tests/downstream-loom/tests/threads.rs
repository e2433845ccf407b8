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
