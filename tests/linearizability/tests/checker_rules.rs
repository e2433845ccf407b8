//! The checker against hand-written histories: each test is one rule of the
//! specification or of the precedence model, shown accepted and rejected.

use chase_lev_tests::history::{
    Flavor, History, Operation, Outcome, Phase, Specification, ThreadLog,
};
use chase_lev_tests::{check, explain};

const LIFO: Specification = Specification {
    flavor: Flavor::Lifo,
    bound: None,
};
const FIFO: Specification = Specification {
    flavor: Flavor::Fifo,
    bound: None,
};

/// A thread log written as (phase, operation, outcome) triples.
fn log(entries: &[(Phase, Operation, Outcome)]) -> ThreadLog {
    let mut log = ThreadLog::new();
    for (phase, operation, outcome) in entries.iter().cloned() {
        log.record(phase, operation, outcome);
    }
    log
}

fn push(phase: Phase, task: u64) -> (Phase, Operation, Outcome) {
    (phase, Operation::Push(task), Outcome::Pushed)
}

fn pop(phase: Phase, task: Option<u64>) -> (Phase, Operation, Outcome) {
    (phase, Operation::Pop, Outcome::Popped(task))
}

fn steal(phase: Phase, outcome: Outcome) -> (Phase, Operation, Outcome) {
    (phase, Operation::Steal, outcome)
}

fn batch(phase: Phase, limit: usize, tasks: &[u64]) -> (Phase, Operation, Outcome) {
    (
        phase,
        Operation::StealBatch {
            limit,
            and_pop: false,
        },
        Outcome::Stolen(tasks.to_vec()),
    )
}

fn stolen(task: u64) -> Outcome {
    Outcome::Stolen(vec![task])
}

fn linearizable(specification: Specification, threads: Vec<ThreadLog>) -> bool {
    check(&History::new(specification, threads)).is_ok()
}

#[test]
fn a_sequential_lifo_history_is_linearizable() {
    let owner = log(&[
        push(0, 1),
        push(0, 2),
        pop(0, Some(2)),
        pop(0, Some(1)),
        pop(0, None),
    ]);
    assert!(linearizable(LIFO, vec![owner]));
}

#[test]
fn a_lifo_owner_that_pops_the_oldest_is_rejected() {
    let owner = log(&[push(0, 1), push(0, 2), pop(0, Some(1))]);
    assert!(!linearizable(LIFO, vec![owner]));
}

#[test]
fn a_fifo_owner_pops_the_oldest() {
    let owner = log(&[push(0, 1), push(0, 2), pop(0, Some(1)), pop(0, Some(2))]);
    assert!(linearizable(FIFO, vec![owner.clone()]));
    assert!(!linearizable(LIFO, vec![owner]));
}

#[test]
fn a_thief_takes_the_oldest_not_the_newest() {
    let owner = log(&[push(0, 1), push(0, 2)]);
    assert!(linearizable(
        LIFO,
        vec![owner.clone(), log(&[steal(1, stolen(1))])]
    ));
    assert!(!linearizable(
        LIFO,
        vec![owner, log(&[steal(1, stolen(2))])]
    ));
}

#[test]
fn a_task_taken_twice_is_rejected() {
    // The owner and a thief both got the last task: the classic race that the
    // last-element CAS prevents.
    let owner = log(&[push(0, 1), pop(1, Some(1))]);
    let thief = log(&[steal(1, stolen(1))]);
    assert!(!linearizable(LIFO, vec![owner, thief]));
}

#[test]
fn a_lost_task_is_rejected_by_the_final_drain() {
    let owner = log(&[push(0, 1), push(0, 2), pop(2, None)]);
    let thief = log(&[steal(1, stolen(1))]);
    assert!(!linearizable(LIFO, vec![owner, thief]));
}

#[test]
fn operations_of_one_phase_may_be_ordered_either_way() {
    // The steal saw the deque empty although the push is in the same phase:
    // the steal may be linearized first.
    let owner = log(&[push(1, 1), pop(2, Some(1))]);
    let thief = log(&[steal(1, Outcome::Empty)]);
    assert!(linearizable(LIFO, vec![owner, thief]));
}

#[test]
fn a_phase_boundary_orders_operations() {
    // The push is in phase 1, the empty steal in phase 2: the steal must see it.
    let owner = log(&[push(1, 1), pop(3, Some(1))]);
    let thief = log(&[steal(2, Outcome::Empty)]);
    assert!(!linearizable(LIFO, vec![owner, thief]));
}

#[test]
fn program_order_is_respected_within_a_thread() {
    let owner = log(&[push(0, 1), push(0, 2)]);
    let in_order = log(&[steal(1, stolen(1)), steal(1, stolen(2))]);
    assert!(linearizable(LIFO, vec![owner.clone(), in_order]));
    // The same two results in the other program order: 2 cannot be the
    // oldest before 1 is gone.
    let reversed = log(&[steal(1, stolen(2)), steal(1, stolen(1))]);
    assert!(!linearizable(LIFO, vec![owner, reversed]));
}

#[test]
fn a_retry_needs_a_concurrent_operation_that_moved_top() {
    let owner = log(&[push(0, 1)]);
    let lonely = log(&[steal(1, Outcome::Retry)]);
    assert!(!linearizable(LIFO, vec![owner.clone(), lonely.clone()]));
    let rival = log(&[steal(1, stolen(1))]);
    assert!(linearizable(LIFO, vec![owner, lonely, rival]));
}

#[test]
fn a_retry_must_overlap_the_top_move_not_just_follow_it() {
    let owner = log(&[push(0, 1)]);
    let retrying = log(&[steal(2, Outcome::Retry)]);
    let rival = log(&[steal(1, stolen(1))]);
    assert!(!linearizable(LIFO, vec![owner, retrying, rival]));
}

#[test]
fn a_lifo_pop_moves_top_only_when_it_takes_the_last_task() {
    let retrying = log(&[steal(1, Outcome::Retry)]);
    let last = log(&[push(0, 1), pop(1, Some(1))]);
    assert!(linearizable(LIFO, vec![last, retrying.clone()]));
    // With two tasks and no other operation, the pop takes the newest of
    // two: no CAS on top, so nothing can make the steal retry.
    let not_last = log(&[push(0, 1), push(0, 2), pop(1, Some(2))]);
    assert!(!linearizable(LIFO, vec![not_last, retrying]));
}

#[test]
fn a_retry_changes_nothing() {
    let owner = log(&[push(0, 1), push(0, 2)]);
    let thief = log(&[steal(1, Outcome::Retry), steal(1, stolen(1))]);
    let rival = log(&[steal(1, stolen(2))]);
    // Both orders of the two successful steals are consistent with the
    // retry; the retrying thief then takes the oldest that is left.
    assert!(linearizable(LIFO, vec![owner, thief, rival]));
}

#[test]
fn a_batch_takes_at_most_half_rounded_up() {
    let owner = log(&[push(0, 1), push(0, 2), push(0, 3), push(0, 4), push(0, 5)]);
    assert!(linearizable(
        LIFO,
        vec![owner.clone(), log(&[batch(1, 32, &[1, 2, 3])])]
    ));
    assert!(!linearizable(
        LIFO,
        vec![owner.clone(), log(&[batch(1, 32, &[1, 2, 3, 4])])]
    ));
    assert!(!linearizable(
        LIFO,
        vec![owner, log(&[batch(1, 2, &[1, 2, 3])])]
    ));
}

#[test]
fn a_batch_counts_half_of_the_length_at_its_first_steal() {
    // The owner pushes concurrently: the batch of 3 is fine if its first
    // steal comes after the fifth push, but not if the owner then popped two
    // before the batch could have started... in the same phase it can.
    let owner = log(&[push(0, 1), push(0, 2), push(0, 3), push(1, 4), push(1, 5)]);
    assert!(linearizable(
        LIFO,
        vec![owner.clone(), log(&[batch(1, 32, &[1, 2, 3])])]
    ));
    let owner_before = log(&[push(0, 1), push(0, 2), push(0, 3), push(2, 4), push(2, 5)]);
    assert!(!linearizable(
        LIFO,
        vec![owner_before, log(&[batch(1, 32, &[1, 2, 3])])]
    ));
}

#[test]
fn a_batch_is_a_sequence_of_single_steals_of_the_oldest() {
    // Another thief's steal may fall between the batch's steals.
    let owner = log(&[
        push(0, 1),
        push(0, 2),
        push(0, 3),
        push(0, 4),
        push(0, 5),
        push(0, 6),
    ]);
    let batch_thief = log(&[batch(1, 32, &[1, 3])]);
    let rival = log(&[steal(1, stolen(2))]);
    assert!(linearizable(LIFO, vec![owner.clone(), batch_thief, rival]));
    // Taken from the wrong end: never the oldest.
    assert!(!linearizable(
        LIFO,
        vec![owner, log(&[batch(1, 32, &[6, 5])])]
    ));
}

#[test]
fn a_bounded_deque_reports_full_only_at_its_bound() {
    let bounded = Specification {
        flavor: Flavor::Lifo,
        bound: Some(2),
    };
    let try_push = |phase, task, outcome| (phase, Operation::TryPush(task), outcome);
    let full = log(&[
        try_push(0, 1, Outcome::Pushed),
        try_push(0, 2, Outcome::Pushed),
        try_push(0, 3, Outcome::Full),
    ]);
    assert!(linearizable(bounded, vec![full]));
    let early = log(&[
        try_push(0, 1, Outcome::Pushed),
        try_push(0, 2, Outcome::Full),
    ]);
    assert!(!linearizable(bounded, vec![early]));
    let over = log(&[
        try_push(0, 1, Outcome::Pushed),
        try_push(0, 2, Outcome::Pushed),
        try_push(0, 3, Outcome::Pushed),
    ]);
    assert!(!linearizable(bounded, vec![over]));
    // A concurrent steal may make room, or not yet.
    let owner = log(&[
        try_push(0, 1, Outcome::Pushed),
        try_push(0, 2, Outcome::Pushed),
        try_push(1, 3, Outcome::Full),
    ]);
    assert!(linearizable(
        bounded,
        vec![owner, log(&[steal(1, stolen(1))])]
    ));
}

#[test]
fn the_explanation_is_the_few_operations_that_cannot_be_ordered() {
    // Forty tasks flow correctly through the owner and two thieves; one
    // thief also takes a task the owner popped.
    let mut owner = Vec::new();
    for task in 1..=40 {
        owner.push(push(0, task));
    }
    for task in (21..=40).rev() {
        owner.push(pop(1, Some(task)));
    }
    let first: Vec<_> = (1..=10).map(|task| steal(1, stolen(task))).collect();
    let mut second: Vec<_> = (11..=20).map(|task| steal(1, stolen(task))).collect();
    second.push(steal(1, stolen(33)));
    let history = History::new(LIFO, vec![log(&owner), log(&first), log(&second)]);
    let explanation = explain(&history).expect("task 33 was taken twice");
    println!("{explanation}");
    let minimal = &explanation.minimal.history;
    assert!(
        minimal.len() <= 3,
        "the minimal sub-history has {} operations",
        minimal.len()
    );
    let culprit = minimal.threads[2]
        .entries
        .iter()
        .any(|entry| entry.outcome == stolen(33));
    assert!(culprit, "the minimal sub-history keeps the duplicate steal");
}

#[test]
fn removing_tasks_never_makes_an_explanation_of_a_batch_size() {
    // A batch of two out of four tasks is fine; without the other two tasks
    // it would not be, so the minimiser must not remove them: it removes
    // only task-less operations here, and the history stays linearizable.
    let owner = log(&[
        push(0, 1),
        push(0, 2),
        push(0, 3),
        push(0, 4),
        pop(1, Some(4)),
        pop(1, Some(3)),
    ]);
    let thief = log(&[batch(1, 32, &[1, 2])]);
    assert!(linearizable(LIFO, vec![owner.clone(), thief]));
    // Taking three of four is too many: the explanation keeps every task.
    let owner = log(&[
        push(0, 1),
        push(0, 2),
        push(0, 3),
        push(0, 4),
        pop(2, Some(4)),
        pop(2, None),
    ]);
    let greedy = log(&[batch(1, 32, &[1, 2, 3])]);
    let explanation =
        explain(&History::new(LIFO, vec![owner, greedy])).expect("three of four is more than half");
    println!("{explanation}");
    assert!(!explanation.tasks_removed);
    assert_eq!(
        explanation.minimal.history.len(),
        6,
        "all but the final pop that found nothing"
    );
}
