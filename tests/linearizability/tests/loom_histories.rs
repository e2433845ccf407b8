//! Driver 3: the checker fed from loom. Loom runs a tiny scenario under
//! every interleaving (up to a preemption bound) and the weak-memory outcomes
//! of the C11 model it simulates; every execution's history is checked for
//! linearizability. So this is linearizability under weak memory, checked
//! exhaustively for the scenario, where shuttle (sequentially consistent) and
//! hardware threads (what the machine happens to do) only sample.
//!
//! The planted bug here is one that only weak memory shows: the owner's pop
//! without its seq_cst fence (mutant `TakeFence`), which lets owner and thief
//! both take the last task.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use chase_lev_loom_mutants::Mutant;
use chase_lev_tests::drivers::check_history;
use chase_lev_tests::harness::{run_scenario, ThiefBody, Threads};
use chase_lev_tests::history::{Flavor, ThreadLog};
use chase_lev_tests::scenario::{OwnerAction, Round, Scenario, ThiefAction};

/// Loom's threads.
struct LoomThreads;

impl Threads for LoomThreads {
    fn round(&self, owner: &mut dyn FnMut(), thieves: Vec<ThiefBody>) -> Vec<ThreadLog> {
        let handles: Vec<_> = thieves.into_iter().map(loom::thread::spawn).collect();
        owner();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("a thief panicked"))
            .collect()
    }
}

#[derive(Clone, Copy, Debug)]
struct LoomChaseLev {
    mutant: Option<Mutant>,
}

chase_lev_tests::deque_under_test!(
    LoomChaseLev,
    chase_lev_loom_mutants,
    |family, fifo, capacity, bounded| {
        chase_lev_loom_mutants::Worker::new_mutant(fifo, capacity, bounded, family.mutant)
    }
);

/// One task to start with; the owner pushes one more and pops twice while a
/// thief steals twice: the owner's second pop races the thief for the last
/// task.
fn last_task_race() -> Scenario {
    Scenario {
        flavor: Flavor::Lifo,
        bounded: false,
        capacity: 2,
        initial_tasks: 1,
        rounds: vec![Round {
            owner: vec![OwnerAction::Push, OwnerAction::Pop, OwnerAction::Pop],
            thieves: vec![vec![ThiefAction::Steal, ThiefAction::Steal]],
        }],
        destinations: Vec::new(),
    }
}

/// Runs the scenario under loom; returns how many executions loom ran and
/// the explanation of the first non-linearizable history, if any.
fn explore(mutant: Option<Mutant>, scenario: Scenario) -> (u64, Option<String>) {
    let executions = Arc::new(AtomicU64::new(0));
    let failure = Arc::new(std::sync::Mutex::new(None::<String>));
    let mut builder = loom::model::Builder::new();
    // `CHASE_LEV_LOOM_PREEMPTIONS` widens the search (loom's own default is
    // unbounded, which for this scenario is far slower).
    builder.preemption_bound =
        Some(chase_lev_tests::drivers::budget("CHASE_LEV_LOOM_PREEMPTIONS", 3) as usize);
    let (counted, found) = (Arc::clone(&executions), Arc::clone(&failure));
    let run = catch_unwind(AssertUnwindSafe(|| {
        builder.check(move || {
            counted.fetch_add(1, Ordering::Relaxed);
            let history = run_scenario(&LoomChaseLev { mutant }, &LoomThreads, &scenario);
            if let Some(explanation) = check_history(&history) {
                *found.lock().unwrap() = Some(explanation);
                panic!(
                    "the history of loom execution {} is not linearizable",
                    counted.load(Ordering::Relaxed)
                );
            }
        })
    }));
    let explanation = failure.lock().unwrap().take();
    if let (Err(panic), None) = (run, &explanation) {
        // Not a linearizability failure: let the panic through as it is.
        std::panic::resume_unwind(panic);
    }
    (executions.load(Ordering::Relaxed), explanation)
}

#[test]
fn every_loom_execution_of_the_last_task_race_is_linearizable() {
    let (executions, failure) = explore(None, last_task_race());
    if let Some(explanation) = failure {
        panic!("{explanation}");
    }
    println!("loom: {executions} executions of the last-task race, every history linearizable");
}

#[test]
fn a_pop_without_its_fence_is_caught_under_weak_memory() {
    let (executions, failure) = explore(Some(Mutant::TakeFence), last_task_race());
    let explanation = failure.expect("loom finds a non-linearizable history without the pop fence");
    println!(
        "PLANTED BUG \"an owner pop without its seq_cst fence (mutant TakeFence)\": caught by loom after \
         {executions} executions\n{explanation}"
    );
}
