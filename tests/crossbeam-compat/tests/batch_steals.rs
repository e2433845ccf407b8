//! What a batch steal from a `Stealer` does, for every pair of source and
//! destination flavours, written against crossbeam-deque 0.8 and nothing
//! else. The same file runs against the real crossbeam-deque (from
//! the package crossbeam-compat-reference) and against chase-lev renamed
//! (the package crossbeam-compat), so every assertion here is crossbeam's behaviour.
//!
//! The rule these tests pin down: a batch leaves the destination so that its
//! owner pops the stolen tasks in the order the victim's owner would have
//! popped them (oldest first from a FIFO victim, newest first from a LIFO
//! one), and `steal_batch_and_pop` returns the first task of that order.

use crossbeam_deque::{Steal, Worker};

#[derive(Clone, Copy, Debug)]
enum Flavor {
    Lifo,
    Fifo,
}
use Flavor::{Fifo, Lifo};

fn worker(flavor: Flavor) -> Worker<u32> {
    match flavor {
        Lifo => Worker::new_lifo(),
        Fifo => Worker::new_fifo(),
    }
}

/// A worker of `flavor` holding `1..=count`, pushed in that order.
fn holding(flavor: Flavor, count: u32) -> Worker<u32> {
    let worker = worker(flavor);
    (1..=count).for_each(|task| worker.push(task));
    worker
}

/// Everything the owner pops, in order.
fn popped(worker: &Worker<u32>) -> Vec<u32> {
    std::iter::from_fn(|| worker.pop()).collect()
}

/// Everything a thief steals, in order.
fn stolen(worker: &Worker<u32>) -> Vec<u32> {
    let stealer = worker.stealer();
    std::iter::from_fn(|| stealer.steal().success()).collect()
}

/// `steal_batch` from ten tasks `1..=10`: what the destination's owner pops,
/// then what is left for the victim's owner.
fn after_steal_batch(from: Flavor, into: Flavor) -> (Vec<u32>, Vec<u32>) {
    let victim = holding(from, 10);
    let dest = worker(into);
    assert_eq!(victim.stealer().steal_batch(&dest), Steal::Success(()));
    (popped(&dest), popped(&victim))
}

/// `steal_batch_and_pop` from ten tasks `1..=10`: the task returned, what the
/// destination's owner pops, then what is left for the victim's owner.
fn after_steal_batch_and_pop(from: Flavor, into: Flavor) -> (u32, Vec<u32>, Vec<u32>) {
    let victim = holding(from, 10);
    let dest = worker(into);
    let task = victim.stealer().steal_batch_and_pop(&dest);
    (task.success().unwrap(), popped(&dest), popped(&victim))
}

#[test]
fn steal_batch_fifo_into_fifo_pops_the_stolen_oldest_first() {
    let (dest, left) = after_steal_batch(Fifo, Fifo);
    assert_eq!(dest, [1, 2, 3, 4, 5]);
    assert_eq!(left, [6, 7, 8, 9, 10]);
}

#[test]
fn steal_batch_fifo_into_lifo_pops_the_stolen_oldest_first() {
    let (dest, left) = after_steal_batch(Fifo, Lifo);
    assert_eq!(dest, [1, 2, 3, 4, 5]);
    assert_eq!(left, [6, 7, 8, 9, 10]);
}

#[test]
fn steal_batch_lifo_into_lifo_pops_the_stolen_newest_first() {
    let (dest, left) = after_steal_batch(Lifo, Lifo);
    assert_eq!(dest, [5, 4, 3, 2, 1]);
    assert_eq!(left, [10, 9, 8, 7, 6]);
}

#[test]
fn steal_batch_lifo_into_fifo_pops_the_stolen_newest_first() {
    let (dest, left) = after_steal_batch(Lifo, Fifo);
    assert_eq!(dest, [5, 4, 3, 2, 1]);
    assert_eq!(left, [10, 9, 8, 7, 6]);
}

#[test]
fn steal_batch_and_pop_fifo_into_fifo_returns_the_oldest() {
    let (task, dest, left) = after_steal_batch_and_pop(Fifo, Fifo);
    assert_eq!(task, 1);
    assert_eq!(dest, [2, 3, 4, 5]);
    assert_eq!(left, [6, 7, 8, 9, 10]);
}

#[test]
fn steal_batch_and_pop_fifo_into_lifo_returns_the_oldest() {
    let (task, dest, left) = after_steal_batch_and_pop(Fifo, Lifo);
    assert_eq!(task, 1);
    assert_eq!(dest, [2, 3, 4, 5]);
    assert_eq!(left, [6, 7, 8, 9, 10]);
}

#[test]
fn steal_batch_and_pop_lifo_into_lifo_returns_the_newest_of_the_batch() {
    let (task, dest, left) = after_steal_batch_and_pop(Lifo, Lifo);
    assert_eq!(task, 5);
    assert_eq!(dest, [4, 3, 2, 1]);
    assert_eq!(left, [10, 9, 8, 7, 6]);
}

#[test]
fn steal_batch_and_pop_lifo_into_fifo_returns_the_newest_of_the_batch() {
    let (task, dest, left) = after_steal_batch_and_pop(Lifo, Fifo);
    assert_eq!(task, 5);
    assert_eq!(dest, [4, 3, 2, 1]);
    assert_eq!(left, [10, 9, 8, 7, 6]);
}

/// The destination's thieves see the other end of the same arrangement.
#[test]
fn thieves_of_the_destination_take_the_batch_from_the_other_end() {
    let expected = [
        (Fifo, Fifo, [1, 2, 3, 4, 5]),
        (Fifo, Lifo, [5, 4, 3, 2, 1]),
        (Lifo, Lifo, [1, 2, 3, 4, 5]),
        (Lifo, Fifo, [5, 4, 3, 2, 1]),
    ];
    for (from, into, order) in expected {
        let victim = holding(from, 10);
        let dest = worker(into);
        assert_eq!(victim.stealer().steal_batch(&dest), Steal::Success(()));
        assert_eq!(stolen(&dest), order, "{from:?} into {into:?}");
    }
}

/// Tasks the destination already held stay where they were: the batch goes
/// in at the destination's push end.
#[test]
fn a_batch_lands_at_the_push_end_of_a_destination_that_holds_tasks() {
    let expected = [
        (Fifo, Fifo, vec![100, 101, 1, 2, 3, 4, 5]),
        (Fifo, Lifo, vec![1, 2, 3, 4, 5, 101, 100]),
        (Lifo, Lifo, vec![5, 4, 3, 2, 1, 101, 100]),
        (Lifo, Fifo, vec![100, 101, 5, 4, 3, 2, 1]),
    ];
    for (from, into, order) in expected {
        let victim = holding(from, 10);
        let dest = worker(into);
        dest.push(100);
        dest.push(101);
        assert_eq!(victim.stealer().steal_batch(&dest), Steal::Success(()));
        assert_eq!(popped(&dest), order, "{from:?} into {into:?}");
    }
}

#[test]
fn steal_batch_and_pop_leaves_the_destinations_own_tasks_in_place() {
    let expected = [
        (Fifo, Fifo, 1, vec![100, 2, 3, 4, 5]),
        (Fifo, Lifo, 1, vec![2, 3, 4, 5, 100]),
        (Lifo, Lifo, 5, vec![4, 3, 2, 1, 100]),
        (Lifo, Fifo, 5, vec![100, 4, 3, 2, 1]),
    ];
    for (from, into, task, order) in expected {
        let victim = holding(from, 10);
        let dest = worker(into);
        dest.push(100);
        let got = victim.stealer().steal_batch_and_pop(&dest);
        assert_eq!(got, Steal::Success(task), "{from:?} into {into:?}");
        assert_eq!(popped(&dest), order, "{from:?} into {into:?}");
    }
}

const PAIRS: [(Flavor, Flavor); 4] = [(Fifo, Fifo), (Fifo, Lifo), (Lifo, Lifo), (Lifo, Fifo)];

/// How many tasks move: half of the victim's, rounded up, at most 32.
#[test]
fn steal_batch_takes_half_rounded_up_and_at_most_32() {
    for (from, into) in PAIRS {
        for count in 1..=80 {
            let victim = holding(from, count);
            let dest = worker(into);
            assert_eq!(victim.stealer().steal_batch(&dest), Steal::Success(()));
            let expected = count.div_ceil(2).min(32) as usize;
            assert_eq!(
                dest.len(),
                expected,
                "{count} tasks, {from:?} into {into:?}"
            );
            assert_eq!(victim.len(), count as usize - expected);
        }
    }
}

/// `steal_batch_and_pop` takes as many in all, the returned task included.
#[test]
fn steal_batch_and_pop_takes_half_rounded_up_and_at_most_32_in_all() {
    for (from, into) in PAIRS {
        for count in 1..=80 {
            let victim = holding(from, count);
            let dest = worker(into);
            assert!(victim.stealer().steal_batch_and_pop(&dest).is_success());
            let expected = count.div_ceil(2).min(32) as usize;
            assert_eq!(
                dest.len() + 1,
                expected,
                "{count} tasks, {from:?} into {into:?}"
            );
            assert_eq!(victim.len(), count as usize - expected);
        }
    }
}

#[test]
fn steal_batch_with_limit_takes_at_most_the_limit() {
    let expected = [
        (Fifo, Fifo, [1, 2, 3]),
        (Fifo, Lifo, [1, 2, 3]),
        (Lifo, Lifo, [3, 2, 1]),
        (Lifo, Fifo, [3, 2, 1]),
    ];
    for (from, into, order) in expected {
        let victim = holding(from, 10);
        let dest = worker(into);
        let got = victim.stealer().steal_batch_with_limit(&dest, 3);
        assert_eq!(got, Steal::Success(()));
        assert_eq!(popped(&dest), order, "{from:?} into {into:?}");
        assert_eq!(victim.len(), 7);
    }
}

#[test]
fn steal_batch_with_limit_and_pop_takes_at_most_the_limit_in_all() {
    let expected = [
        (Fifo, Fifo, 1, [2, 3]),
        (Fifo, Lifo, 1, [2, 3]),
        (Lifo, Lifo, 3, [2, 1]),
        (Lifo, Fifo, 3, [2, 1]),
    ];
    for (from, into, task, order) in expected {
        let victim = holding(from, 10);
        let dest = worker(into);
        let got = victim.stealer().steal_batch_with_limit_and_pop(&dest, 3);
        assert_eq!(got, Steal::Success(task), "{from:?} into {into:?}");
        assert_eq!(popped(&dest), order, "{from:?} into {into:?}");
        assert_eq!(victim.len(), 7);
    }
}

/// A limit above 32 is allowed and still takes only half.
#[test]
fn a_large_limit_still_takes_half() {
    for (from, into) in PAIRS {
        let victim = holding(from, 100);
        let dest = worker(into);
        let stealer = victim.stealer();
        assert_eq!(
            stealer.steal_batch_with_limit(&dest, usize::MAX),
            Steal::Success(())
        );
        assert_eq!(dest.len(), 50, "{from:?} into {into:?}");
        assert!(stealer
            .steal_batch_with_limit_and_pop(&dest, usize::MAX)
            .is_success());
        assert_eq!(dest.len(), 50 + 24, "{from:?} into {into:?}");
        assert_eq!(victim.len(), 25);
    }
}

#[test]
fn steal_batch_with_limit_and_pop_with_limit_one_moves_nothing_into_dest() {
    for (from, into) in PAIRS {
        let victim = holding(from, 10);
        let dest = worker(into);
        let got = victim.stealer().steal_batch_with_limit_and_pop(&dest, 1);
        // From a LIFO victim the one task is both the oldest and the newest
        // of its batch.
        assert_eq!(got, Steal::Success(1), "{from:?} into {into:?}");
        assert!(dest.is_empty());
        assert_eq!(victim.len(), 9);
    }
}

#[test]
#[should_panic]
fn steal_batch_with_limit_zero_panics() {
    let victim = holding(Fifo, 4);
    let _ = victim.stealer().steal_batch_with_limit(&worker(Fifo), 0);
}

#[test]
#[should_panic]
fn steal_batch_with_limit_and_pop_zero_panics() {
    let victim = holding(Lifo, 4);
    let _ = victim
        .stealer()
        .steal_batch_with_limit_and_pop(&worker(Lifo), 0);
}

#[test]
fn every_batch_steal_from_an_empty_victim_is_empty_and_moves_nothing() {
    for (from, into) in PAIRS {
        let victim = worker(from);
        let stealer = victim.stealer();
        let dest = holding(into, 2);
        assert_eq!(stealer.steal_batch(&dest), Steal::Empty);
        assert_eq!(stealer.steal_batch_with_limit(&dest, 5), Steal::Empty);
        assert_eq!(stealer.steal_batch_and_pop(&dest), Steal::Empty);
        assert_eq!(
            stealer.steal_batch_with_limit_and_pop(&dest, 5),
            Steal::Empty
        );
        assert_eq!(dest.len(), 2, "{from:?} into {into:?}");
    }
}

#[test]
fn a_victim_emptied_by_its_owner_yields_empty() {
    for (from, into) in PAIRS {
        let victim = holding(from, 3);
        let stealer = victim.stealer();
        popped(&victim);
        let dest = worker(into);
        assert_eq!(stealer.steal_batch(&dest), Steal::Empty);
        assert_eq!(stealer.steal_batch_and_pop(&dest), Steal::Empty);
    }
}

/// One task left: `steal_batch` moves it, `steal_batch_and_pop` returns it.
#[test]
fn the_last_task_is_moved_or_returned() {
    for (from, into) in PAIRS {
        let dest = worker(into);
        let victim = holding(from, 1);
        assert_eq!(victim.stealer().steal_batch(&dest), Steal::Success(()));
        assert_eq!(popped(&dest), [1]);
        let victim = holding(from, 1);
        let got = victim.stealer().steal_batch_and_pop(&dest);
        assert_eq!(got, Steal::Success(1));
        assert!(dest.is_empty() && victim.is_empty());
    }
}

/// Stealing a batch from one's own deque into itself moves nothing.
#[test]
fn steal_batch_into_the_victim_itself_moves_nothing() {
    for flavor in [Lifo, Fifo] {
        let victim = holding(flavor, 6);
        let stealer = victim.stealer();
        assert_eq!(stealer.steal_batch(&victim), Steal::Success(()));
        assert_eq!(
            stealer.steal_batch_with_limit(&victim, 2),
            Steal::Success(())
        );
        assert_eq!(victim.len(), 6);
        popped(&victim);
        assert_eq!(stealer.steal_batch(&victim), Steal::Empty);
    }
}

/// ... and `steal_batch_and_pop` into itself is the owner's pop: the newest
/// task of a LIFO deque, the oldest of a FIFO one.
#[test]
fn steal_batch_and_pop_into_the_victim_itself_is_a_pop() {
    for (flavor, first, rest) in [(Lifo, 6, [5, 4, 3, 2, 1]), (Fifo, 1, [2, 3, 4, 5, 6])] {
        let victim = holding(flavor, 6);
        let stealer = victim.stealer();
        assert_eq!(stealer.steal_batch_and_pop(&victim), Steal::Success(first));
        assert_eq!(popped(&victim), rest);
        assert_eq!(stealer.steal_batch_and_pop(&victim), Steal::Empty);
        assert_eq!(
            stealer.steal_batch_with_limit_and_pop(&victim, 1),
            Steal::Empty
        );
    }
}

/// Many batches in a row, alternating the two methods, move every task once
/// and keep the victim's order within each batch.
#[test]
fn repeated_batches_drain_the_victim_exactly_once() {
    for (from, into) in PAIRS {
        let victim = holding(from, 200);
        let stealer = victim.stealer();
        let dest = worker(into);
        let mut seen = Vec::new();
        loop {
            match stealer.steal_batch(&dest) {
                Steal::Success(()) => seen.extend(popped(&dest)),
                Steal::Empty => break,
                Steal::Retry => unreachable!("no other thread"),
            }
            if let Steal::Success(task) = stealer.steal_batch_and_pop(&dest) {
                seen.push(task);
                seen.extend(popped(&dest));
            }
        }
        seen.sort_unstable();
        assert_eq!(
            seen,
            (1..=200).collect::<Vec<_>>(),
            "{from:?} into {into:?}"
        );
    }
}

/// A destination that must grow to take the batch keeps its order.
#[test]
fn a_batch_that_makes_the_destination_grow_keeps_the_order() {
    for (from, into) in PAIRS {
        let victim = holding(from, 64);
        let dest = worker(into);
        for task in 1000..1040 {
            dest.push(task);
        }
        assert_eq!(victim.stealer().steal_batch(&dest), Steal::Success(()));
        let mut order = popped(&dest);
        let own: Vec<u32> = order.iter().copied().filter(|&t| t >= 1000).collect();
        order.retain(|&t| t < 1000);
        let expected: Vec<u32> = match from {
            Fifo => (1..=32).collect(),
            Lifo => (1..=32).rev().collect(),
        };
        assert_eq!(order, expected, "{from:?} into {into:?}");
        assert_eq!(own.len(), 40);
    }
}
