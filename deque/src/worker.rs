//! `Worker`, the owner's handle: its constructors, `len` and `capacity`.
//! The type, push, pop, the shrink hysteresis and the destination's side of
//! a batch steal are in deque.rs, where the handles' fields are private.

use core::fmt;
use core::mem;

use crate::buffer::{Buffer, MAX_CAPACITY};
use crate::deque::{Flavor, Worker};
use crate::sync::UNDER_LOOM;

/// The capacity of a worker made by `new_lifo` or `new_fifo`. Larger than
/// crossbeam-deque's 64 because a buffer here holds one lap of indices: a
/// deque that is pushed and popped around empty moves its indices on by one
/// per last-task pop and changes buffers once per lap (reusing a retired
/// buffer, without allocating: proofs-notes/reclamation.md#reuse). At 256
/// slots the buffer change, once per 256 such pops, adds little to each
/// operation (docs/benchmarks.md#instructions-per-operation).
///
/// Under loom (a user's model with `--cfg chase_lev_loom`, or this
/// repository's), four slots, as tokio's queue does: loom tracks every slot,
/// and a model that pushes a few tasks then reaches a new lap or a grow.
const DEFAULT_CAPACITY: usize = if UNDER_LOOM { 4 } else { 256 };

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
        Worker::build(Flavor::Lifo, DEFAULT_CAPACITY, false)
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
        Worker::build(Flavor::Fifo, DEFAULT_CAPACITY, false)
    }

    /// Creates a growable LIFO worker that starts with room for `capacity`
    /// tasks (rounded up to a power of two) and never shrinks below it.
    ///
    /// ```
    /// use chase_lev::Worker;
    ///
    /// let worker = Worker::<u32>::new_lifo_with_capacity(1000);
    /// assert_eq!(worker.capacity(), 1024);
    /// for task in 0..5000 {
    ///     worker.push(task); // grows as needed
    /// }
    /// assert_eq!(worker.len(), 5000);
    /// assert_eq!(worker.pop(), Some(4999)); // the newest first
    /// ```
    pub fn new_lifo_with_capacity(capacity: usize) -> Worker<T> {
        Worker::build(Flavor::Lifo, capacity, false)
    }

    /// Creates a growable FIFO worker that starts with room for `capacity`
    /// tasks (rounded up to a power of two) and never shrinks below it.
    ///
    /// ```
    /// use chase_lev::Worker;
    ///
    /// let worker = Worker::<u32>::new_fifo_with_capacity(3);
    /// assert_eq!(worker.capacity(), 4);
    /// worker.push(1);
    /// worker.push(2);
    /// assert_eq!(worker.pop(), Some(1)); // the oldest first
    /// ```
    pub fn new_fifo_with_capacity(capacity: usize) -> Worker<T> {
        Worker::build(Flavor::Fifo, capacity, false)
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
        Worker::build(Flavor::Lifo, capacity, true)
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
        Worker::build(Flavor::Fifo, capacity, true)
    }

    pub(crate) fn build(flavor: Flavor, capacity: usize, bounded: bool) -> Worker<T> {
        Worker::build_at(flavor, capacity, bounded, 0)
    }

    /// As `build`, with both indices starting at `first_index` (tests use a
    /// start near `i64::MAX` to reach the end of the index space).
    pub(crate) fn build_at(
        flavor: Flavor,
        capacity: usize,
        bounded: bool,
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
        let buffer_capacity = if mem::size_of::<T>() == 0 && !bounded && !UNDER_LOOM {
            // Zero-sized tasks take no memory: start at the largest capacity
            // so that the buffer never needs to grow or shrink (not under
            // loom, which tracks every slot).
            MAX_CAPACITY
        } else {
            capacity.max(1).next_power_of_two()
        };
        let bound = bounded.then_some(capacity);
        Worker::with_buffer(
            flavor,
            Buffer::new(buffer_capacity, first_index),
            first_index,
            bound,
        )
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
        // The owner's own bottom, then top with acquire as in push
        // (proofs-notes/linearizability.md#len).
        let bottom = self.bottom();
        let top = self.load_top();
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
    /// let worker = Worker::<u8>::new_lifo_with_capacity(2);
    /// worker.push(1);
    /// worker.push(2);
    /// worker.push(3);
    /// assert_eq!(worker.capacity(), 4);
    /// ```
    pub fn capacity(&self) -> usize {
        self.buffer().capacity()
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
        crate::sites::make_the_next_deque_carry(mutant);
        Worker::build(flavor, capacity, bounded)
    }
}

impl<T> fmt::Debug for Worker<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("Worker { .. }")
    }
}
