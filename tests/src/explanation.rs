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
//! Greedy removal, repeated until nothing more can go (so every remaining
//! unit is needed), then the checker's own report on the small history.

use std::collections::BTreeSet;
use std::fmt;

use crate::checker::{check, Violation};
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
}

/// Checks `history`; if it is not linearizable, reduces it to a minimal
/// non-linearizable sub-history and explains that.
pub fn explain(history: &History) -> Option<Explanation> {
    let original = *check(history).err()?;
    let mut units: Vec<Unit> = units_of(history).into_iter().collect();
    let mut removed: BTreeSet<Unit> = BTreeSet::new();
    let mut checks = 0;
    let mut budget_exhausted = false;
    let mut current = history.clone();
    'passes: loop {
        let mut progress = false;
        let mut kept = Vec::with_capacity(units.len());
        for unit in units {
            if checks >= CHECK_BUDGET {
                budget_exhausted = true;
                kept.push(unit);
                continue;
            }
            checks += 1;
            removed.insert(unit);
            let candidate = without(history, &removed);
            if check(&candidate).is_err() {
                current = candidate;
                progress = true;
            } else {
                removed.remove(&unit);
                kept.push(unit);
            }
        }
        units = kept;
        if !progress || budget_exhausted {
            break 'passes;
        }
    }
    let minimal = *check(&current).expect_err("the reduced history is still not linearizable");
    Some(Explanation { original_operations: history.len(), original, minimal, budget_exhausted })
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
                        (Operation::Push(task) | Operation::TryPush(task), Outcome::Pushed) if gone(task) => None,
                        (_, Outcome::Popped(Some(task))) if gone(task) => None,
                        (_, Outcome::Stolen(tasks)) if !tasks.is_empty() => {
                            let left: Vec<Task> = tasks.iter().copied().filter(|task| !gone(task)).collect();
                            if left.is_empty() {
                                None
                            } else {
                                Some(Entry { outcome: Outcome::Stolen(left), ..entry.clone() })
                            }
                        }
                        _ => Some(entry.clone()),
                    }
                })
                .collect();
            ThreadLog { entries }
        })
        .collect();
    History { specification: history.specification, threads }
}

impl fmt::Display for Explanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "NOT LINEARIZABLE. A minimal sub-history ({} of {} operations; removing any task or \
             task-less operation from it makes it linearizable{}):",
            self.minimal.history.len(),
            self.original_operations,
            if self.budget_exhausted { ", as far as the check budget allowed" } else { "" }
        )?;
        write!(f, "{}", self.minimal)
    }
}
