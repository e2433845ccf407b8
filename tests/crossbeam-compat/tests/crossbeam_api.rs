//! Code written against crossbeam-deque 0.8's `Worker`, `Stealer` and
//! `Steal`, and nothing else. It must compile and pass unchanged whether
//! `crossbeam_deque` is the real crate or chase-lev renamed.

use crossbeam_deque::{Steal, Stealer, Worker};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

/// The classic lookup: local work first, then the other workers' stealers.
fn find_task<T>(local: &Worker<T>, stealers: &[Stealer<T>]) -> Option<T> {
    local.pop().or_else(|| {
        std::iter::repeat_with(|| {
            stealers
                .iter()
                .map(|s| s.steal_batch_and_pop(local))
                .collect::<Steal<T>>()
        })
        .find(|s| !s.is_retry())
        .and_then(|s| s.success())
    })
}

#[test]
fn a_pool_of_workers_processes_every_task_once() {
    let workers: Vec<Worker<usize>> = (0..4).map(|_| Worker::new_fifo()).collect();
    let stealers: Vec<Stealer<usize>> = workers.iter().map(|w| w.stealer()).collect();
    for task in 0..10_000 {
        workers[task % 2].push(task);
    }
    let sum = AtomicUsize::new(0);
    let count = AtomicUsize::new(0);
    thread::scope(|scope| {
        for local in workers {
            let (stealers, sum, count) = (&stealers, &sum, &count);
            scope.spawn(move || {
                while let Some(task) = find_task(&local, stealers) {
                    sum.fetch_add(task, Ordering::Relaxed);
                    count.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    assert_eq!(count.into_inner(), 10_000);
    assert_eq!(sum.into_inner(), (0..10_000).sum::<usize>());
}

#[test]
fn lifo_and_fifo_owners_and_thieves_take_the_documented_ends() {
    let lifo = Worker::new_lifo();
    let fifo = Worker::new_fifo();
    for task in 1..=3 {
        lifo.push(task);
        fifo.push(task);
    }
    assert_eq!(lifo.pop(), Some(3));
    assert_eq!(fifo.pop(), Some(1));
    assert_eq!(lifo.stealer().steal(), Steal::Success(1));
    assert_eq!(fifo.stealer().steal(), Steal::Success(2));
    assert_eq!(lifo.len(), 1);
    assert!(!fifo.is_empty());
}

#[test]
fn batch_steals_move_about_half() {
    let victim = Worker::new_fifo();
    for task in 0..10 {
        victim.push(task);
    }
    let stealer = victim.stealer();
    let mine = Worker::new_fifo();
    assert_eq!(stealer.steal_batch(&mine), Steal::Success(()));
    assert_eq!(mine.len(), 5);
    assert_eq!(stealer.steal_batch_with_limit(&mine, 2), Steal::Success(()));
    assert_eq!(mine.len(), 7);
    assert_eq!(stealer.steal_batch_and_pop(&mine), Steal::Success(7));
    assert_eq!(
        stealer.steal_batch_with_limit_and_pop(&mine, 1),
        Steal::Success(9)
    );
    assert!(stealer.is_empty());
    assert_eq!(stealer.len(), 0);
    assert_eq!(stealer.steal(), Steal::Empty);
}

#[test]
fn steal_helpers_combine_attempts() {
    let empty: Steal<i32> = Steal::Empty;
    assert!(empty.is_empty());
    assert_eq!(empty.or_else(|| Steal::Success(4)), Steal::Success(4));
    assert_eq!(Steal::<i32>::Retry.or_else(|| Steal::Empty), Steal::Retry);
    assert_eq!(Steal::Success(1).success(), Some(1));
    let all: Steal<i32> = vec![Steal::Empty, Steal::Retry, Steal::Success(2)]
        .into_iter()
        .collect();
    assert_eq!(all, Steal::Success(2));
    let none: Steal<i32> = vec![Steal::Empty, Steal::Retry].into_iter().collect();
    assert!(none.is_retry());
    assert_eq!(format!("{:?}", Steal::<i32>::Empty), "Empty");
    let worker: Worker<String> = Worker::new_lifo();
    let stealer = worker.stealer().clone();
    let _ = format!("{worker:?} {stealer:?}");
}
