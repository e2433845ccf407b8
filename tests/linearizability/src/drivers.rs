//! Drivers: generate scenarios with proptest, run each one many times (on
//! hardware threads here; under shuttle in the shuttle tests), check every
//! history, and let proptest shrink a failure to the smallest scenario.
//!
//! Budgets come from environment variables so that CI runs a small, fixed
//! amount and a person can run far more; the seed is fixed (and printed) so
//! that the scenarios of a run can be generated again.

use std::cell::Cell;

use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner};

use crate::checker::check;
use crate::explanation::explain;
use crate::harness::{run_scenario, DequeUnderTest, HardwareThreads};
use crate::history::{History, Outcome};
use crate::scenario::{scenarios, Scenario, Shape};

/// Reads a budget from the environment, or returns `default`.
///
/// # Panics
/// If the variable is set but is not a number.
pub fn budget(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(value) => value
            .parse()
            .unwrap_or_else(|_| panic!("{name}={value} is not a number")),
        Err(_) => default,
    }
}

/// How long a hunt for a non-linearizable history may go on.
#[derive(Clone, Copy, Debug)]
pub struct HuntBudget {
    /// Scenarios to generate.
    pub cases: u32,
    /// The seed of the scenario generator.
    pub seed: u64,
    /// How many simplifications proptest may try when shrinking a failure.
    pub shrink_iterations: u32,
}

/// What one scenario's runs found.
#[derive(Clone, Debug)]
pub struct Attempt {
    /// Runs (executions or schedules) made for this scenario.
    pub executions: u64,
    /// Of those, the runs in which some steal answered `Retry`: a sign that
    /// threads really raced (a lost CAS), not just ran one after another.
    pub raced: u64,
    /// The explanation of the first non-linearizable history, if any.
    pub failure: Option<String>,
}

/// What a hunt found.
#[derive(Clone, Debug)]
pub struct Hunt {
    /// Scenarios run until the first failure (included), or all of them.
    pub cases: u64,
    /// Executions or schedules run until the first failure (included), or
    /// all of them.
    pub executions: u64,
    /// Of those, the runs in which some steal answered `Retry`.
    pub raced: u64,
    /// The smallest failing scenario proptest shrank to, and its explanation.
    pub failure: Option<(Scenario, String)>,
}

/// Generates scenarios of `shape` and runs `attempt` on each until one fails;
/// proptest then shrinks the failing scenario.
pub fn hunt(shape: Shape, budget: HuntBudget, attempt: impl Fn(&Scenario) -> Attempt) -> Hunt {
    let config = Config {
        cases: budget.cases,
        max_shrink_iters: budget.shrink_iterations,
        // A planted bug is expected to fail: write no regression file.
        failure_persistence: None,
        ..Config::default()
    };
    let mut seed = [0u8; 32];
    seed[..8].copy_from_slice(&budget.seed.to_le_bytes());
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &seed));
    let cases = Cell::new(0u64);
    let executions = Cell::new(0u64);
    let raced = Cell::new(0u64);
    let failed = Cell::new(false);
    let result = runner.run(&scenarios(shape), |scenario| {
        let outcome = attempt(&scenario);
        if !failed.get() {
            cases.set(cases.get() + 1);
            executions.set(executions.get() + outcome.executions);
            raced.set(raced.get() + outcome.raced);
        }
        match outcome.failure {
            Some(explanation) => {
                failed.set(true);
                Err(TestCaseError::fail(explanation))
            }
            None => Ok(()),
        }
    });
    let failure = match result {
        Ok(()) => None,
        Err(TestError::Fail(reason, scenario)) => Some((scenario, reason.message().to_string())),
        Err(TestError::Abort(reason)) => panic!("proptest aborted: {reason}"),
    };
    Hunt {
        cases: cases.get(),
        executions: executions.get(),
        raced: raced.get(),
        failure,
    }
}

/// Whether some steal of the history answered `Retry`.
pub fn raced(history: &History) -> bool {
    history
        .threads
        .iter()
        .flat_map(|log| &log.entries)
        .any(|entry| entry.outcome == Outcome::Retry)
}

/// Checks one history; on failure returns the minimal explanation.
pub fn check_history(history: &History) -> Option<String> {
    match check(history) {
        Ok(_) => None,
        Err(_) => Some(
            explain(history)
                .expect("a history that fails the check is explained")
                .to_string(),
        ),
    }
}

/// Runs `scenario` `runs` times on hardware threads against `deque`, checking
/// each history; stops at the first failure.
pub fn on_hardware_threads<D: DequeUnderTest>(
    deque: &D,
    scenario: &Scenario,
    runs: u64,
) -> Attempt {
    let mut raced_runs = 0;
    for run in 1..=runs {
        // A thread's panic (the deque's own check of a state a correct deque
        // never reaches, in a mutant build) fails the run as a wrong history
        // does; in the shipped build it fails the control test.
        let history = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run_scenario(deque, &HardwareThreads, scenario)
        })) {
            Ok(history) => history,
            Err(payload) => {
                let message = payload
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| payload.downcast_ref::<&str>().copied())
                    .unwrap_or("a panic");
                return Attempt {
                    executions: run,
                    raced: raced_runs,
                    failure: Some(format!("a thread panicked: {message}")),
                };
            }
        };
        raced_runs += u64::from(raced(&history));
        if let Some(explanation) = check_history(&history) {
            return Attempt {
                executions: run,
                raced: raced_runs,
                failure: Some(explanation),
            };
        }
    }
    Attempt {
        executions: runs,
        raced: raced_runs,
        failure: None,
    }
}
