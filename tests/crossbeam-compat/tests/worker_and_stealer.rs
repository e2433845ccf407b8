//! `Worker`, `Stealer` and `Steal` as crossbeam-deque 0.8 specifies them:
//! its own test suite (tests/lifo.rs, tests/fifo.rs, tests/steal.rs)
//! rewritten, plus the items that suite leaves out. Written against
//! crossbeam-deque only, run against the real crate and against chase-lev.

use crossbeam_deque::{Steal, Stealer, Worker};
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

/// A small generator for the stress tests (no dependency on `rand`).
struct Rng(u64);

impl Rng {
    fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % bound
    }
}

#[test]
fn a_lifo_owner_pops_the_newest_and_a_thief_steals_the_oldest() {
    let w = Worker::new_lifo();
    let s = w.stealer();
    assert_eq!(w.pop(), None);
    assert_eq!(s.steal(), Steal::Empty);
    w.push(1);
    assert_eq!(w.pop(), Some(1));
    assert_eq!(s.steal(), Steal::Empty);
    w.push(2);
    assert_eq!(s.steal(), Steal::Success(2));
    assert_eq!(w.pop(), None);
    for task in 3..=5 {
        w.push(task);
    }
    assert_eq!(s.steal(), Steal::Success(3));
    assert_eq!(s.steal(), Steal::Success(4));
    assert_eq!(s.steal(), Steal::Success(5));
    assert_eq!(s.steal(), Steal::Empty);
    for task in 6..=9 {
        w.push(task);
    }
    assert_eq!(w.pop(), Some(9));
    assert_eq!(s.steal(), Steal::Success(6));
    assert_eq!(w.pop(), Some(8));
    assert_eq!(w.pop(), Some(7));
    assert_eq!(w.pop(), None);
}

#[test]
fn a_fifo_owner_and_a_thief_both_take_the_oldest() {
    let w = Worker::new_fifo();
    let s = w.stealer();
    assert_eq!(w.pop(), None);
    assert_eq!(s.steal(), Steal::Empty);
    w.push(1);
    assert_eq!(w.pop(), Some(1));
    assert_eq!(s.steal(), Steal::Empty);
    w.push(2);
    assert_eq!(s.steal(), Steal::Success(2));
    assert_eq!(w.pop(), None);
    for task in 3..=5 {
        w.push(task);
    }
    assert_eq!(s.steal(), Steal::Success(3));
    assert_eq!(s.steal(), Steal::Success(4));
    assert_eq!(s.steal(), Steal::Success(5));
    assert_eq!(s.steal(), Steal::Empty);
    for task in 6..=9 {
        w.push(task);
    }
    assert_eq!(w.pop(), Some(6));
    assert_eq!(s.steal(), Steal::Success(7));
    assert_eq!(w.pop(), Some(8));
    assert_eq!(w.pop(), Some(9));
    assert_eq!(w.pop(), None);
}

#[test]
fn a_thief_steals_in_push_order_from_either_flavour() {
    for flavor in [Lifo, Fifo] {
        let w = worker(flavor);
        (1..=3).for_each(|task| w.push(task));
        let s = w.stealer();
        assert_eq!(s.steal(), Steal::Success(1));
        assert_eq!(s.steal(), Steal::Success(2));
        assert_eq!(s.steal(), Steal::Success(3));
        assert_eq!(s.steal(), Steal::Empty);
    }
}

#[test]
fn len_and_is_empty_agree_for_owner_and_thief() {
    for flavor in [Lifo, Fifo] {
        let w = worker(flavor);
        let s = w.stealer();
        assert!(w.is_empty() && s.is_empty());
        assert_eq!((w.len(), s.len()), (0, 0));
        w.push(1);
        w.push(2);
        assert!(!w.is_empty() && !s.is_empty());
        assert_eq!((w.len(), s.len()), (2, 2));
        let _ = w.pop();
        assert_eq!((w.len(), s.len()), (1, 1));
        let _ = s.steal();
        assert!(w.is_empty() && s.is_empty());
        w.push(3);
        assert_eq!((w.len(), s.len()), (1, 1));
    }
}

#[test]
fn every_stealer_and_clone_sees_the_same_deque() {
    let w = Worker::new_lifo();
    let first = w.stealer();
    let second = first.clone();
    let third = w.stealer();
    (1..=3).for_each(|task| w.push(task));
    assert_eq!(second.steal(), Steal::Success(1));
    assert_eq!(third.steal(), Steal::Success(2));
    assert_eq!(first.steal(), Steal::Success(3));
    assert!(first.is_empty() && second.is_empty() && third.is_empty());
}

#[test]
fn stealers_outlive_their_worker_and_keep_its_tasks() {
    for flavor in [Lifo, Fifo] {
        let w = worker(flavor);
        (1..=3).for_each(|task| w.push(task));
        let s = w.stealer();
        drop(w);
        assert_eq!(s.len(), 3);
        assert_eq!(s.steal(), Steal::Success(1));
        assert_eq!(s.clone().steal(), Steal::Success(2));
    }
}

#[test]
fn handles_print_without_their_contents() {
    let w = Worker::<String>::new_lifo();
    let s: Stealer<String> = w.stealer();
    assert_eq!(format!("{w:?}"), "Worker { .. }");
    assert_eq!(format!("{s:?}"), "Stealer { .. }");
    assert_eq!(format!("{:>15?}", w), "  Worker { .. }");
}

#[test]
fn a_worker_grows_far_past_its_first_buffer_and_keeps_its_order() {
    for flavor in [Lifo, Fifo] {
        let w = worker(flavor);
        (0..5000).for_each(|task| w.push(task));
        assert_eq!(w.len(), 5000);
        let s = w.stealer();
        assert_eq!(s.steal(), Steal::Success(0));
        let expected = if flavor == Lifo { 4999 } else { 1 };
        assert_eq!(w.pop(), Some(expected));
        assert_eq!(w.len(), 4998);
    }
}

#[test]
fn steal_helpers_behave_as_documented() {
    let (empty, retry) = (Steal::<i32>::Empty, Steal::<i32>::Retry);
    assert!(empty.is_empty() && !empty.is_success() && !empty.is_retry());
    assert!(retry.is_retry() && !retry.is_empty() && !retry.is_success());
    assert!(Steal::Success(7).is_success());
    assert_eq!(Steal::Success(7).success(), Some(7));
    assert_eq!(empty.success(), None);
    assert_eq!(retry.success(), None);
    // `or_else`: a success stands, an empty result asks the next source, a
    // retry is kept unless the next source succeeds.
    assert_eq!(
        Steal::Success(1).or_else(|| Steal::Success(2)),
        Steal::Success(1)
    );
    assert_eq!(empty.or_else(|| Steal::Success(2)), Steal::Success(2));
    assert_eq!(retry.or_else(|| Steal::Success(2)), Steal::Success(2));
    assert_eq!(retry.or_else(|| Steal::Empty), Steal::Retry);
    assert_eq!(empty.or_else(|| Steal::Retry), Steal::Retry);
    assert_eq!(empty.or_else(|| Steal::Empty), Steal::Empty);
}

#[test]
fn collecting_steals_keeps_the_first_success_else_any_retry() {
    let first: Steal<i32> = [
        Steal::Empty,
        Steal::Success(1),
        Steal::Retry,
        Steal::Success(2),
    ]
    .into_iter()
    .collect();
    assert_eq!(first, Steal::Success(1));
    let retry: Steal<i32> = [Steal::Empty, Steal::Retry, Steal::Empty]
        .into_iter()
        .collect();
    assert_eq!(retry, Steal::Retry);
    let empty: Steal<i32> = [Steal::Empty, Steal::Empty].into_iter().collect();
    assert_eq!(empty, Steal::Empty);
    let nothing: Steal<i32> = std::iter::empty().collect();
    assert_eq!(nothing, Steal::Empty);
}

#[test]
fn collecting_steals_stops_at_the_first_success() {
    let calls = std::cell::Cell::new(0);
    let _: Steal<i32> = (0..10)
        .map(|i| {
            calls.set(calls.get() + 1);
            if i == 2 {
                Steal::Success(i)
            } else {
                Steal::Empty
            }
        })
        .collect();
    assert_eq!(calls.get(), 3);
}

#[test]
fn steal_is_a_plain_value_that_prints_its_variant_only() {
    let a = Steal::Success(String::from("task"));
    let b = a.clone();
    assert_eq!(a, b);
    let copied = Steal::Success(3);
    let again = copied;
    assert_eq!(copied, again);
    assert_eq!(format!("{a:?}"), "Success(..)");
    assert_eq!(format!("{:?}", Steal::<u8>::Empty), "Empty");
    assert_eq!(format!("{:?}", Steal::<u8>::Retry), "Retry");
    assert_eq!(format!("{:>7?}", Steal::<u8>::Retry), "  Retry");
}

/// One thief against an owner that only pushes: every task arrives once, in
/// push order.
#[test]
fn a_single_thief_receives_every_push_in_order() {
    const TASKS: usize = 20_000;
    for flavor in [Lifo, Fifo] {
        let w = worker(flavor);
        let s = w.stealer();
        thread::scope(|scope| {
            scope.spawn(|| {
                for expected in 0..TASKS {
                    loop {
                        if let Steal::Success(task) = s.steal() {
                            assert_eq!(task, expected);
                            break;
                        }
                        std::hint::spin_loop();
                    }
                }
                assert_eq!(s.steal(), Steal::Empty);
            });
            (0..TASKS).for_each(|task| w.push(task));
        });
    }
}

/// Eight thieves and the owner race over a full deque: each sees its own
/// takes in the order its end of the deque gives them.
#[test]
fn a_stampede_of_thieves_each_see_increasing_tasks() {
    const THREADS: usize = 8;
    const TASKS: usize = 20_000;
    for flavor in [Lifo, Fifo] {
        let w = worker(flavor);
        (1..=TASKS).for_each(|task| w.push(Box::new(task)));
        let remaining = AtomicUsize::new(TASKS);
        thread::scope(|scope| {
            for _ in 0..THREADS {
                let (s, remaining) = (w.stealer(), &remaining);
                scope.spawn(move || {
                    let mut last = 0;
                    while remaining.load(SeqCst) > 0 {
                        if let Steal::Success(task) = s.steal() {
                            assert!(*task > last, "a thief saw {task} after {last}");
                            last = *task;
                            remaining.fetch_sub(1, SeqCst);
                        }
                    }
                });
            }
            // The owner pops the newest first (LIFO) or the oldest (FIFO).
            let mut last = if flavor == Lifo { TASKS + 1 } else { 0 };
            while remaining.load(SeqCst) > 0 {
                if let Some(task) = w.pop() {
                    match flavor {
                        Lifo => assert!(*task < last),
                        Fifo => assert!(*task > last),
                    }
                    last = *task;
                    remaining.fetch_sub(1, SeqCst);
                }
            }
        });
    }
}

/// The loop of crossbeam's stress test: each thief steals one, steals a
/// batch, steals a batch and pops, then drains its own worker.
fn thief_round<T>(s: &Stealer<T>, own: &Worker<T>) -> usize {
    let mut taken = usize::from(s.steal().is_success());
    let _ = s.steal_batch(own);
    taken += usize::from(s.steal_batch_and_pop(own).is_success());
    while own.pop().is_some() {
        taken += 1;
    }
    taken
}

/// Thieves with all four stealing methods against an owner that pushes and
/// sometimes drains: every task is taken exactly once.
#[test]
fn thieves_and_an_owner_take_every_task_once() {
    const THREADS: usize = 8;
    const TASKS: usize = 20_000;
    for (from, into) in [(Lifo, Lifo), (Lifo, Fifo), (Fifo, Fifo), (Fifo, Lifo)] {
        let w = worker(from);
        let done = AtomicBool::new(false);
        let hits = AtomicUsize::new(0);
        let seen: Vec<AtomicUsize> = (0..TASKS).map(|_| AtomicUsize::new(0)).collect();
        let record = |task: usize| {
            seen[task].fetch_add(1, SeqCst);
            hits.fetch_add(1, SeqCst);
        };
        thread::scope(|scope| {
            for _ in 0..THREADS {
                let (s, done, record) = (w.stealer(), &done, &record);
                scope.spawn(move || {
                    let own = worker(into);
                    while !done.load(SeqCst) {
                        if let Steal::Success(task) = s.steal() {
                            record(task);
                        }
                        let _ = s.steal_batch(&own);
                        if let Steal::Success(task) = s.steal_batch_and_pop(&own) {
                            record(task);
                        }
                        while let Some(task) = own.pop() {
                            record(task);
                        }
                    }
                });
            }
            let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
            let mut next = 0;
            while next < TASKS {
                if rng.below(3) == 0 {
                    while let Some(task) = w.pop() {
                        record(task);
                    }
                } else {
                    w.push(next);
                    next += 1;
                }
            }
            while hits.load(SeqCst) < TASKS {
                while let Some(task) = w.pop() {
                    record(task);
                }
            }
            done.store(true, SeqCst);
        });
        assert!(seen.iter().all(|count| count.load(SeqCst) == 1));
    }
}

/// Tasks left in the deque when the last handle goes are dropped exactly
/// once, and none that was taken is dropped again.
#[test]
fn tasks_are_dropped_once_whether_taken_or_left_behind() {
    const THREADS: usize = 4;
    const TASKS: usize = 20_000;
    const TAKES_PER_THIEF: usize = 1000;
    const OWNER_POPS: usize = 1000;

    struct Counted(usize, Arc<Mutex<Vec<usize>>>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.1.lock().unwrap().push(self.0);
        }
    }

    for flavor in [Lifo, Fifo] {
        let w = worker(flavor);
        let dropped = Arc::new(Mutex::new(Vec::new()));
        (0..TASKS).for_each(|task| w.push(Counted(task, dropped.clone())));
        let remaining = AtomicUsize::new(TASKS);
        thread::scope(|scope| {
            for _ in 0..THREADS {
                let (s, remaining) = (w.stealer(), &remaining);
                scope.spawn(move || {
                    let own = worker(flavor);
                    let mut taken = 0;
                    while taken < TAKES_PER_THIEF {
                        let now = thief_round(&s, &own);
                        remaining.fetch_sub(now, SeqCst);
                        taken += now;
                    }
                });
            }
            for _ in 0..OWNER_POPS {
                if w.pop().is_some() {
                    remaining.fetch_sub(1, SeqCst);
                }
            }
        });
        let left = remaining.load(SeqCst);
        assert!(left > 0, "the test needs tasks left behind");
        {
            let mut seen = dropped.lock().unwrap();
            assert_eq!(seen.len(), TASKS - left);
            seen.clear();
        }
        drop(w);
        let mut seen = dropped.lock().unwrap();
        assert_eq!(seen.len(), left);
        seen.sort_unstable();
        // What a thief or the owner takes is a run from either end, so what
        // is left is one contiguous range of tasks.
        assert!(seen.windows(2).all(|pair| pair[0] + 1 == pair[1]));
    }
}
