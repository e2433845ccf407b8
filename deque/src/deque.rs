//! The state shared by a `Worker` and its `Stealer`s: the two indices, the
//! buffer pointer, and what happens to the tasks left when the last handle
//! goes away.
//!
//! Invariants (proofs-notes/linearizability.md#invariants):
//! - `top` and `bottom` only grow, except that the LIFO owner's pop lowers
//!   `bottom` by one and then restores it or leaves it at `top`;
//! - `top <= bottom + 1`, and the tasks are the slots of indices in
//!   `[top, bottom)` of the current buffer, which the deque owns.

use core::cell::UnsafeCell;
use core::marker::PhantomData;

use crossbeam_utils::CachePadded;

use crate::buffer::Buffer;
use crate::policy::Policy;
use crate::reclamation::Retired;
use crate::sync::{AtomicI64, AtomicPtr, Ordering::Relaxed};
use crate::trace::Trace;

/// Which end the owner pops from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Flavor {
    /// The owner pops the newest task (at `bottom`), without a CAS unless it
    /// races thieves for the last task.
    Lifo,
    /// The owner pops the oldest task (at `top`) with a CAS, like a thief.
    Fifo,
}

pub(crate) struct Inner<T> {
    /// The index of the oldest task. Thieves advance it by CAS; so does the
    /// FIFO owner. On its own cache line, away from `bottom`, so that a thief
    /// spinning on `top` does not slow the owner's push and pop.
    pub(crate) top: CachePadded<AtomicI64>,
    /// One past the newest task; written only by the owner.
    pub(crate) bottom: CachePadded<AtomicI64>,
    /// The current buffer; replaced only by the owner (grow and shrink).
    pub(crate) buffer: CachePadded<AtomicPtr<Buffer<T>>>,
    pub(crate) flavor: Flavor,
    pub(crate) policy: Policy,
    /// Buffers the owner replaced that a thief may still read; touched only
    /// by the owner and by the final drop (`Inner::retired`).
    retired: UnsafeCell<Retired<T>>,
    #[allow(dead_code)] // read only by the mutant builds' `trace!`
    pub(crate) trace: Trace,
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
    pub(crate) fn new(flavor: Flavor, buffer: Buffer<T>, first_index: i64, policy: Policy) -> Self {
        Inner {
            top: CachePadded::new(AtomicI64::new(first_index)),
            bottom: CachePadded::new(AtomicI64::new(first_index)),
            buffer: CachePadded::new(AtomicPtr::new(Box::into_raw(Box::new(buffer)))),
            flavor,
            policy,
            retired: UnsafeCell::new(Retired::new()),
            // A unit struct in some builds, not in others.
            #[allow(clippy::default_constructed_unit_structs)]
            trace: Trace::default(),
            _tasks: PhantomData,
        }
    }
}

impl<T> Inner<T> {
    /// The retired buffers.
    ///
    /// # Safety
    /// Only the owner calls this (from its unique `Worker`), and it does not
    /// hold two of the references at once.
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn retired(&self) -> &mut Retired<T> {
        // SAFETY: by the caller, this is the only reference.
        unsafe { &mut *self.retired.get() }
    }
}

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
        // SAFETY: the pointer came from `Box::into_raw` and is freed only here.
        drop(unsafe { Box::from_raw(self.0) });
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
