//! The sync shim: the only module that knows where atomics, fences, `Arc`,
//! slot cells and buffer reclamation come from.
//!
//! The chase-lev crate is built against `std`. `--cfg chase_lev_loom` (set
//! by a user in `RUSTFLAGS` to model-check their own code with chase-lev
//! inside, or by the internal packages under `model-tests/builds/`) swaps in
//! loom's types, `--cfg chase_lev_shuttle` shuttle's. Nothing else differs
//! between the builds: the algorithm, its reclamation and its fences are the
//! same code (no cargo feature selects a backend).

#[cfg(all(chase_lev_loom, chase_lev_shuttle))]
compile_error!("a build is either a loom build or a shuttle build");

// ---------------------------------------------------------------- atomics --

#[cfg(not(any(chase_lev_loom, chase_lev_shuttle)))]
use std::sync::atomic as backend;
#[cfg(not(any(chase_lev_loom, chase_lev_shuttle)))]
pub(crate) use std::sync::Arc;

#[cfg(chase_lev_loom)]
use loom::sync::atomic as backend;
#[cfg(chase_lev_loom)]
pub(crate) use loom::sync::Arc;

#[cfg(chase_lev_shuttle)]
use shuttle::sync::atomic as backend;
#[cfg(chase_lev_shuttle)]
pub(crate) use shuttle::sync::Arc;

pub(crate) use backend::Ordering;

/// The backend's atomics themselves: names cost nothing outside the mutant
/// builds.
#[cfg(not(chase_lev_mutants))]
pub(crate) use backend::{fence, AtomicI64, AtomicPtr, AtomicU64, AtomicUsize};

/// The mutant builds' atomics record every access in the event log.
#[cfg(chase_lev_mutants)]
pub(crate) use logged::{fence, AtomicI64, AtomicPtr, AtomicU64, AtomicUsize};

/// A name for an atomic, given where it is made
/// (`AtomicI64::new(0).named("top")`): the mutant builds' event log calls
/// it by that name; elsewhere `named` returns the atomic as it is.
pub(crate) trait Named: Sized {
    /// This atomic, called `name` in the event log.
    fn named(self, name: &'static str) -> Self;

    /// As `named`, for a pointer whose bits under `tags` are a tag (the
    /// injector's ticket counts), which the log shows apart from the address.
    #[inline(always)]
    fn named_with_tags(self, name: &'static str, tags: usize) -> Self {
        let _ = tags;
        self.named(name)
    }
}

#[cfg(not(chase_lev_mutants))]
macro_rules! unnamed {
    ($($atomic:ty),*) => {$(
        impl Named for $atomic {
            #[inline(always)]
            fn named(self, _name: &'static str) -> Self {
                self
            }
        }
    )*};
}

#[cfg(not(chase_lev_mutants))]
unnamed!(AtomicI64, AtomicU64, AtomicUsize);

#[cfg(not(chase_lev_mutants))]
impl<T> Named for AtomicPtr<T> {
    #[inline(always)]
    fn named(self, _name: &'static str) -> Self {
        self
    }
}

/// (Mutant builds only.) The backend's atomics, each with its name, and
/// every access recorded in the event log (`trace.rs`) after it is made,
/// with the value it read or wrote. Recording is plain memory of the OS
/// thread, no operation of the model checker's, so a model explores the same
/// interleavings with the log on or off.
#[cfg(chase_lev_mutants)]
mod logged {
    use super::{backend, Named, Ordering};
    use crate::trace::{self, Shower};

    /// An atomic of the backend, and its name. All zeroes is a valid one
    /// (an unnamed atomic holding 0), as the std build's zeroed injector
    /// blocks need.
    pub(crate) struct Logged<A> {
        atomic: A,
        name: Option<&'static str>,
        tags: usize,
        /// Which label of the log this atomic has (see `trace::Label`):
        /// kept in the atomic itself, so that a new atomic at the address
        /// of a freed one gets a label of its own.
        label: trace::Label,
    }

    pub(crate) type AtomicI64 = Logged<backend::AtomicI64>;
    pub(crate) type AtomicU64 = Logged<backend::AtomicU64>;
    pub(crate) type AtomicUsize = Logged<backend::AtomicUsize>;
    pub(crate) type AtomicPtr<T> = Logged<backend::AtomicPtr<T>>;

    impl<A> Named for Logged<A> {
        fn named(mut self, name: &'static str) -> Self {
            self.name = Some(name);
            self
        }

        fn named_with_tags(mut self, name: &'static str, tags: usize) -> Self {
            self.name = Some(name);
            self.tags = tags;
            self
        }
    }

    impl<A> Logged<A> {
        #[inline(always)]
        fn record(&self, event: impl FnOnce(&str, &mut Shower<'_>) -> String) {
            trace::access(self.name, &self.label, event);
        }
    }

    /// How a value appears in the log.
    pub(crate) trait Shown: Copy {
        fn show(self, tags: usize, shower: &mut Shower<'_>) -> String;
    }

    macro_rules! shown_as_number {
        ($($value:ty),*) => {$(
            impl Shown for $value {
                fn show(self, _tags: usize, _shower: &mut Shower<'_>) -> String {
                    self.to_string()
                }
            }
        )*};
    }

    shown_as_number!(bool, i64, u64, usize);

    impl<T> Shown for *mut T {
        fn show(self, tags: usize, shower: &mut Shower<'_>) -> String {
            shower.pointer(self as usize, tags)
        }
    }

    /// `new`, `load`, `store`, `compare_exchange(_weak)` and `swap` of one
    /// backend atomic holding `$value`, recorded. Each forwards the caller's
    /// ordering unchanged.
    macro_rules! logged {
        ([$($generic:tt)*] $atomic:ty, $value:ty) => {
            // (Not every atomic uses every operation.)
            #[allow(dead_code)]
            impl<$($generic)*> Logged<$atomic> {
                #[cfg(not(any(chase_lev_loom, chase_lev_shuttle)))]
                pub(crate) const fn new(value: $value) -> Self {
                    Logged { atomic: <$atomic>::new(value), name: None, tags: 0, label: trace::Label::new() }
                }

                #[cfg(any(chase_lev_loom, chase_lev_shuttle))]
                pub(crate) fn new(value: $value) -> Self {
                    Logged { atomic: <$atomic>::new(value), name: None, tags: 0, label: trace::Label::new() }
                }

                #[inline(always)]
                pub(crate) fn load(&self, ordering: Ordering) -> $value {
                    // Ordering: the caller's, forwarded unchanged to the
                    // backend (proofs-notes/model.md#which-model).
                    let value = self.atomic.load(ordering);
                    self.record(|name, shower| {
                        format!("load {name} = {} ({ordering:?})", value.show(self.tags, shower))
                    });
                    value
                }

                #[inline(always)]
                pub(crate) fn store(&self, value: $value, ordering: Ordering) {
                    // Ordering: the caller's, forwarded unchanged to the
                    // backend (proofs-notes/model.md#which-model).
                    self.atomic.store(value, ordering);
                    self.record(|name, shower| {
                        format!("store {name} := {} ({ordering:?})", value.show(self.tags, shower))
                    });
                }

                #[inline(always)]
                pub(crate) fn swap(&self, value: $value, ordering: Ordering) -> $value {
                    // Ordering: the caller's, forwarded unchanged to the
                    // backend (proofs-notes/model.md#which-model).
                    let old = self.atomic.swap(value, ordering);
                    self.record(|name, shower| {
                        let old = old.show(self.tags, shower);
                        format!("swap {name} {old} -> {} ({ordering:?})", value.show(self.tags, shower))
                    });
                    old
                }

                #[inline(always)]
                pub(crate) fn compare_exchange(
                    &self,
                    current: $value,
                    new: $value,
                    success: Ordering,
                    failure: Ordering,
                ) -> Result<$value, $value> {
                    // Ordering: the caller's, forwarded unchanged to the
                    // backend (proofs-notes/model.md#which-model).
                    let result = self.atomic.compare_exchange(current, new, success, failure);
                    self.record_cas(current, new, result, success, failure);
                    result
                }

                #[inline(always)]
                pub(crate) fn compare_exchange_weak(
                    &self,
                    current: $value,
                    new: $value,
                    success: Ordering,
                    failure: Ordering,
                ) -> Result<$value, $value> {
                    // Ordering: the caller's, forwarded unchanged to the
                    // backend (proofs-notes/model.md#which-model).
                    let result = self.atomic.compare_exchange_weak(current, new, success, failure);
                    self.record_cas(current, new, result, success, failure);
                    result
                }

                fn record_cas(
                    &self,
                    current: $value,
                    new: $value,
                    result: Result<$value, $value>,
                    success: Ordering,
                    failure: Ordering,
                ) {
                    self.record(|name, shower| {
                        let current = current.show(self.tags, shower);
                        let new = new.show(self.tags, shower);
                        match result {
                            Ok(_) => format!("CAS {name} {current} -> {new} won ({success:?})"),
                            Err(now) => format!(
                                "CAS {name} {current} -> {new} lost, {name} = {} ({failure:?})",
                                now.show(self.tags, shower)
                            ),
                        }
                    });
                }
            }
        };
    }

    logged!([] backend::AtomicI64, i64);
    logged!([] backend::AtomicU64, u64);
    logged!([] backend::AtomicUsize, usize);
    logged!([T] backend::AtomicPtr<T>, *mut T);

    /// `fetch_add` and `fetch_or` of one backend integer atomic, recorded.
    macro_rules! logged_arithmetic {
        ($atomic:ty, $value:ty) => {
            #[allow(dead_code)]
            impl Logged<$atomic> {
                #[inline(always)]
                pub(crate) fn fetch_add(&self, value: $value, ordering: Ordering) -> $value {
                    // Ordering: the caller's, forwarded unchanged to the
                    // backend (proofs-notes/model.md#which-model).
                    let old = self.atomic.fetch_add(value, ordering);
                    self.record(|name, _| {
                        format!(
                            "fetch_add {name} {old} -> {} ({ordering:?})",
                            old.wrapping_add(value)
                        )
                    });
                    old
                }

                #[inline(always)]
                pub(crate) fn fetch_and(&self, value: $value, ordering: Ordering) -> $value {
                    // Ordering: the caller's, forwarded unchanged to the
                    // backend (proofs-notes/model.md#which-model).
                    let old = self.atomic.fetch_and(value, ordering);
                    self.record(|name, _| {
                        format!("fetch_and {name} {old} -> {} ({ordering:?})", old & value)
                    });
                    old
                }

                #[inline(always)]
                pub(crate) fn fetch_or(&self, value: $value, ordering: Ordering) -> $value {
                    // Ordering: the caller's, forwarded unchanged to the
                    // backend (proofs-notes/model.md#which-model).
                    let old = self.atomic.fetch_or(value, ordering);
                    self.record(|name, _| {
                        format!("fetch_or {name} {old} -> {} ({ordering:?})", old | value)
                    });
                    old
                }
            }
        };
    }

    logged_arithmetic!(backend::AtomicU64, u64);
    logged_arithmetic!(backend::AtomicUsize, usize);

    /// The backend's fence, recorded.
    #[inline(always)]
    pub(crate) fn fence(ordering: Ordering) {
        // Ordering: the caller's, forwarded unchanged to the backend
        // (proofs-notes/model.md#which-model).
        backend::fence(ordering);
        trace::fence(ordering);
    }
}

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

    /// A free of the buffer, as loom sees it: a write of the slot.
    #[cfg(chase_lev_loom)]
    pub(crate) fn mark_freed(&self) {
        self.0.with_mut(|_| ());
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
/// (the injector's bounded patience before abandoning a slot, and its wait
/// for a free ticket, `injector/`): a spin hint for the first rounds, then
/// a yield. Under loom and shuttle every round yields, so that the model
/// checker schedules the other threads.
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
//
// The hazard-slot registry (`reclamation.rs`) needs one static and one
// thread-local; each backend declares them its own way. The algorithm is the
// same in every build.

use crate::buffer::Buffer;
use crate::reclamation::{Record, Registry, ThreadRecord};

#[cfg(not(any(chase_lev_loom, chase_lev_shuttle)))]
mod registry {
    use super::{Registry, ThreadLocal};

    pub(super) static REGISTRY: Registry = Registry::new();

    std::thread_local! {
        // `const`: made without allocating, so that a steal from inside the
        // global allocator finds it (and the access checks no lazy state).
        pub(super) static RECORD: ThreadLocal = const { ThreadLocal::new() };
    }

    #[inline(always)]
    pub(super) fn get() -> &'static Registry {
        &REGISTRY
    }
}

#[cfg(chase_lev_loom)]
mod registry {
    use super::{Registry, ThreadLocal};

    loom::lazy_static! {
        pub(super) static ref REGISTRY: Registry = Registry::new();
    }

    loom::thread_local! {
        pub(super) static RECORD: ThreadLocal = ThreadLocal::new();
    }

    pub(super) fn get() -> &'static Registry {
        &REGISTRY
    }
}

#[cfg(chase_lev_shuttle)]
mod registry {
    use super::{Registry, ThreadLocal};

    shuttle::lazy_static! {
        pub(super) static ref REGISTRY: Registry = Registry::new();
    }

    shuttle::thread_local! {
        pub(super) static RECORD: ThreadLocal = ThreadLocal::new();
    }

    pub(super) fn get() -> &'static Registry {
        &REGISTRY
    }
}

/// What the registry keeps per thread: the thread's hazard record and, in
/// the internal builds, a hook run when the thread-local is destroyed,
/// after the record is given back (fields drop in this order).
pub(crate) struct ThreadLocal {
    record: ThreadRecord,
    #[cfg(chase_lev_hooks)]
    after_record_released: hooks::AfterRecordReleased,
}

impl ThreadLocal {
    const fn new() -> ThreadLocal {
        ThreadLocal {
            record: ThreadRecord::none(),
            #[cfg(chase_lev_hooks)]
            after_record_released: hooks::AfterRecordReleased::none(),
        }
    }
}

/// Every thread's hazard record.
#[inline(always)]
pub(crate) fn registry() -> &'static Registry {
    registry::get()
}

/// This thread's hazard record (claimed at its first steal), or `None`
/// during the thread's own destruction, once its thread-local is gone.
#[inline(always)]
pub(crate) fn this_threads_record() -> Option<*const Record> {
    registry::RECORD.try_with(|local| local.record.get()).ok()
}

/// Whether a model checker is unwinding from a failed execution: loom then
/// drops the execution's thread-locals and statics outside the model, where
/// its atomics cannot be touched. The registry's destructors skip their
/// bookkeeping then (the execution is over anyway).
#[inline(always)]
pub(crate) fn model_is_unwinding() -> bool {
    cfg!(chase_lev_loom) && std::thread::panicking()
}

/// Whether the registry's drop must leave its records alone: under loom
/// when a failed execution unwinds (above), and always under shuttle, which
/// drops a test's statics after its tasks have finished, where its atomics
/// cannot be touched. The records of a model execution then leak (a few per
/// execution); std's registry is a static and is never dropped.
#[inline(always)]
pub(crate) fn registry_drop_leaks() -> bool {
    cfg!(chase_lev_shuttle) || model_is_unwinding()
}

/// Allocates a buffer. The internal builds (`--cfg chase_lev_hooks`) first
/// run the hook a scenario set for this thread's next buffer allocation
/// ([`hooks`]), as a global allocator that calls back into the deque would
/// run there.
#[inline(always)]
pub(crate) fn allocate_buffer<T>(buffer: Buffer<T>) -> *mut Buffer<T> {
    #[cfg(chase_lev_hooks)]
    hooks::before_buffer_allocation();
    Box::into_raw(Box::new(buffer))
}

/// (Internal builds only.) What a scenario can make the deque do at the
/// points where user code runs inside it.
#[cfg(chase_lev_hooks)]
pub mod hooks {
    use std::cell::RefCell;

    type Hook = Box<dyn FnOnce()>;

    #[cfg(chase_lev_loom)]
    loom::thread_local! {
        static BEFORE_ALLOCATION: RefCell<Option<Hook>> = RefCell::new(None);
    }
    #[cfg(chase_lev_shuttle)]
    shuttle::thread_local! {
        static BEFORE_ALLOCATION: RefCell<Option<Hook>> = RefCell::new(None);
    }
    #[cfg(not(any(chase_lev_loom, chase_lev_shuttle)))]
    std::thread_local! {
        static BEFORE_ALLOCATION: RefCell<Option<Hook>> = const { RefCell::new(None) };
    }

    /// Runs `hook` on this thread, once, when it next allocates a deque
    /// buffer: where a global allocator would run, for example while a batch
    /// steal grows its destination.
    pub fn before_next_buffer_allocation(hook: impl FnOnce() + 'static) {
        BEFORE_ALLOCATION.with(|slot| *slot.borrow_mut() = Some(Box::new(hook)));
    }

    pub(crate) fn before_buffer_allocation() {
        if let Some(hook) = BEFORE_ALLOCATION.with(|slot| slot.borrow_mut().take()) {
            hook();
        }
    }

    /// Runs `hook` when this thread's thread-locals are destroyed, right
    /// after its hazard record is given back: where a thread-local
    /// destructor of the user's that steals would run once the record is
    /// gone. (A thread-local of its own would not do: loom destroys a
    /// thread's thread-locals in an order that changes between executions.)
    pub fn after_this_threads_record_is_released(hook: impl FnOnce() + 'static) {
        super::registry::RECORD.with(|local| {
            *local.after_record_released.0.borrow_mut() = Some(Box::new(hook));
        });
    }

    /// The hook of [`after_this_threads_record_is_released`].
    pub(crate) struct AfterRecordReleased(RefCell<Option<Hook>>);

    impl AfterRecordReleased {
        pub(crate) const fn none() -> AfterRecordReleased {
            AfterRecordReleased(RefCell::new(None))
        }
    }

    impl Drop for AfterRecordReleased {
        fn drop(&mut self) {
            if let Some(hook) = self.0.get_mut().take() {
                hook();
            }
        }
    }
}

/// Frees a retired buffer.
///
/// # Safety
/// `buffer` came from `Box::into_raw` and no thread can still read it.
#[cfg(not(any(chase_lev_loom, chase_lev_shuttle)))]
pub(crate) unsafe fn free_buffer<T>(buffer: *mut Buffer<T>) {
    #[cfg(chase_lev_mutants)]
    crate::trace::freed(buffer as usize);
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
pub(crate) unsafe fn free_buffer<T>(buffer: *mut Buffer<T>) {
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
pub(crate) unsafe fn free_buffer<T>(buffer: *mut Buffer<T>) {
    #[cfg(chase_lev_mutants)]
    crate::trace::freed(buffer as usize);
    let _ = buffer;
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
