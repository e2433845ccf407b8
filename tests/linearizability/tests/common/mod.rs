//! What the shuttle driver and the planted-bug tests share: the shuttle and
//! mutant builds as deques under test, and the shuttle driver itself.
#![allow(dead_code)] // each test file uses a different part

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use chase_lev_tests::drivers::{check_history, Attempt};
use chase_lev_tests::harness::{run_scenario, DequeUnderTest, ShuttleThreads};
use chase_lev_tests::scenario::Scenario;
use shuttle::scheduler::{PctScheduler, RandomScheduler, Scheduler};
use shuttle::{Config, Runner};

/// The deque compiled with shuttle's atomics (`chase_lev_shuttle`), correct
/// (`None`) or with one mutant.
#[derive(Clone, Copy, Debug)]
pub struct ShuttleChaseLev {
    pub mutant: Option<chase_lev_shuttle::Mutant>,
}

chase_lev_tests::deque_under_test!(
    ShuttleChaseLev,
    chase_lev_shuttle,
    |family, fifo, capacity, bounded| {
        chase_lev_shuttle::Worker::new_mutant(fifo, capacity, bounded, family.mutant)
    }
);

/// The deque compiled with std atomics and the mutants (`chase_lev_mutants`),
/// for hardware threads.
#[derive(Clone, Copy, Debug)]
pub struct MutantChaseLev {
    pub mutant: Option<chase_lev_mutants::Mutant>,
}

chase_lev_tests::deque_under_test!(
    MutantChaseLev,
    chase_lev_mutants,
    |family, fifo, capacity, bounded| {
        chase_lev_mutants::Worker::new_mutant(fifo, capacity, bounded, family.mutant)
    }
);

/// Which of shuttle's randomized schedulers to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedules {
    /// Uniformly random choices at every step.
    Random,
    /// Probabilistic concurrency testing: random priorities with `depth - 1`
    /// priority changes, which finds bugs of that depth with a known
    /// probability.
    Pct { depth: usize },
}

impl Schedules {
    pub fn name(self) -> String {
        match self {
            Schedules::Random => "shuttle random".to_string(),
            Schedules::Pct { depth } => format!("shuttle PCT (depth {depth})"),
        }
    }
}

/// Runs `scenario` under shuttle for `schedules` schedules, checking every
/// history. On failure, the explanation carries the failing schedule string,
/// and the schedule has been replayed with `shuttle::replay` to confirm that
/// it reproduces the failure.
pub fn under_shuttle<D: DequeUnderTest>(
    deque: &D,
    scenario: &Scenario,
    kind: Schedules,
    schedules: u64,
    seed: u64,
) -> Attempt {
    let executions = Arc::new(AtomicU64::new(0));
    let raced = Arc::new(AtomicU64::new(0));
    let explanation = Arc::new(Mutex::new(None::<String>));
    let body = execution(deque, scenario, &executions, &raced, &explanation);
    let mut config = Config::new();
    config.silence_warnings = true;
    // The checker runs inside the execution, on shuttle's stack.
    config.stack_size = 1 << 20;
    let scheduler: Box<dyn Scheduler + Send> = match kind {
        Schedules::Random => Box::new(RandomScheduler::new_from_seed(seed, schedules as usize)),
        Schedules::Pct { depth } => {
            Box::new(PctScheduler::new_from_seed(seed, depth, schedules as usize))
        }
    };
    let run = catch_unwind(AssertUnwindSafe(|| {
        Runner::new(scheduler, config.clone()).run(body)
    }));
    let executions = executions.load(Ordering::Relaxed);
    let raced = raced.load(Ordering::Relaxed);
    let Err(panic) = run else {
        return Attempt {
            executions,
            raced,
            failure: None,
        };
    };
    let message = panic_message(&panic);
    let Some(explanation) = explanation.lock().unwrap().take() else {
        // Not a linearizability failure (a panic in the deque or harness):
        // report it as it is.
        return Attempt {
            executions,
            raced,
            failure: Some(format!("{} panicked:\n{message}", kind.name())),
        };
    };
    let Some(schedule) = failing_schedule(&message) else {
        return Attempt {
            executions,
            raced,
            failure: Some(format!(
                "{explanation}\n{} gave no schedule string:\n{message}",
                kind.name()
            )),
        };
    };
    let replayed = replays(deque, scenario, &schedule);
    Attempt {
        executions,
        raced,
        failure: Some(format!(
            "{explanation}\ncaught by {} at schedule {executions}; replaying the schedule with \
             shuttle::replay {}.\nfailing schedule:\n{schedule}",
            kind.name(),
            if replayed {
                "reproduces the failure"
            } else {
                "DID NOT reproduce the failure"
            },
        )),
    }
}

/// The body of one shuttle execution: run the scenario, check the history,
/// panic (so that shuttle reports the schedule) if it is not linearizable.
fn execution<D: DequeUnderTest>(
    deque: &D,
    scenario: &Scenario,
    executions: &Arc<AtomicU64>,
    raced: &Arc<AtomicU64>,
    explanation: &Arc<Mutex<Option<String>>>,
) -> impl Fn() + Send + Sync + 'static {
    let (deque, scenario) = (deque.clone(), scenario.clone());
    let (executions, raced, explanation) = (
        Arc::clone(executions),
        Arc::clone(raced),
        Arc::clone(explanation),
    );
    move || {
        let execution = executions.fetch_add(1, Ordering::Relaxed) + 1;
        let history = run_scenario(&deque, &ShuttleThreads, &scenario);
        if chase_lev_tests::drivers::raced(&history) {
            raced.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(found) = check_history(&history) {
            *explanation.lock().unwrap() = Some(found);
            // A `String` payload (a formatted message), into which shuttle
            // writes the failing schedule.
            panic!("the history of execution {execution} is not linearizable");
        }
    }
}

/// Whether replaying `schedule` fails the check again.
fn replays<D: DequeUnderTest>(deque: &D, scenario: &Scenario, schedule: &str) -> bool {
    let (executions, raced) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let explanation = Arc::new(Mutex::new(None::<String>));
    let body = execution(deque, scenario, &executions, &raced, &explanation);
    let replay = catch_unwind(AssertUnwindSafe(|| shuttle::replay(body, schedule)));
    let reproduced = replay.is_err() && explanation.lock().unwrap().is_some();
    reproduced
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(message) = panic.downcast_ref::<String>() {
        message.clone()
    } else if let Some(message) = panic.downcast_ref::<&str>() {
        message.to_string()
    } else {
        "(a panic without a message)".to_string()
    }
}

/// Shuttle's panic message quotes the schedule between two lines holding
/// only a double quote.
fn failing_schedule(message: &str) -> Option<String> {
    let start = message.find("failing schedule:\n\"\n")? + "failing schedule:\n\"\n".len();
    let length = message[start..].find("\n\"")?;
    Some(message[start..start + length].to_string())
}
