//! `Stealer`, the thieves' handle: its type, `len` and `is_empty`. The single
//! steal is in deque.rs, the batch steals in batch.rs.

use core::fmt;
use std::panic::{RefUnwindSafe, UnwindSafe};

use crate::deque::Inner;
use crate::sync::{Arc, Ordering::Relaxed};

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

// `UnwindSafe` and `RefUnwindSafe` when `T: RefUnwindSafe`, as
// crossbeam-deque 0.8's `Stealer` is from its fields. The fields do not give
// it here (the deque's slots and retired-buffer list sit in `UnsafeCell`s),
// so it is stated, and it holds for the same reason as crossbeam's: a panic
// inside a deque operation cannot leave the deque in a state that breaks its
// invariants for the other handles. A steal runs no task code, and its only
// panic (a zero batch limit) comes before it claims anything, and the hazard
// slot a steal announces is cleared by a guard's `Drop`, on an unwind too
// (reclamation.rs). The worker's impl in worker.rs gives the whole argument. `UnwindSafe` is a safe marker trait; nothing unsafe relies
// on it.
impl<T: RefUnwindSafe> UnwindSafe for Stealer<T> {}
impl<T: RefUnwindSafe> RefUnwindSafe for Stealer<T> {}

impl<T> Stealer<T> {
    /// Lê et al.'s first loads of `steal`: top, the fence, bottom.
    #[inline(always)]
    pub(crate) fn indices(&self) -> (i64, i64) {
        let top = self.load_top();
        (top, self.fence_then_bottom())
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

    /// Returns `true` if the deque was empty at one moment during the call,
    /// where, as for [`len`](Stealer::len) and the `Empty` of
    /// [`steal`](Stealer::steal), a task counts as gone as soon as its
    /// removal has started. So it can answer `true` while the LIFO owner's
    /// [`pop`](crate::Worker::pop) of the last task has lowered `bottom` but not
    /// yet won its CAS on `top`: the task is still in the buffer, and a thief
    /// that looked before the pop may yet be the one that takes it (the pop
    /// then returns `None`), but no task is left for anyone else. The answer
    /// may be out of date by the time the caller looks at it
    /// (`proofs-notes/linearizability.md#len` in the repository).
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
