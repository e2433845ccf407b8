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
    /// CPU time the exploring thread spent on it (loom runs every model
    /// thread as a coroutine of that one thread), where the OS says
    /// (Linux): on a loaded machine, the figure that does not depend on the
    /// load.
    pub cpu: Option<Duration>,
    /// `None` if every explored execution kept every promise.
    pub failure: Option<Failure>,
    /// Whether loom's time budget (`LOOM_MAX_DURATION`) ran out before the
    /// exploration was complete: `interleavings` is then how far it got.
    pub stopped_by_budget: bool,
}

impl Exploration {
    /// Whether every explored execution kept every promise.
    pub fn passed(&self) -> bool {
        self.failure.is_none()
    }
}

/// Set to `1`, explores every loom scenario without a preemption bound,
/// whatever its own bound and `LOOM_MAX_PREEMPTIONS` say (loom itself only
/// reads a number there, so "unbounded" needs a variable of its own). Pair it
/// with loom's `LOOM_MAX_DURATION` (seconds) so that a run ends by itself.
pub const EXHAUSTIVE_VAR: &str = "CHASE_LEV_LOOM_EXHAUSTIVE";

/// Set to a number `n`, raises the bound of every scenario that has one by
/// `n` (a scenario explored exhaustively stays so): how many interleavings
/// lie beyond the test command's bounds (`model-tests/interleavings.sh`).
pub const RAISE_VAR: &str = "CHASE_LEV_LOOM_RAISE";

/// The preemption bound a scenario whose own bound is `own` runs with:
/// `None` under `CHASE_LEV_LOOM_EXHAUSTIVE=1`, else `LOOM_MAX_PREEMPTIONS`
/// if set (or `own` if that is lower: a budget never raises a scenario's
/// bound), else `own`, raised by `CHASE_LEV_LOOM_RAISE` if set.
pub fn preemption_bound(own: Option<usize>) -> Option<usize> {
    if std::env::var(EXHAUSTIVE_VAR).is_ok_and(|value| value == "1") {
        return None;
    }
    let raise: usize = std::env::var(RAISE_VAR).map_or(0, |value| {
        value
            .parse()
            .unwrap_or_else(|_| panic!("{RAISE_VAR} must be a number"))
    });
    let own = own.map(|own| own + raise);
    match std::env::var("LOOM_MAX_PREEMPTIONS") {
        Ok(value) => {
            let budget: usize = value
                .parse()
                .expect("LOOM_MAX_PREEMPTIONS must be a number");
            Some(own.map_or(budget, |own| own.min(budget)))
        }
        Err(_) => own,
    }
}

/// The preemption bound a scenario runs with under loom (see
/// [`preemption_bound`]).
pub fn loom_preemption_bound(scenario: &on_loom::scenarios::Scenario) -> Option<usize> {
    preemption_bound(scenario.preemption_bound)
}

/// The same for a scenario of the shipped build.
pub fn loom_shipped_preemption_bound(
    scenario: &on_loom_shipped::scenarios::Scenario,
) -> Option<usize> {
    preemption_bound(scenario.preemption_bound)
}

/// Under a time budget (`LOOM_MAX_DURATION`), loom looks at the clock
/// before every execution whose number is a multiple of this (its default is
/// 20,000), and stops there once the budget is spent.
const BUDGET_CHECK_INTERVAL: usize = 1_000;

/// A loom builder with `bound`, and the time budget loom read from the
/// environment, if any.
fn loom_builder(bound: Option<usize>) -> loom::model::Builder {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = bound;
    if builder.max_duration.is_some() {
        builder.checkpoint_interval = BUDGET_CHECK_INTERVAL;
    }
    builder
}

/// Explores `scenario` with loom against the deque weakened by `mutant`
/// (`None`: the correct deque). With `evidence::set_tracing(true)` the
/// failure carries the deque's event log of the failing execution.
pub fn with_loom(scenario: &on_loom::scenarios::Scenario, mutant: Option<Mutant>) -> Exploration {
    let builder = loom_builder(loom_preemption_bound(scenario));
    let budget = builder.max_duration;
    let body = scenario.body;
    let tracing = evidence::tracing();
    let count = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&count);
    run_catching(
        count,
        budget,
        chase_lev_loom_mutants::take_thread_trace,
        move || {
            builder.check(move || {
                counter.fetch_add(1, Ordering::Relaxed);
                ledger::reset();
                evidence::set_tracing(tracing);
                // Each execution starts with an empty log, recording only
                // if tracing (the scenario's handles turn it on).
                chase_lev_loom_mutants::set_event_log(false);
                body(mutant);
            })
        },
    )
}

/// Explores `scenario` with loom against the deque as it ships
/// (`chase-lev-loom`, no mutant compiled in).
pub fn with_loom_shipped(scenario: &on_loom_shipped::scenarios::Scenario) -> Exploration {
    let builder = loom_builder(loom_shipped_preemption_bound(scenario));
    let budget = builder.max_duration;
    let body = scenario.body;
    let count = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&count);
    run_catching(count, budget, Vec::new, move || {
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
        None,
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
/// up to that point (empty unless tracing was on). `budget` is the checker's
/// time budget, if it has one.
fn run_catching(
    count: Arc<AtomicUsize>,
    budget: Option<Duration>,
    events_so_far: fn() -> Vec<String>,
    check: impl FnOnce(),
) -> Exploration {
    let _ = evidence::take_failure();
    let started = Instant::now();
    let cpu_before = thread_cpu_time();
    let result = panic::catch_unwind(AssertUnwindSafe(check));
    let elapsed = started.elapsed();
    let cpu = thread_cpu_time()
        .zip(cpu_before)
        .map(|(after, before)| after.saturating_sub(before));
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
        cpu,
        // Loom stops for its budget just before execution number
        // `k * BUDGET_CHECK_INTERVAL`; a complete run ends anywhere.
        stopped_by_budget: failure.is_none()
            && budget.is_some_and(|budget| elapsed >= budget)
            && interleavings % BUDGET_CHECK_INTERVAL == BUDGET_CHECK_INTERVAL - 1,
        failure,
    }
}

/// The calling thread's CPU time so far (Linux's scheduler statistics, in
/// nanoseconds), or `None` where they cannot be read.
fn thread_cpu_time() -> Option<Duration> {
    let stats = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let nanoseconds = stats.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(nanoseconds))
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

/// How many explorations run side by side: `CHASE_LEV_MODEL_THREADS` if set,
/// else the machine's cores. Loom and shuttle run a model on the OS thread
/// that calls them, with thread-local state (and the ledger and the evidence
/// are thread-local too), so explorations on separate threads share nothing.
pub fn threads() -> usize {
    match std::env::var("CHASE_LEV_MODEL_THREADS") {
        Ok(value) => value
            .parse::<usize>()
            .ok()
            .filter(|threads| *threads > 0)
            .expect("CHASE_LEV_MODEL_THREADS must be a positive number"),
        Err(_) => std::thread::available_parallelism().map_or(1, usize::from),
    }
}

/// Runs `work` on every item, [`threads`] at a time, and calls `done` with
/// each item and its result as soon as it is finished (so in the order
/// they finish); returns the results in the items' order.
pub fn side_by_side<T: Sync, R: Send>(
    items: &[T],
    work: impl Fn(&T) -> R + Sync,
    done: impl FnMut(&T, &R) + Send,
) -> Vec<R> {
    use std::sync::Mutex;
    let next = AtomicUsize::new(0);
    let finished: Mutex<(Vec<Option<R>>, _)> =
        Mutex::new(((0..items.len()).map(|_| None).collect(), done));
    std::thread::scope(|scope| {
        for _ in 0..threads().min(items.len()) {
            scope.spawn(|| loop {
                let index = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(index) else {
                    break;
                };
                let result = work(item);
                let mut finished = finished.lock().unwrap_or_else(|poison| poison.into_inner());
                (finished.1)(item, &result);
                finished.0[index] = Some(result);
            });
        }
    });
    let (results, _) = finished
        .into_inner()
        .unwrap_or_else(|poison| poison.into_inner());
    results
        .into_iter()
        .map(|result| result.expect("every item was run"))
        .collect()
}
