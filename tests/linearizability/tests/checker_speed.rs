//! How fast the checker is on histories of about 100, 300 and 1,000
//! operations over 4 threads (the owner and 3 thieves, all in one concurrent
//! phase), recorded from the real deque on hardware threads. Prints the
//! timings; asserts only the verdicts (no test asserts a wall-clock time).
//!
//! Each history is checked as recorded (linearizable), and once more with one
//! planted error (a thief's last successful steal made to return a task the
//! owner also took), which the search must refute exhaustively.

use std::time::{Duration, Instant};

use chase_lev_tests::harness::{run_scenario, ChaseLev, HardwareThreads};
use chase_lev_tests::history::{Flavor, History, Outcome};
use chase_lev_tests::scenario::{OwnerAction, Round, Scenario, ThiefAction};
use chase_lev_tests::{check, explain};

/// A scenario of about `operations` operations: a quarter initial pushes,
/// the owner pushing and popping, three thieves stealing, then the drain.
fn scenario_of(operations: usize, flavor: Flavor) -> Scenario {
    let quarter = operations / 4;
    let owner = (0..quarter + operations / 8)
        .map(|i| {
            if i % 3 == 2 {
                OwnerAction::Pop
            } else {
                OwnerAction::Push
            }
        })
        .collect();
    let thief = |offset: usize| -> Vec<ThiefAction> {
        (0..operations / 8)
            .map(|i| match (i + offset) % 6 {
                4 => ThiefAction::StealBatch { limit: Some(4) },
                5 => ThiefAction::StealBatchAndPop {
                    limit: Some(chase_lev::DEFAULT_BATCH_LIMIT),
                },
                _ => ThiefAction::Steal,
            })
            .collect()
    };
    Scenario {
        flavor,
        bounded: false,
        capacity: 4,
        initial_tasks: quarter,
        rounds: vec![Round {
            owner,
            thieves: vec![thief(0), thief(2), thief(4)],
        }],
        destinations: Vec::new(),
    }
}

/// A copy of `history` in which the last single steal that succeeded
/// returns a task the owner popped instead: a task taken twice.
fn with_a_task_taken_twice(history: &History) -> Option<History> {
    let owner_took =
        history.threads[0]
            .entries
            .iter()
            .rev()
            .find_map(|entry| match entry.outcome {
                Outcome::Popped(Some(task)) => Some(task),
                _ => None,
            })?;
    let mut broken = history.clone();
    for log in broken.threads.iter_mut().skip(1) {
        if let Some(entry) = log
            .entries
            .iter_mut()
            .rev()
            .find(|entry| matches!(&entry.outcome, Outcome::Stolen(tasks) if tasks.len() == 1))
        {
            entry.outcome = Outcome::Stolen(vec![owner_took]);
            return Some(broken);
        }
    }
    None
}

/// The median time of `repeats` runs of `work`.
fn median_time(repeats: usize, mut work: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..repeats)
        .map(|_| {
            let start = Instant::now();
            work();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[repeats / 2]
}

#[test]
fn checker_speed_on_histories_of_100_300_and_1000_operations() {
    // `cargo test` builds this package at opt-level 2 (root Cargo.toml) with
    // debug assertions on; `--release` turns them off.
    let profile = if cfg!(debug_assertions) {
        "test profile, debug assertions on"
    } else {
        "release"
    };
    println!("checker speed ({profile}), median of 5 checks per history, 4 threads in one phase:");
    println!(
        "{:>10} {:>7} {:>12} {:>9} {:>12} {:>9} {:>12}",
        "flavor", "ops", "check ok", "states", "refute bad", "states", "explain bad"
    );
    for target in [100, 300, 1000] {
        for flavor in [Flavor::Lifo, Flavor::Fifo] {
            let scenario = scenario_of(target, flavor);
            let history = run_scenario(&ChaseLev, &HardwareThreads, &scenario);
            let found = check(&history).unwrap_or_else(|violation| panic!("{violation}"));
            let checking = median_time(5, || assert!(check(&history).is_ok()));
            let broken =
                with_a_task_taken_twice(&history).expect("the owner popped and a thief stole");
            let refuted = check(&broken).expect_err("a task taken twice is not linearizable");
            let refuting = median_time(5, || assert!(check(&broken).is_err()));
            let start = Instant::now();
            let explanation = explain(&broken).expect("not linearizable");
            let explaining = start.elapsed();
            println!(
                "{:>10} {:>7} {:>12?} {:>9} {:>12?} {:>9} {:>12?}  (minimal sub-history: {} ops)",
                format!("{flavor:?}"),
                history.len(),
                checking,
                found.states,
                refuting,
                refuted.states,
                explaining,
                explanation.minimal.history.len()
            );
        }
    }
}
