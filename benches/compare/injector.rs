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

use crate::concurrent::wait_until;
use crate::contenders::Taken;

/// An injector and the worker that its batch steals go into.
pub trait InjectorContender: 'static {
    const NAME: &'static str;
    type Queue: Send + Sync;
    type Worker;
    fn queue() -> Self::Queue;
    fn worker() -> Self::Worker;
    fn push(queue: &Self::Queue, task: u64);
    fn steal(queue: &Self::Queue) -> Taken;
    fn steal_batch_and_pop(queue: &Self::Queue, dest: &Self::Worker) -> Taken;
    fn pop(worker: &Self::Worker) -> Option<u64>;
}

macro_rules! injector_contender {
    ($name:ident, $label:literal, $krate:ident) => {
        pub struct $name;

        impl InjectorContender for $name {
            const NAME: &'static str = $label;
            type Queue = $krate::Injector<u64>;
            type Worker = $krate::Worker<u64>;
            fn queue() -> Self::Queue {
                $krate::Injector::new()
            }
            fn worker() -> Self::Worker {
                $krate::Worker::new_lifo()
            }
            #[inline(always)]
            fn push(queue: &Self::Queue, task: u64) {
                queue.push(task)
            }
            #[inline(always)]
            fn steal(queue: &Self::Queue) -> Taken {
                match queue.steal() {
                    $krate::Steal::Success(task) => Taken::Task(task),
                    $krate::Steal::Empty => Taken::Empty,
                    $krate::Steal::Retry => Taken::Retry,
                }
            }
            #[inline(always)]
            fn steal_batch_and_pop(queue: &Self::Queue, dest: &Self::Worker) -> Taken {
                match queue.steal_batch_and_pop(dest) {
                    $krate::Steal::Success(task) => Taken::Task(task),
                    $krate::Steal::Empty => Taken::Empty,
                    $krate::Steal::Retry => Taken::Retry,
                }
            }
            #[inline(always)]
            fn pop(worker: &Self::Worker) -> Option<u64> {
                worker.pop()
            }
        }
    };
}

injector_contender!(ChaseLevInjector, "chase-lev", chase_lev);
injector_contender!(CrossbeamInjector, "crossbeam-deque", crossbeam_deque);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scenario {
    /// Threads that push (the bench's own thread is one of them).
    pub producers: u64,
    /// Threads that steal.
    pub consumers: u64,
    /// Consumers use `steal_batch_and_pop` into a worker they then drain.
    pub batch: bool,
}

impl Scenario {
    pub fn label(self) -> &'static str {
        match (self.producers, self.consumers, self.batch) {
            (1, 1, false) => "injector: 1 producer, 1 consumer",
            (1, 3, false) => "injector: 1 producer, 3 consumers",
            (2, 1, false) => "injector: 2 producers, 1 consumer",
            (1, 1, true) => "injector: batch steals into a worker",
            _ => "injector: other",
        }
    }
}

pub const SCENARIOS: [Scenario; 4] = [
    Scenario {
        producers: 1,
        consumers: 1,
        batch: false,
    },
    Scenario {
        producers: 1,
        consumers: 3,
        batch: false,
    },
    Scenario {
        producers: 2,
        consumers: 1,
        batch: false,
    },
    Scenario {
        producers: 1,
        consumers: 1,
        batch: true,
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
    run_rounds::<C>(scenario, tasks, rounds).into_iter().sum()
}

/// As [`run`], returning each round's time.
pub fn run_rounds<C: InjectorContender>(
    scenario: Scenario,
    tasks: u64,
    rounds: u64,
) -> Vec<Duration> {
    let queue = C::queue();
    let stage = Stage {
        round: CachePadded::new(AtomicU64::new(0)),
        finished: CachePadded::new(AtomicU64::new(0)),
        consumed: CachePadded::new(AtomicU64::new(0)),
        quit: AtomicBool::new(false),
        total_consumed: AtomicU64::new(0),
    };
    let share = tasks / scenario.producers;
    let tasks = share * scenario.producers;
    let helpers = scenario.producers - 1 + scenario.consumers;
    let mut times = Vec::with_capacity(rounds as usize);
    std::thread::scope(|scope| {
        for _ in 1..scenario.producers {
            let (queue, stage) = (&queue, &stage);
            scope.spawn(move || {
                each_round(stage, || {
                    (0..share).for_each(|task| C::push(queue, black_box(task)))
                })
            });
        }
        for _ in 0..scenario.consumers {
            let (queue, stage) = (&queue, &stage);
            scope.spawn(move || {
                let mine = C::worker();
                each_round(stage, || {
                    consume::<C>(queue, &mine, scenario.batch, tasks, stage)
                })
            });
        }
        for round in 1..=rounds {
            stage.finished.store(0, Relaxed);
            stage.consumed.store(0, Relaxed);
            let start = Instant::now();
            // Release: the helpers see the reset counters.
            stage.round.store(round, Release);
            (0..share).for_each(|task| C::push(&queue, black_box(task)));
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

/// The same scenarios with the two injectors taking turns, `ROUNDS_PER_TURN`
/// rounds at a time, `turns` turns each (who goes first alternates), so that
/// both see the same moments of a shared machine; prints each one's median
/// and fastest round per task and the ratios. On a busy 2-core machine this
/// is steadier than criterion's separate runs of each.
pub fn print_interleaved_table(tasks: u64, turns: u64) {
    const ROUNDS_PER_TURN: u64 = 10;
    if turns == 0 {
        return;
    }
    println!();
    println!(
        "Injector, interleaved: {turns} turns of {ROUNDS_PER_TURN} rounds of {tasks} tasks each, \
         ns per task (wall-clock), median and fastest round; below 1 means chase-lev is faster:"
    );
    const WIDTHS: [usize; 7] = [37, 16, 22, 16, 22, 16, 16];
    crate::ratios::print_row(
        &[
            "benchmark",
            "chase-lev median",
            "crossbeam-deque median",
            "chase-lev best",
            "crossbeam-deque best",
            "median ratio",
            "best ratio",
        ],
        &WIDTHS,
    );
    crate::ratios::print_separator(&WIDTHS);
    for scenario in SCENARIOS {
        let (mut mine, mut theirs) = (Vec::new(), Vec::new());
        for turn in 0..turns {
            if turn % 2 == 0 {
                mine.extend(run_rounds::<ChaseLevInjector>(
                    scenario,
                    tasks,
                    ROUNDS_PER_TURN,
                ));
                theirs.extend(run_rounds::<CrossbeamInjector>(
                    scenario,
                    tasks,
                    ROUNDS_PER_TURN,
                ));
            } else {
                theirs.extend(run_rounds::<CrossbeamInjector>(
                    scenario,
                    tasks,
                    ROUNDS_PER_TURN,
                ));
                mine.extend(run_rounds::<ChaseLevInjector>(
                    scenario,
                    tasks,
                    ROUNDS_PER_TURN,
                ));
            }
        }
        let per_task = |times: &mut Vec<Duration>| {
            times.sort_unstable();
            let ns = |d: Duration| d.as_nanos() as f64 / tasks as f64;
            (ns(times[times.len() / 2]), ns(times[0]))
        };
        let ((mine_median, mine_best), (theirs_median, theirs_best)) =
            (per_task(&mut mine), per_task(&mut theirs));
        crate::ratios::print_row(
            &[
                scenario.label().to_string(),
                format!("{mine_median:.2}"),
                format!("{theirs_median:.2}"),
                format!("{mine_best:.2}"),
                format!("{theirs_best:.2}"),
                format!("{:.2}", mine_median / theirs_median),
                format!("{:.2}", mine_best / theirs_best),
            ],
            &WIDTHS,
        );
    }
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
    batch: bool,
    tasks: u64,
    stage: &Stage,
) {
    let mut in_round = 0u64;
    loop {
        let taken = if batch {
            C::steal_batch_and_pop(queue, mine)
        } else {
            C::steal(queue)
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
