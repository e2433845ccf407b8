//! The sync shim: the only module that knows where atomics, fences, `Arc`,
//! slot cells and buffer reclamation come from.
//!
//! The chase-lev crate is built against `std` and `crossbeam-epoch`. The
//! internal packages under `model-tests/builds/` compile the same source with
//! `--cfg chase_lev_loom` or `--cfg chase_lev_shuttle` (set by their build
//! scripts, never by a cargo feature), which swap in the model checker's
//! types. `--cfg chase_lev_retain_buffers` (set by hand, for the
//! Stacked-Borrows miri run of `.ci/run`) keeps std atomics but replaces the
//! epoch by keeping retired buffers until the deque drops, like the model
//! and mutant builds do.

#[cfg(all(chase_lev_loom, chase_lev_shuttle))]
compile_error!("a build is either a loom build or a shuttle build");

// ---------------------------------------------------------------- atomics --

#[cfg(not(any(chase_lev_loom, chase_lev_shuttle)))]
pub(crate) use std::sync::{
    atomic::{fence, AtomicI64, AtomicPtr, AtomicU64, AtomicUsize, Ordering},
    Arc,
};

#[cfg(chase_lev_loom)]
pub(crate) use loom::sync::{
    atomic::{fence, AtomicI64, AtomicPtr, AtomicU64, AtomicUsize, Ordering},
    Arc,
};

#[cfg(chase_lev_shuttle)]
pub(crate) use shuttle::sync::{
    atomic::{fence, AtomicI64, AtomicPtr, AtomicU64, AtomicUsize, Ordering},
    Arc,
};

// ------------------------------------------------------------- slot cells --

/// The cell type behind a slot: loom's checks every access for causality.
#[cfg(chase_lev_loom)]
use loom::cell::UnsafeCell as UnsafeSlotCell;

/// A plain cell with loom's interface (std has no checks to make; shuttle is
/// sequentially consistent and has no cell type).
#[cfg(not(chase_lev_loom))]
struct UnsafeSlotCell<T>(core::cell::UnsafeCell<T>);

#[cfg(not(chase_lev_loom))]
impl<T> UnsafeSlotCell<T> {
    #[inline(always)]
    fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    #[inline(always)]
    fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

/// One slot of a buffer: plain memory, since no slot is ever read and
/// written at the same time (proofs-notes/reclamation.md#no-wrap).
pub(crate) struct SlotCell<T>(UnsafeSlotCell<core::mem::MaybeUninit<T>>);

impl<T> SlotCell<T> {
    /// `capacity` slots, uninitialised (zero-sized for a zero-sized `T`,
    /// whatever the capacity). The mutant builds zero them, so that a mutant
    /// that reads a slot nobody wrote reads a recognisable 0.
    #[cfg(not(chase_lev_loom))]
    pub(crate) fn new_slots(capacity: usize) -> Box<[SlotCell<T>]> {
        let mut slots = Vec::<SlotCell<T>>::with_capacity(capacity);
        #[cfg(chase_lev_mutants)]
        // SAFETY: the allocation holds `capacity` slots.
        unsafe {
            core::ptr::write_bytes(slots.as_mut_ptr(), 0, capacity)
        };
        // SAFETY: a `SlotCell` is an `UnsafeCell<MaybeUninit<T>>`, which may
        // hold any bytes or none, and the capacity is allocated.
        unsafe { slots.set_len(capacity) };
        slots.into_boxed_slice()
    }

    /// Loom tracks each cell: they are created one by one (and zeroed).
    #[cfg(chase_lev_loom)]
    pub(crate) fn new_slots(capacity: usize) -> Box<[SlotCell<T>]> {
        (0..capacity)
            .map(|_| SlotCell(UnsafeSlotCell::new(core::mem::MaybeUninit::zeroed())))
            .collect()
    }

    /// # Safety
    /// No other thread writes this slot concurrently.
    #[inline(always)]
    pub(crate) unsafe fn read(&self) -> core::mem::MaybeUninit<T> {
        // SAFETY: the cell is valid for reads and, by the caller, not written
        // concurrently (loom checks it). `MaybeUninit` copies every byte as
        // it is: padding, pointers' provenance and all.
        self.0.with(|slot| unsafe { slot.read() })
    }

    /// # Safety
    /// No other thread reads or writes this slot concurrently.
    #[inline(always)]
    pub(crate) unsafe fn write(&self, value: core::mem::MaybeUninit<T>) {
        // SAFETY: the cell is valid for writes and, by the caller, not
        // accessed concurrently (loom checks it).
        self.0.with_mut(|slot| unsafe { slot.write(value) })
    }
}

/// One slot cell on its own, for the injector's blocks (`injector.rs`).
impl<T> SlotCell<T> {
    /// An empty slot (zeroed in the model and mutant builds, as `new_slots`).
    #[cfg(not(chase_lev_loom))]
    #[allow(dead_code)] // the std build allocates its blocks zeroed instead
    pub(crate) fn new() -> SlotCell<T> {
        #[cfg(chase_lev_mutants)]
        let value = core::mem::MaybeUninit::zeroed();
        #[cfg(not(chase_lev_mutants))]
        let value = core::mem::MaybeUninit::uninit();
        SlotCell(UnsafeSlotCell(core::cell::UnsafeCell::new(value)))
    }

    /// An empty slot, tracked by loom.
    #[cfg(chase_lev_loom)]
    pub(crate) fn new() -> SlotCell<T> {
        SlotCell(UnsafeSlotCell::new(core::mem::MaybeUninit::zeroed()))
    }

    /// Called on each slot just before its memory is freed: under loom a
    /// write access, so that a free that does not happen after every read of
    /// the slot is a causality violation loom reports; nothing elsewhere.
    #[inline(always)]
    pub(crate) fn before_free(&mut self) {
        #[cfg(chase_lev_loom)]
        self.0.with_mut(|_| ());
    }
}

// ---------------------------------------------------------------- waiting --

/// One round of waiting for another thread to finish a step it has begun
/// (the injector's short waits, `injector.rs`): a spin hint for the first
/// rounds, then a yield. Under loom and shuttle every round yields, so that
/// the model checker schedules the thread being waited for.
#[inline]
pub(crate) fn wait_round(round: u32) {
    #[cfg(chase_lev_loom)]
    {
        let _ = round;
        loom::thread::yield_now();
    }
    #[cfg(chase_lev_shuttle)]
    {
        let _ = round;
        shuttle::thread::yield_now();
    }
    #[cfg(not(any(chase_lev_loom, chase_lev_shuttle)))]
    {
        if round < 6 {
            for _ in 0..(1u32 << round) {
                core::hint::spin_loop();
            }
        } else {
            std::thread::yield_now();
        }
    }
}

// ----------------------------------------------------------- reclamation --

/// Frees retired buffers with crossbeam-epoch: a buffer is freed once every
/// thread that was pinned when it was retired has unpinned.
#[cfg(not(any(
    chase_lev_loom,
    chase_lev_shuttle,
    chase_lev_mutants,
    chase_lev_retain_buffers
)))]
mod reclamation {
    /// Keeps the current thread pinned to an epoch while it looks at a buffer
    /// that the owner might retire concurrently.
    pub(crate) type Guard = crossbeam_epoch::Guard;

    /// A thief lets the pin execute its SeqCst fence (`pin_with_fence`).
    pub(crate) const PIN_IS_A_FENCE: bool = true;

    std::thread_local! {
        /// This thread's participant in crossbeam-epoch's global collector,
        /// ours rather than crossbeam's default one: one thread-local access
        /// gives both `is_pinned` and `pin` (through the default handle the
        /// pair cost a steal about 2 ns more, measured in
        /// proofs-notes/reclamation.md#pin-fence).
        static HANDLE: crossbeam_epoch::LocalHandle =
            crossbeam_epoch::default_collector().register();
    }

    #[inline]
    pub(crate) fn pin() -> Guard {
        HANDLE
            .try_with(crossbeam_epoch::LocalHandle::pin)
            // This thread's locals are being destroyed: crossbeam's default
            // handle registers a temporary participant in that case.
            .unwrap_or_else(|_| crossbeam_epoch::pin())
    }

    /// Pins the thread and executes a SeqCst fence, in that order: the
    /// steal's fence.
    ///
    /// crossbeam-epoch's pin of a thread that is not pinned yet is a relaxed
    /// store of the thread's epoch followed by `fence(SeqCst)`: that is its
    /// code under miri and on every target but x86, where it issues a `lock
    /// cmpxchg` instead, a full barrier. The epoch itself is correct only if
    /// that is a SeqCst fence, and the buffers a thief reads are safe only if
    /// the epoch is correct. A thread that is already pinned gets no fence
    /// from `pin`, so it gets one of ours
    /// (proofs-notes/reclamation.md#pin-fence).
    #[inline]
    pub(crate) fn pin_with_fence() -> Guard {
        let pin_then_fence = |handle: &crossbeam_epoch::LocalHandle| {
            let nested = handle.is_pinned();
            let guard = handle.pin();
            if nested {
                // Ordering: SeqCst fence: a nested pin executes none
                // (proofs-notes/reclamation.md#pin-fence).
                super::fence(super::Ordering::SeqCst);
            }
            guard
        };
        HANDLE.try_with(pin_then_fence).unwrap_or_else(|_| {
            let guard = crossbeam_epoch::pin();
            // Ordering: SeqCst fence: whether this pin executed one is not
            // known (proofs-notes/reclamation.md#pin-fence).
            super::fence(super::Ordering::SeqCst);
            guard
        })
    }

    /// A pointer to a retired buffer, moved into the epoch's deferred
    /// function.
    struct RetiredBox<B>(*mut B);
    // SAFETY: the deferred function only frees the allocation, which holds no
    // task (its tasks were moved to the new buffer bitwise and are owned
    // there); freeing memory from another thread is fine whatever `B` is.
    unsafe impl<B> Send for RetiredBox<B> {}

    #[derive(Default)]
    pub(crate) struct Retired;

    impl Retired {
        /// # Safety
        /// `buffer` came from `Box::into_raw`, is no longer reachable from the
        /// deque's buffer pointer, and is retired exactly once.
        pub(crate) unsafe fn retire<B>(&self, buffer: *mut B, large: bool) {
            let guard = pin();
            let retired = RetiredBox(buffer);
            let free = move || {
                let retired = retired;
                // SAFETY: the caller handed over unique ownership, and the
                // epoch runs this only when no pinned thread can still hold
                // the pointer (proofs-notes/reclamation.md#epoch).
                drop(unsafe { Box::from_raw(retired.0) });
            };
            // SAFETY: `defer_unchecked` drops the `'static` bound: a buffer of
            // non-`'static` tasks holds no task once retired (see
            // `RetiredBox`), so freeing it later touches no borrowed data.
            unsafe { guard.defer_unchecked(free) };
            if large {
                // Push a big allocation to the global queue now, so that it is
                // freed soon rather than when this thread's bag fills up.
                guard.flush();
            }
        }
    }
}

/// Keeps retired buffers until the deque drops. Loom cannot see
/// crossbeam-epoch unless every crate is rebuilt with `--cfg crossbeam_loom`,
/// and shuttle cannot see it at all; so the model builds check buffer
/// publication and stale-buffer reads, and miri on the std build checks that
/// the epoch never frees a buffer a thief still reads
/// (proofs-notes/reclamation.md#epoch). The mutant builds keep buffers too:
/// the epoch's pin is a barrier that would hide a removed steal fence
/// (proofs-notes/reclamation.md#pin-fence).
#[cfg(any(
    chase_lev_loom,
    chase_lev_shuttle,
    chase_lev_mutants,
    chase_lev_retain_buffers
))]
mod reclamation {
    /// Nothing is freed while the deque lives, so a thief needs no pin.
    pub(crate) struct Guard;

    #[inline]
    pub(crate) fn pin() -> Guard {
        Guard
    }

    /// A pin is nothing here, so a thief issues the steal's fence itself
    /// and never calls `pin_with_fence`: the model checkers then see exactly
    /// Lê et al.'s loads (proofs-notes/reclamation.md#pin-fence).
    pub(crate) const PIN_IS_A_FENCE: bool = false;

    pub(crate) fn pin_with_fence() -> Guard {
        unreachable!("PIN_IS_A_FENCE is false in this build")
    }

    /// A retired buffer, freed by its own type's drop glue.
    struct RetiredBox {
        pointer: *mut (),
        free: unsafe fn(*mut ()),
    }

    impl Drop for RetiredBox {
        fn drop(&mut self) {
            // SAFETY: `free` is the dropper for `pointer`'s type, called once.
            unsafe { (self.free)(self.pointer) }
        }
    }

    /// # Safety
    /// `pointer` came from `Box::<B>::into_raw`.
    unsafe fn free_box<B>(pointer: *mut ()) {
        // SAFETY: by the caller.
        drop(unsafe { Box::from_raw(pointer.cast::<B>()) });
    }

    #[derive(Default)]
    pub(crate) struct Retired {
        buffers: std::sync::Mutex<Vec<RetiredBox>>,
    }

    // SAFETY: the retired buffers hold no tasks (see the epoch version).
    unsafe impl Send for Retired {}
    // SAFETY: only the owner retires, through the mutex.
    unsafe impl Sync for Retired {}

    impl Retired {
        /// # Safety
        /// As for the epoch version.
        pub(crate) unsafe fn retire<B>(&self, buffer: *mut B, _large: bool) {
            let retired = RetiredBox {
                pointer: buffer.cast(),
                free: free_box::<B>,
            };
            self.buffers.lock().unwrap().push(retired);
        }
    }
}

pub(crate) use reclamation::{pin, pin_with_fence, Guard, Retired, PIN_IS_A_FENCE};

// -------------------------------------------------------------- threads --

/// A label for the current thread, used by the mutant builds' event log.
#[cfg(all(chase_lev_mutants, not(any(chase_lev_loom, chase_lev_shuttle))))]
pub(crate) fn thread_label() -> String {
    let thread = std::thread::current();
    match thread.name() {
        Some(name) => name.to_string(),
        None => format!("{:?}", thread.id()),
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
