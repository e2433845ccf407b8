//! `Stealer`, the thieves' handle: steal the oldest task, or a batch of them.

use core::fmt;
use core::mem::MaybeUninit;

use crate::buffer::Buffer;
use crate::deque::{Flavor, Inner};
use crate::policy::fence_if;
use crate::reclamation::Hazard;
use crate::steal::Steal;
use crate::sync::{Arc, Ordering::Relaxed};
use crate::trace::trace;
use crate::worker::{add_index, Worker};
use crate::DEFAULT_BATCH_LIMIT;

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
    pub(crate) inner: Arc<Inner<T>>,
}

/// What a thief learned from one look at the deque.
struct Snapshot<'g, T> {
    top: i64,
    bottom: i64,
    buffer: &'g Buffer<T>,
}

impl<T> Stealer<T> {
    /// Lê et al.'s first loads of `steal`: top, the fence, bottom.
    #[inline(always)]
    fn indices(&self) -> (i64, i64) {
        let top = self.load_top();
        (top, self.fence_then_bottom())
    }

    /// Lê et al.'s fence, then the load of `bottom`.
    #[inline(always)]
    fn fence_then_bottom(&self) -> i64 {
        // Ordering: SeqCst fence, paired with the owner's pop fence (and other
        // thieves' fences): owner and thief cannot both miss each other's
        // write (proofs-notes/model.md#store-buffering).
        fence_if(self.inner.policy.steal_fence());
        self.load_bottom()
    }

    #[inline(always)]
    fn load_top(&self) -> i64 {
        let inner = &*self.inner;
        // Ordering: Acquire, as in Lê et al.; the SeqCst fence right after it
        // already gives what it gives (proofs-notes/obligations.md#steal-top-acquire).
        let top = inner.top.load(inner.policy.steal_top_load());
        trace!(inner, "steal: load top = {top}");
        top
    }

    #[inline(always)]
    fn load_bottom(&self) -> i64 {
        let inner = &*self.inner;
        // Ordering: Acquire, pairs with push's release fence so the task's
        // bytes are visible (proofs-notes/model.md#message-passing).
        let bottom = inner.bottom.load(inner.policy.steal_bottom_load());
        trace!(inner, "steal: load bottom = {bottom}");
        bottom
    }

    /// The loads of `steal` up to the slot read, for a thread whose hazard
    /// slot already protects a buffer (the next task of a batch): `Empty` if
    /// the deque looked empty, `Retry` if the buffer changed or `top` has
    /// already moved before the buffer's lap.
    #[inline(always)]
    fn look<'h>(&self, hazard: &'h Hazard) -> Steal<Snapshot<'h, T>> {
        let (top, bottom) = self.indices();
        if top >= bottom {
            return Steal::Empty;
        }
        let inner = &*self.inner;
        // Ordering: Acquire, pairs with the release store of a new buffer
        // (proofs-notes/reclamation.md#publication).
        let buffer = inner.buffer.load(inner.policy.buffer_load());
        if !hazard.covers(buffer.cast()) {
            // The owner replaced the buffer since this thread announced it:
            // the batch ends here (proofs-notes/reclamation.md#hazard-slots).
            trace!(inner, "steal: the buffer changed");
            return Steal::Retry;
        }
        self.snapshot(hazard, buffer, top, bottom)
    }

    /// The task at `top` in `buffer`, which `hazard` protects, unless `top`
    /// has already moved before the buffer's lap (`Retry`). `buffer` is the
    /// pointer as loaded after the fence, not the announced copy: the two
    /// are equal, but if the announced buffer was freed and a new one took
    /// its address, only the fresh load points into the live allocation.
    #[inline(always)]
    fn snapshot<'h>(
        &self,
        _hazard: &'h Hazard,
        buffer: *mut Buffer<T>,
        top: i64,
        bottom: i64,
    ) -> Steal<Snapshot<'h, T>> {
        // SAFETY: this thread's hazard slot held this address before a fence
        // after which the deque's buffer pointer still was this one, so the
        // owner will not free it while `_hazard` lives
        // (proofs-notes/reclamation.md#hazard-slots).
        let buffer = unsafe { &*buffer };
        if !buffer.covers(top) {
            // The owner has moved to a buffer whose lap starts past `top`:
            // `top` has moved on and the CAS would fail, a lost race
            // (proofs-notes/reclamation.md#no-wrap).
            trace!(self.inner, "steal: index {top} outside the buffer's lap");
            return Steal::Retry;
        }
        Steal::Success(Snapshot {
            top,
            bottom,
            buffer,
        })
    }

    /// Lê et al.'s first loads (top, the SeqCst fence, bottom), with this
    /// thread's hazard slot announcing the buffer before the fence, so that
    /// the one fence serves both the algorithm and reclamation; then the
    /// buffer pointer again, which must still be the announced one
    /// (proofs-notes/reclamation.md#hazard-slots). `None` if the deque
    /// looked empty.
    #[inline(always)]
    #[allow(clippy::type_complexity)]
    fn protect_if_not_empty(&self) -> Option<(Hazard, *mut Buffer<T>, i64, i64)> {
        let inner = &*self.inner;
        let top = self.load_top();
        // Ordering: Relaxed: only the value to announce; the Acquire load
        // after the fence checks it and synchronizes
        // (proofs-notes/reclamation.md#hazard-slots).
        let announced = inner.buffer.load(Relaxed);
        let mut hazard = Hazard::protect(announced.cast(), inner.policy);
        loop {
            // Ordering: the steal's SeqCst fence, which also orders the
            // hazard store before the buffer load below
            // (proofs-notes/reclamation.md#hazard-slots).
            let bottom = self.fence_then_bottom();
            if top >= bottom {
                return None;
            }
            // Ordering: Acquire, pairs with the release store of a new
            // buffer (proofs-notes/reclamation.md#publication).
            let buffer = inner.buffer.load(inner.policy.buffer_load());
            if hazard.covers(buffer.cast()) {
                return Some((hazard, buffer, top, bottom));
            }
            // The owner replaced the buffer after the announcement: announce
            // the new one and fence again. Only a buffer change, which is
            // progress of the owner's, repeats this (lock-free).
            trace!(inner, "steal: the buffer changed, announcing the new one");
            hazard.reprotect(buffer.cast());
        }
    }

    /// The thief's CAS that claims `count` tasks from `top`.
    #[inline(always)]
    fn claim(&self, top: i64, count: i64, success: crate::sync::Ordering) -> bool {
        let inner = &*self.inner;
        // `top + count <= bottom` (the tasks claimed were seen below
        // `bottom`), so this never panics; checked all the same.
        let next = add_index(top, count);
        // Ordering: SeqCst success, as in Lê et al., where its release half
        // orders the slot read before the owner's rewrite after a wrap; our
        // buffers never wrap, so the CAS's atomicity is what claims the task
        // (proofs-notes/obligations.md#steal-cas-seqcst).
        let won = inner
            .top
            .compare_exchange(top, next, success, Relaxed)
            .is_ok();
        trace!(
            inner,
            "steal: CAS top {top} -> {next} {}",
            if won { "won" } else { "lost" }
        );
        won
    }

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
    #[inline]
    pub fn steal(&self) -> Steal<T> {
        let policy = self.inner.policy;
        let Some((hazard, buffer, top, bottom)) = self.protect_if_not_empty() else {
            return Steal::Empty;
        };
        let seen = match self.snapshot(&hazard, buffer, top, bottom) {
            Steal::Success(seen) => seen,
            Steal::Empty => return Steal::Empty,
            Steal::Retry => return Steal::Retry,
        };
        let index = if policy.steal_from_top() {
            seen.top
        } else if seen.buffer.covers(seen.bottom - 1) {
            seen.bottom - 1 // mutant StealFromBottom
        } else {
            return Steal::Retry;
        };
        // Read before the CAS, as Lê et al. do: once the CAS is won the
        // owner may retire the buffer or reuse the index.
        // SAFETY: `index` is in the buffer's lap, and no thread writes its
        // slot while a thief can read it (proofs-notes/reclamation.md#no-wrap).
        let early = policy
            .read_before_cas()
            .then(|| unsafe { seen.buffer.read(index) });
        if !self.claim(seen.top, 1, policy.steal_cas_success()) {
            return Steal::Retry;
        }
        let task: MaybeUninit<T> = match early {
            Some(task) => task,
            // SAFETY: (mutant ReadAfterCas) as above.
            None => unsafe { seen.buffer.read(index) },
        };
        trace!(self.inner, "steal: took slot {index}");
        // SAFETY: the slot of `top` held a task (top < bottom, published by
        // push's release fence and the acquire load of bottom), and the CAS
        // made this thief its only owner
        // (proofs-notes/linearizability.md#steal).
        Steal::Success(unsafe { task.assume_init() })
    }

    /// Steals about half of the tasks (at most 32) and pushes them into
    /// `dest`. Linearizable as a sequence of single steals of the oldest tasks.
    ///
    /// The stolen tasks go into `dest` so that its owner pops them in the
    /// order this deque's owner would have: oldest first from a FIFO deque,
    /// newest first from a LIFO one, whatever `dest`'s own flavour. This is
    /// crossbeam-deque 0.8's arrangement, for every pair of flavours.
    ///
    /// Returns `Success(())` if at least one task moved, `Empty` if the deque
    /// looked empty or `dest` is bounded and has no room, and `Retry` if the
    /// first claim lost a race. Into a bounded `dest` (which crossbeam-deque
    /// does not have) it takes at most as many tasks as `dest` has room for.
    /// Into the deque itself it moves nothing (`Success(())` unless empty).
    ///
    /// ```
    /// use chase_lev::{Steal, Worker};
    ///
    /// let victim = Worker::new_lifo();
    /// for task in 1..=4 {
    ///     victim.push(task);
    /// }
    /// let mine = Worker::new_fifo();
    /// assert_eq!(victim.stealer().steal_batch(&mine), Steal::Success(()));
    /// assert_eq!(mine.len(), 2); // (4 + 1) / 2: tasks 1 and 2
    /// assert_eq!(mine.pop(), Some(2)); // newest first, as the victim's owner pops
    /// assert_eq!(victim.len(), 2);
    /// ```
    pub fn steal_batch(&self, dest: &Worker<T>) -> Steal<()> {
        self.steal_batch_with_limit(dest, DEFAULT_BATCH_LIMIT)
    }

    /// As [`steal_batch`](Stealer::steal_batch), taking at most `limit` tasks:
    /// `min((len + 1) / 2, limit)`, as in crossbeam-deque.
    ///
    /// # Panics
    /// If `limit` is zero.
    ///
    /// ```
    /// use chase_lev::{Steal, Worker};
    ///
    /// let victim = Worker::new_fifo();
    /// for task in 0..100 {
    ///     victim.push(task);
    /// }
    /// let mine = Worker::new_fifo();
    /// assert_eq!(victim.stealer().steal_batch_with_limit(&mine, 5), Steal::Success(()));
    /// assert_eq!(mine.len(), 5);
    /// assert_eq!(mine.pop(), Some(0)); // the oldest came along first
    /// ```
    pub fn steal_batch_with_limit(&self, dest: &Worker<T>, limit: usize) -> Steal<()> {
        assert!(
            limit > 0,
            "chase-lev: a batch steal needs a limit of at least 1"
        );
        match self.steal_batch_into(dest, limit, false) {
            Steal::Success(_) => Steal::Success(()),
            Steal::Empty => Steal::Empty,
            Steal::Retry => Steal::Retry,
        }
    }

    /// Steals about half of the tasks (at most 32 in all), returns one and
    /// pushes the rest into `dest`, as crossbeam-deque 0.8 does: the task
    /// returned is the one this deque's owner would have popped first among
    /// those stolen, so the **oldest** from a FIFO deque but the **newest of
    /// the batch** from a LIFO deque; the rest go into `dest` in that same pop
    /// order (see [`steal_batch`](Stealer::steal_batch)).
    ///
    /// Into the deque itself it is the owner's [`pop`](Worker::pop) (the
    /// newest task of a LIFO deque, the oldest of a FIFO one). Into a bounded
    /// `dest` with no room it still returns one task and moves none.
    ///
    /// ```
    /// use chase_lev::{Steal, Worker};
    ///
    /// let victim = Worker::new_lifo();
    /// for task in 1..=6 {
    ///     victim.push(task);
    /// }
    /// let mine = Worker::new_lifo();
    /// // Tasks 1, 2 and 3 are stolen; the victim's owner would pop 3 first.
    /// assert_eq!(victim.stealer().steal_batch_and_pop(&mine), Steal::Success(3));
    /// assert_eq!(mine.pop(), Some(2));
    /// assert_eq!(mine.pop(), Some(1));
    ///
    /// let fifo = Worker::new_fifo();
    /// for task in 1..=6 {
    ///     fifo.push(task);
    /// }
    /// assert_eq!(fifo.stealer().steal_batch_and_pop(&mine), Steal::Success(1));
    /// assert_eq!(mine.pop(), Some(2));
    /// ```
    pub fn steal_batch_and_pop(&self, dest: &Worker<T>) -> Steal<T> {
        self.steal_batch_with_limit_and_pop(dest, DEFAULT_BATCH_LIMIT)
    }

    /// As [`steal_batch_and_pop`](Stealer::steal_batch_and_pop), taking at
    /// most `limit` tasks in all (the returned one included).
    ///
    /// # Panics
    /// If `limit` is zero.
    ///
    /// ```
    /// use chase_lev::{Steal, Worker};
    ///
    /// let victim = Worker::new_fifo();
    /// for task in 0..10 {
    ///     victim.push(task);
    /// }
    /// let mine = Worker::new_fifo();
    /// assert_eq!(victim.stealer().steal_batch_with_limit_and_pop(&mine, 3), Steal::Success(0));
    /// assert_eq!(mine.len(), 2);
    /// ```
    pub fn steal_batch_with_limit_and_pop(&self, dest: &Worker<T>, limit: usize) -> Steal<T> {
        assert!(
            limit > 0,
            "chase-lev: a batch steal needs a limit of at least 1"
        );
        match self.steal_batch_into(dest, limit, true) {
            Steal::Success(task) => {
                Steal::Success(task.expect("a successful batch keeps one task"))
            }
            Steal::Empty => Steal::Empty,
            Steal::Retry => Steal::Retry,
        }
    }

    /// The batch steal. With `keep_first`, the first task of the victim
    /// owner's pop order (the oldest from a FIFO victim, the newest of the
    /// batch from a LIFO one) is returned instead of being pushed into `dest`.
    fn steal_batch_into(
        &self,
        dest: &Worker<T>,
        limit: usize,
        keep_first: bool,
    ) -> Steal<Option<T>> {
        if Arc::ptr_eq(&self.inner, &dest.inner) {
            // Stealing from one's own deque into itself moves nothing.
            return match (keep_first, dest.is_empty()) {
                (_, true) => Steal::Empty,
                (false, false) => Steal::Success(None),
                (true, false) => match dest.pop() {
                    Some(task) => Steal::Success(Some(task)),
                    None => Steal::Empty,
                },
            };
        }
        let Some((hazard, buffer, top, bottom)) = self.protect_if_not_empty() else {
            return Steal::Empty;
        };
        let first = match self.snapshot(&hazard, buffer, top, bottom) {
            Steal::Success(seen) => seen,
            Steal::Empty => return Steal::Empty,
            Steal::Retry => return Steal::Retry,
        };
        let len = (first.bottom - first.top) as usize;
        let in_lap = (first.buffer.end() - first.top) as usize;
        let wanted = len.div_ceil(2).min(limit).min(in_lap);
        let into_dest = dest.reserve(wanted - usize::from(keep_first));
        let batch = into_dest + usize::from(keep_first);
        if batch == 0 {
            return Steal::Empty;
        }
        match self.inner.flavor {
            Flavor::Fifo => self.claim_fifo_batch(dest, first, batch, keep_first),
            Flavor::Lifo => self.claim_one_by_one(dest, &hazard, first, batch, keep_first),
        }
    }

    /// From a FIFO owner, which itself claims tasks with a CAS on `top` and
    /// never lowers `bottom`, one CAS claims the whole batch.
    fn claim_fifo_batch(
        &self,
        dest: &Worker<T>,
        seen: Snapshot<'_, T>,
        batch: usize,
        keep_first: bool,
    ) -> Steal<Option<T>> {
        let dest_bottom = dest.bottom();
        let dest_buffer = dest.buffer();
        // SAFETY: [top, top + batch) is in the source buffer's lap (`batch`
        // was clipped to it) and in [top, bottom); the destination slots are
        // past the destination's bottom, in its lap (`reserve`), where no
        // thief reads (proofs-notes/reclamation.md#no-wrap).
        let first = keep_first.then(|| unsafe { seen.buffer.read(seen.top) });
        let skip = i64::from(keep_first);
        let moved = batch as i64 - skip;
        // The destination's owner pops them oldest first, as this FIFO
        // victim's owner would: in claim order into a FIFO destination,
        // reversed into a LIFO one (crossbeam-deque's arrangement).
        let reversed = dest.inner.flavor == Flavor::Lifo;
        for offset in 0..moved {
            // Within the ranges `reserve` and `snapshot` checked.
            let from = add_index(seen.top, skip + offset);
            let to = add_index(
                dest_bottom,
                if reversed { moved - 1 - offset } else { offset },
            );
            // SAFETY: as above.
            unsafe { dest_buffer.copy_slot(seen.buffer, from, to) };
        }
        let success = self.inner.policy.steal_cas_success();
        if !self.claim(seen.top, batch as i64, success) {
            return Steal::Retry;
        }
        dest.publish(dest_bottom, moved);
        // SAFETY: as in `steal`: the CAS claimed [top, top + batch).
        Steal::Success(first.map(|task| unsafe { task.assume_init() }))
    }

    /// From a LIFO owner, which pops without a CAS, each task is claimed by
    /// its own CAS: the batch is literally a sequence of single steals.
    ///
    /// The destination's owner then pops them newest first, as this LIFO
    /// victim's owner would, and with `keep_first` the newest is the one
    /// returned (crossbeam-deque's arrangement): each claimed task goes into
    /// the next destination slot, or with `keep_first` is kept until the next
    /// claim succeeds, and a FIFO destination gets the run reversed.
    fn claim_one_by_one(
        &self,
        dest: &Worker<T>,
        hazard: &Hazard,
        first: Snapshot<'_, T>,
        batch: usize,
        keep_first: bool,
    ) -> Steal<Option<T>> {
        let policy = self.inner.policy;
        let dest_bottom = dest.bottom();
        let dest_buffer = dest.buffer();
        let mut kept: Option<MaybeUninit<T>> = None;
        let mut moved = 0i64;
        let mut seen = Steal::Success(first);
        for taken in 0..batch {
            let Steal::Success(now) = seen else { break };
            // Read before the CAS, as in `steal`.
            let read = if keep_first {
                // SAFETY: as in `steal`.
                Some(unsafe { now.buffer.read(now.top) })
            } else {
                // Below `dest_bottom + into_dest`, which `reserve` checked.
                let to = add_index(dest_bottom, moved);
                // SAFETY: as in `steal` for the source; the destination slot
                // is past its bottom, in its lap (`reserve`), where no thief
                // reads (proofs-notes/reclamation.md#no-wrap).
                unsafe { dest_buffer.copy_slot(now.buffer, now.top, to) };
                None
            };
            if !self.claim(now.top, 1, policy.steal_cas_success()) {
                if taken == 0 {
                    return Steal::Retry;
                }
                break;
            }
            match (read, kept.take()) {
                (Some(newest), Some(previous)) => {
                    // SAFETY: `previous` was claimed by the previous CAS; the
                    // destination slot is owned as above.
                    unsafe {
                        dest_buffer.write(add_index(dest_bottom, moved), previous.assume_init())
                    };
                    moved += 1;
                    kept = Some(newest);
                }
                (Some(newest), None) => kept = Some(newest),
                (None, _) => moved += 1,
            }
            seen = if taken + 1 < batch {
                self.look(hazard)
            } else {
                Steal::Empty
            };
        }
        if moved > 0 {
            if dest.inner.flavor == Flavor::Fifo {
                // SAFETY: the slots of [dest_bottom, dest_bottom + moved) are
                // the ones written above, not yet published.
                unsafe { dest_buffer.reverse(dest_bottom, dest_bottom + moved) };
            }
            dest.publish(dest_bottom, moved);
        }
        // SAFETY: as in `steal`: the latest successful CAS claimed the kept
        // slot.
        Steal::Success(kept.map(|task| unsafe { task.assume_init() }))
    }

    /// The number of tasks in the deque at one moment during the call.
    ///
    /// Like the `Empty` of [`steal`](Stealer::steal), it counts a task as
    /// gone as soon as its removal has started (the owner's pop of the last
    /// task reserves it before racing the thieves for it). The answer may be
    /// out of date by the time the caller looks at it. Lock-free: it loads
    /// the indices again only if another thread took a task meanwhile.
    ///
    /// ```
    /// use chase_lev::Worker;
    ///
    /// let worker = Worker::new_lifo();
    /// worker.push(1);
    /// assert_eq!(worker.stealer().len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        let (mut top, mut bottom) = self.indices();
        loop {
            // Ordering: Relaxed: only coherence is used. `top` only grows, so
            // reading the same value again means it held that value from the
            // first load to this one, across the load of `bottom`
            // (proofs-notes/linearizability.md#len).
            let again = self.inner.top.load(Relaxed);
            if again == top {
                return (bottom - top).max(0) as usize;
            }
            // Some other thread took a task meanwhile: look again.
            top = again;
            bottom = self.fence_then_bottom();
        }
    }

    /// Returns `true` if the deque was empty at one moment during the call.
    ///
    /// ```
    /// use chase_lev::Worker;
    ///
    /// let worker = Worker::<i32>::new_lifo();
    /// assert!(worker.stealer().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(chase_lev_mutants)]
impl<T> Stealer<T> {
    /// (Mutant builds only.) Adds a line of the caller's own to the log.
    pub fn trace_note(&self, note: String) {
        self.inner.trace.note(note);
    }
}

impl<T> Clone for Stealer<T> {
    fn clone(&self) -> Stealer<T> {
        Stealer {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<T> fmt::Debug for Stealer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("Stealer { .. }")
    }
}
