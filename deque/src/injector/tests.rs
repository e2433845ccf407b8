//! Unit tests of the `Injector`: order, lengths, batch steals measured
//! against crossbeam-deque's own `Injector`, destructors, the end of the
//! index space, and real threads. Sizes are smaller under miri.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};

use crate::{Injector, Steal, Worker};

/// Enough tasks to cross several blocks (63 tasks each).
const MANY: usize = if cfg!(miri) { 200 } else { 5_000 };
const LAP: usize = Injector::<()>::LAP as usize;

fn drain<T>(injector: &Injector<T>) -> Vec<T> {
    std::iter::from_fn(|| loop {
        match injector.steal() {
            Steal::Success(task) => break Some(task),
            Steal::Empty => break None,
            Steal::Retry => continue,
        }
    })
    .collect()
}

#[test]
fn injector_steals_return_the_tasks_in_push_order_across_blocks() {
    let injector = Injector::new();
    (0..MANY).for_each(|task| injector.push(task));
    assert_eq!(drain(&injector), (0..MANY).collect::<Vec<_>>());
    assert_eq!(injector.steal(), Steal::Empty);
}

#[test]
fn injector_len_counts_exactly_at_every_step_across_block_ends() {
    let injector = Injector::new();
    for pushed in 1..=3 * LAP {
        injector.push(pushed);
        assert_eq!(injector.len(), pushed);
        assert!(!injector.is_empty());
    }
    for left in (0..3 * LAP).rev() {
        assert!(injector.steal().is_success());
        assert_eq!(injector.len(), left);
        assert_eq!(injector.is_empty(), left == 0);
    }
}

#[test]
fn injector_interleaved_pushes_and_steals_stay_fifo_and_reuse_nothing_twice() {
    let injector = Injector::new();
    let mut next_out = 0;
    for task in 0..MANY {
        injector.push(task);
        if task % 3 == 2 {
            for _ in 0..2 {
                assert_eq!(injector.steal(), Steal::Success(next_out));
                next_out += 1;
            }
        }
    }
    assert_eq!(drain(&injector), (next_out..MANY).collect::<Vec<_>>());
}

/// One batch-steal experiment, run against crossbeam-deque's injector and
/// ours: `before` tasks pushed, `stolen_first` single steals, then one
/// batch steal with `limit` into a worker of the given flavour.
#[derive(Clone, Copy, Debug)]
struct BatchCase {
    before: usize,
    stolen_first: usize,
    limit: Option<usize>,
    and_pop: bool,
    fifo: bool,
}

/// What a batch steal did: its result, then the destination's pops in order.
type Outcome = (Option<Option<usize>>, Vec<usize>, usize);

/// A batch steal's result as `Some(stolen)` (with the returned task, if
/// any), or `None` for `Retry`; for crossbeam's `Steal` and ours alike.
macro_rules! unit {
    ($steal:ident, $attempt:expr) => {
        match $attempt {
            $steal::Steal::Success(()) => Some(Some(None)),
            $steal::Steal::Empty => Some(None),
            $steal::Steal::Retry => None,
        }
    };
}

macro_rules! task {
    ($steal:ident, $attempt:expr) => {
        match $attempt {
            $steal::Steal::Success(task) => Some(Some(Some(task))),
            $steal::Steal::Empty => Some(None),
            $steal::Steal::Retry => None,
        }
    };
}

fn crossbeams(case: BatchCase) -> Outcome {
    use crossbeam_deque as cb;
    let injector = cb::Injector::new();
    (0..case.before).for_each(|task| injector.push(task));
    for _ in 0..case.stolen_first {
        while !injector.steal().is_success() {}
    }
    let dest = if case.fifo {
        cb::Worker::new_fifo()
    } else {
        cb::Worker::new_lifo()
    };
    // `Retry` changes nothing (crossbeam's CAS is a weak one, which miri
    // makes fail at random): try again.
    let result = loop {
        let attempt = match (case.and_pop, case.limit) {
            (false, None) => unit!(cb, injector.steal_batch(&dest)),
            (false, Some(limit)) => unit!(cb, injector.steal_batch_with_limit(&dest, limit)),
            (true, None) => task!(cb, injector.steal_batch_and_pop(&dest)),
            (true, Some(limit)) => task!(cb, injector.steal_batch_with_limit_and_pop(&dest, limit)),
        };
        if let Some(result) = attempt {
            break result;
        }
    };
    let popped = std::iter::from_fn(|| dest.pop()).collect();
    (result, popped, injector.len())
}

fn ours(case: BatchCase) -> Outcome {
    let injector = Injector::new();
    (0..case.before).for_each(|task| injector.push(task));
    for _ in 0..case.stolen_first {
        assert!(injector.steal().is_success());
    }
    let dest = if case.fifo {
        Worker::new_fifo()
    } else {
        Worker::new_lifo()
    };
    // `Retry` changes nothing (crossbeam's CAS is a weak one, which miri
    // makes fail at random): try again.
    let result = loop {
        let attempt = match (case.and_pop, case.limit) {
            (false, None) => unit!(crate, injector.steal_batch(&dest)),
            (false, Some(limit)) => unit!(crate, injector.steal_batch_with_limit(&dest, limit)),
            (true, None) => task!(crate, injector.steal_batch_and_pop(&dest)),
            (true, Some(limit)) => {
                task!(crate, injector.steal_batch_with_limit_and_pop(&dest, limit))
            }
        };
        if let Some(result) = attempt {
            break result;
        }
    };
    let popped = std::iter::from_fn(|| dest.pop()).collect();
    (result, popped, injector.len())
}

#[test]
fn injector_batch_steals_move_what_crossbeams_move_in_the_same_order() {
    let mut cases = 0;
    // Fewer under miri, still around both ends of a block.
    let (befores, stolen, limits): (&[usize], &[usize], &[Option<usize>]) = if cfg!(miri) {
        (&[0, 1, 3, 63, 64, 127], &[0, 1, 62], &[None, Some(2)])
    } else {
        (
            &[0, 1, 2, 3, 5, 8, 40, 62, 63, 64, 65, 100, 126, 127, 200],
            &[0, 1, 30, 61, 62, 63, 64],
            &[None, Some(1), Some(2), Some(7), Some(usize::MAX)],
        )
    };
    for &before in befores {
        for &stolen_first in stolen {
            if stolen_first > before {
                continue;
            }
            for &limit in limits {
                for and_pop in [false, true] {
                    for fifo in [false, true] {
                        let case = BatchCase {
                            before,
                            stolen_first,
                            limit,
                            and_pop,
                            fifo,
                        };
                        assert_eq!(ours(case), crossbeams(case), "{case:?}");
                        cases += 1;
                    }
                }
            }
        }
    }
    assert!(cases >= if cfg!(miri) { 100 } else { 1000 });
}

#[test]
fn injector_batch_into_a_lifo_worker_pops_the_oldest_first() {
    let injector = Injector::new();
    (1..=8).for_each(|task| injector.push(task));
    let dest = Worker::new_lifo();
    assert_eq!(injector.steal_batch(&dest), Steal::Success(()));
    assert_eq!(
        std::iter::from_fn(|| dest.pop()).collect::<Vec<_>>(),
        [1, 2, 3, 4]
    );
    assert_eq!(drain(&injector), [5, 6, 7, 8]);
}

#[test]
fn injector_batch_into_a_bounded_worker_moves_only_what_fits() {
    let injector = Injector::new();
    (1..=20).for_each(|task| injector.push(task));
    let dest = Worker::new_fifo_bounded(4);
    dest.push(100);
    assert_eq!(injector.steal_batch(&dest), Steal::Success(()));
    assert_eq!(dest.len(), 4);
    assert_eq!(injector.len(), 17);
    // Full: nothing moves, and nothing is lost; not `Empty`, as the queue
    // has tasks and `dest` holds four to pop.
    assert_eq!(injector.steal_batch(&dest), Steal::Success(()));
    assert_eq!(dest.len(), 4);
    assert_eq!(injector.len(), 17);
    // The pop variant still takes one task for the caller.
    assert_eq!(injector.steal_batch_and_pop(&dest), Steal::Success(4));
    assert_eq!(
        std::iter::from_fn(|| dest.pop()).collect::<Vec<_>>(),
        [100, 1, 2, 3]
    );
    assert_eq!(drain(&injector), (5..=20).collect::<Vec<_>>());
}

#[test]
fn injector_batch_steals_on_an_empty_queue_report_empty() {
    let injector = Injector::<u8>::new();
    let dest = Worker::new_lifo();
    assert_eq!(injector.steal_batch(&dest), Steal::Empty);
    assert_eq!(injector.steal_batch_and_pop(&dest), Steal::Empty);
    assert!(dest.is_empty());
}

#[test]
#[should_panic(expected = "limit of at least 1")]
fn injector_batch_steal_with_a_zero_limit_panics_clearly() {
    let injector = Injector::<u8>::new();
    let _ = injector.steal_batch_with_limit(&Worker::new_lifo(), 0);
}

/// A task that counts its drops, and panics in `Drop` if asked to.
struct Counted {
    drops: Arc<AtomicUsize>,
    panics: bool,
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.drops
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if self.panics {
            panic!("a task's Drop panics");
        }
    }
}

#[test]
fn injector_drops_each_task_left_in_it_once() {
    for left in [0, 1, LAP - 2, LAP - 1, LAP, 3 * LAP + 5] {
        let drops = Arc::new(AtomicUsize::new(0));
        let injector = Injector::new();
        for _ in 0..left + 7 {
            injector.push(Counted {
                drops: Arc::clone(&drops),
                panics: false,
            });
        }
        for _ in 0..7 {
            drop(injector.steal().success().expect("a task"));
        }
        assert_eq!(drops.load(std::sync::atomic::Ordering::Relaxed), 7);
        drop(injector);
        assert_eq!(
            drops.load(std::sync::atomic::Ordering::Relaxed),
            left + 7,
            "left {left}"
        );
    }
}

#[test]
fn injector_dropped_with_a_panicking_task_still_drops_every_other_task_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let injector = Injector::new();
    let total = 2 * LAP + 3;
    for index in 0..total {
        injector.push(Counted {
            drops: Arc::clone(&drops),
            panics: index == LAP + 1,
        });
    }
    let result = catch_unwind(AssertUnwindSafe(|| drop(injector)));
    assert!(result.is_err(), "the task's panic reaches the caller");
    // Under miri, the leak check also proves every block was freed.
    assert_eq!(drops.load(std::sync::atomic::Ordering::Relaxed), total);
}

#[test]
fn injector_holds_zero_sized_tasks() {
    let injector = Injector::new();
    (0..MANY).for_each(|_| injector.push(()));
    assert_eq!(injector.len(), MANY);
    assert_eq!(drain(&injector).len(), MANY);
    assert!(injector.is_empty());
}

#[test]
fn injector_holds_large_tasks_without_copying_a_block_through_the_stack() {
    let injector = Injector::new();
    for task in 0..(if cfg!(miri) { 70 } else { 200 }) {
        injector.push([task as u8; 64 * 1024]);
    }
    for task in 0..(if cfg!(miri) { 70 } else { 200 }) {
        assert_eq!(
            injector.steal().success().map(|big| big[4096]),
            Some(task as u8)
        );
    }
}

#[test]
fn injector_crosses_the_wrap_of_its_index_space() {
    // Positions wrap at 2^63: start three laps before it.
    let first = (1u64 << 63) - 3 * Injector::<()>::LAP;
    let injector = Injector::starting_at(first);
    let total = 6 * LAP;
    for task in 0..total {
        injector.push(task);
        assert_eq!(injector.len(), task + 1);
    }
    let dest = Worker::new_fifo();
    assert_eq!(
        injector.steal_batch_with_limit(&dest, 5),
        Steal::Success(())
    );
    let mut out: Vec<_> = std::iter::from_fn(|| dest.pop()).collect();
    out.extend(drain(&injector));
    assert_eq!(out, (0..total).collect::<Vec<_>>());
    assert!(injector.is_empty());
}

#[test]
fn injector_debug_does_not_require_debug_tasks() {
    struct Opaque;
    assert_eq!(
        format!("{:?}", Injector::<Opaque>::new()),
        "Injector { .. }"
    );
}

#[test]
fn injector_default_is_empty() {
    let injector: Injector<Cell<u8>> = Default::default();
    assert!(injector.is_empty());
    assert_eq!(injector.len(), 0);
}

#[test]
fn injector_tasks_from_many_pushers_reach_many_stealers_exactly_once() {
    let per_pusher = if cfg!(miri) { 60 } else { 20_000 };
    let (pushers, stealers) = (3, 3);
    let injector = Injector::new();
    let taken = Mutex::new(Vec::new());
    let pushed_all = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for pusher in 0..pushers {
            let (injector, pushed_all) = (&injector, &pushed_all);
            scope.spawn(move || {
                for task in 0..per_pusher {
                    injector.push(pusher * per_pusher + task);
                }
                pushed_all.fetch_add(1, std::sync::atomic::Ordering::Release);
            });
        }
        for stealer in 0..stealers {
            let (injector, taken, pushed_all) = (&injector, &taken, &pushed_all);
            scope.spawn(move || {
                let local = Worker::new_lifo();
                let mut mine = Vec::new();
                loop {
                    let done = pushed_all.load(std::sync::atomic::Ordering::Acquire) == pushers;
                    let attempt = match stealer {
                        0 => some(injector.steal()),
                        1 => some(injector.steal_batch_and_pop(&local)),
                        _ => none(injector.steal_batch(&local)),
                    };
                    match attempt {
                        Steal::Success(Some(task)) => mine.push(task),
                        Steal::Success(None) | Steal::Retry => {}
                        Steal::Empty if done => break,
                        Steal::Empty => std::thread::yield_now(),
                    }
                    mine.extend(std::iter::from_fn(|| local.pop()));
                }
                taken.lock().unwrap().extend(mine);
            });
        }
    });
    let mut taken = taken.into_inner().unwrap();
    taken.sort_unstable();
    assert_eq!(taken, (0..pushers * per_pusher).collect::<Vec<_>>());
}

/// A steal's result with its task as an `Option`, so that the three kinds
/// of steal in the test above share one match.
fn some<T>(attempt: Steal<T>) -> Steal<Option<T>> {
    attempt.map(Some)
}

fn none(attempt: Steal<()>) -> Steal<Option<usize>> {
    attempt.map(|()| None)
}

#[test]
fn a_batch_marks_every_slot_it_read_and_leaves_its_abandoned_slots_to_their_pushes() {
    use super::blocks::{READ, WRITE};
    use crate::sync::Ordering::Relaxed;
    let injector = Injector::new();
    (0..5).for_each(|task| injector.push(task));
    // A claim of the first five slots, of which the middle one was
    // abandoned: two runs, slots 0-1 and 3-4.
    // Ordering: Relaxed everywhere below: one thread (proofs-notes/injector.md#drop).
    let block = super::blocks::untag(injector.head.block.load(Relaxed));
    // SAFETY: the queue owns the block; nothing else runs.
    // Ordering: Relaxed, as above (proofs-notes/injector.md#drop).
    let state = |offset: usize| unsafe { (*block).slots[offset].state.load(Relaxed) };
    // SAFETY: as if this thread had claimed the five slots; the claim does
    // not reach the block's end, so the block is not freed.
    unsafe { injector.finish(block, 0, 5, 0b11011) };
    assert_eq!(
        [state(0), state(1), state(2), state(3), state(4)],
        [
            WRITE | READ,
            WRITE | READ,
            WRITE,
            WRITE | READ,
            WRITE | READ
        ]
    );
    // The tasks (plain integers) count as taken: the drop frees the block only.
    // Ordering: Relaxed, as above (proofs-notes/injector.md#drop).
    let tail = injector.tail.index.load(Relaxed);
    // Ordering: Relaxed, as above (proofs-notes/injector.md#drop).
    injector.head.index.store(tail, Relaxed);
}

#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "a slot's state bit was set twice")]
fn a_state_bit_set_a_second_time_is_caught_not_carried_into_the_next_bit() {
    use super::blocks::{Slot, WRITE};
    use crate::sync::Ordering::Relaxed;
    let injector = Injector::new();
    injector.push(1);
    // Ordering: Relaxed: one thread (proofs-notes/injector.md#drop).
    let block = super::blocks::untag(injector.head.block.load(Relaxed));
    // SAFETY: the queue owns the block; nothing else runs.
    let slot: &Slot<i32> = unsafe { &(*block).slots[0] };
    // An add of `WRITE` to a written slot would carry into `READ`.
    // Ordering: Relaxed, as above (proofs-notes/injector.md#drop).
    slot.set_once(WRITE, Relaxed);
}

/// A task aligned to more than the tickets' 128 bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(align(256))]
struct Aligned256(u64);

#[test]
fn blocks_start_where_the_cursor_words_tickets_have_free_bits() {
    use super::blocks::{Block, TICKETS};
    for _ in 0..8 {
        let small = Block::<u64>::new();
        let large = Block::<Aligned256>::new();
        assert_eq!(small as usize % (TICKETS + 1), 0);
        assert_eq!(large as usize % 256, 0);
        // SAFETY: fresh blocks, never published.
        unsafe {
            Block::free(small);
            Block::free(large);
        }
    }
}

#[test]
fn tasks_aligned_beyond_a_block_alignment_go_through_the_injector() {
    let injector = Injector::new();
    (0..MANY as u64).for_each(|task| injector.push(Aligned256(task)));
    let taken = drain(&injector);
    assert_eq!(taken, (0..MANY as u64).map(Aligned256).collect::<Vec<_>>());
}

#[test]
#[cfg(target_pointer_width = "64")]
fn a_block_of_u64_tasks_is_no_larger_than_its_header_and_slots() {
    // The header (next, lap, two ticket counts, released, the allocation's
    // start) and 63 slots of a task and a state: no rounding up to 128.
    assert_eq!(
        core::mem::size_of::<super::blocks::Block<u64>>(),
        48 + 63 * 16
    );
}
