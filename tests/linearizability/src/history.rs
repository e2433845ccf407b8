//! Histories: what each thread asked the deque and what it answered.
//!
//! A history has no timestamps. Two operations are ordered only when the
//! harness itself ordered them: by the program order of one thread, or by a
//! phase boundary (thread spawn, join or barrier), after which every
//! operation of the next phase happens after every operation of the previous
//! one. A timestamp read from a clock or a shared counter would add
//! synchronisation the deque does not have, could hide the very reorderings
//! we look for, and under weak memory does not give the order that the
//! memory model guarantees anyway. So, within one phase, two operations of
//! different threads are concurrent ("overlap"), whatever their wall-clock
//! times were.
//!
//! Each thread records into its own [`ThreadLog`] (no shared state while the
//! operations run); the harness collects the logs after joining.

use core::fmt;

/// A task: a distinct number per push, so that a result names the push it
/// came from.
pub type Task = u64;

/// The index of a thread in a history (its position in [`History::threads`]).
/// By convention thread 0 is the owner.
pub type ThreadIndex = usize;

/// A phase: the operations of phase `p` all happen after those of phase
/// `p - 1` (the harness separates phases by spawn, join or a barrier).
pub type Phase = u32;

/// Which end the owner pops from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Flavor {
    /// The owner pops the newest task.
    Lifo,
    /// The owner pops the oldest task.
    Fifo,
}

/// An operation on the deque, with its arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operation {
    /// `Worker::push(task)` on a growable deque (never fails).
    Push(Task),
    /// `Worker::try_push(task)`.
    TryPush(Task),
    /// `Worker::pop()`.
    Pop,
    /// `Stealer::steal()`.
    Steal,
    /// `Stealer::steal_batch_with_limit(dest, limit)` or, with `and_pop`,
    /// `steal_batch_with_limit_and_pop(dest, limit)`.
    StealBatch {
        /// The most tasks the batch may take (the returned one included).
        limit: usize,
        /// Whether the oldest stolen task is returned instead of pushed.
        and_pop: bool,
    },
}

/// What the deque answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A push or `try_push` stored its task.
    Pushed,
    /// `try_push` handed its task back: the deque was full.
    Full,
    /// What `pop` returned.
    Popped(Option<Task>),
    /// A steal took these tasks, oldest first (one for a single steal; for a
    /// batch, the returned task first, then those pushed into the
    /// destination in the order they were claimed).
    Stolen(Vec<Task>),
    /// `Steal::Empty`.
    Empty,
    /// `Steal::Retry`.
    Retry,
}

/// One completed operation of one thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The phase it ran in.
    pub phase: Phase,
    /// What was asked.
    pub operation: Operation,
    /// What was answered.
    pub outcome: Outcome,
}

/// The operations of one thread, in program order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThreadLog {
    /// The entries, in the order the thread made the calls.
    pub entries: Vec<Entry>,
}

impl ThreadLog {
    /// An empty log.
    pub fn new() -> ThreadLog {
        ThreadLog::default()
    }

    /// Appends one completed operation.
    pub fn record(&mut self, phase: Phase, operation: Operation, outcome: Outcome) {
        self.entries.push(Entry {
            phase,
            operation,
            outcome,
        });
    }
}

/// The sequential object the history is checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Specification {
    /// Which end `pop` takes from.
    pub flavor: Flavor,
    /// The bound of a bounded deque (`try_push` fails when it holds this
    /// many tasks); `None` for a growable one.
    pub bound: Option<usize>,
}

/// A complete history: a specification and one log per thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct History {
    /// The sequential object to check against.
    pub specification: Specification,
    /// One log per thread; thread 0 is the owner by convention.
    pub threads: Vec<ThreadLog>,
}

impl History {
    /// A history of the given threads' logs.
    pub fn new(specification: Specification, threads: Vec<ThreadLog>) -> History {
        History {
            specification,
            threads,
        }
    }

    /// The number of operations in the history.
    pub fn len(&self) -> usize {
        self.threads.iter().map(|log| log.entries.len()).sum()
    }

    /// Whether the history has no operation.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operation::Push(task) => write!(f, "push({task})"),
            Operation::TryPush(task) => write!(f, "try_push({task})"),
            Operation::Pop => write!(f, "pop()"),
            Operation::Steal => write!(f, "steal()"),
            Operation::StealBatch {
                limit,
                and_pop: false,
            } => write!(f, "steal_batch(limit {limit})"),
            Operation::StealBatch {
                limit,
                and_pop: true,
            } => {
                write!(f, "steal_batch_and_pop(limit {limit})")
            }
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Pushed => write!(f, "Ok"),
            Outcome::Full => write!(f, "Err(full)"),
            Outcome::Popped(Some(task)) => write!(f, "Some({task})"),
            Outcome::Popped(None) => write!(f, "None"),
            Outcome::Stolen(tasks) => write!(f, "Success({tasks:?})"),
            Outcome::Empty => write!(f, "Empty"),
            Outcome::Retry => write!(f, "Retry"),
        }
    }
}

impl fmt::Display for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} -> {}", self.operation, self.outcome)
    }
}

impl fmt::Display for History {
    /// One line per thread and phase, in program order.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let last_phase = self
            .threads
            .iter()
            .flat_map(|log| log.entries.iter().map(|e| e.phase))
            .max();
        let Some(last_phase) = last_phase else {
            return writeln!(f, "    (no operation)");
        };
        for phase in 0..=last_phase {
            for (thread, log) in self.threads.iter().enumerate() {
                let entries: Vec<String> = log
                    .entries
                    .iter()
                    .filter(|e| e.phase == phase)
                    .map(|e| e.to_string())
                    .collect();
                if !entries.is_empty() {
                    writeln!(
                        f,
                        "    phase {phase} thread {thread}: {}",
                        entries.join("; ")
                    )?;
                }
            }
        }
        Ok(())
    }
}
