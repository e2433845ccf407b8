//! What thread churn costs the deques of the rest of the process in one process: an owner's push;pop pairs on a deque that
//! changes buffer regularly, measured before any churn, after `CHURN_THREADS`
//! threads that were alive at once each stole once and exited, and after
//! `CHURN_WAVES_TOTAL` more threads, in waves of `CHURN_WAVE`, each stealing
//! once; then a steal from a thread-local destructor against an ordinary
//! steal.
//!
//! `cargo bench -p chase-lev-bench --bench churn`. Budget, by environment
//! variable (the defaults are the sizes its targets are stated for; CI runs
//! it as a smoke test with, say, `CHURN_THREADS=64 CHURN_WAVES_TOTAL=256
//! CHURN_ROUNDS=7`):
//! - `CHURN_THREADS`: threads alive at once in the first burst (8,192);
//! - `CHURN_WAVES_TOTAL`: threads of the second burst (100,000);
//! - `CHURN_WAVE`: threads alive at once in the second burst (64);
//! - `CHURN_ROUNDS`: measured rounds per phase (31);
//! - `CHURN_PAIRS`: push;pop pairs per round (20,000: about 80 buffer
//!   changes of the 256-slot default buffer);
//! - `CHURN_TLS_THREADS`: threads of the destructor rows (64), one after the
//!   other, each timing `CHURN_TLS_STEALS` (200) ordinary steals and as many
//!   from its thread-local destructor;
//! - `CHURN_TLS_HOLDERS`: threads alive and holding hazard records during
//!   the second destructor row (64).
//!
//! **The workload.** A LIFO worker (`Worker::new_lifo`, 256 slots) pushed and
//! popped around empty: each pop takes the last task with a CAS on `top`, so
//! the indices move on by one per pair and the owner moves to a new buffer
//! (a spare, no allocation) every 256 pairs, and retires the old one; the
//! retire is where the owner scans the hazard records.
//!
//! **The baseline.** Beside each round, the same round runs in a fresh
//! process (this program again, started with `CHURN_FRESH_ROUND`: a
//! thread with a record of its own, a warm-up round, a timed round), which
//! never saw any churn; the two alternate, which goes first alternating, so
//! that the machine's speed of the moment (it is shared, two cores) moves
//! both alike. A phase's figure is, round by round, this process's time over
//! the fresh process's: its median and the distribution-free ~95% interval of
//! the median (order statistics k and n - k + 1, k = (n - 1.96 sqrt(n)) / 2,
//! as the forkjoin example and the rayon script compute theirs). Against the
//! target "at most 1.2" after churn: met when the whole interval is at or
//! below it, not met when the whole interval is above it, and otherwise
//! "cannot tell". The phase before any churn shows the method's own bias
//! (near 1). The raw ratio of this process's ns per pair after and before
//! churn is printed too; it also counts whatever moved the machine between
//! the phases.
//!
//! **The destructor row.** A thread-local registered before the thread's
//! first steal is destroyed after the deque's own thread-locals (destructors
//! run in reverse order of registration), so its steals find the thread's
//! hazard record gone and borrow one, as a steal from any late destructor
//! does. Per thread: the mean of its destructor steals over the mean of its
//! ordinary ones, then the median over threads and its interval, against
//! the target "no more than a few ordinary steals" (at most 4). The row is
//! measured twice: with no other thread alive, and with `CHURN_TLS_HOLDERS`
//! threads alive that have stolen (and so hold records), which a borrow that
//! looks for a free record among all of them pays for.

use std::cell::Cell;
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use chase_lev::{Steal, Stealer, Worker};
use chase_lev_bench::paired::{write_rows, Interval, Row};
use chase_lev_bench::target_file;

fn env_usize(name: &str, default: usize) -> usize {
    match std::env::var(name) {
        Ok(text) => text
            .replace('_', "")
            .parse()
            .unwrap_or_else(|_| panic!("{name}={text} is not a number")),
        Err(_) => default,
    }
}

/// Small stacks: thousands of threads alive at once.
const STACK: usize = 64 * 1024;

/// Where the figures go for the compare bench's targets table (in the
/// target directory).
const CHURN_FILE: &str = "churn.tsv";

// ---------------------------------------------------------- the pairs --

/// `pairs` push;pop pairs on `worker`, in ns per pair.
fn time_pairs(worker: &Worker<u64>, pairs: usize) -> f64 {
    let start = Instant::now();
    for task in 0..pairs as u64 {
        worker.push(black_box(task));
        black_box(worker.pop());
    }
    start.elapsed().as_nanos() as f64 / pairs as f64
}

/// The environment variable that makes this program a fresh process's
/// round: its value is the number of pairs.
const FRESH_ROUND: &str = "CHURN_FRESH_ROUND";

/// Gives this thread a hazard record, as the measuring thread of either
/// process has one.
fn steal_once_here() {
    let own = Worker::new_lifo();
    own.push(0u64);
    let _ = black_box(own.stealer().steal());
}

/// The round of a fresh process (this program, started with [`FRESH_ROUND`]):
/// a warm-up round, then one timed round of the same workload, printed.
fn fresh_process_round(pairs: usize) {
    steal_once_here();
    let lapping = Worker::new_lifo();
    time_pairs(&lapping, pairs);
    println!("{}", time_pairs(&lapping, pairs));
}

/// One round: ns per pair in this process, and in a fresh one run next to
/// it.
#[derive(Clone, Copy)]
struct Round {
    here: f64,
    fresh: f64,
}

/// The deque of this process whose pairs are timed, a fresh process's
/// round beside each of its rounds.
struct Owner {
    lapping: Worker<u64>,
    pairs: usize,
}

impl Owner {
    fn new(pairs: usize) -> Owner {
        Owner {
            lapping: Worker::new_lifo(),
            pairs,
        }
    }

    fn here(&self) -> f64 {
        time_pairs(&self.lapping, self.pairs / 10 + 1); // warm again after the child
        time_pairs(&self.lapping, self.pairs)
    }

    fn fresh(&self) -> f64 {
        let output = std::process::Command::new(std::env::current_exe().expect("this program"))
            .env(FRESH_ROUND, self.pairs.to_string())
            .output()
            .expect("a fresh process");
        assert!(output.status.success(), "the fresh process failed");
        let text = String::from_utf8(output.stdout).expect("its figure");
        text.trim().parse().expect("ns per pair")
    }

    /// `rounds` rounds, this process's and a fresh one's in turns (which
    /// goes first alternates).
    fn rounds(&self, rounds: usize) -> Vec<Round> {
        self.here(); // a warm-up round, not kept
        (0..rounds)
            .map(|round| {
                if round % 2 == 0 {
                    let here = self.here();
                    let fresh = self.fresh();
                    Round { here, fresh }
                } else {
                    let fresh = self.fresh();
                    let here = self.here();
                    Round { here, fresh }
                }
            })
            .collect()
    }
}

/// A phase's rounds, summarised.
struct Phase {
    name: String,
    rounds: Vec<Round>,
}

impl Phase {
    fn here(&self) -> Vec<f64> {
        self.rounds.iter().map(|round| round.here).collect()
    }

    fn fresh(&self) -> Vec<f64> {
        self.rounds.iter().map(|round| round.fresh).collect()
    }

    /// This process's round over the fresh process's beside it.
    fn against_fresh(&self) -> Interval {
        Interval::of(
            self.rounds
                .iter()
                .map(|round| round.here / round.fresh)
                .collect(),
        )
    }

    fn print(&self) {
        let here = self.here();
        println!(
            "  {:<34} {:>7.2} ns/pair (min {:.2}, max {:.2})   fresh process {:>6.2} ns/pair",
            self.name,
            Interval::of(here.clone()).median,
            here.iter().copied().fold(f64::INFINITY, f64::min),
            here.iter().copied().fold(0.0, f64::max),
            Interval::of(self.fresh()).median,
        );
    }

    /// The raw ratio of `self` to `before`, round by round.
    fn against(&self, before: &Phase) -> Interval {
        Interval::of(
            self.here()
                .iter()
                .zip(before.here())
                .map(|(after, before)| after / before)
                .collect(),
        )
    }
}

// ------------------------------------------------------------- churn --

/// Deques the churning threads steal from, with enough tasks for all.
fn sources(tasks: usize) -> Vec<Worker<u64>> {
    (0..4)
        .map(|_| {
            let worker = Worker::new_fifo_with_capacity(tasks / 4 + 1);
            (0..(tasks / 4 + 1) as u64).for_each(|task| worker.push(task));
            worker
        })
        .collect()
}

/// Steals until a task comes (the sources have one for every thread).
fn steal_one(stealer: &Stealer<u64>) -> u64 {
    loop {
        match stealer.steal() {
            Steal::Success(task) => return task,
            Steal::Retry => std::hint::spin_loop(),
            Steal::Empty => panic!("a source ran out of tasks"),
        }
    }
}

/// `threads` threads alive at once, each having stolen once.
fn burst(threads: usize) -> Duration {
    let start = Instant::now();
    let sources = sources(threads);
    let stealers: Vec<Stealer<u64>> = sources.iter().map(Worker::stealer).collect();
    let all_stole = Arc::new(Barrier::new(threads + 1));
    let handles: Vec<_> = (0..threads)
        .map(|index| {
            let stealer = stealers[index % stealers.len()].clone();
            let all_stole = Arc::clone(&all_stole);
            thread::Builder::new()
                .stack_size(STACK)
                .spawn(move || {
                    black_box(steal_one(&stealer));
                    all_stole.wait(); // alive until every one has stolen
                })
                .expect("a thread (raise ulimit -u?)")
        })
        .collect();
    all_stole.wait();
    for handle in handles {
        handle.join().expect("a churning thread");
    }
    start.elapsed()
}

/// `total` threads, `wave` alive at once, each stealing once.
fn waves(total: usize, wave: usize) -> Duration {
    let start = Instant::now();
    let sources = sources(total);
    let stealers: Vec<Stealer<u64>> = sources.iter().map(Worker::stealer).collect();
    let mut spawned = 0;
    while spawned < total {
        let handles: Vec<_> = (spawned..(spawned + wave).min(total))
            .map(|index| {
                let stealer = stealers[index % stealers.len()].clone();
                thread::Builder::new()
                    .stack_size(STACK)
                    .spawn(move || black_box(steal_one(&stealer)))
                    .expect("a thread")
            })
            .collect();
        spawned += handles.len();
        for handle in handles {
            handle.join().expect("a churning thread");
        }
    }
    start.elapsed()
}

// ------------------------------------------------ destructor steals --

/// A thread's timings: the mean ordinary steal and the mean steal from its
/// thread-local destructor, in ns.
struct DestructorSteals {
    stealer: Stealer<u64>,
    steals: usize,
    ordinary: f64,
    result: Arc<AtomicU64>,
}

impl Drop for DestructorSteals {
    fn drop(&mut self) {
        let start = Instant::now();
        for _ in 0..self.steals {
            black_box(steal_one(&self.stealer));
        }
        let late = start.elapsed().as_nanos() as f64 / self.steals as f64;
        self.result.store((late / self.ordinary).to_bits(), SeqCst);
    }
}

thread_local! {
    static LATE: Cell<Option<DestructorSteals>> = const { Cell::new(None) };
}

/// Per thread, the ratio of a destructor's steal to an ordinary one.
fn destructor_steals(threads: usize, steals: usize) -> Vec<f64> {
    // Each thread takes 2 * steals + 1 tasks.
    let tasks = threads * (2 * steals + 1);
    let source = Worker::new_fifo_with_capacity(tasks);
    (0..tasks as u64).for_each(|task| source.push(task));
    (0..threads)
        .map(|_| {
            let stealer = source.stealer();
            let result = Arc::new(AtomicU64::new(0));
            let sent = Arc::clone(&result);
            thread::Builder::new()
                .stack_size(STACK)
                .spawn(move || {
                    // Registered first, destroyed last: after this thread's
                    // hazard record.
                    LATE.with(|late| {
                        late.set(Some(DestructorSteals {
                            stealer: stealer.clone(),
                            steals,
                            ordinary: 0.0,
                            result: sent,
                        }))
                    });
                    black_box(steal_one(&stealer)); // sets the record up
                    let start = Instant::now();
                    for _ in 0..steals {
                        black_box(steal_one(&stealer));
                    }
                    let ordinary = start.elapsed().as_nanos() as f64 / steals as f64;
                    LATE.with(|late| {
                        let mut timings = late.take().expect("set above");
                        timings.ordinary = ordinary;
                        late.set(Some(timings));
                    });
                })
                .expect("a thread")
                .join()
                .expect("a destructor thread");
            f64::from_bits(result.load(SeqCst))
        })
        .collect()
}

/// `holders` threads that have each stolen once, alive until the returned
/// closure is called.
fn holders(holders: usize) -> impl FnOnce() {
    let sources = sources(holders);
    let stealers: Vec<Stealer<u64>> = sources.iter().map(Worker::stealer).collect();
    let stole = Arc::new(Barrier::new(holders + 1));
    let release = Arc::new(Barrier::new(holders + 1));
    let handles: Vec<_> = (0..holders)
        .map(|index| {
            let stealer = stealers[index % stealers.len()].clone();
            let (stole, release) = (Arc::clone(&stole), Arc::clone(&release));
            thread::Builder::new()
                .stack_size(STACK)
                .spawn(move || {
                    black_box(steal_one(&stealer));
                    stole.wait();
                    release.wait();
                })
                .expect("a thread")
        })
        .collect();
    stole.wait();
    move || {
        release.wait();
        for handle in handles {
            handle.join().expect("a holder");
        }
        drop(sources);
    }
}

// ------------------------------------------------------------------ main --

fn main() {
    if let Ok(pairs) = std::env::var(FRESH_ROUND) {
        fresh_process_round(pairs.parse().expect("pairs"));
        return;
    }
    // `cargo bench` passes `--bench`; nothing else is taken.
    let threads = env_usize("CHURN_THREADS", 8_192);
    let waves_total = env_usize("CHURN_WAVES_TOTAL", 100_000);
    let wave = env_usize("CHURN_WAVE", 64).max(1);
    let rounds = env_usize("CHURN_ROUNDS", 31).max(1);
    let pairs = env_usize("CHURN_PAIRS", 20_000).max(1);
    let tls_threads = env_usize("CHURN_TLS_THREADS", 64).max(1);
    let tls_steals = env_usize("CHURN_TLS_STEALS", 200).max(1);
    let tls_holders = env_usize("CHURN_TLS_HOLDERS", 64);
    const TARGET: f64 = 1.2;
    const TLS_TARGET: f64 = 4.0;

    println!(
        "churn: an owner's push;pop pairs around empty on Worker::new_lifo() (a new buffer \
         every 256 pairs), {rounds} rounds of {pairs} pairs per phase, each round beside the \
         same round in a fresh process"
    );
    // This thread steals too, so that it has a hazard record like any thread.
    steal_once_here();

    let owner = Owner::new(pairs);
    let before = Phase {
        name: "before any churn".into(),
        rounds: owner.rounds(rounds),
    };
    before.print();

    let took = burst(threads);
    let after_burst = Phase {
        name: format!("after {threads} threads alive at once"),
        rounds: owner.rounds(rounds),
    };
    after_burst.print();
    println!("    (the burst took {:.2} s)", took.as_secs_f64());

    let took = waves(waves_total, wave);
    let after_waves = Phase {
        name: format!("after {waves_total} more, in waves of {wave}"),
        rounds: owner.rounds(rounds),
    };
    after_waves.print();
    println!("    (the waves took {:.2} s)", took.as_secs_f64());

    println!(
        "this process / a fresh process, round by round (median [~95% interval]), \
         target <= {TARGET} after churn:"
    );
    let mut rows = Vec::new();
    for phase in [&before, &after_burst, &after_waves] {
        let ratio = phase.against_fresh();
        let verdict = if std::ptr::eq(phase, &before) {
            "(no churn yet: the method's own bias)"
        } else {
            rows.push(Row {
                label: format!("churn: pairs {}, / a fresh process", phase.name),
                target: TARGET,
                interval: ratio,
            });
            ratio.verdict(TARGET)
        };
        println!("  {:<34} {} {}", phase.name, ratio.show(), verdict);
    }
    println!("this process after / before, round by round (raw, machine drift included):");
    for phase in [&after_burst, &after_waves] {
        println!("  {:<34} {}", phase.name, phase.against(&before).show());
    }

    println!(
        "a steal from a thread-local destructor / an ordinary steal, per thread ({tls_threads} \
         threads one after the other, {tls_steals} steals each way; median [~95% interval]), \
         target <= {TLS_TARGET}:"
    );
    let alone = Interval::of(destructor_steals(tls_threads, tls_steals));
    println!(
        "  {:<34} {} {}",
        "no other thread alive",
        alone.show(),
        alone.verdict(TLS_TARGET)
    );
    let release = holders(tls_holders);
    let held = Interval::of(destructor_steals(tls_threads, tls_steals));
    release();
    println!(
        "  {:<34} {} {}",
        format!("{tls_holders} threads alive holding records"),
        held.show(),
        held.verdict(TLS_TARGET)
    );
    for (alive, interval) in [("no other thread alive", alone), ("records held", held)] {
        rows.push(Row {
            label: format!("churn: a steal from a TLS destructor / an ordinary one, {alive}"),
            target: TLS_TARGET,
            interval,
        });
    }
    write_rows(
        &target_file(CHURN_FILE),
        &format!(
            "churn bench, CHURN_THREADS={threads} CHURN_WAVES_TOTAL={waves_total} CHURN_ROUNDS={rounds}"
        ),
        &rows,
    );
}
