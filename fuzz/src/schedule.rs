//! The `schedule` harness: a small concurrent scenario (one owner, one or two
//! thieves) run under shuttle, with the interleaving chosen by the fuzzer's
//! bytes through [`ByteScheduler`].
//!
//! The deque is `chase_lev_shuttle`, the deque's own source compiled with
//! shuttle's atomics, built with `Worker::new_mutant(.., None)`: the correct
//! algorithm. Shuttle's memory model is sequentially consistent, so this
//! target looks for logic races (two parties taking one task, a task lost
//! across a grow, a batch claim overlapping a pop), not for missing fences;
//! those are the model checkers' work (model-tests).
//!
//! The oracle:
//! - exactly once: every task made is dropped exactly once (taken and dropped
//!   by whoever took it, handed back by `try_push`, or dropped with a deque
//!   at the end), per the [`drop_log`];
//! - nothing taken twice, and nothing taken that a bounded worker refused;
//! - each thief gets increasing ids from its steals, and a FIFO owner from
//!   its pops: the oldest task is always the smallest id, since one owner
//!   pushes ids in increasing order.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use arbitrary::{Arbitrary, Unstructured};
use chase_lev_shuttle::{Steal, Stealer, Worker};
use shuttle::{Config, Runner};

use crate::byte_scheduler::ByteScheduler;
use crate::drop_log;
use crate::tracked_task::{BoxedTask, TrackedTask};

/// Small numbers keep an execution short (so exec/s high) while still
/// reaching a full bounded deque, a grow, a shrink and a batch.
const MAX_CAPACITY: u8 = 8;
const MAX_PREFILL: u8 = 8;
const MAX_OWNER_STEPS: usize = 12;
const MAX_THIEVES: usize = 2;
const MAX_THIEF_STEPS: usize = 4;

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
    /// The worker that batch steals go into.
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
    /// The thief pops from its destination worker.
    PopDestination,
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
            thief.destination_capacity = 1 + thief.destination_capacity % 4;
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
}

/// What each party took, in the order it took them, and which tasks exist.
#[derive(Debug, Default)]
struct Outcome {
    tasks_made: u64,
    refused: Vec<u64>,
    owner_pops: Vec<u64>,
    /// Per thief: ids returned by its steals (in order), and ids it popped
    /// from its destination worker.
    thief_steals: Vec<Vec<u64>>,
    thief_destination_pops: Vec<Vec<u64>>,
}

/// Runs one input; panics if the oracle fails.
pub fn run(input: &ScheduleInput) {
    let leftover = drop_log::take();
    assert!(
        leftover.is_empty(),
        "drops from a previous input: {leftover:?}"
    );
    let scenario = input.scenario.normalised();
    let outcome = Arc::new(Mutex::new(None));
    let mut config = Config::new();
    // Shuttle warns once per process that its atomics are sequentially
    // consistent; that is known (see the module documentation).
    config.silence_warnings = true;
    let runner = Runner::new(ByteScheduler::new(input.choices.clone()), config);
    let slot = Arc::clone(&outcome);
    let executions = runner.run(move || {
        let result = run_scenario(&scenario);
        *slot.lock().unwrap() = Some(result);
    });
    assert_eq!(
        executions, 1,
        "the byte scheduler runs exactly one execution"
    );
    let outcome = outcome
        .lock()
        .unwrap()
        .take()
        .expect("the execution finished");
    check(&outcome, &input.scenario.normalised());
}

/// The scenario itself, inside a shuttle execution. Every handle of every
/// deque is dropped before it returns: shuttle's atomics only work inside.
fn run_scenario(scenario: &Scenario) -> Outcome {
    let worker = Worker::<Task>::new_mutant(
        scenario.fifo,
        scenario.capacity.into(),
        scenario.bounded,
        None,
    );
    let mut outcome = Outcome::default();
    let push = |outcome: &mut Outcome| {
        let id = outcome.tasks_made;
        outcome.tasks_made += 1;
        if let Err(task) = worker.try_push(Task::new(id)) {
            assert_eq!(task.id(), Some(id), "try_push handed back another task");
            outcome.refused.push(id);
        }
    };
    for _ in 0..scenario.prefill {
        push(&mut outcome);
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
            OwnerStep::Push => push(&mut outcome),
            OwnerStep::Pop => {
                if let Some(task) = worker.pop() {
                    outcome
                        .owner_pops
                        .push(task.id().expect("boxed tasks have ids"));
                }
            }
        }
    }
    for thief in thieves {
        let (steals, destination_pops) = thief.join().expect("a thief panicked");
        outcome.thief_steals.push(steals);
        outcome.thief_destination_pops.push(destination_pops);
    }
    drop(worker);
    outcome
}

/// One thief's steps; returns the ids it stole and the ids it popped from
/// its destination. Its destination (and what is left in it) is dropped
/// when the thief ends.
fn run_thief(stealer: &Stealer<Task>, thief: &Thief) -> (Vec<u64>, Vec<u64>) {
    let destination = Worker::<Task>::new_mutant(
        thief.destination_fifo,
        thief.destination_capacity.into(),
        thief.destination_bounded,
        None,
    );
    let mut steals = Vec::new();
    let mut destination_pops = Vec::new();
    let mut record = |attempt: Steal<Task>| {
        // `Retry` is a lost race: a real scheduler would try again, and the
        // fuzzer's next step does.
        if let Steal::Success(task) = attempt {
            steals.push(task.id().expect("boxed tasks have ids"));
        }
    };
    for step in &thief.steps {
        match *step {
            ThiefStep::Steal => record(stealer.steal()),
            ThiefStep::StealBatch { limit: None } => {
                let _moved_or_not = stealer.steal_batch(&destination);
            }
            ThiefStep::StealBatch { limit: Some(limit) } => {
                let _moved_or_not =
                    stealer.steal_batch_with_limit(&destination, usize::from(limit).max(1));
            }
            ThiefStep::StealBatchAndPop { limit: None } => {
                record(stealer.steal_batch_and_pop(&destination))
            }
            ThiefStep::StealBatchAndPop { limit: Some(limit) } => record(
                stealer.steal_batch_with_limit_and_pop(&destination, usize::from(limit).max(1)),
            ),
            ThiefStep::PopDestination => {
                if let Some(task) = destination.pop() {
                    destination_pops.push(task.id().expect("boxed tasks have ids"));
                }
            }
        }
    }
    (steals, destination_pops)
}

/// The oracle, after the execution, on what was taken and what was dropped.
fn check(outcome: &Outcome, scenario: &Scenario) {
    let mut drops: BTreeMap<u64, usize> = BTreeMap::new();
    for dropped in drop_log::take() {
        let id = dropped.expect("boxed tasks have ids");
        *drops.entry(id).or_default() += 1;
    }
    for id in 0..outcome.tasks_made {
        let count = drops.remove(&id).unwrap_or(0);
        assert_eq!(
            count, 1,
            "task {id} was dropped {count} times, not once\n{scenario:#?}\n{outcome:#?}"
        );
    }
    assert!(
        drops.is_empty(),
        "tasks that were never made were dropped: {drops:?}"
    );

    let mut taken: BTreeMap<u64, &str> = BTreeMap::new();
    let parties = std::iter::once(("the owner", &outcome.owner_pops))
        .chain(
            outcome
                .thief_steals
                .iter()
                .map(|steals| ("a thief", steals)),
        )
        .chain(
            outcome
                .thief_destination_pops
                .iter()
                .map(|pops| ("a thief's destination", pops)),
        );
    for (party, ids) in parties {
        for &id in ids {
            if let Some(first) = taken.insert(id, party) {
                panic!(
                    "task {id} was taken by {first} and by {party}\n{scenario:#?}\n{outcome:#?}"
                );
            }
            assert!(
                !outcome.refused.contains(&id),
                "task {id} was refused by try_push, yet taken"
            );
        }
    }

    let increasing = |ids: &[u64]| ids.windows(2).all(|pair| pair[0] < pair[1]);
    for steals in &outcome.thief_steals {
        assert!(
            increasing(steals),
            "a thief stole out of order: {steals:?}\n{scenario:#?}"
        );
    }
    if scenario.fifo {
        assert!(
            increasing(&outcome.owner_pops),
            "a FIFO owner popped out of order\n{outcome:#?}"
        );
    }
}
