//! The shrink hysteresis: the LIFO and FIFO owner's pops count toward halving
//! the buffer once it has stayed under a quarter full (the `Worker` fields
//! `pops_until_shrink`, `shrink_after` and `shrink_below`).

use crate::worker::Worker;

impl<T> Worker<T> {
    /// Shrinks the buffer by half once the owner has popped `capacity / 2`
    /// times, since the last resize, while the deque was under a quarter
    /// full. Every pop counts, whether it returned a task, lost the last one
    /// to a thief, or found the deque empty: who took the tasks does not
    /// change how many slots the deque needs. The hysteresis means that a
    /// deque that fills and drains in rounds keeps its buffer instead of
    /// reallocating every round, and the copy (at most `capacity / 4` tasks)
    /// is paid for by the pops before it.
    #[inline]
    pub(crate) fn consider_shrinking(&self, bottom: i64, top: i64) {
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
    pub(crate) fn count_pop_that_came_too_late(&self) {
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
}

/// The `shrink_below` of a buffer of `capacity` slots (see the field).
pub(crate) fn shrink_threshold(bounded: bool, min_capacity: usize, capacity: usize) -> i64 {
    if bounded || capacity <= min_capacity {
        0
    } else {
        (capacity / 4) as i64
    }
}
