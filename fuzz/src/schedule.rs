//! The `schedule` harness: a small concurrent scenario under shuttle, with
//! the interleaving chosen by the fuzzer's bytes through [`ByteScheduler`].
//!
//! The scenario is one of the `tests` package's
//! ([`chase_lev_tests::scenario`]: an owner's prefill, one or two concurrent
//! rounds of the owner and one or two thieves, the owner's final drain), and
//! it runs through that package's harness ([`run_scenario`] on
//! [`ShuttleThreads`]), which records the history; only the decoding of the
//! bytes ([`decode`]) and the drop-log oracle are this crate's.
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
//!   answered, and phases separated by spawn and join) must pass
//!   `chase_lev_tests::check`, the checker of the `tests` package, against
//!   the sequential deque;
//! - exactly once: every task made is dropped exactly once, per the
//!   [`drop_log`]. The deque holds [`BoxedTask`]s, which own heap memory,
//!   so a task taken twice is also a double free for AddressSanitizer; the
//!   harness drops a task as soon as it has read its id (whoever took it,
//!   the owner when `try_push` hands it back, the thief when it drains its
//!   destination after a batch).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use arbitrary::{Arbitrary, Unstructured};
use chase_lev_tests::harness::{run_scenario, ShuttleThreads, TaskValue};
use chase_lev_tests::history::{Flavor, History, Operation, Task};
use chase_lev_tests::scenario::{Destination, OwnerAction, Round, Scenario, Shape, ThiefAction};
use shuttle::{Config, Runner};

use crate::byte_scheduler::ByteScheduler;
use crate::drop_log;
use crate::tracked_task::{BoxedTask, TrackedTask};

/// The sizes of the scenarios [`decode`] makes. Small numbers keep an
/// execution short (so exec/s high) while still reaching a full bounded
/// deque, a grow, a shrink and a batch. `thieves` is the most thieves here
/// (at least one runs); `pop_weight` is proptest's and unused.
pub const SHAPE: Shape = Shape {
    thieves: 2,
    rounds: 2,
    owner_actions: 12,
    thief_actions: 4,
    initial_tasks: 8,
    capacity: 8,
    pop_weight: 2,
    destination_capacity: Some(4),
};

/// One fuzz input: the scenario, then the scheduling choices (all the
/// bytes the scenario did not use).
#[derive(Debug)]
pub struct ScheduleInput {
    pub scenario: Scenario,
    pub choices: Vec<u8>,
}

impl<'a> Arbitrary<'a> for ScheduleInput {
    fn arbitrary(input: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        let scenario = decode(SHAPE, input)?;
        let choices = input.bytes(input.len())?.to_vec();
        Ok(ScheduleInput { scenario, choices })
    }

    fn arbitrary_take_rest(mut input: Unstructured<'a>) -> arbitrary::Result<Self> {
        Self::arbitrary(&mut input)
    }
}

/// Reads a scenario of `shape` (sizes at most those of `shape`) from the
/// fuzzer's bytes; `fuzz/make-seeds.py` writes them. Every input decodes:
/// each number is a byte read modulo its range, and past the end of the
/// input `arbitrary` reads zeros, which end every list.
///
/// In order: the victim's flavour (a bool: FIFO if odd), bounded (a bool),
/// capacity (`1 + byte % shape.capacity`), initial tasks (`byte %
/// (shape.initial_tasks + 1)`), thieves (`1 + byte % shape.thieves`); with
/// `shape.destination_capacity`, each thief's destination (flavour, bounded,
/// `1 + byte % most`); rounds (`1 + byte % shape.rounds`), and per round
/// the owner's list, then each thief's. A list is, per element, a byte 0x01
/// then the element, ended by a byte 0x00 or by reaching its most
/// elements. An owner action is a byte (push if even, pop if odd); a thief
/// action a byte (modulo 3: steal, batch, batch and pop), a batch's followed
/// by its limit (`Option<u8>`: none, or at least 1).
pub fn decode(shape: Shape, input: &mut Unstructured) -> arbitrary::Result<Scenario> {
    let flavor = read_flavor(input)?;
    let bounded = bool::arbitrary(input)?;
    let capacity = 1 + modulo(input, shape.capacity)?;
    let initial_tasks = modulo(input, shape.initial_tasks + 1)?;
    let thieves = 1 + modulo(input, shape.thieves)?;
    let mut destinations = Vec::new();
    if let Some(most) = shape.destination_capacity {
        for _ in 0..thieves {
            destinations.push(Destination::Worker {
                flavor: read_flavor(input)?,
                bounded: bool::arbitrary(input)?,
                capacity: 1 + modulo(input, most)?,
            });
        }
    }
    let mut rounds = Vec::new();
    for _ in 0..1 + modulo(input, shape.rounds)? {
        let owner = list(input, shape.owner_actions, |input| {
            Ok(if bool::arbitrary(input)? {
                OwnerAction::Pop
            } else {
                OwnerAction::Push
            })
        })?;
        let thieves = (0..thieves)
            .map(|_| list(input, shape.thief_actions, thief_action))
            .collect::<arbitrary::Result<_>>()?;
        rounds.push(Round { owner, thieves });
    }
    Ok(Scenario {
        flavor,
        bounded,
        capacity,
        initial_tasks,
        rounds,
        destinations,
    })
}

fn read_flavor(input: &mut Unstructured) -> arbitrary::Result<Flavor> {
    Ok(if bool::arbitrary(input)? {
        Flavor::Fifo
    } else {
        Flavor::Lifo
    })
}

/// A byte modulo `range` (at least 1).
fn modulo(input: &mut Unstructured, range: usize) -> arbitrary::Result<usize> {
    Ok(usize::from(u8::arbitrary(input)?) % range.max(1))
}

fn list<T>(
    input: &mut Unstructured,
    most: usize,
    mut element: impl FnMut(&mut Unstructured) -> arbitrary::Result<T>,
) -> arbitrary::Result<Vec<T>> {
    let mut list = Vec::new();
    while list.len() < most && bool::arbitrary(input)? {
        list.push(element(input)?);
    }
    Ok(list)
}

fn thief_action(input: &mut Unstructured) -> arbitrary::Result<ThiefAction> {
    let kind = modulo(input, 3)?;
    if kind == 0 {
        return Ok(ThiefAction::Steal);
    }
    let limit = Option::<u8>::arbitrary(input)?.map(|limit| usize::from(limit).max(1));
    Ok(if kind == 1 {
        ThiefAction::StealBatch { limit }
    } else {
        ThiefAction::StealBatchAndPop { limit }
    })
}

/// The deque under test: `chase_lev_shuttle`, correct, holding heap tasks.
#[derive(Clone, Copy, Debug)]
struct Shuttled;

chase_lev_tests::deque_under_test!(
    Shuttled,
    chase_lev_shuttle,
    task = BoxedTask,
    |_this, fifo, capacity, bounded| {
        chase_lev_shuttle::Worker::new_mutant(fifo, capacity, bounded, None)
    }
);

impl TaskValue for BoxedTask {
    fn from_id(id: Task) -> Self {
        BoxedTask::new(id)
    }

    /// Reads the id and drops the task (which the drop log records).
    fn into_id(self) -> Task {
        self.id().expect("boxed tasks have ids")
    }
}

/// Runs one input; panics if an oracle fails.
pub fn run(input: &ScheduleInput) {
    let _owner_of_the_drop_log = drop_log::start_input();
    let history = execute(input);
    check_exactly_once(&history, &input.scenario);
    check_linearizable(&history, &input.scenario);
}

/// Runs the input's scenario once under its schedule, without the oracles,
/// and returns the history. The caller owns the drop log.
pub fn execute(input: &ScheduleInput) -> History {
    let result = Arc::new(Mutex::new(None));
    let mut config = Config::new();
    // Shuttle warns once per process that its atomics are sequentially
    // consistent; that is known (see the module documentation).
    config.silence_warnings = true;
    let runner = Runner::new(ByteScheduler::new(input.choices.clone()), config);
    let (slot, scenario) = (Arc::clone(&result), input.scenario.clone());
    // Every handle of every deque is dropped inside the execution (shuttle's
    // atomics only work there): `run_scenario` owns them all.
    let executions = runner.run(move || {
        let history = run_scenario(&Shuttled, &ShuttleThreads, &scenario);
        *slot.lock().unwrap() = Some(history);
    });
    assert_eq!(
        executions, 1,
        "the byte scheduler runs exactly one execution"
    );
    let history = result
        .lock()
        .unwrap()
        .take()
        .expect("the execution finished");
    history
}

/// Every task made (every push and `try_push` of the history) was dropped
/// exactly once, and no other was.
fn check_exactly_once(history: &History, scenario: &Scenario) {
    let mut drops: BTreeMap<u64, usize> = BTreeMap::new();
    for dropped in drop_log::take() {
        *drops
            .entry(dropped.expect("boxed tasks have ids"))
            .or_default() += 1;
    }
    let made = history
        .threads
        .iter()
        .flat_map(|log| &log.entries)
        .filter_map(|entry| match entry.operation {
            Operation::Push(task) | Operation::TryPush(task) => Some(task),
            _ => None,
        });
    for id in made {
        let count = drops.remove(&id).unwrap_or(0);
        assert_eq!(
            count, 1,
            "task {id} was dropped {count} times, not once\n{scenario:#?}\nhistory:\n{history}"
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
