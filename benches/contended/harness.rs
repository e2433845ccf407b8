//! The machinery every row shares, and nothing else: the helper threads, the
//! spinning gate that starts the clock, the loops that take tasks with their
//! local counts, and the involuntary context switches that flag a sample.
//!
//! What it does per task is what a scheduler's loop does anyway (count,
//! add the task's value); the shared memory it writes in the timed region
//! is one store to release the gate, and with several consumers of an
//! Injector one `fetch_add` per consumer once the producers are done.

use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{
    AtomicBool, AtomicU64, AtomicUsize,
    Ordering::{AcqRel, Acquire, Release},
};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;
use std::time::Instant;

use crossbeam_utils::CachePadded;

use chase_lev_bench::contenders::Taken;

/// What a thread did in one sample, counted in its own registers and
/// handed over after the clock stopped.
#[derive(Clone, Copy, Debug)]
pub struct Tally {
    pub role: Role,
    /// Tasks taken, and the sum of their values (wrapping): the check that
    /// every task was taken exactly once.
    pub taken: u64,
    pub sum: u64,
    /// Successful batch steals. A thread that batch-steals takes every
    /// task through them (the one returned and those it pops from its own
    /// worker after), so its `taken` is what they brought.
    pub batches: u64,
    pub empties: u64,
    pub retries: u64,
    /// Tasks already added to the consumers' shared total.
    flushed: u64,
    /// When this thread saw the last task go, if it is the one that tells.
    pub end: Option<Instant>,
    /// Involuntary context switches while the thread had its job.
    pub switches: u64,
    failed: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// A deque's owner (the bench's own thread): pops, or stays idle.
    Owner,
    Thief,
    Producer,
    Consumer,
}

impl Tally {
    pub fn new(role: Role) -> Tally {
        Tally {
            role,
            taken: 0,
            sum: 0,
            batches: 0,
            empties: 0,
            retries: 0,
            flushed: 0,
            end: None,
            switches: 0,
            failed: false,
        }
    }

    #[inline(always)]
    fn took(&mut self, task: u64) {
        self.taken += 1;
        self.sum = self.sum.wrapping_add(task);
    }
}

/// The start line: each helper, once set up, adds itself to `arrived` and
/// spins on `go` (no yield, no sleep); the bench's thread waits for all of
/// them, reads the clock and opens it.
#[derive(Default)]
pub struct Gate {
    arrived: CachePadded<AtomicUsize>,
    go: CachePadded<AtomicBool>,
    /// A helper's job panicked: open at once rather than wait for it.
    failed: AtomicBool,
}

impl Gate {
    /// A helper: ready, waiting for the start.
    pub fn wait(&self) {
        self.arrived.fetch_add(1, Release);
        while !self.go.load(Acquire) {
            std::hint::spin_loop();
        }
    }

    /// The bench's thread: once `helpers` wait, the start time, and go.
    fn release(&self, helpers: usize) -> Instant {
        while self.arrived.load(Acquire) < helpers && !self.failed.load(Acquire) {
            std::hint::spin_loop();
        }
        let start = Instant::now();
        self.go.store(true, Release);
        start
    }
}

/// A helper's part of a sample: sets itself up, calls `Gate::wait`, works.
pub type Job = Box<dyn FnOnce(&Gate) -> Tally + Send>;

/// Helper threads kept for the whole run, blocked on a channel between
/// samples: a thread registers with a deque's reclamation (crossbeam's
/// epoch, chase-lev's hazard records) on its first steal, once, as in a
/// scheduler, and no thread start is near the clock.
pub struct Pool {
    jobs: Vec<mpsc::Sender<(Arc<Gate>, Job)>>,
    done: mpsc::Receiver<Tally>,
    threads: Vec<JoinHandle<()>>,
}

impl Pool {
    pub fn new(size: usize) -> Pool {
        let (done_sender, done) = mpsc::channel();
        let mut jobs = Vec::new();
        let mut threads = Vec::new();
        for index in 0..size {
            let (sender, receiver) = mpsc::channel::<(Arc<Gate>, Job)>();
            let done_sender = done_sender.clone();
            let thread = std::thread::Builder::new()
                .name(format!("contended-{index}"))
                .spawn(move || {
                    for (gate, job) in receiver {
                        let before = involuntary_switches();
                        let mut tally = catch_unwind(AssertUnwindSafe(|| job(&gate)))
                            .unwrap_or_else(|_| {
                                gate.failed.store(true, Release);
                                Tally {
                                    failed: true,
                                    ..Tally::new(Role::Thief)
                                }
                            });
                        tally.switches = involuntary_switches() - before;
                        if done_sender.send(tally).is_err() {
                            return;
                        }
                    }
                })
                .expect("a helper thread starts");
            jobs.push(sender);
            threads.push(thread);
        }
        Pool {
            jobs,
            done,
            threads,
        }
    }

    /// One sample: the helpers get their jobs and wait at the gate; the
    /// bench's thread opens it, does its own part (`main`) and collects
    /// every tally, its own first. Returns the start time with them.
    pub fn sample(&self, helpers: Vec<Job>, main: impl FnOnce() -> Tally) -> (Instant, Vec<Tally>) {
        let count = helpers.len();
        assert!(
            count <= self.jobs.len(),
            "a row needs more helpers than the pool has"
        );
        let gate = Arc::new(Gate::default());
        for (sender, job) in self.jobs.iter().zip(helpers) {
            sender
                .send((gate.clone(), job))
                .expect("the helper threads live as long as the pool");
        }
        let before = involuntary_switches();
        let start = gate.release(count);
        let mut own = main();
        own.switches = involuntary_switches() - before;
        let mut tallies = vec![own];
        for _ in 0..count {
            tallies.push(self.done.recv().expect("a helper thread ended"));
        }
        assert!(
            tallies.iter().all(|tally| !tally.failed),
            "a helper's job panicked"
        );
        (start, tallies)
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.jobs.clear();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// The calling thread's involuntary context switches so far
/// (`getrusage(RUSAGE_THREAD)`, `ru_nivcsw`): a sample during which any of
/// its threads gained one was preempted. Always 0 off Linux (no flag).
#[cfg(target_os = "linux")]
pub fn involuntary_switches() -> u64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: `usage` is a valid, writable `rusage`; getrusage fills it.
    let result = unsafe { libc::getrusage(libc::RUSAGE_THREAD, usage.as_mut_ptr()) };
    if result != 0 {
        return 0;
    }
    // SAFETY: zeroed, then filled by the successful call above.
    let usage = unsafe { usage.assume_init() };
    usage.ru_nivcsw as u64
}

#[cfg(not(target_os = "linux"))]
pub fn involuntary_switches() -> u64 {
    0
}

/// How several consumers of an Injector know that every task is taken:
/// each producer adds one to `producers_done` after its last push, and
/// only then does a consumer that sees `Empty` add what it took since its
/// last addition to `total` (the one that brings it to every task stops the
/// clock).
#[derive(Default)]
pub struct Finish {
    producers_done: CachePadded<AtomicUsize>,
    total: CachePadded<AtomicU64>,
}

impl Finish {
    pub fn producer_done(&self) {
        self.producers_done.fetch_add(1, Release);
    }
}

/// When a taking thread stops.
#[derive(Clone, Copy)]
pub enum Until<'a> {
    /// At its first `Empty`: nobody pushes during the sample.
    Empty,
    /// Once it has taken this many: it is the only consumer.
    Count(u64),
    /// When `finish.total` reaches `tasks`, checked on `Empty` once all
    /// `producers` are done: one of several consumers.
    Shared {
        finish: &'a Finish,
        producers: usize,
        tasks: u64,
    },
}

/// Steals until `until`; with `batch`, every successful steal is followed
/// by popping the thread's own worker (`pop_own`) empty.
#[inline(always)]
pub fn take(
    mut steal: impl FnMut() -> Taken,
    mut pop_own: impl FnMut() -> Option<u64>,
    batch: bool,
    until: Until<'_>,
    tally: &mut Tally,
) {
    // The counts live in a local copy, written back once: the caller's
    // `Tally` may sit in memory its callees could reach (a closure's return
    // slot), which would keep every count in memory, each task's update a
    // store and a reload. Here they stay in registers.
    let mut counts = *tally;
    take_counting(&mut steal, &mut pop_own, batch, until, &mut counts);
    *tally = counts;
}

#[inline(always)]
fn take_counting(
    mut steal: impl FnMut() -> Taken,
    mut pop_own: impl FnMut() -> Option<u64>,
    batch: bool,
    until: Until<'_>,
    tally: &mut Tally,
) {
    loop {
        match steal() {
            Taken::Task(task) => {
                tally.took(task);
                if batch {
                    while let Some(task) = pop_own() {
                        tally.took(task);
                    }
                    tally.batches += 1;
                }
                if let Until::Count(tasks) = until {
                    if tally.taken >= tasks {
                        tally.end = Some(Instant::now());
                        return;
                    }
                }
            }
            Taken::Retry => tally.retries += 1,
            Taken::Empty => {
                tally.empties += 1;
                match until {
                    Until::Empty => {
                        tally.end = Some(Instant::now());
                        return;
                    }
                    Until::Count(_) => {}
                    Until::Shared {
                        finish,
                        producers,
                        tasks,
                    } => {
                        if finish.producers_done.load(Acquire) < producers {
                            continue;
                        }
                        let newly = tally.taken - tally.flushed;
                        if newly > 0 {
                            tally.flushed = tally.taken;
                            if finish.total.fetch_add(newly, AcqRel) + newly == tasks {
                                tally.end = Some(Instant::now());
                                return;
                            }
                        } else if finish.total.load(Acquire) >= tasks {
                            return;
                        }
                    }
                }
            }
        }
    }
}

/// The owner pops until its deque is empty (nobody pushes in the sample).
#[inline(always)]
pub fn pop_all(mut pop: impl FnMut() -> Option<u64>, tally: &mut Tally) {
    // A local copy, as in `take`.
    let mut counts = *tally;
    while let Some(task) = pop() {
        counts.took(task);
    }
    counts.end = Some(Instant::now());
    *tally = counts;
}

/// A producer pushes `tasks` (their values) and says it is done.
#[inline(always)]
pub fn push_all(mut push: impl FnMut(u64), tasks: Range<u64>, finish: &Finish) {
    for task in tasks {
        push(task);
    }
    finish.producer_done();
}
