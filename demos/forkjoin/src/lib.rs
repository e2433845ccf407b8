//! A small fork-join thread pool on chase-lev deques.
//!
//! - One [`chase_lev::Worker`] per thread. [`join`] pushes its second closure
//!   on the caller's deque, runs the first, then pops the second back (the
//!   common case: nobody stole it) or, if a thief took it, helps: it steals
//!   other work until the thief's result is in (help-first, as libraries
//!   without continuations do).
//! - A thread that finds its own deque empty steals the oldest task of a
//!   victim chosen at random, then of the others in turn; after a failed
//!   round it backs off for a random number of spins that doubles each round,
//!   then yields, then sleeps.
//! - Idle threads sleep on a condition variable and cost nothing; whoever
//!   publishes work wakes one (see [`Sleep`] for why no wake-up is lost).
//! - Work from outside the pool ([`ThreadPool::install`]) goes through a
//!   global injector, a `Mutex<VecDeque>`: it is touched once per `install`,
//!   never on the fork-join fast path, so a lock-free queue would buy nothing
//!   measurable, and the lock makes the no-lost-wake-up argument trivial.
//! - Per-thread counters: tasks stolen, failed steal attempts (a victim found
//!   empty or a lost race), sleeps.
//!
//! # Soundness
//! The closure `join` pushes lives on `join`'s stack frame, so `join` never
//! returns, and never unwinds, before that closure has finished running
//! somewhere or has been popped back unrun: it waits on the job's latch even
//! when its own closure panicked. The thread that runs a stolen job sets the
//! latch as the very last access to the job.
//!
//! # Panics
//! A panic in either closure of `join` propagates out of `join` on the caller
//! thread, once both closures are finished (or the second was never started):
//! if the first panics and the second is still in the caller's deque, the
//! second is dropped unrun; if both panic, the first's payload wins. A panic
//! inside [`ThreadPool::install`] propagates to the caller of `install`. A
//! worker thread never unwinds: every job it runs is wrapped in
//! `catch_unwind`, and the payload travels to whoever waits for the job.
//!
//! [`workloads`] holds the benchmark programs (fib, quicksort, a tree sum),
//! written once over a [`workloads::Fork`] so that this pool, `rayon::join`
//! and a serial run execute the same code.

pub mod workloads;

use std::any::Any;
use std::cell::{Cell, UnsafeCell};
use std::collections::VecDeque;
use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::{self, JoinHandle};

use chase_lev::{Steal, Stealer, Worker};
use crossbeam_utils::CachePadded;

// ---------------------------------------------------------------------------
// Jobs

/// A type-erased pointer to a job and the function that runs it: two words,
/// so a push and a steal move little (the deque stores any `T`; its slots are
/// plain `MaybeUninit<T>` cells and ask nothing of the layout).
#[derive(Clone, Copy)]
struct JobRef {
    data: *const (),
    execute: unsafe fn(*const ()),
}

// SAFETY: a `JobRef` points to a job whose closure and result are `Send`
// (enforced where `JobRef`s are made), and the job outlives every use of the
// `JobRef` (join and install wait for its latch).
unsafe impl Send for JobRef {}

impl JobRef {
    /// Whether both refer to the same job (the data pointer identifies it).
    fn is(self, other: JobRef) -> bool {
        std::ptr::eq(self.data, other.data)
    }

    /// # Safety
    /// The job behind `data` is alive and has not run yet; it runs once.
    unsafe fn run(self) {
        // SAFETY: forwarded from the caller.
        unsafe { (self.execute)(self.data) }
    }
}

enum JobResult<R> {
    Pending,
    Done(R),
    Panicked(Box<dyn Any + Send>),
}

/// How a waiter learns that a job finished.
trait Latch {
    /// Marks the job finished and wakes its waiter.
    ///
    /// # Safety
    /// `this` is alive on entry. It may be freed by the waiter as soon as the
    /// latch is observed set, so this must not touch `*this` after setting.
    unsafe fn set(this: *const Self, registry: &Registry);
}

/// A job on the stack of the thread that waits for it.
struct StackJob<L, F, R> {
    latch: L,
    function: UnsafeCell<Option<F>>,
    result: UnsafeCell<JobResult<R>>,
}

impl<L: Latch, F: FnOnce() -> R + Send, R: Send> StackJob<L, F, R> {
    fn new(function: F, latch: L) -> Self {
        StackJob {
            latch,
            function: UnsafeCell::new(Some(function)),
            result: UnsafeCell::new(JobResult::Pending),
        }
    }

    fn as_job_ref(&self) -> JobRef {
        JobRef {
            data: (self as *const Self).cast(),
            execute: Self::execute,
        }
    }

    /// Runs the job on a pool thread (the one that popped or stole it).
    ///
    /// # Safety
    /// `this` points to a live `StackJob` of exactly this type that has not
    /// run yet, and only this thread runs it.
    unsafe fn execute(this: *const ()) {
        let this = this.cast::<Self>();
        // SAFETY: the job is alive and this thread is its only runner, so
        // nobody else touches `function` or `result` until the latch is set.
        let function = unsafe { (*(*this).function.get()).take() }.expect("a job runs once");
        let result = match panic::catch_unwind(AssertUnwindSafe(function)) {
            Ok(value) => JobResult::Done(value),
            Err(payload) => JobResult::Panicked(payload),
        };
        // SAFETY: as above; the waiter reads `result` only after the latch.
        unsafe { *(*this).result.get() = result };
        let registry = WorkerThread::current_registry();
        // SAFETY: the job is alive until the latch is set, and `set` does not
        // touch it afterwards.
        unsafe { L::set(&(*this).latch, &registry) };
    }

    /// Takes the closure back when the job was popped unrun by its owner.
    fn take_function(&self) -> F {
        // SAFETY: the owner popped the job back, so no other thread has it.
        unsafe { (*self.function.get()).take() }.expect("a job runs once")
    }

    /// The result, once the latch is set.
    fn into_result(self) -> R {
        match self.result.into_inner() {
            JobResult::Done(value) => value,
            JobResult::Panicked(payload) => panic::resume_unwind(payload),
            JobResult::Pending => unreachable!("the latch was set before the result"),
        }
    }
}

/// The latch of `join`: its waiter is a pool thread that helps while it
/// waits, and sleeps (on the pool's `Sleep`) only if it runs out of work.
struct SpinLatch {
    state: AtomicU8,
}

const UNSET: u8 = 0;
/// The waiter may be asleep: whoever sets the latch must wake the sleepers.
const SLEEPY: u8 = 1;
const SET: u8 = 2;

impl SpinLatch {
    fn new() -> Self {
        SpinLatch {
            state: AtomicU8::new(UNSET),
        }
    }

    fn probe(&self) -> bool {
        // Acquire: pairs with the release in `set`, so the job's result is
        // visible once the latch reads set.
        self.state.load(Ordering::Acquire) == SET
    }

    /// Announces that the waiter is about to sleep; false if already set.
    fn get_sleepy(&self) -> bool {
        self.state
            .compare_exchange(UNSET, SLEEPY, Ordering::AcqRel, Ordering::Acquire)
            .map_or_else(|state| state == SLEEPY, |_| true)
    }
}

impl Latch for SpinLatch {
    unsafe fn set(this: *const Self, registry: &Registry) {
        // AcqRel: release publishes the result; the swap tells us whether
        // the waiter announced a sleep, in which case it holds (or will take)
        // the sleep lock before waiting, and `wake_all` takes it too.
        // SAFETY: alive on entry; not touched after the swap.
        let previous = unsafe { (*this).state.swap(SET, Ordering::AcqRel) };
        if previous == SLEEPY {
            registry.sleep.wake_all();
        }
    }
}

/// The latch of `install`: its waiter is a thread outside the pool, which
/// blocks on a condition variable.
struct LockLatch {
    done: Mutex<bool>,
    condvar: Condvar,
}

impl LockLatch {
    fn new() -> Self {
        LockLatch {
            done: Mutex::new(false),
            condvar: Condvar::new(),
        }
    }

    fn wait(&self) {
        let mut done = self.done.lock().unwrap();
        while !*done {
            done = self.condvar.wait(done).unwrap();
        }
    }
}

impl Latch for LockLatch {
    unsafe fn set(this: *const Self, _registry: &Registry) {
        // SAFETY: alive on entry; the waiter cannot return before it has
        // re-acquired the mutex, which happens after our guard is dropped,
        // and we touch nothing after that.
        let this = unsafe { &*this };
        let mut done = this.done.lock().unwrap();
        *done = true;
        this.condvar.notify_all();
    }
}

// ---------------------------------------------------------------------------
// Sleeping and waking

/// Where idle threads sleep.
///
/// No lost wake-up: a thread going to sleep increments `sleepers` (a SeqCst
/// read-modify-write), issues a SeqCst fence, and only then looks at every
/// deque and the injector one last time; a thread publishing work first makes
/// it visible (the deque's push, or the injector's lock), then issues a
/// SeqCst fence and reads `sleepers`. The two fences are ordered one way or
/// the other in the single SeqCst order: either the sleeper's last look sees
/// the work, or the publisher sees the sleeper and takes the lock to wake it.
/// The sleeper holds the lock from before its last look until the condition
/// variable releases it, and waits for `generation` to change, so a wake that
/// lands between the look and the wait is not missed either.
struct Sleep {
    generation: Mutex<u64>,
    condvar: Condvar,
    sleepers: AtomicUsize,
}

impl Sleep {
    fn new() -> Self {
        Sleep {
            generation: Mutex::new(0),
            condvar: Condvar::new(),
            sleepers: AtomicUsize::new(0),
        }
    }

    /// Called after publishing work: wakes one sleeper if there is any.
    #[inline]
    fn work_published(&self) {
        fence(Ordering::SeqCst);
        if self.sleepers.load(Ordering::Relaxed) > 0 {
            let mut generation = self.generation.lock().unwrap();
            *generation += 1;
            self.condvar.notify_one();
        }
    }

    /// Wakes every sleeper (a latch with a sleepy waiter, or shutdown).
    fn wake_all(&self) {
        let mut generation = self.generation.lock().unwrap();
        *generation += 1;
        self.condvar.notify_all();
    }

    /// Sleeps until woken, unless `should_stay_awake` (checked after the
    /// announcement, see above) says there is a reason not to.
    fn sleep(&self, should_stay_awake: impl FnOnce() -> bool) {
        let mut generation = self.generation.lock().unwrap();
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if !should_stay_awake() {
            let seen = *generation;
            while *generation == seen {
                generation = self.condvar.wait(generation).unwrap();
            }
        }
        self.sleepers.fetch_sub(1, Ordering::Relaxed);
    }
}

// ---------------------------------------------------------------------------
// The pool

/// What one worker thread did; written only by that thread.
#[derive(Default)]
struct Counters {
    steals: AtomicU64,
    failed_steals: AtomicU64,
    sleeps: AtomicU64,
}

impl Counters {
    /// Adds one; only the owning thread writes, so load + store suffices.
    fn bump(counter: &AtomicU64) {
        counter.store(counter.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }
}

/// The state every thread of a pool shares.
struct Registry {
    stealers: Vec<Stealer<JobRef>>,
    injector: Mutex<VecDeque<JobRef>>,
    /// How many jobs the injector holds: lets threads skip its lock.
    injected: AtomicUsize,
    sleep: Sleep,
    terminating: AtomicBool,
    counters: Vec<CachePadded<Counters>>,
}

impl Registry {
    fn inject(&self, job: JobRef) {
        self.injector.lock().unwrap().push_back(job);
        self.injected.fetch_add(1, Ordering::SeqCst);
        self.sleep.work_published();
    }

    fn take_injected(&self) -> Option<JobRef> {
        if self.injected.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let job = self.injector.lock().unwrap().pop_front();
        if job.is_some() {
            self.injected.fetch_sub(1, Ordering::Relaxed);
        }
        job
    }

    /// Whether any deque or the injector holds work (the sleeper's last look).
    fn has_work(&self) -> bool {
        self.injected.load(Ordering::SeqCst) > 0
            || self.stealers.iter().any(|stealer| !stealer.is_empty())
    }
}

/// Statistics of a pool since it started (or since the last reset).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub steals: u64,
    pub failed_steals: u64,
    pub sleeps: u64,
}

/// A fork-join pool of `threads` threads. Dropping it stops the threads.
pub struct ThreadPool {
    registry: Arc<Registry>,
    threads: Vec<JoinHandle<()>>,
}

impl ThreadPool {
    pub fn new(threads: usize) -> ThreadPool {
        assert!(threads > 0, "a pool needs at least one thread");
        let workers: Vec<Worker<JobRef>> = (0..threads).map(|_| Worker::new_lifo()).collect();
        let registry = Arc::new(Registry {
            stealers: workers.iter().map(Worker::stealer).collect(),
            injector: Mutex::new(VecDeque::new()),
            injected: AtomicUsize::new(0),
            sleep: Sleep::new(),
            terminating: AtomicBool::new(false),
            counters: (0..threads)
                .map(|_| CachePadded::new(Counters::default()))
                .collect(),
        });
        let threads = workers
            .into_iter()
            .enumerate()
            .map(|(index, deque)| {
                let registry = Arc::clone(&registry);
                thread::Builder::new()
                    .name(format!("forkjoin-{index}"))
                    .spawn(move || WorkerThread::main(index, deque, registry))
                    .expect("spawn a pool thread")
            })
            .collect();
        ThreadPool { registry, threads }
    }

    pub fn threads(&self) -> usize {
        self.threads.len()
    }

    /// Runs `operation` on a pool thread and returns its result; `join`
    /// inside it runs in parallel. A panic in `operation` propagates here.
    pub fn install<R: Send>(&self, operation: impl FnOnce() -> R + Send) -> R {
        if let Some(worker) = WorkerThread::current() {
            if Arc::ptr_eq(&worker.registry, &self.registry) {
                return operation();
            }
        }
        let job = StackJob::new(operation, LockLatch::new());
        self.registry.inject(job.as_job_ref());
        job.latch.wait();
        job.into_result()
    }

    /// How many threads are asleep right now (idle, or waiting for a stolen
    /// job with nothing to help with).
    pub fn sleeping_threads(&self) -> usize {
        self.registry.sleep.sleepers.load(Ordering::SeqCst)
    }

    /// The counters summed over the threads.
    pub fn stats(&self) -> Stats {
        let mut stats = Stats::default();
        for counters in &self.registry.counters {
            stats.steals += counters.steals.load(Ordering::Relaxed);
            stats.failed_steals += counters.failed_steals.load(Ordering::Relaxed);
            stats.sleeps += counters.sleeps.load(Ordering::Relaxed);
        }
        stats
    }
}

impl Drop for ThreadPool {
    fn drop(&mut self) {
        self.registry.terminating.store(true, Ordering::SeqCst);
        self.registry.sleep.wake_all();
        for thread in self.threads.drain(..) {
            // A worker never unwinds (jobs run under catch_unwind).
            let _ = thread.join();
        }
    }
}

/// The randomised backoff of a thread that found nothing to do: a random
/// number of spins below a bound that doubles each time, then yields, then
/// "completed" (time to sleep).
struct Backoff {
    step: u32,
}

/// Rounds of spinning (up to 2^6 spins each), then of yielding, before a
/// thread sleeps: roughly some tens of microseconds of looking for work.
const SPIN_STEPS: u32 = 6;
const YIELD_STEPS: u32 = 20;

impl Backoff {
    fn new() -> Self {
        Backoff { step: 0 }
    }

    fn reset(&mut self) {
        self.step = 0;
    }

    fn is_completed(&self) -> bool {
        self.step > YIELD_STEPS
    }

    fn snooze(&mut self, random: u64) {
        if self.step <= SPIN_STEPS {
            for _ in 0..random % (1 << self.step) + 1 {
                std::hint::spin_loop();
            }
        } else {
            thread::yield_now();
        }
        self.step += 1;
    }
}

/// A pool thread's own state, reachable from its thread-local pointer.
struct WorkerThread {
    index: usize,
    deque: Worker<JobRef>,
    registry: Arc<Registry>,
    random: Cell<u64>,
    /// Not `Send`: lives on its thread's stack.
    _not_send: PhantomData<*const ()>,
}

thread_local! {
    static CURRENT: Cell<*const WorkerThread> = const { Cell::new(std::ptr::null()) };
}

impl WorkerThread {
    fn current() -> Option<&'static WorkerThread> {
        let pointer = CURRENT.with(Cell::get);
        // SAFETY: set by `main` to a `WorkerThread` on its own stack, which
        // outlives every job the thread runs, and cleared before it goes.
        unsafe { pointer.as_ref() }
    }

    /// The registry of the pool thread running a job.
    fn current_registry() -> Arc<Registry> {
        let worker = WorkerThread::current().expect("jobs run on pool threads");
        Arc::clone(&worker.registry)
    }

    fn main(index: usize, deque: Worker<JobRef>, registry: Arc<Registry>) {
        let worker = WorkerThread {
            index,
            deque,
            registry,
            random: Cell::new(
                0x9e37_79b9_7f4a_7c15 ^ (index as u64 + 1).wrapping_mul(0xbf58_476d_1ce4_e5b9),
            ),
            _not_send: PhantomData,
        };
        CURRENT.with(|current| current.set(&worker));
        let mut backoff = Backoff::new();
        loop {
            if let Some(job) = worker.find_work() {
                // SAFETY: a job handed out by a deque or the injector is alive
                // (its creator waits for it) and runs only here.
                unsafe { job.run() };
                backoff.reset();
            } else if worker.registry.terminating.load(Ordering::SeqCst) {
                break;
            } else if backoff.is_completed() {
                worker.sleep(|| false);
                backoff.reset();
            } else {
                backoff.snooze(worker.next_random());
            }
        }
        CURRENT.with(|current| current.set(std::ptr::null()));
    }

    fn next_random(&self) -> u64 {
        // xorshift64*: cheap, and good enough to pick victims.
        let mut x = self.random.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.random.set(x);
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn counters(&self) -> &Counters {
        &self.registry.counters[self.index]
    }

    /// Pushes a job on this thread's deque and wakes a sleeper if any.
    #[inline]
    fn push(&self, job: JobRef) {
        self.deque.push(job);
        self.registry.sleep.work_published();
    }

    /// Own deque first, then the injector, then the others.
    fn find_work(&self) -> Option<JobRef> {
        self.deque
            .pop()
            .or_else(|| self.registry.take_injected())
            .or_else(|| self.steal())
    }

    /// One round over the other threads, starting at a random one.
    fn steal(&self) -> Option<JobRef> {
        let stealers = &self.registry.stealers;
        let count = stealers.len();
        if count <= 1 {
            return None;
        }
        let start = (self.next_random() % count as u64) as usize;
        for offset in 0..count {
            let victim = (start + offset) % count;
            if victim == self.index {
                continue;
            }
            loop {
                match stealers[victim].steal() {
                    Steal::Success(job) => {
                        Counters::bump(&self.counters().steals);
                        return Some(job);
                    }
                    Steal::Empty => {
                        Counters::bump(&self.counters().failed_steals);
                        break;
                    }
                    // Lost a race: the victim has work, try it again.
                    Steal::Retry => Counters::bump(&self.counters().failed_steals),
                }
            }
        }
        None
    }

    /// Sleeps on the pool's condition variable unless there is work, the
    /// pool is shutting down, or `wake_early` says so.
    fn sleep(&self, wake_early: impl FnOnce() -> bool) {
        Counters::bump(&self.counters().sleeps);
        let registry = &self.registry;
        registry.sleep.sleep(|| {
            wake_early() || registry.terminating.load(Ordering::SeqCst) || registry.has_work()
        });
    }

    /// Helps until `latch` is set: runs any job it can find, backs off when
    /// there is none, sleeps when backing off did not help.
    fn wait_until(&self, latch: &SpinLatch) {
        let mut backoff = Backoff::new();
        while !latch.probe() {
            if let Some(job) = self.find_work() {
                // SAFETY: as in `main`.
                unsafe { job.run() };
                backoff.reset();
            } else if backoff.is_completed() {
                // `get_sleepy` makes whoever sets the latch wake the sleepers.
                self.sleep(|| !latch.get_sleepy());
                backoff.reset();
            } else {
                backoff.snooze(self.next_random());
            }
        }
    }

    fn join<A, B, RA, RB>(&self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        let job_b = StackJob::new(b, SpinLatch::new());
        let job_b_ref = job_b.as_job_ref();
        self.push(job_b_ref);
        // Whatever `a` does, `job_b` must be finished or reclaimed before
        // this frame goes: so catch a's panic and re-raise it afterwards.
        let result_a = panic::catch_unwind(AssertUnwindSafe(a));
        // Everything `a` pushed, it also joined: the newest job in our deque
        // is `job_b`, unless a thief took it.
        while !job_b.latch.probe() {
            match self.deque.pop() {
                Some(job) if job.is(job_b_ref) => {
                    let b = job_b.take_function();
                    return match result_a {
                        Ok(value_a) => (value_a, b()),
                        // `b` never started; drop it and report `a`'s panic.
                        Err(payload) => panic::resume_unwind(payload),
                    };
                }
                // SAFETY: as in `main` (cannot happen with `join` alone, but
                // any job found here is a live one).
                Some(job) => unsafe { job.run() },
                None => {
                    // Stolen: help until the thief is done.
                    self.wait_until(&job_b.latch);
                    break;
                }
            }
        }
        match result_a {
            Ok(value_a) => (value_a, job_b.into_result()),
            Err(payload) => panic::resume_unwind(payload),
        }
    }
}

/// Runs `a` and `b`, potentially in parallel, and returns both results.
///
/// On a pool thread, `b` is offered to thieves while this thread runs `a`.
/// Outside a pool (no [`ThreadPool::install`] around it) both run here, one
/// after the other. See the module documentation for panics.
pub fn join<A, B, RA, RB>(a: A, b: B) -> (RA, RB)
where
    A: FnOnce() -> RA + Send,
    B: FnOnce() -> RB + Send,
    RA: Send,
    RB: Send,
{
    match WorkerThread::current() {
        Some(worker) => worker.join(a, b),
        None => (a(), b()),
    }
}
