//! What a hostile user tries against the public API: far more
//! threads than cores, every operation mixed, every flavour with and without
//! a bound, heap, zero-sized and large tasks, handles moved between threads
//! and dropped in every order (also from thread-local destructors),
//! panicking destructors, batch steals into full destinations and into the
//! source itself, capacity edges, and what `len` may report meanwhile.
//!
//! Each test states one property of the documented API, not of the
//! implementation. Sizes shrink under miri. The memory a deque returns is
//! checked in `tests/memory.rs`, which has a counting allocator of its own.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Barrier};
use std::thread;

use chase_lev::{Steal, Stealer, Worker};

/// Threads per attack: the machines this runs on have 2 to 8 cores.
const THREADS: usize = if cfg!(miri) { 3 } else { 12 };
/// Tasks per attack.
const TASKS: usize = if cfg!(miri) { 24 } else { 20_000 };
/// Owner rounds in the `len` attacks.
const ROUNDS: usize = if cfg!(miri) { 12 } else { 30_000 };

/// Attempts without progress after which a test decides a task was lost
/// (instead of waiting for it forever).
const PATIENCE: usize = if cfg!(miri) { 20_000 } else { 2_000_000 };

/// Keeps a loop that waits for tasks from spinning forever when a task has
/// been lost: panics after `PATIENCE` calls that saw no progress.
struct Watchdog {
    last: usize,
    idle: usize,
}

impl Watchdog {
    fn new() -> Watchdog {
        Watchdog {
            last: usize::MAX,
            idle: 0,
        }
    }

    fn check(&mut self, progress: usize, what: &str) {
        if progress != self.last {
            (self.last, self.idle) = (progress, 0);
            return;
        }
        self.idle += 1;
        if self.idle % 64 == 0 {
            thread::yield_now(); // let a descheduled holder of tasks run
        }
        assert!(
            self.idle < PATIENCE,
            "no progress in {PATIENCE} attempts ({what}: {progress}): a task was lost"
        );
    }
}

/// Sets a flag when dropped, also while a failed assertion unwinds, so that
/// the threads waiting for it stop instead of spinning forever.
struct SetOnDrop<'a>(&'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, SeqCst);
    }
}

// ------------------------------------------------------------ the deques --

/// Every way to make a worker: two flavours, growable or bounded.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Lifo,
    Fifo,
    LifoWithCapacity(usize),
    FifoWithCapacity(usize),
    LifoBounded(usize),
    FifoBounded(usize),
}

impl Kind {
    /// Every flavour, growable from the default size, growable from a tiny
    /// capacity, and bounded (the bound not a power of two).
    const ALL: [Kind; 6] = [
        Kind::Lifo,
        Kind::Fifo,
        Kind::LifoWithCapacity(1),
        Kind::FifoWithCapacity(2),
        Kind::LifoBounded(5),
        Kind::FifoBounded(3),
    ];

    /// The kinds each test goes through: all of them, or under miri (where
    /// every attack is a thousand times slower) one growable LIFO, one
    /// growable FIFO from a tiny capacity and one bounded LIFO.
    fn tested() -> &'static [Kind] {
        if cfg!(miri) {
            &[Kind::Lifo, Kind::FifoWithCapacity(2), Kind::LifoBounded(5)]
        } else {
            &Kind::ALL
        }
    }

    fn make<T>(self) -> Worker<T> {
        match self {
            Kind::Lifo => Worker::new_lifo(),
            Kind::Fifo => Worker::new_fifo(),
            Kind::LifoWithCapacity(capacity) => Worker::new_lifo_with_capacity(capacity),
            Kind::FifoWithCapacity(capacity) => Worker::new_fifo_with_capacity(capacity),
            Kind::LifoBounded(bound) => Worker::new_lifo_bounded(bound),
            Kind::FifoBounded(bound) => Worker::new_fifo_bounded(bound),
        }
    }

    fn bound(self) -> Option<usize> {
        match self {
            Kind::LifoBounded(bound) | Kind::FifoBounded(bound) => Some(bound),
            _ => None,
        }
    }

    fn is_fifo(self) -> bool {
        matches!(
            self,
            Kind::Fifo | Kind::FifoWithCapacity(_) | Kind::FifoBounded(_)
        )
    }
}

// ---------------------------------------------------------- `len` bounds --

/// The owner keeps `floor` tasks it never pops and pushes and pops one more
/// in a loop, so the deque always holds `floor` or `floor + 1` tasks (no
/// thief takes any). `len` and `is_empty` on every stealer, called from many
/// threads at once, must report one of those lengths: a length "at one
/// moment during the call". (With a floor of 0 even the LIFO owner's pops
/// move `top`, by their last-task CAS.)
fn len_stays_between_floor_and_floor_plus_one(kind: Kind, floor: usize) {
    let worker = kind.make::<usize>();
    (0..floor).for_each(|task| worker.push(task));
    let stealer = worker.stealer();
    let done = AtomicBool::new(false);
    thread::scope(|scope| {
        for _ in 0..THREADS {
            scope.spawn(|| {
                while !done.load(SeqCst) {
                    let len = stealer.len();
                    assert!(
                        (floor..=floor + 1).contains(&len),
                        "{kind:?}: Stealer::len() = {len}, but the deque always held {floor} or {} tasks",
                        floor + 1
                    );
                    if floor > 0 {
                        assert!(!stealer.is_empty(), "{kind:?}: is_empty() with {floor}+ tasks");
                    }
                }
            });
        }
        // Stops the observers also if an assertion below fails.
        let _stop = SetOnDrop(&done);
        for round in 0..ROUNDS {
            assert_eq!(worker.try_push(floor + round), Ok(()));
            assert_eq!(worker.len(), floor + 1, "{kind:?}: Worker::len()");
            assert!(worker.pop().is_some());
            assert_eq!(worker.len(), floor, "{kind:?}: Worker::len()");
        }
    });
    assert_eq!(worker.len(), floor);
}

#[test]
fn stealer_len_reports_a_length_the_lifo_deque_really_had() {
    for floor in [0, 3] {
        len_stays_between_floor_and_floor_plus_one(Kind::LifoBounded(4), floor);
        len_stays_between_floor_and_floor_plus_one(Kind::Lifo, floor);
    }
}

#[test]
fn stealer_len_reports_a_length_the_fifo_deque_really_had() {
    for floor in [0, 3] {
        len_stays_between_floor_and_floor_plus_one(Kind::FifoBounded(4), floor);
        len_stays_between_floor_and_floor_plus_one(Kind::Fifo, floor);
    }
}

// ------------------------------------------------------ capacity and bounds --

// Not under miri, which stops the whole run at an allocation larger than
// the host could give (resource exhaustion) instead of returning null.
#[cfg(not(miri))]
#[test]
#[should_panic(expected = "capacity overflow")]
fn a_bounded_lifo_worker_too_large_to_allocate_panics() {
    let _ = Worker::<u8>::new_lifo_bounded(1 << 62);
}

// Not under miri, which stops the whole run at an allocation larger than
// the host could give (resource exhaustion) instead of returning null.
#[cfg(not(miri))]
#[test]
#[should_panic(expected = "capacity overflow")]
fn a_bounded_fifo_worker_too_large_to_allocate_panics() {
    let _ = Worker::<u64>::new_fifo_bounded(1 << 48);
}

// Not under miri, which stops the whole run at an allocation larger than
// the host could give (resource exhaustion) instead of returning null.
#[cfg(not(miri))]
#[test]
#[should_panic(expected = "capacity overflow")]
fn a_growable_lifo_worker_too_large_to_allocate_panics() {
    let _ = Worker::<u8>::new_lifo_with_capacity(1 << 62);
}

// Not under miri, which stops the whole run at an allocation larger than
// the host could give (resource exhaustion) instead of returning null.
#[cfg(not(miri))]
#[test]
#[should_panic(expected = "capacity overflow")]
fn a_growable_fifo_worker_too_large_to_allocate_panics() {
    let _ = Worker::<[u64; 4]>::new_fifo_with_capacity(1 << 50);
}

#[test]
#[should_panic(expected = "capacity overflow")]
fn a_capacity_beyond_the_index_space_panics() {
    let _ = Worker::<()>::new_lifo_with_capacity(usize::MAX);
}

#[test]
fn a_zero_sized_task_type_allows_the_largest_bound() {
    // No memory is needed, whatever the bound.
    let worker = Worker::<()>::new_fifo_bounded(1 << 62);
    assert_eq!(worker.bound(), Some(1 << 62));
    (0..TASKS).for_each(|_| worker.push(()));
    assert_eq!(worker.len(), TASKS);
    assert_eq!(worker.stealer().len(), TASKS);
}

/// A heap task whose identity survives a round trip (a `Box` address).
fn boxed(id: usize) -> Box<usize> {
    Box::new(id)
}

#[test]
fn a_full_bounded_worker_hands_back_the_very_task_it_was_given() {
    let bounds: &[usize] = if cfg!(miri) {
        &[1, 3]
    } else {
        &[1, 2, 3, 5, 7, 8]
    };
    for &bound in bounds {
        for kind in [Kind::LifoBounded(bound), Kind::FifoBounded(bound)] {
            let worker = kind.make::<Box<usize>>();
            // Many laps: the buffer is replaced every `capacity` pushes.
            for lap in 0..if cfg!(miri) { 3 } else { 20 } {
                (0..bound).for_each(|task| worker.try_push(boxed(task)).unwrap());
                assert_eq!(worker.len(), bound, "{kind:?} lap {lap}");
                let extra = boxed(usize::MAX);
                let address: *const usize = &*extra;
                let back = worker.try_push(extra).expect_err("full");
                assert_eq!(
                    &*back as *const usize, address,
                    "{kind:?}: not the same task"
                );
                let mut popped: Vec<usize> =
                    std::iter::from_fn(|| worker.pop()).map(|t| *t).collect();
                if !kind.is_fifo() {
                    popped.reverse();
                }
                assert_eq!(popped, (0..bound).collect::<Vec<_>>(), "{kind:?} lap {lap}");
            }
        }
    }
}

#[test]
fn push_on_a_full_bounded_worker_drops_the_rejected_task_once_and_keeps_the_rest() {
    let drops = Arc::new(AtomicUsize::new(0));
    let worker = Worker::new_lifo_bounded(2);
    worker.push(Counted::new(1, &drops));
    worker.push(Counted::new(2, &drops));
    let rejected = catch_unwind(AssertUnwindSafe(|| worker.push(Counted::new(3, &drops))));
    assert!(rejected.is_err(), "push on a full bounded worker panics");
    assert_eq!(drops.load(SeqCst), 1, "the rejected task is dropped, once");
    assert_eq!(worker.len(), 2);
    assert_eq!(worker.pop().map(|task| task.id), Some(2));
    assert_eq!(worker.pop().map(|task| task.id), Some(1));
    assert_eq!(drops.load(SeqCst), 3);
}

#[test]
fn a_growable_worker_from_capacity_zero_or_one_keeps_every_task_in_order() {
    for kind in [
        Kind::LifoWithCapacity(0),
        Kind::LifoWithCapacity(1),
        Kind::FifoWithCapacity(0),
        Kind::FifoWithCapacity(1),
    ] {
        let worker = kind.make::<usize>();
        // Grow, shrink back, grow again: every resize moves the tasks.
        for round in 0..3 {
            (0..TASKS).for_each(|task| worker.push(task));
            let popped: Vec<usize> = std::iter::from_fn(|| worker.pop()).collect();
            let mut expected: Vec<usize> = (0..TASKS).collect();
            if !kind.is_fifo() {
                expected.reverse();
            }
            assert_eq!(popped, expected, "{kind:?} round {round}");
        }
    }
}

// ---------------------------------------------------------- task types --

/// Counts its drops in a shared counter: a task dropped twice, or never,
/// shows up in the count. Panics when dropped if its id is `PANICS`.
struct Counted {
    id: usize,
    drops: Arc<AtomicUsize>,
}

const PANICS: usize = usize::MAX - 1;

impl Counted {
    fn new(id: usize, drops: &Arc<AtomicUsize>) -> Counted {
        Counted {
            id,
            drops: Arc::clone(drops),
        }
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.drops.fetch_add(1, SeqCst);
        if self.id == PANICS && !thread::panicking() {
            panic!("a task's destructor panics");
        }
    }
}

/// What the storm moves around: built from an id, and checked for damage
/// (a torn copy, a slot read before it was written) when taken.
trait Task: Send + 'static {
    fn make(id: usize, drops: &Arc<AtomicUsize>) -> Self;
    /// The id, or `None` for a type that has room for none (zero-sized).
    fn id(&self) -> Option<usize>;
}

impl Task for Counted {
    fn make(id: usize, drops: &Arc<AtomicUsize>) -> Self {
        Counted::new(id, drops)
    }
    fn id(&self) -> Option<usize> {
        Some(self.id)
    }
}

/// A large task: 512 bytes that must all agree.
struct Large {
    words: [u64; 63],
    counted: Counted,
}

impl Task for Large {
    fn make(id: usize, drops: &Arc<AtomicUsize>) -> Self {
        Large {
            words: [id as u64; 63],
            counted: Counted::new(id, drops),
        }
    }
    fn id(&self) -> Option<usize> {
        let id = self.counted.id;
        assert!(
            self.words.iter().all(|&word| word == id as u64),
            "a torn task"
        );
        Some(id)
    }
}

/// A zero-sized task with a destructor: the deque stores none of it, but
/// must still drop each one exactly once.
struct Zst;

static ZST_DROPS: AtomicUsize = AtomicUsize::new(0);

impl Drop for Zst {
    fn drop(&mut self) {
        ZST_DROPS.fetch_add(1, SeqCst);
    }
}

impl Task for Zst {
    fn make(_: usize, _: &Arc<AtomicUsize>) -> Self {
        Zst
    }
    fn id(&self) -> Option<usize> {
        None
    }
}

// --------------------------------------------------------------- storms --

/// Every way a thief can take tasks, in the order a thief cycles through them.
const THEFTS: usize = 7;

/// A thief's attempt number `attempt` on `stealer`, by one of the `THEFTS`
/// ways; every task it ends up holding goes to `take` (a batch steal's tasks
/// go into `mine` first, which the caller drains). Returns whether it stole.
fn steal_somehow<T>(
    stealer: &Stealer<T>,
    mine: &Worker<T>,
    attempt: usize,
    take: &mut dyn FnMut(T),
) -> bool {
    let mut took = |steal: Steal<T>| match steal {
        Steal::Success(task) => {
            take(task);
            true
        }
        Steal::Empty | Steal::Retry => false,
    };
    match attempt % THEFTS {
        0 => took(stealer.steal()),
        1 => stealer.steal_batch(mine).is_success(),
        2 => stealer
            .steal_batch_with_limit(mine, 1 + attempt % 5)
            .is_success(),
        3 => took(stealer.steal_batch_and_pop(mine)),
        4 => took(stealer.steal_batch_with_limit_and_pop(mine, 1 + attempt % 4)),
        5 => {
            // A clone, used once and dropped.
            let clone = stealer.clone();
            let _ = (clone.len(), clone.is_empty());
            took(clone.steal())
        }
        _ => {
            // Into a bounded destination of one: first with room for one,
            // then full, where the batch must hand its task back and move
            // nothing.
            let one = Worker::new_lifo_bounded(1);
            let first = stealer.steal_batch_with_limit(&one, 1).is_success();
            let second = if one.len() == 1 {
                let popped = stealer.steal_batch_and_pop(&one);
                assert_eq!(
                    one.len(),
                    1,
                    "a batch steal overfilled a full bounded worker"
                );
                took(popped)
            } else {
                false
            };
            while let Some(task) = one.pop() {
                take(task);
            }
            first || second
        }
    }
}

/// One owner, moved into its own thread, pushes `TASKS` tasks (popping now
/// and then) into a `kind` worker and drops its `Worker` when done, while
/// `THREADS` thieves take tasks from it and from one another, each into a
/// destination of its own (of every kind in turn), by every kind of steal.
/// Every task must come out exactly once and intact (the ids returned);
/// `len` must never exceed a bounded deque's bound.
fn storm<T: Task>(kind: Kind, drops: &Arc<AtomicUsize>) -> Vec<Option<usize>> {
    let taken_total = AtomicUsize::new(0);
    let owner_done = AtomicBool::new(false);
    let worker = kind.make::<T>();
    let victim = worker.stealer();
    let dests: Vec<Worker<T>> = (0..THREADS)
        .map(|thief| Kind::ALL[thief % Kind::ALL.len()].make())
        .collect();
    let dest_stealers: Vec<Stealer<T>> = dests.iter().map(Worker::stealer).collect();
    let start = Barrier::new(THREADS + 1);
    let mut taken: Vec<Option<usize>> = Vec::new();
    thread::scope(|scope| {
        let owner = scope.spawn(|| {
            let worker = worker; // moved: the owner role changes threads
            let mut mine = Vec::new();
            let mut take = |task: T| {
                mine.push(task.id());
                drop(task);
                taken_total.fetch_add(1, SeqCst);
            };
            // Tells the thieves the owner is done, also if it fails.
            let done = SetOnDrop(&owner_done);
            start.wait();
            for id in 0..TASKS {
                let mut task = T::make(id, drops);
                while let Err(back) = worker.try_push(task) {
                    task = back; // full: make room
                    if let Some(popped) = worker.pop() {
                        take(popped);
                    }
                }
                if id % 3 == 0 {
                    if let Some(popped) = worker.pop() {
                        take(popped);
                    }
                }
                if let Some(bound) = kind.bound() {
                    assert!(
                        worker.len() <= bound,
                        "{kind:?}: Worker::len over the bound"
                    );
                }
            }
            drop(done);
            mine // and the Worker drops here, tasks possibly still in it
        });
        let thieves: Vec<_> = dests
            .into_iter()
            .enumerate()
            .map(|(thief, mine)| {
                let (victim, dest_stealers) = (&victim, &dest_stealers);
                let (start, taken_total, owner_done) = (&start, &taken_total, &owner_done);
                scope.spawn(move || {
                    let mine = &mine;
                    let mut got = Vec::new();
                    let mut take = |task: T| {
                        got.push(task.id());
                        drop(task);
                        taken_total.fetch_add(1, SeqCst);
                    };
                    start.wait();
                    let mut attempt = thief;
                    let mut watchdog = Watchdog::new();
                    while taken_total.load(SeqCst) < TASKS {
                        attempt += 1;
                        if owner_done.load(SeqCst) {
                            watchdog.check(taken_total.load(SeqCst), "tasks taken");
                        }
                        // Mostly the owner's deque; every fourth attempt
                        // another thief's destination, or its own.
                        let from = if attempt % 4 == 0 {
                            &dest_stealers[(attempt / 4) % THREADS]
                        } else {
                            victim
                        };
                        if let Some(bound) = kind.bound() {
                            let len = victim.len();
                            assert!(
                                len <= bound,
                                "{kind:?}: Stealer::len() = {len} over the bound"
                            );
                        }
                        steal_somehow(from, mine, attempt, &mut take);
                        // Keep a few tasks for others to steal until the
                        // owner is done, then hand everything in.
                        let keep = if owner_done.load(SeqCst) { 0 } else { 2 };
                        while mine.len() > keep {
                            match mine.pop() {
                                Some(task) => take(task),
                                None => break, // stolen meanwhile
                            }
                        }
                        if attempt % 64 == 0 {
                            thread::yield_now();
                        }
                    }
                    assert!(mine.is_empty(), "{kind:?}: a destination kept tasks");
                    got // and `mine` drops here
                })
            })
            .collect();
        taken.extend(owner.join().unwrap());
        for thief in thieves {
            taken.extend(thief.join().unwrap());
        }
    });
    assert!(victim.is_empty(), "{kind:?}: the deque kept tasks");
    assert_eq!(taken.len(), TASKS, "{kind:?}: tasks taken in all");
    taken
}

/// The storm for every kind of deque, with a task type that has an id.
fn storm_every_kind_checking_ids<T: Task>() {
    for kind in Kind::tested().iter().copied() {
        let drops = Arc::new(AtomicUsize::new(0));
        let mut ids: Vec<usize> = storm::<T>(kind, &drops)
            .into_iter()
            .map(|id| id.expect("an id"))
            .collect();
        ids.sort_unstable();
        let duplicated = ids.windows(2).find(|pair| pair[0] == pair[1]);
        assert_eq!(duplicated, None, "{kind:?}: a task taken twice");
        assert_eq!(
            ids,
            (0..TASKS).collect::<Vec<_>>(),
            "{kind:?}: tasks lost or invented"
        );
        assert_eq!(
            drops.load(SeqCst),
            TASKS,
            "{kind:?}: each task dropped once"
        );
    }
}

#[test]
fn every_heap_task_comes_out_exactly_once_under_a_storm_of_thieves() {
    storm_every_kind_checking_ids::<Counted>();
}

#[test]
fn every_large_task_comes_out_exactly_once_and_intact_under_a_storm_of_thieves() {
    storm_every_kind_checking_ids::<Large>();
}

#[test]
fn every_zero_sized_task_comes_out_and_is_dropped_exactly_once_under_a_storm() {
    // The only test that makes `Zst`s, so the global count is its own.
    for kind in Kind::tested().iter().copied() {
        let before = ZST_DROPS.load(SeqCst);
        let taken = storm::<Zst>(kind, &Arc::new(AtomicUsize::new(0)));
        assert_eq!(taken.len(), TASKS, "{kind:?}");
        assert_eq!(ZST_DROPS.load(SeqCst) - before, TASKS, "{kind:?}: drops");
    }
}

// ------------------------------------------------- handles and destructors --

/// The three handles of a deque, each on its own thread, dropped in the
/// order `order` (indices into worker, stealer, clone), with tasks still in
/// the deque: whatever the order, each task left is dropped exactly once,
/// when the last handle goes, and none before.
#[test]
fn tasks_left_behind_are_dropped_once_whatever_order_the_handles_go_in() {
    let orders = [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ];
    for kind in Kind::tested().iter().copied() {
        for order in orders.into_iter().take(if cfg!(miri) { 2 } else { 6 }) {
            let drops = Arc::new(AtomicUsize::new(0));
            let worker = kind.make::<Counted>();
            let pushed = kind.bound().unwrap_or(TASKS.min(100));
            (0..pushed).for_each(|id| worker.push(Counted::new(id, &drops)));
            let stealer = worker.stealer();
            let clone = stealer.clone();
            drop(clone.steal()); // one task stolen, and dropped
            let mut handles: [Option<Box<dyn Send>>; 3] = [
                Some(Box::new(worker)),
                Some(Box::new(stealer)),
                Some(Box::new(clone)),
            ];
            for (step, &which) in order.iter().enumerate() {
                let handle = handles[which].take().unwrap();
                thread::spawn(move || drop(handle)).join().unwrap();
                let expected = if step == 2 { pushed } else { 1 };
                assert_eq!(
                    drops.load(SeqCst),
                    expected,
                    "{kind:?} {order:?} step {step}"
                );
            }
        }
    }
}

thread_local! {
    /// A stealer that this thread's destructors drop.
    static KEPT_STEALER: std::cell::RefCell<Option<Stealer<Counted>>> =
        const { std::cell::RefCell::new(None) };
    /// A worker that this thread's destructors use, then drop.
    static KEPT_WORKER: WorkerAtExit = const { WorkerAtExit(std::cell::RefCell::new(None)) };
}

/// A worker that keeps working while its thread's locals are destroyed.
struct WorkerAtExit(std::cell::RefCell<Option<(Worker<Counted>, Arc<AtomicUsize>)>>);

impl Drop for WorkerAtExit {
    fn drop(&mut self) {
        if let Some((worker, drops)) = self.0.borrow_mut().take() {
            // Push enough to grow (and retire buffers), steal, batch-steal,
            // pop, then drop with tasks left: all during thread exit.
            (0..300).for_each(|id| worker.push(Counted::new(id, &drops)));
            let stealer = worker.stealer();
            let other = Worker::new_fifo();
            drop(stealer.steal());
            let _ = stealer.steal_batch(&other);
            drop(worker.pop());
            while worker.len() > 100 {
                drop(worker.pop());
            }
        }
    }
}

#[test]
fn the_last_handle_dropped_by_a_thread_local_destructor_drops_the_tasks_then() {
    for kind in Kind::tested().iter().copied() {
        let drops = Arc::new(AtomicUsize::new(0));
        let worker = kind.make::<Counted>();
        let pushed = kind.bound().unwrap_or(50);
        (0..pushed).for_each(|id| worker.push(Counted::new(id, &drops)));
        let stealer = worker.stealer();
        // The last handle is a stealer that goes with a thread's locals,
        // after the worker has gone.
        let (worker_gone, wait) = std::sync::mpsc::channel::<()>();
        let exiting = thread::spawn(move || {
            KEPT_STEALER.with(|kept| *kept.borrow_mut() = Some(stealer));
            wait.recv().unwrap();
        });
        drop(worker);
        assert_eq!(
            drops.load(SeqCst),
            0,
            "{kind:?}: the stealer is still alive"
        );
        worker_gone.send(()).unwrap();
        exiting.join().unwrap();
        assert_eq!(
            drops.load(SeqCst),
            pushed,
            "{kind:?}: dropped with the thread's locals"
        );
    }
}

#[test]
fn a_worker_used_by_a_thread_local_destructor_drops_every_task_once() {
    // 300 pushed (growing), 1 stolen, some batch-stolen into a worker that
    // drops, some popped, the rest left: all while the thread exits.
    let drops = Arc::new(AtomicUsize::new(0));
    let moved = Arc::clone(&drops);
    thread::spawn(move || {
        let worker = Worker::new_lifo();
        KEPT_WORKER.with(|kept| *kept.0.borrow_mut() = Some((worker, moved)));
        // Steal once more after that, from another deque: whatever
        // thread-local state a steal sets up is then set up after, and so
        // destroyed before, the locals that hold the worker.
        let other = Worker::new_lifo();
        other.push(0u8);
        assert_eq!(other.stealer().steal(), Steal::Success(0));
    })
    .join()
    .unwrap();
    assert_eq!(
        drops.load(SeqCst),
        300,
        "every task dropped once, at thread exit"
    );
}

#[test]
fn a_panicking_task_destructor_at_the_last_drop_still_drops_every_other_task_once() {
    for kind in Kind::tested().iter().copied() {
        let drops = Arc::new(AtomicUsize::new(0));
        let worker = kind.make::<Counted>();
        let pushed = kind.bound().unwrap_or(40);
        for id in 0..pushed {
            let id = if id == pushed / 2 { PANICS } else { id };
            worker.push(Counted::new(id, &drops));
        }
        let stealer = worker.stealer();
        drop(worker);
        // The last handle goes on another thread, which panics.
        let outcome = thread::spawn(move || drop(stealer)).join();
        assert!(
            outcome.is_err(),
            "{kind:?}: the destructor's panic reaches the thread"
        );
        assert_eq!(
            drops.load(SeqCst),
            pushed,
            "{kind:?}: each task dropped once"
        );
    }
}

#[test]
fn a_stolen_task_that_panics_when_dropped_leaves_the_deque_working() {
    let drops = Arc::new(AtomicUsize::new(0));
    let worker = Worker::new_lifo();
    worker.push(Counted::new(PANICS, &drops));
    (1..10).for_each(|id| worker.push(Counted::new(id, &drops)));
    let stealer = worker.stealer();
    let outcome = thread::spawn(move || {
        let task = stealer.steal().success().unwrap();
        drop(task); // panics, with the stealer alive on this thread
    })
    .join();
    assert!(outcome.is_err());
    assert_eq!(drops.load(SeqCst), 1);
    assert_eq!(worker.len(), 9);
    let ids: Vec<usize> = std::iter::from_fn(|| worker.pop())
        .map(|task| task.id)
        .collect();
    assert_eq!(ids, (1..10).rev().collect::<Vec<_>>());
}

#[test]
fn a_panic_while_holding_every_handle_drops_each_task_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let moved = Arc::clone(&drops);
    let outcome = thread::spawn(move || {
        let worker = Worker::new_fifo_with_capacity(2);
        let stealers = [worker.stealer(), worker.stealer()];
        (0..100).for_each(|id| worker.push(Counted::new(id, &moved)));
        drop(stealers[0].steal());
        panic!("the scheduler's own code panics");
    })
    .join();
    assert!(outcome.is_err());
    assert_eq!(drops.load(SeqCst), 100);
}

// -------------------------------------------------------------- batches --

/// `(kind of destination, tasks already in it)`: full, nearly full, with
/// room, for bounds 1 to 4.
fn nearly_full_destinations() -> Vec<(Kind, usize)> {
    let mut cases = Vec::new();
    for bound in 1..=if cfg!(miri) { 2 } else { 4 } {
        for fill in (0..=bound).rev().take(3) {
            cases.push((Kind::LifoBounded(bound), fill));
            cases.push((Kind::FifoBounded(bound), fill));
        }
    }
    cases
}

#[test]
fn a_batch_steal_never_overfills_a_bounded_destination_nor_loses_a_task() {
    let mut case_number = 0;
    for source_kind in Kind::tested().iter().copied() {
        for (dest_kind, fill) in nearly_full_destinations() {
            case_number += 1;
            // Every theft for every case; under miri one theft per case, in
            // turns, so that each theft still meets several cases.
            let thefts = if cfg!(miri) {
                case_number % THEFTS..case_number % THEFTS + 1
            } else {
                0..THEFTS
            };
            for attempt in thefts {
                let source = source_kind.make::<usize>();
                let in_source = source_kind.bound().unwrap_or(9);
                (0..in_source).for_each(|task| source.push(task));
                let dest = dest_kind.make::<usize>();
                (0..fill).for_each(|task| dest.push(1000 + task));
                let bound = dest_kind.bound().unwrap();
                let mut handed = Vec::new();
                steal_somehow(&source.stealer(), &dest, attempt, &mut |task| {
                    handed.push(task)
                });
                let case =
                    format!("{source_kind:?} into {dest_kind:?} holding {fill}, theft {attempt}");
                assert!(
                    dest.len() <= bound,
                    "{case}: {} tasks over bound {bound}",
                    dest.len()
                );
                let mut all: Vec<usize> = handed;
                all.extend(std::iter::from_fn(|| dest.pop()));
                all.extend(std::iter::from_fn(|| source.pop()));
                all.sort_unstable();
                let mut expected: Vec<usize> = (0..in_source).chain(1000..1000 + fill).collect();
                expected.sort_unstable();
                assert_eq!(all, expected, "{case}: tasks lost or duplicated");
            }
        }
    }
}

#[test]
fn a_batch_steal_into_a_full_destination_moves_nothing() {
    for source_kind in Kind::tested().iter().copied() {
        for dest_kind in [Kind::LifoBounded(2), Kind::FifoBounded(3)] {
            let source = source_kind.make::<usize>();
            (0..3).for_each(|task| source.push(task));
            let dest = dest_kind.make::<usize>();
            (0..dest_kind.bound().unwrap()).for_each(|task| dest.push(100 + task));
            let stealer = source.stealer();
            // `Success(())`, not `Empty`: the source has tasks, and the full
            // destination has tasks of its own to pop.
            assert_eq!(
                stealer.steal_batch(&dest),
                Steal::Success(()),
                "{source_kind:?}"
            );
            assert_eq!(stealer.steal_batch_with_limit(&dest, 2), Steal::Success(()));
            assert_eq!(source.len(), 3, "{source_kind:?}: nothing left the source");
            // `_and_pop` still hands one task to the caller.
            assert!(stealer.steal_batch_and_pop(&dest).is_success());
            assert_eq!(source.len(), 2);
            assert_eq!(dest.len(), dest_kind.bound().unwrap(), "{source_kind:?}");
        }
    }
}

#[test]
fn a_batch_steal_into_its_own_source_loses_and_duplicates_nothing() {
    for kind in Kind::tested().iter().copied() {
        let worker = kind.make::<usize>();
        let pushed = kind.bound().unwrap_or(9);
        (0..pushed).for_each(|task| worker.push(task));
        let stealer = worker.stealer();
        let mut handed = Vec::new();
        for attempt in 0..3 * THEFTS {
            steal_somehow(&stealer, &worker, attempt, &mut |task| handed.push(task));
            assert!(
                worker.len() <= pushed,
                "{kind:?}: theft {attempt} made tasks"
            );
        }
        handed.extend(std::iter::from_fn(|| worker.pop()));
        handed.sort_unstable();
        assert_eq!(handed, (0..pushed).collect::<Vec<_>>(), "{kind:?}");
    }
}

#[test]
fn batch_steals_between_two_workers_in_both_directions_at_once_keep_every_task() {
    for (a, b) in [
        (Kind::Lifo, Kind::Fifo),
        (Kind::LifoBounded(5), Kind::FifoBounded(3)),
    ] {
        let (left, right) = (a.make::<usize>(), b.make::<usize>());
        let half = TASKS / 2;
        (0..half).for_each(|task| {
            let _ = left.try_push(task).or_else(|task| right.try_push(task));
        });
        let pushed = left.len() + right.len();
        let (to_left, to_right) = (right.stealer(), left.stealer());
        let total = AtomicUsize::new(0);
        let [got_left, got_right] = thread::scope(|scope| {
            let run = |mine: Worker<usize>, from: Stealer<usize>| {
                let total = &total;
                scope.spawn(move || {
                    let mut got = Vec::new();
                    let mut attempt = 0;
                    let mut watchdog = Watchdog::new();
                    while total.load(SeqCst) < pushed {
                        attempt += 1;
                        watchdog.check(total.load(SeqCst), "tasks taken");
                        steal_somehow(&from, &mine, attempt, &mut |task| {
                            got.push(task);
                            total.fetch_add(1, SeqCst);
                        });
                        if attempt % 3 == 0 {
                            if let Some(task) = mine.pop() {
                                got.push(task);
                                total.fetch_add(1, SeqCst);
                            }
                        }
                    }
                    got
                })
            };
            let left_thread = run(left, to_left);
            let right_thread = run(right, to_right);
            [left_thread.join().unwrap(), right_thread.join().unwrap()]
        });
        let mut all: Vec<usize> = got_left.into_iter().chain(got_right).collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(
            all.len(),
            pushed,
            "{a:?} <-> {b:?}: tasks lost or duplicated"
        );
    }
}

// ---------------------------------------------------------- len, again --

/// Once the owner has stopped pushing, the deque only loses tasks, so the
/// lengths one observer reads can only go down, whoever takes the tasks.
#[test]
fn len_never_grows_while_nobody_pushes() {
    for kind in Kind::tested().iter().copied() {
        let worker = kind.make::<usize>();
        let pushed = kind.bound().unwrap_or(TASKS);
        (0..pushed).for_each(|task| worker.push(task));
        let stealer = worker.stealer();
        let left = AtomicUsize::new(pushed);
        thread::scope(|scope| {
            for _ in 0..THREADS / 2 {
                scope.spawn(|| {
                    let mut watchdog = Watchdog::new();
                    while left.load(SeqCst) > 0 {
                        watchdog.check(left.load(SeqCst), "tasks left");
                        if stealer.steal().is_success() {
                            left.fetch_sub(1, SeqCst);
                        }
                    }
                });
            }
            for _ in 0..THREADS / 2 {
                scope.spawn(|| {
                    let mut last = usize::MAX;
                    let mut watchdog = Watchdog::new();
                    while left.load(SeqCst) > 0 {
                        watchdog.check(left.load(SeqCst), "tasks left");
                        let len = stealer.len();
                        assert!(len <= last, "{kind:?}: len went from {last} up to {len}");
                        assert!(len <= pushed, "{kind:?}: len {len} > {pushed} ever pushed");
                        last = len;
                    }
                });
            }
            while let Some(_task) = worker.pop() {
                left.fetch_sub(1, SeqCst);
            }
        });
        assert!(stealer.is_empty() && worker.is_empty(), "{kind:?}");
    }
}
