//! A small work-stealing thread pool on chase-lev, in the shape most
//! schedulers take: each worker thread owns a [`Worker`] deque and runs its
//! own newest task first; tasks from outside the pool enter a shared
//! [`Injector`]; a worker with nothing of its own takes a batch from the
//! injector, else steals the oldest task of another worker through its
//! [`Stealer`]; a worker that finds nothing anywhere sleeps until a push
//! wakes it; and every worker stops once every task has run and no more can
//! come.
//!
//! `main.rs` runs it on real threads (`cargo run -p chase-lev --example
//! pool`). The repository's `tests/downstream-loom` compiles this same file
//! as a module and model-checks a two-worker pool under loom, chase-lev's
//! deques inside it included: every task runs exactly once and no worker
//! sleeps through work (loom reports a deadlock if one does); and the same
//! model catches [`Sleep::WithoutLookingAgain`], a lost wakeup planted for
//! the purpose.
//!
//! Two counters carry the protocol, each with one job:
//!
//! - `pending` counts the tasks submitted or spawned and not yet finished,
//!   plus one while the pool may still be given tasks from outside (`join`
//!   gives that one back). It reaches zero once, when all the work is done,
//!   and whoever brings it there wakes every sleeping worker to stop.
//! - `sleepers` counts the workers on their way to sleep or asleep. A push
//!   reads it to decide whether to wake one; a worker adds itself to it
//!   *before* it looks for work a last time. With a SeqCst fence on each
//!   side, a push and a worker going to sleep cannot both miss each other:
//!   either the worker's last look sees the task, or the push sees the
//!   worker and wakes it.
//!
//! A task that panics ends its worker thread, after counting itself
//! finished (so the other workers still stop); `join` then panics too. The
//! tasks left in that worker's deque are stolen and run by the others.

use chase_lev::{Injector, Steal, Stealer, Worker};

/// The loom convention: the pool's own atomics, locks and threads come from
/// loom under the same cfg that makes chase-lev use loom's, so that a loom
/// test explores the pool and the deques together.
mod sync {
    #[cfg(chase_lev_loom)]
    pub(super) use loom::{
        sync::{
            atomic::{fence, AtomicUsize, Ordering},
            Arc, Condvar, Mutex,
        },
        thread,
    };
    #[cfg(not(chase_lev_loom))]
    pub(super) use std::{
        sync::{
            atomic::{fence, AtomicUsize, Ordering},
            Arc, Condvar, Mutex,
        },
        thread,
    };
}

use sync::{fence, thread, Arc, AtomicUsize, Condvar, Mutex, Ordering};

/// How a worker that found no task goes to sleep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sleep {
    /// It adds itself to the sleepers, then looks once more for a task (and
    /// for the end of the pool), and sleeps only if it finds none: a push
    /// after it added itself sees it and wakes it, and a push before that is
    /// seen by the last look.
    LookAgainAfterRegistering,
    /// PLANTED BUG, for the loom test that shows the model catches it: the
    /// worker adds itself to the sleepers and sleeps, without looking again.
    /// A task pushed between its last look and its registration sees no
    /// sleeper and wakes no one; with every worker asleep, the task waits
    /// forever, and so does `join`.
    // Never chosen by the example; the loom test chooses it.
    #[allow(dead_code)]
    WithoutLookingAgain,
}

/// What a task does: it runs with the spawner of the worker that runs it.
type Work<T> = dyn Fn(T, &Spawner<'_, T>) + Send + Sync;

/// A pool of worker threads running tasks of type `T`.
pub struct Pool<T> {
    shared: Arc<Shared<T>>,
    threads: Vec<thread::JoinHandle<usize>>,
}

/// What the workers and the pool's handle share.
struct Shared<T> {
    /// Tasks submitted from outside the pool.
    injector: Injector<T>,
    /// Each worker's stealer, by worker index.
    stealers: Vec<Stealer<T>>,
    /// Tasks submitted or spawned and not yet finished, plus one until
    /// `join`.
    pending: AtomicUsize,
    /// Workers between adding themselves before their last look and waking.
    sleepers: AtomicUsize,
    /// Held by a worker from the moment it adds itself to the sleepers until
    /// it waits (the wait releases it), and by whoever wakes workers: so a
    /// wakeup cannot fall between a worker's last look and its wait.
    lock: Mutex<()>,
    wake: Condvar,
    work: Box<Work<T>>,
    sleep: Sleep,
}

/// What a running task spawns more tasks with.
pub struct Spawner<'a, T> {
    shared: &'a Shared<T>,
    local: &'a Worker<T>,
}

impl<T> Spawner<'_, T> {
    /// Spawns `task` on the running worker's own deque: that worker runs it
    /// next unless another worker steals it first.
    pub fn spawn(&self, task: T) {
        // Counted before it is pushed, so that `pending` cannot reach zero
        // while the task waits: whoever takes it got it through the deque,
        // after this increment, and decrements later. The running task's
        // own count keeps `pending` above zero until then, so the increment
        // needs no ordering of its own.
        // Ordering: see above.
        self.shared.pending.fetch_add(1, Ordering::Relaxed);
        self.local.push(task);
        self.shared.wake_one_sleeper();
    }
}

impl<T: Send + 'static> Pool<T> {
    /// Starts `workers` threads, each running tasks with `work`.
    pub fn new<F>(workers: usize, work: F) -> Pool<T>
    where
        F: Fn(T, &Spawner<'_, T>) + Send + Sync + 'static,
    {
        Pool::with_sleep(workers, work, Sleep::LookAgainAfterRegistering)
    }

    /// As [`new`](Pool::new), with the way workers go to sleep chosen (the
    /// loom test plants its bug through this).
    pub fn with_sleep<F>(workers: usize, work: F, sleep: Sleep) -> Pool<T>
    where
        F: Fn(T, &Spawner<'_, T>) + Send + Sync + 'static,
    {
        assert!(workers > 0, "a pool needs at least one worker");
        // LIFO: a worker runs the task it spawned last, whose data is still
        // in its cache; thieves take the oldest, usually the largest.
        let locals: Vec<Worker<T>> = (0..workers).map(|_| Worker::new_lifo()).collect();
        let shared = Arc::new(Shared {
            injector: Injector::new(),
            stealers: locals.iter().map(Worker::stealer).collect(),
            // The one `join` gives back: until then, `submit` may add tasks,
            // so running out of tasks does not mean the end.
            pending: AtomicUsize::new(1),
            sleepers: AtomicUsize::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
            work: Box::new(work),
            sleep,
        });
        let threads = locals
            .into_iter()
            .enumerate()
            .map(|(index, local)| {
                let shared = Arc::clone(&shared);
                thread::spawn(move || shared.run_worker(index, &local))
            })
            .collect();
        Pool { shared, threads }
    }

    /// Submits `task` from outside the pool, through the injector.
    pub fn submit(&self, task: T) {
        // Counted before it is pushed, as in `Spawner::spawn`; `pending` is
        // at least one here (the one `join` gives back).
        // Ordering: as there.
        self.shared.pending.fetch_add(1, Ordering::Relaxed);
        self.shared.injector.push(task);
        self.shared.wake_one_sleeper();
    }

    /// Waits until every task submitted, and every task they spawned, has
    /// run; stops and joins the worker threads; returns how many tasks each
    /// worker ran.
    ///
    /// # Panics
    /// If a task panicked.
    pub fn join(mut self) -> Vec<usize> {
        // No more submissions: give back the one that stood for them.
        self.shared.finish_one();
        self.threads
            .drain(..)
            .map(|thread| thread.join().expect("a task panicked"))
            .collect()
    }
}

impl<T> Drop for Pool<T> {
    /// A pool dropped without `join` still runs its tasks and joins its
    /// threads: a worker left asleep would never end.
    fn drop(&mut self) {
        if !self.threads.is_empty() {
            self.shared.finish_one();
            for thread in self.threads.drain(..) {
                // A task's panic has been reported by the panic hook already,
                // and panicking in `drop` could abort the process.
                let _ = thread.join();
            }
        }
    }
}

/// Counts a task finished when dropped: at the end of the task, or while a
/// panicking task unwinds, so that `pending` still reaches zero.
struct Finished<'a, T>(&'a Shared<T>);

impl<T> Drop for Finished<'_, T> {
    fn drop(&mut self) {
        self.0.finish_one();
    }
}

impl<T> Shared<T> {
    /// Worker `index`'s loop; returns how many tasks it ran.
    fn run_worker(&self, index: usize, local: &Worker<T>) -> usize {
        let spawner = Spawner {
            shared: self,
            local,
        };
        let mut ran = 0;
        loop {
            if let Some(task) = self.find_task(index, local) {
                let _finished = Finished(self);
                (self.work)(task, &spawner);
                ran += 1;
            } else if !self.sleep_until_woken() {
                return ran;
            }
        }
    }

    /// The worker's own newest task; else a batch of the injector's oldest
    /// (the first returned, the rest moved into the worker's deque, where
    /// other workers can steal them); else the oldest task of another
    /// worker, each tried in turn from the next one on (so that thieves
    /// spread over their victims).
    fn find_task(&self, index: usize, local: &Worker<T>) -> Option<T> {
        local.pop().or_else(|| loop {
            let others = self.stealers.len() - 1;
            let found = self.injector.steal_batch_and_pop(local).or_else(|| {
                // Collecting keeps the first `Success`, else `Retry` if any
                // steal lost a race, else `Empty`.
                self.stealers
                    .iter()
                    .cycle()
                    .skip(index + 1)
                    .take(others)
                    .map(Stealer::steal)
                    .collect()
            });
            match found {
                Steal::Success(task) => return Some(task),
                Steal::Empty => return None,
                // A steal lost a race with another thread, which made
                // progress: look again.
                Steal::Retry => thread::yield_now(),
            }
        })
    }

    /// Whether some deque or the injector holds a task.
    fn has_visible_work(&self) -> bool {
        !self.injector.is_empty() || self.stealers.iter().any(|stealer| !stealer.is_empty())
    }

    /// Called by a worker that found no task: sleeps until a push or the end
    /// of the pool wakes it. Returns `false` if the pool is done (the worker
    /// stops), `true` to look for work again.
    fn sleep_until_woken(&self) -> bool {
        let guard = self.lock.lock().expect("the lock is never poisoned");
        // Ordering: Relaxed: a push reads it after the fence below, which is
        // what orders the two (`wake_one_sleeper`).
        self.sleepers.fetch_add(1, Ordering::Relaxed);
        // Ordering: SeqCst fence, paired with the one in `wake_one_sleeper`:
        // if that one comes first in the single total order of SeqCst
        // fences, the last look below sees the pushed task; if this one
        // does, the push sees this worker in `sleepers` and wakes it.
        fence(Ordering::SeqCst);
        // Ordering: Acquire: reading zero, the worker has seen every task's
        // finish (the decrements form a release sequence), so nothing is
        // left to run. `finish_one` wakes every sleeper after its decrement
        // to zero, under the lock: either that comes before this worker took
        // the lock, and this load reads zero, or this worker is waiting by
        // then and is woken.
        let done = self.pending.load(Ordering::Acquire) == 0;
        let look_again = self.sleep == Sleep::LookAgainAfterRegistering;
        let guard = if done || (look_again && self.has_visible_work()) {
            guard
        } else {
            // Releases the lock while it waits: a waker takes it, so it
            // notifies only a worker that is already waiting, or one that
            // will take the lock after it and see its task (or the end).
            self.wake.wait(guard).expect("the lock is never poisoned")
        };
        // Ordering: Relaxed, as the increment.
        self.sleepers.fetch_sub(1, Ordering::Relaxed);
        drop(guard);
        !done
    }

    /// Called after a push: wakes one sleeping worker, if any.
    fn wake_one_sleeper(&self) {
        // Ordering: SeqCst fence, paired with the one in
        // `sleep_until_woken`: the push above comes before it, the load of
        // `sleepers` after it (see there).
        fence(Ordering::SeqCst);
        // Ordering: Relaxed: the fence orders it.
        if self.sleepers.load(Ordering::Relaxed) > 0 {
            // Under the lock, so that the worker seen above is waiting
            // already, or will see the task in its last look.
            let _guard = self.lock.lock().expect("the lock is never poisoned");
            self.wake.notify_one();
        }
    }

    /// Counts one task finished (or `join`'s one given back); the last one
    /// wakes every sleeping worker to stop.
    fn finish_one(&self) {
        // Ordering: Release: a worker that reads zero (Acquire) sees the
        // effects of every task.
        if self.pending.fetch_sub(1, Ordering::Release) == 1 {
            // Under the lock: see `sleep_until_woken`.
            let _guard = self.lock.lock().expect("the lock is never poisoned");
            self.wake.notify_all();
        }
    }
}
