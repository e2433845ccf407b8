//! The scenarios with thieves. Each criterion iteration is one round: the
//! owner (the bench's own thread) prepares the deque, releases the thieves,
//! and the round's time runs from that release until every thread is done.
//! The thieves are spawned once per `iter_custom` call, not per round, and
//! wait between rounds on an atomic round number (spinning, then yielding),
//! so no thread start and no futex wake is inside the timed part.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::atomic::{
    AtomicBool, AtomicU64,
    Ordering::{Acquire, Relaxed, Release},
};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;

use crate::contenders::{Contender, Taken};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scenario {
    /// The owner fills the deque, then one thief steals every task, one by one.
    StealOwnerIdle,
    /// The owner fills the deque, then pops while one thief steals.
    StealOwnerPops,
    /// As `StealOwnerIdle`, with `steal_batch_and_pop` into the thief's own
    /// deque, which it then pops.
    BatchOwnerIdle,
    /// As `StealOwnerPops`, with batch steals.
    BatchOwnerPops,
    /// The owner pushes every task while three thieves batch-steal them.
    ProducerThreeThieves,
    /// As `ProducerThreeThieves`, the thieves stealing one task at a time:
    /// not a target row, the same race without the batches' claim per task.
    ProducerThreeThievesOneByOne,
}

impl Scenario {
    fn thieves(self) -> usize {
        match self {
            Scenario::ProducerThreeThieves | Scenario::ProducerThreeThievesOneByOne => 3,
            _ => 1,
        }
    }
    fn owner_prefills(self) -> bool {
        !self.owner_produces()
    }
    /// The owner pushes during the round (and never pops).
    fn owner_produces(self) -> bool {
        matches!(
            self,
            Scenario::ProducerThreeThieves | Scenario::ProducerThreeThievesOneByOne
        )
    }
    pub fn owner_pops(self) -> bool {
        matches!(self, Scenario::StealOwnerPops | Scenario::BatchOwnerPops)
    }
    fn batch(self) -> bool {
        !matches!(
            self,
            Scenario::StealOwnerIdle
                | Scenario::StealOwnerPops
                | Scenario::ProducerThreeThievesOneByOne
        )
    }
    pub fn label(self) -> &'static str {
        match self {
            Scenario::StealOwnerIdle => "steal, owner idle",
            Scenario::StealOwnerPops => "steal, owner pops",
            Scenario::BatchOwnerIdle => "batch steal, owner idle",
            Scenario::BatchOwnerPops => "batch steal, owner pops",
            Scenario::ProducerThreeThieves => "1 producer + 3 thieves",
            Scenario::ProducerThreeThievesOneByOne => "1 producer + 3 thieves, one by one",
        }
    }
}

/// What the thieves did, summed over every round of every call.
#[derive(Clone, Copy, Default)]
struct Tally {
    rounds: u64,
    attempts: u64,
    retries: u64,
    stolen_by_thieves: u64,
    popped_by_owner: u64,
}

static TALLIES: Mutex<BTreeMap<(&'static str, &'static str), Tally>> = Mutex::new(BTreeMap::new());

/// The state the owner and the thieves share during one `iter_custom` call.
struct Stage {
    /// The current round; thieves start a round when it changes.
    round: CachePadded<AtomicU64>,
    /// Thieves that started the current round.
    started: CachePadded<AtomicU64>,
    /// Thieves that finished the current round.
    finished: CachePadded<AtomicU64>,
    /// Tasks consumed in the current round, by anyone (producer scenario).
    consumed: CachePadded<AtomicU64>,
    quit: AtomicBool,
    attempts: AtomicU64,
    retries: AtomicU64,
    stolen: AtomicU64,
}

pub use chase_lev_bench::wait_until;

/// Runs `rounds` rounds of `scenario` with `tasks` tasks each and returns the
/// time they took, as criterion's `iter_custom` wants.
pub fn run<C: Contender>(scenario: Scenario, tasks: u64, rounds: u64) -> Duration {
    let mut total = Duration::ZERO;
    run_rounds::<C>(scenario, tasks, rounds, |time, _| total += time);
    total
}

/// As [`run`], calling `each_round` with every round's time and the number
/// of tasks the thieves took in it (the rest the owner popped).
pub fn run_rounds<C: Contender>(
    scenario: Scenario,
    tasks: u64,
    rounds: u64,
    mut each_round: impl FnMut(Duration, u64),
) {
    let owner = C::owner(tasks as usize);
    let thief = C::thief(&owner);
    let stage = Stage {
        round: CachePadded::new(AtomicU64::new(0)),
        started: CachePadded::new(AtomicU64::new(0)),
        finished: CachePadded::new(AtomicU64::new(0)),
        consumed: CachePadded::new(AtomicU64::new(0)),
        quit: AtomicBool::new(false),
        attempts: AtomicU64::new(0),
        retries: AtomicU64::new(0),
        stolen: AtomicU64::new(0),
    };
    let thieves = scenario.thieves() as u64;
    let mut popped_by_owner = 0u64;
    std::thread::scope(|scope| {
        for _ in 0..thieves {
            let (thief, stage) = (thief.clone(), &stage);
            scope.spawn(move || thief_loop::<C>(scenario, tasks, &thief, stage));
        }
        for round in 1..=rounds {
            if scenario.owner_prefills() {
                for task in 0..tasks {
                    C::push(&owner, black_box(task));
                }
            }
            stage.started.store(0, Relaxed);
            stage.finished.store(0, Relaxed);
            stage.consumed.store(0, Relaxed);
            let start = Instant::now();
            // Release: the thieves see the filled deque and the reset counters.
            stage.round.store(round, Release);
            let mut popped_in_round = 0u64;
            if scenario.owner_pops() {
                // A race only if the thief is running: without this the owner
                // often pops everything before the thief's thread is scheduled.
                wait_until(|| stage.started.load(Acquire) == thieves);
                while let Some(task) = C::pop(&owner) {
                    black_box(task);
                    popped_in_round += 1;
                }
            }
            if scenario.owner_produces() {
                for task in 0..tasks {
                    C::push(&owner, black_box(task));
                }
            }
            wait_until(|| stage.finished.load(Acquire) == thieves);
            each_round(start.elapsed(), tasks - popped_in_round);
            popped_by_owner += popped_in_round;
        }
        stage.quit.store(true, Release);
    });
    let stolen = stage.stolen.load(Relaxed);
    assert_eq!(
        stolen + popped_by_owner,
        tasks * rounds,
        "{}: a task was lost or duplicated",
        C::NAME
    );
    let mut tallies = TALLIES.lock().unwrap();
    let tally = tallies.entry((scenario.label(), C::NAME)).or_default();
    tally.rounds += rounds;
    tally.attempts += stage.attempts.load(Relaxed);
    tally.retries += stage.retries.load(Relaxed);
    tally.stolen_by_thieves += stolen;
    tally.popped_by_owner += popped_by_owner;
}

fn thief_loop<C: Contender>(scenario: Scenario, tasks: u64, thief: &C::Thief, stage: &Stage) {
    // The thief's own deque: the destination of batch steals (and st3's
    // scratch queue for single steals).
    let mine = C::owner(64);
    let mut seen_round = 0;
    let (mut attempts, mut retries, mut stolen) = (0u64, 0u64, 0u64);
    loop {
        wait_until(|| stage.round.load(Acquire) != seen_round || stage.quit.load(Acquire));
        if stage.quit.load(Acquire) {
            break;
        }
        seen_round = stage.round.load(Acquire);
        stage.started.fetch_add(1, Release);
        let mut in_round = 0u64;
        loop {
            attempts += 1;
            let taken = if scenario.batch() {
                C::steal_batch_and_pop(thief, &mine)
            } else {
                C::steal(thief, &mine)
            };
            match taken {
                Taken::Task(task) => {
                    black_box(task);
                    in_round += 1;
                    // A single steal leaves `mine` untouched (st3's moves exactly one
                    // task, which it returns): only a batch put tasks there to drain.
                    if scenario.batch() {
                        while let Some(task) = C::pop(&mine) {
                            black_box(task);
                            in_round += 1;
                        }
                    }
                }
                Taken::Retry => retries += 1,
                Taken::Empty => {
                    if !scenario.owner_produces() {
                        // Nobody pushes during the round: empty is final.
                        break;
                    }
                    // The producer may still be pushing: done only once every
                    // task of the round has been consumed.
                    let newly = std::mem::take(&mut in_round);
                    stolen += newly;
                    if stage.consumed.fetch_add(newly, Relaxed) + newly >= tasks {
                        break;
                    }
                    std::hint::spin_loop();
                }
            }
        }
        stolen += in_round;
        stage.finished.fetch_add(1, Release);
    }
    stage.attempts.fetch_add(attempts, Relaxed);
    stage.retries.fetch_add(retries, Relaxed);
    stage.stolen.fetch_add(stolen, Relaxed);
}

/// Prints, per scenario and deque, how often a steal attempt came back
/// `Retry` and how the tasks were split between owner and thieves.
pub fn print_retry_table() {
    let tallies = TALLIES.lock().unwrap();
    if tallies.is_empty() {
        return;
    }
    println!();
    println!("Steal attempts, summed over every round of the run (warm-up included):");
    println!(
        "| {:<34} | {:<15} | {:>8} | {:>12} | {:>10} | {:>8} | {:>14} |",
        "scenario", "deque", "rounds", "attempts", "Retry", "Retry %", "stolen / total"
    );
    println!(
        "|{:-<36}|{:-<17}|{:->10}|{:->14}|{:->12}|{:->10}|{:->16}|",
        "", "", "", "", "", "", ""
    );
    for ((scenario, deque), tally) in tallies.iter() {
        let total = tally.stolen_by_thieves + tally.popped_by_owner;
        println!(
            "| {:<34} | {:<15} | {:>8} | {:>12} | {:>10} | {:>7.2}% | {:>13.1}% |",
            scenario,
            deque,
            tally.rounds,
            tally.attempts,
            tally.retries,
            100.0 * tally.retries as f64 / tally.attempts.max(1) as f64,
            100.0 * tally.stolen_by_thieves as f64 / total.max(1) as f64,
        );
    }
}
