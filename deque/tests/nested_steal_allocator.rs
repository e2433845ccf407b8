//! A steal nested inside another steal on the same thread must not clear the
//! outer steal's protection.
//!
//! A batch steal validates the victim's buffer, then makes room in its
//! destination (`Worker::reserve`, deque/src/batch.rs), which may grow the
//! destination's buffer: an allocation, that is a call into the *global
//! allocator*, which is user code. The allocator of this binary, once armed
//! by a thread-local flag on the thief's thread, steals from another deque
//! right there (as an allocator that hands out free blocks through a
//! work-stealing deque would) and then waits until the victim's owner has
//! pushed once. That push finds the victim's 4-slot buffer full, moves the
//! tasks to a new buffer and retires the old one, freeing it unless some
//! thread's hazard announcement shows it. Then the outer batch steal copies
//! its tasks out of the old buffer.
//!
//! With a single, non-reentrant hazard slot per thread (the code before
//! reentrant protection) the nested steal overwrites the outer announcement and
//! clears it when it ends, the owner frees the old buffer, and the outer copy
//! reads freed memory: miri (default flags) reports the use-after-free, and
//! the native build crashes or delivers tasks twice or never. With reentrant
//! protection the outer announcement stays, the old buffer is kept until the
//! steal is done, and every task is delivered exactly once.
//!
//! The schedule is forced by two flags (no sleeps): the owner pushes only
//! after the nested steal has finished, and the allocator returns only after
//! the push. The allocator's bookkeeping allocates nothing (a `const`
//! thread-local `Cell` and atomics), and it disarms itself before doing
//! anything, so the allocations the nested steal itself may make go straight
//! to the system allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering::SeqCst};
use std::sync::Mutex;
use std::thread;

use chase_lev::{Steal, Stealer, Worker};

// ------------------------------------------------- the stealing allocator --

thread_local! {
    /// Set by the thief right before its batch steal: the next allocation
    /// on that thread runs [`nested_steal_then_wait`] (once).
    static ARMED: Cell<bool> = const { Cell::new(false) };
}

/// The deque the allocator steals from (a `Stealer<u64>` on the test's
/// stack, alive while the hook can run).
static OTHER: AtomicPtr<Stealer<u64>> = AtomicPtr::new(ptr::null_mut());
/// The hook ran (so the batch steal did allocate between its validation and
/// its copy, as this test needs).
static FIRED: AtomicBool = AtomicBool::new(false);
/// The nested steal is over: the owner may push.
static NESTED_DONE: AtomicBool = AtomicBool::new(false);
/// What the nested steal returned: the task + 1, or 0 if it took none.
static NESTED_TOOK: AtomicU64 = AtomicU64::new(0);
/// The owner has pushed (and so replaced and retired the victim's buffer):
/// the allocator may return to the outer batch steal.
static PUSHED: AtomicBool = AtomicBool::new(false);

struct StealingAllocator;

/// Spins on `flag`, yielding (miri and a two-core machine need the other
/// thread to run).
fn wait_for(flag: &AtomicBool) {
    while !flag.load(SeqCst) {
        std::hint::spin_loop();
        thread::yield_now();
    }
}

/// The user code inside the allocator: a complete steal from another deque
/// (protect, read, claim, unprotect), then a wait for the victim's owner.
#[cold]
fn nested_steal_then_wait() {
    FIRED.store(true, SeqCst);
    let other = OTHER.load(SeqCst);
    if !other.is_null() {
        // SAFETY: the test keeps the stealer alive until the thief is joined.
        let other = unsafe { &*other };
        let took = match other.steal() {
            Steal::Success(task) => task + 1,
            _ => 0,
        };
        NESTED_TOOK.store(took, SeqCst);
    }
    NESTED_DONE.store(true, SeqCst);
    wait_for(&PUSHED);
}

// SAFETY: every allocation and free is the system allocator's, unchanged; the
// hook only runs code before forwarding.
unsafe impl GlobalAlloc for StealingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // Disarmed before the hook runs: its own allocations are plain.
        if ARMED.try_with(|armed| armed.replace(false)) == Ok(true) {
            nested_steal_then_wait();
        }
        // SAFETY: forwarded from the caller.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        // SAFETY: forwarded from the caller.
        unsafe { System.dealloc(pointer, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: StealingAllocator = StealingAllocator;

// ------------------------------------------------------------------ tests --

/// One test at a time: the flags above are shared.
static SERIAL: Mutex<()> = Mutex::new(());

/// The use-after-free reproduced with a victim of `fifo` flavour: 4 boxed
/// tasks in a 4-slot buffer, a thief batch-stealing into a 1-slot growable
/// LIFO worker while its allocator steals from another deque, and the owner's
/// one push that replaces the victim's buffer meanwhile. Returns nothing;
/// panics unless every task (0 to 4) is delivered exactly once.
fn nested_steal_during_a_batch_steal(fifo: bool) {
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    for flag in [&FIRED, &NESTED_DONE, &PUSHED] {
        flag.store(false, SeqCst);
    }
    NESTED_TOOK.store(0, SeqCst);

    let victim: Worker<Box<u64>> = if fifo {
        Worker::new_fifo_with_capacity(4)
    } else {
        Worker::new_lifo_with_capacity(4)
    };
    for task in 0..4 {
        victim.push(Box::new(task));
    }
    assert_eq!(victim.capacity(), 4, "the victim's buffer must be full");

    let other = Worker::new_lifo();
    other.push(41u64);
    let other_stealer = other.stealer();
    OTHER.store(ptr::from_ref(&other_stealer).cast_mut(), SeqCst);

    let stealer = victim.stealer();
    let thief = thread::spawn(move || {
        // This thread's first steal sets up its hazard record (which may
        // allocate): done before the hook is armed, on a deque of its own.
        let warm_up = Worker::new_lifo();
        warm_up.push(0u8);
        assert_eq!(warm_up.stealer().steal(), Steal::Success(0));
        let dest: Worker<Box<u64>> = Worker::new_lifo_with_capacity(1);
        ARMED.with(|armed| armed.set(true));
        let result = stealer.steal_batch(&dest);
        ARMED.with(|armed| armed.set(false));
        let got: Vec<u64> = std::iter::from_fn(|| dest.pop())
            .map(|task| *task)
            .collect();
        (result, got)
    });

    // The owner: one push, once the nested steal has come and gone. The
    // victim is full, so this push moves it to a new, larger buffer and
    // retires the 4-slot one; only an announcement can keep that one alive.
    wait_for(&NESTED_DONE);
    victim.push(Box::new(4));
    PUSHED.store(true, SeqCst);

    let (result, stolen) = thief.join().expect("the thief panicked");
    OTHER.store(ptr::null_mut(), SeqCst);
    assert!(
        FIRED.load(SeqCst),
        "the batch steal did not allocate while it held the victim's buffer: \
         this test no longer exercises a nested steal"
    );
    assert_eq!(
        NESTED_TOOK.load(SeqCst),
        42,
        "the nested steal took other's task"
    );
    assert_eq!(result, Steal::Success(()), "the outer batch steal");
    assert!(!stolen.is_empty(), "a successful batch moved a task");

    let mut delivered = stolen.clone();
    delivered.extend(std::iter::from_fn(|| victim.pop()).map(|task| *task));
    delivered.sort_unstable();
    assert_eq!(
        delivered,
        [0, 1, 2, 3, 4],
        "every task exactly once (the thief got {stolen:?})"
    );
}

/// The program that showed the fault: a FIFO victim, whose batch is claimed
/// by one CAS after the copy out of the old buffer.
#[test]
fn a_steal_nested_in_the_allocator_keeps_a_fifo_batch_steals_buffer() {
    nested_steal_during_a_batch_steal(true);
}

/// The same with a LIFO victim, whose batch reads the old buffer for its
/// first task and then claims it alone.
#[test]
fn a_steal_nested_in_the_allocator_keeps_a_lifo_batch_steals_buffer() {
    nested_steal_during_a_batch_steal(false);
}
