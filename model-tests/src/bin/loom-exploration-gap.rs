//! What loom 0.7 leaves out: two threads each make one steal, a load of a
//! shared index followed by a CAS on it (the shape of every steal and claim
//! in chase-lev). Under sequential consistency three outcomes are possible:
//! both load 0 (one CAS fails), the main thread's steal entirely first, or
//! the spawned thread's steal entirely first. Loom explores two of them.
//!
//! Loom's partial-order reduction finds a race through the last access of
//! a location only; the spawned thread's own load of the index, made just
//! before its CAS, hides the main thread's earlier load from that CAS, so
//! loom never schedules the CAS before that load (tokio-rs/loom#166 and
//! #392, open). A preemption bound adds backtracking points, and with the
//! steals on two spawned threads it then finds all three; with one of them
//! on the model's main thread it finds two at any bound. Shuttle's random
//! scheduler, which runs everything sequentially consistent, reaches all
//! three within its first schedules.
//!
//! Usage: `cargo run --release -p model-tests --bin loom-exploration-gap`
//! (a second). proofs-notes/limits.md#loom says what this means for the
//! model suite.

use std::collections::BTreeSet;
use std::sync::{Arc as StdArc, Mutex};

use loom::sync::atomic::{AtomicUsize, Ordering::*};
use loom::sync::Arc;

/// One steal: the index it read (load, then CAS from that value).
fn steal(index: &AtomicUsize, by: usize) -> usize {
    let seen = index.load(Acquire);
    let _ = index.compare_exchange(seen, seen + by, SeqCst, Relaxed);
    seen
}

/// The outcomes (first steal's reading, second steal's reading) loom
/// explores, and how many executions.
fn explore(both_spawned: bool, bound: Option<usize>) -> (usize, BTreeSet<(usize, usize)>) {
    let outcomes = StdArc::new(Mutex::new(BTreeSet::new()));
    let executions = StdArc::new(Mutex::new(0));
    let (seen, count) = (StdArc::clone(&outcomes), StdArc::clone(&executions));
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = bound;
    builder.check(move || {
        *count.lock().unwrap() += 1;
        let index = Arc::new(AtomicUsize::new(0));
        let other = Arc::clone(&index);
        let second = loom::thread::spawn(move || steal(&other, 2));
        let first = if both_spawned {
            let mine = Arc::clone(&index);
            loom::thread::spawn(move || steal(&mine, 1)).join().unwrap()
        } else {
            steal(&index, 1)
        };
        let second = second.join().unwrap();
        seen.lock().unwrap().insert((first, second));
    });
    let executions = *executions.lock().unwrap();
    let outcomes = outcomes.lock().unwrap().clone();
    (executions, outcomes)
}

/// The same two steals under shuttle's random scheduler (seed 1).
fn explore_with_shuttle(schedules: usize) -> BTreeSet<(usize, usize)> {
    use shuttle::sync::atomic::AtomicUsize;
    let outcomes = StdArc::new(Mutex::new(BTreeSet::new()));
    let seen = StdArc::clone(&outcomes);
    let mut config = shuttle::Config::new();
    config.silence_warnings = true;
    config.failure_persistence = shuttle::FailurePersistence::None;
    let scheduler = shuttle::scheduler::RandomScheduler::new_from_seed(1, schedules);
    shuttle::Runner::new(scheduler, config).run(move || {
        let steal = |index: &AtomicUsize, by: usize| {
            let read = index.load(Acquire);
            let _ = index.compare_exchange(read, read + by, SeqCst, Relaxed);
            read
        };
        let index = shuttle::sync::Arc::new(AtomicUsize::new(0));
        let other = shuttle::sync::Arc::clone(&index);
        let second = shuttle::thread::spawn(move || steal(&other, 2));
        let first = steal(&index, 1);
        let second = second.join().unwrap();
        seen.lock().unwrap().insert((first, second));
    });
    let outcomes = outcomes.lock().unwrap().clone();
    outcomes
}

fn main() {
    println!(
        "two steals (load, then CAS) of one index; possible outcomes (what the first steal read, what the second read):"
    );
    println!("  (0, 0) both read 0; (0, 1) the first steal entirely first; (2, 0) the second entirely first");
    for (both_spawned, shape) in [
        (false, "one steal on the model's main thread"),
        (true, "both steals on spawned threads"),
    ] {
        for bound in [None, Some(3)] {
            let (executions, outcomes) = explore(both_spawned, bound);
            let bound = bound.map_or("no bound".to_string(), |b| format!("bound {b}"));
            println!(
                "  loom, {shape}, {bound}: {executions} executions, {} of 3 outcomes {outcomes:?}",
                outcomes.len()
            );
        }
    }
    let outcomes = explore_with_shuttle(100);
    println!(
        "  shuttle, random, one steal on the main thread: 100 schedules, {} of 3 outcomes {outcomes:?}",
        outcomes.len()
    );
}
