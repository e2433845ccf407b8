//! The scheduler under loom, with chase-lev modelled inside it: run with
//! `RUSTFLAGS="--cfg chase_lev_loom" cargo test --release` (in a target
//! directory of its own: the cfg rebuilds everything).
//!
//! The model: task 0 runs on the first worker and spawns task 1, which
//! either worker may run (the second one steals it). In every interleaving
//! each task runs exactly once and neither worker stops before both tasks
//! have finished. The second test plants the bug of counting the parent as
//! finished before pushing its child, and asserts that the same model
//! catches it.
//!
//! The idle worker spins (pop, steal, read the counter, yield), which makes
//! the unbounded search too long for CI (over 10 minutes); the model runs
//! with at most 3 preemptions unless `LOOM_MAX_PREEMPTIONS` says otherwise.
#![cfg(chase_lev_loom)]

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::AtomicUsize as StdAtomicUsize;
use std::time::Instant;

use downstream_loom::{run, Termination};
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::sync::Arc;

/// The children of each task, by task number: task 0 spawns task 1.
const CHILDREN: &[&[usize]] = &[&[1], &[]];
const TASKS: usize = CHILDREN.len();

/// One execution: runs the task tree and checks both promises.
fn one_execution(termination: Termination) {
    // Bit `i` is set when task `i` has run.
    let ran = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&ran);
    let report = run(
        vec![0],
        move |task: usize| {
            let before = seen.fetch_or(1 << task, Ordering::Relaxed);
            assert_eq!(before & (1 << task), 0, "task {task} ran twice");
            CHILDREN[task].to_vec()
        },
        termination,
    );
    assert_eq!(
        ran.load(Ordering::Relaxed),
        (1 << TASKS) - 1,
        "a task never ran"
    );
    assert_eq!(report.finished, TASKS);
    for (worker, finished) in report.finished_when_stopped.into_iter().enumerate() {
        assert_eq!(
            finished, TASKS,
            "worker {worker} stopped while work remained: {finished} of {TASKS} tasks had finished"
        );
    }
}

/// The preemption bound unless `LOOM_MAX_PREEMPTIONS` is set.
const PREEMPTION_BOUND: usize = 3;

/// Explores every interleaving with at most `PREEMPTION_BOUND` preemptions
/// and returns how many loom ran, and the panic that ended the exploration.
fn explore(termination: Termination) -> (usize, Result<(), String>) {
    let executions = std::sync::Arc::new(StdAtomicUsize::new(0));
    let counter = std::sync::Arc::clone(&executions);
    let mut builder = loom::model::Builder::new();
    let bound = *builder.preemption_bound.get_or_insert(PREEMPTION_BOUND);
    let started = Instant::now();
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        builder.check(move || {
            counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            one_execution(termination);
        })
    }));
    let executions = executions.load(std::sync::atomic::Ordering::Relaxed);
    println!(
        "{termination:?}: {executions} interleavings (preemption bound {bound}) in {:.2} s",
        started.elapsed().as_secs_f64()
    );
    let outcome = outcome.map_err(|payload| {
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic without a message".to_string())
    });
    (executions, outcome)
}

#[test]
fn every_task_runs_once_and_no_worker_stops_while_work_remains() {
    let (_, outcome) = explore(Termination::ChildrenFirst);
    if let Err(violation) = outcome {
        panic!("the correct scheduler failed: {violation}");
    }
}

#[test]
fn the_model_catches_a_parent_counted_finished_before_its_child_is_pushed() {
    let (executions, outcome) = explore(Termination::ParentFirst);
    match outcome {
        Ok(()) => panic!(
            "the planted bug (Termination::ParentFirst) survived {executions} interleavings: \
             the model no longer checks the termination counter"
        ),
        Err(violation) => {
            println!("caught at interleaving {executions}: {violation}");
            assert!(
                violation.contains("stopped while work remained"),
                "the planted bug was caught for another reason: {violation}"
            );
        }
    }
}
