//! The sequential specification: a plain `VecDeque` of tasks, oldest at the
//! front.
//!
//! - `push` appends at the back; `try_push` does too, or reports `Full` when a
//!   bounded deque holds `bound` tasks;
//! - `pop` takes the back (LIFO) or the front (FIFO), `None` when empty;
//! - `steal` takes the front, `Empty` when empty; `Retry` changes nothing
//!   (whether a `Retry` was allowed is a property of the whole history, see
//!   the checker);
//! - a batch steal is a sequence of single steals of the oldest task, each
//!   linearized on its own. The first one also fixes how many the batch may
//!   take: at most `min((len + 1) / 2, limit)` of the `len` tasks present at
//!   that moment (crossbeam-deque's rule), and at least one.
//!
//! The checker applies operations as [`Step`]s (a batch steal of `k` tasks is
//! `k` steps) and undoes them when it backtracks.

use std::collections::VecDeque;
use std::fmt;

use crate::history::{Flavor, Specification, Task};

/// The most tasks a batch steal may take from a deque holding `len` tasks,
/// with `limit`: `min((len + 1) / 2, limit)`, crossbeam-deque's rule (the
/// checker's, the fuzz model's and the sequential `steal_batch`'s).
pub fn most_a_batch_takes(len: usize, limit: usize) -> usize {
    len.div_ceil(2).min(limit)
}

/// The first single steal of a batch carries the batch's size, which the
/// deque's length at that moment must allow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BatchStart {
    pub(crate) count: usize,
    pub(crate) limit: usize,
}

/// One atomic step of the sequential object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    Push(Task),
    Full,
    PopSome(Task),
    PopNone,
    Steal {
        task: Task,
        batch: Option<BatchStart>,
    },
    Empty,
    Retry,
    /// An outcome no sequential execution can produce (a steal that reports
    /// success with no task, or a single steal with two).
    Impossible(&'static str),
}

/// Why a step cannot be applied to the current state.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(missing_docs)] // the fields are named for what they hold
pub enum Refusal {
    /// A push (or successful `try_push`) on a bounded deque that is full.
    PushWhenFull { bound: usize },
    /// `try_push` reported full, but the deque holds fewer than `bound` tasks
    /// (or is not bounded at all).
    FullWhenNotFull { len: usize, bound: Option<usize> },
    /// The task is not at the end the operation takes from.
    WrongTask {
        wanted: Task,
        end: End,
        found: Option<Task>,
    },
    /// An operation reported empty while tasks were present.
    NotEmpty { len: usize },
    /// A batch took more than `min((len + 1) / 2, limit)` tasks.
    BatchTooLarge {
        count: usize,
        len: usize,
        limit: usize,
    },
    /// An outcome no sequential execution produces.
    Impossible(&'static str),
}

/// An end of the deque.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// The oldest task (`top`).
    Oldest,
    /// The newest task (`bottom - 1`).
    Newest,
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::PushWhenFull { bound } => write!(f, "the bounded deque already holds {bound} tasks"),
            Refusal::FullWhenNotFull { len, bound: Some(bound) } => {
                write!(f, "reported full, but the deque holds {len} of {bound} tasks")
            }
            Refusal::FullWhenNotFull { bound: None, .. } => write!(f, "a growable deque is never full"),
            Refusal::WrongTask { wanted, end, found: Some(found) } => {
                let end = match end {
                    End::Oldest => "oldest",
                    End::Newest => "newest",
                };
                write!(f, "took {wanted}, but the {end} task is {found}")
            }
            Refusal::WrongTask { wanted, found: None, .. } => {
                write!(f, "took {wanted}, but the deque is empty")
            }
            Refusal::NotEmpty { len } => write!(f, "reported empty, but the deque holds {len} tasks"),
            Refusal::BatchTooLarge { count, len, limit } => write!(
                f,
                "took {count} tasks, but with {len} present at most min(({len} + 1) / 2, {limit}) = {} may go",
                most_a_batch_takes(*len, *limit)
            ),
            Refusal::Impossible(why) => write!(f, "{why}"),
        }
    }
}

/// How to take a step back.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Undo {
    Nothing,
    RemoveBack,
    RestoreBack(Task),
    RestoreFront(Task),
}

/// A step that was applied.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Applied {
    pub(crate) undo: Undo,
    /// Whether the step removed the oldest task, i.e. moved `top` in the
    /// implementation: what can make a concurrent steal `Retry`.
    pub(crate) moved_top: bool,
}

/// The sequential deque.
#[derive(Clone, Debug)]
pub struct SequentialDeque {
    specification: Specification,
    tasks: VecDeque<Task>,
    /// Checks that depend on how many tasks are present (a batch's size, a
    /// full bounded deque); the minimiser switches them off (see
    /// `explanation`).
    length_rules: bool,
}

impl SequentialDeque {
    /// An empty deque of the given specification.
    pub fn new(specification: Specification) -> SequentialDeque {
        SequentialDeque {
            specification,
            tasks: VecDeque::new(),
            length_rules: true,
        }
    }

    /// Switches off the rules that depend on how many tasks are present.
    pub(crate) fn without_length_rules(mut self) -> SequentialDeque {
        self.length_rules = false;
        self
    }

    /// The tasks, oldest first.
    pub fn tasks(&self) -> impl Iterator<Item = Task> + '_ {
        self.tasks.iter().copied()
    }

    /// The number of tasks.
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Whether the deque holds no task.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// `try_push`, sequentially: `Err(task)` when a bounded deque is full.
    pub fn try_push(&mut self, task: Task) -> Result<(), Task> {
        if self.is_full() {
            return Err(task);
        }
        self.tasks.push_back(task);
        Ok(())
    }

    /// `pop`, sequentially.
    pub fn pop(&mut self) -> Option<Task> {
        match self.specification.flavor {
            Flavor::Lifo => self.tasks.pop_back(),
            Flavor::Fifo => self.tasks.pop_front(),
        }
    }

    /// `steal`, sequentially (never `Retry`): `None` when empty.
    pub fn steal(&mut self) -> Option<Task> {
        self.tasks.pop_front()
    }

    /// A batch steal, sequentially: the oldest `min((len + 1) / 2, limit)`
    /// tasks, oldest first.
    pub fn steal_batch(&mut self, limit: usize) -> Vec<Task> {
        let count = most_a_batch_takes(self.tasks.len(), limit);
        self.tasks.drain(..count).collect()
    }

    fn is_full(&self) -> bool {
        self.specification
            .bound
            .is_some_and(|bound| self.tasks.len() >= bound)
    }

    /// Applies one step, or says why it cannot be applied now.
    pub(crate) fn apply(&mut self, step: &Step) -> Result<Applied, Refusal> {
        let unchanged = Applied {
            undo: Undo::Nothing,
            moved_top: false,
        };
        match *step {
            Step::Push(task) => {
                if let (true, Some(bound)) = (self.is_full(), self.specification.bound) {
                    return Err(Refusal::PushWhenFull { bound });
                }
                self.tasks.push_back(task);
                Ok(Applied {
                    undo: Undo::RemoveBack,
                    moved_top: false,
                })
            }
            Step::Full => {
                if self.is_full() || !self.length_rules {
                    Ok(unchanged)
                } else {
                    Err(Refusal::FullWhenNotFull {
                        len: self.tasks.len(),
                        bound: self.specification.bound,
                    })
                }
            }
            Step::PopSome(task) => match self.specification.flavor {
                Flavor::Lifo => {
                    if self.tasks.back() != Some(&task) {
                        return Err(Refusal::WrongTask {
                            wanted: task,
                            end: End::Newest,
                            found: self.tasks.back().copied(),
                        });
                    }
                    // Taking the only task is the owner's CAS on top.
                    let moved_top = self.tasks.len() == 1;
                    self.tasks.pop_back();
                    Ok(Applied {
                        undo: Undo::RestoreBack(task),
                        moved_top,
                    })
                }
                Flavor::Fifo => self.take_oldest(task),
            },
            Step::PopNone | Step::Empty => {
                if self.tasks.is_empty() {
                    Ok(unchanged)
                } else {
                    Err(Refusal::NotEmpty {
                        len: self.tasks.len(),
                    })
                }
            }
            Step::Steal { task, batch } => {
                if let (Some(BatchStart { count, limit }), true) = (batch, self.length_rules) {
                    let len = self.tasks.len();
                    if count > most_a_batch_takes(len, limit) {
                        return Err(Refusal::BatchTooLarge { count, len, limit });
                    }
                }
                self.take_oldest(task)
            }
            Step::Retry => Ok(unchanged),
            Step::Impossible(why) => Err(Refusal::Impossible(why)),
        }
    }

    fn take_oldest(&mut self, task: Task) -> Result<Applied, Refusal> {
        if self.tasks.front() != Some(&task) {
            return Err(Refusal::WrongTask {
                wanted: task,
                end: End::Oldest,
                found: self.tasks.front().copied(),
            });
        }
        self.tasks.pop_front();
        Ok(Applied {
            undo: Undo::RestoreFront(task),
            moved_top: true,
        })
    }

    /// Takes back a step applied by [`apply`](SequentialDeque::apply).
    pub(crate) fn undo(&mut self, undo: Undo) {
        match undo {
            Undo::Nothing => {}
            Undo::RemoveBack => {
                self.tasks.pop_back();
            }
            Undo::RestoreBack(task) => self.tasks.push_back(task),
            Undo::RestoreFront(task) => self.tasks.push_front(task),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chase_lev::DEFAULT_BATCH_LIMIT;

    fn lifo() -> SequentialDeque {
        SequentialDeque::new(Specification {
            flavor: Flavor::Lifo,
            bound: None,
        })
    }

    #[test]
    fn a_batch_takes_half_of_the_oldest_rounded_up() {
        let mut deque = lifo();
        for task in 1..=5 {
            deque.try_push(task).unwrap();
        }
        assert_eq!(deque.steal_batch(DEFAULT_BATCH_LIMIT), vec![1, 2, 3]);
        assert_eq!(deque.steal_batch(1), vec![4]);
        assert_eq!(deque.pop(), Some(5));
    }

    #[test]
    fn the_first_step_of_a_batch_refuses_more_than_half() {
        let mut deque = lifo();
        for task in 1..=4 {
            deque.try_push(task).unwrap();
        }
        let too_many = Step::Steal {
            task: 1,
            batch: Some(BatchStart {
                count: 3,
                limit: DEFAULT_BATCH_LIMIT,
            }),
        };
        assert_eq!(
            deque.apply(&too_many).unwrap_err(),
            Refusal::BatchTooLarge {
                count: 3,
                len: 4,
                limit: DEFAULT_BATCH_LIMIT
            }
        );
        let half = Step::Steal {
            task: 1,
            batch: Some(BatchStart {
                count: 2,
                limit: DEFAULT_BATCH_LIMIT,
            }),
        };
        assert!(deque.apply(&half).is_ok());
    }

    #[test]
    fn a_bounded_deque_is_full_at_its_bound_only() {
        let mut deque = SequentialDeque::new(Specification {
            flavor: Flavor::Fifo,
            bound: Some(2),
        });
        assert!(deque.apply(&Step::Full).is_err());
        deque.try_push(1).unwrap();
        deque.try_push(2).unwrap();
        assert_eq!(deque.try_push(3), Err(3));
        assert!(deque.apply(&Step::Full).is_ok());
        assert_eq!(deque.pop(), Some(1));
    }

    #[test]
    fn undo_restores_the_exact_state() {
        let mut deque = lifo();
        for task in 1..=3 {
            deque.try_push(task).unwrap();
        }
        for step in [
            Step::Steal {
                task: 1,
                batch: None,
            },
            Step::PopSome(3),
            Step::Push(9),
        ] {
            let applied = deque.apply(&step).unwrap();
            deque.undo(applied.undo);
            assert_eq!(deque.tasks().collect::<Vec<_>>(), vec![1, 2, 3]);
        }
    }
}
