//! Unit tests of the owner and thief operations on one thread, and of the
//! edges: growth, shrinking, bounds, zero-sized tasks, destructors, the end
//! of the index space. Sizes are smaller under miri.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::rc::Rc;

use crate::deque::Flavor;
use crate::{Steal, Worker, DEFAULT_BATCH_LIMIT};

const MANY: usize = if cfg!(miri) { 200 } else { 10_000 };

#[test]
fn lifo_owner_pops_newest_first() {
    let worker = Worker::new_lifo();
    (0..10).for_each(|task| worker.push(task));
    let popped: Vec<_> = std::iter::from_fn(|| worker.pop()).collect();
    assert_eq!(popped, (0..10).rev().collect::<Vec<_>>());
}

#[test]
fn fifo_owner_pops_oldest_first() {
    let worker = Worker::new_fifo();
    (0..10).for_each(|task| worker.push(task));
    let popped: Vec<_> = std::iter::from_fn(|| worker.pop()).collect();
    assert_eq!(popped, (0..10).collect::<Vec<_>>());
}

#[test]
fn thieves_take_oldest_first_from_both_flavors() {
    for worker in [Worker::new_lifo(), Worker::new_fifo()] {
        (0..10).for_each(|task| worker.push(task));
        let stealer = worker.stealer();
        let stolen: Vec<_> = std::iter::from_fn(|| stealer.steal().success()).collect();
        assert_eq!(stolen, (0..10).collect::<Vec<_>>());
        assert_eq!(stealer.steal(), Steal::Empty);
    }
}

#[test]
fn an_empty_pop_leaves_the_deque_usable() {
    let worker = Worker::new_lifo();
    for _ in 0..5 {
        assert_eq!(worker.pop(), None);
    }
    worker.push(1);
    assert_eq!(worker.len(), 1);
    assert_eq!(worker.stealer().steal(), Steal::Success(1));
    assert_eq!(worker.pop(), None);
    assert!(worker.is_empty());
}

#[test]
fn a_growable_worker_grows_from_capacity_one_and_keeps_order() {
    let worker = Worker::new_lifo_with_capacity(1);
    assert_eq!(worker.capacity(), 1);
    (0..MANY).for_each(|task| worker.push(task));
    assert!(worker.capacity() >= MANY);
    let stealer = worker.stealer();
    assert_eq!(stealer.steal(), Steal::Success(0));
    assert_eq!(worker.pop(), Some(MANY - 1));
    assert_eq!(worker.len(), MANY - 2);
}

#[test]
fn the_buffer_shrinks_back_after_staying_small() {
    let worker = Worker::new_lifo_with_capacity(4);
    (0..1024).for_each(|task| worker.push(task));
    assert_eq!(worker.capacity(), 1024);
    while worker.pop().is_some() {}
    // Pops below a quarter full earned some credit, but not yet a shrink
    // for every halving; a small steady load finishes the job.
    for round in 0..4096 {
        worker.push(round);
        worker.pop();
    }
    assert_eq!(worker.capacity(), 4, "shrinks down to the initial capacity");
}

#[test]
fn the_buffer_shrinks_even_when_thieves_take_most_tasks() {
    // Smaller under miri, where a steal is slow; the same shape.
    let (filled, rounds) = if cfg!(miri) {
        (64, 1 << 10)
    } else {
        (1024, 1 << 16)
    };
    let worker = Worker::new_lifo_with_capacity(4);
    let stealer = worker.stealer();
    (0..filled).for_each(|task| worker.push(task));
    while worker.pop().is_some() {}
    // The deque holds one task at a time and the owner pops only one in
    // eight: fewer pops per lap of the buffer than a halving needs, so the
    // credit must carry over from one lap to the next.
    for round in 0..rounds {
        worker.push(round);
        if round % 8 == 0 {
            assert_eq!(worker.pop(), Some(round));
        } else {
            assert_eq!(stealer.steal(), Steal::Success(round));
        }
    }
    assert_eq!(worker.capacity(), 4, "shrinks down to the initial capacity");
}

#[test]
fn the_buffer_shrinks_when_thieves_take_every_task() {
    let rounds = if cfg!(miri) { 1 << 8 } else { 1 << 12 };
    for fifo in [false, true] {
        let worker = if fifo {
            Worker::new_fifo_with_capacity(4)
        } else {
            Worker::new_lifo_with_capacity(4)
        };
        let stealer = worker.stealer();
        (0..64).for_each(|task| worker.push(task));
        (0..64).for_each(|task| assert_eq!(stealer.steal(), Steal::Success(task)));
        assert_eq!(worker.capacity(), 64);
        // The owner's pops all come too late: each finds the deque empty.
        for round in 0..rounds {
            worker.push(round);
            assert_eq!(stealer.steal(), Steal::Success(round));
            assert_eq!(worker.pop(), None);
        }
        assert_eq!(
            worker.capacity(),
            4,
            "fifo: {fifo}: shrinks down to the initial capacity"
        );
    }
}

#[test]
fn filling_and_draining_in_rounds_does_not_reallocate_every_round() {
    let worker = Worker::new_lifo_with_capacity(4);
    let rounds = 6;
    let mut capacities = Vec::new();
    for _ in 0..rounds {
        (0..1024).for_each(|task| worker.push(task));
        while worker.pop().is_some() {}
        capacities.push(worker.capacity());
    }
    assert!(
        capacities.iter().all(|&capacity| capacity == 1024),
        "hysteresis keeps the buffer across rounds: {capacities:?}"
    );
}

#[test]
fn a_bounded_worker_hands_the_task_back_when_full() {
    for worker in [Worker::new_lifo_bounded(3), Worker::new_fifo_bounded(3)] {
        assert_eq!(worker.bound(), Some(3));
        for task in 0..3 {
            assert_eq!(worker.try_push(task), Ok(()));
        }
        assert_eq!(worker.try_push(99), Err(99));
        assert_eq!(worker.capacity(), 4, "never grows");
        assert!(worker.pop().is_some());
        assert_eq!(worker.try_push(4), Ok(()));
        assert_eq!(worker.len(), 3);
    }
}

#[test]
fn a_bounded_worker_accepts_a_push_once_a_thief_made_room() {
    for worker in [Worker::new_lifo_bounded(2), Worker::new_fifo_bounded(2)] {
        worker.push(1);
        worker.push(2);
        assert_eq!(worker.try_push(3), Err(3));
        assert_eq!(worker.stealer().steal(), Steal::Success(1));
        assert_eq!(worker.try_push(3), Ok(()), "the steal made room");
        assert_eq!(worker.try_push(4), Err(4));
    }
}

#[test]
#[should_panic(expected = "push on a full bounded Worker (bound 1)")]
fn push_on_a_full_bounded_worker_panics_with_a_clear_message() {
    let worker = Worker::new_lifo_bounded(1);
    worker.push(1);
    worker.push(2);
}

#[test]
#[should_panic(expected = "a bounded worker needs a capacity of at least 1")]
fn a_bounded_worker_of_capacity_zero_is_refused() {
    let _ = Worker::<u8>::new_lifo_bounded(0);
}

#[test]
#[should_panic(expected = "capacity overflow")]
fn an_absurd_capacity_is_refused_with_a_clear_message() {
    let _ = Worker::<u64>::new_lifo_with_capacity(usize::MAX);
}

#[test]
fn zero_sized_tasks_are_counted_not_stored() {
    let worker = Worker::new_lifo();
    (0..MANY).for_each(|_| worker.push(()));
    assert_eq!(worker.len(), MANY);
    let stealer = worker.stealer();
    assert_eq!(stealer.steal(), Steal::Success(()));
    let mut popped = 0;
    while worker.pop().is_some() {
        popped += 1;
    }
    assert_eq!(popped, MANY - 1);
    let bounded = Worker::new_fifo_bounded(2);
    assert_eq!(bounded.try_push(()), Ok(()));
    assert_eq!(bounded.try_push(()), Ok(()));
    assert_eq!(bounded.try_push(()), Err(()));
}

/// Counts its drops in a shared cell; panics when dropped if told to.
struct Counted {
    drops: Rc<Cell<usize>>,
    panic_on_drop: bool,
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.drops.set(self.drops.get() + 1);
        if self.panic_on_drop {
            panic!("task destructor panics");
        }
    }
}

fn counted(drops: &Rc<Cell<usize>>, panic_on_drop: bool) -> Counted {
    Counted {
        drops: Rc::clone(drops),
        panic_on_drop,
    }
}

// `Counted` holds an `Rc`, so it is not `Send`; single-threaded tests use an
// unchecked worker built directly.
fn local_worker<T>(flavor: Flavor) -> Worker<T> {
    Worker::build(flavor, 2, false)
}

#[test]
fn remaining_tasks_are_dropped_exactly_once_when_the_last_handle_goes() {
    let drops = Rc::new(Cell::new(0));
    let worker = local_worker(Flavor::Lifo);
    let stealer = worker.stealer();
    (0..100).for_each(|_| worker.push(counted(&drops, false)));
    drop(worker.pop());
    drop(stealer.steal());
    assert_eq!(drops.get(), 2);
    drop(worker);
    assert_eq!(drops.get(), 2, "the stealer still holds the deque");
    drop(stealer);
    assert_eq!(drops.get(), 100);
}

#[test]
fn a_panicking_task_destructor_still_lets_every_other_task_drop() {
    let drops = Rc::new(Cell::new(0));
    let worker = local_worker(Flavor::Fifo);
    (0..10).for_each(|index| worker.push(counted(&drops, index == 3)));
    let result = catch_unwind(AssertUnwindSafe(|| drop(worker)));
    assert!(result.is_err(), "the destructor's panic propagates");
    assert_eq!(drops.get(), 10, "each task dropped exactly once");
}

#[test]
fn tasks_moved_out_by_grow_and_shrink_are_not_dropped_twice() {
    let drops = Rc::new(Cell::new(0));
    let worker = local_worker(Flavor::Lifo);
    for _ in 0..3 {
        (0..300).for_each(|_| worker.push(counted(&drops, false)));
        for _ in 0..290 {
            drop(worker.pop());
        }
    }
    assert_eq!(drops.get(), 870);
    drop(worker);
    assert_eq!(drops.get(), 900);
}

#[test]
#[should_panic(expected = "index space is exhausted")]
fn the_end_of_the_index_space_is_a_clear_panic_not_a_wrap() {
    let worker = Worker::build_at(Flavor::Lifo, 4, false, i64::MAX - 3);
    for task in 0..4 {
        worker.push(task);
    }
}

#[test]
fn indices_near_the_end_of_the_index_space_still_work() {
    let worker = Worker::build_at(Flavor::Lifo, 2, false, i64::MAX - 10);
    let stealer = worker.stealer();
    for task in 0..8 {
        worker.push(task);
    }
    assert_eq!(stealer.steal(), Steal::Success(0));
    assert_eq!(worker.pop(), Some(7));
    assert_eq!(worker.len(), 6);
}

#[test]
fn a_batch_steal_takes_half_rounded_up_in_the_victims_pop_order() {
    for (victim, order) in [
        (Worker::new_lifo(), [3, 2, 1, 0]),
        (Worker::new_fifo(), [0, 1, 2, 3]),
    ] {
        (0..7).for_each(|task| victim.push(task));
        let mine = Worker::new_fifo();
        assert_eq!(victim.stealer().steal_batch(&mine), Steal::Success(()));
        assert_eq!(std::iter::from_fn(|| mine.pop()).collect::<Vec<_>>(), order);
        assert_eq!(victim.len(), 3);
    }
}

#[test]
fn a_batch_steal_respects_its_limit_and_the_destination_bound() {
    let victim = Worker::new_lifo();
    (0..100).for_each(|task| victim.push(task));
    let stealer = victim.stealer();
    let mine = Worker::new_lifo_bounded(3);
    mine.push(1000);
    assert_eq!(
        stealer.steal_batch_with_limit(&mine, 10),
        Steal::Success(())
    );
    assert_eq!(mine.len(), 3, "only two slots were free");
    assert_eq!(
        stealer.steal_batch(&mine),
        Steal::Success(()),
        "no room at all: not Empty, as the victim has tasks and `mine` is full"
    );
    assert_eq!(mine.len(), 3, "nothing moved into a full worker");
    assert_eq!(
        stealer.steal_batch_and_pop(&mine),
        Steal::Success(2),
        "one can still be returned"
    );
    assert_eq!(victim.len(), 97);
}

#[test]
fn a_batch_steal_and_pop_from_a_lifo_victim_returns_the_newest_of_its_batch() {
    let victim = Worker::new_lifo();
    (10..20).for_each(|task| victim.push(task));
    let mine = Worker::new_lifo();
    assert_eq!(
        victim.stealer().steal_batch_with_limit_and_pop(&mine, 4),
        Steal::Success(13)
    );
    assert_eq!(
        std::iter::from_fn(|| mine.pop()).collect::<Vec<_>>(),
        [12, 11, 10]
    );
    assert_eq!(victim.len(), 6);
}

#[test]
fn a_batch_steal_grows_a_growable_destination() {
    let victim = Worker::new_fifo();
    (0..2 * DEFAULT_BATCH_LIMIT).for_each(|task| victim.push(task));
    let mine = Worker::new_lifo_with_capacity(1);
    assert_eq!(victim.stealer().steal_batch(&mine), Steal::Success(()));
    assert_eq!(mine.len(), DEFAULT_BATCH_LIMIT);
    assert_eq!(
        mine.pop(),
        Some(0),
        "a LIFO destination pops a FIFO victim's oldest first"
    );
}

#[test]
fn a_batch_steal_from_an_empty_deque_is_empty() {
    let victim = Worker::<u8>::new_lifo();
    let mine = Worker::new_lifo();
    assert_eq!(victim.stealer().steal_batch(&mine), Steal::Empty);
    assert_eq!(victim.stealer().steal_batch_and_pop(&mine), Steal::Empty);
}

#[test]
fn a_batch_steal_into_the_same_deque_moves_nothing() {
    let worker = Worker::new_fifo();
    (0..4).for_each(|task| worker.push(task));
    let stealer = worker.stealer();
    assert_eq!(stealer.steal_batch(&worker), Steal::Success(()));
    assert_eq!(stealer.steal_batch_and_pop(&worker), Steal::Success(0));
    assert_eq!(
        std::iter::from_fn(|| worker.pop()).collect::<Vec<_>>(),
        [1, 2, 3]
    );
    assert_eq!(stealer.steal_batch(&worker), Steal::Empty);
}

#[test]
#[should_panic(expected = "limit of at least 1")]
fn a_batch_limit_of_zero_is_refused() {
    let worker = Worker::<u8>::new_lifo();
    let _ = worker
        .stealer()
        .steal_batch_with_limit(&Worker::new_lifo(), 0);
}

#[test]
fn len_and_is_empty_agree_between_owner_and_stealer() {
    let worker = Worker::new_lifo();
    let stealer = worker.stealer();
    assert!(worker.is_empty() && stealer.is_empty());
    (0..5).for_each(|task| worker.push(task));
    assert_eq!((worker.len(), stealer.len()), (5, 5));
    let _ = stealer.steal();
    let _ = worker.pop();
    assert_eq!((worker.len(), stealer.len()), (3, 3));
}

/// How many buffers `worker` retired that are not freed yet.
fn retired_not_freed<T>(worker: &Worker<T>) -> usize {
    worker.retired_not_freed()
}

#[test]
fn with_no_thief_reading_every_retired_buffer_is_freed_at_once() {
    let worker = Worker::new_lifo_with_capacity(1);
    for task in 0..MANY {
        worker.push(task); // a grow, and so a retire, at every power of two
        assert_eq!(retired_not_freed(&worker), 0);
    }
}

#[test]
fn a_buffer_a_thief_announced_is_kept_until_the_thief_lets_go() {
    let worker = Worker::new_lifo_with_capacity(2);
    worker.push(1);
    // The current buffer, as a thief loads it (proofs-notes/reclamation.md#hazard-slots).
    let buffer = worker.stealer().load_buffer();
    let announced = crate::reclamation::HazardSlot::new(buffer.cast());
    (2..=3).for_each(|task| worker.push(task)); // grows: retires the announced buffer
    assert_eq!(retired_not_freed(&worker), 1);
    (4..=5).for_each(|task| worker.push(task)); // grows again: the first is still held
    assert_eq!(retired_not_freed(&worker), 1);
    drop(announced);
    (6..=9).for_each(|task| worker.push(task)); // the next retire frees both
    assert_eq!(retired_not_freed(&worker), 0);
}

#[test]
fn retired_buffers_held_by_no_thief_do_not_pile_up_around_a_lap() {
    // A deque pushed and popped around empty moves to a new buffer once per
    // lap; a thief that steals now and then holds no buffer between steals,
    // so each retire frees everything.
    let worker = Worker::new_lifo_with_capacity(4);
    let stealer = worker.stealer();
    for round in 0..MANY {
        worker.push(round);
        if round % 3 == 0 {
            let _ = stealer.steal();
        } else {
            let _ = worker.pop();
        }
        assert_eq!(retired_not_freed(&worker), 0);
    }
}

/// Calls the batch-steal entry point `name` from `source` into `dest`;
/// returns the task it hands back to the caller (the `_and_pop` ones), or
/// `None`. Panics if it stole nothing.
fn batch_steal_by_name(name: &str, source: &Worker<u64>, dest: &Worker<u64>) -> Option<u64> {
    let stealer = source.stealer();
    let outcome = match name {
        "steal_batch" => stealer.steal_batch(dest).success().map(|()| None),
        "steal_batch_with_limit" => stealer
            .steal_batch_with_limit(dest, 3)
            .success()
            .map(|()| None),
        "steal_batch_and_pop" => stealer.steal_batch_and_pop(dest).success().map(Some),
        "steal_batch_with_limit_and_pop" => stealer
            .steal_batch_with_limit_and_pop(dest, 3)
            .success()
            .map(Some),
        _ => unreachable!("{name}"),
    };
    outcome.expect("the batch steal took nothing")
}

const BATCH_STEALS: [&str; 4] = [
    "steal_batch",
    "steal_batch_with_limit",
    "steal_batch_and_pop",
    "steal_batch_with_limit_and_pop",
];

#[test]
fn a_batch_steal_into_a_destination_at_the_end_of_the_index_space_panics_before_taking_anything() {
    for flavor in [Flavor::Lifo, Flavor::Fifo] {
        for name in BATCH_STEALS {
            let source = Worker::build(flavor, 4, false);
            (0..20).for_each(|task| source.push(task));
            // Room for one more index only: a batch of two or more tasks
            // would have to write past i64::MAX.
            let dest = Worker::build_at(Flavor::Lifo, 4, false, i64::MAX - 1);
            let outcome = catch_unwind(AssertUnwindSafe(|| {
                batch_steal_by_name(name, &source, &dest)
            }));
            let message = match outcome {
                Ok(_) => panic!("{name} ({flavor:?}): stole past i64::MAX without a panic"),
                Err(payload) => panic_message(payload),
            };
            assert!(
                message.contains("index space is exhausted"),
                "{name} ({flavor:?}): panicked with {message:?}"
            );
            assert_eq!(
                source.len(),
                20,
                "{name} ({flavor:?}): claimed tasks, then panicked"
            );
            assert_eq!(dest.len(), 0, "{name} ({flavor:?})");
        }
    }
}

#[test]
fn batch_steals_at_the_end_of_the_index_space_take_every_task_once() {
    // Source and destination both start 40 indices before i64::MAX, and the
    // source is filled up to i64::MAX - 1, the last index a task can have.
    for flavor in [Flavor::Lifo, Flavor::Fifo] {
        for bounded in [false, true] {
            for name in BATCH_STEALS {
                let start = i64::MAX - 40;
                let source = Worker::build_at(flavor, 64, bounded, start);
                (0..39).for_each(|task| source.push(task));
                let dest = Worker::build_at(Flavor::Fifo, 2, false, start);
                let mut taken = Vec::new();
                while !source.is_empty() {
                    taken.extend(batch_steal_by_name(name, &source, &dest));
                    taken.extend(std::iter::from_fn(|| dest.pop()));
                }
                taken.sort_unstable();
                let case = format!("{name} {flavor:?} bounded={bounded}");
                assert_eq!(taken, (0..39).collect::<Vec<_>>(), "{case}");
            }
        }
    }
}

// Not under miri, which stops the whole run at an allocation larger than
// the host could give (resource exhaustion) instead of returning null.
#[cfg(not(miri))]
#[test]
#[should_panic(expected = "capacity overflow")]
fn a_buffer_the_allocator_cannot_provide_panics_instead_of_aborting() {
    // 2^60 bytes: a valid `Layout`, but no machine has them. Every buffer
    // (constructors, grow, shrink, next lap, batch reserve) is allocated by
    // `Buffer::new`.
    let _ = crate::buffer::Buffer::<[u8; 1 << 20]>::new(1 << 40, 0);
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    match payload.downcast::<String>() {
        Ok(message) => *message,
        Err(payload) => match payload.downcast::<&str>() {
            Ok(message) => message.to_string(),
            Err(_) => "(not a string)".to_string(),
        },
    }
}
