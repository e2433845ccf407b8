//! The sync shim: the only module that knows whether chase-lev runs on std
//! or under a model checker. It says where atomics, fences, `Arc`, slot
//! cells, statics, thread-locals, buffer allocation and leak checks come
//! from, and imports nothing of the crate.
//!
//! The chase-lev crate is built against `std`. `--cfg chase_lev_loom` (set
//! by a user in `RUSTFLAGS` to model-check their own code with chase-lev
//! inside, or by the internal packages under `model-tests/builds/`) swaps in
//! loom's types, `--cfg chase_lev_shuttle` shuttle's. Nothing else differs
//! between the builds: the algorithm, its reclamation and its fences are the
//! same code (no cargo feature selects a backend).
//!
//! `--cfg chase_lev_genmc` is the build that Miri's GenMC mode explores
//! (`model-tests/genmc/`, internal, and only under Miri): std's atomics,
//! each written once by an atomic store at its final address before any
//! other thread can read it (this GenMC does not see the plain writes that
//! initialise an atomic), an `Arc` of its own for the same reason, and
//! thread-locals without destructors (proofs-notes/limits.md#miris-genmc-mode).

#[cfg(all(chase_lev_loom, chase_lev_shuttle))]
compile_error!("a build is either a loom build or a shuttle build");

#[cfg(all(chase_lev_genmc, any(chase_lev_loom, chase_lev_shuttle, not(miri))))]
compile_error!("`--cfg chase_lev_genmc` is the internal build that Miri's GenMC mode runs, alone");

/// The model checker, where one runs the crate: its statics and
/// thread-locals (`process_static!`, `thread_local_static!`).
#[cfg(chase_lev_loom)]
pub(crate) use loom as model;
#[cfg(chase_lev_shuttle)]
pub(crate) use shuttle as model;

// ---------------------------------------------------------------- atomics --

#[cfg(not(any(chase_lev_loom, chase_lev_shuttle)))]
use std::sync::atomic as backend;
#[cfg(not(any(chase_lev_loom, chase_lev_shuttle, chase_lev_genmc)))]
pub(crate) use std::sync::Arc;
/// The `Arc` of the hazard registry's chunks, whichever backend runs the
/// deque (a model's `Arc` has no `into_raw`): std's, or the GenMC build's.
#[cfg(not(chase_lev_genmc))]
pub(crate) use std::sync::Arc as StdArc;

/// (GenMC build.) The hazard registry's mask word, 8 bits here
/// (`reclamation.rs`, `MaskWord`; proofs-notes/limits.md#miris-genmc-mode).
#[cfg(chase_lev_genmc)]
pub(crate) use backend::AtomicU8;
#[cfg(chase_lev_genmc)]
pub(crate) use genmc::{Arc, Arc as StdArc, InitialValue};

/// The padding of the hazard records, a pair of cache lines each:
/// crossbeam's, except under GenMC, where a record is its fields alone
/// (padding bytes are memory each execution writes, and a chunk has 64
/// records).
#[cfg(not(chase_lev_genmc))]
pub(crate) use crossbeam_utils::CachePadded;
#[cfg(chase_lev_genmc)]
pub(crate) use genmc::Unpadded as CachePadded;

#[cfg(chase_lev_loom)]
use loom::sync::atomic as backend;
#[cfg(chase_lev_loom)]
pub(crate) use loom::sync::Arc;

#[cfg(chase_lev_shuttle)]
use shuttle::sync::atomic as backend;
#[cfg(chase_lev_shuttle)]
pub(crate) use shuttle::sync::Arc;

pub(crate) use backend::Ordering;
pub(crate) use backend::{fence, AtomicI64, AtomicPtr, AtomicU64, AtomicUsize};

/// A load of `atomic` by the only thread that ever stores to it: its own
/// last store (the owner's reload of `bottom` after a call out of the crate,
/// deque.rs). Relaxed; under loom an `unsync_load`, which loom checks (every
/// store to the atomic must happen before it) without making it a point
/// where another thread may be scheduled, as a load of the owner's own
/// value on real hardware is no such point either.
///
/// # Safety
/// No other thread stores to `atomic`.
pub(crate) unsafe fn load_own_store(atomic: &AtomicI64) -> i64 {
    #[cfg(chase_lev_loom)]
    // SAFETY: by the caller, every store to it is this thread's own.
    return unsafe { atomic.unsync_load() };
    #[cfg(not(chase_lev_loom))]
    // Ordering: Relaxed: the value is this thread's own last store
    // (proofs-notes/reclamation.md#reentrant-owner-operations).
    atomic.load(Ordering::Relaxed)
}

/// Whether loom runs the crate (a user's model, or this repository's).
pub(crate) const UNDER_LOOM: bool = cfg!(chase_lev_loom);

/// Whether a model checker (loom, shuttle, or Miri's GenMC mode) runs the
/// crate: its models reach a buffer's or a block's end in a few operations
/// when these are small (`Worker`'s default capacity, the injector's blocks).
pub(crate) const UNDER_A_MODEL_CHECKER: bool =
    cfg!(any(chase_lev_loom, chase_lev_shuttle, chase_lev_genmc));

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
    fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

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
    ///
    /// # Panics
    /// With the crate's "capacity overflow" message if the allocator cannot
    /// provide the memory: the allocation is fallible (`try_reserve_exact`),
    /// so the process does not abort the way `Vec::with_capacity` makes it.
    #[cfg(not(chase_lev_loom))]
    pub(crate) fn new_slots(capacity: usize) -> Box<[SlotCell<T>]> {
        let mut slots = Vec::<SlotCell<T>>::new();
        if let Err(error) = slots.try_reserve_exact(capacity) {
            allocation_failed::<T>(capacity, error);
        }
        // The vector's capacity is now exactly `capacity` (what std's
        // `try_reserve_exact` records for an empty vector), so the
        // `into_boxed_slice` below has nothing to shrink and does not
        // allocate again.
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
    /// (The model's buffers are a few slots; an allocation failure there is
    /// loom's, not the deque's.)
    #[cfg(chase_lev_loom)]
    pub(crate) fn new_slots(capacity: usize) -> Box<[SlotCell<T>]> {
        (0..capacity)
            .map(|_| SlotCell(UnsafeSlotCell::new(core::mem::MaybeUninit::zeroed())))
            .collect()
    }

    /// A free of the buffer, as loom sees it: a write of the slot (nothing
    /// elsewhere).
    #[cfg_attr(not(chase_lev_loom), allow(dead_code))] // `free_buffer` calls it under loom
    pub(crate) fn mark_freed(&self) {
        #[cfg(chase_lev_loom)]
        self.0.with_mut(|_| ());
    }

    /// # Safety
    /// No other thread writes this slot concurrently.
    pub(crate) unsafe fn read(&self) -> core::mem::MaybeUninit<T> {
        // SAFETY: the cell is valid for reads and, by the caller, not written
        // concurrently (loom checks it). `MaybeUninit` copies every byte as
        // it is: padding, pointers' provenance and all.
        self.0.with(|slot| unsafe { slot.read() })
    }

    /// # Safety
    /// No other thread reads or writes this slot concurrently.
    pub(crate) unsafe fn write(&self, value: core::mem::MaybeUninit<T>) {
        // SAFETY: the cell is valid for writes and, by the caller, not
        // accessed concurrently (loom checks it).
        self.0.with_mut(|slot| unsafe { slot.write(value) })
    }
}

/// The allocator refused a buffer: a panic, as the constructors document,
/// rather than the abort of `handle_alloc_error`.
#[cfg(not(chase_lev_loom))]
#[cold]
#[inline(never)]
#[track_caller]
fn allocation_failed<T>(capacity: usize, error: std::collections::TryReserveError) -> ! {
    panic!(
        "chase-lev: capacity overflow (the allocator could not provide {capacity} slots of {} bytes: {error})",
        core::mem::size_of::<T>()
    )
}

/// One slot cell on its own, for the injector's blocks (`injector/blocks.rs`).
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

    /// Called on each cell of an injector block just before its memory is
    /// freed (model builds): under loom a write access, so that a free that
    /// does not happen after every read of the cell is a causality violation
    /// loom reports; nothing under shuttle.
    #[cfg(any(chase_lev_loom, chase_lev_shuttle))]
    pub(crate) fn before_free(&mut self) {
        #[cfg(chase_lev_loom)]
        self.0.with_mut(|_| ());
    }
}

// ---------------------------------------------------------------- waiting --

/// One round of waiting for another thread to finish a step it has begun
/// (the injector's bounded patience before abandoning a slot, and its wait
/// for a free ticket, `injector/`): a spin hint for the first rounds, then
/// a yield. Under loom and shuttle every round yields, so that the model
/// checker schedules the other threads.
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
        if round < SPIN_ROUNDS {
            spin(round);
        } else {
            std::thread::yield_now();
        }
    }
}

/// Rounds of spinning before `wait_round` yields; `Backoff` spins at most
/// 2^`SPIN_ROUNDS` hints at once.
const SPIN_ROUNDS: u32 = 6;

/// 2^`round` spin hints: no memory touched, so no model checker sees them.
fn spin(round: u32) {
    for _ in 0..(1u32 << round) {
        core::hint::spin_loop();
    }
}

/// A pause after a lost race for a word that others are writing too (a
/// push's CAS on the Injector's tail): spin hints, twice as many after each
/// loss, at most 64. It touches no memory and yields nothing, so under loom
/// and shuttle it is no step at all.
#[derive(Default)]
pub(crate) struct Backoff {
    losses: u32,
}

impl Backoff {
    pub(crate) fn wait(&mut self) {
        spin(self.losses);
        self.losses = (self.losses + 1).min(SPIN_ROUNDS);
    }
}

// ------------------------------------------------------ statics and locals --

/// `fn name() -> &'static T = init;` declares `name()`, the reference to a
/// static made from `init`: one per process (std's `static`, `init` a
/// constant expression), or one per model execution (loom's and shuttle's
/// `lazy_static!`).
#[cfg(not(any(chase_lev_loom, chase_lev_shuttle)))]
macro_rules! process_static {
    ($(#[$attribute:meta])* $vis:vis fn $name:ident() -> &'static $type:ty = $init:expr;) => {
        $(#[$attribute])*
        $vis fn $name() -> &'static $type {
            static VALUE: $type = $init;
            &VALUE
        }
    };
}

#[cfg(any(chase_lev_loom, chase_lev_shuttle))]
macro_rules! process_static {
    ($(#[$attribute:meta])* $vis:vis fn $name:ident() -> &'static $type:ty = $init:expr;) => {
        $(#[$attribute])*
        $vis fn $name() -> &'static $type {
            $crate::sync::model::lazy_static! {
                static ref VALUE: $type = $init;
            }
            &VALUE
        }
    };
}

/// `thread_local!` of std (with a `const` initializer: made without
/// allocating, so that code running inside the global allocator can use it,
/// and with no lazy state to check), of loom or of shuttle.
#[cfg(not(any(chase_lev_loom, chase_lev_shuttle, chase_lev_genmc)))]
macro_rules! thread_local_static {
    ($vis:vis static $name:ident: $type:ty = const $init:expr;) => {
        std::thread_local! {
            $vis static $name: $type = const { $init };
        }
    };
}

/// Under GenMC, std's thread-local with no destructor: this GenMC cannot
/// follow the pthread key std registers for one. What the destructor would
/// do at a thread's end, a scenario does itself before the thread returns
/// (`genmc::end_of_thread`); the rest is never dropped
/// (proofs-notes/limits.md#miris-genmc-mode).
#[cfg(chase_lev_genmc)]
macro_rules! thread_local_static {
    ($vis:vis static $name:ident: $type:ty = const $init:expr;) => {
        std::thread_local! {
            $vis static $name: core::mem::ManuallyDrop<$type> =
                const { core::mem::ManuallyDrop::new($init) };
        }
    };
}

#[cfg(any(chase_lev_loom, chase_lev_shuttle))]
macro_rules! thread_local_static {
    ($vis:vis static $name:ident: $type:ty = const $init:expr;) => {
        $crate::sync::model::thread_local! {
            $vis static $name: $type = $init;
        }
    };
}

pub(crate) use {process_static, thread_local_static};

/// Whether a model checker is unwinding from a failed execution: loom then
/// drops the execution's thread-locals and statics outside the model, where
/// its atomics cannot be touched. The registry's destructors skip their
/// bookkeeping then (the execution is over anyway).
pub(crate) fn model_is_unwinding() -> bool {
    cfg!(chase_lev_loom) && std::thread::panicking()
}

/// Whether a static's drop must leave the model's atomics alone: under loom
/// when a failed execution unwinds (above), and always under shuttle, which
/// drops a test's statics after its tasks have finished, where its atomics
/// cannot be touched. What such a drop would free then leaks (a few records
/// per execution); std's statics are never dropped.
pub(crate) fn statics_drop_outside_the_model() -> bool {
    cfg!(chase_lev_shuttle) || model_is_unwinding()
}

// ----------------------------------------------------------------- buffers --

/// Allocates a buffer. The internal builds (`--cfg chase_lev_hooks`) first
/// run the hook a scenario set for this thread's next buffer allocation
/// ([`before_next_buffer_allocation`]), as a global allocator that calls
/// back into the deque would run there.
pub(crate) fn allocate_buffer<B>(buffer: B) -> *mut B {
    #[cfg(chase_lev_hooks)]
    if let Some(hook) = BEFORE_ALLOCATION.with(|slot| slot.borrow_mut().take()) {
        hook();
    }
    Box::into_raw(Box::new(buffer))
}

#[cfg(chase_lev_hooks)]
thread_local_static! {
    static BEFORE_ALLOCATION: core::cell::RefCell<Option<Box<dyn FnOnce()>>> =
        const core::cell::RefCell::new(None);
}

/// (Internal builds only.) Runs `hook` on this thread, once, when it next
/// allocates a deque buffer: where a global allocator would run, for
/// example while a batch steal grows its destination.
#[cfg(chase_lev_hooks)]
pub fn before_next_buffer_allocation(hook: impl FnOnce() + 'static) {
    BEFORE_ALLOCATION.with(|slot| *slot.borrow_mut() = Some(Box::new(hook)));
}

/// What a free does to a buffer's slots under loom (`free_buffer`).
pub(crate) trait Slots {
    /// Writes every slot, as loom sees it.
    #[cfg_attr(not(chase_lev_loom), allow(dead_code))] // called under loom only
    fn write_every_slot_as_freed(&self);
}

/// Whether `free_buffer` gives the memory back (std), so that its address
/// may be handed out again (the mutant builds' event log numbers addresses).
#[allow(dead_code)] // read by the mutant builds only
pub(crate) const FREE_RETURNS_MEMORY: bool = !cfg!(any(chase_lev_loom, chase_lev_shuttle));

/// Frees a retired buffer.
///
/// # Safety
/// `buffer` came from `Box::into_raw` (`allocate_buffer` is one) and no
/// thread can still read it.
#[cfg(not(any(chase_lev_loom, chase_lev_shuttle)))]
pub(crate) unsafe fn free_buffer<B: Slots>(buffer: *mut B) {
    // SAFETY: by the caller.
    drop(unsafe { Box::from_raw(buffer) });
}

/// Under loom a free is a write to every slot, so that a thief still reading
/// one is reported as a causality violation instead of reading freed memory;
/// the allocation itself is then leaked (a few slots per execution).
///
/// # Safety
/// As for the std version.
#[cfg(chase_lev_loom)]
pub(crate) unsafe fn free_buffer<B: Slots>(buffer: *mut B) {
    // SAFETY: by the caller, the buffer is still allocated and ours.
    unsafe { &*buffer }.write_every_slot_as_freed();
}

/// Under shuttle a retired buffer is never freed, only forgotten (a few
/// slots per schedule): shuttle has no cell type to report a read of a freed
/// buffer, so a mutant that frees a buffer a thief still reads would corrupt
/// the process that explores it instead of failing a schedule. Reads of
/// freed buffers are loom's and miri's to find (proofs-notes/limits.md).
///
/// # Safety
/// As for the std version.
#[cfg(chase_lev_shuttle)]
pub(crate) unsafe fn free_buffer<B: Slots>(buffer: *mut B) {
    let _ = buffer;
}

// ------------------------------------------------------------ leak checks --

/// A value loom counts as an allocation until it is dropped: each injector
/// block of a model build holds one, so that loom reports a block never
/// freed ("Allocation leaked") at the end of the execution that leaked it.
/// (Shuttle's blocks carry none: leaks are loom's and miri's to find.)
#[cfg(chase_lev_loom)]
pub(crate) struct LeakCheck(#[allow(dead_code)] loom::alloc::Track<()>);

#[cfg(chase_lev_loom)]
impl LeakCheck {
    pub(crate) fn new() -> LeakCheck {
        LeakCheck(loom::alloc::Track::new(()))
    }
}

// -------------------------------------------------------------- threads --

/// A label for the current thread, used by the mutant builds' event log.
#[cfg(all(chase_lev_mutants, not(any(chase_lev_loom, chase_lev_shuttle))))]
pub(crate) fn thread_label() -> Option<String> {
    let thread = std::thread::current();
    Some(match thread.name() {
        Some(name) => name.to_string(),
        None => format!("{:?}", thread.id()),
    })
}

#[cfg(all(chase_lev_mutants, chase_lev_loom))]
loom::thread_local! {
    /// Loom's id of this thread, kept in a thread-local of its own because
    /// while loom destroys a thread's thread-locals (the hazard record's
    /// release), `loom::thread::current` panics, where this one reports an
    /// error instead.
    static THREAD_LABEL: String = format!("{:?}", loom::thread::current().id());
}

/// `None` while loom destroys the thread's thread-locals: the log then skips
/// the access (the hazard record's release at a thread's end).
#[cfg(all(chase_lev_mutants, chase_lev_loom))]
pub(crate) fn thread_label() -> Option<String> {
    THREAD_LABEL.try_with(String::clone).ok()
}

#[cfg(all(chase_lev_mutants, chase_lev_shuttle))]
pub(crate) fn thread_label() -> Option<String> {
    Some(format!("{:?}", shuttle::current::me()))
}

// ------------------------------------------------------------- GenMC build --

/// (GenMC build only.) What the build that Miri's GenMC mode explores needs
/// beyond std: this GenMC does not see the plain writes that initialise an
/// atomic (a struct made and then moved into place), and an atomic read of
/// such a location returns a dummy value. So every atomic gets one atomic
/// store of its value at its final address, before another thread can read
/// it ([`InitialValue`]), and the deque's handles share it through an `Arc`
/// whose count is such an atomic (std's count is written plainly)
/// (proofs-notes/limits.md#miris-genmc-mode).
#[cfg(chase_lev_genmc)]
mod genmc {
    use core::ptr::NonNull;

    use super::backend::{fence, AtomicI64, AtomicPtr, AtomicU64, AtomicU8, AtomicUsize};
    use super::Ordering::{Acquire, Relaxed, Release};

    /// An atomic whose value was written plainly (made, then moved to where
    /// it stays): `store_initial_value` writes that value again with an
    /// atomic store, which GenMC sees.
    pub(crate) trait InitialValue {
        /// Stores the atomic's own value into it. Call it at the atomic's
        /// final address, before any other thread can read it.
        fn store_initial_value(&self);
    }

    macro_rules! initial_value {
        ([$($generic:tt)*] $atomic:ty) => {
            impl<$($generic)*> InitialValue for $atomic {
                fn store_initial_value(&self) {
                    // SAFETY: no other thread can see the atomic yet, so a
                    // plain read of it (served by Miri's memory, which holds
                    // the value written plainly) races with nothing.
                    let value = unsafe { self.as_ptr().read() };
                    // Ordering: Relaxed: the atomic is published to other
                    // threads later, by the release that publishes what
                    // holds it (proofs-notes/limits.md#miris-genmc-mode).
                    self.store(value, Relaxed);
                }
            }
        };
    }

    initial_value!([] AtomicI64);
    initial_value!([] AtomicU64);
    initial_value!([] AtomicU8);
    initial_value!([] AtomicUsize);
    initial_value!([T] AtomicPtr<T>);

    /// `CachePadded`'s interface without its padding.
    pub(crate) struct Unpadded<T>(T);

    impl<T> Unpadded<T> {
        pub(crate) fn new(value: T) -> Unpadded<T> {
            Unpadded(value)
        }
    }

    impl<T> core::ops::Deref for Unpadded<T> {
        type Target = T;

        fn deref(&self) -> &T {
            &self.0
        }
    }

    /// The shared part of an [`Arc`].
    struct Shared<T> {
        count: AtomicUsize,
        value: T,
    }

    /// std's `Arc` as far as the deque uses it (`new`, `clone`, `ptr_eq`,
    /// `Deref`, and for the registry's chunks `into_raw`, `from_raw` and
    /// `increment_strong_count`), with the same orderings, its count
    /// stored atomically where it is made.
    pub(crate) struct Arc<T> {
        shared: NonNull<Shared<T>>,
    }

    // SAFETY: as for std's `Arc`: the value is shared between threads and
    // dropped by whichever handle goes last.
    unsafe impl<T: Send + Sync> Send for Arc<T> {}
    // SAFETY: as above.
    unsafe impl<T: Send + Sync> Sync for Arc<T> {}

    impl<T> Arc<T> {
        pub(crate) fn new(value: T) -> Arc<T> {
            let shared = Box::new(Shared {
                count: AtomicUsize::new(1),
                value,
            });
            shared.count.store_initial_value();
            Arc {
                shared: NonNull::from(Box::leak(shared)),
            }
        }

        #[allow(dead_code)] // the batch steal's check of its destination
        pub(crate) fn ptr_eq(this: &Arc<T>, other: &Arc<T>) -> bool {
            this.shared == other.shared
        }

        pub(crate) fn into_raw(this: Arc<T>) -> *const T {
            let this = core::mem::ManuallyDrop::new(this);
            // SAFETY: the shared part lives while this count is held.
            unsafe { core::ptr::addr_of!((*this.shared.as_ptr()).value) }
        }

        /// # Safety
        /// `value` came from `into_raw`, whose count the caller gives back.
        pub(crate) unsafe fn from_raw(value: *const T) -> Arc<T> {
            let offset = core::mem::offset_of!(Shared<T>, value);
            // SAFETY: by the caller, `value` is the `value` field of a
            // `Shared<T>` made by `new`.
            let shared = unsafe { value.cast::<u8>().sub(offset) }
                .cast::<Shared<T>>()
                .cast_mut();
            Arc {
                // SAFETY: derived from a non-null pointer of `new`.
                shared: unsafe { NonNull::new_unchecked(shared) },
            }
        }

        /// # Safety
        /// `value` came from `into_raw`, and that count is still held.
        pub(crate) unsafe fn increment_strong_count(value: *const T) {
            // SAFETY: forwarded from the caller.
            let this = core::mem::ManuallyDrop::new(unsafe { Arc::from_raw(value) });
            core::mem::forget(Arc::clone(&this));
        }

        fn shared(&self) -> &Shared<T> {
            // SAFETY: alive while this handle counts.
            unsafe { self.shared.as_ref() }
        }
    }

    impl<T> Clone for Arc<T> {
        fn clone(&self) -> Arc<T> {
            // Ordering: Relaxed, as std's `Arc::clone`: a new count comes
            // from one held (proofs-notes/limits.md#miris-genmc-mode).
            self.shared().count.fetch_add(1, Relaxed);
            Arc {
                shared: self.shared,
            }
        }
    }

    impl<T> core::ops::Deref for Arc<T> {
        type Target = T;

        fn deref(&self) -> &T {
            &self.shared().value
        }
    }

    impl<T> Drop for Arc<T> {
        fn drop(&mut self) {
            // Ordering: Release, then an Acquire fence for the last handle,
            // as std's `Arc::drop`: every use of the value by any handle
            // happens before its drop (proofs-notes/limits.md#miris-genmc-mode).
            if self.shared().count.fetch_sub(1, Release) != 1 {
                return;
            }
            // Ordering: as above (proofs-notes/limits.md#miris-genmc-mode).
            fence(Acquire);
            // SAFETY: the last handle: the box made by `new` is ours.
            drop(unsafe { Box::from_raw(self.shared.as_ptr()) });
        }
    }
}
