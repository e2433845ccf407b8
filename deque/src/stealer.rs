//! `Stealer`, the thieves' handle: steal the oldest task, or a batch of them.

use core::fmt;
use core::mem::MaybeUninit;

use crate::buffer::Buffer;
use crate::deque::{Flavor, Inner};
use crate::policy::fence_if;
use crate::steal::Steal;
use crate::sync::{pin, Arc, Guard, Ordering::Relaxed};
use crate::trace::trace;
use crate::worker::Worker;

/// The most tasks a batch steal takes when the caller gives no limit
/// (crossbeam-deque's default).
const DEFAULT_BATCH_LIMIT: usize = 32;

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
struct Snapshot<'g> {
    top: i64,
    bottom: i64,
    buffer: &'g Buffer,
}

impl<T> Stealer<T> {
    /// Lê et al.'s loads at the start of `steal`: top, the fence, bottom, and
    /// (if the deque looked non-empty) the buffer.
    #[inline(always)]
    fn look<'g>(&self, _guard: &'g Guard) -> Option<Snapshot<'g>> {
        let inner = &*self.inner;
        let policy = inner.policy;
        // Ordering: Acquire, so that a thief that reads a top written by
        // another thief's CAS also sees what that thief saw
        // (proofs-notes/linearizability.md#steal).
        let top = inner.top.load(policy.steal_top_load());
        trace!(inner, "steal: load top = {top}");
        // Ordering: SeqCst fence, paired with the owner's pop fence (and other
        // thieves' fences): owner and thief cannot both miss each other's
        // write (proofs-notes/model.md#store-buffering).
        fence_if(policy.steal_fence());
        // Ordering: Acquire, pairs with push's release fence so the task's
        // bytes are visible (proofs-notes/model.md#message-passing).
        let bottom = inner.bottom.load(policy.steal_bottom_load());
        trace!(inner, "steal: load bottom = {bottom}");
        if top >= bottom {
            return None;
        }
        // Ordering: Acquire, pairs with the release store of a new buffer
        // (proofs-notes/reclamation.md#publication).
        let buffer = inner.buffer.load(policy.buffer_load());
        // SAFETY: the thread is pinned by `_guard` (std) or buffers are kept
        // for the deque's lifetime (loom); so a buffer that was current at the
        // load stays allocated while the guard lives
        // (proofs-notes/reclamation.md#epoch).
        let buffer = unsafe { &*buffer };
        Some(Snapshot {
            top,
            bottom,
            buffer,
        })
    }

    /// The thief's CAS that claims the task at `top`.
    #[inline(always)]
    fn claim(&self, top: i64, count: i64, success: crate::sync::Ordering) -> bool {
        let inner = &*self.inner;
        // Ordering: SeqCst success: claims are totally ordered with the
        // owner's last-task CAS and the fences, and the release half orders
        // the thief's read of the slot before the owner's reuse of it
        // (proofs-notes/linearizability.md#steal).
        let won = inner
            .top
            .compare_exchange(top, top + count, success, Relaxed)
            .is_ok();
        trace!(
            inner,
            "steal: CAS top {top} -> {} {}",
            top + count,
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
        let guard = pin();
        let Some(seen) = self.look(&guard) else {
            return Steal::Empty;
        };
        let index = if policy.steal_from_top() {
            seen.top
        } else {
            seen.bottom - 1
        };
        // Read before the CAS: after a won CAS the owner may reuse the slot.
        let early = policy
            .read_before_cas()
            .then(|| seen.buffer.read::<T>(index));
        if !self.claim(seen.top, 1, policy.steal_cas_success()) {
            return Steal::Retry;
        }
        let task: MaybeUninit<T> = match early {
            Some(task) => task,
            None => seen.buffer.read::<T>(index),
        };
        trace!(self.inner, "steal: took slot {index}");
        // SAFETY: the slot of `top` held a task (top < bottom, published by
        // push's release fence and the acquire load of bottom), it was read
        // before anyone could overwrite it, and the CAS made this thief its
        // only owner (proofs-notes/linearizability.md#steal).
        Steal::Success(unsafe { task.assume_init() })
    }

    /// Steals about half of the tasks (at most 32) and pushes them into
    /// `dest`. Linearizable as a sequence of single steals of the oldest tasks.
    ///
    /// Returns `Success(())` if at least one task moved, `Empty` if the deque
    /// looked empty or `dest` is bounded and has no room, and `Retry` if the
    /// first claim lost a race.
    ///
    /// ```
    /// use chase_lev::{Steal, Worker};
    ///
    /// let victim = Worker::new_lifo();
    /// for task in 1..=4 {
    ///     victim.push(task);
    /// }
    /// let mine = Worker::new_lifo();
    /// assert_eq!(victim.stealer().steal_batch(&mine), Steal::Success(()));
    /// assert_eq!(mine.len(), 2); // (4 + 1) / 2
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

    /// Steals about half of the tasks (at most 32), returns the oldest and
    /// pushes the rest into `dest`.
    ///
    /// ```
    /// use chase_lev::{Steal, Worker};
    ///
    /// let victim = Worker::new_lifo();
    /// for task in 1..=6 {
    ///     victim.push(task);
    /// }
    /// let mine = Worker::new_lifo();
    /// assert_eq!(victim.stealer().steal_batch_and_pop(&mine), Steal::Success(1));
    /// assert_eq!(mine.len(), 2); // 2 and 3
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
            Steal::Success(task) => Steal::Success(task.expect("the first task is kept")),
            Steal::Empty => Steal::Empty,
            Steal::Retry => Steal::Retry,
        }
    }

    /// The batch steal. With `keep_first`, the oldest stolen task is returned
    /// instead of being pushed into `dest`.
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
        let guard = pin();
        let Some(first) = self.look(&guard) else {
            return Steal::Empty;
        };
        let len = (first.bottom - first.top) as usize;
        let wanted = len.div_ceil(2).min(limit);
        let into_dest = dest.reserve(wanted - usize::from(keep_first));
        let batch = into_dest + usize::from(keep_first);
        if batch == 0 {
            return Steal::Empty;
        }
        match self.inner.flavor {
            Flavor::Fifo => self.claim_fifo_batch(dest, first, batch, keep_first),
            Flavor::Lifo => self.claim_one_by_one(dest, &guard, first, batch, keep_first),
        }
    }

    /// From a FIFO owner, which itself claims tasks with a CAS on `top` and
    /// never lowers `bottom`, one CAS claims the whole batch.
    fn claim_fifo_batch(
        &self,
        dest: &Worker<T>,
        seen: Snapshot<'_>,
        batch: usize,
        keep_first: bool,
    ) -> Steal<Option<T>> {
        let dest_bottom = dest.bottom();
        let dest_buffer = dest.buffer();
        let first = keep_first.then(|| seen.buffer.read::<T>(seen.top));
        let skip = i64::from(keep_first);
        for offset in skip..batch as i64 {
            dest_buffer.copy_slot_to::<T>(
                seen.buffer,
                seen.top + offset,
                dest_bottom + offset - skip,
            );
        }
        let success = self.inner.policy.steal_cas_success();
        if !self.claim(seen.top, batch as i64, success) {
            return Steal::Retry;
        }
        dest.publish(dest_bottom, batch as i64 - skip);
        // SAFETY: as in `steal`: the CAS claimed [top, top + batch).
        Steal::Success(first.map(|task| unsafe { task.assume_init() }))
    }

    /// From a LIFO owner, which pops without a CAS, each task is claimed by
    /// its own CAS: the batch is literally a sequence of single steals.
    fn claim_one_by_one(
        &self,
        dest: &Worker<T>,
        guard: &Guard,
        first: Snapshot<'_>,
        batch: usize,
        keep_first: bool,
    ) -> Steal<Option<T>> {
        let policy = self.inner.policy;
        let dest_bottom = dest.bottom();
        let dest_buffer = dest.buffer();
        let mut kept = None;
        let mut moved = 0i64;
        let mut seen = Some(first);
        for taken in 0..batch {
            let Some(now) = seen else { break };
            let keep = keep_first && taken == 0;
            // Read before the CAS, as in `steal`.
            if keep {
                kept = Some(now.buffer.read::<T>(now.top));
            } else {
                dest_buffer.copy_slot_to::<T>(now.buffer, now.top, dest_bottom + moved);
            }
            if !self.claim(now.top, 1, policy.steal_cas_success()) {
                if taken == 0 {
                    return Steal::Retry;
                }
                break;
            }
            if !keep {
                moved += 1;
            }
            seen = if taken + 1 < batch {
                self.look(guard)
            } else {
                None
            };
        }
        if moved > 0 {
            dest.publish(dest_bottom, moved);
        }
        // SAFETY: as in `steal`: the first CAS claimed the kept slot.
        Steal::Success(kept.map(|task| unsafe { task.assume_init() }))
    }

    /// The number of tasks in the deque at one moment during the call.
    ///
    /// ```
    /// use chase_lev::Worker;
    ///
    /// let worker = Worker::new_lifo();
    /// worker.push(1);
    /// assert_eq!(worker.stealer().len(), 1);
    /// ```
    pub fn len(&self) -> usize {
        let guard = pin();
        match self.look(&guard) {
            Some(seen) => (seen.bottom - seen.top) as usize,
            None => 0,
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
