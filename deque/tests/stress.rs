//! Multi-threaded stress tests: one owner and 1, 2 or 4 thieves, LIFO and
//! FIFO, growing from capacity 1 and shrinking back; every pushed task must be
//! taken exactly once. Sizes shrink under miri, where the point is the race
//! detector and weak-memory emulation rather than volume.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Barrier;
use std::thread;

use chase_lev::{Steal, Worker};

const TASKS: usize = if cfg!(miri) { 60 } else { 200_000 };

/// How a thief takes tasks.
#[derive(Clone, Copy)]
enum Theft {
    Single,
    Batch,
    BatchAndPop,
}

/// One thief: takes tasks until the owner is done and the deque is empty.
fn thief(
    stealer: chase_lev::Stealer<usize>,
    theft: Theft,
    done: &AtomicBool,
    start: &Barrier,
) -> Vec<usize> {
    let mine = Worker::new_lifo();
    let mut got = Vec::new();
    start.wait();
    loop {
        let finished = done.load(Ordering::Acquire);
        let attempt = match theft {
            Theft::Single => stealer.steal(),
            Theft::Batch => match stealer.steal_batch(&mine) {
                Steal::Success(()) => Steal::Retry, // drained below
                Steal::Empty => Steal::Empty,
                Steal::Retry => Steal::Retry,
            },
            Theft::BatchAndPop => stealer.steal_batch_and_pop(&mine),
        };
        match attempt {
            Steal::Success(task) => got.push(task),
            Steal::Retry => {}
            Steal::Empty if finished => break,
            Steal::Empty => thread::yield_now(),
        }
        while let Some(task) = mine.pop() {
            got.push(task);
        }
    }
    got
}

/// Runs one owner against `thieves` thieves and returns how often each task
/// was taken. The first half of the tasks is pushed in bursts of growing size
/// with half of each burst popped, so the buffer grows; the second half is
/// pushed and popped one at a time, so the deque stays nearly empty and the
/// hysteresis shrinks the buffer again (every pop counts, also one that lost
/// its task to a thief), all while the thieves steal.
fn run(worker: Worker<usize>, thieves: usize, theft: Theft) -> Vec<u32> {
    let stealer = worker.stealer();
    let done = AtomicBool::new(false);
    let start = Barrier::new(thieves + 1);
    let mut taken = vec![0u32; TASKS];
    thread::scope(|scope| {
        let handles: Vec<_> = (0..thieves)
            .map(|_| {
                let stealer = stealer.clone();
                let (done, start) = (&done, &start);
                scope.spawn(move || thief(stealer, theft, done, start))
            })
            .collect();
        start.wait();
        let mut owner_got = Vec::new();
        let (mut next, mut burst) = (0, 1);
        while next < TASKS / 2 {
            let end = (next + burst).min(TASKS / 2);
            (next..end).for_each(|task| worker.push(task));
            for _ in 0..(end - next) / 2 {
                owner_got.extend(worker.pop());
            }
            next = end;
            burst = if burst > 4096 { 1 } else { burst * 2 };
        }
        let grown = worker.capacity();
        // Whatever the thieves left of the bursts, the owner takes, so that
        // the deque holds at most one task from here on, whatever the
        // scheduler does with the thieves.
        while let Some(task) = worker.pop() {
            owner_got.push(task);
        }
        for task in TASKS / 2..TASKS {
            worker.push(task);
            owner_got.extend(worker.pop());
        }
        let after = worker.capacity();
        while let Some(task) = worker.pop() {
            owner_got.push(task);
        }
        done.store(true, Ordering::Release);
        let stolen = handles
            .into_iter()
            .flat_map(|handle| handle.join().unwrap());
        for task in owner_got.into_iter().chain(stolen) {
            taken[task] += 1;
        }
        // Checked once the thieves are gone: a panic while they still wait
        // for `done` would hang the test instead of failing it.
        if !cfg!(miri) && grown > 4 {
            assert!(
                after < grown,
                "the buffer grew to {grown} slots and did not shrink while the deque stayed nearly empty"
            );
        }
    });
    taken
}

fn assert_exactly_once(taken: &[u32]) {
    let lost: Vec<_> = (0..taken.len()).filter(|&task| taken[task] == 0).collect();
    let twice: Vec<_> = (0..taken.len()).filter(|&task| taken[task] > 1).collect();
    assert!(
        lost.is_empty() && twice.is_empty(),
        "lost {lost:?}, taken twice {twice:?}"
    );
}

macro_rules! stress {
    ($($name:ident: $worker:expr, $thieves:expr, $theft:expr;)*) => {$(
        #[test]
        fn $name() {
            assert_exactly_once(&run($worker, $thieves, $theft));
        }
    )*};
}

stress! {
    lifo_one_thief_takes_every_task_exactly_once: Worker::new_lifo_with_capacity(1), 1, Theft::Single;
    lifo_two_thieves_take_every_task_exactly_once: Worker::new_lifo_with_capacity(1), 2, Theft::Single;
    lifo_four_thieves_take_every_task_exactly_once: Worker::new_lifo_with_capacity(1), 4, Theft::Single;
    fifo_one_thief_takes_every_task_exactly_once: Worker::new_fifo_with_capacity(1), 1, Theft::Single;
    fifo_two_thieves_take_every_task_exactly_once: Worker::new_fifo_with_capacity(1), 2, Theft::Single;
    fifo_four_thieves_take_every_task_exactly_once: Worker::new_fifo_with_capacity(1), 4, Theft::Single;
    lifo_batch_thieves_take_every_task_exactly_once: Worker::new_lifo_with_capacity(1), 2, Theft::Batch;
    fifo_batch_thieves_take_every_task_exactly_once: Worker::new_fifo_with_capacity(1), 2, Theft::Batch;
    lifo_batch_and_pop_thieves_take_every_task_exactly_once: Worker::new_lifo_with_capacity(1), 2, Theft::BatchAndPop;
    fifo_batch_and_pop_thieves_take_every_task_exactly_once: Worker::new_fifo_with_capacity(1), 2, Theft::BatchAndPop;
}

/// Runs `owner` on this thread against one thief that steals until the owner
/// is done and the deque is empty, passing each stolen task to `take`;
/// returns what `owner` returned and what the thief's `take`s summed to.
fn against_one_thief<T: Send, R>(
    worker: &Worker<T>,
    take: impl Fn(T) -> u64 + Sync,
    owner: impl FnOnce() -> R,
) -> (R, u64) {
    let stealer = worker.stealer();
    let done = AtomicBool::new(false);
    thread::scope(|scope| {
        let thief = scope.spawn(|| {
            let mut sum = 0;
            loop {
                let finished = done.load(Ordering::Acquire);
                match stealer.steal() {
                    Steal::Success(task) => sum += take(task),
                    Steal::Empty if finished => break sum,
                    _ => {}
                }
            }
        });
        let result = owner();
        done.store(true, Ordering::Release);
        (result, thief.join().unwrap())
    })
}

#[test]
fn a_bounded_worker_under_theft_never_loses_a_task() {
    let worker = Worker::new_lifo_bounded(8);
    let taken: Vec<AtomicU32> = (0..TASKS).map(|_| AtomicU32::new(0)).collect();
    let count = |task: usize| {
        taken[task].fetch_add(1, Ordering::Relaxed);
        0
    };
    against_one_thief(&worker, count, || {
        for task in 0..TASKS {
            let mut pending = task;
            // When full, the task comes back; the owner runs one of its own
            // tasks and tries again.
            while let Err(back) = worker.try_push(pending) {
                pending = back;
                worker.pop().map(count);
            }
        }
        while let Some(task) = worker.pop() {
            count(task);
        }
    });
    let taken: Vec<u32> = taken.into_iter().map(AtomicU32::into_inner).collect();
    assert_exactly_once(&taken);
}

#[test]
fn boxed_closures_survive_being_stolen_across_buffer_swaps() {
    let worker: Worker<Box<dyn FnOnce() -> u64 + Send>> = Worker::new_lifo_with_capacity(1);
    let tasks = (TASKS / 10) as u64;
    let (owner_sum, thief_sum) = against_one_thief(
        &worker,
        |task| task(),
        || {
            let mut sum = 0;
            for task in 0..tasks {
                // The closure owns heap data, so a torn or duplicated task would
                // show up as a wrong sum or a double free.
                let owned = Box::new(task);
                worker.push(Box::new(move || *owned));
                if task % 3 == 0 {
                    sum += worker.pop().map_or(0, |task| task());
                }
            }
            while let Some(task) = worker.pop() {
                sum += task();
            }
            sum
        },
    );
    assert_eq!(owner_sum + thief_sum, (0..tasks).sum::<u64>());
}

/// A task type with padding bytes and a pointer: copying it through integers
/// would be undefined behaviour (uninitialised padding, lost provenance), so
/// this is the test miri watches for the slot scheme (buffer.rs).
#[derive(Debug)]
struct PaddedTask {
    payload: Box<u64>,
    tag: u8,
}

fn check(task: PaddedTask) -> u64 {
    assert_eq!(
        task.tag,
        (*task.payload % 251) as u8,
        "task bytes corrupted"
    );
    *task.payload
}

#[test]
fn tasks_with_padding_and_pointers_cross_threads_intact() {
    let worker = Worker::new_lifo_with_capacity(1);
    let tasks = (TASKS / 10) as u64;
    let (owner_sum, thief_sum) = against_one_thief(&worker, check, || {
        let mut sum = 0;
        for value in 0..tasks {
            let tag = (value % 251) as u8;
            worker.push(PaddedTask {
                payload: Box::new(value),
                tag,
            });
            if value % 2 == 0 {
                sum += worker.pop().map_or(0, check);
            }
        }
        while let Some(task) = worker.pop() {
            sum += check(task);
        }
        sum
    });
    assert_eq!(owner_sum + thief_sum, (0..tasks).sum::<u64>());
}
