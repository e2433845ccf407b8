//! The process around the deque, as a hostile user's program makes it:
//! steals nested in the allocator and in a panic hook, threads created and
//! ended in waves, steals from the thread-local destructors of many threads
//! at once, a thief stalled inside a steal for as long as the owner likes,
//! and the memory left after all of them.
//!
//! This binary's global allocator ([`Environment`]) does three things:
//! - it counts the bytes alive ([`live`]), for the memory checks;
//! - it *poisons* every block it frees (fills it with `0xDD`) before giving it
//!   back, so that a thief reading a buffer after it was freed reads pointers
//!   that crash or indices that fail the buffer's checks, on every run, rather
//!   than the stale tasks the memory may still hold;
//! - armed by a thread-local flag ([`Hook`]) on one thread, it runs user code
//!   inside the next small allocation of that thread: a nested steal, a
//!   panic caught right there (whose panic hook steals), or a stall. A batch
//!   steal allocates after it has validated the victim's buffer and before
//!   it copies from it (`Worker::reserve` growing the destination), so that
//!   is where the code runs. The hook's bookkeeping allocates nothing
//!   (`const` thread-locals and atomics), and it disarms itself first.
//!
//! Every test takes [`SERIAL`], so that one test's allocations never count
//! in another's measurement and the hooks' shared flags have one user. No
//! test sleeps to synchronise: threads wait for each other on atomics. Sizes
//! shrink under miri (`cfg!(miri)`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::{
    AtomicBool, AtomicIsize, AtomicPtr, AtomicU8, AtomicUsize, Ordering::SeqCst,
};
use std::sync::{Arc, Barrier, Mutex, MutexGuard, Once};
use std::thread;

use chase_lev::{Injector, Steal, Stealer, Worker};

// ------------------------------------------------------ the allocator --

/// What the armed allocator does inside the next small allocation.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Hook {
    /// Nothing: a plain allocation.
    Off,
    /// A batch steal from [`LEVEL_ONE`] into a 1-slot worker, whose own
    /// allocation runs [`Hook::NestedSteal`]: three steals nested.
    NestedBatch,
    /// A steal from [`INNERMOST`], then [`entered_then_wait`].
    NestedSteal,
    /// A panic, caught right there; the panic hook, armed on this thread
    /// ([`PANIC_STEALS`]), steals from [`INNERMOST`] and waits.
    PanicInside,
    /// Only [`entered_then_wait`]: the steal that allocated stays where it
    /// is, holding whatever it protects.
    Stall,
}

thread_local! {
    /// Armed by a thread on itself; the allocator disarms it before it runs.
    static HOOK: Cell<Hook> = const { Cell::new(Hook::Off) };
    /// Whether a panic on this thread runs [`steal_from_the_panic_hook`].
    static PANIC_STEALS: Cell<bool> = const { Cell::new(false) };
}

/// The hook fires only on an allocation of at most this many bytes: the
/// destination's new slots (a few pointers) are one; a chunk of hazard
/// records that a nested steal may allocate is not.
const HOOKED_SIZE: usize = 64;

/// Bytes currently allocated by anyone in this process.
static LIVE: AtomicIsize = AtomicIsize::new(0);

struct Environment;

// SAFETY: every allocation and free is the system allocator's; the hook runs
// code before forwarding, and a free is poisoned (written over) only before
// it is handed back, while this call still owns the block.
unsafe impl GlobalAlloc for Environment {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() <= HOOKED_SIZE {
            let hook = HOOK.try_with(|hook| hook.replace(Hook::Off));
            if let Ok(hook) = hook {
                if hook != Hook::Off {
                    run_hook(hook);
                }
            }
        }
        // SAFETY: forwarded from the caller.
        let pointer = unsafe { System.alloc(layout) };
        if !pointer.is_null() {
            LIVE.fetch_add(layout.size() as isize, SeqCst);
        }
        pointer
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, SeqCst);
        // SAFETY: the caller gives the block back: it is ours to write until
        // it goes to the system allocator.
        unsafe {
            ptr::write_bytes(pointer, 0xDD, layout.size());
            System.dealloc(pointer, layout);
        }
    }
}

#[global_allocator]
static ALLOCATOR: Environment = Environment;

fn live() -> isize {
    LIVE.load(SeqCst)
}

fn arm(hook: Hook) {
    HOOK.with(|armed| armed.set(hook));
}

// ------------------------------------------------- the hooks' shared state --

/// One test at a time (see the module docs).
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

type Task = Box<u64>;

/// The deque the middle steal of [`Hook::NestedBatch`] takes a batch from.
static LEVEL_ONE: AtomicPtr<Stealer<Task>> = AtomicPtr::new(ptr::null_mut());
/// The deque the innermost nested steal takes from (by the allocator or by
/// the panic hook).
static INNERMOST: AtomicPtr<Stealer<Task>> = AtomicPtr::new(ptr::null_mut());
/// Set by the innermost hook once its nested steal is done (or, for a
/// stall, once it stalls): the owners may now change their buffers.
static ENTERED: AtomicBool = AtomicBool::new(false);
/// Set by the test once the owners are done: the hook returns.
static RELEASE: AtomicBool = AtomicBool::new(false);
/// How many times each task id (below 64) of the nested programs was taken
/// (by anyone: the hooks record theirs here too, allocation-free).
static TAKEN: [AtomicU8; 64] = [const { AtomicU8::new(0) }; 64];
/// Where the innermost steal records its task instead of [`TAKEN`], when
/// set (ids of a [`LappingOwner`], which go beyond 64).
static INNERMOST_LEDGER: AtomicPtr<Vec<AtomicU8>> = AtomicPtr::new(ptr::null_mut());
/// How many steals the hooks made that returned a task.
static HOOK_STEALS: AtomicUsize = AtomicUsize::new(0);
/// What the middle steal of [`Hook::NestedBatch`] returned (0: it did not
/// run, 1: `Success`, 2: `Empty`, 3: `Retry`); and 4 if the panic of
/// [`Hook::PanicInside`] was not caught as one. Recorded, not asserted: a
/// panic must not leave the allocator.
static HOOK_RESULT: AtomicU8 = AtomicU8::new(0);

fn reset_hooks() {
    LEVEL_ONE.store(ptr::null_mut(), SeqCst);
    INNERMOST.store(ptr::null_mut(), SeqCst);
    ENTERED.store(false, SeqCst);
    RELEASE.store(false, SeqCst);
    INNERMOST_LEDGER.store(ptr::null_mut(), SeqCst);
    HOOK_STEALS.store(0, SeqCst);
    HOOK_RESULT.store(0, SeqCst);
    TAKEN.iter().for_each(|count| count.store(0, SeqCst));
}

/// Records that the task `id` of a nested program was taken.
fn took(id: u64) {
    TAKEN[id as usize].fetch_add(1, SeqCst);
}

/// Spins (yielding: two cores, and miri) until `flag` is set.
fn wait_for(flag: &AtomicBool) {
    while !flag.load(SeqCst) {
        std::hint::spin_loop();
        thread::yield_now();
    }
}

/// Steals until the result is not `Retry`.
fn steal_once<T>(stealer: &Stealer<T>) -> Option<T> {
    loop {
        match stealer.steal() {
            Steal::Success(task) => return Some(task),
            Steal::Empty => return None,
            Steal::Retry => std::hint::spin_loop(),
        }
    }
}

fn run_hook(hook: Hook) {
    match hook {
        Hook::Off => {}
        Hook::NestedBatch => {
            let stealer = LEVEL_ONE.load(SeqCst);
            // SAFETY: the test keeps the stealer alive until the thief is
            // joined.
            let stealer = unsafe { &*stealer };
            // Made before arming: its own allocations are plain.
            let dest: Worker<Task> = Worker::new_lifo_with_capacity(1);
            arm(Hook::NestedSteal);
            let result = stealer.steal_batch(&dest);
            arm(Hook::Off);
            let code = match result {
                Steal::Success(()) => 1,
                Steal::Empty => 2,
                Steal::Retry => 3,
            };
            HOOK_RESULT.store(code, SeqCst);
            while let Some(task) = dest.pop() {
                took(*task);
            }
        }
        Hook::NestedSteal => {
            steal_innermost();
            entered_then_wait();
        }
        Hook::PanicInside => {
            PANIC_STEALS.with(|armed| armed.set(true));
            let caught = panic::catch_unwind(|| panic!("a panic caught inside the allocator"));
            PANIC_STEALS.with(|armed| armed.set(false));
            if caught.is_ok() {
                HOOK_RESULT.store(4, SeqCst);
            }
        }
        Hook::Stall => entered_then_wait(),
    }
}

fn steal_innermost() {
    let stealer = INNERMOST.load(SeqCst);
    if stealer.is_null() {
        return;
    }
    // SAFETY: as in `run_hook`.
    if let Some(task) = steal_once(unsafe { &*stealer }) {
        HOOK_STEALS.fetch_add(1, SeqCst);
        let ledger = INNERMOST_LEDGER.load(SeqCst);
        if ledger.is_null() {
            took(*task);
        } else {
            // SAFETY: the test keeps the ledger alive while it is set.
            let ledger = unsafe { &*ledger };
            ledger[*task as usize].fetch_add(1, SeqCst);
        }
    }
}

fn entered_then_wait() {
    ENTERED.store(true, SeqCst);
    wait_for(&RELEASE);
}

/// The panic hook of this binary: on a thread that armed it
/// ([`PANIC_STEALS`]), a steal from [`INNERMOST`], then (inside the
/// allocator) the wait; on any other thread, the default hook.
fn install_panic_hook() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if PANIC_STEALS.try_with(Cell::get) == Ok(true) {
                steal_from_the_panic_hook();
            } else {
                default(info);
            }
        }));
    });
}

/// What the panic hook does on an armed thread: the nested steal; and when
/// the panic was raised inside the allocator (during a batch steal), the
/// wait for the owner, as [`Hook::NestedSteal`] does.
fn steal_from_the_panic_hook() {
    steal_innermost();
    if !ENTERED.load(SeqCst) && PANIC_WAITS.load(SeqCst) {
        entered_then_wait();
    }
}

/// Whether the panic hook waits for the owner after its steal (the nested
/// program) or returns at once (a panic in a deque's drop).
static PANIC_WAITS: AtomicBool = AtomicBool::new(false);

// ------------------------------------------------------ nested programs --

/// A deque of `fifo` flavour holding tasks `first .. first + 4` in a full
/// 4-slot buffer: its next push replaces (and retires) the buffer.
fn full_four(fifo: bool, first: u64) -> Worker<Task> {
    let worker = if fifo {
        Worker::new_fifo_with_capacity(4)
    } else {
        Worker::new_lifo_with_capacity(4)
    };
    (first..first + 4).for_each(|task| worker.push(Box::new(task)));
    assert_eq!(worker.capacity(), 4);
    worker
}

/// A thief batch-steals from a full 4-slot victim `a` into a 1-slot worker;
/// the allocation that makes room runs `hook` (a nested steal, nested
/// batch, or a panic whose hook steals) on the thief's thread, which then
/// waits while the owners push once on `a` and on `b`, each push moving its
/// deque to a new buffer and retiring the old one. Then the steals unwind,
/// each copying from the buffer it validated. Checks that every task (ids 0
/// to 4 in `a`, 10 to 14 in `b`, 20 in `c`) is taken exactly once, and the
/// innermost steal took one.
fn nested_program(hook: Hook, fifo: bool) {
    reset_hooks();
    install_panic_hook();
    PANIC_WAITS.store(hook == Hook::PanicInside, SeqCst);
    let a = full_four(fifo, 0);
    let b = full_four(!fifo, 10);
    let c: Worker<Task> = Worker::new_lifo();
    c.push(Box::new(20));
    let (b_stealer, c_stealer) = (b.stealer(), c.stealer());
    LEVEL_ONE.store(ptr::from_ref(&b_stealer).cast_mut(), SeqCst);
    INNERMOST.store(ptr::from_ref(&c_stealer).cast_mut(), SeqCst);

    let a_stealer = a.stealer();
    let thief = thread::spawn(move || {
        // The thread's first steal sets up what it needs (its hazard
        // record, thread-locals), before anything is armed.
        let warm_up: Worker<u8> = Worker::new_lifo();
        warm_up.push(0);
        assert_eq!(warm_up.stealer().steal(), Steal::Success(0));
        let dest: Worker<Task> = Worker::new_lifo_with_capacity(1);
        arm(hook);
        let result = a_stealer.steal_batch(&dest);
        arm(Hook::Off);
        let mut moved = 0;
        while let Some(task) = dest.pop() {
            took(*task);
            moved += 1;
        }
        (result, moved)
    });
    wait_for(&ENTERED);
    a.push(Box::new(4));
    b.push(Box::new(14));
    RELEASE.store(true, SeqCst);
    let (result, moved) = thief.join().expect("the thief panicked");
    PANIC_WAITS.store(false, SeqCst);
    LEVEL_ONE.store(ptr::null_mut(), SeqCst);
    INNERMOST.store(ptr::null_mut(), SeqCst);

    assert_eq!(
        HOOK_STEALS.load(SeqCst),
        1,
        "the innermost steal took a task"
    );
    let expected = if hook == Hook::NestedBatch { 1 } else { 0 };
    assert_eq!(
        HOOK_RESULT.load(SeqCst),
        expected,
        "the middle steal's result (1: Success) or the caught panic (4: not caught)"
    );
    assert_eq!(result, Steal::Success(()), "the outer batch steal");
    assert!(moved > 0);
    for worker in [&a, &b, &c] {
        while let Some(task) = worker.pop() {
            took(*task);
        }
    }
    let ids = (0..5).chain(10..15).chain(20..21);
    for id in ids {
        assert_eq!(
            TAKEN[id].load(SeqCst),
            1,
            "task {id} taken once ({hook:?}, fifo: {fifo})"
        );
    }
}

/// Three steals nested on one thread, each between its validation of a
/// buffer and its copy from it while the one inside it runs: a batch steal
/// from `a` whose allocation runs a batch steal from `b`, whose allocation
/// runs a steal from `c`. Both outer buffers are replaced and retired while
/// the innermost one waits. Each steal keeps its own protection until it
/// ends, so both outer copies read live buffers and every task is taken
/// exactly once. (Fails before reentrant protection: the nested steals cleared
/// the thread's one hazard slot, and the outer copies read freed buffers.)
#[test]
fn steals_nested_three_deep_in_the_allocator_each_keep_their_buffer() {
    let _serial = serial();
    for fifo in [true, false] {
        nested_program(Hook::NestedBatch, fifo);
    }
}

/// A panic hook that steals, run while a steal's protection is live: a
/// batch steal's allocation panics and catches the panic right there (an
/// allocator may run code that panics, as long as no unwind leaves it); the
/// panic hook steals from another deque and waits while the victim's owner
/// replaces its buffer. The outer batch steal then copies from the buffer
/// it validated, which must still be alive. This is the one place a panic
/// hook can be made to run inside a steal: a steal runs no task's `Drop`
/// (tasks it reads but fails to claim are forgotten, not dropped), the
/// allocator must not unwind, and a steal's own panics come before it
/// protects anything (a zero limit) or, with the protection live, only
/// after 2^63 tasks went through the destination (an exhausted index
/// space), and then nothing reads the buffer after the hook. (Fails before
/// reentrant protection, as the allocator's nested steal does.)
#[test]
fn a_panic_hook_that_steals_inside_a_protected_steal_keeps_the_outer_buffer() {
    let _serial = serial();
    for fifo in [true, false] {
        nested_program(Hook::PanicInside, fifo);
    }
}

// ------------------------------------------------- a lapping owner thread --

/// An owner on its own thread that keeps its FIFO deque between `low` and
/// `high` tasks, so its pops move `top` on and it changes buffer at every
/// lap, until told to stop; then it pops what is left. Ids are
/// `0 .. budget`; once they are spent it only keeps its tasks.
struct LappingOwner {
    stealer: Stealer<Task>,
    stop: Arc<AtomicBool>,
    /// Set once the owner has pushed its last id.
    spent: Arc<AtomicBool>,
    owner: thread::JoinHandle<()>,
}

impl LappingOwner {
    fn start(counts: &Arc<Vec<AtomicU8>>, low: usize, high: usize) -> LappingOwner {
        let worker: Worker<Task> = Worker::new_fifo_with_capacity(high.next_power_of_two());
        let stealer = worker.stealer();
        let stop = Arc::new(AtomicBool::new(false));
        let spent = Arc::new(AtomicBool::new(false));
        let (counts, stopping, spending) =
            (Arc::clone(counts), Arc::clone(&stop), Arc::clone(&spent));
        let owner = thread::spawn(move || {
            let budget = counts.len() as u64;
            let mut next = 0;
            while !stopping.load(SeqCst) {
                while worker.len() < high && next < budget {
                    worker.push(Box::new(next));
                    next += 1;
                }
                if next == budget {
                    spending.store(true, SeqCst);
                }
                while worker.len() > low && next < budget {
                    match worker.pop() {
                        Some(task) => counts[*task as usize].fetch_add(1, SeqCst),
                        None => break,
                    };
                }
                thread::yield_now();
            }
            while let Some(task) = worker.pop() {
                counts[*task as usize].fetch_add(1, SeqCst);
            }
            // Every id pushed is now taken by someone (checked by the caller
            // against `pushed`).
            PUSHED.store(next as usize, SeqCst);
        });
        // Started: it has tasks to steal.
        while stealer.len() < low {
            thread::yield_now();
        }
        LappingOwner {
            stealer,
            stop,
            spent,
            owner,
        }
    }

    /// Stops the owner and checks that every task it pushed was taken
    /// exactly once (by it or through `counts` by the thieves).
    fn finish(self, counts: &[AtomicU8], what: &str) {
        self.stop.store(true, SeqCst);
        self.owner.join().expect("the owner panicked");
        let pushed = PUSHED.load(SeqCst);
        assert!(pushed > 0);
        for (id, count) in counts.iter().enumerate().take(pushed) {
            assert_eq!(count.load(SeqCst), 1, "{what}: task {id} taken once");
        }
        assert!(counts[pushed..].iter().all(|count| count.load(SeqCst) == 0));
    }
}

/// How many tasks the last finished [`LappingOwner`] pushed.
static PUSHED: AtomicUsize = AtomicUsize::new(0);

fn counts(len: usize) -> Arc<Vec<AtomicU8>> {
    Arc::new((0..len).map(|_| AtomicU8::new(0)).collect())
}

// ------------------------------------------------------------- panic hook --

/// A task whose `Drop` records that it ran, and panics for one of them.
struct Bomb {
    id: usize,
    explodes: bool,
    drops: Arc<Vec<AtomicU8>>,
}

impl Drop for Bomb {
    fn drop(&mut self) {
        self.drops[self.id].fetch_add(1, SeqCst);
        if self.explodes {
            panic!("task {} panics in its drop", self.id);
        }
    }
}

/// A panic hook that steals, run by the panic of a task's `Drop` while the
/// last handle of a deque (then of an injector) drops its remaining tasks;
/// meanwhile another deque's owner changes buffer at every lap. The hook's
/// steal takes a task from the lapping deque like any steal; the dropping
/// deque still drops every other task exactly once while the panic unwinds
/// (and frees its memory); the lapping deque's tasks are each taken once.
/// This is where a panic hook can really run near a deque: in a task's
/// `Drop`, which the deque runs only when its last handle goes (no steal or
/// batch steal drops a task), with no protection of this thread live.
/// (Shown to fail with a planted fault: a deque drop that stops dropping
/// tasks when one panics.)
#[test]
fn a_panic_hook_that_steals_while_a_deque_drops_its_tasks() {
    let _serial = serial();
    reset_hooks();
    install_panic_hook();
    let tasks = if cfg!(miri) { 6 } else { 64 };
    let lapping = counts(if cfg!(miri) { 200 } else { 20_000 });
    let owner = LappingOwner::start(&lapping, 4, 12);
    let hook_stealer = owner.stealer.clone();
    INNERMOST.store(ptr::from_ref(&hook_stealer).cast_mut(), SeqCst);
    INNERMOST_LEDGER.store(Arc::as_ptr(&lapping).cast_mut(), SeqCst);

    let drops = counts(2 * tasks);
    let bomb = |id: usize| Bomb {
        id,
        explodes: id == tasks / 2 || id == tasks + tasks / 2,
        drops: Arc::clone(&drops),
    };
    let worker = Worker::new_lifo();
    let injector = Injector::new();
    for id in 0..tasks {
        worker.push(bomb(id));
        injector.push(bomb(tasks + id));
    }
    // The last handle of the worker is a stealer, dropped by this thread.
    let last = worker.stealer();
    drop(worker);

    PANIC_STEALS.with(|armed| armed.set(true));
    let from_deque = panic::catch_unwind(AssertUnwindSafe(|| drop(last)));
    let from_injector = panic::catch_unwind(AssertUnwindSafe(|| drop(injector)));
    PANIC_STEALS.with(|armed| armed.set(false));
    INNERMOST.store(ptr::null_mut(), SeqCst);
    INNERMOST_LEDGER.store(ptr::null_mut(), SeqCst);

    assert!(
        from_deque.is_err() && from_injector.is_err(),
        "both panicked"
    );
    assert_eq!(
        HOOK_STEALS.load(SeqCst),
        2,
        "the panic hook stole once per panic"
    );
    for (id, count) in drops.iter().enumerate() {
        assert_eq!(count.load(SeqCst), 1, "task {id} dropped exactly once");
    }
    drop(hook_stealer);
    owner.finish(&lapping, "the lapping deque");
}

// -------------------------------------------------------------- churn --

/// Threads that steal once and exit, in waves, while a deque's owner changes
/// buffer at every lap: `total` threads, `wave` alive at once (small
/// stacks). Each steals once (a single steal, or a batch of at most two
/// into a worker of its own), trying again after `Empty` until it gets a
/// task (or the owner has spent its ids), so that every thread really
/// protects a buffer; it records what it took. Every task is taken exactly
/// once.
fn churn(total: usize, wave: usize, budget: usize) {
    let taken = counts(budget);
    let owner = LappingOwner::start(&taken, 8, 24);
    let mut spawned = 0;
    while spawned < total {
        let threads: Vec<_> = (spawned..(spawned + wave).min(total))
            .map(|index| {
                let (stealer, taken) = (owner.stealer.clone(), Arc::clone(&taken));
                let spent = Arc::clone(&owner.spent);
                thread::Builder::new()
                    .stack_size(64 * 1024)
                    .spawn(move || {
                        let mine = Worker::new_lifo();
                        loop {
                            let result = if index % 2 == 0 {
                                match stealer.steal() {
                                    Steal::Success(task) => {
                                        mine.push(task);
                                        Steal::Success(())
                                    }
                                    Steal::Empty => Steal::Empty,
                                    Steal::Retry => Steal::Retry,
                                }
                            } else {
                                stealer.steal_batch_with_limit(&mine, 2)
                            };
                            match result {
                                Steal::Success(()) => break,
                                Steal::Empty if spent.load(SeqCst) => break,
                                Steal::Empty => thread::yield_now(),
                                Steal::Retry => {}
                            }
                        }
                        while let Some(task) = mine.pop() {
                            taken[*task as usize].fetch_add(1, SeqCst);
                        }
                    })
                    .expect("a thread")
            })
            .collect();
        spawned += threads.len();
        for thread in threads {
            thread.join().expect("a churning thread panicked");
        }
    }
    owner.finish(&taken, "churn");
}

/// The memory a registry of hazard records may keep once `peak` threads
/// held records at once: chunks of 64 records of at most 256 bytes each,
/// for two records a thread (a nested steal borrows a second), plus 16 KiB
/// for everything else a run leaves (a chunk being allocated, rounding).
fn record_allowance(peak: usize) -> isize {
    ((2 * peak).div_ceil(64) * 64 * 256 + 16 * 1024) as isize
}

/// Threads created and ended in waves, each stealing once from a deque whose
/// owner moves to a new buffer at every lap: every task is taken exactly
/// once, and the memory kept for the threads that have exited (their hazard
/// records) follows the threads alive at once, not the threads ever made
/// (4,096 natively, in waves of 64: a record per thread ever made would be
/// well over the allowance for 64). (Shown to fail with a planted fault: an
/// exiting thread that never gives its record back.)
#[test]
fn thread_churn_in_waves_takes_every_task_once_and_keeps_memory_to_the_threads_alive() {
    let _serial = serial();
    let (total, wave) = if cfg!(miri) { (12, 4) } else { (4_096, 64) };
    let budget = if cfg!(miri) { 400 } else { 4_000_000 };
    // One wave first, so that what a wave needs is there before measuring.
    churn(wave, wave, budget);
    let before = live();
    churn(total, wave, budget);
    let grew = live() - before;
    let allowance = record_allowance(wave + 4);
    assert!(
        grew <= allowance,
        "after {total} threads in waves of {wave}, {grew} bytes more are alive \
         (allowed: {allowance})"
    );
}

// --------------------------------------------- thread-local destructors --

/// What a thread's thread-local destructor does: one steal (and a batch
/// steal into a new worker), recorded in `taken`.
struct StealOnExit {
    stealer: Stealer<Task>,
    taken: Arc<Vec<AtomicU8>>,
    stolen: Arc<AtomicUsize>,
    ran: Arc<AtomicUsize>,
}

impl Drop for StealOnExit {
    fn drop(&mut self) {
        if let Some(task) = steal_once(&self.stealer) {
            self.taken[*task as usize].fetch_add(1, SeqCst);
            self.stolen.fetch_add(1, SeqCst);
        }
        let mine = Worker::new_fifo();
        let _ = self.stealer.steal_batch_with_limit(&mine, 2);
        while let Some(task) = mine.pop() {
            self.taken[*task as usize].fetch_add(1, SeqCst);
        }
        self.ran.fetch_add(1, SeqCst);
    }
}

thread_local! {
    static ON_EXIT: Cell<Option<StealOnExit>> = const { Cell::new(None) };
}

/// `threads` threads whose thread-local destructors steal, all exiting at
/// once (a barrier), while the owner (this thread) grows and shrinks its
/// deque without ever letting it hold fewer than `4 * threads` tasks by its
/// own count. Every destructor steal finds a task (the deque never looks empty:
/// the owner keeps more tasks than there are thieves); every task is taken
/// exactly once.
fn steals_from_destructors(threads: usize, budget: usize) {
    let taken = counts(budget);
    let worker: Worker<Task> = Worker::new_lifo();
    // The owner grows and shrinks until every thread has gone, keeping at
    // least `4 * threads` tasks by its own count (the thieves take at most
    // three each, so the deque never looks empty), from before the first
    // thread starts.
    let floor = 4 * threads;
    let next = Cell::new(0);
    let push = || {
        worker.push(Box::new(next.get() as u64));
        next.set(next.get() + 1);
    };
    (0..floor).for_each(|_| push());
    let (stolen, ran) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let exit = Arc::new(Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let on_exit = StealOnExit {
                stealer: worker.stealer(),
                taken: Arc::clone(&taken),
                stolen: Arc::clone(&stolen),
                ran: Arc::clone(&ran),
            };
            let exit = Arc::clone(&exit);
            thread::Builder::new()
                .stack_size(64 * 1024)
                .spawn(move || {
                    // Registered before this thread's first steal sets up its
                    // own thread-locals, so that it is destroyed after them
                    // (destructors run in reverse order of registration): the
                    // steal then finds this thread's record gone, and
                    // borrows one.
                    ON_EXIT.with(|slot| slot.set(Some(on_exit)));
                    let own: Worker<u8> = Worker::new_lifo();
                    own.push(0);
                    assert_eq!(own.stealer().steal(), Steal::Success(0));
                    exit.wait();
                })
                .expect("a thread")
        })
        .collect();
    let high = if cfg!(miri) { 64 } else { 1_024 };
    while ran.load(SeqCst) < threads && next.get() + high + floor < budget {
        (0..high).for_each(|_| push());
        while worker.len() > floor {
            let task = worker.pop().expect("above the floor");
            taken[*task as usize].fetch_add(1, SeqCst);
        }
        while worker.len() < floor {
            push();
        }
    }
    let next = next.get();
    for handle in handles {
        handle.join().expect("a thread panicked");
    }
    assert_eq!(ran.load(SeqCst), threads, "every destructor ran its steals");
    assert_eq!(
        stolen.load(SeqCst),
        threads,
        "every destructor's steal found a task"
    );
    while let Some(task) = worker.pop() {
        taken[*task as usize].fetch_add(1, SeqCst);
    }
    for (id, count) in taken.iter().enumerate().take(next) {
        assert_eq!(count.load(SeqCst), 1, "task {id} taken once");
    }
}

/// Steals from the thread-local destructors of 64 threads at once (their
/// own thread-locals, hazard record included, already destroyed), while the
/// owner grows and shrinks the deque: every steal completes and takes a
/// task, every task is taken exactly once. (Shown to fail with a planted
/// fault: a steal that reaches this thread's record with `with` instead of
/// `try_with`, which panics in a destructor, and aborts.)
#[test]
fn steals_from_the_thread_local_destructors_of_many_threads_at_once() {
    let _serial = serial();
    let (threads, budget) = if cfg!(miri) {
        (4, 2_000)
    } else {
        (64, 1_000_000)
    };
    steals_from_destructors(threads, budget);
}

// ------------------------------------------------------ a stalled thief --

/// A thief stalled inside a batch steal (its allocation waits), holding
/// the protection of the victim's first buffer, while the owner grows the
/// deque to `top_capacity` and shrinks it back `rounds` times, then moves
/// it through `laps` laps. Returns the most bytes alive above the start
/// during the owner's work, and checks, after the thief is released, that
/// every task was taken exactly once.
fn stalled_thief(top_capacity: usize, rounds: usize, laps: usize) -> isize {
    reset_hooks();
    let budget = 8 + rounds * top_capacity + laps * 8;
    let taken = counts(budget);
    let victim: Worker<Task> = Worker::new_lifo_with_capacity(4);
    let mut next = 0u64;
    let mut push = |worker: &Worker<Task>| {
        worker.push(Box::new(next));
        next += 1;
    };
    (0..4).for_each(|_| push(&victim));
    let stealer = victim.stealer();
    let thief_taken = Arc::clone(&taken);
    let thief = thread::spawn(move || {
        let warm_up: Worker<u8> = Worker::new_lifo();
        warm_up.push(0);
        assert_eq!(warm_up.stealer().steal(), Steal::Success(0));
        let dest: Worker<Task> = Worker::new_lifo_with_capacity(1);
        arm(Hook::Stall);
        let result = stealer.steal_batch(&dest);
        arm(Hook::Off);
        while let Some(task) = dest.pop() {
            thief_taken[*task as usize].fetch_add(1, SeqCst);
        }
        // Then steal on as any thief would, until the deque looks empty.
        while let Some(task) = steal_once(&stealer) {
            thief_taken[*task as usize].fetch_add(1, SeqCst);
        }
        result
    });
    wait_for(&ENTERED);
    let start = live();
    let mut most = 0;
    let pop = |worker: &Worker<Task>| {
        let task = worker.pop().expect("the owner's own task");
        taken[*task as usize].fetch_add(1, SeqCst);
    };
    // Grow and shrink, above the four tasks the thief looked at (a LIFO
    // owner's pops do not touch them, so their buffer stays the one the
    // thief validated, retired again and again).
    for _ in 0..rounds {
        while victim.capacity() < top_capacity {
            push(&victim);
        }
        most = most.max(live() - start);
        while victim.len() > 4 {
            pop(&victim);
        }
        // Pop;push pairs of the same task until the hysteresis lets the
        // buffer shrink back (the pairs do not move `top` either).
        let mut pairs = 0;
        while victim.capacity() > 8 && pairs < 100 * top_capacity {
            let task = victim.pop().expect("the owner's own task");
            victim.push(task);
            pairs += 1;
        }
        most = most.max(live() - start);
    }
    // Laps: pop everything, then push;pop pairs around empty, each moving
    // `top` on; a new buffer at every lap.
    while !victim.is_empty() {
        pop(&victim);
    }
    for _ in 0..laps * 8 {
        push(&victim);
        pop(&victim);
    }
    most = most.max(live() - start);
    RELEASE.store(true, SeqCst);
    let result = thief.join().expect("the thief panicked");
    assert_ne!(result, Steal::Empty, "the thief saw four tasks");
    while let Some(task) = victim.pop() {
        taken[*task as usize].fetch_add(1, SeqCst);
    }
    for (id, count) in taken.iter().enumerate().take(next as usize) {
        assert_eq!(count.load(SeqCst), 1, "task {id} taken once");
    }
    most
}

/// A thief stalled for as long as the owner likes inside a batch steal,
/// between its validation of the victim's buffer and its copy from it: the
/// owner grows and shrinks the deque many times and moves it through many
/// laps meanwhile. The owner never frees the buffer the thief holds (the
/// thief's copy would read poisoned memory: a crash or a failed check), nor
/// keeps more than a bounded number of buffers for it (the bytes alive
/// during all that stay under eight buffers of the largest capacity and the
/// tasks themselves, however many rounds and laps); after the release every
/// task is taken exactly once. (Shown to fail with planted faults: a scan
/// that ignores the hazard slots, and a retire that never frees.)
#[test]
fn a_thief_stalled_inside_a_steal_keeps_its_buffer_and_the_owner_stays_bounded() {
    let _serial = serial();
    let (top_capacity, rounds, laps) = if cfg!(miri) {
        (32, 2, 6)
    } else {
        (1_024, 40, 2_000)
    };
    let most = stalled_thief(top_capacity, rounds, laps);
    let slot = std::mem::size_of::<Task>();
    // Eight buffers of the largest capacity (the current one, spares, the
    // held one and those retired with it), one box per task alive, and 4 KiB.
    let bound = (8 * top_capacity * slot + top_capacity * 8 + 4096) as isize;
    assert!(
        most <= bound,
        "while the thief stalled, {most} bytes more were alive (bound {bound})"
    );
}

// -------------------------------------------------------------- memory --

/// Everything above once, at its miri size or a little more natively.
fn all_of_them() {
    for fifo in [true, false] {
        nested_program(Hook::NestedBatch, fifo);
        nested_program(Hook::PanicInside, fifo);
    }
    let (total, wave) = if cfg!(miri) { (8, 4) } else { (512, 64) };
    churn(total, wave, if cfg!(miri) { 400 } else { 50_000 });
    let threads = if cfg!(miri) { 4 } else { 64 };
    steals_from_destructors(threads, if cfg!(miri) { 2_000 } else { 200_000 });
    let _ = stalled_thief(if cfg!(miri) { 16 } else { 256 }, 2, 20);
}

/// After all of the above (nested steals, churn, destructor steals, a
/// stalled thief), once the threads have exited and the deques dropped, the
/// bytes alive return to a bound: the first run may leave the hazard
/// records of its most threads at once (64 or so), and further runs leave
/// nothing more (within 4 KiB). A leak of a buffer per deque or of a record
/// per exited thread or per destructor steal grows with the runs. (Shown to
/// fail with a planted fault: a record borrowed by a destructor's steal that
/// is never given back.)
#[test]
fn memory_returns_to_a_bound_after_all_of_them() {
    let _serial = serial();
    let runs = if cfg!(miri) { 2 } else { 6 };
    let start = live();
    all_of_them();
    let after_one = live();
    for _ in 1..runs {
        all_of_them();
    }
    let after_all = live();
    let allowance = record_allowance(64 + 8);
    assert!(
        after_one - start <= allowance,
        "one run of everything left {} bytes alive (allowed: {allowance})",
        after_one - start
    );
    assert!(
        after_all - after_one <= 4096,
        "{} more runs left {} bytes more alive than the first (allowed: 4096)",
        runs - 1,
        after_all - after_one
    );
}
