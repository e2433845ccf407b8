//! The injector's histories, checked against the FIFO-queue specification
//! (`chase_lev_tests::fifo_queue`): on hardware threads (the std build,
//! blocks of 63 tasks, prefills that reach block ends) and under shuttle (the
//! shuttle build, blocks of 3 tasks, so every scenario crosses several block
//! ends), then the same drivers against injectors with a planted bug (two
//! mutants of `model-tests/mutants.md`), which they must catch.
//!
//! Budgets: `CHASE_LEV_INJECTOR_SCENARIOS` scenarios, each run
//! `CHASE_LEV_INJECTOR_RUNS` times on hardware threads and for
//! `CHASE_LEV_INJECTOR_SCHEDULES` schedules under each shuttle scheduler.

use std::sync::{Arc, Mutex};

use chase_lev_tests::drivers::budget;
use chase_lev_tests::fifo_queue::{
    check, hardware_threads, run, Body, ChaseLevInjector, Event, QueueUnderTest, Scenario,
};
use shuttle::scheduler::{PctScheduler, RandomScheduler};
use shuttle::{Config, Runner};

chase_lev_tests::queue_under_test!(ShuttleInjector, chase_lev_shuttle);

fn shuttle_threads(bodies: Vec<Body>) -> Vec<Vec<Event>> {
    let handles: Vec<_> = bodies.into_iter().map(shuttle::thread::spawn).collect();
    handles
        .into_iter()
        .map(|handle| handle.join().expect("a thread of the scenario panicked"))
        .collect()
}

/// Every history of `scenarios` scenarios, each run `runs` times on
/// hardware threads, must be linearizable; returns the histories checked.
fn hardware_hunt<Q: QueueUnderTest>(
    make: impl Fn() -> Q,
    max_prefill: u64,
) -> Result<usize, String> {
    let scenarios = budget("CHASE_LEV_INJECTOR_SCENARIOS", 16);
    let runs = budget("CHASE_LEV_INJECTOR_RUNS", 10);
    let mut checked = 0;
    for seed in 0..scenarios {
        let scenario = Scenario::generate(seed, 4, max_prefill, 2, 3);
        for _ in 0..runs {
            let history = run(Arc::new(make()), &scenario, &hardware_threads);
            checked += 1;
            if let Err(why) = check(&history) {
                return Err(format!("seed {seed}: {why}\n{history:#?}"));
            }
        }
    }
    Ok(checked)
}

/// The same under shuttle's random and PCT schedulers.
fn shuttle_hunt<Q: QueueUnderTest>(make: fn() -> Q) -> Result<usize, String> {
    let scenarios = budget("CHASE_LEV_INJECTOR_SCENARIOS", 16);
    let schedules = budget("CHASE_LEV_INJECTOR_SCHEDULES", 60) as usize;
    let mut checked = 0;
    for seed in 0..scenarios {
        let scenario = Scenario::generate(seed, 4, 6, 2, 3);
        for pct in [false, true] {
            let failure: Arc<Mutex<Option<String>>> = Arc::default();
            let (found, scenario) = (Arc::clone(&failure), scenario.clone());
            let model = move || {
                let history = run(Arc::new(make()), &scenario, &shuttle_threads);
                if let Err(why) = check(&history) {
                    found
                        .lock()
                        .unwrap()
                        .get_or_insert(format!("{why}\n{history:#?}"));
                }
            };
            let mut config = Config::new();
            config.failure_persistence = shuttle::FailurePersistence::None;
            if pct {
                Runner::new(PctScheduler::new_from_seed(seed, 3, schedules), config).run(model);
            } else {
                Runner::new(RandomScheduler::new_from_seed(seed, schedules), config).run(model);
            }
            checked += schedules;
            let found = failure.lock().unwrap().take();
            if let Some(why) = found {
                return Err(format!(
                    "seed {seed} ({}): {why}",
                    if pct { "PCT" } else { "random" }
                ));
            }
        }
    }
    Ok(checked)
}

#[test]
fn every_injector_history_on_hardware_threads_is_linearizable() {
    let checked =
        hardware_hunt(ChaseLevInjector::default, 130).unwrap_or_else(|why| panic!("{why}"));
    println!("{checked} hardware-thread histories of the injector checked");
}

#[test]
fn every_injector_history_under_shuttle_is_linearizable() {
    let checked = shuttle_hunt(ShuttleInjector::default).unwrap_or_else(|why| panic!("{why}"));
    println!("{checked} shuttle histories of the injector checked");
}

// The injector of the std mutant build, which carries a mutant.
chase_lev_tests::queue_under_test!(MutantInjector, chase_lev_mutants);

fn std_with(mutant: chase_lev_mutants::Mutant) -> MutantInjector {
    MutantInjector(chase_lev_mutants::Injector::new_mutant(Some(mutant)))
}

// The planted bugs are mutants of the one table, `model-tests/mutants.md`.

#[test]
fn the_hardware_driver_catches_an_injector_that_reverses_its_batches() {
    let found = hardware_hunt(
        || std_with(chase_lev_mutants::Mutant::InjectorBatchReversed),
        130,
    );
    assert!(found.is_err());
}

#[test]
fn the_shuttle_driver_catches_an_injector_that_reverses_its_batches() {
    let found = shuttle_hunt(|| {
        ShuttleInjector(chase_lev_shuttle::Injector::new_mutant(Some(
            chase_lev_shuttle::Mutant::InjectorBatchReversed,
        )))
    });
    assert!(found.is_err());
}

#[test]
fn the_hardware_driver_catches_an_injector_that_misses_its_last_task() {
    let found = hardware_hunt(
        || std_with(chase_lev_mutants::Mutant::InjectorStealMissesLastTask),
        130,
    );
    assert!(found.is_err());
}

#[test]
fn the_shuttle_driver_catches_an_injector_that_misses_its_last_task() {
    let found = shuttle_hunt(|| {
        ShuttleInjector(chase_lev_shuttle::Injector::new_mutant(Some(
            chase_lev_shuttle::Mutant::InjectorStealMissesLastTask,
        )))
    });
    assert!(found.is_err());
}
