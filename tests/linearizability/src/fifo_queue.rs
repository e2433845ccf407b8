//! The injector's specification and checker: a FIFO queue that every thread
//! may push to and steal from.
//!
//! The sequential object is a `VecDeque`: `push` appends at the back;
//! `steal` takes the front, `Empty` when there is none; a batch steal (into a
//! worker, or with `and_pop` also returning one) takes the `k` oldest tasks
//! in one step, `1 <= k <= min(len, limit)` (the injector claims a batch with
//! one CAS, so unlike a LIFO deque's batch it is a single step); the batch's
//! tasks are recorded oldest first. `Retry` changes nothing, and is allowed
//! only if another thread's steal took something in the same phase, or
//! another thread pushed in it (the injector returns it when another steal's
//! CAS won, or when the push that claimed the stolen slot had not written it
//! yet: that push was running at the time).
//!
//! Histories have the deque checker's shape (see `history.rs`): no
//! timestamps; each thread's operations in program order; phases separated
//! by spawn and join, so that every operation of a phase comes after every
//! operation of the phase before. The search is Wing and Gong's with
//! memoisation, phase by phase: the set of queue contents a phase can end
//! with is the start of the next.
//!
//! [`run`] runs a [`Scenario`] on any injector ([`QueueUnderTest`]) and any
//! threads (hardware or shuttle, through a spawn function) and records the
//! history.

use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::sync::Arc;

/// A task: distinct per push.
pub type Task = u64;

/// An operation on the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// `push(task)`.
    Push(Task),
    /// `steal()`.
    Steal,
    /// `steal_batch_with_limit` (or `..._and_pop`) into a fresh worker of the
    /// given flavour; the worker is drained right after, oldest first.
    Batch {
        /// The limit passed.
        limit: usize,
        /// Whether the oldest task is returned instead of pushed into the worker.
        and_pop: bool,
        /// The destination worker's flavour.
        fifo: bool,
    },
}

/// What the queue answered.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Answer {
    /// A push returned.
    Pushed,
    /// A steal or batch took these tasks, oldest first.
    Took(Vec<Task>),
    /// `Empty`.
    Empty,
    /// `Retry`.
    Retry,
}

/// One recorded operation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Event {
    /// Its phase.
    pub phase: u32,
    /// The operation.
    pub op: Op,
    /// The answer.
    pub answer: Answer,
}

/// A history: per thread, its events in program order.
#[derive(Clone, Debug, Default)]
pub struct History {
    /// The threads' logs.
    pub threads: Vec<Vec<Event>>,
}

/// Why a history is not linearizable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotLinearizable(pub String);

impl fmt::Display for NotLinearizable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Applies one event to the queue, or says why it cannot come now.
fn apply(queue: &mut VecDeque<Task>, event: &Event) -> Result<(), String> {
    match (&event.op, &event.answer) {
        (Op::Push(task), Answer::Pushed) => {
            queue.push_back(*task);
            Ok(())
        }
        (_, Answer::Retry) => Ok(()),
        (Op::Steal | Op::Batch { .. }, Answer::Empty) if queue.is_empty() => Ok(()),
        (Op::Steal | Op::Batch { .. }, Answer::Empty) => {
            Err(format!("Empty while the queue held {} tasks", queue.len()))
        }
        (Op::Steal, Answer::Took(tasks)) if tasks.len() == 1 => take(queue, tasks, 1),
        (Op::Batch { limit, .. }, Answer::Took(tasks)) if !tasks.is_empty() => {
            take(queue, tasks, *limit)
        }
        _ => Err(format!("an answer no queue gives: {event:?}")),
    }
}

fn take(queue: &mut VecDeque<Task>, tasks: &[Task], limit: usize) -> Result<(), String> {
    if tasks.len() > limit || tasks.len() > queue.len() {
        return Err(format!(
            "took {} tasks with limit {limit} from {} tasks",
            tasks.len(),
            queue.len()
        ));
    }
    if !queue.iter().take(tasks.len()).eq(tasks.iter()) {
        return Err(format!(
            "took {tasks:?}, but the oldest were {:?}",
            queue.iter().take(tasks.len()).collect::<Vec<_>>()
        ));
    }
    queue.drain(..tasks.len());
    Ok(())
}

/// Checks a history: linearizable against the FIFO queue, every `Retry`
/// excused by a successful steal or a push of another thread in its phase.
pub fn check(history: &History) -> Result<(), NotLinearizable> {
    let phases = history
        .threads
        .iter()
        .flatten()
        .map(|event| event.phase)
        .max()
        .map_or(0, |last| last + 1);
    for (thread, events) in history.threads.iter().enumerate() {
        for event in events.iter().filter(|event| event.answer == Answer::Retry) {
            let excused = history.threads.iter().enumerate().any(|(other, events)| {
                other != thread
                    && events.iter().any(|e| {
                        e.phase == event.phase
                            && matches!(e.answer, Answer::Took(_) | Answer::Pushed)
                    })
            });
            if !excused {
                return Err(NotLinearizable(format!(
                    "thread {thread}'s {:?} returned Retry in phase {}, where no other thread took or pushed a task",
                    event.op, event.phase
                )));
            }
        }
    }
    let mut starts: HashSet<Vec<Task>> = HashSet::from([Vec::new()]);
    for phase in 0..phases {
        let slices: Vec<Vec<&Event>> = history
            .threads
            .iter()
            .map(|events| events.iter().filter(|e| e.phase == phase).collect())
            .collect();
        let mut ends = HashSet::new();
        let mut seen = HashSet::new();
        let mut last_refusal = String::new();
        for start in &starts {
            // Depth-first over (progress per thread, queue), iteratively.
            let mut stack = vec![(vec![0usize; slices.len()], start.clone())];
            while let Some((progress, queue)) = stack.pop() {
                if !seen.insert((progress.clone(), queue.clone())) {
                    continue;
                }
                if progress
                    .iter()
                    .zip(&slices)
                    .all(|(&done, slice)| done == slice.len())
                {
                    ends.insert(queue);
                    continue;
                }
                for (thread, slice) in slices.iter().enumerate() {
                    let Some(event) = slice.get(progress[thread]) else {
                        continue;
                    };
                    let mut next: VecDeque<Task> = queue.iter().copied().collect();
                    match apply(&mut next, event) {
                        Ok(()) => {
                            let mut advanced = progress.clone();
                            advanced[thread] += 1;
                            stack.push((advanced, next.into_iter().collect()));
                        }
                        Err(why) => {
                            last_refusal = format!("thread {thread}'s {:?}: {why}", event.op);
                        }
                    }
                }
            }
        }
        if ends.is_empty() {
            return Err(NotLinearizable(format!(
                "no linearization of phase {phase} (for instance, {last_refusal})"
            )));
        }
        starts = ends;
    }
    Ok(())
}

/// An injector build under test.
pub trait QueueUnderTest: Send + Sync + 'static {
    /// Pushes a task.
    fn push(&self, task: Task);
    /// Steals one task.
    fn steal(&self) -> Answer;
    /// A batch steal into a fresh worker, drained oldest first.
    fn batch(&self, limit: usize, and_pop: bool, fifo: bool) -> Answer;
}

/// Defines `$name`, an injector of a build (a crate with `Injector`,
/// `Worker` and `Steal`) as a [`QueueUnderTest`].
#[macro_export]
macro_rules! queue_under_test {
    ($name:ident, $build:ident) => {
        /// An injector build under test.
        #[derive(Default)]
        pub struct $name(pub $build::Injector<u64>);

        impl $crate::fifo_queue::QueueUnderTest for $name {
            fn push(&self, task: u64) {
                self.0.push(task)
            }
            fn steal(&self) -> $crate::fifo_queue::Answer {
                match self.0.steal() {
                    $build::Steal::Success(task) => $crate::fifo_queue::Answer::Took(vec![task]),
                    $build::Steal::Empty => $crate::fifo_queue::Answer::Empty,
                    $build::Steal::Retry => $crate::fifo_queue::Answer::Retry,
                }
            }
            fn batch(&self, limit: usize, and_pop: bool, fifo: bool) -> $crate::fifo_queue::Answer {
                let dest = if fifo {
                    $build::Worker::new_fifo()
                } else {
                    $build::Worker::new_lifo()
                };
                let (result, mut took) = if and_pop {
                    match self.0.steal_batch_with_limit_and_pop(&dest, limit) {
                        $build::Steal::Success(task) => ($build::Steal::Success(()), vec![task]),
                        $build::Steal::Empty => ($build::Steal::Empty, vec![]),
                        $build::Steal::Retry => ($build::Steal::Retry, vec![]),
                    }
                } else {
                    (self.0.steal_batch_with_limit(&dest, limit), vec![])
                };
                // Either flavour pops the oldest stolen task first.
                took.extend(std::iter::from_fn(|| dest.pop()));
                match result {
                    $build::Steal::Success(()) => $crate::fifo_queue::Answer::Took(took),
                    $build::Steal::Empty => $crate::fifo_queue::Answer::Empty,
                    $build::Steal::Retry => $crate::fifo_queue::Answer::Retry,
                }
            }
        }
    };
}

queue_under_test!(ChaseLevInjector, chase_lev);

/// A generated scenario: per phase, per thread, its operations. Pushes carry
/// distinct tasks. The last phase is one thread draining the queue, so that
/// a lost task shows as a non-linearizable `Empty`.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// `phases[p][t]`: thread `t`'s operations in phase `p`.
    pub phases: Vec<Vec<Vec<Op>>>,
}

impl Scenario {
    /// A scenario from a seed: `threads` threads, a single-threaded prefill
    /// of up to `max_prefill` tasks (to reach block ends), `phases`
    /// concurrent phases of up to `max_ops` operations per thread, and the
    /// drain.
    pub fn generate(
        seed: u64,
        threads: usize,
        max_prefill: u64,
        phases: usize,
        max_ops: u64,
    ) -> Scenario {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = move |bound: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % bound.max(1)
        };
        let mut task = 1;
        let mut push = || {
            task += 1;
            Op::Push(task - 1)
        };
        let prefill = (0..next(max_prefill + 1)).map(|_| push()).collect();
        let mut all = vec![vec![prefill]];
        for _ in 0..phases {
            let phase = (0..threads)
                .map(|_| {
                    (0..1 + next(max_ops))
                        .map(|_| match next(10) {
                            0..=3 => push(),
                            4..=6 => Op::Steal,
                            _ => Op::Batch {
                                limit: 1 + next(5) as usize,
                                and_pop: next(2) == 0,
                                fifo: next(2) == 0,
                            },
                        })
                        .collect()
                })
                .collect();
            all.push(phase);
        }
        let drain = vec![Op::Steal; task as usize];
        all.push(vec![drain]);
        Scenario { phases: all }
    }
}

/// Runs one operation and records it.
fn perform<Q: QueueUnderTest>(queue: &Q, phase: u32, op: Op) -> Event {
    let answer = match op {
        Op::Push(task) => {
            queue.push(task);
            Answer::Pushed
        }
        Op::Steal => queue.steal(),
        Op::Batch {
            limit,
            and_pop,
            fifo,
        } => queue.batch(limit, and_pop, fifo),
    };
    Event { phase, op, answer }
}

/// A thread's work in a phase: its operations, returning its log.
pub type Body = Box<dyn FnOnce() -> Vec<Event> + Send>;

/// Runs `scenario` on `queue`, each phase's threads started by `spawn` (which
/// runs the bodies concurrently and returns their logs in order), and returns
/// the history. The drain phase stops at the first `Empty`.
pub fn run<Q: QueueUnderTest>(
    queue: Arc<Q>,
    scenario: &Scenario,
    spawn: &dyn Fn(Vec<Body>) -> Vec<Vec<Event>>,
) -> History {
    let threads = scenario.phases.iter().map(Vec::len).max().unwrap_or(0);
    let mut history = History {
        threads: vec![Vec::new(); threads],
    };
    let last = scenario.phases.len() - 1;
    for (phase, work) in scenario.phases.iter().enumerate() {
        let bodies: Vec<Body> = work
            .iter()
            .map(|ops| {
                let (queue, ops) = (Arc::clone(&queue), ops.clone());
                let draining = phase == last;
                Box::new(move || {
                    let mut log = Vec::new();
                    for op in ops {
                        let event = perform(&*queue, phase as u32, op);
                        let empty = event.answer == Answer::Empty;
                        log.push(event);
                        if draining && empty {
                            break;
                        }
                    }
                    log
                }) as Body
            })
            .collect();
        for (thread, log) in spawn(bodies).into_iter().enumerate() {
            history.threads[thread].extend(log);
        }
    }
    history
}

/// Hardware threads: one OS thread per body, joined.
pub fn hardware_threads(bodies: Vec<Body>) -> Vec<Vec<Event>> {
    let handles: Vec<_> = bodies.into_iter().map(std::thread::spawn).collect();
    handles
        .into_iter()
        .map(|handle| handle.join().expect("a thread of the scenario panicked"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(phase: u32, op: Op, answer: Answer) -> Event {
        Event { phase, op, answer }
    }

    #[test]
    fn concurrent_pushes_may_come_out_in_either_order() {
        let history = History {
            threads: vec![
                vec![
                    event(0, Op::Push(1), Answer::Pushed),
                    event(1, Op::Steal, Answer::Took(vec![2])),
                ],
                vec![event(0, Op::Push(2), Answer::Pushed)],
            ],
        };
        assert_eq!(check(&history), Ok(()));
    }

    #[test]
    fn a_task_that_overtakes_an_earlier_push_of_its_thread_is_refused() {
        let history = History {
            threads: vec![vec![
                event(0, Op::Push(1), Answer::Pushed),
                event(0, Op::Push(2), Answer::Pushed),
                event(1, Op::Steal, Answer::Took(vec![2])),
            ]],
        };
        assert!(check(&history).is_err());
    }

    #[test]
    fn empty_after_a_completed_push_is_refused() {
        let history = History {
            threads: vec![
                vec![event(0, Op::Push(1), Answer::Pushed)],
                vec![event(1, Op::Steal, Answer::Empty)],
            ],
        };
        assert!(check(&history).is_err());
    }

    #[test]
    fn a_batch_beyond_its_limit_is_refused() {
        let batch = Op::Batch {
            limit: 1,
            and_pop: false,
            fifo: true,
        };
        let history = History {
            threads: vec![vec![
                event(0, Op::Push(1), Answer::Pushed),
                event(0, Op::Push(2), Answer::Pushed),
                event(1, batch, Answer::Took(vec![1, 2])),
            ]],
        };
        assert!(check(&history).is_err());
    }

    #[test]
    fn a_retry_during_another_threads_push_is_allowed() {
        let history = History {
            threads: vec![
                vec![event(0, Op::Push(1), Answer::Pushed)],
                vec![event(0, Op::Steal, Answer::Retry)],
            ],
        };
        assert!(check(&history).is_ok());
    }

    #[test]
    fn a_retry_with_no_competing_steal_is_refused() {
        let history = History {
            threads: vec![
                vec![event(0, Op::Push(1), Answer::Pushed)],
                vec![event(1, Op::Steal, Answer::Retry)],
            ],
        };
        assert!(check(&history).is_err());
    }
}
