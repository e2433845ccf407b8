//! The `schedule` harness: a small concurrent scenario (one owner, one or two
//! thieves) run under shuttle, with the interleaving chosen by the fuzzer's
//! bytes through [`ByteScheduler`].
//!
//! The deque is `chase_lev_shuttle`, the deque's own source compiled with
//! shuttle's atomics, built with `Worker::new_mutant(.., None)`: the correct
//! algorithm. Shuttle's memory model is sequentially consistent, so this
//! target looks for logic races (two parties taking one task, a task lost
//! across a grow or shrink, a batch claim overlapping a pop), not for
//! missing fences; those are the model checkers' work (model-tests).
//!
//! Two oracles:
//! - linearizability: the history of the victim deque (every call, what it
//!   answered, and phases: the prefill, then the concurrent part, then the
//!   owner's final drain) must pass `chase_lev_tests::check`, the checker of
//!   the `tests` package, against the sequential deque;
//! - exactly once: every task made is dropped exactly once, per the
//!   [`drop_log`] (a task is dropped by whoever took it, by the owner when
//!   `try_push` hands it back, or when a destination worker is drained).
//!   The tasks own heap memory, so a task taken twice is also a double free
//!   for AddressSanitizer.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use arbitrary::{Arbitrary, Unstructured};
use chase_lev_shuttle::{Steal, Stealer, Worker};
use chase_lev_tests::history::{
    Flavor, History, Operation, Outcome, Phase, Specification, ThreadLog,
};
use shuttle::{Config, Runner};

use crate::byte_scheduler::ByteScheduler;
use crate::drop_log;
use crate::model::DEFAULT_BATCH_LIMIT;
use crate::tracked_task::{BoxedTask, TrackedTask};

/// Small numbers keep an execution short (so exec/s high) while still
/// reaching a full bounded deque, a grow, a shrink and a batch.
const MAX_CAPACITY: u8 = 8;
const MAX_PREFILL: u8 = 8;
const MAX_OWNER_STEPS: usize = 12;
const MAX_THIEVES: usize = 2;
const MAX_THIEF_STEPS: usize = 4;
const MAX_DESTINATION_CAPACITY: u8 = 4;

/// The phases of the history: each happens after the previous one (spawn
/// and join separate them).
const PREFILL: Phase = 0;
const CONCURRENT: Phase = 1;
const DRAIN: Phase = 2;

/// A heap task: a task taken twice is also a double free.
type Task = BoxedTask;

/// One fuzz input: the scenario, then the scheduling choices (all the
/// bytes the scenario did not use).
#[derive(Debug)]
pub struct ScheduleInput {
    pub scenario: Scenario,
    pub choices: Vec<u8>,
}

impl<'a> Arbitrary<'a> for ScheduleInput {
    fn arbitrary(input: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let scenario = Scenario::arbitrary(input)?;
        let choices = input.bytes(input.len())?.to_vec();
        Ok(ScheduleInput { scenario, choices })
    }

    fn arbitrary_take_rest(mut input: Unstructured<'a>) -> arbitrary::Result<Self> {
        Self::arbitrary(&mut input)
    }
}

#[derive(Clone, Debug, Arbitrary)]
pub struct Scenario {
    pub fifo: bool,
    pub bounded: bool,
    /// Read as `1 + capacity % 8`.
    pub capacity: u8,
    /// Tasks pushed before the thieves start, read modulo 9.
    pub prefill: u8,
    pub owner: Vec<OwnerStep>,
    /// At least one thief runs (with one `Steal` if none is given).
    pub thieves: Vec<Thief>,
}

#[derive(Clone, Copy, Debug, Arbitrary)]
pub enum OwnerStep {
    /// `push`, or `try_push` on a bounded worker (a refused task is dropped).
    Push,
    Pop,
}

#[derive(Clone, Debug, Arbitrary)]
pub struct Thief {
    /// The worker that batch steals go into; only this thief uses it.
    pub destination_fifo: bool,
    pub destination_bounded: bool,
    /// Read as `1 + capacity % 4`.
    pub destination_capacity: u8,
    pub steps: Vec<ThiefStep>,
}

#[derive(Clone, Copy, Debug, Arbitrary)]
pub enum ThiefStep {
    Steal,
    /// `steal_batch`, or `steal_batch_with_limit(max(limit, 1))`.
    StealBatch {
        limit: Option<u8>,
    },
    StealBatchAndPop {
        limit: Option<u8>,
    },
}

impl Scenario {
    /// The scenario with every number in range and every list cut to size.
    fn normalised(&self) -> Scenario {
        let mut thieves: Vec<Thief> = self.thieves.iter().take(MAX_THIEVES).cloned().collect();
        if thieves.is_empty() {
            thieves.push(Thief {
                destination_fifo: false,
                destination_bounded: false,
                destination_capacity: 0,
                steps: vec![ThiefStep::Steal],
            });
        }
        for thief in &mut thieves {
            thief.destination_capacity = 1 + thief.destination_capacity % MAX_DESTINATION_CAPACITY;
            thief.steps.truncate(MAX_THIEF_STEPS);
        }
        Scenario {
            fifo: self.fifo,
            bounded: self.bounded,
            capacity: 1 + self.capacity % MAX_CAPACITY,
            prefill: self.prefill % (MAX_PREFILL + 1),
            owner: self.owner.iter().take(MAX_OWNER_STEPS).copied().collect(),
            thieves,
        }
    }

    fn specification(&self) -> Specification {
        Specification {
            flavor: if self.fifo {
                Flavor::Fifo
            } else {
                Flavor::Lifo
            },
            bound: self.bounded.then_some(usize::from(self.capacity)),
        }
    }
}

/// What one execution produced.
#[derive(Debug)]
pub struct Execution {
    /// Tasks 0, 1, ... were made (pushed or refused).
    pub tasks_made: u64,
    /// The victim deque's history.
    pub history: History,
}

/// Runs one input; panics if an oracle fails.
pub fn run(input: &ScheduleInput) {
    let _owner_of_the_drop_log = drop_log::start_input();
    let execution = execute(input);
    let scenario = input.scenario.normalised();
    check_exactly_once(execution.tasks_made, &scenario);
    check_linearizable(&execution.history, &scenario);
}

/// Runs the input's scenario once under its schedule, without the oracles.
/// The caller owns the drop log.
pub fn execute(input: &ScheduleInput) -> Execution {
    let scenario = input.scenario.normalised();
    let result = Arc::new(Mutex::new(None));
    let mut config = Config::new();
    // Shuttle warns once per process that its atomics are sequentially
    // consistent; that is known (see the module documentation).
    config.silence_warnings = true;
    let runner = Runner::new(ByteScheduler::new(input.choices.clone()), config);
    let slot = Arc::clone(&result);
    let for_execution = scenario.clone();
    let executions = runner.run(move || {
        let execution = run_scenario(&for_execution);
        *slot.lock().unwrap() = Some(execution);
    });
    assert_eq!(
        executions, 1,
        "the byte scheduler runs exactly one execution"
    );
    let execution = result
        .lock()
        .unwrap()
        .take()
        .expect("the execution finished");
    execution
}

/// The scenario itself, inside a shuttle execution. Every handle of every
/// deque is dropped before it returns: shuttle's atomics only work inside.
fn run_scenario(scenario: &Scenario) -> Execution {
    let worker = Worker::<Task>::new_mutant(
        scenario.fifo,
        scenario.capacity.into(),
        scenario.bounded,
        None,
    );
    let mut owner_log = ThreadLog::new();
    let mut tasks_made = 0u64;
    let mut push = |log: &mut ThreadLog, phase: Phase| {
        let id = tasks_made;
        tasks_made += 1;
        if scenario.bounded {
            let outcome = match worker.try_push(Task::new(id)) {
                Ok(()) => Outcome::Pushed,
                Err(task) => {
                    assert_eq!(task.id(), Some(id), "try_push handed back another task");
                    Outcome::Full
                }
            };
            log.record(phase, Operation::TryPush(id), outcome);
        } else {
            worker.push(Task::new(id));
            log.record(phase, Operation::Push(id), Outcome::Pushed);
        }
    };
    for _ in 0..scenario.prefill {
        push(&mut owner_log, PREFILL);
    }
    let thieves: Vec<_> = scenario
        .thieves
        .iter()
        .map(|thief| {
            let stealer = worker.stealer();
            let thief = thief.clone();
            shuttle::thread::spawn(move || run_thief(&stealer, &thief))
        })
        .collect();
    for step in &scenario.owner {
        match step {
            OwnerStep::Push => push(&mut owner_log, CONCURRENT),
            OwnerStep::Pop => {
                let popped = worker
                    .pop()
                    .map(|task| task.id().expect("boxed tasks have ids"));
                owner_log.record(CONCURRENT, Operation::Pop, Outcome::Popped(popped));
            }
        }
    }
    let mut logs = Vec::new();
    for (handle, thief) in thieves.into_iter().zip(&scenario.thieves) {
        let (log, batches, destination) = handle.join().expect("a thief panicked");
        logs.push(fill_in_batches(
            log,
            &batches,
            &destination,
            scenario.fifo,
            thief.destination_fifo,
        ));
    }
    // The drain: the checker then also sees what was left, in order.
    loop {
        let popped = worker
            .pop()
            .map(|task| task.id().expect("boxed tasks have ids"));
        owner_log.record(DRAIN, Operation::Pop, Outcome::Popped(popped));
        if popped.is_none() {
            break;
        }
    }
    drop(worker);
    logs.insert(0, owner_log);
    Execution {
        tasks_made,
        history: History::new(scenario.specification(), logs),
    }
}

/// Where one successful batch put its tasks in the thief's destination:
/// the log entry to complete and the range of destination positions.
struct Batch {
    entry: usize,
    positions: std::ops::Range<usize>,
}

/// One thief's steps. Returns its log (batch entries not yet complete), its
/// batches, and its destination worker. Nobody else touches the destination
/// and the thief never pops it, so it only grows at its bottom, and the
/// tasks a batch moved are the positions between its length before and
/// after.
fn run_thief(stealer: &Stealer<Task>, thief: &Thief) -> (ThreadLog, Vec<Batch>, Worker<Task>) {
    let destination = Worker::<Task>::new_mutant(
        thief.destination_fifo,
        thief.destination_capacity.into(),
        thief.destination_bounded,
        None,
    );
    let bound = thief
        .destination_bounded
        .then_some(usize::from(thief.destination_capacity));
    let mut log = ThreadLog::new();
    let mut batches = Vec::new();
    for step in &thief.steps {
        let (limit, and_pop) = match *step {
            ThiefStep::Steal => {
                let outcome = match stealer.steal() {
                    Steal::Success(task) => {
                        Outcome::Stolen(vec![task.id().expect("boxed tasks have ids")])
                    }
                    Steal::Empty => Outcome::Empty,
                    Steal::Retry => Outcome::Retry,
                };
                log.record(CONCURRENT, Operation::Steal, outcome);
                continue;
            }
            ThiefStep::StealBatch { limit } => (limit, false),
            ThiefStep::StealBatchAndPop { limit } => (limit, true),
        };
        let before = destination.len();
        if !and_pop && Some(before) == bound {
            // A batch into a full bounded destination answers `Empty` with
            // tasks in the victim: documented, but not a property of the
            // victim alone, which is what the history describes.
            continue;
        }
        let limit_used = limit.map_or(DEFAULT_BATCH_LIMIT, |limit| usize::from(limit).max(1));
        let result: Steal<Option<Task>> = match (and_pop, limit) {
            (false, None) => as_kept(stealer.steal_batch(&destination)),
            (false, Some(_)) => as_kept(stealer.steal_batch_with_limit(&destination, limit_used)),
            (true, None) => as_popped(stealer.steal_batch_and_pop(&destination)),
            (true, Some(_)) => {
                as_popped(stealer.steal_batch_with_limit_and_pop(&destination, limit_used))
            }
        };
        let outcome = match result {
            Steal::Success(kept) => {
                batches.push(Batch {
                    entry: log.entries.len(),
                    positions: before..destination.len(),
                });
                Outcome::Stolen(
                    kept.map(|task| task.id().expect("boxed tasks have ids"))
                        .into_iter()
                        .collect(),
                )
            }
            Steal::Empty => Outcome::Empty,
            Steal::Retry => Outcome::Retry,
        };
        log.record(
            CONCURRENT,
            Operation::StealBatch {
                limit: limit_used,
                and_pop,
            },
            outcome,
        );
    }
    (log, batches, destination)
}

fn as_kept(result: Steal<()>) -> Steal<Option<Task>> {
    match result {
        Steal::Success(()) => Steal::Success(None),
        Steal::Empty => Steal::Empty,
        Steal::Retry => Steal::Retry,
    }
}

fn as_popped(result: Steal<Task>) -> Steal<Option<Task>> {
    match result {
        Steal::Success(task) => Steal::Success(Some(task)),
        Steal::Empty => Steal::Empty,
        Steal::Retry => Steal::Retry,
    }
}

/// Drains the thief's destination (oldest first) and completes each batch
/// entry with the tasks it moved, all in the order they were claimed.
/// `victim_fifo` and `fifo` say which end the victim's and the destination's
/// `pop` take: as in crossbeam-deque, a batch leaves the destination popping
/// its tasks in the victim owner's pop order, so its positions hold them in
/// claim order when both flavours agree and reversed when they differ, and
/// the task `steal_batch_and_pop` returned is the newest of its batch from a
/// LIFO victim.
fn fill_in_batches(
    mut log: ThreadLog,
    batches: &[Batch],
    destination: &Worker<Task>,
    victim_fifo: bool,
    fifo: bool,
) -> ThreadLog {
    let mut held = Vec::new();
    while let Some(task) = destination.pop() {
        held.push(task.id().expect("boxed tasks have ids"));
    }
    if !fifo {
        // A LIFO worker popped its newest first.
        held.reverse();
    }
    for batch in batches {
        let mut moved = held
            .get(batch.positions.clone())
            .expect("the destination holds every moved task")
            .to_vec();
        if victim_fifo != fifo {
            moved.reverse();
        }
        match &mut log.entries[batch.entry].outcome {
            Outcome::Stolen(tasks) if victim_fifo => tasks.extend_from_slice(&moved),
            Outcome::Stolen(tasks) => {
                // The returned task, if any, was the last one claimed.
                moved.append(tasks);
                *tasks = moved;
            }
            other => unreachable!("a batch entry records Stolen, not {other:?}"),
        }
    }
    log
}

/// Every task made was dropped exactly once, and no other was.
fn check_exactly_once(tasks_made: u64, scenario: &Scenario) {
    let mut drops: BTreeMap<u64, usize> = BTreeMap::new();
    for dropped in drop_log::take() {
        *drops
            .entry(dropped.expect("boxed tasks have ids"))
            .or_default() += 1;
    }
    for id in 0..tasks_made {
        let count = drops.remove(&id).unwrap_or(0);
        assert_eq!(
            count, 1,
            "task {id} was dropped {count} times, not once\n{scenario:#?}"
        );
    }
    assert!(
        drops.is_empty(),
        "tasks that were never made were dropped: {drops:?}"
    );
}

/// The history of the victim deque is linearizable.
fn check_linearizable(history: &History, scenario: &Scenario) {
    if chase_lev_tests::check(history).is_err() {
        let explanation = match chase_lev_tests::explain(history) {
            Some(explanation) => explanation.to_string(),
            None => String::from("(the explanation found the history linearizable: checker bug)"),
        };
        panic!("not linearizable\n{scenario:#?}\nhistory:\n{history}\n{explanation}");
    }
}
