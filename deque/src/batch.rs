//! Batch steals: a thief moves about half of a deque's tasks into its own
//! `Worker` (crossbeam-deque 0.8's `steal_batch` family), and the destination
//! owner's side of it (`reserve`, `publish`). Built on the single steal's
//! helpers in deque.rs.

use core::mem::MaybeUninit;

use crate::atomic::fence;
use crate::buffer::{Buffer, MAX_CAPACITY};
use crate::deque::Stealer;
use crate::deque::Worker;
use crate::deque::{add_index, Flavor};
use crate::hazard::Hazard;
#[cfg(chase_lev_mutants)]
use crate::sites::mutant;
use crate::sites::{site, RELAXED_UNLESS_TSAN};
use crate::steal::Steal;
use crate::sync::{
    Arc,
    Ordering::{Acquire, Relaxed, Release},
};
use crate::DEFAULT_BATCH_LIMIT;

impl<T> Stealer<T> {
    /// Steals about half of the tasks (at most 32) and pushes them into
    /// `dest`. Linearizable as a sequence of single steals of the oldest tasks.
    ///
    /// The stolen tasks go into `dest` so that its owner pops them in the
    /// order this deque's owner would have: oldest first from a FIFO deque,
    /// newest first from a LIFO one, whatever `dest`'s own flavour. This is
    /// crossbeam-deque 0.8's arrangement, for every pair of flavours.
    ///
    /// Returns `Success(())` when `dest` holds at least one task it can pop:
    /// at least one task moved, or this deque had a task but `dest` is
    /// bounded and full (then nothing moves). `Empty` means only that this
    /// deque looked empty, and `Retry` that the first claim lost a race. Into
    /// a bounded `dest` (which crossbeam-deque does not have) it takes at
    /// most as many tasks as `dest` has room for. Into the deque itself it
    /// moves nothing (`Success(())` unless empty).
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
    /// `min((len + 1) / 2, limit)`, as in crossbeam-deque. The same results:
    /// `Success(())` when `dest` holds at least one task it can pop (at least
    /// one moved, or it is bounded and full), `Empty` only when this deque
    /// looked empty.
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
        #[cfg(chase_lev_mutants)]
        crate::sites::enter(self.inner.mutant);
        assert_batch_limit(limit);
        self.steal_batch_into(dest, limit, false).map(|_| ())
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
    /// `dest` with no room it still returns one task and moves none, so
    /// `Empty` means only that this deque looked empty.
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
    /// most `limit` tasks in all (the returned one included): one task even
    /// into a full bounded `dest`, `Empty` only when this deque looked empty.
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
        #[cfg(chase_lev_mutants)]
        crate::sites::enter(self.inner.mutant);
        assert_batch_limit(limit);
        self.steal_batch_into(dest, limit, true)
            .map(|task| task.expect("a successful batch keeps one task"))
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
        // The steal's opening (`Stealer::steal`, `steal_from`).
        let inner = &*self.inner;
        // Ordering: Acquire, as in `steal` (proofs-notes/obligations.md#steal-top-acquire).
        let top = inner.top.load(site!(StealTopAcquire, Acquire));
        // Ordering: Relaxed, the empty look as in `steal`
        // (proofs-notes/fast-paths.md#the-thiefs-empty-look).
        let bottom = inner.bottom.load(Relaxed);
        #[cfg(chase_lev_mutants)]
        let bottom = bottom - i64::from(mutant!(ThiefEmptyLookAtOne));
        if top >= bottom {
            return Steal::Empty;
        }
        let Some((hazard, bottom)) = Hazard::protect(&inner.buffer, || {
            // Ordering: Acquire, as in `steal_from`; a batch also copies
            // the tasks pushed between the look and the fence, which only
            // this acquire publishes (proofs-notes/model.md#message-passing).
            let bottom = inner.bottom.load(site!(StealBottomAcquire, Acquire));
            (top < bottom).then_some(bottom)
        }) else {
            return Steal::Empty;
        };
        let buffer = hazard.buffer();
        if !buffer.covers(top) {
            return Steal::Retry;
        }
        let first = Snapshot {
            top,
            bottom,
            buffer,
        };
        let len = (first.bottom - first.top) as usize;
        let in_lap = (first.buffer.end() - first.top) as usize;
        let wanted = len.div_ceil(2).min(limit).min(in_lap);
        #[cfg(chase_lev_mutants)]
        let wanted = match () {
            _ if mutant!(BatchTakesAll) => len.min(limit).min(in_lap),
            _ if mutant!(BatchLimitIgnored) => len.div_ceil(2).min(in_lap),
            _ => wanted,
        };
        let into_dest = dest.reserve(wanted - usize::from(keep_first));
        let batch = into_dest + usize::from(keep_first);
        if batch == 0 {
            // This deque had a task, but `dest` is bounded and full: it
            // holds tasks of its own to pop, so not `Empty`, which would tell
            // a scheduler there is no work.
            return Steal::Success(None);
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
            // Within the ranges `reserve` and `Hazard::protect` checked.
            let from = add_index(seen.top, skip + offset);
            #[cfg(chase_lev_mutants)]
            let from = if !mutant!(BatchFromWrongEnd) {
                from
            } else if seen.buffer.covers(seen.bottom - 1) {
                add_index(seen.bottom - batch as i64, skip + offset)
            } else {
                return Steal::Retry;
            };
            let to = add_index(
                dest_bottom,
                if reversed { moved - 1 - offset } else { offset },
            );
            // SAFETY: as above.
            unsafe { dest_buffer.copy_slot(seen.buffer, from, to) };
        }
        if !self.claim(seen.top, batch as i64) {
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
        hazard: &Hazard<Buffer<T>>,
        first: Snapshot<'_, T>,
        batch: usize,
        keep_first: bool,
    ) -> Steal<Option<T>> {
        let dest_bottom = dest.bottom();
        let dest_buffer = dest.buffer();
        let mut kept: Option<MaybeUninit<T>> = None;
        let mut moved = 0i64;
        #[cfg(chase_lev_mutants)]
        let first_buffer = first.buffer;
        let mut seen = Steal::Success(first);
        for taken in 0..batch {
            let Steal::Success(now) = seen else { break };
            #[cfg(chase_lev_mutants)]
            let now = if mutant!(BatchReadsFirstBuffer) {
                Snapshot {
                    buffer: first_buffer,
                    ..now
                }
            } else {
                now
            };
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
            if !self.claim(now.top, 1) {
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

    /// The loads of `steal` up to the slot read, for a thread whose hazard
    /// slot already protects a buffer (the next task of a batch): `Empty` if
    /// the deque looked empty, `Retry` if the buffer changed or `top` has
    /// already moved before the buffer's lap.
    #[inline(always)]
    fn look<'h>(&self, hazard: &'h Hazard<Buffer<T>>) -> Steal<Snapshot<'h, T>> {
        let (top, bottom) = self.indices();
        if top >= bottom {
            return Steal::Empty;
        }
        let inner = &*self.inner;
        // Ordering: Acquire, pairs with the release store of a new buffer
        // (proofs-notes/reclamation.md#publication).
        let buffer = inner.buffer.load(site!(BufferLoadAcquire, Acquire));
        if !hazard.covers(buffer) {
            #[cfg(chase_lev_mutants)]
            if mutant!(BatchReadsFirstBuffer) {
                // SAFETY: none (a mutant): `buffer` is not the protected one.
                let buffer = unsafe { &*buffer };
                if !buffer.covers(top) {
                    return Steal::Retry;
                }
                return Steal::Success(Snapshot {
                    top,
                    bottom,
                    buffer,
                });
            }
            // The owner replaced the buffer since this thread announced it:
            // the batch ends here (proofs-notes/reclamation.md#hazard-slots).
            return Steal::Retry;
        }
        let buffer = hazard.buffer();
        if !buffer.covers(top) {
            return Steal::Retry;
        }
        Steal::Success(Snapshot {
            top,
            bottom,
            buffer,
        })
    }
}

/// What a thief learned from one look at the deque: a task at `top`, below
/// `bottom`, in `buffer`, which the thief's hazard protects.
struct Snapshot<'h, T> {
    top: i64,
    bottom: i64,
    buffer: &'h Buffer<T>,
}

/// The batch steals' one precondition, shared with the injector's.
#[inline(always)]
#[track_caller]
pub(crate) fn assert_batch_limit(limit: usize) {
    assert!(
        limit > 0,
        "chase-lev: a batch steal needs a limit of at least 1"
    );
}

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
            let count = (self.limit.get() - len).clamp(0, additional);
            #[cfg(chase_lev_mutants)]
            let count = if mutant!(ReserveOnePastBound) {
                (self.limit.get().saturating_add(1) - len).clamp(0, additional)
            } else {
                count
            };
            // Checked before any task is claimed: a batch that would run past
            // the end of the index space panics here, with the source intact,
            // as `push` does at `i64::MAX`.
            if add_index(bottom, count) <= self.end.get() {
                return count as usize;
            }
            if self.grow_for_batch(bottom, top, (len + count) as usize) {
                return count as usize;
            }
        }
    }

    /// `reserve`'s buffer change: to a buffer that holds `needed` tasks from
    /// `top`. `false` if an operation nested in a call out of the crate (the
    /// allocation, or the retire's frees) changed the buffer or `bottom`: the
    /// room counted may not be there, and `reserve` looks again.
    #[cold]
    #[inline(never)]
    fn grow_for_batch(&self, bottom: i64, top: i64, needed: usize) -> bool {
        let capacity = self.buffer().capacity();
        let new_capacity = needed.max(capacity).checked_next_power_of_two();
        let new_capacity = new_capacity.unwrap_or(MAX_CAPACITY).min(MAX_CAPACITY);
        let Some(old) = self.replace_buffer(bottom, top, new_capacity) else {
            return false;
        };
        let new = self.buffer.get();
        #[cfg(chase_lev_mutants)]
        if mutant!(ReserveFreesAtOnce) {
            // SAFETY: none (a mutant): a thief may still read `old`.
            unsafe { Buffer::free(old) };
            return self.buffer.get() == new && self.own_bottom() == bottom;
        }
        // SAFETY: `old` is no longer the deque's buffer and is retired once.
        unsafe { self.retire(old) };
        // The room is there if the retire's frees changed neither the
        // buffer nor `bottom` (`top` only grows, which makes more room).
        self.buffer.get() == new && self.own_bottom() == bottom
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

    /// The owner's bottom index (only the owner writes it).
    pub(crate) fn bottom(&self) -> i64 {
        // Ordering: Relaxed, the owner is the only writer of bottom
        // (proofs-notes/linearizability.md#push).
        self.inner.bottom.load(Relaxed)
    }
}
