//! What a deque gives back to the allocator: after shrinking,
//! and after its last handle drops.
//!
//! A counting global allocator measures the bytes alive. This binary has no
//! test harness (`harness = false` in `deque/Cargo.toml`): `main` runs the
//! checks one after the other on one thread, so that no other test's
//! allocations are counted. Sizes shrink under miri.
//!
//! # Exact reclamation
//!
//! Retired buffers (the ones a grow, shrink or move to the next lap
//! replaces) are freed at the owner's buffer changes once no thief holds
//! them, and all that remain when the deque drops
//! (proofs-notes/reclamation.md#hazard-slots). Two checks state that
//! behaviour exactly; they could not pass while crossbeam-epoch freed
//! buffers later, at a time that depended on other threads' pins (they
//! measured, for example, `fifo: 6240` bytes held after the last drop).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, AtomicUsize, Ordering::SeqCst};
use std::thread;

use chase_lev::{Stealer, Worker};

/// Lifetimes in the accumulation check.
const CYCLES: usize = if cfg!(miri) { 2 } else { 300 };
/// Tasks pushed in one lifetime: enough to grow to 2048 slots.
const TASKS: usize = if cfg!(miri) { 24 } else { 2000 };

// ------------------------------------------------ the counting allocator --

struct Counting;

/// Bytes currently allocated, by anyone in this process.
static LIVE: AtomicIsize = AtomicIsize::new(0);
/// Allocations made, in all.
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged, and only
// counts on the side.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded from the caller.
        let pointer = unsafe { System.alloc(layout) };
        if !pointer.is_null() {
            LIVE.fetch_add(layout.size() as isize, SeqCst);
            ALLOCATIONS.fetch_add(1, SeqCst);
        }
        pointer
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, SeqCst);
        // SAFETY: forwarded from the caller.
        unsafe { System.dealloc(pointer, layout) }
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded from the caller.
        let moved = unsafe { System.realloc(pointer, layout, new_size) };
        if !moved.is_null() {
            LIVE.fetch_add(new_size as isize - layout.size() as isize, SeqCst);
        }
        moved
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn live() -> isize {
    LIVE.load(SeqCst)
}

// ---------------------------------------------------------------- deques --

/// Every way to make a worker.
const KINDS: [&str; 6] = [
    "lifo",
    "fifo",
    "lifo capacity 1",
    "fifo capacity 2",
    "lifo bounded 64",
    "fifo bounded 5",
];

/// The kinds each check goes through: all, or three under miri.
fn tested_kinds() -> &'static [&'static str] {
    if cfg!(miri) {
        &["lifo", "fifo capacity 2", "fifo bounded 5"]
    } else {
        &KINDS
    }
}

fn make<T>(kind: &str) -> Worker<T> {
    match kind {
        "lifo" => Worker::new_lifo(),
        "fifo" => Worker::new_fifo(),
        "lifo capacity 1" => Worker::new_lifo_with_capacity(1),
        "fifo capacity 2" => Worker::new_fifo_with_capacity(2),
        "lifo bounded 64" => Worker::new_lifo_bounded(64),
        "fifo bounded 5" => Worker::new_fifo_bounded(5),
        _ => unreachable!("{kind}"),
    }
}

/// One hostile lifetime of a deque of heap tasks: grows (or, bounded, moves
/// through many laps), is stolen from by a thief on another thread (single
/// and batch steals into a worker of its own), shrinks back, and is dropped
/// with tasks still in it, its last handle on another thread.
fn one_lifetime(kind: &str) {
    let worker = make::<Box<u64>>(kind);
    let stealer = worker.stealer();
    let thief = thread::spawn(move || {
        let mine = Worker::new_fifo();
        for _ in 0..TASKS / 8 {
            drop(stealer.steal());
            let _ = stealer.steal_batch(&mine);
            while let Some(task) = mine.pop() {
                drop(task);
            }
        }
        stealer
    });
    for task in 0..TASKS as u64 {
        if worker.try_push(Box::new(task)).is_err() {
            drop(worker.pop());
        }
    }
    let stealer = thief.join().unwrap();
    // Pop down to a few tasks: a growable buffer shrinks on the way.
    while worker.len() > 3 {
        drop(worker.pop());
    }
    drop(worker);
    thread::spawn(move || drop::<Stealer<Box<u64>>>(stealer))
        .join()
        .unwrap();
}

// ---------------------------------------------------------------- checks --

/// Hundreds of lifetimes in a row hold no more memory at the end than a few
/// of them would: whatever the reclamation scheme, retired buffers, tasks
/// and the deque itself are all given back eventually. (A scheme that leaks
/// one buffer per lifetime holds `CYCLES` times more.)
fn repeated_lifetimes_do_not_accumulate_memory() {
    for &kind in tested_kinds() {
        one_lifetime(kind); // warm-up: thread-locals, the epoch's lists
        let before = live();
        let allocations = ALLOCATIONS.load(SeqCst);
        one_lifetime(kind);
        let one = ALLOCATIONS.load(SeqCst) - allocations;
        let after_one = live() - before;
        for _ in 1..CYCLES {
            one_lifetime(kind);
        }
        let after_all = live() - before;
        // A buffer of the largest size one lifetime reaches, 2048 slots of
        // a `Box`: eight of them is the allowance for what a deferred scheme
        // still holds (the epoch has held up to 16,472 bytes here); a leak of
        // even a 256-slot buffer per lifetime (600 KB) exceeds it.
        let allowance = 8 * 2048 * 8 + 4096;
        println!(
            "  {kind}: {one} allocations per lifetime; {after_one} bytes held after one, \
             {after_all} after {CYCLES} (allowed {allowance})"
        );
        assert!(
            after_all <= allowance,
            "{kind}: {after_all} bytes still held after {CYCLES} lifetimes (allowed {allowance})"
        );
    }
}

/// Once the last handle is gone, every byte the deque allocated is back:
/// the current buffer, every retired one, the shared state, and the tasks
/// left in it. (Waits for the new reclamation: see the module's doc.)
fn every_byte_comes_back_when_the_last_handle_drops() -> Vec<String> {
    let mut failures = Vec::new();
    for &kind in tested_kinds() {
        one_lifetime(kind); // warm-up: thread-locals, the epoch's lists
        let before = live();
        one_lifetime(kind);
        let held = live() - before;
        println!("  {kind}: {held} bytes held after the last handle dropped");
        if held != 0 {
            failures.push(format!("{kind}: {held} bytes not returned"));
        }
    }
    failures
}

/// After the owner pops a grown deque back down, the large buffers it grew
/// through are returned while the worker lives: what remains is the current
/// buffer and at most the one it replaced last (which a thief may still
/// hold until the owner's next buffer change). (Waits for the new
/// reclamation: see the module's doc.)
fn shrinking_gives_the_grown_buffers_back() -> Vec<String> {
    let mut failures = Vec::new();
    // Growable from 4 slots, so that the shrink back is many halvings.
    for kind in ["lifo from 4 slots", "fifo from 4 slots"] {
        let worker = if kind.starts_with("lifo") {
            Worker::<u64>::new_lifo_with_capacity(4)
        } else {
            Worker::<u64>::new_fifo_with_capacity(4)
        };
        let _thief: Stealer<u64> = worker.stealer();
        let empty = live();
        let grown_to = if cfg!(miri) { 1 << 6 } else { 1 << 16 };
        (0..grown_to as u64).for_each(|task| worker.push(task));
        let grown = live() - empty;
        // Pop all but one task: every pop counts toward the hysteresis.
        while worker.len() > 1 {
            let _ = worker.pop();
        }
        // Further pops on a nearly empty deque finish the shrinking.
        for _ in 0..2 * grown_to {
            worker.push(0);
            let _ = worker.pop();
        }
        let capacity = worker.capacity();
        let held = live() - empty;
        // The current buffer and the one it replaced (twice as large).
        let allowed = 3 * capacity as isize * 8 + 1024;
        println!(
            "  {kind}: grown to {grown_to} slots ({grown} bytes), shrunk to {capacity} \
             slots: {held} bytes held (allowed {allowed})"
        );
        if held > allowed {
            failures.push(format!(
                "{kind}: {held} bytes held after shrinking to {capacity} slots (allowed {allowed})"
            ));
        }
    }
    failures
}

/// A deque in a steady state allocates nothing once it has warmed up: pushed
/// and popped around empty (a join in a flat loop: every pop takes the last
/// task, so the indices move on by one and the buffer changes every lap), or
/// around a fixed depth (a FIFO owner's pops move the indices too), growable
/// or bounded, and around empty with a thief stealing all the while. Each buffer
/// change reuses a retired buffer that no thread holds instead of freeing it
/// and allocating another (proofs-notes/reclamation.md#reuse). Returns one
/// line per shape that allocated.
fn steady_state_allocates_nothing() -> Vec<String> {
    let mut failures = Vec::new();
    let kinds: &[&str] = if cfg!(miri) {
        &["lifo capacity 1", "fifo bounded 5"]
    } else {
        &[
            "lifo",
            "fifo",
            "lifo capacity 1",
            "lifo bounded 64",
            "fifo bounded 5",
        ]
    };
    // Laps of the largest buffer here (256 slots): 16 to warm up, then
    // about 400 measured.
    let (warm_up, measured) = if cfg!(miri) {
        (64, 256)
    } else {
        (16 * 256, 100_000)
    };
    for &kind in kinds {
        // With a thief, only around empty: a thief would take the tasks
        // below a fixed depth at a time of its own, and the capacity of a
        // growable worker would follow.
        for (depth, thieves) in [(0, 0), (0, 1), (3, 0)] {
            {
                let allocations = steady_state_allocations(kind, depth, thieves, warm_up, measured);
                println!(
                    "  {kind}, depth {depth}, {thieves} thief: {allocations} allocations \
                     in {measured} push;pop pairs after {warm_up} to warm up"
                );
                if allocations != 0 {
                    failures.push(format!(
                        "{kind}, depth {depth}, {thieves} thief: {allocations} allocations"
                    ));
                }
            }
        }
    }
    failures
}

/// With several thieves, each holding at most one buffer, the owner keeps
/// one spare more than the most buffers a scan has found held at once, so
/// a lap change allocates only when more thieves hold buffers at once than
/// ever before: at most one buffer change per thief allocates (a buffer and
/// its extra spare, two allocations each) in the deque's life at one
/// capacity (proofs-notes/reclamation.md#reuse). Returns one line per shape
/// that allocated more.
fn several_thieves_allocate_only_at_a_new_peak_of_holders() -> Vec<String> {
    let mut failures = Vec::new();
    let (warm_up, measured) = if cfg!(miri) {
        (64, 256)
    } else {
        (4096, 400_000)
    };
    for thieves in [3, 6] {
        let kind = "lifo capacity 1";
        let allocations = steady_state_allocations(kind, 0, thieves, warm_up, measured);
        let most = 4 * thieves;
        println!(
            "  {kind}, around empty, {thieves} thieves: {allocations} allocations in \
             {measured} push;pop pairs after {warm_up} to warm up (at most {most})"
        );
        if allocations > most {
            failures.push(format!(
                "{kind}, {thieves} thieves: {allocations} allocations, more than {most}"
            ));
        }
    }
    failures
}

/// Allocations made by anyone while the owner of a `kind` deque holding
/// `depth` tasks pushes and pops `measured` pairs, after `warm_up` pairs, with
/// `thieves` threads stealing throughout.
fn steady_state_allocations(
    kind: &str,
    depth: u64,
    thieves: usize,
    warm_up: usize,
    measured: usize,
) -> usize {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    let worker = make::<u64>(kind);
    (0..depth).for_each(|task| worker.push(task));
    let stop = Arc::new(AtomicBool::new(false));
    let started = Arc::new(AtomicUsize::new(0));
    let thieves: Vec<_> = (0..thieves)
        .map(|_| {
            let stealer = worker.stealer();
            let (stop, started) = (Arc::clone(&stop), Arc::clone(&started));
            thread::spawn(move || {
                // The first steal registers this thread's hazard record.
                let _ = stealer.steal();
                started.fetch_add(1, SeqCst);
                while !stop.load(SeqCst) {
                    let _ = stealer.steal();
                }
            })
        })
        .collect();
    while started.load(SeqCst) < thieves.len() {
        thread::yield_now();
    }
    let pair = |task: u64| {
        let _ = worker.try_push(task);
        let _ = worker.pop();
    };
    (0..warm_up as u64).for_each(pair);
    let before = ALLOCATIONS.load(SeqCst);
    (0..measured as u64).for_each(pair);
    let allocations = ALLOCATIONS.load(SeqCst) - before;
    stop.store(true, SeqCst);
    thieves.into_iter().for_each(|thief| thief.join().unwrap());
    allocations
}

/// The allocator counts what it should (else every check above is vacuous).
fn the_counting_allocator_counts() {
    let before = live();
    let block = vec![0u8; 10_000];
    assert_eq!(live() - before, 10_000);
    drop(block);
    assert_eq!(live(), before);
}

/// A check that returns its failures instead of asserting them.
type WaitingCheck = fn() -> Vec<String>;

fn main() {
    let checks: [(&str, fn()); 2] = [
        (
            "the_counting_allocator_counts",
            the_counting_allocator_counts,
        ),
        (
            "repeated_lifetimes_do_not_accumulate_memory",
            repeated_lifetimes_do_not_accumulate_memory,
        ),
    ];
    for (name, check) in checks {
        println!("{name}");
        check();
        println!("{name} ... ok");
    }
    let waiting: [(&str, WaitingCheck); 4] = [
        (
            "every_byte_comes_back_when_the_last_handle_drops",
            every_byte_comes_back_when_the_last_handle_drops,
        ),
        (
            "shrinking_gives_the_grown_buffers_back",
            shrinking_gives_the_grown_buffers_back,
        ),
        (
            "several_thieves_allocate_only_at_a_new_peak_of_holders",
            several_thieves_allocate_only_at_a_new_peak_of_holders,
        ),
        (
            "steady_state_allocates_nothing",
            steady_state_allocates_nothing,
        ),
    ];
    for (name, check) in waiting {
        println!("{name}");
        let failures = check();
        assert!(failures.is_empty(), "{name}: {failures:#?}");
        println!("{name} ... ok");
    }
}
