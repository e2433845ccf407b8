//! The observer's ledger: what every model execution is checked against.
//!
//! The ledger lives outside the model (a thread-local of the OS thread that
//! runs the checker, plain memory, no atomics), so it adds no synchronisation
//! that could hide a weakened ordering. Loom and shuttle run all the threads
//! of a model on that one OS thread, one at a time, so the ledger's order of
//! events is the order in which the execution ran them.
//!
//! Tasks are [`Task`]s: an id (ids start at 1, so a task read from a slot that
//! was never written, which holds zeroes, shows up as id 0) whose `Drop`
//! records that the deque dropped it. A thread that takes a task hands it to
//! [`took`], which records the removal and forgets the task. At the end of an
//! execution every pushed id must have left the deque exactly once, either
//! taken or dropped by the deque: nothing lost (or leaked), nothing taken or
//! dropped twice (a double free for a real task), nothing invented.
//!
//! `Empty` (and `None` from the owner's pop) is checked for soundness: it is a
//! violation if the deque was certainly never empty during the call. The
//! check uses *happens-before*, not the order of the ledger, for pushes:
//! under C11 a thief may legitimately miss a push that merely ran earlier.
//! A task is known to a call if its push happens before the call started (the
//! owner's own earlier pushes; for a thief, the pushes made before it was
//! spawned). If `Empty` is right, every known task was removed by an
//! operation that started before the call ended, every task known to *that*
//! removal must have been removed before the call ended too, and so on: a
//! task reached this way that nobody had started removing by the end of the
//! call proves the deque was never empty (see
//! `certainly_non_empty_throughout`; this catches write-to-read causality,
//! where a thief sees another operation's removal but not the push before
//! it). Removals count as soon as they start, so the check never blames a
//! correct deque for a race it could have lost.
//! A refused `try_push` (bounded worker) is checked the same way: it is a
//! violation if the owner's own count, which thieves can only lower, was
//! below the bound; an accepted push is a violation if the deque certainly
//! held `bound` tasks throughout.

use std::cell::RefCell;
use std::fmt;

use chase_lev_tests::specification::most_a_batch_takes;

/// A task in a model: an id that the ledger follows from push to removal.
/// Plain data, so a duplicated task (in a mutant) is harmless to the checker
/// itself; the ledger reports it.
#[derive(PartialEq, Eq)]
pub struct Task(pub u64);

impl Drop for Task {
    fn drop(&mut self) {
        // Only the deque drops a `Task` (the remaining tasks when the last
        // handle goes): the model's threads forget the tasks they take.
        LEDGER.with(|ledger| {
            let mut ledger = ledger.borrow_mut();
            let now = ledger.tick();
            // Every push happens before the drop of the last handle.
            ledger.removals.push(Removal {
                id: self.0,
                by: "the deque's drop".into(),
                started: now,
                known_pushed_before: now,
                batch_limit: None,
                in_queue_order: false,
            });
        });
    }
}

impl fmt::Debug for Task {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "task {}", self.0)
    }
}

/// A point in the ledger's order of events.
pub type Mark = u64;

/// An operation in progress: who runs it and when it started.
#[derive(Clone, Debug)]
pub struct Operation {
    who: String,
    what: &'static str,
    started: Mark,
    /// Pushes recorded before this mark happen before the operation.
    known_pushed_before: Mark,
    /// A batch steal's limit.
    batch_limit: Option<usize>,
    /// A steal from the injector (a FIFO queue): it takes one pusher's
    /// tasks in that pusher's order.
    in_queue_order: bool,
}

struct Removal {
    id: u64,
    by: String,
    started: Mark,
    /// Pushes recorded before this mark happen before the removal.
    known_pushed_before: Mark,
    /// The limit of the batch steal that took it.
    batch_limit: Option<usize>,
    /// Whether the operation that took it keeps the queue's order.
    in_queue_order: bool,
}

struct EmptyClaim {
    operation: Operation,
    ended: Mark,
}

struct PushAttempt {
    operation: Operation,
    ended: Mark,
    accepted: bool,
    bound: usize,
    /// The owner's own count of tasks taken by its pops before this push.
    own_pops_before: usize,
}

#[derive(Default)]
struct Ledger {
    clock: Mark,
    pushed: Vec<(u64, Mark)>,
    removals: Vec<Removal>,
    empties: Vec<EmptyClaim>,
    push_attempts: Vec<PushAttempt>,
    own_pops: usize,
    /// Who pushed each task into the injector.
    pushers: Vec<(u64, String)>,
}

impl Ledger {
    fn tick(&mut self) -> Mark {
        self.clock += 1;
        self.clock
    }
}

thread_local! {
    static LEDGER: RefCell<Ledger> = RefCell::new(Ledger::default());
}

fn with<R>(f: impl FnOnce(&mut Ledger) -> R) -> R {
    LEDGER.with(|ledger| f(&mut ledger.borrow_mut()))
}

/// Starts a fresh ledger (at the start of each execution of a model).
pub fn reset() {
    with(|ledger| *ledger = Ledger::default());
}

/// The current point in the ledger's order; pushes recorded before it happen
/// before anything a thread spawned after this call does.
pub fn now() -> Mark {
    with(|ledger| ledger.tick())
}

/// Records the start of an operation.
/// Records the start of an operation. `known_pushed_before` is the mark
/// before which pushes happen before it: `None` for the owner (all its own
/// earlier pushes), a thief's spawn mark for a thief.
pub fn begin(who: &str, what: &'static str, known_pushed_before: Option<Mark>) -> Operation {
    with(|ledger| {
        let started = ledger.tick();
        Operation {
            who: who.to_string(),
            what,
            started,
            known_pushed_before: known_pushed_before.unwrap_or(started),
            batch_limit: None,
            in_queue_order: false,
        }
    })
}

/// Records the start of a batch steal with `limit`: as [`begin`], and the
/// batch's size is checked against the specification's rule.
pub fn begin_batch(
    who: &str,
    what: &'static str,
    known_pushed_before: Option<Mark>,
    limit: usize,
) -> Operation {
    Operation {
        batch_limit: Some(limit),
        ..begin(who, what, known_pushed_before)
    }
}

/// Records the start of a steal from the injector: as [`begin`], and the
/// tasks it takes must follow each pusher's order (a FIFO queue's promise).
pub fn begin_in_queue_order(
    who: &str,
    what: &'static str,
    known_pushed_before: Option<Mark>,
) -> Operation {
    Operation {
        in_queue_order: true,
        ..begin(who, what, known_pushed_before)
    }
}

/// Records that `who` pushed `id` into the injector (see
/// [`begin_in_queue_order`]).
pub fn pushed_by(id: u64, who: &str) {
    pushed(id);
    with(|ledger| ledger.pushers.push((id, who.to_string())));
}

/// Records that the owner's push of `id` completed.
pub fn pushed(id: u64) {
    with(|ledger| {
        let now = ledger.tick();
        ledger.pushed.push((id, now));
    });
}

/// Records a bounded push attempt: accepted (the task is now in the deque)
/// or refused (the task came back and is forgotten here).
pub fn push_attempted(operation: Operation, id: u64, bound: usize, refused: Option<Task>) {
    let accepted = refused.is_none();
    if let Some(task) = refused {
        assert_eq!(task.0, id, "try_push handed back a different task");
        std::mem::forget(task);
    }
    with(|ledger| {
        let ended = ledger.tick();
        if accepted {
            ledger.pushed.push((id, ended));
        }
        let own_pops_before = ledger.own_pops;
        ledger.push_attempts.push(PushAttempt {
            operation,
            ended,
            accepted,
            bound,
            own_pops_before,
        });
    });
}

/// Records that `operation` took `task` out of the deque, and forgets it.
pub fn took(operation: &Operation, task: Task) {
    let id = task.0;
    std::mem::forget(task);
    with(|ledger| {
        if operation.what == "pop" {
            ledger.own_pops += 1;
        }
        ledger.removals.push(Removal {
            id,
            by: format!("{}'s {}", operation.who, operation.what),
            started: operation.started,
            known_pushed_before: operation.known_pushed_before,
            batch_limit: operation.batch_limit,
            in_queue_order: operation.in_queue_order,
        })
    });
}

/// Records that `operation` reported an empty deque.
pub fn returned_empty(operation: Operation) {
    with(|ledger| {
        let ended = ledger.tick();
        ledger.empties.push(EmptyClaim { operation, ended });
    });
}

/// A broken promise of the deque, found at the end of an execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation(pub String);

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Checks the finished execution: call it after every thread has been
/// joined and every handle of the deque dropped.
pub fn verify() -> Result<(), Violation> {
    with(|ledger| verify_ledger(ledger))
}

fn verify_ledger(ledger: &Ledger) -> Result<(), Violation> {
    for removal in &ledger.removals {
        if !ledger.pushed.iter().any(|&(id, _)| id == removal.id) {
            let what = if removal.id == 0 {
                "task 0, the zeroes of a slot that was never written (an uninitialised read)"
                    .to_string()
            } else {
                format!("task {}, which was never pushed", removal.id)
            };
            return Err(Violation(format!("{} took {what}", removal.by)));
        }
    }
    for &(id, _) in &ledger.pushed {
        let takers: Vec<&Removal> = ledger
            .removals
            .iter()
            .filter(|removal| removal.id == id)
            .collect();
        match takers.as_slice() {
            [] => {
                return Err(Violation(format!(
                    "task {id} was lost: pushed, never taken, never dropped"
                )))
            }
            [_] => {}
            [first, second, ..] => {
                return Err(Violation(format!(
                    "task {id} was taken twice: by {} and by {}",
                    first.by, second.by
                )))
            }
        }
    }
    // A batch takes at most `most_a_batch_takes(len, limit)` of the `len`
    // tasks present when it looks (the sequential specification's rule,
    // crossbeam-deque's); no more than every task ever pushed can be
    // present, so that many bounds `len`.
    for removal in &ledger.removals {
        let Some(limit) = removal.batch_limit else {
            continue;
        };
        let taken = ledger
            .removals
            .iter()
            .filter(|other| other.by == removal.by && other.started == removal.started)
            .count();
        let most = most_a_batch_takes(ledger.pushed.len(), limit);
        if taken > most {
            return Err(Violation(format!(
                "{} took {taken} tasks, but a batch may take at most {most} \
                 (half of the {} tasks ever pushed, rounded up, and at most its limit {limit})",
                removal.by,
                ledger.pushed.len()
            )));
        }
    }
    // A steal from the injector takes one pusher's tasks in the order that
    // pusher pushed them (its pushes complete in program order, so in the
    // ledger's order).
    let pushed_at = |id: u64| ledger.pushed.iter().position(|&(pushed, _)| pushed == id);
    let pusher = |id: u64| {
        ledger
            .pushers
            .iter()
            .find(|(pushed, _)| *pushed == id)
            .map(|(_, who)| who.as_str())
    };
    for (index, earlier) in ledger.removals.iter().enumerate() {
        if !earlier.in_queue_order {
            continue;
        }
        for later in &ledger.removals[index + 1..] {
            if later.by != earlier.by || later.started != earlier.started {
                continue;
            }
            let (Some(who), Some(first), Some(second)) = (
                pusher(earlier.id).filter(|&who| pusher(later.id) == Some(who)),
                pushed_at(later.id),
                pushed_at(earlier.id),
            ) else {
                continue;
            };
            if first < second {
                return Err(Violation(format!(
                    "{} took task {} before task {}, though {who} pushed task {} first: \
                     not the queue's order",
                    earlier.by, earlier.id, later.id, later.id
                )));
            }
        }
    }
    for claim in &ledger.empties {
        if let Some(chain) = certainly_non_empty_throughout(ledger, claim) {
            return Err(Violation(format!(
                "{}'s {} reported an empty deque, but it was never empty during the call: {chain}",
                claim.operation.who, claim.operation.what
            )));
        }
    }
    for attempt in &ledger.push_attempts {
        let pushed_before = ledger
            .pushed
            .iter()
            .filter(|&&(_, at)| at < attempt.operation.started)
            .count();
        let owner_count = pushed_before.saturating_sub(attempt.own_pops_before);
        if !attempt.accepted && owner_count < attempt.bound {
            return Err(Violation(format!(
                "try_push was refused as full, but the deque held at most {owner_count} of its {} tasks",
                attempt.bound
            )));
        }
        let removed_before_end = ledger
            .removals
            .iter()
            .filter(|removal| {
                removal.started < attempt.ended
                    && ledger
                        .pushed
                        .iter()
                        .any(|&(id, at)| id == removal.id && at < attempt.operation.started)
            })
            .count();
        let certainly_held = pushed_before.saturating_sub(removed_before_end);
        if attempt.accepted && certainly_held >= attempt.bound {
            return Err(Violation(format!(
                "try_push was accepted while the deque held {certainly_held} tasks, its bound is {}",
                attempt.bound
            )));
        }
    }
    Ok(())
}

/// Whether the deque certainly held a task at every moment of the call that
/// reported `Empty`; if so, the chain of tasks that shows it.
///
/// In any linearization that respects happens-before, `Empty` takes effect at
/// a point `L` inside the call. Every task whose push happens before the call
/// must have been removed before `L`, so its removal started before the call
/// ended. And every task whose push happens before such a removal was pushed
/// before `L` too, so it must also have been removed before `L`, and so on.
/// If some task reached this way was not being removed by the end of the
/// call (its removal started later, or never), no such `L` exists.
fn certainly_non_empty_throughout(ledger: &Ledger, claim: &EmptyClaim) -> Option<String> {
    // (task, why it had to be gone before the `Empty`)
    let mut to_visit: Vec<(u64, String)> = ledger
        .pushed
        .iter()
        .filter(|&&(_, at)| at < claim.operation.known_pushed_before)
        .map(|&(id, _)| (id, "pushed before the call started".to_string()))
        .collect();
    let mut visited = Vec::new();
    while let Some((id, reason)) = to_visit.pop() {
        if visited.contains(&id) {
            continue;
        }
        visited.push(id);
        let removal = ledger
            .removals
            .iter()
            .find(|removal| removal.id == id && removal.started < claim.ended);
        let Some(removal) = removal else {
            return Some(format!(
                "task {id} ({reason}) was still in it when the call returned"
            ));
        };
        for &(later, at) in &ledger.pushed {
            if at < removal.known_pushed_before && !visited.contains(&later) {
                to_visit.push((
                    later,
                    format!("pushed before {} began removing task {id}", removal.by),
                ));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    //! The checker is proved by catching planted bugs, without any deque.
    use super::*;

    fn take(who: &str, what: &'static str, id: u64) {
        let operation = begin(who, what, None);
        took(&operation, Task(id));
    }

    #[test]
    fn a_history_where_each_task_leaves_once_passes() {
        reset();
        pushed(1);
        pushed(2);
        take("owner", "pop", 2);
        take("thief", "steal", 1);
        let operation = begin("owner", "pop", None);
        returned_empty(operation);
        assert_eq!(verify(), Ok(()));
    }

    #[test]
    fn a_task_taken_twice_is_reported() {
        reset();
        pushed(1);
        take("owner", "pop", 1);
        take("thief", "steal", 1);
        assert!(verify().unwrap_err().0.contains("task 1 was taken twice"));
    }

    #[test]
    fn a_lost_task_is_reported() {
        reset();
        pushed(1);
        pushed(2);
        take("owner", "pop", 2);
        assert!(verify().unwrap_err().0.contains("task 1 was lost"));
    }

    #[test]
    fn a_task_dropped_by_the_deque_counts_as_leaving_it() {
        reset();
        pushed(1);
        drop(Task(1));
        assert_eq!(verify(), Ok(()));
    }

    #[test]
    fn a_task_taken_and_then_dropped_by_the_deque_is_a_double_free() {
        reset();
        pushed(1);
        take("thief", "steal", 1);
        drop(Task(1));
        assert!(verify().unwrap_err().0.contains("taken twice"));
    }

    #[test]
    fn reading_a_never_written_slot_is_reported_as_task_zero() {
        reset();
        pushed(1);
        take("thief", "steal", 0);
        take("owner", "pop", 1);
        assert!(verify().unwrap_err().0.contains("uninitialised"));
    }

    #[test]
    fn empty_while_a_known_task_sits_untouched_is_reported() {
        reset();
        pushed(1);
        let spawned = now();
        let steal = begin("thief", "steal", Some(spawned));
        returned_empty(steal);
        take("owner", "pop", 1);
        assert!(verify()
            .unwrap_err()
            .0
            .contains("never empty during the call"));
    }

    #[test]
    fn empty_is_allowed_when_a_racing_removal_had_started() {
        reset();
        pushed(1);
        let spawned = now();
        let pop = begin("owner", "pop", None);
        let steal = begin("thief", "steal", Some(spawned));
        returned_empty(steal);
        took(&pop, Task(1));
        assert_eq!(verify(), Ok(()));
    }

    #[test]
    fn empty_is_allowed_for_a_push_the_thief_cannot_know_about() {
        reset();
        let spawned = now();
        pushed(1);
        let steal = begin("thief", "steal", Some(spawned));
        returned_empty(steal);
        take("owner", "pop", 1);
        assert_eq!(verify(), Ok(()));
    }

    #[test]
    fn empty_is_reported_when_a_removal_was_preceded_by_a_push_still_there() {
        // Write-to-read causality: the thief knows task 1; task 1's remover
        // knew task 2, which nobody was removing when the thief said Empty.
        reset();
        pushed(1);
        let spawned = now();
        pushed(2);
        let pop = begin("owner", "pop", None);
        let steal = begin("thief", "steal", Some(spawned));
        returned_empty(steal);
        took(&pop, Task(1));
        take("owner", "pop", 2);
        let violation = verify().unwrap_err().0;
        assert!(
            violation.contains("task 2 (pushed before owner's pop began removing task 1)"),
            "{violation}"
        );
    }

    #[test]
    fn empty_is_allowed_when_every_task_in_the_chain_was_being_removed() {
        reset();
        pushed(1);
        let spawned = now();
        pushed(2);
        let first = begin("owner", "pop", None);
        let second = begin("thief 2", "steal", Some(spawned));
        let steal = begin("thief", "steal", Some(spawned));
        returned_empty(steal);
        took(&first, Task(1));
        took(&second, Task(2));
        assert_eq!(verify(), Ok(()));
    }

    #[test]
    fn a_full_report_below_the_bound_is_reported() {
        reset();
        pushed(1);
        let push = begin("owner", "try_push", None);
        push_attempted(push, 2, 2, Some(Task(2)));
        take("owner", "pop", 1);
        assert!(verify().unwrap_err().0.contains("refused as full"));
    }

    #[test]
    fn a_push_beyond_the_bound_is_reported() {
        reset();
        pushed(1);
        let push = begin("owner", "try_push", None);
        push_attempted(push, 2, 1, None);
        take("owner", "pop", 2);
        take("owner", "pop", 1);
        assert!(verify()
            .unwrap_err()
            .0
            .contains("accepted while the deque held 1"));
    }
}
