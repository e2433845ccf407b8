//! The Chase-Lev deque, to be read top to bottom next to Figure 1 of Lê,
//! Pop, Cohen and Zappa Nardelli, "Correct and Efficient Work-Stealing for
//! Weak Memory Models" (PPoPP 2013):
//!
//! | Figure 1                      | here                                         |
//! |-------------------------------|----------------------------------------------|
//! | `top`, `bottom`, `array`      | `Inner` (and the owner's copy of `array`)    |
//! | `push`                        | `Worker::try_push`, `write_and_publish`      |
//! | `resize` (grow)               | `push_loading_top` → `resize`                |
//! | `take`                        | `Worker::pop` → `pop_bottom`                 |
//! | `steal`                       | `Stealer::steal` → `steal_from`              |
//!
//! Each ordering and fence is written at its site, as
//! `site!(Site, correct)`: every build that ships runs `correct`; the
//! site's name says the ordering it holds, and model-tests/mutants.md which
//! mutant weakens it (sites.rs). A logic mutant is a branch of its own,
//! compiled only into the internal mutant builds
//! (`#[cfg(chase_lev_mutants)] if mutant!(Name)`). The owner keeps what it
//! knows on its own in its `Worker` (below), private to this file: the `Lap`
//! (its copy of the buffer pointer, the end of that buffer's lap, the last
//! `top` a push loaded, how far it may push without loading `top` again),
//! the bound (`None` if growable) and the shrink `Hysteresis`.
//!
//! Where it departs from the figure (each function says so and names its
//! note):
//! - a buffer never wraps, so the owner moves to a new buffer at the end of
//!   each lap, not only when full (buffer.rs,
//!   proofs-notes/reclamation.md#no-wrap);
//! - push loads `top` only near the end of a lap or the bound (`push_until`,
//!   proofs-notes/fast-paths.md#the-push-without-top);
//! - the LIFO owner's pop looks at both indices first, and takes an empty or
//!   one-task deque without the fence (proofs-notes/fast-paths.md); the FIFO
//!   owner pops at `top` with a CAS (`pop_top`);
//! - a thief looks at `bottom` before the fence, and answers `Empty` there
//!   with no fence (proofs-notes/fast-paths.md#the-thiefs-empty-look);
//! - a thief announces the buffer it reads in a hazard slot before the
//!   steal's fence and checks it after (`Hazard::protect`, hazard.rs;
//!   proofs-notes/reclamation.md#hazard-slots);
//! - the buffer shrinks by half after a run of pops under a quarter full
//!   (the shrink hysteresis, at the end).
//!
//! Here: the shared state and the two handles, push and `resize`, a batch
//! destination's room (`reserve`, `publish`), pop, steal, the shrink, the
//! drop: every line that touches a handle's fields. Layout attributes
//! (`inline`, `cold`) are where docs/benchmarks.md#layout-attributes shows
//! that they pay. Not in this file: the handles' constructors, `len` and
//! `capacity` (worker.rs, stealer.rs), batch steals (batch.rs), the slots
//! (buffer.rs), the steal's hazard guard (hazard.rs), the hazard slots and
//! retired buffers (reclamation.rs), the
//! std/loom/shuttle shim (sync.rs), the ordering sites (sites.rs). Nothing
//! here records anything: in the mutant builds the atomics (atomic.rs) and
//! the buffer's slots and frees (buffer.rs) write the event log (trace.rs).
//!
//! Invariants (proofs-notes/linearizability.md#invariants):
//! - `top` and `bottom` only grow, except that the LIFO owner's pop lowers
//!   `bottom` by one and then restores it or leaves it at `top`;
//! - `top <= bottom + 1`, and the tasks are the slots of indices in
//!   `[top, bottom)` of the current buffer, which the deque owns.

use core::cell::Cell;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use std::panic::{RefUnwindSafe, UnwindSafe};

use crossbeam_utils::CachePadded;

use crate::atomic::{fence, load_own_store, AtomicI64, AtomicPtr, Named};
use crate::buffer::{Buffer, MAX_CAPACITY};
use crate::hazard::Hazard;
use crate::reclamation::Retired;
#[cfg(chase_lev_mutants)]
use crate::sites::mutant;
use crate::sites::{site, RELAXED_UNLESS_TSAN};
use crate::steal::Steal;
use crate::sync::{
    Arc,
    Ordering::{Acquire, Relaxed, Release, SeqCst},
};

/// Which end the owner pops from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// The owner pops the newest task (at `bottom`), without a CAS unless it
    /// races thieves for the last task.
    Lifo,
    /// The owner pops the oldest task (at `top`) with a CAS, like a thief.
    Fifo,
}

// Layout: docs/benchmarks.md#layout-attributes (`top` and `bottom` share a
// cache line: a steal racing a pop then moves one line between the cores,
// not two).
#[repr(C)]
struct Inner<T> {
    /// The index of the oldest task. Thieves advance it by CAS; so does the
    /// FIFO owner.
    top: AtomicI64,
    /// One past the newest task; written only by the owner.
    bottom: AtomicI64,
    /// The current buffer; replaced only by the owner (grow and shrink).
    buffer: CachePadded<AtomicPtr<Buffer<T>>>,
    flavor: Flavor,
    /// (Mutant builds.) The mutant this deque carries (`sites.rs`).
    #[cfg(chase_lev_mutants)]
    mutant: Option<crate::sites::Mutant>,
    /// Buffers the owner replaced that a thief may still read; touched only
    /// by the owner and by the final drop (`Inner::retired`).
    retired: Retired<T>,
    /// The deque owns `T`s: dropping it may drop tasks.
    _tasks: PhantomData<T>,
}

// SAFETY: tasks are moved between threads, never shared: a task is read by
// exactly one thread, the one that won it (proofs-notes/linearizability.md).
// So the shared state is `Send` and `Sync` when `T: Send`, as for a channel.
unsafe impl<T: Send> Send for Inner<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Inner<T> {}

impl<T> Inner<T> {
    /// (GenMC build.) Gives each atomic its atomic initial store
    /// (`sync::InitialValue`), once the deque is where it stays.
    #[cfg(chase_lev_genmc)]
    fn store_initial_values(&self) {
        use crate::sync::InitialValue;
        self.top.store_initial_value();
        self.bottom.store_initial_value();
        self.buffer.store_initial_value();
    }

    fn new(flavor: Flavor, buffer: Buffer<T>, first_index: i64) -> Self {
        Inner {
            top: AtomicI64::new(first_index).named("top"),
            bottom: AtomicI64::new(first_index).named("bottom"),
            buffer: CachePadded::new(
                AtomicPtr::new(Box::into_raw(Box::new(buffer))).named("buffer"),
            ),
            flavor,
            #[cfg(chase_lev_mutants)]
            mutant: crate::sites::mutant_of_a_new_deque(),
            retired: Retired::new(),
            _tasks: PhantomData,
        }
    }
}

impl<T> Inner<T> {
    /// The retired buffers. Plain cells, never borrowed across a call out of
    /// the crate, so that an owner operation nested in one (from the global
    /// allocator) may use them too
    /// (proofs-notes/reclamation.md#reentrant-owner-operations).
    ///
    /// # Safety
    /// Only the owner's thread calls this (from its unique `Worker`): the
    /// cells are not `Sync`.
    unsafe fn retired(&self) -> &Retired<T> {
        &self.retired
    }
}

// --------------------------------------------------------------- handles --

/// The owner's end of a work-stealing deque.
///
/// One thread owns a `Worker`: it pushes tasks and pops them back (the newest
/// first for [`new_lifo`](Worker::new_lifo), the oldest first for
/// [`new_fifo`](Worker::new_fifo)). Any number of [`Stealer`]s take the oldest
/// task from other threads. A `Worker` can be sent to another thread but not
/// shared (`Send`, not `Sync`).
///
/// ```
/// use chase_lev::Worker;
///
/// let worker = Worker::new_lifo();
/// worker.push(1);
/// worker.push(2);
/// assert_eq!(worker.pop(), Some(2));
/// assert_eq!(worker.pop(), Some(1));
/// assert_eq!(worker.pop(), None);
/// ```
pub struct Worker<T> {
    inner: Arc<Inner<T>>,
    /// The buffer the owner is in and how far it may push into it.
    lap: Lap<T>,
    /// A bounded worker hands a task back when it holds this many; `None`
    /// for a growable one.
    bound: Option<usize>,
    /// When the buffer halves.
    shrink: Hysteresis,
    /// Not `Sync`: the owner's operations assume a single thread.
    _not_sync: PhantomData<Cell<()>>,
}

/// What the owner keeps of its own about the current buffer, so that a push
/// or a pop loads no shared pointer and, mostly, not `top`.
struct Lap<T> {
    /// The owner's copy of the buffer pointer. Only the owner replaces the
    /// buffer, so this is the value Lê et al.'s owner reads with a relaxed
    /// load of `array`; keeping it here saves that load.
    buffer: Cell<*mut Buffer<T>>,
    /// One past the last index of the buffer's lap: a push there first moves
    /// the tasks to a new buffer (buffer.rs explains why buffers never wrap).
    end: Cell<i64>,
    /// The last value of `top` a push loaded: at most `top`, which never
    /// decreases, so `bottom - top_seen` is at least the deque's length.
    top_seen: Cell<i64>,
    /// A push at a `bottom` below this needs no look at `top`: the lesser of
    /// `end` and `top_seen + bound`, or anything smaller
    /// (proofs-notes/fast-paths.md#the-push-without-top).
    push_until: Cell<i64>,
}

/// The shrink hysteresis: the buffer halves once the owner has popped
/// `pops_per_halving` times in a row while the deque was under a quarter
/// full (`consider_shrinking`, at the end of this file).
struct Hysteresis {
    /// Such pops still to make. Counts down from `pops_per_halving`.
    pops_left: Cell<usize>,
    /// Half the capacity. Kept here, like `below`, so that a pop never reads
    /// the buffer's capacity.
    pops_per_halving: Cell<usize>,
    /// A pop that leaves fewer tasks than this counts: a quarter of the
    /// capacity, or 0 (never) when the buffer cannot shrink (bounded, or at
    /// its first size). Set at each resize, so that the common pop pays one
    /// comparison.
    below: Cell<i64>,
    /// The buffer never shrinks below its first size.
    min_capacity: usize,
}

// SAFETY: a `Worker` is the unique owner handle; moving it to another thread
// moves the owner role with it. Its `Cell`s are only touched by the thread
// that holds it. Tasks move between threads, so `T: Send` is required.
unsafe impl<T: Send> Send for Worker<T> {}

// `UnwindSafe` when `T: RefUnwindSafe`, and never `RefUnwindSafe` (its
// `Cell`s make a shared `&Worker` not so), as crossbeam-deque 0.8's `Worker`
// has from its fields. The fields do not give it here (the deque's slots and
// retired-buffer lists sit in cells), so it is stated, and it holds
// for the same reason as crossbeam's: a panic inside a deque operation cannot
// leave the deque in a state that breaks its invariants for the other
// handles. No operation runs task code (only the final drop drops tasks, and
// it goes on dropping the rest past a panic: `drop_tasks` in deque.rs); the
// operations' own panics (a full bounded `push`, a zero batch limit, a
// capacity overflow, the exhausted index space) are raised before the
// operation publishes anything, so the other handles see the deque as it was
// or, at worst, a claimed task that is never handed out (a leak, not a broken
// invariant). `UnwindSafe` is a safe marker trait; nothing unsafe relies on it.
impl<T: RefUnwindSafe> UnwindSafe for Worker<T> {}

/// A thief's handle on a deque: takes the oldest tasks from other threads.
///
/// `Stealer` is `Clone + Send + Sync`. Every operation is lock-free.
///
/// ```
/// use chase_lev::{Steal, Worker};
///
/// let worker = Worker::new_lifo();
/// worker.push(1);
/// worker.push(2);
/// let stealer = worker.stealer();
/// assert_eq!(stealer.steal(), Steal::Success(1)); // the oldest
/// assert_eq!(worker.pop(), Some(2));              // the newest
/// ```
pub struct Stealer<T> {
    inner: Arc<Inner<T>>,
}

// `UnwindSafe` and `RefUnwindSafe` when `T: RefUnwindSafe`, as
// crossbeam-deque 0.8's `Stealer` is from its fields. The fields do not give
// it here (the deque's slots and retired-buffer lists sit in cells),
// so it is stated, and it holds for the same reason as crossbeam's: a panic
// inside a deque operation cannot leave the deque in a state that breaks its
// invariants for the other handles. A steal runs no task code, and its only
// panic (a zero batch limit) comes before it claims anything, and the hazard
// slot a steal announces is cleared by a guard's `Drop`, on an unwind too
// (reclamation.rs). The worker's impl above gives the whole argument.
// `UnwindSafe` is a safe marker trait; nothing unsafe relies on it.
impl<T: RefUnwindSafe> UnwindSafe for Stealer<T> {}
impl<T: RefUnwindSafe> RefUnwindSafe for Stealer<T> {}

impl<T> Worker<T> {
    /// The owner of a new deque whose first buffer is `buffer` (worker.rs
    /// chooses it), with both indices at `first_index`.
    pub(crate) fn with_buffer(
        flavor: Flavor,
        buffer: Buffer<T>,
        first_index: i64,
        bound: Option<usize>,
    ) -> Worker<T> {
        let capacity = buffer.capacity();
        let end = buffer.end();
        let inner = Arc::new(Inner::new(flavor, buffer, first_index));
        #[cfg(chase_lev_genmc)]
        inner.store_initial_values();
        // Ordering: Relaxed: the deque was created on this thread just above,
        // so there is nothing to synchronize with; from here on the owner keeps
        // the pointer itself
        // (proofs-notes/reclamation.md#the-owners-cached-buffer-pointer).
        let buffer = Cell::new(inner.buffer.load(Relaxed));
        let worker = Worker {
            inner,
            lap: Lap {
                buffer,
                end: Cell::new(end),
                top_seen: Cell::new(first_index),
                // Set just below, by the same rule as every later change.
                push_until: Cell::new(first_index),
            },
            bound,
            shrink: Hysteresis::new(capacity, bound.is_some()),
            _not_sync: PhantomData,
        };
        worker.refresh_push_until();
        worker
    }

    /// Creates a stealer for this worker's deque. Stealers can be cloned and
    /// shared between threads.
    ///
    /// ```
    /// use chase_lev::{Steal, Worker};
    ///
    /// let worker = Worker::new_lifo();
    /// let stealer = worker.stealer();
    /// worker.push(1);
    /// std::thread::spawn(move || assert_eq!(stealer.steal(), Steal::Success(1)))
    ///     .join()
    ///     .unwrap();
    /// ```
    pub fn stealer(&self) -> Stealer<T> {
        Stealer {
            inner: Arc::clone(&self.inner),
        }
    }

    /// The bound of a bounded worker, `None` for a growable one.
    ///
    /// ```
    /// use chase_lev::Worker;
    ///
    /// assert_eq!(Worker::<u8>::new_lifo_bounded(10).bound(), Some(10));
    /// assert_eq!(Worker::<u8>::new_lifo().bound(), None);
    /// ```
    pub fn bound(&self) -> Option<usize> {
        self.bound
    }

    /// Which end this worker's owner pops from.
    pub(crate) fn flavor(&self) -> Flavor {
        self.inner.flavor
    }

    /// `top`, with acquire, for `len`.
    pub(crate) fn load_top(&self) -> i64 {
        // Ordering: Acquire, as in push (proofs-notes/linearizability.md#len).
        self.inner.top.load(Acquire)
    }

    /// The owner's bottom index (only the owner writes it).
    pub(crate) fn bottom(&self) -> i64 {
        // Ordering: Relaxed, the owner is the only writer of bottom
        // (proofs-notes/linearizability.md#push).
        self.inner.bottom.load(Relaxed)
    }

    /// (Tests.) How many buffers this worker retired that are not freed yet.
    #[cfg(test)]
    pub(crate) fn retired_not_freed(&self) -> usize {
        // SAFETY: the test thread is the owner and holds no other reference.
        unsafe { self.inner.retired().len() }
    }
}

impl<T> Stealer<T> {
    /// Whether this stealer steals from `worker`'s deque.
    pub(crate) fn is_stealer_of(&self, worker: &Worker<T>) -> bool {
        Arc::ptr_eq(&self.inner, &worker.inner)
    }

    /// Which end the deque's owner pops from.
    pub(crate) fn flavor(&self) -> Flavor {
        self.inner.flavor
    }

    /// (Mutant builds.) Makes the deque's mutant the active one of this
    /// thread (sites.rs).
    #[cfg(chase_lev_mutants)]
    pub(crate) fn enter(&self) {
        crate::sites::enter(self.inner.mutant);
    }
}

impl<T> Clone for Stealer<T> {
    fn clone(&self) -> Stealer<T> {
        Stealer {
            inner: Arc::clone(&self.inner),
        }
    }
}

// ------------------------------------------------------------------ push --

impl<T> Worker<T> {
    /// The owner's current buffer.
    pub(crate) fn buffer(&self) -> &Buffer<T> {
        // SAFETY: only the owner retires buffers, and it retires a buffer only
        // after replacing this pointer; so the buffer it points to is alive
        // until the owner's next buffer change. The owner holds the reference
        // only across code that calls nothing outside the crate, where no
        // nested owner operation can change the buffer
        // (proofs-notes/reclamation.md#reentrant-owner-operations).
        unsafe { &*self.lap.buffer.get() }
    }

    /// Pushes a task at the bottom.
    ///
    /// # Panics
    /// If the worker is bounded and full (use [`try_push`](Worker::try_push)
    /// to get the task back instead), if a growable buffer would exceed the
    /// memory of the machine, or after 2^63 pushes (the index space is spent).
    ///
    /// ```
    /// use chase_lev::Worker;
    ///
    /// let worker = Worker::new_lifo();
    /// worker.push(1);
    /// assert_eq!(worker.len(), 1);
    /// ```
    pub fn push(&self, task: T) {
        if self.try_push(task).is_err() {
            full(self.bound.unwrap_or_default());
        }
    }

    /// Pushes a task at the bottom, or hands it back if the worker is bounded
    /// and full. A growable worker grows instead and always returns `Ok`.
    ///
    /// ```
    /// use chase_lev::Worker;
    ///
    /// let bounded = Worker::new_fifo_bounded(1);
    /// assert_eq!(bounded.try_push(1), Ok(()));
    /// assert_eq!(bounded.try_push(2), Err(2));
    /// ```
    pub fn try_push(&self, task: T) -> Result<(), T> {
        #[cfg(chase_lev_mutants)]
        crate::sites::enter(self.inner.mutant);
        let inner = &*self.inner;
        // Ordering: Relaxed, the owner is the only writer of bottom
        // (proofs-notes/linearizability.md#push).
        let bottom = inner.bottom.load(Relaxed);
        // Lê et al.'s push loads `top` to see whether the circular array is
        // full. A buffer that never wraps is full only at its lap's end, and
        // `bottom - top_seen` bounds the length from above (`top` only
        // grows), so `top` is loaded only when `bottom` reaches the lesser of
        // the two limits, `push_until`
        // (proofs-notes/fast-paths.md#the-push-without-top).
        if bottom >= self.lap.push_until.get() {
            return self.push_loading_top(bottom, task);
        }
        self.write_and_publish(self.buffer(), bottom, task);
        Ok(())
    }

    /// Lê et al.'s push, with its load of `top`: for a push at the end of
    /// the lap, or by a bounded worker whose last look at `top` shows it
    /// full. Layout: docs/benchmarks.md#layout-attributes.
    #[cold]
    #[inline(never)]
    fn push_loading_top(&self, mut bottom: i64, mut task: T) -> Result<(), T> {
        let inner = &*self.inner;
        loop {
            // Ordering: Acquire, as in Lê et al., where it orders a thief's read
            // of a slot before the owner rewrites it after wrapping around. Our
            // buffers never wrap, so it guards nothing here; kept so that the
            // orderings stay the paper's (proofs-notes/obligations.md#push-top-acquire).
            let top = inner.top.load(site!(PushTopAcquire, Acquire));
            #[cfg(chase_lev_mutants)]
            let copy_of_top = self.lap.top_seen.get();
            self.lap.top_seen.set(top);
            let full = self.bound.is_some_and(|bound| bottom - top >= bound as i64);
            #[cfg(chase_lev_mutants)]
            let full = match () {
                _ if mutant!(BoundWithoutReload) => self
                    .bound
                    .is_some_and(|bound| bottom - copy_of_top >= bound as i64),
                _ if mutant!(BoundOffByOne) => {
                    self.bound.is_some_and(|bound| bottom - top > bound as i64)
                }
                _ => full,
            };
            if full {
                return Err(task); // bounded and full
            }
            if bottom < self.lap.end.get() {
                self.write_and_publish(self.buffer(), bottom, task);
                break;
            }
            if bottom == i64::MAX {
                index_space_exhausted();
            }
            // The end of the lap: the tasks move to a new buffer starting at
            // `top`, twice as large if the deque is full (Lê et al.'s grow).
            let capacity = self.buffer().capacity();
            let len = bottom - top;
            let new_capacity = if len >= capacity as i64 {
                capacity.saturating_mul(2)
            } else if len < self.shrink.below.get() && self.shrink.pops_left.get() == 1 {
                // Enough pops came too late (`count_pop_that_came_too_late`) and
                // none succeeded since to do the shrink: do it here instead.
                capacity / 2
            } else {
                capacity
            };
            match self.resize(bottom, top, new_capacity, Some(task)) {
                Ok(()) => break,
                // An operation nested in the allocation of the new buffer
                // changed the deque: push again from the deque as it is now
                // (proofs-notes/reclamation.md#reentrant-owner-operations).
                Err(back) => (task, bottom) = (back.expect("handed back"), self.own_bottom()),
            }
        }
        self.refresh_push_until();
        Ok(())
    }

    /// `push_until` from the lap's end and the last `top` a push loaded.
    /// Too small is only slower (the next push loads `top`), never wrong.
    fn refresh_push_until(&self) {
        let lap = &self.lap;
        let until = match self.bound {
            Some(bound) => lap
                .end
                .get()
                .min(lap.top_seen.get().saturating_add(bound as i64)),
            None => lap.end.get(),
        };
        lap.push_until.set(until);
    }

    /// The end of push: writes `task` into the slot of `bottom` and
    /// publishes it by raising `bottom`.
    fn write_and_publish(&self, buffer: &Buffer<T>, bottom: i64, task: T) {
        let inner = &*self.inner;
        // No overflow: a lap ends at `i64::MAX` at the latest, and a push
        // there panics (`push_loading_top`), so here `bottom < i64::MAX`.
        let next = bottom + 1;
        // SAFETY: `bottom` is in the buffer's lap, and no thief reads its
        // slot now: thieves read only below a bottom they saw, and the last
        // time bottom was above this index the owner popped it, which the
        // pop's fence keeps apart from any thief's read
        // (proofs-notes/reclamation.md#no-wrap).
        unsafe { buffer.write(bottom, task) };
        // Ordering: Release fence, so that a thief that reads the new bottom
        // with acquire also reads the task's bytes
        // (proofs-notes/model.md#message-passing).
        site!(PushFence, fence(Release));
        // Ordering: Relaxed, published by the fence above
        // (proofs-notes/model.md#message-passing).
        inner.bottom.store(next, RELAXED_UNLESS_TSAN);
    }

    /// Lê et al.'s `resize`, the one buffer change of the owner's: for a
    /// grow, a shrink, a move to the next lap and a batch steal's room.
    /// Copies the tasks of `[top, bottom)` into a fresh buffer of
    /// `new_capacity` slots starting at `top`, publishes it, finishes a
    /// push there if `task` is one (so that the task is visible to thieves
    /// before the owner scans the hazard slots,
    /// proofs-notes/reclamation.md#hazard-slots), and only then retires the
    /// old buffer.
    ///
    /// The new buffer may come from the global allocator, which may run any
    /// operation of this worker (an allocator that pushes deferred work, or
    /// records into a queue). So it is obtained before anything of the
    /// deque is read, and then `bottom` and the buffer are looked at again:
    /// if a nested operation changed either, the new buffer is kept as a
    /// spare, nothing moves, `task` is handed back, and the caller decides
    /// again from the deque as it is now. (`top` only grows, and an index
    /// below it is copied harmlessly, as under a thief's steal.) Nothing of
    /// the owner's is borrowed across a call out of the crate
    /// (proofs-notes/reclamation.md#reentrant-owner-operations).
    fn resize(
        &self,
        bottom: i64,
        top: i64,
        new_capacity: usize,
        task: Option<T>,
    ) -> Result<(), Option<T>> {
        let inner = &*self.inner;
        let current = self.lap.buffer.get();
        let new = self.fresh_buffer(new_capacity, top);
        let changed = self.lap.buffer.get() != current || self.own_bottom() != bottom;
        #[cfg(chase_lev_mutants)]
        let changed = changed && !mutant!(BufferChangeNotReentrant);
        if changed {
            // SAFETY: this is the owner, the only caller of `retired`; `new`
            // was never published.
            unsafe { inner.retired() }.add_spare(new);
            return Err(task);
        }
        let old = self.buffer();
        let old_capacity = old.capacity();
        #[cfg(chase_lev_mutants)]
        let for_a_batch = task.is_none() && new_capacity >= old_capacity;
        // SAFETY: `new` is live and not yet published: only this thread
        // reaches it.
        let new_buffer = unsafe { &*new };
        for index in top..bottom {
            #[cfg(chase_lev_mutants)]
            if mutant!(ShrinkDropsNewest) && new_capacity < old_capacity && index == bottom - 1 {
                break;
            }
            // SAFETY: only the owner writes slots, so reading the old ones
            // races with nothing; the new buffer is not yet published.
            unsafe { new_buffer.copy_slot(old, index, index) };
        }
        self.lap.end.set(new_buffer.end());
        self.refresh_push_until();
        let old = self.lap.buffer.replace(new);
        if new_capacity != old_capacity {
            // A resize starts the hysteresis afresh; a move to the next lap
            // at the same capacity is not a resize, and keeps the count
            // (else a deque whose owner loses most pops to thieves would
            // never earn enough between two laps to shrink).
            self.shrink.start_afresh(new_capacity, self.bound.is_some());
        }
        // Ordering: Release, so that a thief that loads the new pointer with
        // acquire reads the copied slots; this is the first of the two
        // corrections to the C11 code (proofs-notes/reclamation.md#publication).
        inner
            .buffer
            .store(new, site!(BufferPublishRelease, Release));
        if let Some(task) = task {
            #[cfg(chase_lev_mutants)]
            if mutant!(NoReloadAfterGrow) {
                // Into the old buffer, which is leaked so that the write
                // stays in bounds.
                // SAFETY: `old` is never freed.
                self.write_and_publish(unsafe { &*old }, bottom, task);
                return Ok(());
            }
            // Into the new buffer: Lê et al.'s second correction to the C11
            // code (the owner reloads the buffer after a grow).
            self.write_and_publish(self.buffer(), bottom, task);
        }
        #[cfg(chase_lev_mutants)]
        if mutant!(ReserveFreesAtOnce) && for_a_batch {
            // SAFETY: none (a mutant): a thief may still read `old`.
            unsafe { Buffer::free(old) };
            return Ok(());
        }
        // SAFETY: this is the owner, the only caller of `retired`; `old` is
        // no longer the deque's buffer and is retired once.
        unsafe { inner.retired().retire(old, self.buffer().capacity()) };
        Ok(())
    }

    /// A buffer of `capacity` slots for the lap from `start`, no thread's but
    /// this one's: a spare, or a new allocation (the global allocator may
    /// run operations of this worker here).
    fn fresh_buffer(&self, capacity: usize, start: i64) -> *mut Buffer<T> {
        let inner = &*self.inner;
        // SAFETY: this is the owner, the only caller of `retired`.
        if let Some(spare) = unsafe { inner.retired() }.take_spare(capacity) {
            // SAFETY: a spare is held by no thread, and is published only
            // by the caller (proofs-notes/reclamation.md#reuse).
            unsafe { (*spare).restart(start) };
            return spare;
        }
        if capacity == self.buffer().capacity() {
            // A move to the next lap with no spare: allocate one more, so
            // that the owner has three buffers of this capacity and a thief
            // holding one cannot leave it without a spare
            // (proofs-notes/reclamation.md#reuse).
            let spare = Buffer::new(capacity, start).allocate();
            // SAFETY: this is the owner, the only caller of `retired`.
            unsafe { inner.retired() }.add_spare(spare);
        }
        Buffer::new(capacity, start).allocate()
    }

    /// The owner's `bottom`: its own last store (only the owner writes it).
    fn own_bottom(&self) -> i64 {
        // SAFETY: this is the owner, the only thread that stores to bottom.
        unsafe { load_own_store(&self.inner.bottom) }
    }
}

// ------------------------------------------------------- batch's room --

impl<T> Worker<T> {
    /// Makes room for up to `additional` tasks past `bottom`, for a batch
    /// steal into this worker (a bounded worker may have less room); returns
    /// how many fit. The room is there when it returns: the batch steal
    /// makes no call out of the crate before it publishes the tasks
    /// (proofs-notes/reclamation.md#reentrant-owner-operations).
    pub(crate) fn reserve(&self, additional: usize) -> usize {
        let inner = &*self.inner;
        loop {
            // Ordering: Relaxed for the owner's own bottom, Acquire for top as in
            // push (proofs-notes/linearizability.md#batch-steal).
            let bottom = inner.bottom.load(Relaxed);
            let top = inner.top.load(site!(PushTopAcquire, Acquire));
            let len = (bottom - top).max(0);
            // `additional` is at most the source's length, which fits in an i64.
            let additional = i64::try_from(additional).unwrap_or(i64::MAX);
            let room = |bound: usize| bound as i64 - len;
            let count = self.bound.map_or(i64::MAX, room).clamp(0, additional);
            #[cfg(chase_lev_mutants)]
            let count = if mutant!(ReserveOnePastBound) {
                self.bound
                    .map_or(i64::MAX, |bound| room(bound) + 1)
                    .clamp(0, additional)
            } else {
                count
            };
            // Checked before any task is claimed: a batch that would run past
            // the end of the index space panics here, with the source intact,
            // as `push` does at `i64::MAX`.
            if add_index(bottom, count) <= self.lap.end.get() {
                return count as usize;
            }
            if self.make_room(bottom, top, (len + count) as usize) {
                return count as usize;
            }
        }
    }

    /// `reserve`'s buffer change: to a buffer that holds `needed` tasks from
    /// `top`. `false` if an operation nested in a call out of the crate (the
    /// allocation, or the retire's frees) changed `bottom` or left a buffer
    /// without the room: `reserve` then looks again (`top` only grows,
    /// which makes more room). Layout: docs/benchmarks.md#layout-attributes.
    #[cold]
    fn make_room(&self, bottom: i64, top: i64, needed: usize) -> bool {
        let capacity = self.buffer().capacity();
        let new_capacity = needed.max(capacity).checked_next_power_of_two();
        let new_capacity = new_capacity.unwrap_or(MAX_CAPACITY).min(MAX_CAPACITY);
        let resized = self.resize(bottom, top, new_capacity, None).is_ok();
        resized && self.own_bottom() == bottom && top + needed as i64 <= self.lap.end.get()
    }

    /// Publishes `count` tasks that a batch steal wrote past `bottom`.
    pub(crate) fn publish(&self, bottom: i64, count: i64) {
        let inner = &*self.inner;
        // (`reserve` has already checked this sum; kept as the last line of
        // defence.)
        let next = add_index(bottom, count);
        // Ordering: Release fence, as in push: the destination's thieves that
        // read the new bottom read the copied tasks (proofs-notes/model.md#message-passing).
        site!(BatchPublishFence, fence(Release));
        // Ordering: Relaxed, published by the fence above
        // (proofs-notes/model.md#message-passing).
        inner.bottom.store(next, RELAXED_UNLESS_TSAN);
    }
}

// ------------------------------------------------------------------- pop --

impl<T> Worker<T> {
    /// Pops a task: the newest for a LIFO worker, the oldest for a FIFO one.
    ///
    /// ```
    /// use chase_lev::Worker;
    ///
    /// let lifo = Worker::new_lifo();
    /// let fifo = Worker::new_fifo();
    /// for task in 1..=3 {
    ///     lifo.push(task);
    ///     fifo.push(task);
    /// }
    /// assert_eq!(lifo.pop(), Some(3));
    /// assert_eq!(fifo.pop(), Some(1));
    /// ```
    // Layout: docs/benchmarks.md#layout-attributes.
    #[inline(always)]
    pub fn pop(&self) -> Option<T> {
        #[cfg(chase_lev_mutants)]
        crate::sites::enter(self.inner.mutant);
        let popped = match self.inner.flavor {
            Flavor::Lifo => self.pop_bottom(),
            Flavor::Fifo => self.pop_top(),
        };
        if popped.is_none() {
            self.count_pop_that_came_too_late();
        }
        popped
    }

    /// Lê et al.'s `take`, behind two fast paths of the owner's own
    /// (proofs-notes/fast-paths.md): a look at `bottom` and `top` that shows
    /// the deque empty returns `None` with no store and no fence, and one
    /// that shows exactly one task takes it with the CAS on `top` alone.
    /// Only a look that shows two tasks or more takes the figure's path.
    #[inline(always)]
    fn pop_bottom(&self) -> Option<T> {
        let inner = &*self.inner;
        // Not in the figure: the owner's look. Ordering: Relaxed, the owner
        // is the only writer of bottom (proofs-notes/linearizability.md#pop).
        let bottom = inner.bottom.load(Relaxed);
        // Ordering: Relaxed: top only grows, so a stale top is smaller than
        // the current one, and each path below is sound for any top at or
        // below the current one (proofs-notes/fast-paths.md#the-owners-look).
        let top = inner.top.load(Relaxed);
        let len = bottom - top;
        let (empty, last) = (len <= 0, len == 1);
        #[cfg(chase_lev_mutants)]
        let (empty, last) = match len {
            ..=1 if mutant!(EmptyLookAtOne) => (true, false),
            0 if mutant!(UnsignedPopAtZero) => (false, false),
            2 if mutant!(CasOnlyPopAtTwo) => (false, true),
            _ => (empty, last),
        };
        if empty {
            // Empty at the look: every index below `bottom` is claimed.
            return None;
        }
        if last {
            // Exactly one task, at `top = bottom - 1`: claimed with the CAS
            // that thieves use, `top -> top + 1`, `bottom` left alone
            // (proofs-notes/fast-paths.md#the-cas-only-last-task-pop).
            let index = bottom - 1;
            // SAFETY: only the owner writes slots (proofs-notes/reclamation.md#no-wrap);
            // `index` is below `bottom`, in the current buffer's lap.
            let task = unsafe { self.buffer().read(index) };
            #[cfg(chase_lev_mutants)]
            if mutant!(SkipLastCas) {
                // Taken as if no thief could race, lowering bottom to top
                // (sequentially right: the deque is then empty). Ordering:
                // Relaxed, as every owner store to bottom
                // (proofs-notes/obligations.md#skip-last-cas).
                inner.bottom.store(index, RELAXED_UNLESS_TSAN);
                // SAFETY: none (a mutant); only used with plain-integer tasks.
                return Some(unsafe { task.assume_init() });
            }
            // `top < bottom` here, so `top + 1` cannot overflow.
            // Ordering: SeqCst success, as every other CAS on top; nothing
            // depends on it (proofs-notes/fast-paths.md#cas-only-pop-seqcst):
            // the CAS's atomicity decides the race, the slot is the owner's
            // own write, and earlier pops' fences order what a thief that
            // reads this top may see of bottom.
            let won = inner
                .top
                .compare_exchange(top, top + 1, site!(CasOnlyPopSeqCst, SeqCst), Relaxed)
                .is_ok();
            #[cfg(chase_lev_mutants)]
            let won = won || mutant!(CasOnlyPopKeepsLostTask);
            if !won {
                // A thief took it: top has reached bottom, the deque is empty.
                return None;
            }
            self.consider_shrinking(bottom, top + 1);
            // SAFETY: the slot of `index` held a task (top = index < bottom)
            // and the CAS from `top = index` claimed it for this owner
            // (proofs-notes/fast-paths.md#the-cas-only-last-task-pop).
            return Some(unsafe { task.assume_init() });
        }
        // Figure 1: `b = load_relaxed(&q->bottom) - 1`, `store_relaxed(&q->bottom, b)`.
        let bottom = bottom - 1;
        let buffer = self.buffer();
        // Ordering: Relaxed, ordered before the load of top by the fence below
        // (proofs-notes/model.md#store-buffering).
        inner.bottom.store(bottom, RELAXED_UNLESS_TSAN);
        // Figure 1: `thread_fence(seq_cst)`. Ordering: SeqCst fence. Paired
        // with the thief's SeqCst fence, at least one of owner and thief sees
        // the other's write, so they cannot both take the last task
        // (proofs-notes/model.md#store-buffering).
        site!(TakeFence, fence(SeqCst));
        // Figure 1: `t = load_relaxed(&q->top)`. Ordering: Relaxed, ordered
        // by the fence above; the CAS below re-checks it for the last task
        // (proofs-notes/model.md#store-buffering).
        let top = inner.top.load(Relaxed);
        // No `+ 1` below can overflow: `bottom` was just lowered by one.
        let empty = top > bottom;
        #[cfg(chase_lev_mutants)]
        let empty = if mutant!(UnsignedPopAtZero) {
            (top as u64) > (bottom as u64)
        } else {
            empty
        };
        if empty {
            // Figure 1: empty, `store_relaxed(&q->bottom, b + 1)`.
            // Ordering: Relaxed, as for every owner store to bottom
            // (proofs-notes/linearizability.md#pop).
            inner.bottom.store(bottom + 1, RELAXED_UNLESS_TSAN);
            return None;
        }
        // Figure 1: `x = load_relaxed(&a->buffer[b % a->size])`.
        // SAFETY: only the owner writes slots (proofs-notes/reclamation.md#no-wrap).
        let task = unsafe { buffer.read(bottom) };
        if top == bottom {
            #[cfg(chase_lev_mutants)]
            if mutant!(SkipLastCas) {
                // SAFETY: none (a mutant); only used with plain-integer tasks.
                return Some(unsafe { task.assume_init() });
            }
            // Figure 1: the last task, raced for with a strong CAS.
            // Ordering: SeqCst success, as in Lê et al.; the fences and the
            // CAS's atomicity already decide the race, so nothing depends on
            // it (proofs-notes/obligations.md#take-cas-seqcst).
            let won = inner
                .top
                .compare_exchange(top, top + 1, site!(TakeCasSeqCst, SeqCst), Relaxed)
                .is_ok();
            // Figure 1: `store_relaxed(&q->bottom, b + 1)`. Ordering:
            // Relaxed; bottom = top now: empty
            // (proofs-notes/linearizability.md#pop).
            inner.bottom.store(bottom + 1, RELAXED_UNLESS_TSAN);
            if !won {
                return None;
            }
            self.consider_shrinking(bottom + 1, top + 1);
        } else {
            self.consider_shrinking(bottom, top);
        }
        // SAFETY: the slot of `bottom` held a task (top <= bottom) and this
        // owner won it: either more than one task was left, so no thief can
        // reach it, or the CAS above claimed it
        // (proofs-notes/linearizability.md#pop).
        Some(unsafe { task.assume_init() })
    }

    /// The FIFO owner's pop: takes the oldest task with a CAS on `top`.
    fn pop_top(&self) -> Option<T> {
        let inner = &*self.inner;
        loop {
            // Ordering: Relaxed, the owner is the only writer of bottom
            // (proofs-notes/linearizability.md#fifo-pop).
            let bottom = inner.bottom.load(Relaxed);
            // Ordering: Relaxed; the owner wrote every slot itself, and the
            // CAS below decides (proofs-notes/linearizability.md#fifo-pop).
            let top = inner.top.load(Relaxed);
            if top >= bottom {
                return None;
            }
            // (So `top + 1 <= bottom` below cannot overflow.)
            // SAFETY: only the owner writes slots (proofs-notes/reclamation.md#no-wrap).
            let task = unsafe { self.buffer().read(top) };
            // Ordering: SeqCst success (release is what matters), so that a
            // thief that reads this top also sees the owner's earlier pushes
            // (proofs-notes/linearizability.md#fifo-pop).
            if inner
                .top
                .compare_exchange(top, top + 1, site!(FifoCasSeqCst, SeqCst), Relaxed)
                .is_ok()
            {
                self.consider_shrinking(bottom, top + 1);
                // SAFETY: the slot of `top` held a task and the CAS claimed it.
                return Some(unsafe { task.assume_init() });
            }
        }
    }
}

// ----------------------------------------------------------------- steal --

impl<T> Stealer<T> {
    /// Steals the oldest task.
    ///
    /// Returns [`Steal::Retry`] when the attempt lost a race with the owner or
    /// another thief; the deque may still hold tasks.
    ///
    /// ```
    /// use chase_lev::{Steal, Worker};
    ///
    /// let worker = Worker::new_fifo();
    /// worker.push(1);
    /// let stealer = worker.stealer();
    /// assert_eq!(stealer.steal(), Steal::Success(1));
    /// assert_eq!(stealer.steal(), Steal::Empty);
    /// ```
    // Layout: docs/benchmarks.md#layout-attributes.
    #[inline(always)]
    pub fn steal(&self) -> Steal<T> {
        #[cfg(chase_lev_mutants)]
        crate::sites::enter(self.inner.mutant);
        let inner = &*self.inner;
        // Figure 1: `t = load_acquire(&q->top)`. Ordering: Acquire, as in
        // Lê et al.: a thief that sees another's removal also sees the
        // pushes before it, here before the empty look that comes ahead of
        // the fence (proofs-notes/obligations.md#steal-top-acquire).
        let top = inner.top.load(site!(StealTopAcquire, Acquire));
        // Not in the figure: the empty look, `Empty` with no fence.
        // Ordering: Relaxed: an `Empty` needs only coherence
        // (proofs-notes/fast-paths.md#the-thiefs-empty-look).
        let bottom = inner.bottom.load(Relaxed);
        #[cfg(chase_lev_mutants)]
        let bottom = bottom - i64::from(mutant!(ThiefEmptyLookAtOne));
        if top >= bottom {
            return Steal::Empty;
        }
        self.steal_from(top, |stealer, buffer, top, _bottom| {
            let inner = &*stealer.inner;
            #[cfg(chase_lev_mutants)]
            if mutant!(StealFromBottom) || mutant!(ReadAfterCas) {
                let index = if !mutant!(StealFromBottom) {
                    top
                } else if buffer.covers(_bottom - 1) {
                    _bottom - 1
                } else {
                    return Steal::Retry;
                };
                // SAFETY: none (a mutant): the CAS claims `top`, not what is read.
                let read = || unsafe { buffer.read(index) };
                let task = (!mutant!(ReadAfterCas)).then(read);
                if !stealer.claim(top, 1) {
                    return Steal::Retry;
                }
                let task = task.unwrap_or_else(read);
                // SAFETY: none (a mutant); only used with plain-integer tasks.
                return Steal::Success(unsafe { task.assume_init() });
            }
            // Figure 1: `x = load_relaxed(&a->buffer[t % a->size])`, before the
            // CAS as Lê et al. do: once the CAS is won the owner may retire the
            // buffer or reuse the index.
            // SAFETY: `top` is in the buffer's lap (`steal_from` checked), and
            // no thread writes its slot while a thief can read it
            // (proofs-notes/reclamation.md#no-wrap).
            let task: MaybeUninit<T> = unsafe { buffer.read(top) };
            #[cfg(chase_lev_mutants)]
            if mutant!(StealWithoutCas) {
                // Ordering: SeqCst, a store, not a CAS, claims the task
                // (proofs-notes/obligations.md#steal-without-cas).
                inner.top.store(top + 1, SeqCst);
                // SAFETY: none (a mutant); only used with plain-integer tasks.
                return Steal::Success(unsafe { task.assume_init() });
            }
            // Figure 1: `compare_exchange_strong_explicit(&q->top, &t, t + 1,
            // seq_cst, relaxed)`; `top < bottom`, so `top + 1` cannot overflow.
            // Ordering: SeqCst success, as in Lê et al., where its release half
            // orders the slot read before the owner's rewrite after a wrap; our
            // buffers never wrap, so the CAS's atomicity is what claims the task
            // (proofs-notes/obligations.md#steal-cas-seqcst).
            let won = inner
                .top
                .compare_exchange(top, top + 1, site!(StealCasSeqCst, SeqCst), Relaxed)
                .is_ok();
            if !won {
                return Steal::Retry;
            }
            // SAFETY: the slot of `top` held a task (top < bottom, published by
            // push's release fence and the acquire load of bottom), and the CAS
            // made this thief its only owner
            // (proofs-notes/linearizability.md#steal).
            Steal::Success(unsafe { task.assume_init() })
        })
    }

    /// The middle of Lê et al.'s steal, after a look showed a task at `top`:
    /// the fence and `b = load_acquire(&q->bottom)`, with the buffer
    /// announced in a hazard slot before the fence and checked after it
    /// (`Hazard::protect`); then `take(stealer, buffer, top, bottom)`: the
    /// steal's read and CAS, or a batch steal's claims, on the protected
    /// buffer and with the `bottom` seen after the fence. The guard holds
    /// while `take` runs, and its drop clears the hazard slot when this
    /// returns (or unwinds). Shared by the steal and the batch steals.
    /// Layout: docs/benchmarks.md#layout-attributes.
    #[inline(never)]
    pub(crate) fn steal_from<R>(
        &self,
        top: i64,
        take: impl FnOnce(&Self, &Buffer<T>, i64, i64) -> Steal<R>,
    ) -> Steal<R> {
        let inner = &*self.inner;
        let Some((hazard, bottom)) = Hazard::protect(&inner.buffer, || {
            // After the fence. Ordering: Acquire, pairs with push's release
            // fence so the task's bytes are visible; a batch also copies the
            // tasks pushed between the look and the fence, which only this
            // acquire publishes (proofs-notes/model.md#message-passing).
            let bottom = inner.bottom.load(site!(StealBottomAcquire, Acquire));
            // Figure 1: `if (t < b)`.
            (top < bottom).then_some(bottom)
        }) else {
            return Steal::Empty;
        };
        let buffer = hazard.buffer();
        // Not if the owner has moved to a buffer whose lap starts past
        // `top`: `top` has moved on and the CAS would fail, a lost race
        // (proofs-notes/reclamation.md#no-wrap).
        if !buffer.covers(top) {
            return Steal::Retry;
        }
        take(self, buffer, top, bottom)
    }

    /// The steal's look at `bottom`, before any fence: a `top` at or past it
    /// means `Empty` (for the batch steals' look, which is `steal`'s).
    pub(crate) fn bottom_at_a_look(&self) -> i64 {
        // Ordering: Relaxed: an `Empty` needs only coherence
        // (proofs-notes/fast-paths.md#the-thiefs-empty-look).
        let bottom = self.inner.bottom.load(Relaxed);
        #[cfg(chase_lev_mutants)]
        let bottom = bottom - i64::from(mutant!(ThiefEmptyLookAtOne));
        bottom
    }

    /// The current buffer, as a thief loads it (for the batch steal's next
    /// looks, which compare it with the one their guard holds).
    pub(crate) fn load_buffer(&self) -> *mut Buffer<T> {
        // Ordering: Acquire, pairs with the release store of a new buffer
        // (proofs-notes/reclamation.md#publication).
        self.inner.buffer.load(site!(BufferLoadAcquire, Acquire))
    }

    /// `top` once more (for `len`).
    pub(crate) fn load_top_again(&self) -> i64 {
        // Ordering: Relaxed: `len` needs only coherence
        // (proofs-notes/linearizability.md#len).
        self.inner.top.load(Relaxed)
    }

    /// `top`, as the steal loads it (for `len` and the batch steal's next
    /// looks).
    pub(crate) fn load_top(&self) -> i64 {
        // Ordering: Acquire, as in `steal`
        // (proofs-notes/obligations.md#steal-top-acquire).
        self.inner.top.load(site!(StealTopAcquire, Acquire))
    }

    /// The steal's fence, then its load of `bottom` (for `len` and the
    /// batch steal's next looks).
    pub(crate) fn fence_then_bottom(&self) -> i64 {
        // Ordering: SeqCst fence, as in `Hazard::protect`
        // (proofs-notes/model.md#store-buffering).
        site!(StealFence, fence(SeqCst));
        // Ordering: Acquire, as in `steal_from`
        // (proofs-notes/model.md#message-passing).
        self.inner.bottom.load(site!(StealBottomAcquire, Acquire))
    }

    /// The CAS of a batch steal, which claims `count` tasks from `top`.
    pub(crate) fn claim(&self, top: i64, count: i64) -> bool {
        let inner = &*self.inner;
        // `top + count <= bottom` (the tasks claimed were seen below
        // `bottom`), so this never panics; checked all the same.
        let next = add_index(top, count);
        #[cfg(chase_lev_mutants)]
        if mutant!(StealWithoutCas) {
            // Ordering: SeqCst, a store, not a CAS, claims the tasks
            // (proofs-notes/obligations.md#steal-without-cas).
            inner.top.store(next, SeqCst);
            return true;
        }
        // Ordering: SeqCst success, as in `steal_from`
        // (proofs-notes/obligations.md#steal-cas-seqcst).
        inner
            .top
            .compare_exchange(top, next, site!(StealCasSeqCst, SeqCst), Relaxed)
            .is_ok()
    }
}

// --------------------------------------------------------------- indices --

#[cold]
#[track_caller]
fn full(bound: usize) -> ! {
    panic!("chase-lev: push on a full bounded Worker (bound {bound}); use try_push to get the task back")
}

/// `index + count` for an index of the deque, panicking instead of
/// wrapping at the end of the index space.
// Layout: docs/benchmarks.md#layout-attributes.
#[inline(always)]
#[track_caller]
pub(crate) fn add_index(index: i64, count: i64) -> i64 {
    match index.checked_add(count) {
        Some(sum) => sum,
        None => index_space_exhausted(),
    }
}

#[cold]
#[track_caller]
pub(crate) fn index_space_exhausted() -> ! {
    panic!(
        "chase-lev: the deque's 64-bit index space is exhausted (2^63 pushes); indices never wrap"
    )
}

// ---------------------------------------------------------------- shrink --
//
// The shrink hysteresis: the LIFO and FIFO owner's pops count toward halving
// the buffer once it has stayed under a quarter full (`Hysteresis`).

impl<T> Worker<T> {
    /// Shrinks the buffer by half once the owner has popped `capacity / 2`
    /// times, since the last resize, while the deque was under a quarter
    /// full. Every pop counts, whether it returned a task, lost the last one
    /// to a thief, or found the deque empty: who took the tasks does not
    /// change how many slots the deque needs. The hysteresis means that a
    /// deque that fills and drains in rounds keeps its buffer instead of
    /// reallocating every round, and the copy (at most `capacity / 4` tasks)
    /// is paid for by the pops before it.
    fn consider_shrinking(&self, bottom: i64, top: i64) {
        let shrink = &self.shrink;
        // `below` is 0 when the buffer cannot shrink, and a pop never
        // leaves fewer than 0 tasks, so the count only runs down for a
        // buffer of at least 4 slots (`pops_per_halving` >= 2), and a shrink
        // starts it afresh (`resize`) as it reaches 0.
        if bottom - top >= shrink.below.get() {
            shrink.pops_left.set(shrink.pops_per_halving.get());
            return;
        }
        let left = shrink.pops_left.get() - 1;
        shrink.pops_left.set(left);
        if left == 0 {
            self.shrink_by_half(bottom, top);
        }
    }

    /// A pop that found the deque empty, or lost its last task to a thief,
    /// still counts toward shrinking: a worker whose tasks all go to thieves
    /// needs no more slots than one that pops them itself. It only counts
    /// (down to 1, never to 0): the shrink itself waits for the next
    /// successful pop or the next move to a new lap (`push_loading_top`), so
    /// that `pop` holds no second call to the shrink. The deque it leaves is
    /// empty, so under a quarter full whenever the buffer can shrink at all
    /// (`push_loading_top` checks that again).
    fn count_pop_that_came_too_late(&self) {
        let left = self.shrink.pops_left.get();
        if left > 1 {
            self.shrink.pops_left.set(left - 1);
        }
    }

    #[cold]
    fn shrink_by_half(&self, bottom: i64, top: i64) {
        // The count starts again before the allocation, where a nested pop
        // counts too (proofs-notes/reclamation.md#reentrant-owner-operations);
        // a shrink that happens starts it afresh anyway.
        self.shrink
            .pops_left
            .set(self.shrink.pops_per_halving.get());
        let half = self.buffer().capacity() / 2;
        // An `Err`: an operation nested in the allocation changed the deque;
        // the next pops decide again.
        let _ = self.resize(bottom, top, half, None);
    }
}

impl Hysteresis {
    fn new(capacity: usize, bounded: bool) -> Hysteresis {
        let hysteresis = Hysteresis {
            pops_left: Cell::new(0),
            pops_per_halving: Cell::new(0),
            below: Cell::new(0),
            min_capacity: capacity,
        };
        hysteresis.start_afresh(capacity, bounded);
        hysteresis
    }

    /// The count for a buffer of `capacity` slots, from the start.
    fn start_afresh(&self, capacity: usize, bounded: bool) {
        self.pops_left.set(capacity / 2);
        self.pops_per_halving.set(capacity / 2);
        let below = if bounded || capacity <= self.min_capacity {
            0
        } else {
            (capacity / 4) as i64
        };
        self.below.set(below);
    }
}

// ------------------------------------------------------------------ drop --

impl<T> Drop for Inner<T> {
    fn drop(&mut self) {
        // Ordering: Relaxed everywhere: `&mut self` means every other handle
        // is gone, and the `Arc` that owned this synchronised with them
        // (proofs-notes/linearizability.md#proof-sketch).
        let top = self.top.load(Relaxed);
        let bottom = self.bottom.load(Relaxed);
        let buffer = FreeOnDrop(self.buffer.load(Relaxed));
        // SAFETY: the buffer pointer is valid until `buffer` frees it, no
        // other thread remains, and the slots of [top, bottom) hold tasks the
        // deque owns, each dropped once.
        unsafe { drop_tasks::<T>(&*buffer.0, top, bottom) };
    }
}

/// Frees the current buffer when dropped, even while unwinding from a task's
/// panicking `Drop`.
struct FreeOnDrop<T>(*mut Buffer<T>);

impl<T> Drop for FreeOnDrop<T> {
    fn drop(&mut self) {
        // SAFETY: the pointer came from `Box::into_raw` and is freed only
        // here, where no other handle is left.
        unsafe { Buffer::free_at_the_deques_drop(self.0) };
    }
}

/// Drops the tasks in the slots of `[next, end)`. If one of them panics, the
/// rest are still dropped while the panic unwinds (as `Vec` does); a second
/// panic aborts the process, as it does for `Vec`.
///
/// # Safety
/// The slots of `[next, end)` hold initialised tasks that nothing else owns.
unsafe fn drop_tasks<T>(buffer: &Buffer<T>, mut next: i64, end: i64) {
    struct ContinueOnUnwind<'a, T> {
        buffer: &'a Buffer<T>,
        next: i64,
        end: i64,
    }
    impl<T> Drop for ContinueOnUnwind<'_, T> {
        fn drop(&mut self) {
            // SAFETY: the same slots the caller vouched for, minus the ones
            // already dropped.
            unsafe { drop_tasks::<T>(self.buffer, self.next, self.end) };
        }
    }
    while next < end {
        let index = next;
        next += 1;
        let rest = ContinueOnUnwind::<T> { buffer, next, end };
        // SAFETY: the caller guarantees the slot holds an owned task and no
        // other thread touches it.
        drop(unsafe { buffer.read(index).assume_init() });
        core::mem::forget(rest);
    }
}
