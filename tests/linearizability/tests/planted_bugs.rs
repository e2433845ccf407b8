//! Proof that the checker bites: each planted bug must be reported
//! non-linearizable by each driver, within that driver's default budget.
//! Each test prints the driver, how many scenarios and executions (or
//! schedules) it took, and the minimal explanation of the shrunk failure.
//!
//! The bugs are mutants of the one table, `model-tests/mutants.md`, which
//! the mutant builds apply to the deque's own source:
//! - a thief that takes the newest task: `StealFromBottom`;
//! - an owner pop that skips the last-element CAS: `SkipLastCas`;
//! - a steal without CAS: `StealWithoutCas`;
//! - a batch steal that takes more than half: `BatchTakesAll`;
//! - a batch steal from a FIFO owner that copies the wrong end:
//!   `BatchFromWrongEnd`.
//!
//! The control is the same build without a mutant.
//!
//! Budgets: `CHASE_LEV_PLANTED_CASES`, `CHASE_LEV_PLANTED_RUNS` (hardware),
//! `CHASE_LEV_PLANTED_SCHEDULES` (shuttle), `CHASE_LEV_SEED`.

mod common;

use chase_lev_tests::drivers::{budget, hunt, on_hardware_threads, Hunt, HuntBudget};
use chase_lev_tests::harness::DequeUnderTest;
use chase_lev_tests::scenario::Shape;
use common::{under_shuttle, MutantChaseLev, Schedules, ShuttleChaseLev};

fn limits(default_cases: u64) -> HuntBudget {
    HuntBudget {
        cases: budget("CHASE_LEV_PLANTED_CASES", default_cases) as u32,
        seed: budget("CHASE_LEV_SEED", 2013),
        shrink_iterations: 16,
    }
}

/// A hunt on hardware threads: at most 200 scenarios of 20 runs each to find
/// a bug (a hunt stops at the first catch), 64 for a control.
fn on_hardware<D: DequeUnderTest>(deque: D) -> (String, Hunt) {
    hardware_hunt(deque, 200)
}

fn hardware_hunt<D: DequeUnderTest>(deque: D, cases: u64) -> (String, Hunt) {
    let runs = budget("CHASE_LEV_PLANTED_RUNS", 20);
    let found = hunt(Shape::hardware(), limits(cases), |scenario| {
        on_hardware_threads(&deque, scenario, runs)
    });
    ("hardware threads".to_string(), found)
}

fn under<D: DequeUnderTest>(deque: D, kind: Schedules) -> (String, Hunt) {
    let schedules = budget("CHASE_LEV_PLANTED_SCHEDULES", 1000);
    let seed = budget("CHASE_LEV_SEED", 2013);
    let found = hunt(Shape::shuttle(), limits(8), |scenario| {
        under_shuttle(&deque, scenario, kind, schedules, seed)
    });
    (kind.name(), found)
}

/// Asserts that the hunt caught the bug, and prints how.
fn assert_caught(bug: &str, (driver, found): (String, Hunt)) {
    let unit = if driver.starts_with("shuttle") {
        "schedules"
    } else {
        "executions"
    };
    match found.failure {
        Some((scenario, explanation)) => {
            println!(
                "PLANTED BUG \"{bug}\": caught by {driver} after {} scenario(s), {} {unit}\n\
                 shrunk scenario: {scenario:?}\n{explanation}",
                found.cases, found.executions
            );
        }
        None => panic!(
            "planted bug \"{bug}\" was NOT caught by {driver} in {} scenarios, {} {unit}",
            found.cases, found.executions
        ),
    }
}

/// Asserts that a control (no bug) passes the same hunt.
fn assert_passes(what: &str, (driver, found): (String, Hunt)) {
    if let Some((scenario, explanation)) = found.failure {
        panic!("{what} failed under {driver}: {scenario:?}\n{explanation}");
    }
    println!(
        "{what}: linearizable under {driver} ({} scenarios, {} runs)",
        found.cases, found.executions
    );
}

const THIEF_TAKES_NEWEST: &str = "a thief that takes the newest task (mutant StealFromBottom)";
const SKIP_LAST_CAS: &str = "an owner pop that skips the last-element CAS (mutant SkipLastCas)";
const STEAL_WITHOUT_CAS: &str = "a steal without CAS (mutant StealWithoutCas)";
const BATCH_TAKES_ALL: &str = "a batch steal that takes more than half (mutant BatchTakesAll)";
const BATCH_WRONG_END: &str =
    "a batch steal that takes from the wrong end (mutant BatchFromWrongEnd)";

mod hardware_threads {
    use super::*;
    use chase_lev_mutants::Mutant;
    use chase_lev_tests::history::Flavor;
    use chase_lev_tests::scenario::{OwnerAction, Round, Scenario, ThiefAction};

    #[test]
    fn a_thief_that_takes_the_newest_task_is_caught() {
        assert_caught(
            THIEF_TAKES_NEWEST,
            on_hardware(MutantChaseLev {
                mutant: Some(Mutant::StealFromBottom),
            }),
        );
    }

    /// Generated scenarios rarely make this race happen on hardware (the
    /// owner must take the last task while a thief is between its load of
    /// `bottom` and its CAS, on another core at that very moment), so this
    /// hunt uses the scenario that makes it as likely as it gets: every pop
    /// takes the last task, and three thieves steal all the while.
    #[test]
    fn an_owner_pop_that_skips_the_last_element_cas_is_caught() {
        let deque = MutantChaseLev {
            mutant: Some(Mutant::SkipLastCas),
        };
        let last_task_races = Scenario {
            flavor: Flavor::Lifo,
            bounded: false,
            capacity: 1,
            initial_tasks: 0,
            rounds: vec![Round {
                owner: [OwnerAction::Push, OwnerAction::Pop].repeat(500),
                thieves: vec![vec![ThiefAction::Steal; 500]; 3],
            }],
            destinations: Vec::new(),
        };
        // Caught within 20 to 100 runs here; the budget leaves a margin.
        let runs = budget("CHASE_LEV_PLANTED_RUNS", 20) * 50;
        let attempt = on_hardware_threads(&deque, &last_task_races, runs);
        let found = Hunt {
            cases: 1,
            executions: attempt.executions,
            raced: attempt.raced,
            failure: attempt
                .failure
                .map(|explanation| (last_task_races.clone(), explanation)),
        };
        assert_caught(SKIP_LAST_CAS, ("hardware threads".to_string(), found));
    }

    #[test]
    fn a_steal_without_cas_is_caught() {
        assert_caught(
            STEAL_WITHOUT_CAS,
            on_hardware(MutantChaseLev {
                mutant: Some(Mutant::StealWithoutCas),
            }),
        );
    }

    #[test]
    fn a_batch_steal_that_takes_more_than_half_is_caught() {
        assert_caught(
            BATCH_TAKES_ALL,
            on_hardware(MutantChaseLev {
                mutant: Some(Mutant::BatchTakesAll),
            }),
        );
    }

    #[test]
    fn a_batch_steal_from_the_wrong_end_is_caught() {
        assert_caught(
            BATCH_WRONG_END,
            on_hardware(MutantChaseLev {
                mutant: Some(Mutant::BatchFromWrongEnd),
            }),
        );
    }

    #[test]
    fn the_control_without_a_mutant_passes() {
        assert_passes(
            "the mutant build without a mutant",
            hardware_hunt(MutantChaseLev { mutant: None }, 64),
        );
    }
}

/// The planted bugs under one of shuttle's schedulers: the same tests for
/// each, in a module of its own.
macro_rules! shuttle_planted_bugs {
    ($module:ident, $schedules:expr) => {
        mod $module {
            use super::*;
            use chase_lev_shuttle::Mutant;

            const SCHEDULES: Schedules = $schedules;

            #[test]
            fn a_thief_that_takes_the_newest_task_is_caught() {
                assert_caught(
                    THIEF_TAKES_NEWEST,
                    under(
                        ShuttleChaseLev {
                            mutant: Some(Mutant::StealFromBottom),
                        },
                        SCHEDULES,
                    ),
                );
            }

            #[test]
            fn an_owner_pop_that_skips_the_last_element_cas_is_caught() {
                assert_caught(
                    SKIP_LAST_CAS,
                    under(
                        ShuttleChaseLev {
                            mutant: Some(Mutant::SkipLastCas),
                        },
                        SCHEDULES,
                    ),
                );
            }

            #[test]
            fn a_steal_without_cas_is_caught() {
                assert_caught(
                    STEAL_WITHOUT_CAS,
                    under(
                        ShuttleChaseLev {
                            mutant: Some(Mutant::StealWithoutCas),
                        },
                        SCHEDULES,
                    ),
                );
            }

            #[test]
            fn a_batch_steal_that_takes_more_than_half_is_caught() {
                assert_caught(
                    BATCH_TAKES_ALL,
                    under(
                        ShuttleChaseLev {
                            mutant: Some(Mutant::BatchTakesAll),
                        },
                        SCHEDULES,
                    ),
                );
            }

            #[test]
            fn a_batch_steal_from_the_wrong_end_is_caught() {
                assert_caught(
                    BATCH_WRONG_END,
                    under(
                        ShuttleChaseLev {
                            mutant: Some(Mutant::BatchFromWrongEnd),
                        },
                        SCHEDULES,
                    ),
                );
            }

            #[test]
            fn the_control_without_a_mutant_passes() {
                assert_passes(
                    "the mutant build without a mutant",
                    under(ShuttleChaseLev { mutant: None }, SCHEDULES),
                );
            }
        }
    };
}

shuttle_planted_bugs!(shuttle_random, Schedules::Random);
shuttle_planted_bugs!(shuttle_pct, Schedules::Pct { depth: 3 });
