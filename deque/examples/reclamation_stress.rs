//! Retired buffers under churn: one owner changes its buffer as often as it
//! can while `N` thieves steal continuously, and a counting global allocator
//! records how many of the owner's buffers were alive at once. Written
//! against the public API only, so it builds at any commit of this crate
//! (used to compare the hazard slots of `reclamation.rs` with the
//! crossbeam-epoch version they replaced; proofs-notes/reclamation.md#cost).
//!
//! Usage: `reclamation_stress <thieves> <owner-operations> [stall|idle]`
//!
//! The owner is a FIFO worker of capacity 4, so it moves to a new buffer
//! (next lap) about every 4 pushes; it pushes 1, 2 or 3 tasks and pops them
//! back, and every 1024 such cycles pushes 256 tasks and pops them all (the
//! buffer grows to 256 slots, then shrinks back to 4 over the next few
//! hundred cycles, by the shrink's hysteresis). Each push and each pop
//! counts as one owner operation. Thieves call `steal` until the owner is
//! done.
//!
//! With `stall`, one more thief is stopped in the middle of a batch steal
//! before the owner starts: its destination worker grows while the thief
//! holds the source buffer (hazard slot, or epoch pin), and this program's
//! allocator blocks that allocation until the owner has finished. That is a
//! thief descheduled mid-steal, built from the public API.
//!
//! With `idle`, each thief makes one steal from another deque (so that its
//! thread is registered: a hazard record, or an epoch participant) and then
//! sleeps until the owner is done: under callgrind
//! (`--toggle-collect='*run_owner*'`) this counts exactly what the owner's
//! buffer changes cost with that many registered threads.
//!
//! Buffers are recognised by their allocation: tasks are 64-byte aligned,
//! so a buffer's slot array is the only allocation of alignment 64, and the
//! owner's (at least 4 slots, 256 bytes) are told from the stalled thief's
//! destination (1 or 2 slots) by size. Peak live owner buffers minus 2 (the
//! current one and the one being filled during a change) is the largest
//! number of retired buffers not yet freed.
//!
//! Prints one line of `key=value` fields; peak RSS comes from
//! `/usr/bin/time -v` around it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed, Ordering::SeqCst};
use std::sync::Arc;
use std::time::{Duration, Instant};

use chase_lev::{Steal, Worker};

/// A task whose slot array has an alignment no other allocation here has.
#[repr(C, align(64))]
struct Task(u64);

const OWNER_CAPACITY: usize = 4;
const BURST: u64 = 256;
const CYCLES_PER_BURST: u64 = 1024;
/// The smallest slot array of the owner's deque, in bytes.
const OWNER_BUFFER_BYTES: usize = OWNER_CAPACITY * 64;

struct Counting;

static LIVE_BYTES: AtomicU64 = AtomicU64::new(0);
static PEAK_BYTES: AtomicU64 = AtomicU64::new(0);
static LIVE_BUFFERS: AtomicU64 = AtomicU64::new(0);
static PEAK_BUFFERS: AtomicU64 = AtomicU64::new(0);
static BUFFERS_MADE: AtomicU64 = AtomicU64::new(0);
/// Set by the stalled thief once it is blocked inside the allocator.
static STALLED: AtomicBool = AtomicBool::new(false);
/// Set by `main` to let the stalled thief go on.
static RELEASE: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Block this thread's next slot-array allocation until `RELEASE`.
    static STALL_NEXT_BUFFER: Cell<bool> = const { Cell::new(false) };
}

fn is_owner_buffer(layout: Layout) -> bool {
    layout.align() == 64 && layout.size() >= OWNER_BUFFER_BYTES
}

// SAFETY: every call is forwarded to `System` with the same arguments; the
// counters only observe.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.align() == 64 && STALL_NEXT_BUFFER.with(|stall| stall.replace(false)) {
            // Ordering: SeqCst, a plain flag between two threads of this
            // program (no proof step: the deque is not involved).
            STALLED.store(true, SeqCst);
            // Ordering: as above.
            while !RELEASE.load(SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        // Ordering: Relaxed: statistics, read after every thread is joined.
        let live = LIVE_BYTES.fetch_add(layout.size() as u64, Relaxed) + layout.size() as u64;
        // Ordering: Relaxed, as above.
        PEAK_BYTES.fetch_max(live, Relaxed);
        if is_owner_buffer(layout) {
            // Ordering: Relaxed, as above.
            BUFFERS_MADE.fetch_add(1, Relaxed);
            // Ordering: Relaxed, as above.
            let live = LIVE_BUFFERS.fetch_add(1, Relaxed) + 1;
            // Ordering: Relaxed, as above.
            PEAK_BUFFERS.fetch_max(live, Relaxed);
        }
        // SAFETY: forwarded from the caller.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        // Ordering: Relaxed, as in `alloc`.
        LIVE_BYTES.fetch_sub(layout.size() as u64, Relaxed);
        if is_owner_buffer(layout) {
            // Ordering: Relaxed, as in `alloc`.
            LIVE_BUFFERS.fetch_sub(1, Relaxed);
        }
        // SAFETY: forwarded from the caller.
        unsafe { System.dealloc(pointer, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// What the thieves did.
#[derive(Default)]
struct Tally {
    stolen: u64,
    retries: u64,
    empties: u64,
}

/// The owner's fixed workload: `operations` pushes and pops.
#[inline(never)]
fn run_owner(worker: &Worker<Task>, operations: u64) -> u64 {
    let mut done = 0;
    let mut popped = 0;
    let mut cycle = 0u64;
    while done < operations {
        let pushes = if cycle % CYCLES_PER_BURST == CYCLES_PER_BURST - 1 {
            BURST
        } else {
            1 + cycle % 3
        };
        for task in 0..pushes {
            worker.push(Task(black_box(task)));
        }
        done += pushes;
        for _ in 0..pushes {
            done += 1;
            match worker.pop() {
                Some(task) => popped += black_box(task.0) | 1,
                None => break, // thieves took the rest
            }
        }
        cycle += 1;
    }
    black_box(popped);
    done
}

fn main() {
    let arguments: Vec<String> = std::env::args().collect();
    let usage = "usage: reclamation_stress <thieves> <owner-operations> [stall|idle]";
    let thieves: usize = arguments.get(1).expect(usage).parse().expect(usage);
    let operations: u64 = arguments.get(2).expect(usage).parse().expect(usage);
    let (stall, idle) = match arguments.get(3).map(String::as_str) {
        None => (false, false),
        Some("stall") => (true, false),
        Some("idle") => (false, true),
        Some(_) => panic!("{usage}"),
    };
    // One task per idle thief, for its registering steal (`u64` tasks, so
    // that this deque's buffer is not counted as the owner's).
    let elsewhere = Worker::<u64>::new_fifo();
    if idle {
        for task in 0..thieves as u64 {
            elsewhere.push(task);
        }
    }

    let worker = Worker::<Task>::new_fifo_with_capacity(OWNER_CAPACITY);
    let go = Arc::new(AtomicBool::new(false));
    let started = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));

    let stalled_thief = stall.then(|| {
        // Enough tasks that the batch takes 2 (its limit): the destination
        // (capacity 1) grows to 2 slots while the thief holds the source
        // buffer.
        for task in 0..8 {
            worker.push(Task(task));
        }
        let stealer = worker.stealer();
        let thread = std::thread::spawn(move || {
            let dest = Worker::<Task>::new_lifo_with_capacity(1);
            STALL_NEXT_BUFFER.with(|stall| stall.set(true));
            let result = stealer.steal_batch_with_limit(&dest, 2);
            (matches!(result, Steal::Success(())), dest.len())
        });
        // Ordering: SeqCst, as in `Counting::alloc`.
        while !STALLED.load(SeqCst) {
            std::thread::sleep(Duration::from_millis(1));
        }
        // Back to the same empty deque as without a stall (the stalled
        // thief's CAS will fail).
        while worker.pop().is_some() {}
        thread
    });

    let handles: Vec<_> = (0..thieves)
        .map(|_| {
            let stealer = worker.stealer();
            let registering = elsewhere.stealer();
            let (go, stop, started) = (Arc::clone(&go), Arc::clone(&stop), Arc::clone(&started));
            std::thread::spawn(move || {
                let mut tally = Tally::default();
                if idle {
                    while registering.steal().is_retry() {}
                }
                // Ordering: SeqCst, a plain start/stop flag of this program.
                started.fetch_add(1, SeqCst);
                if idle {
                    // Ordering: Relaxed, as in the loop below.
                    while !stop.load(Relaxed) {
                        std::thread::sleep(Duration::from_millis(1));
                    }
                    return tally;
                }
                // Ordering: SeqCst, a plain start/stop flag of this program.
                while !go.load(SeqCst) {
                    std::hint::spin_loop();
                }
                // Ordering: Relaxed: the flag only ends the loop; `join`
                // hands the tally over.
                while !stop.load(Relaxed) {
                    match stealer.steal() {
                        Steal::Success(task) => {
                            black_box(task);
                            tally.stolen += 1;
                        }
                        Steal::Retry => tally.retries += 1,
                        Steal::Empty => tally.empties += 1,
                    }
                }
                tally
            })
        })
        .collect();

    // Ordering: SeqCst, as in the thieves: every thief is running (and
    // spinning on `go`) before the owner starts.
    while started.load(SeqCst) < thieves as u64 {
        std::thread::yield_now();
    }
    // Ordering: Relaxed: statistics (the stalled thief's setup is excluded).
    let made_before = BUFFERS_MADE.load(Relaxed);
    // Ordering: Relaxed, as above; only this thread allocates owner buffers now.
    PEAK_BUFFERS.store(LIVE_BUFFERS.load(Relaxed), Relaxed);
    let start = Instant::now();
    // Ordering: SeqCst, as in the thieves.
    go.store(true, SeqCst);
    let done = run_owner(&worker, operations);
    let elapsed = start.elapsed();
    // Ordering: SeqCst, as above.
    stop.store(true, SeqCst);
    let mut total = Tally::default();
    for handle in handles {
        let tally = handle.join().expect("a thief panicked");
        total.stolen += tally.stolen;
        total.retries += tally.retries;
        total.empties += tally.empties;
    }
    // Ordering: Relaxed: every thread that changes them is done or stalled.
    let peak_buffers = PEAK_BUFFERS.load(Relaxed);
    // Ordering: Relaxed, as above.
    let live_buffers_at_end = LIVE_BUFFERS.load(Relaxed);
    // Ordering: Relaxed, as above.
    let buffer_changes = BUFFERS_MADE.load(Relaxed) - made_before;
    // Ordering: Relaxed, as above.
    let peak_bytes = PEAK_BYTES.load(Relaxed);

    let stalled = stalled_thief.map(|thread| {
        // Ordering: SeqCst, as in `Counting::alloc`.
        RELEASE.store(true, SeqCst);
        thread.join().expect("the stalled thief panicked")
    });

    let seconds = elapsed.as_secs_f64();
    print!(
        "thieves={thieves} stall={stall} owner_ops={done} seconds={seconds:.3} \
         owner_ops_per_s={:.0} steals_per_s={:.0} attempts_per_s={:.0} stolen={} retries={} \
         empties={} buffer_changes={buffer_changes} peak_live_owner_buffers={peak_buffers} \
         max_retired_not_freed={} live_owner_buffers_at_end={live_buffers_at_end} \
         peak_heap_bytes={peak_bytes}",
        done as f64 / seconds,
        total.stolen as f64 / seconds,
        (total.stolen + total.retries + total.empties) as f64 / seconds,
        total.stolen,
        total.retries,
        total.empties,
        peak_buffers.saturating_sub(2),
    );
    if let Some((stole, moved)) = stalled {
        print!(" stalled_thief_stole={stole} stalled_thief_moved={moved}");
    }
    println!();
}
