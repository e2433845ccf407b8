//! The injector attacked through its public API, as a hostile user would:
//! many more threads than cores mixing every operation, heap, zero-sized and
//! large tasks, handles moved between threads and dropped in every order
//! (also from a thread-local destructor), panicking `Drop`s, batch steals
//! into full and nearly full bounded workers, `len`/`is_empty` bounds under
//! concurrency, and memory given back while the queue lives and when it
//! goes (a counting allocator). Bounded run times, smaller under miri; no
//! wall-clock assertion.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::collections::HashSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Barrier, Mutex};
use std::thread;

use chase_lev::{Injector, Steal, Worker};

/// Counts the bytes each thread has allocated and not yet freed (a free
/// counts on the thread that frees), so that a single-threaded test can
/// measure its own memory while other tests run.
struct Counting;

thread_local! {
    static LIVE_BYTES: Cell<isize> = const { Cell::new(0) };
}

fn count(bytes: isize) {
    let _ = LIVE_BYTES.try_with(|live| live.set(live.get() + bytes));
}

// SAFETY: forwards to the system allocator; the counting touches only a
// const-initialised thread-local `Cell`, which never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        // SAFETY: forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        // SAFETY: forwarded.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        // SAFETY: forwarded.
        unsafe { System.dealloc(pointer, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn live_bytes() -> isize {
    LIVE_BYTES.with(Cell::get)
}

const THREADS: usize = if cfg!(miri) { 4 } else { 16 };
const OPERATIONS: usize = if cfg!(miri) { 40 } else { 4_000 };

/// A small deterministic generator per thread.
struct Rng(u64);

impl Rng {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound
    }
}

/// The destinations a hostile thread uses, every flavour and bound.
fn destination(kind: u64) -> Worker<Box<u64>> {
    match kind % 6 {
        0 => Worker::new_lifo(),
        1 => Worker::new_fifo(),
        2 => Worker::new_lifo_bounded(3),
        3 => Worker::new_fifo_bounded(1),
        4 => Worker::new_lifo_with_capacity(1),
        _ => Worker::new_fifo_bounded(2),
    }
}

#[test]
fn many_more_threads_than_cores_mixing_every_operation_lose_and_duplicate_nothing() {
    let injector = Injector::new();
    let next_task = AtomicUsize::new(0);
    let taken = Mutex::new(Vec::new());
    let start = Barrier::new(THREADS);
    thread::scope(|scope| {
        for thread in 0..THREADS {
            let (injector, next_task, taken, start) = (&injector, &next_task, &taken, &start);
            scope.spawn(move || {
                let mut rng = Rng(0x2545_F491_4F6C_DD1D ^ (thread as u64 + 1));
                let mine = destination(thread as u64);
                let mut got = Vec::new();
                start.wait();
                for _ in 0..OPERATIONS {
                    match rng.below(9) {
                        0..=2 => {
                            let task = next_task.fetch_add(1, SeqCst) as u64;
                            injector.push(Box::new(task));
                        }
                        3 => got.extend(injector.steal().success()),
                        4 => {
                            let _ = injector.steal_batch(&mine);
                        }
                        5 => got.extend(injector.steal_batch_and_pop(&mine).success()),
                        6 => {
                            let limit = [1, 2, usize::MAX][rng.below(3) as usize];
                            let _ = injector.steal_batch_with_limit(&mine, limit);
                        }
                        7 => {
                            let limit = [1, 3, usize::MAX][rng.below(3) as usize];
                            got.extend(
                                injector
                                    .steal_batch_with_limit_and_pop(&mine, limit)
                                    .success(),
                            );
                        }
                        _ => {
                            let _ = (injector.len(), injector.is_empty());
                            got.extend(mine.pop());
                        }
                    }
                }
                got.extend(std::iter::from_fn(|| mine.pop()));
                taken
                    .lock()
                    .unwrap()
                    .extend(got.into_iter().map(|task| *task));
            });
        }
    });
    let mut taken = taken.into_inner().unwrap();
    loop {
        match injector.steal() {
            Steal::Success(task) => taken.push(*task),
            Steal::Retry => continue,
            Steal::Empty => break,
        }
    }
    assert!(injector.is_empty());
    let pushed = next_task.load(SeqCst);
    let unique: HashSet<u64> = taken.iter().copied().collect();
    assert_eq!(unique.len(), taken.len(), "a task came out twice");
    assert_eq!(taken.len(), pushed, "a task was lost");
}

#[test]
fn len_never_exceeds_the_pushes_begun_minus_the_steals_finished() {
    let injector = Injector::new();
    let pushes_begun = AtomicUsize::new(0);
    let steals_finished = AtomicUsize::new(0);
    thread::scope(|scope| {
        for pusher in 0..2 {
            let (injector, pushes_begun) = (&injector, &pushes_begun);
            scope.spawn(move || {
                for task in 0..OPERATIONS * 4 {
                    pushes_begun.fetch_add(1, SeqCst);
                    injector.push(pusher * OPERATIONS * 4 + task);
                }
            });
        }
        for _ in 0..2 {
            let (injector, steals_finished) = (&injector, &steals_finished);
            scope.spawn(move || {
                let mine = Worker::new_fifo();
                for _ in 0..OPERATIONS * 4 {
                    if injector.steal_batch(&mine).is_success() {
                        let moved = std::iter::from_fn(|| mine.pop()).count();
                        steals_finished.fetch_add(moved, SeqCst);
                    }
                }
            });
        }
        for _ in 0..2 {
            let (injector, pushes_begun, steals_finished) =
                (&injector, &pushes_begun, &steals_finished);
            scope.spawn(move || {
                for _ in 0..OPERATIONS * 4 {
                    let finished_before = steals_finished.load(SeqCst);
                    let len = injector.len();
                    let begun_after = pushes_begun.load(SeqCst);
                    assert!(
                        len <= begun_after - finished_before,
                        "len {len} > {begun_after} pushes begun - {finished_before} tasks stolen"
                    );
                }
            });
        }
    });
}

#[test]
fn len_and_is_empty_count_every_finished_push_while_pushes_never_stop() {
    // `len` gives up waiting for a quiet tail after a few tries (it must end
    // whatever the pushes do); what it returns then must still count every
    // task in the queue: with no thief, every push finished before the call.
    let injector = Injector::new();
    let pushes_finished = AtomicUsize::new(0);
    let stop = std::sync::atomic::AtomicBool::new(false);
    thread::scope(|scope| {
        for _ in 0..3 {
            let (injector, pushes_finished, stop) = (&injector, &pushes_finished, &stop);
            scope.spawn(move || {
                while !stop.load(SeqCst) {
                    injector.push(0u8);
                    pushes_finished.fetch_add(1, SeqCst);
                }
            });
        }
        while pushes_finished.load(SeqCst) < OPERATIONS {
            thread::yield_now();
        }
        for _ in 0..OPERATIONS * 25 {
            let finished_before = pushes_finished.load(SeqCst);
            let len = injector.len();
            assert!(
                len >= finished_before,
                "len {len} < {finished_before} pushes finished before the call, none stolen"
            );
            assert!(
                finished_before == 0 || !injector.is_empty(),
                "is_empty with {finished_before} tasks pushed and none stolen"
            );
        }
        stop.store(true, SeqCst);
    });
}

#[test]
fn zero_sized_and_large_tasks_come_out_intact_under_concurrency() {
    let zero = Injector::new();
    let large = Injector::new();
    let per_thread = if cfg!(miri) { 20 } else { 500 };
    let (zero_out, large_out) = (AtomicUsize::new(0), AtomicUsize::new(0));
    thread::scope(|scope| {
        let (zero, large, zero_out, large_out) = (&zero, &large, &zero_out, &large_out);
        for thread in 0..4u64 {
            scope.spawn(move || {
                for task in 0..per_thread {
                    zero.push(());
                    large.push(Box::new([thread * 1_000_000 + task; 256]));
                }
            });
            scope.spawn(move || {
                for _ in 0..per_thread {
                    if zero.steal().is_success() {
                        zero_out.fetch_add(1, SeqCst);
                    }
                    if let Steal::Success(task) = large.steal() {
                        assert!(task.iter().all(|word| *word == task[0]), "a torn task");
                        large_out.fetch_add(1, SeqCst);
                    }
                }
            });
        }
    });
    let zero_left = std::iter::from_fn(|| zero.steal().success()).count();
    let large_left = std::iter::from_fn(|| large.steal().success()).count();
    assert_eq!(zero_out.load(SeqCst) + zero_left, 4 * per_thread as usize);
    assert_eq!(large_out.load(SeqCst) + large_left, 4 * per_thread as usize);
}

/// A task that counts its drops, and may panic in `Drop`.
struct Counted {
    drops: Arc<AtomicUsize>,
    panics: bool,
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.drops.fetch_add(1, SeqCst);
        if self.panics {
            panic!("a hostile task's Drop panics");
        }
    }
}

fn counted(drops: &Arc<AtomicUsize>, panics: bool) -> Counted {
    Counted {
        drops: Arc::clone(drops),
        panics,
    }
}

#[test]
fn handles_moved_between_threads_and_dropped_in_every_order_drop_each_task_once() {
    for order in 0..if cfg!(miri) { 2 } else { 24 } {
        let drops = Arc::new(AtomicUsize::new(0));
        let injector = Arc::new(Injector::new());
        let handles: Vec<_> = (0..4)
            .map(|thread| {
                let (injector, drops) = (Arc::clone(&injector), Arc::clone(&drops));
                thread::spawn(move || {
                    for _ in 0..70 {
                        injector.push(counted(&drops, false));
                    }
                    drop(injector.steal());
                    // Each thread hands its handle back; the order of the
                    // drops below is the test's.
                    let _ = thread;
                    injector
                })
            })
            .collect();
        let mut returned: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        drop(injector);
        // Drop the four handles in a permutation chosen by `order`, each on
        // its own thread.
        let mut rest = order;
        while !returned.is_empty() {
            let pick = rest % returned.len();
            rest /= returned.len().max(1);
            let handle = returned.remove(pick);
            thread::spawn(move || drop(handle)).join().unwrap();
        }
        assert_eq!(drops.load(SeqCst), 4 * 70, "order {order}");
    }
}

#[test]
fn an_injector_dropped_by_a_thread_local_destructor_drops_its_tasks_once() {
    thread_local! {
        static HELD: std::cell::RefCell<Option<Arc<Injector<Counted>>>> =
            const { std::cell::RefCell::new(None) };
    }
    let drops = Arc::new(AtomicUsize::new(0));
    let injector = Arc::new(Injector::new());
    for _ in 0..100 {
        injector.push(counted(&drops, false));
    }
    let held = Arc::clone(&injector);
    drop(injector);
    thread::spawn(move || {
        HELD.with(|slot| *slot.borrow_mut() = Some(held));
        // The thread ends with the last handle in its thread-local.
    })
    .join()
    .unwrap();
    assert_eq!(drops.load(SeqCst), 100);
}

#[test]
fn a_task_whose_drop_panics_in_a_stealers_hands_leaves_the_injector_working() {
    let drops = Arc::new(AtomicUsize::new(0));
    let injector = Arc::new(Injector::new());
    for index in 0..200 {
        injector.push(counted(&drops, index % 50 == 7));
    }
    let workers: Vec<_> = (0..4)
        .map(|_| {
            let injector = Arc::clone(&injector);
            thread::spawn(move || {
                let mine = Worker::new_lifo();
                loop {
                    let stolen = catch_unwind(AssertUnwindSafe(|| {
                        match injector.steal_batch_and_pop(&mine) {
                            Steal::Success(task) => {
                                drop(task);
                                while let Some(task) = mine.pop() {
                                    drop(task);
                                }
                                true
                            }
                            Steal::Retry => true,
                            Steal::Empty => false,
                        }
                    }));
                    // A panic (`Err`) or a success: go on.
                    if let Ok(false) = stolen {
                        break;
                    }
                }
                // Tasks left in `mine` after a panic are dropped with it.
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    assert!(injector.is_empty());
    drop(injector);
    assert_eq!(drops.load(SeqCst), 200);
}

#[test]
fn batch_steals_into_full_and_nearly_full_bounded_workers_lose_nothing() {
    let injector = Injector::new();
    let total = if cfg!(miri) { 60 } else { 3_000 };
    (0..total).for_each(|task| injector.push(task));
    let out = Mutex::new(Vec::new());
    thread::scope(|scope| {
        for thread in 0..4 {
            let (injector, out) = (&injector, &out);
            scope.spawn(move || {
                let bound = 1 + thread % 3;
                let mine = if thread % 2 == 0 {
                    Worker::new_fifo_bounded(bound)
                } else {
                    Worker::new_lifo_bounded(bound)
                };
                let mut got = Vec::new();
                // Keep the worker full or nearly full: pop only every third
                // round.
                for round in 0.. {
                    let attempt = match round % 3 {
                        0 => injector.steal_batch(&mine).is_empty(),
                        1 => match injector.steal_batch_with_limit_and_pop(&mine, usize::MAX) {
                            Steal::Success(task) => {
                                got.push(task);
                                false
                            }
                            Steal::Empty => true,
                            Steal::Retry => false,
                        },
                        _ => {
                            got.extend(mine.pop());
                            false
                        }
                    };
                    assert!(mine.len() <= bound);
                    if attempt && injector.is_empty() {
                        break;
                    }
                }
                got.extend(std::iter::from_fn(|| mine.pop()));
                out.lock().unwrap().extend(got);
            });
        }
    });
    let mut out = out.into_inner().unwrap();
    out.sort_unstable();
    assert_eq!(out, (0..total).collect::<Vec<_>>());
}

#[test]
fn memory_goes_back_while_the_injector_lives_and_all_of_it_when_it_drops() {
    let before = live_bytes();
    let injector = Injector::new();
    let rounds = if cfg!(miri) { 3 } else { 50 };
    let mut peak_after_drain = 0;
    for _ in 0..rounds {
        for task in 0..1_000u64 {
            injector.push(task);
        }
        while injector.steal().is_success() {}
        peak_after_drain = peak_after_drain.max(live_bytes() - before);
    }
    // An empty injector keeps at most its current block (and one spare
    // while a push installs the next): 63 slots of 16 bytes plus a header.
    let one_block = 64 * 16 + 64;
    assert!(
        peak_after_drain <= 2 * one_block,
        "an empty injector holds {peak_after_drain} bytes after 1000-task rounds"
    );
    drop(injector);
    assert_eq!(
        live_bytes(),
        before,
        "the injector's drop left memory allocated"
    );
}

#[test]
fn stealers_racing_over_a_full_queue_take_each_task_exactly_once() {
    let total = if cfg!(miri) { 100 } else { 200_000 };
    let injector = Injector::new();
    (0..total).for_each(|task| injector.push(task));
    let start = Barrier::new(THREADS);
    let taken = Mutex::new(Vec::new());
    thread::scope(|scope| {
        for thread in 0..THREADS {
            let (injector, start, taken) = (&injector, &start, &taken);
            scope.spawn(move || {
                let mine = Worker::new_fifo();
                let mut got = Vec::new();
                start.wait();
                loop {
                    let attempt = if thread % 2 == 0 {
                        injector.steal()
                    } else {
                        injector.steal_batch_and_pop(&mine)
                    };
                    match attempt {
                        Steal::Success(task) => got.push(task),
                        Steal::Retry => {}
                        Steal::Empty => break,
                    }
                    got.extend(std::iter::from_fn(|| mine.pop()));
                }
                taken.lock().unwrap().extend(got);
            });
        }
    });
    let mut taken = taken.into_inner().unwrap();
    taken.sort_unstable();
    let before = taken.len();
    taken.dedup();
    assert_eq!(
        before,
        taken.len(),
        "{} tasks came out twice",
        before - taken.len()
    );
    assert_eq!(taken, (0..total).collect::<Vec<_>>(), "a task was lost");
}
