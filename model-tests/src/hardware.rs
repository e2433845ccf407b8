//! Runs a mutant on real threads of this machine (the `chase-lev-mutants`
//! build: std atomics, the real epoch reclamation) and counts tasks taken
//! twice or lost: the model checker's verdict, confirmed (or not) by the CPU.
//!
//! The owner repeatedly pushes a batch of tasks and pops them all back, so
//! that its pops keep meeting the thieves near the bottom (with a batch of
//! 8 and one thief, the missing pop fence shows about a thousand duplicates a
//! second on this machine; smaller batches give the thief too few chances,
//! larger ones too few races); the thieves steal in a tight loop. Each thread marks the
//! ids it takes in its own array (plain memory, no shared counter, so the
//! bookkeeping adds no fence of its own); the arrays are compared after each
//! round of ids.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use chase_lev_mutants::{Steal, Worker};

use crate::Mutant;

/// Ids per round: each thread's array has one byte per id.
const ROUND: usize = 1 << 22;

/// What a run on real threads found.
#[derive(Clone, Copy, Debug, Default)]
pub struct HardwareRun {
    /// Tasks pushed.
    pub tasks: u64,
    /// Tasks taken by more than one thread (or twice by one).
    pub taken_twice: u64,
    /// Tasks never taken.
    pub lost: u64,
    /// Tasks taken that were never pushed (a slot read before it was written).
    pub invented: u64,
    /// How long it ran.
    pub elapsed: Duration,
}

impl HardwareRun {
    /// Tasks taken twice per second.
    pub fn taken_twice_per_second(&self) -> f64 {
        self.taken_twice as f64 / self.elapsed.as_secs_f64()
    }
}

/// The shape of a run on real threads.
#[derive(Clone, Copy, Debug)]
pub struct Setup {
    /// Thieves, each on its own thread.
    pub thieves: usize,
    /// Tasks the owner pushes before popping them all back.
    pub batch: u64,
    /// How long to run.
    pub duration: Duration,
}

/// Runs the deque weakened by `mutant` (`None`: correct) with one owner and
/// the thieves of `setup`.
pub fn run(mutant: Option<Mutant>, setup: Setup) -> HardwareRun {
    let mutant = mutant.map(|mutant| {
        chase_lev_mutants::Mutant::from_name(mutant.name())
            .expect("every mutant exists in the hardware build")
    });
    let started = Instant::now();
    let mut total = HardwareRun::default();
    while started.elapsed() < setup.duration {
        let round = run_round(mutant, setup, started + setup.duration);
        total.tasks += round.tasks;
        total.taken_twice += round.taken_twice;
        total.lost += round.lost;
        total.invented += round.invented;
    }
    total.elapsed = started.elapsed();
    total
}

/// One round: ids 1 to `ROUND - 1`, or fewer if the deadline comes first.
fn run_round(
    mutant: Option<chase_lev_mutants::Mutant>,
    setup: Setup,
    deadline: Instant,
) -> HardwareRun {
    let batch = setup.batch.max(1);
    let worker = Worker::<u64>::new_mutant(false, 64, false, mutant);
    let done = AtomicBool::new(false);
    let mut owner_taken = vec![0u8; ROUND];
    let mut pushed = 0u64;
    let thief_takes: Vec<Vec<u8>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..setup.thieves)
            .map(|_| {
                let stealer = worker.stealer();
                let done = &done;
                scope.spawn(move || {
                    let mut taken = vec![0u8; ROUND];
                    loop {
                        match stealer.steal() {
                            Steal::Success(id) => mark(&mut taken, id),
                            Steal::Empty if done.load(Ordering::Acquire) => break,
                            Steal::Empty | Steal::Retry => {}
                        }
                    }
                    taken
                })
            })
            .collect();
        let mut next = 1u64;
        while next + batch < ROUND as u64 {
            if next % 4096 == 1 && Instant::now() >= deadline {
                break;
            }
            for offset in 0..batch {
                worker.push(next + offset);
            }
            next += batch;
            for _ in 0..batch {
                if let Some(id) = worker.pop() {
                    mark(&mut owner_taken, id);
                }
            }
        }
        pushed = next - 1;
        while let Some(id) = worker.pop() {
            mark(&mut owner_taken, id);
        }
        done.store(true, Ordering::Release);
        handles
            .into_iter()
            .map(|handle| handle.join().unwrap())
            .collect()
    });
    let mut run = HardwareRun {
        tasks: pushed,
        ..HardwareRun::default()
    };
    for id in 0..ROUND {
        let times: u64 = u64::from(owner_taken[id])
            + thief_takes
                .iter()
                .map(|taken| u64::from(taken[id]))
                .sum::<u64>();
        let was_pushed = id >= 1 && id as u64 <= pushed;
        match (was_pushed, times) {
            (true, 0) => run.lost += 1,
            (true, 1) | (false, 0) => {}
            (true, _) => run.taken_twice += times - 1,
            (false, _) => run.invented += times,
        }
    }
    run
}

fn mark(taken: &mut [u8], id: u64) {
    // An id outside the round (a torn or stale read) is counted as invented
    // at index 0.
    let index = if (id as usize) < taken.len() {
        id as usize
    } else {
        0
    };
    taken[index] = taken[index].saturating_add(1);
}
