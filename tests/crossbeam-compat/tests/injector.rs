//! `Injector` as crossbeam-deque 0.8 specifies it: its own injector tests
//! (tests/injector.rs, the injector cases of tests/steal.rs) rewritten, plus
//! every public item and every destination flavour. Written against
//! crossbeam-deque only, run against the real crate and against chase-lev.

use crossbeam_deque::{Injector, Steal, Worker};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::thread;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Flavor {
    Lifo,
    Fifo,
}
use Flavor::{Fifo, Lifo};

fn worker<T>(flavor: Flavor) -> Worker<T> {
    match flavor {
        Lifo => Worker::new_lifo(),
        Fifo => Worker::new_fifo(),
    }
}

/// An injector holding `1..=count`, pushed in that order.
fn holding(count: u32) -> Injector<u32> {
    let injector = Injector::new();
    (1..=count).for_each(|task| injector.push(task));
    injector
}

fn popped(worker: &Worker<u32>) -> Vec<u32> {
    std::iter::from_fn(|| worker.pop()).collect()
}

fn drained(injector: &Injector<u32>) -> Vec<u32> {
    std::iter::from_fn(|| injector.steal().success()).collect()
}

#[test]
fn an_injector_hands_out_tasks_first_in_first_out() {
    let q = Injector::new();
    assert_eq!(q.steal(), Steal::Empty);
    q.push(1);
    q.push(2);
    assert_eq!(q.steal(), Steal::Success(1));
    assert_eq!(q.steal(), Steal::Success(2));
    assert_eq!(q.steal(), Steal::Empty);
    q.push(3);
    assert_eq!(q.steal(), Steal::Success(3));
    assert_eq!(q.steal(), Steal::Empty);
}

#[test]
fn len_and_is_empty_follow_pushes_and_steals() {
    let q = Injector::new();
    assert!(q.is_empty());
    assert_eq!(q.len(), 0);
    q.push(1);
    q.push(2);
    assert!(!q.is_empty());
    assert_eq!(q.len(), 2);
    let _ = q.steal();
    assert_eq!(q.len(), 1);
    let _ = q.steal();
    assert!(q.is_empty());
    q.push(3);
    assert_eq!(q.len(), 1);
    let _ = q.steal();
    assert!(q.is_empty());
}

#[test]
fn len_is_exact_across_many_blocks_of_tasks() {
    let q = holding(1000);
    assert_eq!(q.len(), 1000);
    for taken in 1..=1000 {
        assert_eq!(q.steal(), Steal::Success(taken));
        assert_eq!(q.len(), 1000 - taken as usize);
    }
    assert!(q.is_empty());
}

#[test]
fn default_is_an_empty_injector() {
    let q: Injector<String> = Injector::default();
    assert!(q.is_empty());
    assert_eq!(q.steal(), Steal::Empty);
}

#[test]
fn an_injector_prints_without_its_contents() {
    let q = holding(3);
    assert_eq!(format!("{q:?}"), "Injector { .. }");
    assert_eq!(format!("{q:>17?}"), "  Injector { .. }");
}

#[test]
fn an_injector_is_send_and_sync_for_send_tasks() {
    fn shared<T: Send + Sync>(_: &T) {}
    shared(&Injector::<std::cell::Cell<u8>>::new());
}

/// From an injector the destination's owner pops the batch oldest first,
/// whatever its flavour.
#[test]
fn steal_batch_into_either_flavour_pops_the_oldest_first() {
    for into in [Fifo, Lifo] {
        let q = holding(10);
        let dest = worker(into);
        assert_eq!(q.steal_batch(&dest), Steal::Success(()));
        assert_eq!(popped(&dest), [1, 2, 3, 4, 5], "into {into:?}");
        assert_eq!(drained(&q), [6, 7, 8, 9, 10]);
    }
}

#[test]
fn steal_batch_and_pop_into_either_flavour_returns_the_oldest() {
    for into in [Fifo, Lifo] {
        let q = holding(10);
        let dest = worker(into);
        assert_eq!(q.steal_batch_and_pop(&dest), Steal::Success(1));
        assert_eq!(popped(&dest), [2, 3, 4, 5], "into {into:?}");
        assert_eq!(drained(&q), [6, 7, 8, 9, 10]);
    }
}

#[test]
fn a_batch_lands_at_the_push_end_of_a_destination_that_holds_tasks() {
    for (into, order) in [
        (Fifo, vec![100, 1, 2, 3, 4, 5]),
        (Lifo, vec![1, 2, 3, 4, 5, 100]),
    ] {
        let q = holding(10);
        let dest = worker(into);
        dest.push(100);
        assert_eq!(q.steal_batch(&dest), Steal::Success(()));
        assert_eq!(popped(&dest), order, "into {into:?}");
    }
}

/// While all the tasks fit in one of crossbeam's blocks (fewer than 63
/// pushed into a fresh injector), a batch takes half, rounded up, and at most
/// 32. Beyond that, crossbeam-deque may take up to the end of its block, an
/// implementation detail that its documentation leaves unspecified.
#[test]
fn steal_batch_takes_half_rounded_up_and_at_most_32() {
    for into in [Fifo, Lifo] {
        for count in 1..=62 {
            let q = holding(count);
            let dest = worker(into);
            assert_eq!(q.steal_batch(&dest), Steal::Success(()));
            let expected = count.div_ceil(2).min(32) as usize;
            assert_eq!(dest.len(), expected, "{count} tasks into {into:?}");
            assert_eq!(q.len(), count as usize - expected);
        }
    }
}

#[test]
fn steal_batch_and_pop_takes_half_rounded_up_and_at_most_32_in_all() {
    for into in [Fifo, Lifo] {
        for count in 1..=62 {
            let q = holding(count);
            let dest = worker(into);
            assert_eq!(q.steal_batch_and_pop(&dest), Steal::Success(1));
            let expected = count.div_ceil(2).min(32) as usize;
            assert_eq!(dest.len() + 1, expected, "{count} tasks into {into:?}");
            assert_eq!(q.len(), count as usize - expected);
        }
    }
}

#[test]
fn the_limits_cap_the_batch() {
    for into in [Fifo, Lifo] {
        let q = holding(20);
        let dest = worker(into);
        assert_eq!(q.steal_batch_with_limit(&dest, 3), Steal::Success(()));
        assert_eq!(popped(&dest), [1, 2, 3], "into {into:?}");
        assert_eq!(
            q.steal_batch_with_limit_and_pop(&dest, 3),
            Steal::Success(4)
        );
        assert_eq!(popped(&dest), [5, 6], "into {into:?}");
        assert_eq!(
            q.steal_batch_with_limit_and_pop(&dest, 1),
            Steal::Success(7)
        );
        assert!(dest.is_empty());
        assert_eq!(q.len(), 13);
    }
}

/// crossbeam's documented examples: a large limit still takes half.
#[test]
fn a_large_limit_still_takes_half() {
    let q = holding(6);
    let dest = Worker::new_fifo();
    assert_eq!(
        q.steal_batch_with_limit_and_pop(&dest, 2),
        Steal::Success(1)
    );
    assert_eq!(popped(&dest), [2]);
    q.push(7);
    q.push(8);
    assert_eq!(
        q.steal_batch_with_limit_and_pop(&dest, usize::MAX),
        Steal::Success(3)
    );
    assert_eq!(popped(&dest), [4, 5]);
    assert_eq!(
        q.steal_batch_with_limit(&dest, usize::MAX),
        Steal::Success(())
    );
    assert_eq!(popped(&dest), [6, 7]);
    assert_eq!(drained(&q), [8]);
}

#[test]
#[should_panic]
fn steal_batch_with_limit_zero_panics() {
    let _ = holding(4).steal_batch_with_limit(&Worker::new_fifo(), 0);
}

#[test]
#[should_panic]
fn steal_batch_with_limit_and_pop_zero_panics() {
    let _ = holding(4).steal_batch_with_limit_and_pop(&Worker::new_lifo(), 0);
}

#[test]
fn every_steal_from_an_empty_injector_is_empty_and_moves_nothing() {
    for into in [Fifo, Lifo] {
        let q = Injector::<u32>::new();
        let dest = worker(into);
        dest.push(100);
        assert_eq!(q.steal(), Steal::Empty);
        assert_eq!(q.steal_batch(&dest), Steal::Empty);
        assert_eq!(q.steal_batch_with_limit(&dest, 4), Steal::Empty);
        assert_eq!(q.steal_batch_and_pop(&dest), Steal::Empty);
        assert_eq!(q.steal_batch_with_limit_and_pop(&dest, 4), Steal::Empty);
        assert_eq!(popped(&dest), [100]);
    }
}

/// Alternating every kind of steal drains the injector, each task once and
/// in push order across batches.
#[test]
fn repeated_steals_of_every_kind_take_each_task_once_in_order() {
    for into in [Fifo, Lifo] {
        let q = holding(1000);
        let dest = worker(into);
        let mut seen = Vec::new();
        for round in 0.. {
            let progress = match round % 5 {
                0 => q.steal().success().map(|task| seen.push(task)),
                1 => q.steal_batch(&dest).success(),
                2 => q.steal_batch_with_limit(&dest, 7).success(),
                3 => q
                    .steal_batch_and_pop(&dest)
                    .success()
                    .map(|task| seen.push(task)),
                _ => q
                    .steal_batch_with_limit_and_pop(&dest, 5)
                    .success()
                    .map(|task| seen.push(task)),
            };
            seen.extend(popped(&dest));
            if progress.is_none() && q.is_empty() {
                break;
            }
        }
        assert_eq!(seen, (1..=1000).collect::<Vec<_>>(), "into {into:?}");
    }
}

/// A task far larger than a thread's stack is fine: blocks are made on the
/// heap (crossbeam's stack_overflow test).
#[test]
fn a_huge_task_goes_through() {
    struct Huge([u8; 32 * 1024]);
    let q = Injector::new();
    q.push(Huge([7; 32 * 1024]));
    match q.steal() {
        Steal::Success(Huge(bytes)) => assert!(bytes.iter().all(|&b| b == 7)),
        _ => panic!("the huge task was not stolen"),
    }
}

#[test]
fn one_consumer_receives_every_push_in_order() {
    const TASKS: usize = 20_000;
    let q = Injector::new();
    thread::scope(|scope| {
        scope.spawn(|| {
            for expected in 0..TASKS {
                loop {
                    if let Steal::Success(task) = q.steal() {
                        assert_eq!(task, expected);
                        break;
                    }
                    std::hint::spin_loop();
                }
            }
            assert_eq!(q.steal(), Steal::Empty);
        });
        (0..TASKS).for_each(|task| q.push(task));
    });
}

/// Four producers, four consumers: every push is stolen exactly once.
#[test]
fn many_producers_and_consumers_move_each_push_once() {
    const THREADS: usize = 4;
    const TASKS: usize = 10_000;
    let q = Injector::new();
    let seen: Vec<AtomicUsize> = (0..TASKS).map(|_| AtomicUsize::new(0)).collect();
    thread::scope(|scope| {
        for _ in 0..THREADS {
            scope.spawn(|| (0..TASKS).for_each(|task| q.push(task)));
        }
        for _ in 0..THREADS {
            scope.spawn(|| {
                for _ in 0..TASKS {
                    loop {
                        if let Steal::Success(task) = q.steal() {
                            seen[task].fetch_add(1, SeqCst);
                            break;
                        }
                        std::hint::spin_loop();
                    }
                }
            });
        }
    });
    assert!(seen.iter().all(|count| count.load(SeqCst) == THREADS));
}

/// Eight consumers race over a full injector: each sees increasing tasks.
#[test]
fn a_stampede_of_consumers_each_see_increasing_tasks() {
    const THREADS: usize = 8;
    const TASKS: usize = 20_000;
    let q = Injector::new();
    (1..=TASKS).for_each(|task| q.push(Box::new(task)));
    let remaining = AtomicUsize::new(TASKS);
    thread::scope(|scope| {
        for _ in 0..THREADS {
            scope.spawn(|| {
                let mut last = 0;
                while remaining.load(SeqCst) > 0 {
                    if let Steal::Success(task) = q.steal() {
                        assert!(*task > last, "a consumer saw {task} after {last}");
                        last = *task;
                        remaining.fetch_sub(1, SeqCst);
                    }
                }
            });
        }
    });
    assert!(q.is_empty());
}

/// Consumers with every stealing method, into workers of both flavours,
/// against a producer: every task is taken exactly once.
#[test]
fn consumers_with_every_method_take_every_task_once() {
    const THREADS: usize = 8;
    const TASKS: usize = 20_000;
    let q = Injector::new();
    let done = AtomicBool::new(false);
    let hits = AtomicUsize::new(0);
    let seen: Vec<AtomicUsize> = (0..TASKS).map(|_| AtomicUsize::new(0)).collect();
    let record = |task: usize| {
        seen[task].fetch_add(1, SeqCst);
        hits.fetch_add(1, SeqCst);
    };
    thread::scope(|scope| {
        for thread in 0..THREADS {
            let (q, done, record) = (&q, &done, &record);
            scope.spawn(move || {
                let own = worker(if thread % 2 == 0 { Lifo } else { Fifo });
                while !done.load(SeqCst) {
                    if let Steal::Success(task) = q.steal() {
                        record(task);
                    }
                    let _ = q.steal_batch(&own);
                    if let Steal::Success(task) = q.steal_batch_and_pop(&own) {
                        record(task);
                    }
                    while let Some(task) = own.pop() {
                        record(task);
                    }
                }
            });
        }
        (0..TASKS).for_each(|task| q.push(task));
        while hits.load(SeqCst) < TASKS {
            std::hint::spin_loop();
        }
        done.store(true, SeqCst);
    });
    assert!(seen.iter().all(|count| count.load(SeqCst) == 1));
}

/// Tasks left in the injector when it is dropped are dropped exactly once,
/// and none that was taken is dropped again.
#[test]
fn tasks_are_dropped_once_whether_taken_or_left_behind() {
    const THREADS: usize = 4;
    const TASKS: usize = 20_000;
    const TAKES_PER_CONSUMER: usize = 1000;

    struct Counted(usize, Arc<Mutex<Vec<usize>>>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.1.lock().unwrap().push(self.0);
        }
    }

    let q = Injector::new();
    let dropped = Arc::new(Mutex::new(Vec::new()));
    (0..TASKS).for_each(|task| q.push(Counted(task, dropped.clone())));
    let remaining = AtomicUsize::new(TASKS);
    thread::scope(|scope| {
        for _ in 0..THREADS {
            let (q, remaining) = (&q, &remaining);
            scope.spawn(move || {
                let own = Worker::new_fifo();
                let mut taken = 0;
                while taken < TAKES_PER_CONSUMER {
                    let mut now = usize::from(q.steal().is_success());
                    let _ = q.steal_batch(&own);
                    now += usize::from(q.steal_batch_and_pop(&own).is_success());
                    while own.pop().is_some() {
                        now += 1;
                    }
                    remaining.fetch_sub(now, SeqCst);
                    taken += now;
                }
            });
        }
    });
    let left = remaining.load(SeqCst);
    assert!(left > 0, "the test needs tasks left behind");
    {
        let mut seen = dropped.lock().unwrap();
        assert_eq!(seen.len(), TASKS - left);
        seen.clear();
    }
    drop(q);
    let mut seen = dropped.lock().unwrap();
    assert_eq!(seen.len(), left);
    seen.sort_unstable();
    // Consumers take from the front only, so what is left is the newest run.
    assert_eq!(*seen, (TASKS - left..TASKS).collect::<Vec<_>>());
}
