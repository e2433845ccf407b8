//! The canary that runs in every plain `cargo test` (the full loom suite
//! needs `--features loom`): one small loom scenario, so that a build in
//! which the model checker, the ledger or the mutants stopped working is
//! caught even when nobody runs the loom suite. About a second in debug.

use model_tests::explore;
use model_tests::on_loom::scenarios;
use model_tests::Mutant;

const SCENARIO: &str = "prefilled_pop_pop_against_steal_steal";

#[test]
fn the_correct_deque_passes_the_last_element_race() {
    let scenario = scenarios::by_name(SCENARIO).expect("the canary's scenario exists");
    let exploration = explore::with_loom(scenario, None);
    assert!(exploration.passed(), "{:?}", exploration.failure);
    assert!(
        exploration.interleavings > 100,
        "loom explored only {} interleavings",
        exploration.interleavings
    );
}

#[test]
fn the_missing_pop_fence_is_caught_as_a_task_taken_twice() {
    let scenario = scenarios::by_name(SCENARIO).expect("the canary's scenario exists");
    let exploration = explore::with_loom(scenario, Some(Mutant::TakeFence));
    let failure = exploration
        .failure
        .expect("the take-fence mutant must be killed");
    assert!(
        failure.violation.contains("taken twice"),
        "{}",
        failure.violation
    );
}
