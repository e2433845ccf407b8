//! The injector's histories, checked against the FIFO-queue specification
//! (`chase_lev_tests::fifo_queue`): on hardware threads (the std build,
//! blocks of 63 tasks, prefills that reach block ends) and under shuttle (the
//! shuttle build, blocks of 3 tasks, so every scenario crosses several block
//! ends), then the same drivers against a deliberately broken queue, which
//! they must catch.
//!
//! Budgets: `CHASE_LEV_INJECTOR_SCENARIOS` scenarios, each run
//! `CHASE_LEV_INJECTOR_RUNS` times on hardware threads and for
//! `CHASE_LEV_INJECTOR_SCHEDULES` schedules under each shuttle scheduler.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use chase_lev_tests::drivers::budget;
use chase_lev_tests::fifo_queue::{
    check, hardware_threads, run, Answer, Body, ChaseLevInjector, Event, QueueUnderTest, Scenario,
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
    let scenarios = budget("CHASE_LEV_INJECTOR_SCENARIOS", 40);
    let runs = budget("CHASE_LEV_INJECTOR_RUNS", 25);
    let mut checked = 0;
    for seed in 0..scenarios {
        let scenario = Scenario::generate(seed, 4, max_prefill, 2, 6);
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
    let scenarios = budget("CHASE_LEV_INJECTOR_SCENARIOS", 40);
    let schedules = budget("CHASE_LEV_INJECTOR_SCHEDULES", 100) as usize;
    let mut checked = 0;
    for seed in 0..scenarios {
        let scenario = Scenario::generate(seed, 4, 6, 2, 5);
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

/// A queue with a planted bug: a batch of two or more takes the newest task
/// last instead of the next oldest (it swaps the batch's last task with the
/// queue's newest). Correct for single steals, so only batches show it.
#[derive(Default)]
struct SwapsTheNewestIntoBatches(Mutex<VecDeque<u64>>);

impl QueueUnderTest for SwapsTheNewestIntoBatches {
    fn push(&self, task: u64) {
        self.0.lock().unwrap().push_back(task);
    }
    fn steal(&self) -> Answer {
        match self.0.lock().unwrap().pop_front() {
            Some(task) => Answer::Took(vec![task]),
            None => Answer::Empty,
        }
    }
    fn batch(&self, limit: usize, _and_pop: bool, _fifo: bool) -> Answer {
        let mut queue = self.0.lock().unwrap();
        let count = queue.len().div_ceil(2).min(limit);
        if count == 0 {
            return Answer::Empty;
        }
        let mut took: Vec<u64> = queue.drain(..count - 1).collect();
        took.push(
            if count >= 2 {
                queue.pop_back()
            } else {
                queue.pop_front()
            }
            .unwrap(),
        );
        Answer::Took(took)
    }
}

/// A queue with a planted bug: a steal that finds exactly one task reports
/// `Empty` and leaves it (a lost wake-up).
#[derive(Default)]
struct MissesTheLastTask(Mutex<VecDeque<u64>>);

impl QueueUnderTest for MissesTheLastTask {
    fn push(&self, task: u64) {
        self.0.lock().unwrap().push_back(task);
    }
    fn steal(&self) -> Answer {
        let mut queue = self.0.lock().unwrap();
        if queue.len() == 1 {
            return Answer::Empty;
        }
        queue
            .pop_front()
            .map_or(Answer::Empty, |task| Answer::Took(vec![task]))
    }
    fn batch(&self, limit: usize, _and_pop: bool, _fifo: bool) -> Answer {
        let mut queue = self.0.lock().unwrap();
        let count = queue.len().div_ceil(2).min(limit);
        if count == 0 {
            return Answer::Empty;
        }
        Answer::Took(queue.drain(..count).collect())
    }
}

#[test]
fn the_hardware_driver_catches_a_queue_that_reorders_batches() {
    assert!(hardware_hunt(SwapsTheNewestIntoBatches::default, 130).is_err());
}

#[test]
fn the_shuttle_driver_catches_a_queue_that_reorders_batches() {
    assert!(shuttle_hunt(SwapsTheNewestIntoBatches::default).is_err());
}

#[test]
fn the_hardware_driver_catches_a_queue_that_misses_its_last_task() {
    assert!(hardware_hunt(MissesTheLastTask::default, 130).is_err());
}

#[test]
fn the_shuttle_driver_catches_a_queue_that_misses_its_last_task() {
    assert!(shuttle_hunt(MissesTheLastTask::default).is_err());
}
