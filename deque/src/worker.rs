//! `Worker`, the owner's handle: push and pop at the bottom, grow and shrink.

use core::cell::Cell;
use core::fmt;
use core::marker::PhantomData;
use core::mem;

use crate::buffer::{Buffer, MAX_CAPACITY};
use crate::deque::{Flavor, Inner};
use crate::policy::{fence_if, Policy};
use crate::stealer::Stealer;
use crate::sync::{Arc, Ordering::Relaxed};
use crate::trace::trace;

/// The capacity of a worker made by `new_lifo` or `new_fifo`. Larger than
/// crossbeam-deque's 64 because a buffer here holds one lap of indices: a
/// deque that is pushed and popped around empty moves its indices on by one
/// per last-task pop and changes buffers once per lap (reusing a retired
/// buffer, without allocating: proofs-notes/reclamation.md#reuse). At 256
/// slots that is under 2 instructions per operation (deque/benches/callgrind.sh).
#[cfg(not(chase_lev_loom))]
const DEFAULT_CAPACITY: usize = 256;

/// Under loom (a user's model with `--cfg chase_lev_loom`, or this
/// repository's), four slots, as tokio's queue does: loom tracks every slot,
/// and a model that pushes a few tasks then reaches a new lap or a grow.
#[cfg(chase_lev_loom)]
const DEFAULT_CAPACITY: usize = 4;

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
    pub(crate) inner: Arc<Inner<T>>,
    /// The owner's copy of the buffer pointer. Only the owner replaces the
    /// buffer, so this is the value Lê et al.'s owner reads with a relaxed
    /// load of `array`; keeping it here saves that load.
    buffer: Cell<*mut Buffer<T>>,
    /// One past the last index of the current buffer's lap: a push there
    /// first moves the tasks to a new buffer (buffer.rs explains why buffers
    /// never wrap).
    end: Cell<i64>,
    /// A bounded worker hands a task back when `bottom - top` reaches it;
    /// `i64::MAX` (never) for a growable one.
    limit: Cell<i64>,
    bounded: bool,
    /// The buffer never shrinks below this many slots.
    min_capacity: usize,
    /// Pops still to make under a quarter full, in a row, before the buffer
    /// halves: the hysteresis of shrinking. Counts down from `shrink_after`.
    pops_until_shrink: Cell<usize>,
    /// Half the capacity: how many such pops a halving takes. Kept here, like
    /// `shrink_below`, so that a pop never reads the buffer's capacity.
    shrink_after: Cell<usize>,
    /// A pop that leaves fewer tasks than this counts toward shrinking: a quarter
    /// of the capacity, or 0 (never) when the buffer cannot shrink (bounded,
    /// or at its minimum size). Recomputed at each resize, so that the common
    /// pop pays one comparison instead of re-deriving it from the buffer
    /// (deque/benches/callgrind.sh: 4 instructions per pop).
    shrink_below: Cell<i64>,
    /// Not `Sync`: the owner's operations assume a single thread.
    _not_sync: PhantomData<Cell<()>>,
}

// SAFETY: a `Worker` is the unique owner handle; moving it to another thread
// moves the owner role with it. Its `Cell`s are only touched by the thread
// that holds it. Tasks move between threads, so `T: Send` is required.
unsafe impl<T: Send> Send for Worker<T> {}

impl<T> Worker<T> {
    /// Creates a growable worker whose owner pops the newest task first
    /// (the usual choice for fork-join schedulers).
    ///
    /// ```
    /// use chase_lev::Worker;
    ///
    /// let worker = Worker::new_lifo();
    /// worker.push('a');
    /// worker.push('b');
    /// assert_eq!(worker.pop(), Some('b'));
    /// ```
    pub fn new_lifo() -> Worker<T> {
        Worker::build(Flavor::Lifo, DEFAULT_CAPACITY, false, Policy::default())
    }

    /// Creates a growable worker whose owner pops the oldest task first
    /// (the choice of schedulers that want fairness, like Go's and Tokio's).
    ///
    /// ```
    /// use chase_lev::Worker;
    ///
    /// let worker = Worker::new_fifo();
    /// worker.push('a');
    /// worker.push('b');
    /// assert_eq!(worker.pop(), Some('a'));
    /// ```
    pub fn new_fifo() -> Worker<T> {
        Worker::build(Flavor::Fifo, DEFAULT_CAPACITY, false, Policy::default())
    }

    /// Creates a growable LIFO worker that starts with room for `capacity`
    /// tasks (rounded up to a power of two) and never shrinks below it.
    ///
    /// ```
    /// use chase_lev::Worker;
    ///
    /// let worker = Worker::<u32>::with_capacity(1000);
    /// assert_eq!(worker.capacity(), 1024);
    /// for task in 0..5000 {
    ///     worker.push(task); // grows as needed
    /// }
    /// assert_eq!(worker.len(), 5000);
    /// ```
    pub fn with_capacity(capacity: usize) -> Worker<T> {
        Worker::build(Flavor::Lifo, capacity, false, Policy::default())
    }

    /// Creates a growable FIFO worker that starts with room for `capacity`
    /// tasks (rounded up to a power of two) and never shrinks below it.
    ///
    /// ```
    /// use chase_lev::Worker;
    ///
    /// let worker = Worker::<u32>::new_fifo_with_capacity(3);
    /// assert_eq!(worker.capacity(), 4);
    /// ```
    pub fn new_fifo_with_capacity(capacity: usize) -> Worker<T> {
        Worker::build(Flavor::Fifo, capacity, false, Policy::default())
    }

    /// Creates a LIFO worker that holds at most `capacity` tasks.
    /// [`try_push`](Worker::try_push) hands the task back when it is full
    /// (what crossbeam-deque issue #720 asks for). Its buffer never grows;
    /// like every buffer here it is replaced by a fresh one of the same size
    /// when the indices reach the end of its lap (see `buffer.rs`).
    ///
    /// # Panics
    /// If `capacity` is zero or too large to allocate.
    ///
    /// ```
    /// use chase_lev::Worker;
    ///
    /// let worker = Worker::new_lifo_bounded(2);
    /// assert_eq!(worker.try_push(1), Ok(()));
    /// assert_eq!(worker.try_push(2), Ok(()));
    /// assert_eq!(worker.try_push(3), Err(3));
    /// ```
    pub fn new_lifo_bounded(capacity: usize) -> Worker<T> {
        Worker::build(Flavor::Lifo, capacity, true, Policy::default())
    }

    /// Creates a FIFO worker that holds at most `capacity` tasks.
    ///
    /// # Panics
    /// If `capacity` is zero or too large to allocate.
    ///
    /// ```
    /// use chase_lev::Worker;
    ///
    /// let worker = Worker::new_fifo_bounded(1);
    /// assert_eq!(worker.try_push("first"), Ok(()));
    /// assert_eq!(worker.try_push("second"), Err("second"));
    /// assert_eq!(worker.pop(), Some("first"));
    /// ```
    pub fn new_fifo_bounded(capacity: usize) -> Worker<T> {
        Worker::build(Flavor::Fifo, capacity, true, Policy::default())
    }

    pub(crate) fn build(
        flavor: Flavor,
        capacity: usize,
        bounded: bool,
        policy: Policy,
    ) -> Worker<T> {
        Worker::build_at(flavor, capacity, bounded, policy, 0)
    }

    /// As `build`, with both indices starting at `first_index` (tests use a
    /// start near `i64::MAX` to reach the end of the index space).
    pub(crate) fn build_at(
        flavor: Flavor,
        capacity: usize,
        bounded: bool,
        policy: Policy,
        first_index: i64,
    ) -> Worker<T> {
        if bounded {
            assert!(
                capacity > 0,
                "chase-lev: a bounded worker needs a capacity of at least 1"
            );
        }
        assert!(
            capacity <= MAX_CAPACITY,
            "chase-lev: capacity overflow ({capacity} tasks requested, at most {MAX_CAPACITY})"
        );
        let buffer_capacity = if mem::size_of::<T>() == 0 && !bounded && !cfg!(chase_lev_loom) {
            // Zero-sized tasks take no memory: start at the largest capacity
            // so that the buffer never needs to grow or shrink (not under
            // loom, which tracks every slot).
            MAX_CAPACITY
        } else {
            capacity.max(1).next_power_of_two()
        };
        let buffer = Buffer::new(buffer_capacity, first_index);
        let end = buffer.end();
        let limit = if bounded { capacity as i64 } else { i64::MAX };
        let inner = Arc::new(Inner::new(flavor, buffer, first_index, policy));
        // Ordering: Relaxed: the deque was created on this thread just above,
        // so there is nothing to synchronize with; from here on the owner keeps
        // the pointer itself
        // (proofs-notes/reclamation.md#the-owners-cached-buffer-pointer).
        let buffer = Cell::new(inner.buffer.load(Relaxed));
        Worker {
            inner,
            buffer,
            end: Cell::new(end),
            limit: Cell::new(limit),
            bounded,
            min_capacity: buffer_capacity,
            pops_until_shrink: Cell::new(buffer_capacity / 2),
            shrink_after: Cell::new(buffer_capacity / 2),
            shrink_below: Cell::new(shrink_threshold(bounded, buffer_capacity, buffer_capacity)),
            _not_sync: PhantomData,
        }
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

    /// The owner's current buffer.
    #[inline(always)]
    pub(crate) fn buffer(&self) -> &Buffer<T> {
        // SAFETY: only the owner retires buffers, and it retires a buffer only
        // after replacing this pointer; so the buffer it points to is alive
        // for as long as the owner holds `&self`.
        unsafe { &*self.buffer.get() }
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
    #[inline]
    pub fn push(&self, task: T) {
        if self.try_push(task).is_err() {
            full(self.limit.get());
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
    #[inline]
    pub fn try_push(&self, task: T) -> Result<(), T> {
        let inner = &*self.inner;
        let policy = inner.policy;
        // Ordering: Relaxed, the owner is the only writer of bottom
        // (proofs-notes/linearizability.md#push).
        let bottom = inner.bottom.load(Relaxed);
        // Ordering: Acquire, as in Lê et al., where it orders a thief's read
        // of a slot before the owner rewrites it after wrapping around. Our
        // buffers never wrap, so it guards nothing here; kept so that the
        // orderings stay the paper's (proofs-notes/obligations.md#push-top-acquire).
        let top = inner.top.load(policy.push_top_load());
        trace!(inner, "push: load bottom = {bottom}, load top = {top}");
        if bottom - top >= self.limit.get() {
            return Err(task); // bounded and full
        }
        if bottom >= self.end.get() {
            self.push_into_next_lap(bottom, top, task);
        } else {
            self.write_and_publish(self.buffer(), bottom, task);
        }
        Ok(())
    }

    /// The end of push: writes `task` into the slot of `bottom` and
    /// publishes it by raising `bottom`.
    #[inline(always)]
    fn write_and_publish(&self, buffer: &Buffer<T>, bottom: i64, task: T) {
        let inner = &*self.inner;
        let policy = inner.policy;
        // No overflow: a lap ends at `i64::MAX` at the latest, and
        // `push_into_next_lap` panics there, so here `bottom < i64::MAX`.
        let next = bottom + 1;
        // SAFETY: `bottom` is in the buffer's lap, and no thief reads its
        // slot now: thieves read only below a bottom they saw, and the last
        // time bottom was above this index the owner popped it, which the
        // pop's fence keeps apart from any thief's read
        // (proofs-notes/reclamation.md#no-wrap).
        unsafe { buffer.write(bottom, task) };
        trace!(inner, "push: write slot {bottom}");
        // Ordering: Release fence, so that a thief that reads the new bottom
        // with acquire also reads the task's bytes
        // (proofs-notes/model.md#message-passing).
        fence_if(policy.push_fence());
        // Ordering: Relaxed, published by the fence above
        // (proofs-notes/model.md#message-passing).
        inner.bottom.store(next, policy.bottom_store());
        trace!(inner, "push: store bottom := {next}");
    }

    /// `bottom` reached the end of the buffer's lap: moves the tasks to a new
    /// buffer starting at `top`, twice as large if the deque is full (Lê et
    /// al.'s grow), finishes the push there, and only then retires the old
    /// buffer, so that the task is visible to thieves before the owner scans
    /// the hazard slots (proofs-notes/reclamation.md#hazard-slots).
    #[cold]
    #[inline(never)]
    fn push_into_next_lap(&self, bottom: i64, top: i64, task: T) {
        if bottom == i64::MAX {
            index_space_exhausted();
        }
        let capacity = self.buffer().capacity();
        let len = bottom - top;
        let new_capacity = if len >= capacity as i64 {
            capacity.saturating_mul(2)
        } else if len < self.shrink_below.get() && self.pops_until_shrink.get() == 1 {
            // Enough pops came too late (`count_pop_that_came_too_late`) and
            // none succeeded since to do the shrink: do it here instead.
            capacity / 2
        } else {
            capacity
        };
        let old = self.replace_buffer(bottom, top, new_capacity);
        if self.inner.policy.reload_after_grow() {
            self.write_and_publish(self.buffer(), bottom, task);
            // SAFETY: `old` is no longer the deque's buffer and is retired once.
            unsafe { self.retire(old) };
        } else {
            // Mutant NoReloadAfterGrow: keep writing into the old buffer
            // (and leak it, so that the write stays in bounds).
            // SAFETY: never freed.
            self.write_and_publish(unsafe { &*old }, bottom, task);
        }
    }

    /// Copies the tasks of `[top, bottom)` into a new buffer of
    /// `new_capacity` slots and publishes it; returns the old buffer, which
    /// the caller must retire.
    fn replace_buffer(&self, bottom: i64, top: i64, new_capacity: usize) -> *mut Buffer<T> {
        let inner = &*self.inner;
        let old = self.buffer();
        let old_capacity = old.capacity();
        // SAFETY: this is the owner, the only caller of `retired`.
        let new = match unsafe { inner.retired() }.take_spare(new_capacity) {
            Some(spare) => {
                // SAFETY: a spare is held by no thread, and is published
                // only below (proofs-notes/reclamation.md#reuse).
                unsafe { (*spare).restart(top) };
                spare
            }
            None => {
                if new_capacity == old_capacity {
                    // A move to the next lap with no spare: allocate one
                    // more, so that the owner has three buffers of this
                    // capacity and a thief holding one cannot leave it
                    // without a spare (proofs-notes/reclamation.md#reuse).
                    let spare = Box::into_raw(Box::new(Buffer::new(new_capacity, top)));
                    // SAFETY: this is the owner, the only caller of `retired`.
                    unsafe { inner.retired() }.add_spare(spare);
                }
                Box::into_raw(Box::new(Buffer::new(new_capacity, top)))
            }
        };
        // SAFETY: `new` is live and not yet published: only this thread
        // reaches it.
        let new_buffer = unsafe { &*new };
        for index in top..bottom {
            // SAFETY: only the owner writes slots, so reading the old ones
            // races with nothing; the new buffer is not yet published.
            unsafe { new_buffer.copy_slot(old, index, index) };
        }
        self.end.set(new_buffer.end());
        let old = self.buffer.replace(new);
        if new_capacity != old_capacity {
            // A resize starts the hysteresis afresh; a move to the next lap
            // at the same capacity is not a resize, and keeps the count
            // (else a deque whose owner loses most pops to thieves would
            // never earn enough between two laps to shrink).
            self.pops_until_shrink.set(new_capacity / 2);
            self.shrink_after.set(new_capacity / 2);
            self.shrink_below.set(shrink_threshold(
                self.bounded,
                self.min_capacity,
                new_capacity,
            ));
        }
        // Ordering: Release, so that a thief that loads the new pointer with
        // acquire reads the copied slots; this is the first of the two
        // corrections to the C11 code (proofs-notes/reclamation.md#publication).
        inner.buffer.store(new, inner.policy.buffer_publish());
        trace!(
            inner,
            "resize: store buffer := new buffer of {new_capacity} slots"
        );
        old
    }

    /// # Safety
    /// `old` was the deque's buffer, has been replaced, and is retired once.
    unsafe fn retire(&self, old: *mut Buffer<T>) {
        let inner = &*self.inner;
        // SAFETY: this is the owner, the only caller of `retired`; `old` is
        // forwarded from the caller.
        unsafe {
            inner
                .retired()
                .retire(old, self.buffer().capacity(), inner.policy)
        };
    }

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
    // `inline(always)`, here and on `pop_bottom`: with both flavours and the
    // shrink bookkeeping, `pop` sits at LLVM's inlining threshold, and a call
    // costs the owner paths about 2 instructions per operation
    // (deque/benches/callgrind.sh with `#[inline]`: push-1k-then-pop-1k
    // 27.4, push;pop pairs 29.1; with `inline(always)`: 25.6 and 27.1) and
    // the example pool's `join` 14 (deque/benches/join_overhead.sh: 110.4
    // with `pop_bottom` called out of line, 96.4 inlined).
    #[inline(always)]
    pub fn pop(&self) -> Option<T> {
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
    /// Only a look that shows two tasks or more takes the paper's path.
    #[inline(always)]
    fn pop_bottom(&self) -> Option<T> {
        let inner = &*self.inner;
        let policy = inner.policy;
        // Ordering: Relaxed, the owner is the only writer of bottom
        // (proofs-notes/linearizability.md#pop).
        let bottom = inner.bottom.load(Relaxed);
        // Ordering: Relaxed: top only grows, so a stale top is smaller than
        // the current one, and each path below is sound for any top at or
        // below the current one (proofs-notes/fast-paths.md#the-owners-look).
        let top = inner.top.load(Relaxed);
        trace!(inner, "pop: load bottom = {bottom}, load top = {top}");
        let len = bottom - top;
        if len <= policy.empty_look_max_len() {
            // Empty at the look: every index below `bottom` is claimed.
            trace!(inner, "pop: empty at the look, no fence");
            return None;
        }
        if len <= policy.cas_only_pop_max_len() {
            return self.pop_last_with_cas_only(bottom, top);
        }
        self.pop_bottom_with_fence(bottom)
    }

    /// The look showed exactly one task, the one at `top = bottom - 1`:
    /// claim it with the CAS that thieves use, `top -> top + 1`, and leave
    /// `bottom` alone (proofs-notes/fast-paths.md#the-cas-only-last-task-pop).
    #[inline(always)]
    fn pop_last_with_cas_only(&self, bottom: i64, top: i64) -> Option<T> {
        let inner = &*self.inner;
        let policy = inner.policy;
        let index = bottom - 1;
        // SAFETY: only the owner writes slots (proofs-notes/reclamation.md#no-wrap);
        // `index` is below `bottom`, in the current buffer's lap.
        let task = unsafe { self.buffer().read(index) };
        if !policy.cas_last_task() {
            // Mutant SkipLastCas: take it as if no thief could race, by
            // lowering bottom to top (sequentially right: the deque is empty).
            // Ordering: Relaxed, as every owner store to bottom (a mutant:
            // proofs-notes/obligations.md#skip-last-cas).
            inner.bottom.store(index, policy.bottom_store());
            trace!(
                inner,
                "pop: store bottom := {index}, took slot {index} without a CAS"
            );
            // SAFETY: (mutant) none; only used with plain-integer tasks.
            return Some(unsafe { task.assume_init() });
        }
        // `top < bottom` here, so `top + 1` cannot overflow.
        // Ordering: SeqCst success, as every other CAS on top; nothing
        // depends on it (proofs-notes/fast-paths.md#cas-only-pop-seqcst):
        // the CAS's atomicity decides the race, the slot is the owner's own
        // write, and earlier pops' fences order what a thief that reads this
        // top may see of bottom.
        let won = inner
            .top
            .compare_exchange(top, top + 1, policy.cas_only_pop_success(), Relaxed)
            .is_ok();
        trace!(
            inner,
            "pop: one task, CAS top {top} -> {} {}",
            top + 1,
            if won { "won" } else { "lost" }
        );
        if !won && policy.cas_only_pop_checks_cas() {
            // A thief took it: top has reached bottom, the deque is empty.
            return None;
        }
        self.consider_shrinking(bottom, top + 1);
        trace!(inner, "pop: took slot {index}");
        // SAFETY: the slot of `index` held a task (top = index < bottom) and
        // the CAS from `top = index` claimed it for this owner
        // (proofs-notes/fast-paths.md#the-cas-only-last-task-pop).
        Some(unsafe { task.assume_init() })
    }

    /// Lê et al.'s `take`, from its store of `bottom - 1`: the look showed
    /// two tasks or more (proofs-notes/linearizability.md#pop).
    #[inline(always)]
    fn pop_bottom_with_fence(&self, bottom: i64) -> Option<T> {
        let inner = &*self.inner;
        let policy = inner.policy;
        let bottom = bottom - 1;
        let buffer = self.buffer();
        // Ordering: Relaxed, ordered before the load of top by the fence below
        // (proofs-notes/model.md#store-buffering).
        inner.bottom.store(bottom, policy.bottom_store());
        trace!(inner, "pop: store bottom := {bottom}");
        // Ordering: SeqCst fence. Paired with the thief's SeqCst fence, at
        // least one of owner and thief sees the other's write, so they cannot
        // both take the last task (proofs-notes/model.md#store-buffering).
        fence_if(policy.take_fence());
        // Ordering: Relaxed, ordered by the fence above; the CAS below
        // re-checks it for the last task (proofs-notes/model.md#store-buffering).
        let top = inner.top.load(Relaxed);
        trace!(inner, "pop: load top = {top}");
        // No `+ 1` below can overflow: `bottom` was just lowered by one.
        if top > bottom {
            // Empty: undo the reservation.
            // Ordering: Relaxed, as for every owner store to bottom
            // (proofs-notes/linearizability.md#pop).
            inner.bottom.store(bottom + 1, policy.bottom_store());
            trace!(inner, "pop: empty, store bottom := {}", bottom + 1);
            return None;
        }
        // SAFETY: only the owner writes slots (proofs-notes/reclamation.md#no-wrap).
        let task = unsafe { buffer.read(bottom) };
        if top == bottom {
            if !policy.cas_last_task() {
                // Mutant SkipLastCas: take it as if no thief could race.
                trace!(inner, "pop: took slot {bottom} without a CAS");
                // SAFETY: (mutant) none; only used with plain-integer tasks.
                return Some(unsafe { task.assume_init() });
            }
            // The last task: race the thieves for it with a strong CAS.
            // Ordering: SeqCst success, as in Lê et al.; the fences and the
            // CAS's atomicity already decide the race, so nothing depends on
            // it (proofs-notes/obligations.md#take-cas-seqcst).
            let won = inner
                .top
                .compare_exchange(top, top + 1, policy.take_cas_success(), Relaxed)
                .is_ok();
            trace!(
                inner,
                "pop: CAS top {top} -> {} {}",
                top + 1,
                if won { "won" } else { "lost" }
            );
            // Ordering: Relaxed; bottom = top now: empty
            // (proofs-notes/linearizability.md#pop).
            inner.bottom.store(bottom + 1, policy.bottom_store());
            trace!(inner, "pop: store bottom := {}", bottom + 1);
            if !won {
                return None;
            }
            self.consider_shrinking(bottom + 1, top + 1);
        } else {
            self.consider_shrinking(bottom, top);
        }
        trace!(inner, "pop: took slot {bottom}");
        // SAFETY: the slot of `bottom` held a task (top <= bottom) and this
        // owner won it: either more than one task was left, so no thief can
        // reach it, or the CAS above claimed it
        // (proofs-notes/linearizability.md#pop).
        Some(unsafe { task.assume_init() })
    }

    /// The FIFO owner's pop: takes the oldest task with a CAS on `top`.
    #[inline]
    fn pop_top(&self) -> Option<T> {
        let inner = &*self.inner;
        loop {
            // Ordering: Relaxed, the owner is the only writer of bottom
            // (proofs-notes/linearizability.md#fifo-pop).
            let bottom = inner.bottom.load(Relaxed);
            // Ordering: Relaxed; the owner wrote every slot itself, and the
            // CAS below decides (proofs-notes/linearizability.md#fifo-pop).
            let top = inner.top.load(Relaxed);
            trace!(inner, "fifo pop: load bottom = {bottom}, load top = {top}");
            if top >= bottom {
                return None;
            }
            // (So `top + 1 <= bottom` below cannot overflow.)
            // SAFETY: only the owner writes slots (proofs-notes/reclamation.md#no-wrap).
            let task = unsafe { self.buffer().read(top) };
            // Ordering: SeqCst success (release is what matters), so that a
            // thief that reads this top also sees the owner's earlier pushes
            // (proofs-notes/linearizability.md#fifo-pop).
            let success = inner.policy.fifo_cas_success();
            if inner
                .top
                .compare_exchange(top, top + 1, success, Relaxed)
                .is_ok()
            {
                trace!(inner, "fifo pop: CAS top {top} -> {} won", top + 1);
                self.consider_shrinking(bottom, top + 1);
                // SAFETY: the slot of `top` held a task and the CAS claimed it.
                return Some(unsafe { task.assume_init() });
            }
            trace!(inner, "fifo pop: CAS top {top} lost, retrying");
        }
    }

    /// Shrinks the buffer by half once the owner has popped `capacity / 2`
    /// times, since the last resize, while the deque was under a quarter
    /// full. Every pop counts, whether it returned a task, lost the last one
    /// to a thief, or found the deque empty: who took the tasks does not
    /// change how many slots the deque needs. The hysteresis means that a
    /// deque that fills and drains in rounds keeps its buffer instead of
    /// reallocating every round, and the copy (at most `capacity / 4` tasks)
    /// is paid for by the pops before it.
    #[inline]
    fn consider_shrinking(&self, bottom: i64, top: i64) {
        // `shrink_below` is 0 when the buffer cannot shrink, and a pop never
        // leaves fewer than 0 tasks, so the count only runs down for a
        // buffer of at least 4 slots (`shrink_after` >= 2), and a shrink
        // resets it (`replace_buffer`) as it reaches 0.
        if bottom - top >= self.shrink_below.get() {
            self.pops_until_shrink.set(self.shrink_after.get());
            return;
        }
        let left = self.pops_until_shrink.get() - 1;
        self.pops_until_shrink.set(left);
        if left == 0 {
            let capacity = self.buffer().capacity();
            self.shrink(bottom, top, capacity / 2);
        }
    }

    /// A pop that found the deque empty, or lost its last task to a thief,
    /// still counts toward shrinking: a worker whose tasks all go to thieves
    /// needs no more slots than one that pops them itself. It only counts
    /// (down to 1, never to 0): the shrink itself waits for the next
    /// successful pop or the next move to a new lap (`push_into_next_lap`), so that
    /// `pop` holds no second call to the shrink. The deque it leaves is
    /// empty, so under a quarter full whenever the buffer can shrink at all
    /// (`push_into_next_lap` checks that again).
    #[inline]
    fn count_pop_that_came_too_late(&self) {
        let left = self.pops_until_shrink.get();
        if left > 1 {
            self.pops_until_shrink.set(left - 1);
        }
    }

    #[cold]
    #[inline(never)]
    fn shrink(&self, bottom: i64, top: i64, new_capacity: usize) {
        let old = self.replace_buffer(bottom, top, new_capacity);
        // SAFETY: `old` is no longer the deque's buffer and is retired once.
        unsafe { self.retire(old) };
    }

    /// Makes room for up to `additional` tasks past `bottom`, for a batch
    /// steal into this worker (a bounded worker may have less room); returns
    /// how many fit.
    pub(crate) fn reserve(&self, additional: usize) -> usize {
        let inner = &*self.inner;
        // Ordering: Relaxed for the owner's own bottom, Acquire for top as in
        // push (proofs-notes/linearizability.md#batch-steal).
        let bottom = inner.bottom.load(Relaxed);
        let top = inner.top.load(inner.policy.push_top_load());
        let len = (bottom - top).max(0);
        // `additional` is at most the source's length, which fits in an i64.
        let additional = i64::try_from(additional).unwrap_or(i64::MAX);
        let count = (self.limit.get() - len).clamp(0, additional);
        // Checked before any task is claimed: a batch that would run past
        // the end of the index space panics here, with the source intact,
        // as `push` does at `i64::MAX`.
        if add_index(bottom, count) > self.end.get() {
            let capacity = self.buffer().capacity();
            let needed = (len + count) as usize;
            let new_capacity = needed.max(capacity).checked_next_power_of_two();
            let new_capacity = new_capacity.unwrap_or(MAX_CAPACITY).min(MAX_CAPACITY);
            let old = self.replace_buffer(bottom, top, new_capacity);
            // SAFETY: `old` is no longer the deque's buffer and is retired once.
            unsafe { self.retire(old) };
        }
        count as usize
    }

    /// Publishes `count` tasks that a batch steal wrote past `bottom`.
    pub(crate) fn publish(&self, bottom: i64, count: i64) {
        let inner = &*self.inner;
        // (`reserve` has already checked this sum; kept as the last line of
        // defence.)
        let next = add_index(bottom, count);
        let policy = inner.policy;
        // Ordering: Release fence, as in push: the destination's thieves that
        // read the new bottom read the copied tasks (proofs-notes/model.md#message-passing).
        fence_if(policy.batch_publish_fence());
        // Ordering: Relaxed, published by the fence above
        // (proofs-notes/model.md#message-passing).
        inner.bottom.store(next, policy.bottom_store());
        trace!(inner, "batch: store bottom := {next}");
    }

    /// The owner's bottom index (only the owner writes it).
    pub(crate) fn bottom(&self) -> i64 {
        // Ordering: Relaxed, the owner is the only writer of bottom
        // (proofs-notes/linearizability.md#push).
        self.inner.bottom.load(Relaxed)
    }

    /// The number of tasks in the deque, exact at the moment the call reads
    /// `top` (only the owner changes `bottom`, and the owner is the caller).
    /// Thieves may take some at any time, so this is an upper bound by the
    /// time the caller looks at it.
    ///
    /// ```
    /// use chase_lev::Worker;
    ///
    /// let worker = Worker::new_fifo();
    /// worker.push(1);
    /// worker.push(2);
    /// assert_eq!(worker.len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        let inner = &*self.inner;
        // Ordering: Relaxed for the owner's own bottom, Acquire for top as in
        // push (proofs-notes/linearizability.md#len).
        let bottom = inner.bottom.load(Relaxed);
        let top = inner.top.load(crate::sync::Ordering::Acquire);
        (bottom - top).max(0) as usize
    }

    /// Returns `true` if the deque holds no task.
    ///
    /// ```
    /// use chase_lev::Worker;
    ///
    /// let worker = Worker::<i32>::new_lifo();
    /// assert!(worker.is_empty());
    /// worker.push(1);
    /// assert!(!worker.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of slots in the current buffer (it grows and shrinks for
    /// growable workers; a bounded worker may have more slots than its bound).
    ///
    /// ```
    /// use chase_lev::Worker;
    ///
    /// let worker = Worker::<u8>::with_capacity(2);
    /// worker.push(1);
    /// worker.push(2);
    /// worker.push(3);
    /// assert_eq!(worker.capacity(), 4);
    /// ```
    pub fn capacity(&self) -> usize {
        self.buffer().capacity()
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
        self.bounded.then(|| self.limit.get() as usize)
    }
}

#[cfg(chase_lev_mutants)]
impl<T> Worker<T> {
    /// (Mutant builds only.) A worker whose orderings are those of `mutant`,
    /// or the correct ones for `None`.
    pub fn new_mutant(
        fifo: bool,
        capacity: usize,
        bounded: bool,
        mutant: Option<crate::Mutant>,
    ) -> Worker<T> {
        let flavor = if fifo { Flavor::Fifo } else { Flavor::Lifo };
        let policy = Policy { mutant };
        policy.apply_to_registry();
        Worker::build(flavor, capacity, bounded, policy)
    }

    /// (Mutant builds only.) Starts recording every atomic access.
    pub fn enable_trace(&self) {
        self.inner.trace.enable();
    }

    /// (Mutant builds only.) Adds a line of the caller's own to the log.
    pub fn trace_note(&self, note: String) {
        self.inner.trace.note(note);
    }

    /// (Mutant builds only.) Takes the recorded events.
    pub fn take_trace(&self) -> Vec<String> {
        self.inner.trace.take()
    }
}

/// The `shrink_below` of a buffer of `capacity` slots (see the field).
fn shrink_threshold(bounded: bool, min_capacity: usize, capacity: usize) -> i64 {
    if bounded || capacity <= min_capacity {
        0
    } else {
        (capacity / 4) as i64
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn full(bound: i64) -> ! {
    panic!("chase-lev: push on a full bounded Worker (bound {bound}); use try_push to get the task back")
}

/// `index + count` for an index of the deque, panicking instead of
/// wrapping at the end of the index space.
#[inline(always)]
#[track_caller]
pub(crate) fn add_index(index: i64, count: i64) -> i64 {
    match index.checked_add(count) {
        Some(sum) => sum,
        None => index_space_exhausted(),
    }
}

#[cold]
#[inline(never)]
#[track_caller]
pub(crate) fn index_space_exhausted() -> ! {
    panic!(
        "chase-lev: the deque's 64-bit index space is exhausted (2^63 pushes); indices never wrap"
    )
}

impl<T> fmt::Debug for Worker<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("Worker { .. }")
    }
}
