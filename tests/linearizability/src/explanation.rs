//! A minimal explanation of a non-linearizable history: a sub-history that is
//! still not linearizable, from which no single piece can be removed without
//! it becoming linearizable.
//!
//! Pieces are removed in units that keep the sub-history meaningful:
//! - a task: its push, the pop that returned it, and its place in the result
//!   of the steal that took it (a batch steal keeps its other tasks; one left
//!   with none goes too). Removing only a push would leave a pop of a task
//!   that never existed, a trivially wrong and useless explanation;
//! - an operation that moved no task: `pop -> None`, `Empty`, `Retry`, or a
//!   `try_push` that found the deque full.
//!
//! A sub-history is evidence against the history only if removing pieces
//! cannot create a violation. Removing a task-less operation never can.
//! Removing a task can, under the rules that count tasks (a batch may take
//! half of those present, `Full` needs `bound` of them) or the `Retry` rule
//! (the task's steal may have been the top move that justified a `Retry`);
//! under the other rules (which task each operation may take) it cannot: a
//! linearization of the history, with the task's steps deleted, linearizes
//! the sub-history. So:
//! - if the history already fails those task-order rules alone, it is
//!   reduced under them, removing tasks and task-less operations; the
//!   result fails them, hence fails the full specification too;
//! - otherwise (the violation is about a batch's size, `Full` or `Retry`),
//!   only task-less operations are removed, under the full specification.
//!
//! Removal goes by chunks of halving size down to single units (every unit
//! left is needed), then the checker reports on the small history.

use std::collections::BTreeSet;
use std::fmt;

use crate::checker::{check, check_with, Rules, Violation};
use crate::history::{Entry, History, Operation, Outcome, Task, ThreadLog};

/// The most checks one minimisation spends; histories of hundreds of
/// operations need far fewer.
const CHECK_BUDGET: usize = 20_000;

/// What can be removed from a history as one piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Unit {
    Task(Task),
    /// An operation that moved no task: (thread, entry).
    Operation(usize, usize),
}

/// A non-linearizable history reduced to what makes it so.
#[derive(Clone, Debug)]
pub struct Explanation {
    /// How many operations the full history had.
    pub original_operations: usize,
    /// The checker's report on the full history.
    pub original: Violation,
    /// The checker's report on the minimal sub-history (its `history` field
    /// is that sub-history).
    pub minimal: Violation,
    /// Whether the check budget ran out before minimality was reached.
    pub budget_exhausted: bool,
    /// Whether tasks could be removed (the violation is about which task an
    /// operation took) or only task-less operations (it is about a batch's
    /// size, `Full` or `Retry`).
    pub tasks_removed: bool,
}

/// Checks `history`; if it is not linearizable, reduces it to a minimal
/// non-linearizable sub-history and explains that.
pub fn explain(history: &History) -> Option<Explanation> {
    let original = *check(history).err()?;
    let rules = if check_with(history, Rules::TaskOrder).is_err() {
        Rules::TaskOrder
    } else {
        Rules::All
    };
    let mut units: Vec<Unit> = units_of(history)
        .into_iter()
        .filter(|unit| rules == Rules::TaskOrder || matches!(unit, Unit::Operation(..)))
        .collect();
    // Remove chunks of halving size (a few large removals usually take away
    // most of a history), ending with single units. Under the rules used
    // removal is monotone (a sub-history of a linearizable history is
    // linearizable), so a unit that could not go when tried cannot go from
    // the smaller final history either: one pass at size one is minimal.
    let mut removed: BTreeSet<Unit> = BTreeSet::new();
    let mut checks = 0;
    let mut budget_exhausted = false;
    let mut current = history.clone();
    let mut chunk = units.len().div_ceil(2).max(1);
    loop {
        let mut start = 0;
        while start < units.len() {
            if checks >= CHECK_BUDGET {
                budget_exhausted = true;
                break;
            }
            checks += 1;
            let end = (start + chunk).min(units.len());
            let mut trial = removed.clone();
            trial.extend(units[start..end].iter().copied());
            let candidate = without(history, &trial);
            if check_with(&candidate, rules).is_err() {
                removed = trial;
                current = candidate;
                units.drain(start..end);
            } else {
                start = end;
            }
        }
        if chunk == 1 || budget_exhausted {
            break;
        }
        chunk = chunk.div_ceil(2);
    }
    let minimal =
        *check_with(&current, rules).expect_err("the reduced history is still not linearizable");
    let tasks_removed = rules == Rules::TaskOrder;
    Some(Explanation {
        original_operations: history.len(),
        original,
        minimal,
        budget_exhausted,
        tasks_removed,
    })
}

fn units_of(history: &History) -> BTreeSet<Unit> {
    let mut units = BTreeSet::new();
    for (thread, log) in history.threads.iter().enumerate() {
        for (index, entry) in log.entries.iter().enumerate() {
            match (&entry.operation, &entry.outcome) {
                (Operation::Push(task) | Operation::TryPush(task), Outcome::Pushed) => {
                    units.insert(Unit::Task(*task));
                }
                (_, Outcome::Popped(Some(task))) => {
                    units.insert(Unit::Task(*task));
                }
                (_, Outcome::Stolen(tasks)) if !tasks.is_empty() => {
                    units.extend(tasks.iter().map(|&task| Unit::Task(task)));
                }
                _ => {
                    units.insert(Unit::Operation(thread, index));
                }
            }
        }
    }
    units
}

/// The sub-history without the removed units.
fn without(history: &History, removed: &BTreeSet<Unit>) -> History {
    let gone = |task: &Task| removed.contains(&Unit::Task(*task));
    let threads = history
        .threads
        .iter()
        .enumerate()
        .map(|(thread, log)| {
            let entries = log
                .entries
                .iter()
                .enumerate()
                .filter_map(|(index, entry)| {
                    if removed.contains(&Unit::Operation(thread, index)) {
                        return None;
                    }
                    match (&entry.operation, &entry.outcome) {
                        (Operation::Push(task) | Operation::TryPush(task), Outcome::Pushed)
                            if gone(task) =>
                        {
                            None
                        }
                        (_, Outcome::Popped(Some(task))) if gone(task) => None,
                        (_, Outcome::Stolen(tasks)) if !tasks.is_empty() => {
                            let left: Vec<Task> =
                                tasks.iter().copied().filter(|task| !gone(task)).collect();
                            if left.is_empty() {
                                None
                            } else {
                                Some(Entry {
                                    outcome: Outcome::Stolen(left),
                                    ..entry.clone()
                                })
                            }
                        }
                        _ => Some(entry.clone()),
                    }
                })
                .collect();
            ThreadLog { entries }
        })
        .collect();
    History {
        specification: history.specification,
        threads,
    }
}

impl fmt::Display for Explanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "NOT LINEARIZABLE. A minimal sub-history ({} of {} operations; {}{}):",
            self.minimal.history.len(),
            self.original_operations,
            if self.tasks_removed {
                "removing any task (its push and its taking) or task-less operation from it makes it linearizable"
            } else {
                "the violation is about how many tasks were present or about a Retry, so only task-less \
                 operations were removed, and each one left is needed"
            },
            if self.budget_exhausted {
                ", as far as the check budget allowed"
            } else {
                ""
            }
        )?;
        write!(f, "{}", self.minimal)
    }
}
