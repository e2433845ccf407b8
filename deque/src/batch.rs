//! Batch steals: a thief moves about half of a deque's tasks into its own
//! `Worker` (crossbeam-deque 0.8's `steal_batch` family). Built on the
//! single steal's look and guard (`Stealer::steal_from`, deque.rs); the
//! destination owner's side of it (`reserve`, `publish`) is in deque.rs.

use core::mem::MaybeUninit;
use core::ptr;

use crate::buffer::Buffer;
use crate::deque::{add_index, Flavor, Stealer, Worker};
#[cfg(chase_lev_mutants)]
use crate::sites::mutant;
use crate::steal::Steal;
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
        self.enter();
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
        self.enter();
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
        if self.is_stealer_of(dest) {
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
        // The steal's look (`Stealer::steal`): Figure 1's load of `top`,
        // then `bottom` before the fence.
        let top = self.load_top();
        if top >= self.bottom_at_a_look() {
            return Steal::Empty;
        }
        self.steal_from(top, |_, buffer, top, bottom| {
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
                // holds tasks of its own to pop, so not `Empty`, which would
                // tell a scheduler there is no work.
                return Steal::Success(None);
            }
            match self.flavor() {
                Flavor::Fifo => self.claim_fifo_batch(dest, first, batch, keep_first),
                Flavor::Lifo => self.claim_one_by_one(dest, first, batch, keep_first),
            }
        })
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
        let reversed = dest.flavor() == Flavor::Lifo;
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
        first: Snapshot<'_, T>,
        batch: usize,
        keep_first: bool,
    ) -> Steal<Option<T>> {
        let dest_bottom = dest.bottom();
        let dest_buffer = dest.buffer();
        let protected = first.buffer;
        let mut kept: Option<MaybeUninit<T>> = None;
        let mut moved = 0i64;
        // Each task's index: `top + batch` is at most the lap's end.
        for (taken, top) in (0..batch).zip(first.top..) {
            if taken > 0 {
                // The next single steal, after Figure 1's load of `top`:
                // its `top` is the one this thread's last CAS wrote, which
                // acquired what a load would (had another thread moved
                // `top` since, the CAS below fails); the fence, `bottom`,
                // and the buffer pointer again.
                if top >= self.fence_then_bottom() {
                    break;
                }
                let now = self.load_buffer();
                #[cfg(chase_lev_mutants)]
                // SAFETY: none (a mutant): reads on from the protected buffer
                // while the new one, which it does not protect, covers `top`.
                let now = if mutant!(BatchReadsFirstBuffer) && unsafe { &*now }.covers(top) {
                    ptr::from_ref(protected).cast_mut()
                } else {
                    now
                };
                if !ptr::eq(now, protected) {
                    // The owner replaced the buffer since this thread
                    // announced it: the batch ends here
                    // (proofs-notes/reclamation.md#hazard-slots). The same
                    // pointer is the same buffer, and its lap covers
                    // [top, top + batch): `batch` was clipped to it.
                    break;
                }
            }
            // Read before the CAS, as in `steal`.
            let read = if keep_first {
                // SAFETY: as in `steal`.
                Some(unsafe { protected.read(top) })
            } else {
                // Below `dest_bottom + into_dest`, which `reserve` checked.
                let to = add_index(dest_bottom, moved);
                // SAFETY: as in `steal` for the source; the destination slot
                // is past its bottom, in its lap (`reserve`), where no thief
                // reads (proofs-notes/reclamation.md#no-wrap).
                unsafe { dest_buffer.copy_slot(protected, top, to) };
                None
            };
            if !self.claim(top, 1) {
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
        }
        if moved > 0 {
            if dest.flavor() == Flavor::Fifo {
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
}

/// What a thief learned from one look at the deque: a task at `top`, below
/// `bottom`, in `buffer`, which the thief's hazard protects.
struct Snapshot<'h, T> {
    top: i64,
    bottom: i64,
    buffer: &'h Buffer<T>,
}

/// The batch steals' one precondition, shared with the injector's.
// Layout: docs/benchmarks.md#layout-attributes.
#[inline(always)]
#[track_caller]
pub(crate) fn assert_batch_limit(limit: usize) {
    assert!(
        limit > 0,
        "chase-lev: a batch steal needs a limit of at least 1"
    );
}
