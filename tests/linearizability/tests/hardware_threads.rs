//! Driver 1: proptest scenarios on hardware threads against the real deque
//! (the std build, `chase_lev`), every history checked.
//!
//! Budgets: `CHASE_LEV_HARDWARE_CASES` scenarios, each run
//! `CHASE_LEV_HARDWARE_RUNS` times; `CHASE_LEV_SEED` picks the scenarios.

use chase_lev_tests::drivers::{budget, hunt, on_hardware_threads, HuntBudget};
use chase_lev_tests::harness::ChaseLev;
use chase_lev_tests::scenario::Shape;

#[test]
fn every_history_of_the_deque_on_hardware_threads_is_linearizable() {
    let runs = budget("CHASE_LEV_HARDWARE_RUNS", 25);
    let limits = HuntBudget {
        cases: budget("CHASE_LEV_HARDWARE_CASES", 64) as u32,
        seed: budget("CHASE_LEV_SEED", 2013),
        shrink_iterations: 64,
    };
    let found = hunt(Shape::hardware(), limits, |scenario| {
        on_hardware_threads(&ChaseLev, scenario, runs)
    });
    println!(
        "hardware threads: {} scenarios x {runs} runs = {} histories checked, {} with a lost race (Retry) (seed {})",
        found.cases, found.executions, found.raced, limits.seed
    );
    if let Some((scenario, explanation)) = found.failure {
        panic!("smallest failing scenario: {scenario:#?}\n{explanation}");
    }
}
