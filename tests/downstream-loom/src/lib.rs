//! A two-worker scheduler on chase-lev, written the way a user of the crate
//! writes one, so that its loom test (`tests/loom.rs`) shows what a user gets
//! from `--cfg chase_lev_loom`: loom explores the scheduler *and* the deque
//! inside it (its atomics, fences and buffer reclamation as they ship).
//!
//! Each worker owns a chase-lev [`Worker`] and steals from the other one's
//! [`Stealer`]. A task may spawn children. A pending-task counter decides
//! termination: it counts every task spawned and not yet finished, and a
//! worker that finds no task anywhere stops once the counter reads zero.
//!
//! [`Termination::ParentFirst`] is a planted bug, selectable by the caller so
//! that the test can show, on every run, that the model catches it.
//!
//! [`pool`] is chase-lev's example pool (`deque/examples/pool/pool.rs`, run
//! by `cargo run -p chase-lev --example pool`), compiled here from the same
//! file, so that the pool a user copies is the one the loom test checks:
//! with an injector, workers that sleep and are woken, and its own planted
//! bug, a lost wakeup ([`pool::Sleep::WithoutLookingAgain`]).

use chase_lev::{Steal, Stealer, Worker};

#[path = "../../../deque/examples/pool/pool.rs"]
pub mod pool;

/// The loom convention: the scheduler's own atomics and threads come from
/// loom under the same cfg that makes chase-lev use loom's.
mod sync {
    #[cfg(chase_lev_loom)]
    pub(crate) use loom::{
        sync::{
            atomic::{AtomicUsize, Ordering},
            Arc,
        },
        thread,
    };
    #[cfg(not(chase_lev_loom))]
    pub(crate) use std::{
        sync::{
            atomic::{AtomicUsize, Ordering},
            Arc,
        },
        thread,
    };
}

use sync::{thread, Arc, AtomicUsize, Ordering};

/// In which order a finished task's children are counted and its own count
/// is given back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Termination {
    /// The children are counted and pushed first, then the parent is counted
    /// as finished: the counter never reads zero while a task is waiting or
    /// running, so a worker stops only when all the work is done.
    ChildrenFirst,
    /// PLANTED BUG (for the test that proves the model catches it): the
    /// parent is counted as finished first, then its children are counted
    /// and pushed. In between, the counter can read zero with a child still
    /// to come, and the other worker stops while work remains.
    ParentFirst,
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Report {
    /// Tasks run, roots and children.
    pub finished: usize,
    /// For each worker, how many tasks had finished when it stopped (all of
    /// them, if the termination counter is right).
    pub finished_when_stopped: [usize; 2],
}

/// What both workers share.
struct Shared<T, F> {
    /// Tasks spawned (roots included) and not yet finished.
    pending: AtomicUsize,
    /// Tasks finished.
    finished: AtomicUsize,
    /// Each worker's stealer, by worker index.
    stealers: [Stealer<T>; 2],
    work: F,
    termination: Termination,
}

/// Runs `roots`, and every task they spawn, on two workers: the calling
/// thread and one more. `work` runs one task and returns its children.
pub fn run<T, F>(roots: Vec<T>, work: F, termination: Termination) -> Report
where
    T: Send + 'static,
    F: Fn(T) -> Vec<T> + Send + Sync + 'static,
{
    let workers = [Worker::new_lifo(), Worker::new_lifo()];
    let shared = Arc::new(Shared {
        // Ordering: the roots are counted before any worker can see them
        // (the other worker's thread is spawned after this).
        pending: AtomicUsize::new(roots.len()),
        finished: AtomicUsize::new(0),
        stealers: [workers[0].stealer(), workers[1].stealer()],
        work,
        termination,
    });
    let [first, second] = workers;
    for root in roots {
        first.push(root);
    }
    let other = {
        let shared = Arc::clone(&shared);
        thread::spawn(move || shared.work_until_done(1, &second))
    };
    let first_stopped_at = shared.work_until_done(0, &first);
    let second_stopped_at = other.join().expect("a worker panicked");
    Report {
        // Ordering: both workers are joined; nothing runs any more.
        finished: shared.finished.load(Ordering::Relaxed),
        finished_when_stopped: [first_stopped_at, second_stopped_at],
    }
}

impl<T, F> Shared<T, F>
where
    F: Fn(T) -> Vec<T>,
{
    /// Worker `me`'s loop: its own newest task first, else the oldest of the
    /// other worker's; with none anywhere, stop once nothing is pending.
    /// Returns how many tasks had finished when it stopped.
    fn work_until_done(&self, me: usize, local: &Worker<T>) -> usize {
        let victim = &self.stealers[1 - me];
        loop {
            match local.pop().or_else(|| steal(victim)) {
                Some(task) => self.execute(local, task),
                // Ordering: Acquire reads the last decrement, whose release
                // sequence (every later update of `pending` is a
                // read-modify-write) carries every worker's count of the
                // tasks it finished before its own decrement.
                None if self.pending.load(Ordering::Acquire) == 0 => {
                    // Ordering: made visible by the Acquire above.
                    return self.finished.load(Ordering::Relaxed);
                }
                None => thread::yield_now(),
            }
        }
    }

    fn execute(&self, local: &Worker<T>, task: T) {
        let children = (self.work)(task);
        match self.termination {
            Termination::ChildrenFirst => {
                self.spawn(local, children);
                self.finish_one();
            }
            Termination::ParentFirst => {
                self.finish_one();
                self.spawn(local, children);
            }
        }
    }

    /// Counts each child, then pushes it. The count needs no ordering of its
    /// own: whoever takes the child got it through the deque, after this
    /// increment, so the child's decrement comes later in `pending`'s order.
    fn spawn(&self, local: &Worker<T>, children: Vec<T>) {
        for child in children {
            // Ordering: see above; only the count matters.
            self.pending.fetch_add(1, Ordering::Relaxed);
            local.push(child);
        }
    }

    fn finish_one(&self) {
        // Ordering: read by `work_until_done` after its Acquire of
        // `pending`, which this worker's Release decrement below publishes.
        self.finished.fetch_add(1, Ordering::Relaxed);
        // Ordering: Release publishes the task's effects and the count
        // above to the worker that reads `pending` as zero.
        self.pending.fetch_sub(1, Ordering::Release);
    }
}

/// One task of `victim`'s, unless its deque is empty.
fn steal<T>(victim: &Stealer<T>) -> Option<T> {
    loop {
        match victim.steal() {
            Steal::Success(task) => return Some(task),
            Steal::Empty => return None,
            // Lost a race with the victim or another thief: try again.
            Steal::Retry => thread::yield_now(),
        }
    }
}
