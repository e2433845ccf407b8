//! Runs one scenario under a model checker and reports what happened: how
//! many executions (interleavings) were explored, how long it took, and
//! whether an execution broke a promise of the deque.
//!
//! Interleavings are counted by a counter around the model body, so the
//! count is the number of executions actually run, up to and including a
//! failing one.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::evidence::{self, Failure};
use crate::ledger;
use crate::{on_loom, on_loom_shipped, on_shuttle, Mutant};

/// The result of exploring one scenario.
#[derive(Clone, Debug)]
pub struct Exploration {
    /// Executions run (for a failure: up to and including the failing one).
    pub interleavings: usize,
    /// Wall-clock time of the exploration.
    pub elapsed: Duration,
    /// `None` if every explored execution kept every promise.
    pub failure: Option<Failure>,
}

impl Exploration {
    /// Whether every explored execution kept every promise.
    pub fn passed(&self) -> bool {
        self.failure.is_none()
    }
}

/// The preemption bound a scenario runs with under loom: the scenario's own,
/// unless `LOOM_MAX_PREEMPTIONS` overrides it.
pub fn loom_preemption_bound(scenario: &on_loom::scenarios::Scenario) -> Option<usize> {
    match std::env::var("LOOM_MAX_PREEMPTIONS") {
        Ok(value) => Some(
            value
                .parse()
                .expect("LOOM_MAX_PREEMPTIONS must be a number"),
        ),
        Err(_) => scenario.preemption_bound,
    }
}

/// Explores `scenario` with loom against the deque weakened by `mutant`
/// (`None`: the correct deque). With `evidence::set_tracing(true)` the
/// failure carries the deque's event log of the failing execution.
pub fn with_loom(scenario: &on_loom::scenarios::Scenario, mutant: Option<Mutant>) -> Exploration {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = loom_preemption_bound(scenario);
    let body = scenario.body;
    let tracing = evidence::tracing();
    let count = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&count);
    run_catching(
        count,
        chase_lev_loom_mutants::take_thread_trace,
        move || {
            builder.check(move || {
                counter.fetch_add(1, Ordering::Relaxed);
                ledger::reset();
                evidence::set_tracing(tracing);
                body(mutant);
            })
        },
    )
}

/// Explores `scenario` with loom against the deque as it ships
/// (`chase-lev-loom`, no mutant compiled in).
pub fn with_loom_shipped(scenario: &on_loom_shipped::scenarios::Scenario) -> Exploration {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = match std::env::var("LOOM_MAX_PREEMPTIONS") {
        Ok(value) => Some(
            value
                .parse()
                .expect("LOOM_MAX_PREEMPTIONS must be a number"),
        ),
        Err(_) => scenario.preemption_bound,
    };
    let body = scenario.body;
    let count = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&count);
    run_catching(count, Vec::new, move || {
        builder.check(move || {
            counter.fetch_add(1, Ordering::Relaxed);
            ledger::reset();
            evidence::set_tracing(false);
            body(None);
        })
    })
}

/// Which shuttle scheduler to use.
#[derive(Clone, Copy, Debug)]
pub enum ShuttleScheduler {
    /// Uniformly random scheduling decisions.
    Random,
    /// Probabilistic concurrency testing, with this bug depth.
    Pct(usize),
}

/// Explores `scenario` with shuttle (sequentially consistent: it cannot
/// show a weak-memory bug) for `schedules` executions.
pub fn with_shuttle(
    scenario: &on_shuttle::scenarios::Scenario,
    mutant: Option<Mutant>,
    scheduler: ShuttleScheduler,
    schedules: usize,
    seed: u64,
) -> Exploration {
    let mutant = mutant.map(|mutant| {
        chase_lev_shuttle::Mutant::from_name(mutant.name())
            .expect("every mutant exists in the shuttle build")
    });
    let body = scenario.body;
    let count = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&count);
    let mut config = shuttle::Config::new();
    config.failure_persistence = shuttle::FailurePersistence::None;
    config.silence_warnings = true;
    let model = move || {
        counter.fetch_add(1, Ordering::Relaxed);
        ledger::reset();
        evidence::set_tracing(false);
        body(mutant);
    };
    run_catching(
        count,
        chase_lev_shuttle::take_thread_trace,
        move || match scheduler {
            ShuttleScheduler::Random => {
                let scheduler = shuttle::scheduler::RandomScheduler::new_from_seed(seed, schedules);
                shuttle::Runner::new(scheduler, config).run(model);
            }
            ShuttleScheduler::Pct(depth) => {
                let scheduler =
                    shuttle::scheduler::PctScheduler::new_from_seed(seed, depth, schedules);
                shuttle::Runner::new(scheduler, config).run(model);
            }
        },
    )
}

/// Runs a model checker, turning a failing execution (a panic) into a
/// failure with the evidence the model recorded, if any. When the checker
/// itself stopped the execution, `events_so_far` gives the deque's event log
/// up to that point (empty unless tracing was on).
fn run_catching(
    count: Arc<AtomicUsize>,
    events_so_far: fn() -> Vec<String>,
    check: impl FnOnce(),
) -> Exploration {
    let _ = evidence::take_failure();
    let started = Instant::now();
    let result = panic::catch_unwind(AssertUnwindSafe(check));
    let elapsed = started.elapsed();
    let interleavings = count.load(Ordering::Relaxed);
    let failure = result.err().map(|payload| {
        let message = panic_message(payload.as_ref());
        match evidence::take_failure() {
            // The model's own check failed and kept its evidence.
            Some(failure) if message.contains(&failure.violation) => failure,
            // Something else panicked: the deque itself, or the checker
            // (a leaked `Arc`, a deadlock).
            _ => Failure {
                violation: message,
                trace: events_so_far(),
                found_by_ledger: false,
            },
        }
    });
    Exploration {
        interleavings,
        elapsed,
        failure,
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(message) = payload.downcast_ref::<String>() {
        message.clone()
    } else if let Some(message) = payload.downcast_ref::<&str>() {
        (*message).to_string()
    } else {
        "a panic without a message".to_string()
    }
}
