//! `Stealer`, the thieves' handle: its type, `len` and `is_empty`. The single
//! steal is in deque.rs, the batch steals in batch.rs.

use core::fmt;

use crate::deque::Stealer;

impl<T> Stealer<T> {
    /// Lê et al.'s first loads of `steal`: top, the fence, bottom.
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
            let again = self.load_top_again();
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

impl<T> fmt::Debug for Stealer<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("Stealer { .. }")
    }
}
