//! The joint-relaxation mode of the loom mutant build: the global table of
//! weakenings reaches the deque's sites, and a reset puts the shipped
//! orderings back. (Its own test binary: the table is global to the
//! process, and no other test may explore while it is set.)

use chase_lev_loom_mutants::joint_relaxation;
use model_tests::joint::{self, Outcome};
use model_tests::Mutant;

#[test]
fn a_weakening_in_the_table_reaches_the_deque_and_is_reset() {
    std::env::set_var("LOOM_MAX_PREEMPTIONS", "2");
    let take_fence = Mutant::from_name("take-fence").expect("the table has take-fence");
    assert_eq!(
        joint_relaxation::levels(take_fence)[0],
        "`fence(SeqCst)` to `()`"
    );
    assert!(joint::sites().contains(&take_fence));
    // Logic mutants take no part.
    let logic = Mutant::from_name("steal-from-bottom").expect("a logic mutant");
    assert!(!joint::sites().contains(&logic));
    let mut passed = Vec::new();
    let run = joint::run("test", &[take_fence], &mut passed, true, |_, _, _| {});
    let first = &run.rows[0].tries[0];
    assert!(
        matches!(first, (0, Outcome::Killed { .. })),
        "the pop without its fence must be killed: {first:?}"
    );
    // Every try ends with the table reset: the scenario that killed the
    // pop without its fence passes again against the shipped orderings.
    let (_, Outcome::Killed { scenario, .. }) = first else {
        unreachable!()
    };
    let scenario = model_tests::on_loom::scenarios::ALL
        .iter()
        .find(|candidate| candidate.name == *scenario)
        .expect("the killing scenario is in the suite");
    assert!(model_tests::explore::with_loom(scenario, None).passed());
}
