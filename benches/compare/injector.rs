//! chase-lev's `Injector` against crossbeam-deque's, in the scenarios of a
//! scheduler's global queue: producers push, consumers steal, one by one or
//! in batches into a worker of their own. Timed as in `concurrent.rs`: each
//! criterion iteration is one round of `tasks` tasks, from the release of
//! every thread until the last task is consumed; the threads are spawned once
//! per `iter_custom` call and wait between rounds on an atomic round number.

use std::hint::black_box;
use std::sync::atomic::{
    AtomicBool, AtomicU64,
    Ordering::{Acquire, Relaxed, Release},
};
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;

use chase_lev_bench::paired::{median, Interval};

use crate::concurrent::wait_until;
use crate::contenders::Taken;
// The injectors behind one interface, shared with the contended bench.
pub use chase_lev_bench::injectors::{ChaseLevInjector, CrossbeamInjector, InjectorContender};

/// How the consumers take tasks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Consume {
    /// `steal`, one task at a time.
    One,
    /// `steal_batch_and_pop` into a worker of their own, then its pops.
    BatchAndPop,
    /// `steal_batch_with_limit(limit)` into a worker, then its pops.
    BatchWithLimit(usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scenario {
    /// Threads that push (the bench's own thread is one of them).
    pub producers: u64,
    /// Threads that steal; none: the bench's thread pushes its tasks, then
    /// steals them all back.
    pub consumers: u64,
    pub consume: Consume,
}

impl Scenario {
    pub fn label(self) -> &'static str {
        match (self.producers, self.consumers, self.consume) {
            (1, 0, Consume::One) => "injector: one thread pushes, then steals all",
            (1, 1, Consume::One) => "injector: 1 producer, 1 consumer",
            (1, 3, Consume::One) => "injector: 1 producer, 3 consumers",
            (2, 1, Consume::One) => "injector: 2 producers, 1 consumer",
            (1, 1, Consume::BatchAndPop) => "injector: batch steals into a worker",
            (1, 1, Consume::BatchWithLimit(8)) => "injector: batches of at most 8 into a worker",
            _ => "injector: other",
        }
    }

    /// The target: chase-lev's time over crossbeam-deque's at most this; a
    /// batch is a run of consecutive slots that one claim moves, so batch
    /// steals are to be clearly faster.
    pub fn target(self) -> f64 {
        match self.consume {
            Consume::One => 1.0,
            Consume::BatchAndPop | Consume::BatchWithLimit(_) => 0.8,
        }
    }
}

pub const SCENARIOS: [Scenario; 6] = [
    Scenario {
        producers: 1,
        consumers: 0,
        consume: Consume::One,
    },
    Scenario {
        producers: 1,
        consumers: 1,
        consume: Consume::One,
    },
    Scenario {
        producers: 1,
        consumers: 3,
        consume: Consume::One,
    },
    Scenario {
        producers: 2,
        consumers: 1,
        consume: Consume::One,
    },
    Scenario {
        producers: 1,
        consumers: 1,
        consume: Consume::BatchAndPop,
    },
    Scenario {
        producers: 1,
        consumers: 1,
        consume: Consume::BatchWithLimit(8),
    },
];

struct Stage {
    round: CachePadded<AtomicU64>,
    /// Threads (other than the bench's) that finished the current round.
    finished: CachePadded<AtomicU64>,
    /// Tasks consumed in the current round.
    consumed: CachePadded<AtomicU64>,
    quit: AtomicBool,
    total_consumed: AtomicU64,
}

/// Runs `rounds` rounds of `scenario`, `tasks` tasks each (split evenly
/// between the producers), and returns their time, as `iter_custom` wants.
pub fn run<C: InjectorContender>(scenario: Scenario, tasks: u64, rounds: u64) -> Duration {
    run_rounds::<C>(scenario, tasks, rounds, Placement::FIRST)
        .into_iter()
        .sum()
}

/// Where a run puts its queue and its counters: one of `PLACES` slots of an
/// array each, so that their addresses, and their offsets in a page, change
/// from one run to the next. Without it every turn of a process put them at
/// the same stack addresses, and the interleaved table's intervals, computed
/// over the turns of one process, left out what placement does: the rows
/// with threads moved more between processes than within one
/// (docs/benchmarks.md#the-rows-not-met).
#[derive(Clone, Copy)]
pub struct Placement {
    queue: usize,
    stage: usize,
}

impl Placement {
    const PLACES: usize = 32;
    const FIRST: Placement = Placement { queue: 0, stage: 0 };

    /// The next placement of a fixed pseudo-random sequence (a 64-bit LCG
    /// whose state is `state`): the same sequence in every run of the bench,
    /// a different placement for each turn within it.
    fn next(state: &mut u64) -> Placement {
        let mut draw = || {
            *state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (*state >> 33) as usize % Placement::PLACES
        };
        Placement {
            queue: draw(),
            stage: draw(),
        }
    }
}

/// As [`run`], returning each round's time, with the queue and counters
/// where `placement` puts them.
pub fn run_rounds<C: InjectorContender>(
    scenario: Scenario,
    tasks: u64,
    rounds: u64,
    placement: Placement,
) -> Vec<Duration> {
    let mut queues: Vec<CachePadded<Option<C::Queue>>> = (0..Placement::PLACES)
        .map(|_| CachePadded::new(None))
        .collect();
    let queue: &C::Queue = queues[placement.queue].insert(C::queue());
    let mut stages: Vec<Option<Stage>> = (0..Placement::PLACES).map(|_| None).collect();
    let stage: &Stage = stages[placement.stage].insert(Stage {
        round: CachePadded::new(AtomicU64::new(0)),
        finished: CachePadded::new(AtomicU64::new(0)),
        consumed: CachePadded::new(AtomicU64::new(0)),
        quit: AtomicBool::new(false),
        total_consumed: AtomicU64::new(0),
    });
    let share = tasks / scenario.producers;
    let tasks = share * scenario.producers;
    let helpers = scenario.producers - 1 + scenario.consumers;
    let mut times = Vec::with_capacity(rounds as usize);
    let own_worker = C::worker();
    std::thread::scope(|scope| {
        for _ in 1..scenario.producers {
            scope.spawn(move || {
                each_round(stage, || {
                    (0..share).for_each(|task| C::push(queue, black_box(task)))
                })
            });
        }
        for _ in 0..scenario.consumers {
            scope.spawn(move || {
                let mine = C::worker();
                each_round(stage, || {
                    consume::<C>(queue, &mine, scenario.consume, tasks, stage)
                })
            });
        }
        for round in 1..=rounds {
            stage.finished.store(0, Relaxed);
            stage.consumed.store(0, Relaxed);
            let start = Instant::now();
            // Release: the helpers see the reset counters.
            stage.round.store(round, Release);
            (0..share).for_each(|task| C::push(queue, black_box(task)));
            if scenario.consumers == 0 {
                consume::<C>(queue, &own_worker, scenario.consume, tasks, stage);
            }
            wait_until(|| stage.finished.load(Acquire) == helpers);
            times.push(start.elapsed());
        }
        stage.quit.store(true, Release);
    });
    assert_eq!(
        stage.total_consumed.load(Relaxed),
        tasks * rounds,
        "{}: a task was lost or duplicated",
        C::NAME
    );
    times
}

/// One row of the interleaved injector table, for the targets table.
pub struct InjectorRow {
    pub label: &'static str,
    pub target: f64,
    /// Median round, ns per task, of each.
    pub chase_lev: f64,
    pub crossbeam: f64,
    /// chase-lev's median round over crossbeam-deque's, turn by turn.
    pub paired: Interval,
}

/// The same scenarios with the two injectors taking turns, `ROUNDS_PER_TURN`
/// rounds at a time, `turns` turns each (who goes first alternates), so that
/// both see the same moments of a shared machine. Per turn, chase-lev's
/// median round over crossbeam-deque's median round of the same turn is one
/// paired ratio; a row's figure is the median of its turns' ratios with the
/// interval of `paired`, against the scenario's target.
pub fn print_interleaved_table(tasks: u64, turns: u64) -> Vec<InjectorRow> {
    const ROUNDS_PER_TURN: u64 = 10;
    if turns == 0 {
        return Vec::new();
    }
    println!();
    println!(
        "Injector, interleaved: {turns} turns of {ROUNDS_PER_TURN} rounds of {tasks} tasks each, \
         ns per task (wall-clock), median round; ratio = chase-lev's median round over \
         crossbeam-deque's in the same turn, median over the turns [~95% interval]:"
    );
    const WIDTHS: [usize; 6] = [45, 16, 22, 30, 8, 11];
    crate::ratios::print_row(
        &[
            "benchmark",
            "chase-lev median",
            "crossbeam-deque median",
            "paired ratio",
            "target",
            "verdict",
        ],
        &WIDTHS,
    );
    crate::ratios::print_separator(&WIDTHS);
    let mut rows = Vec::new();
    for scenario in SCENARIOS {
        let (mut mine, mut theirs, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
        let mut placements = 0x2545_f491_4f6c_dd1d_u64;
        for turn in 0..turns {
            let (place_mine, place_theirs) = (
                Placement::next(&mut placements),
                Placement::next(&mut placements),
            );
            let run_mine =
                || run_rounds::<ChaseLevInjector>(scenario, tasks, ROUNDS_PER_TURN, place_mine);
            let run_theirs =
                || run_rounds::<CrossbeamInjector>(scenario, tasks, ROUNDS_PER_TURN, place_theirs);
            let (turn_mine, turn_theirs) = if turn % 2 == 0 {
                let turn_mine = run_mine();
                (turn_mine, run_theirs())
            } else {
                let turn_theirs = run_theirs();
                (run_mine(), turn_theirs)
            };
            let ns = |times: Vec<Duration>| -> Vec<f64> {
                times
                    .into_iter()
                    .map(|time| time.as_nanos() as f64 / tasks as f64)
                    .collect()
            };
            let (turn_mine, turn_theirs) = (ns(turn_mine), ns(turn_theirs));
            ratios.push(median(&mut turn_mine.clone()) / median(&mut turn_theirs.clone()));
            mine.extend(turn_mine);
            theirs.extend(turn_theirs);
        }
        let row = InjectorRow {
            label: scenario.label(),
            target: scenario.target(),
            chase_lev: median(&mut mine),
            crossbeam: median(&mut theirs),
            paired: Interval::of(ratios),
        };
        crate::ratios::print_row(
            &[
                row.label.to_string(),
                format!("{:.2}", row.chase_lev),
                format!("{:.2}", row.crossbeam),
                row.paired.show(),
                format!("<= {:.2}", row.target),
                row.paired.verdict(row.target).to_string(),
            ],
            &WIDTHS,
        );
        rows.push(row);
    }
    rows
}

/// A helper thread's life: `work` once per round, until told to quit.
fn each_round(stage: &Stage, mut work: impl FnMut()) {
    let mut seen = 0;
    loop {
        wait_until(|| stage.round.load(Acquire) != seen || stage.quit.load(Acquire));
        if stage.quit.load(Acquire) {
            return;
        }
        seen = stage.round.load(Acquire);
        work();
        stage.finished.fetch_add(1, Release);
    }
}

/// Steals until every task of the round has been consumed by someone.
fn consume<C: InjectorContender>(
    queue: &C::Queue,
    mine: &C::Worker,
    consume: Consume,
    tasks: u64,
    stage: &Stage,
) {
    let mut in_round = 0u64;
    loop {
        let taken = match consume {
            Consume::One => C::steal(queue),
            Consume::BatchAndPop => C::steal_batch_and_pop(queue, mine),
            Consume::BatchWithLimit(limit) => C::steal_batch_with_limit(queue, mine, limit),
        };
        match taken {
            Taken::Task(task) => {
                black_box(task);
                in_round += 1;
                while let Some(task) = C::pop(mine) {
                    black_box(task);
                    in_round += 1;
                }
            }
            Taken::Retry => {}
            Taken::Empty => {
                let newly = std::mem::take(&mut in_round);
                stage.total_consumed.fetch_add(newly, Relaxed);
                if stage.consumed.fetch_add(newly, Relaxed) + newly >= tasks {
                    return;
                }
                std::hint::spin_loop();
            }
        }
    }
}
