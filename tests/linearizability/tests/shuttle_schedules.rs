//! Driver 2: the same kind of scenarios under shuttle, with 5 threads (the
//! owner and 4 thieves), small capacities so that the buffer grows and
//! shrinks, and thousands of schedules per scenario from shuttle's random and
//! PCT schedulers; every history checked.
//!
//! Shuttle runs threads one at a time with sequentially consistent atomics:
//! it finds interleaving bugs, not weak-memory ones (loom and miri cover
//! those).
//!
//! Budgets: `CHASE_LEV_SHUTTLE_SCENARIOS` scenarios, each run for
//! `CHASE_LEV_SHUTTLE_SCHEDULES` schedules under each scheduler;
//! `CHASE_LEV_SEED` seeds both the scenarios and the schedulers.

mod common;

use chase_lev_tests::drivers::{budget, hunt, Attempt, HuntBudget};
use chase_lev_tests::scenario::Shape;
use common::{under_shuttle, Schedules, ShuttleChaseLev};

fn every_history_is_linearizable_under(kind: Schedules) {
    let schedules = budget("CHASE_LEV_SHUTTLE_SCHEDULES", 2000);
    let seed = budget("CHASE_LEV_SEED", 2013);
    let limits = HuntBudget {
        cases: budget("CHASE_LEV_SHUTTLE_SCENARIOS", 12) as u32,
        seed,
        shrink_iterations: 32,
    };
    let deque = ShuttleChaseLev { mutant: None };
    let found = hunt(Shape::shuttle(), limits, |scenario| -> Attempt {
        under_shuttle(&deque, scenario, kind, schedules, seed)
    });
    println!(
        "{}: {} scenarios x {schedules} schedules = {} histories checked, {} with a lost race (Retry) (seed {seed})",
        kind.name(),
        found.cases,
        found.executions,
        found.raced
    );
    if let Some((scenario, explanation)) = found.failure {
        panic!("smallest failing scenario: {scenario:#?}\n{explanation}");
    }
}

#[test]
fn every_history_is_linearizable_under_shuttle_random_schedules() {
    every_history_is_linearizable_under(Schedules::Random);
}

#[test]
fn every_history_is_linearizable_under_shuttle_pct_schedules() {
    every_history_is_linearizable_under(Schedules::Pct { depth: 3 });
}
