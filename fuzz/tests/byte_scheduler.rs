//! The byte scheduler makes an input's interleaving a function of its bytes:
//! what libFuzzer needs to reproduce a crash and to learn from coverage.

use chase_lev_fuzz::drop_log;
use chase_lev_fuzz::schedule::{execute, ScheduleInput};
use chase_lev_tests::history::Flavor;
use chase_lev_tests::scenario::{OwnerAction, Round, Scenario, ThiefAction};

/// An owner that pushes and pops while a thief steals: a scenario with many
/// interleavings and visibly different histories.
fn racing_scenario() -> Scenario {
    Scenario {
        flavor: Flavor::Lifo,
        bounded: false,
        capacity: 1,
        initial_tasks: 2,
        rounds: vec![Round {
            owner: vec![
                OwnerAction::Pop,
                OwnerAction::Push,
                OwnerAction::Pop,
                OwnerAction::Pop,
            ],
            thieves: vec![vec![ThiefAction::Steal; 3]],
        }],
        destinations: vec![],
    }
}

fn history_for(choices: &[u8]) -> String {
    let _owner_of_the_drop_log = drop_log::start_input();
    let input = ScheduleInput {
        scenario: racing_scenario(),
        choices: choices.to_vec(),
    };
    execute(&input).to_string()
}

#[test]
fn the_same_bytes_give_the_same_interleaving() {
    let choices = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4];
    assert_eq!(history_for(&choices), history_for(&choices));
}

#[test]
fn different_bytes_reach_different_interleavings() {
    let histories: std::collections::BTreeSet<String> = (0..64u8)
        .map(|seed| {
            history_for(&[
                seed % 2,
                seed / 2 % 2,
                seed / 4 % 2,
                seed / 8 % 2,
                seed / 16 % 2,
                seed / 32 % 2,
            ])
        })
        .collect();
    assert!(
        histories.len() >= 3,
        "64 schedules gave only {} histories",
        histories.len()
    );
}

#[test]
fn without_bytes_the_running_thread_is_never_preempted() {
    // No choice: the owner runs to its first blocking point (the join), so
    // its pops and push all happen before the thief's steals.
    let history = history_for(&[]);
    assert!(
        history.contains(
            "phase 1 thread 0: pop() -> Some(2); push(3) -> Ok; pop() -> Some(3); pop() -> Some(1)"
        ),
        "{history}"
    );
    assert!(
        history.contains("phase 1 thread 1: steal() -> Empty; steal() -> Empty; steal() -> Empty"),
        "{history}"
    );
}
