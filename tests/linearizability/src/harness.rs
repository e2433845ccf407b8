//! Runs a scenario against a deque and records the history.
//!
//! The harness is generic over the deque ([`DequeUnderTest`]: the real one,
//! its shuttle or mutant builds, or a deliberately broken test deque) and
//! over the threads ([`Threads`]: hardware threads, shuttle's under any
//! scheduler, or loom's). It adds no synchronisation inside a phase: each
//! thread writes its own log, which the harness collects when it joins the
//! thread.

use std::sync::atomic::{AtomicUsize, Ordering as AtomicOrdering};
use std::sync::Arc;

use crate::history::{Flavor, History, Operation, Outcome, Phase, Specification, Task, ThreadLog};
use crate::scenario::{Destination, OwnerAction, Scenario, ThiefAction};

/// A deque implementation the harness can drive. Tasks are named by `u64`
/// ids; what the deque stores for one is up to the implementation (see
/// [`TaskValue`]).
pub trait DequeUnderTest: Clone + Send + Sync + 'static {
    /// The owner's handle.
    type Worker: Send + 'static;
    /// A thief's handle.
    type Stealer: Clone + Send + 'static;

    /// A deque of the given flavour; `capacity` is the initial capacity of a
    /// growable deque or the bound of a bounded one.
    fn worker(&self, flavor: Flavor, capacity: usize, bounded: bool) -> Self::Worker;
    /// A stealer of `worker`.
    fn stealer(&self, worker: &Self::Worker) -> Self::Stealer;
    /// `push` on a growable deque.
    fn push(&self, worker: &Self::Worker, task: Task);
    /// `try_push`.
    fn try_push(&self, worker: &Self::Worker, task: Task) -> Result<(), Task>;
    /// `pop`.
    fn pop(&self, worker: &Self::Worker) -> Option<Task>;
    /// A thief's private deque for batch steals, as `destination` says.
    fn destination(&self, destination: Destination) -> Self::Worker;
    /// `steal`, as an outcome.
    fn steal(&self, stealer: &Self::Stealer) -> Outcome;
    /// `steal_batch_with_limit` (or `..._and_pop`; without a limit,
    /// `steal_batch` or `steal_batch_and_pop`) into `destination`, which is
    /// empty before, from a victim of flavour `victim`; the outcome lists the
    /// tasks taken in claim order, oldest first (and empties the
    /// destination).
    fn steal_batch(
        &self,
        stealer: &Self::Stealer,
        destination: &Self::Worker,
        victim: Flavor,
        limit: Option<usize>,
        and_pop: bool,
    ) -> Outcome;
}

/// What a deque made by [`deque_under_test!`](crate::deque_under_test)
/// stores for a task: the id itself (`u64`), or a value that carries it, for
/// example one that owns heap memory and logs its drop (the fuzz target
/// `schedule`). A value leaves the harness as soon as its id is read.
pub trait TaskValue: Send + 'static {
    /// The value for the task `id`.
    fn from_id(id: Task) -> Self;
    /// The id of the task this value is (consumes it).
    fn into_id(self) -> Task;
}

impl TaskValue for Task {
    fn from_id(id: Task) -> Self {
        id
    }

    fn into_id(self) -> Task {
        self
    }
}

/// Implements [`DequeUnderTest`] for a crate with chase-lev's API (`chase_lev`
/// itself, or one of its internal builds), given how to make a worker. The
/// deque stores `u64` tasks, or, after `task = TYPE,`, values of a
/// [`TaskValue`] type.
///
/// For example, in a test that depends on the shuttle build:
///
/// ```text
/// #[derive(Clone)]
/// struct Shuttled;
/// chase_lev_tests::deque_under_test!(Shuttled, chase_lev_shuttle, |_family, fifo, capacity, bounded| {
///     chase_lev_shuttle::Worker::new_mutant(fifo, capacity, bounded, None)
/// });
/// ```
#[macro_export]
macro_rules! deque_under_test {
    ($family:ty, $krate:ident, |$this:ident, $fifo:ident, $capacity:ident, $bounded:ident| $make:expr) => {
        $crate::deque_under_test!(
            $family,
            $krate,
            task = u64,
            |$this, $fifo, $capacity, $bounded| $make
        );
    };
    ($family:ty, $krate:ident, task = $task:ty, |$this:ident, $fifo:ident, $capacity:ident, $bounded:ident| $make:expr) => {
        impl $crate::harness::DequeUnderTest for $family {
            type Worker = $krate::Worker<$task>;
            type Stealer = $krate::Stealer<$task>;

            fn worker(
                &self,
                flavor: $crate::history::Flavor,
                $capacity: usize,
                $bounded: bool,
            ) -> Self::Worker {
                let $this = self;
                let $fifo = flavor == $crate::history::Flavor::Fifo;
                $make
            }

            fn stealer(&self, worker: &Self::Worker) -> Self::Stealer {
                worker.stealer()
            }

            fn push(&self, worker: &Self::Worker, task: u64) {
                worker.push($crate::harness::TaskValue::from_id(task))
            }

            fn try_push(&self, worker: &Self::Worker, task: u64) -> Result<(), u64> {
                worker
                    .try_push($crate::harness::TaskValue::from_id(task))
                    .map_err($crate::harness::TaskValue::into_id)
            }

            fn pop(&self, worker: &Self::Worker) -> Option<u64> {
                worker.pop().map($crate::harness::TaskValue::into_id)
            }

            fn destination(&self, destination: $crate::scenario::Destination) -> Self::Worker {
                use $crate::history::Flavor;
                use $crate::scenario::Destination;
                match destination {
                    Destination::Fifo => $krate::Worker::new_fifo(),
                    Destination::Worker {
                        flavor,
                        bounded,
                        capacity,
                    } => match (flavor, bounded) {
                        (Flavor::Lifo, false) => $krate::Worker::new_lifo_with_capacity(capacity),
                        (Flavor::Fifo, false) => $krate::Worker::new_fifo_with_capacity(capacity),
                        (Flavor::Lifo, true) => $krate::Worker::new_lifo_bounded(capacity),
                        (Flavor::Fifo, true) => $krate::Worker::new_fifo_bounded(capacity),
                    },
                }
            }

            fn steal(&self, stealer: &Self::Stealer) -> $crate::history::Outcome {
                match stealer.steal() {
                    $krate::Steal::Success(task) => {
                        $crate::history::Outcome::Stolen(vec![$crate::harness::TaskValue::into_id(
                            task,
                        )])
                    }
                    $krate::Steal::Empty => $crate::history::Outcome::Empty,
                    $krate::Steal::Retry => $crate::history::Outcome::Retry,
                }
            }

            fn steal_batch(
                &self,
                stealer: &Self::Stealer,
                destination: &Self::Worker,
                victim: $crate::history::Flavor,
                limit: Option<usize>,
                and_pop: bool,
            ) -> $crate::history::Outcome {
                use $crate::harness::{StealResult, TaskValue};
                let result = if and_pop {
                    let stolen = match limit {
                        Some(limit) => stealer.steal_batch_with_limit_and_pop(destination, limit),
                        None => stealer.steal_batch_and_pop(destination),
                    };
                    match stolen {
                        $krate::Steal::Success(task) => StealResult::Success(Some(task.into_id())),
                        $krate::Steal::Empty => StealResult::Empty,
                        $krate::Steal::Retry => StealResult::Retry,
                    }
                } else {
                    let stolen = match limit {
                        Some(limit) => stealer.steal_batch_with_limit(destination, limit),
                        None => stealer.steal_batch(destination),
                    };
                    match stolen {
                        $krate::Steal::Success(()) => StealResult::Success(None),
                        $krate::Steal::Empty => StealResult::Empty,
                        $krate::Steal::Retry => StealResult::Retry,
                    }
                };
                $crate::harness::batch_outcome(result, victim, || {
                    destination.pop().map(TaskValue::into_id)
                })
            }
        }
    };
}

/// A steal result independent of which build's `Steal` type it came from.
#[derive(Debug)]
pub enum StealResult {
    /// `Steal::Empty`.
    Empty,
    /// `Steal::Success`, with the returned task if any.
    Success(Option<Task>),
    /// `Steal::Retry`.
    Retry,
}

/// Turns a batch steal's result into an outcome in claim order. As in
/// crossbeam-deque, a success's returned task (for `..._and_pop`) and then
/// what `drain` pops from the destination come in the victim owner's pop
/// order, whichever flavour the destination is: oldest first from a FIFO
/// victim, newest first from a LIFO one, which is reversed here.
pub fn batch_outcome(
    result: StealResult,
    victim: Flavor,
    mut drain: impl FnMut() -> Option<Task>,
) -> Outcome {
    match result {
        StealResult::Empty => Outcome::Empty,
        StealResult::Retry => Outcome::Retry,
        StealResult::Success(first) => {
            let mut tasks: Vec<Task> = first.into_iter().collect();
            while let Some(task) = drain() {
                tasks.push(task);
            }
            if victim == Flavor::Lifo {
                tasks.reverse();
            }
            Outcome::Stolen(tasks)
        }
    }
}

/// How the harness runs a round's threads.
pub trait Threads {
    /// Runs `owner` on the current thread and each thief body on a thread of
    /// its own, concurrently; returns the thieves' logs after joining them.
    fn round(&self, owner: &mut dyn FnMut(), thieves: Vec<ThiefBody>) -> Vec<ThreadLog>;
}

/// A thief's work for one round, returning its log.
pub type ThiefBody = Box<dyn FnOnce() -> ThreadLog + Send + 'static>;

/// Hardware threads. All threads of a round wait at a start gate first, so
/// that they start together and really overlap: a round lasts microseconds,
/// less than it takes to wake a parked thread, so the gate spins rather than
/// parks (yielding now and then, as there are more threads than cores). The
/// gate is the phase's start: it orders nothing inside the phase.
#[derive(Clone, Copy, Debug, Default)]
pub struct HardwareThreads;

/// Shuttle's threads: shuttle's scheduler (random, PCT, replay, or the fuzz
/// target's bytes) decides every interleaving. Only inside a shuttle
/// execution.
#[derive(Clone, Copy, Debug, Default)]
pub struct ShuttleThreads;

impl Threads for ShuttleThreads {
    fn round(&self, owner: &mut dyn FnMut(), thieves: Vec<ThiefBody>) -> Vec<ThreadLog> {
        let handles: Vec<_> = thieves.into_iter().map(shuttle::thread::spawn).collect();
        owner();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("a thief panicked"))
            .collect()
    }
}

/// A spinning barrier for one use.
struct StartGate {
    waiting: AtomicUsize,
}

impl StartGate {
    fn pass(&self) {
        // Ordering: AcqRel/Acquire only to make the gate itself sound; the
        // phase boundary it creates is the spawn, which already orders more.
        self.waiting.fetch_sub(1, AtomicOrdering::AcqRel);
        let mut spins = 0u32;
        while self.waiting.load(AtomicOrdering::Acquire) != 0 {
            spins += 1;
            if spins == 64 {
                spins = 0;
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
    }
}

impl Threads for HardwareThreads {
    fn round(&self, owner: &mut dyn FnMut(), thieves: Vec<ThiefBody>) -> Vec<ThreadLog> {
        let gate = Arc::new(StartGate {
            waiting: AtomicUsize::new(thieves.len() + 1),
        });
        let handles: Vec<_> = thieves
            .into_iter()
            .map(|body| {
                let gate = Arc::clone(&gate);
                std::thread::spawn(move || {
                    gate.pass();
                    body()
                })
            })
            .collect();
        gate.pass();
        owner();
        handles
            .into_iter()
            .map(|handle| {
                handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    }
}

/// Runs `scenario` once and returns its history: thread 0 is the owner,
/// threads 1.. the thieves.
pub fn run_scenario<D: DequeUnderTest>(
    deque: &D,
    threads: &dyn Threads,
    scenario: &Scenario,
) -> History {
    let specification = Specification {
        flavor: scenario.flavor,
        bound: scenario.bounded.then_some(scenario.capacity),
    };
    let worker = deque.worker(scenario.flavor, scenario.capacity, scenario.bounded);
    let mut owner_log = ThreadLog::new();
    let mut thief_logs = vec![ThreadLog::new(); scenario.thieves()];
    let mut next_task: Task = 1;
    let mut pushed = 0usize;
    let mut push = |log: &mut ThreadLog, phase: Phase, pushed: &mut usize| {
        let task = next_task;
        next_task += 1;
        if scenario.bounded {
            let outcome = match deque.try_push(&worker, task) {
                Ok(()) => Outcome::Pushed,
                Err(back) => {
                    assert_eq!(back, task, "try_push handed back another task");
                    Outcome::Full
                }
            };
            *pushed += usize::from(outcome == Outcome::Pushed);
            log.record(phase, Operation::TryPush(task), outcome);
        } else {
            deque.push(&worker, task);
            *pushed += 1;
            log.record(phase, Operation::Push(task), Outcome::Pushed);
        }
    };
    for _ in 0..scenario.initial_tasks {
        push(&mut owner_log, 0, &mut pushed);
    }
    let mut phase: Phase = 0;
    for round in &scenario.rounds {
        phase += 1;
        let bodies: Vec<ThiefBody> = round
            .thieves
            .iter()
            .zip(std::mem::take(&mut thief_logs))
            .enumerate()
            .map(|(thief, (actions, log))| {
                let stealer = deque.stealer(&worker);
                let thief = Thief {
                    victim: scenario.flavor,
                    destination: scenario.destination(thief),
                    actions: actions.clone(),
                };
                thief_body(deque, stealer, thief, log, phase)
            })
            .collect();
        let mut owner = || {
            for action in &round.owner {
                match action {
                    OwnerAction::Push => push(&mut owner_log, phase, &mut pushed),
                    OwnerAction::Pop => {
                        let popped = deque.pop(&worker);
                        owner_log.record(phase, Operation::Pop, Outcome::Popped(popped));
                    }
                }
            }
        };
        thief_logs = threads.round(&mut owner, bodies);
    }
    // The drain: a broken deque might never report empty, so stop after one
    // pop more than there were tasks.
    phase += 1;
    for _ in 0..=pushed {
        let popped = deque.pop(&worker);
        owner_log.record(phase, Operation::Pop, Outcome::Popped(popped));
        if popped.is_none() {
            break;
        }
    }
    let mut threads = vec![owner_log];
    threads.extend(thief_logs);
    History::new(specification, threads)
}

/// What one thief does in one round.
struct Thief {
    /// The victim's flavour.
    victim: Flavor,
    destination: Destination,
    actions: Vec<ThiefAction>,
}

fn thief_body<D: DequeUnderTest>(
    deque: &D,
    stealer: D::Stealer,
    thief: Thief,
    mut log: ThreadLog,
    phase: Phase,
) -> ThiefBody {
    let deque = deque.clone();
    Box::new(move || {
        // Made on the first batch only: a model checker pays for every atomic.
        let mut destination = None;
        for action in thief.actions {
            let (limit, and_pop) = match action {
                ThiefAction::Steal => {
                    log.record(phase, Operation::Steal, deque.steal(&stealer));
                    continue;
                }
                ThiefAction::StealBatch { limit } => (limit, false),
                ThiefAction::StealBatchAndPop { limit } => (limit, true),
            };
            let destination =
                destination.get_or_insert_with(|| deque.destination(thief.destination));
            let outcome = deque.steal_batch(&stealer, destination, thief.victim, limit, and_pop);
            let operation = Operation::StealBatch {
                limit: limit.unwrap_or(chase_lev::DEFAULT_BATCH_LIMIT),
                and_pop,
            };
            log.record(phase, operation, outcome);
        }
        log
    })
}

/// The real deque, `chase_lev`, on the std build.
#[derive(Clone, Copy, Debug, Default)]
pub struct ChaseLev;

deque_under_test!(ChaseLev, chase_lev, |family, fifo, capacity, bounded| {
    // The public constructors, which `destination` already chooses from.
    let flavor = if fifo { Flavor::Fifo } else { Flavor::Lifo };
    family.destination(Destination::Worker {
        flavor,
        bounded,
        capacity,
    })
});
