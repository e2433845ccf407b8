//! The sync shim: the only module that knows whether atomics, fences, `Arc`
//! and buffer reclamation come from `std` + `crossbeam-epoch` or from `loom`.
//!
//! The chase-lev crate itself is always built against `std`. The internal
//! packages `model-tests/builds/loom` and `model-tests/builds/shuttle` compile
//! the same source with `--cfg chase_lev_loom` or `--cfg chase_lev_shuttle`
//! (set by their build scripts, never by a cargo feature), which swap in the
//! model checker's types.

#[cfg(all(chase_lev_loom, chase_lev_shuttle))]
compile_error!("a build is either a loom build or a shuttle build");

#[cfg(not(any(chase_lev_loom, chase_lev_shuttle)))]
mod backend {
    pub(crate) use std::sync::atomic::{fence, AtomicI64, AtomicPtr, Ordering};
    pub(crate) use std::sync::Arc;

    /// Keeps the current thread pinned to an epoch while it looks at a buffer
    /// that the owner might retire concurrently.
    pub(crate) type Guard = crossbeam_epoch::Guard;

    #[inline]
    pub(crate) fn pin() -> Guard {
        crossbeam_epoch::pin()
    }

    /// Allocates `len` null words (zeroed memory, through `calloc`).
    pub(crate) fn zeroed_words(len: usize) -> Box<[super::AtomicWord]> {
        let words: Box<[super::Word]> = vec![core::ptr::null_mut(); len].into_boxed_slice();
        // SAFETY: `AtomicPtr<()>` has the same size, alignment and bit
        // validity as `*mut ()` (documented in `std::sync::atomic`), so a boxed
        // slice of one is a boxed slice of the other with the same layout.
        unsafe { Box::from_raw(Box::into_raw(words) as *mut [super::AtomicWord]) }
    }

    /// A pointer to a retired allocation, moved into the epoch's deferred
    /// function. The pointee is `Send` (see `Retired::retire`).
    struct RetiredBox<B>(*mut B);
    // SAFETY: only constructed for `B: Send`, and the pointer is the unique
    // owner of its allocation once retired.
    unsafe impl<B: Send> Send for RetiredBox<B> {}

    /// Reclamation of retired buffers: crossbeam-epoch frees each one once
    /// every thread that was pinned when it was retired has unpinned.
    #[derive(Default)]
    pub(crate) struct Retired;

    impl Retired {
        /// # Safety
        /// `buffer` came from `Box::into_raw`, is no longer reachable from the
        /// deque's buffer pointer, and is retired exactly once.
        pub(crate) unsafe fn retire<B: Send + 'static>(&self, buffer: *mut B, large: bool) {
            let guard = crossbeam_epoch::pin();
            let retired = RetiredBox(buffer);
            guard.defer(move || {
                let retired = retired;
                // SAFETY: the caller handed over unique ownership, and the
                // epoch runs this only when no pinned thread can still hold
                // the pointer (see proofs-notes/reclamation.md).
                drop(unsafe { Box::from_raw(retired.0) });
            });
            if large {
                // Push a big allocation to the global queue now, so that it is
                // freed soon rather than when this thread's bag fills up.
                guard.flush();
            }
        }
    }

    /// A label for the current thread, used by the mutant builds' event log.
    #[cfg(chase_lev_mutants)]
    pub(crate) fn thread_label() -> String {
        let thread = std::thread::current();
        match thread.name() {
            Some(name) => name.to_string(),
            None => format!("{:?}", thread.id()),
        }
    }
}

#[cfg(any(chase_lev_loom, chase_lev_shuttle))]
mod backend {
    #[cfg(chase_lev_loom)]
    pub(crate) use loom::sync::atomic::{fence, AtomicI64, AtomicPtr, Ordering};
    #[cfg(chase_lev_loom)]
    pub(crate) use loom::sync::Arc;
    #[cfg(chase_lev_shuttle)]
    pub(crate) use shuttle::sync::atomic::{fence, AtomicI64, AtomicPtr, Ordering};
    #[cfg(chase_lev_shuttle)]
    pub(crate) use shuttle::sync::Arc;

    /// Under loom nothing is freed while the deque lives (see `Retired`), so a
    /// thief needs no pin.
    pub(crate) struct Guard;

    #[inline]
    pub(crate) fn pin() -> Guard {
        Guard
    }

    pub(crate) fn zeroed_words(len: usize) -> Box<[super::AtomicWord]> {
        (0..len).map(|_| AtomicPtr::new(core::ptr::null_mut())).collect()
    }

    /// Loom cannot see crossbeam-epoch unless every crate is rebuilt with
    /// `--cfg crossbeam_loom` (and shuttle cannot see it at all), so the model
    /// builds keep retired buffers until the deque itself is dropped. Loom therefore checks buffer publication
    /// and stale-buffer reads; miri (on the std build) checks that the epoch
    /// never frees a buffer a thief still reads. See proofs-notes/reclamation.md.
    #[derive(Default)]
    pub(crate) struct Retired {
        buffers: std::sync::Mutex<Vec<Box<dyn Send>>>,
    }

    impl Retired {
        /// # Safety
        /// As for the std version.
        pub(crate) unsafe fn retire<B: Send + 'static>(&self, buffer: *mut B, _large: bool) {
            // SAFETY: the caller hands over unique ownership of the allocation.
            let buffer = unsafe { Box::from_raw(buffer) };
            self.buffers.lock().unwrap().push(buffer);
        }
    }

    #[cfg(all(chase_lev_mutants, chase_lev_loom))]
    pub(crate) fn thread_label() -> String {
        format!("{:?}", loom::thread::current().id())
    }

    #[cfg(all(chase_lev_mutants, chase_lev_shuttle))]
    pub(crate) fn thread_label() -> String {
        format!("{:?}", shuttle::current::me())
    }
}

pub(crate) use backend::*;

/// One word of a buffer slot. Pointer-typed, so that a pointer inside a task
/// keeps its provenance when the task is copied (see buffer.rs).
pub(crate) type Word = *mut ();
pub(crate) type AtomicWord = AtomicPtr<()>;
