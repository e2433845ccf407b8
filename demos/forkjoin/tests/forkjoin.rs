//! The fork-join pool of this package (built on chase-lev): its
//! results are right, no task is lost or run twice, `join` waits for closures
//! that borrow its caller's stack, panics come out where the docs say, and
//! idle threads go to sleep. Small sizes: this runs in `cargo test`.
//! Not under miri: it spawns real thread pools and runs for seconds there.
#![cfg(not(miri))]

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use chase_lev_forkjoin::workloads::{
    self, fib, fib_serial, quicksort, random_values, tree_sum, ChaseLevJoin, Random, Serial, Tree,
};
use chase_lev_forkjoin::{join, ThreadPool};

/// Every test uses more threads than the machine may have cores, so that
/// steals happen even on two cores.
const THREADS: usize = 4;

#[test]
fn fib_on_the_pool_equals_the_serial_fib() {
    let pool = ThreadPool::new(THREADS);
    for cutoff in [0, 1, 5, 12] {
        assert_eq!(
            pool.install(|| fib(ChaseLevJoin, 24, cutoff)),
            fib_serial(24),
            "cutoff {cutoff}"
        );
    }
}

#[test]
fn quicksort_on_the_pool_sorts_like_the_standard_library() {
    let pool = ThreadPool::new(THREADS);
    for (length, cutoff) in [
        (0, 16),
        (1, 16),
        (1_000, 16),
        (100_000, 64),
        (100_000, 5_000),
    ] {
        let mut values = random_values(length, length as u64 + 1);
        let mut expected = values.clone();
        expected.sort_unstable();
        pool.install(|| quicksort(ChaseLevJoin, &mut values, cutoff));
        assert!(values == expected, "length {length}, cutoff {cutoff}");
    }
}

#[test]
fn quicksort_with_many_equal_values_still_sorts() {
    let pool = ThreadPool::new(THREADS);
    let mut values: Vec<u64> = random_values(50_000, 9)
        .into_iter()
        .map(|value| value % 7)
        .collect();
    let mut expected = values.clone();
    expected.sort_unstable();
    pool.install(|| quicksort(ChaseLevJoin, &mut values, 32));
    assert!(values == expected);
}

#[test]
fn the_tree_sum_on_the_pool_equals_the_serial_sum() {
    let pool = ThreadPool::new(THREADS);
    let tree = Tree::build(100_000, &mut Random::new(3));
    let expected = tree_sum(Serial, &tree, usize::MAX);
    for cutoff in [1, 64, 10_000] {
        assert_eq!(
            pool.install(|| tree_sum(ChaseLevJoin, &tree, cutoff)),
            expected,
            "cutoff {cutoff}"
        );
    }
    workloads::drop_tree(tree);
}

/// Splits `[start, end)` in halves with `join` down to single leaves; each
/// leaf marks its own slot. The first leaf holds on until `stolen` says a
/// thief has taken something (or a generous deadline passes), so that the
/// steals the test counts do not depend on how fast the owner runs alone.
fn mark_leaves(marks: &[AtomicU8], start: usize, end: usize, stolen: &(dyn Fn() -> bool + Sync)) {
    if end - start == 1 {
        if start == 0 {
            let deadline = Instant::now() + Duration::from_secs(10);
            while !stolen() && Instant::now() < deadline {
                std::thread::yield_now();
            }
        }
        marks[start].fetch_add(1, Ordering::Relaxed);
        return;
    }
    let middle = start + (end - start) / 2;
    join(
        || mark_leaves(marks, start, middle, stolen),
        || mark_leaves(marks, middle, end, stolen),
    );
}

#[test]
fn every_joined_task_runs_exactly_once() {
    let pool = ThreadPool::new(THREADS);
    let marks: Vec<AtomicU8> = (0..100_000).map(|_| AtomicU8::new(0)).collect();
    let stolen = || pool.stats().steals > 0;
    pool.install(|| mark_leaves(&marks, 0, marks.len(), &stolen));
    let wrong: Vec<usize> = (0..marks.len())
        .filter(|&leaf| marks[leaf].load(Ordering::Relaxed) != 1)
        .collect();
    assert!(
        wrong.is_empty(),
        "{} leaves ran zero or several times, first {:?}",
        wrong.len(),
        wrong.first()
    );
    assert!(
        pool.stats().steals > 0,
        "with {THREADS} threads some task should have been stolen"
    );
}

#[test]
fn join_returns_only_after_both_closures_wrote_to_the_callers_stack() {
    let pool = ThreadPool::new(THREADS);
    for round in 0..200 {
        let mut left = [0u64; 64];
        let mut right = [0u64; 64];
        pool.install(|| {
            join(
                || {
                    left.iter_mut()
                        .enumerate()
                        .for_each(|(index, slot)| *slot = index as u64 + round)
                },
                || {
                    // Give a thief time to take this closure.
                    std::thread::yield_now();
                    right
                        .iter_mut()
                        .enumerate()
                        .for_each(|(index, slot)| *slot = index as u64 * 2 + round)
                },
            )
        });
        assert!(left
            .iter()
            .enumerate()
            .all(|(index, &slot)| slot == index as u64 + round));
        assert!(right
            .iter()
            .enumerate()
            .all(|(index, &slot)| slot == index as u64 * 2 + round));
    }
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    match payload.downcast::<&str>() {
        Ok(message) => message.to_string(),
        Err(payload) => *payload.downcast::<String>().expect("a string payload"),
    }
}

/// Waits (yielding) until `flag` is set or a generous deadline passes.
fn wait_for(flag: &AtomicBool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !flag.load(Ordering::Acquire) {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::yield_now();
    }
    true
}

#[test]
fn a_panic_in_the_stolen_closure_comes_out_of_join_after_the_first_finished() {
    let pool = ThreadPool::new(THREADS);
    let b_started = AtomicBool::new(false);
    let a_finished = AtomicBool::new(false);
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        pool.install(|| {
            join(
                || {
                    // Hold on until a thief has taken the second closure.
                    assert!(wait_for(&b_started), "nobody stole the second closure");
                    a_finished.store(true, Ordering::Release);
                },
                || {
                    b_started.store(true, Ordering::Release);
                    panic!("the second closure panicked")
                },
            )
        })
    }));
    assert_eq!(
        panic_message(outcome.unwrap_err()),
        "the second closure panicked"
    );
    assert!(
        a_finished.load(Ordering::Acquire),
        "join unwound before its first closure finished"
    );
    // The pool survived: a worker never unwinds.
    assert_eq!(pool.install(|| fib(ChaseLevJoin, 20, 5)), fib_serial(20));
}

#[test]
fn a_panic_in_the_first_closure_waits_for_a_stolen_second_then_propagates() {
    let pool = ThreadPool::new(THREADS);
    let b_started = AtomicBool::new(false);
    let b_finished = AtomicBool::new(false);
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        pool.install(|| {
            join(
                || {
                    assert!(wait_for(&b_started), "nobody stole the second closure");
                    panic!("the first closure panicked")
                },
                || {
                    b_started.store(true, Ordering::Release);
                    std::thread::sleep(Duration::from_millis(20));
                    b_finished.store(true, Ordering::Release);
                },
            )
        })
    }));
    assert_eq!(
        panic_message(outcome.unwrap_err()),
        "the first closure panicked"
    );
    assert!(
        b_finished.load(Ordering::Acquire),
        "join unwound while a thief still ran its second closure"
    );
}

#[test]
fn a_panic_in_the_first_closure_drops_an_unstolen_second_unrun() {
    // One thread: nobody can steal, so the second closure is popped back.
    let pool = ThreadPool::new(1);
    let b_ran = AtomicBool::new(false);
    let outcome = panic::catch_unwind(AssertUnwindSafe(|| {
        pool.install(|| join(|| panic!("first"), || b_ran.store(true, Ordering::Relaxed)))
    }));
    assert_eq!(panic_message(outcome.unwrap_err()), "first");
    assert!(!b_ran.load(Ordering::Relaxed));
}

#[test]
fn install_from_several_outside_threads_at_once_returns_each_its_own_result() {
    let pool = ThreadPool::new(THREADS);
    std::thread::scope(|scope| {
        let handles: Vec<_> = (15..23u32)
            .map(|n| {
                let pool = &pool;
                scope.spawn(move || (n, pool.install(|| fib(ChaseLevJoin, n, 4))))
            })
            .collect();
        for handle in handles {
            let (n, value) = handle.join().unwrap();
            assert_eq!(value, fib_serial(n), "fib({n})");
        }
    });
}

#[test]
fn join_outside_a_pool_runs_both_closures_on_the_calling_thread() {
    let here = std::thread::current().id();
    let (a, b) = join(
        || std::thread::current().id(),
        || std::thread::current().id(),
    );
    assert_eq!((a, b), (here, here));
}

#[test]
fn idle_threads_fall_asleep_instead_of_spinning() {
    let pool = ThreadPool::new(THREADS);
    let total = AtomicUsize::new(0);
    pool.install(|| tree_sum(ChaseLevJoin, &Tree::build(10_000, &mut Random::new(5)), 16));
    total.fetch_add(1, Ordering::Relaxed);
    // A liveness property, not a timing one: the deadline is generous.
    let deadline = Instant::now() + Duration::from_secs(20);
    while pool.sleeping_threads() < THREADS {
        assert!(
            Instant::now() < deadline,
            "only {} of {THREADS} idle threads asleep",
            pool.sleeping_threads()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    // And they wake up for new work.
    assert_eq!(pool.install(|| fib(ChaseLevJoin, 22, 6)), fib_serial(22));
}
