//! Freeing retired buffers: one hazard slot per thread, published by the
//! steal's own SeqCst fence (proofs-notes/reclamation.md#hazard-slots).
//!
//! A thief that is about to read a buffer writes the buffer's address into
//! its thread's hazard slot, *before* the fence that Lê et al.'s steal issues
//! anyway, and loads the buffer pointer again after it. The owner, after
//! publishing a new buffer, issues a SeqCst fence of its own and reads every
//! hazard slot. This is store buffering with fences on both sides
//! (proofs-notes/model.md#store-buffering): either the owner sees the hazard
//! and keeps the old buffer, or the thief's second load sees the new pointer
//! and it never touches the old buffer. So a steal pays no barrier for
//! reclamation beyond the paper's, and a buffer is kept only while a thread
//! holds it: at most one buffer per thread, for all deques together.
//!
//! Slots live in records, one per thread that ever stole, in a lock-free list
//! that only grows (`Registry`); a thread that exits hands its record to the
//! next thread that needs one. Everything here is built on the sync shim's
//! atomics, so loom, shuttle and miri check this code as it ships.

use core::ptr;
use std::sync::Arc as StdArc;

use crate::buffer::Buffer;
use crate::policy::{choose, fence_if, Policy};
use crate::sync::{
    AtomicBool, AtomicPtr, Named,
    Ordering::{Acquire, Relaxed, Release, SeqCst},
};

/// One thread's hazard slot.
pub(crate) struct Record {
    /// The buffer this thread may be reading, or null.
    hazard: AtomicPtr<()>,
    /// Whether a live thread (or a steal from a thread-local destructor)
    /// owns this record.
    in_use: AtomicBool,
    /// The next record of the registry's list; set before the record is
    /// published, never changed after.
    next: AtomicPtr<Record>,
}

/// The ordering of the CAS that takes a free record (mutant
/// `record-handoff-release` weakens it with the release that frees one).
#[inline(always)]
fn handoff_acquire() -> crate::sync::Ordering {
    choose!(
        Policy::of_registry(),
        RecordHandoffRelease,
        Acquire,
        Relaxed
    )
}

/// Every record ever made, newest first.
pub(crate) struct Registry {
    head: AtomicPtr<Record>,
}

impl Registry {
    #[cfg(not(any(chase_lev_loom, chase_lev_shuttle)))]
    pub(crate) const fn new() -> Registry {
        Registry {
            head: AtomicPtr::new(ptr::null_mut()),
        }
    }

    #[cfg(any(chase_lev_loom, chase_lev_shuttle))]
    pub(crate) fn new() -> Registry {
        Registry {
            head: AtomicPtr::new(ptr::null_mut()).named("records"),
        }
    }

    /// Takes a record nobody owns, or adds a new one. Lock-free: a CAS on a
    /// free record's flag, or on the list head.
    pub(crate) fn acquire(&self) -> OwnedRecord {
        // Raw pointers throughout (from `StdArc::into_raw`), so that the
        // record taken keeps the provenance of its whole `Arc` allocation.
        let mut candidate = self.first();
        while !candidate.is_null() {
            // SAFETY: records are never freed while the registry lives.
            let record = unsafe { &*candidate };
            // Ordering: Acquire, so that this thread's later hazard stores
            // come after the previous owner's last ones in the slot's order;
            // failure Relaxed, nothing is read (proofs-notes/reclamation.md#records).
            let free = record
                .in_use
                .compare_exchange(false, true, handoff_acquire(), Relaxed)
                .is_ok();
            if free {
                // SAFETY: `candidate` came from `StdArc::into_raw` and the
                // registry still holds that count.
                return unsafe { OwnedRecord::of(candidate) };
            }
            candidate = record.next();
        }
        let new = StdArc::into_raw(StdArc::new(Record {
            hazard: AtomicPtr::new(ptr::null_mut()).named("hazard"),
            in_use: AtomicBool::new(true).named("record.in_use"),
            next: AtomicPtr::new(ptr::null_mut()).named("record.next"),
        }))
        .cast_mut();
        // Ordering: Relaxed: the CAS below publishes (proofs-notes/reclamation.md#records).
        let mut head = self.head.load(Relaxed);
        loop {
            // Ordering: Relaxed: the record is not published yet; the
            // Release CAS below publishes it (proofs-notes/reclamation.md#records).
            // SAFETY: `new` is ours until the CAS below publishes it.
            unsafe { &*new }.next.store(head, Relaxed);
            // Ordering: Release, so that a scan that reads this head reads
            // the record's fields as initialised; failure Relaxed, as the
            // load above (proofs-notes/reclamation.md#records).
            let publish = choose!(
                Policy::of_registry(),
                RecordPublishRelease,
                Release,
                Relaxed
            );
            // Ordering: as above (proofs-notes/reclamation.md#records).
            match self.head.compare_exchange_weak(head, new, publish, Relaxed) {
                Ok(_) => break,
                Err(now) => head = now,
            }
        }
        // SAFETY: `new` came from `StdArc::into_raw`, and the registry holds
        // that count.
        unsafe { OwnedRecord::of(new) }
    }

    fn first(&self) -> *const Record {
        // Ordering: Acquire, pairs with the Release CAS that published the
        // record (proofs-notes/reclamation.md#records).
        self.head.load(choose!(
            Policy::of_registry(),
            RecordPublishRelease,
            Acquire,
            Relaxed
        ))
    }

    /// Moves the buffers of `buffers` that some thread's hazard slot holds
    /// to its front and returns how many there are. Each slot is read once,
    /// so a thief that moves its slot from one buffer to another during the
    /// scan keeps at most one of them, as it reads at most one
    /// (proofs-notes/reclamation.md#reuse). The caller issued a SeqCst fence
    /// after replacing every buffer in `buffers` (`Retired::retire`).
    fn keep_protected_first<B>(&self, buffers: &mut [*mut B], policy: Policy) -> usize {
        let mut protected = 0;
        let mut record = self.first();
        // SAFETY: records are never freed while the registry lives.
        while let Some(current) = unsafe { record.as_ref() } {
            if protected == buffers.len() {
                break; // every one is held: nothing left to look for
            }
            // Ordering: Acquire, pairs with the thief's Release stores of its
            // slot, so that its reads of a buffer happen before the free
            // (proofs-notes/reclamation.md#hazard-slots).
            let hazard = current
                .hazard
                .load(choose!(policy, HazardScanAcquire, Acquire, Relaxed));
            if let Some(held) = buffers[protected..]
                .iter()
                .position(|&buffer| buffer.cast::<()>() == hazard)
            {
                <[*mut B]>::swap(buffers, protected, protected + held);
                protected += 1;
            }
            record = current.next();
        }
        protected
    }
}

impl Record {
    fn next(&self) -> *const Record {
        // Ordering: Relaxed: set before the record was published, and the
        // Acquire load of the head (or of a newer record's `next` chain)
        // made it visible (proofs-notes/reclamation.md#records).
        self.next.load(Relaxed)
    }

    /// Announces that this thread may read `buffer`. The caller then issues
    /// the steal's SeqCst fence and loads the buffer pointer again.
    #[inline(always)]
    fn protect(&self, buffer: *mut (), policy: Policy) {
        // Ordering: Release, so that an owner whose scan reads this value
        // also sees this thread's earlier reads of buffers as done; the
        // steal's SeqCst fence after it orders it before the thief's second
        // load of the pointer (proofs-notes/reclamation.md#hazard-slots).
        let ordering = choose!(policy, HazardProtectRelease, Release, Relaxed);
        // Ordering: as above (proofs-notes/reclamation.md#hazard-slots).
        self.hazard.store(buffer, ordering);
    }

    /// This thread no longer reads any buffer.
    #[inline(always)]
    fn clear(&self, policy: Policy) {
        // Ordering: Release, so that the reads of the buffer happen before
        // the owner's free once its scan reads null
        // (proofs-notes/reclamation.md#hazard-slots).
        let ordering = choose!(policy, HazardClearRelease, Release, Relaxed);
        // Ordering: as above (proofs-notes/reclamation.md#hazard-slots).
        self.hazard.store(ptr::null_mut(), ordering);
    }
}

impl Drop for Registry {
    /// Only loom's per-execution registries are ever dropped here (std's is
    /// a static, shuttle's leak: `sync::registry_drop_leaks`): then no thread
    /// is left, so every record goes.
    fn drop(&mut self) {
        if crate::sync::registry_drop_leaks() {
            return; // a model execution's records (see the shim)
        }
        // Ordering: Relaxed: `&mut self`, no other thread is left
        // (proofs-notes/reclamation.md#records).
        let mut next = self.head.load(Relaxed);
        while !next.is_null() {
            // SAFETY: each record was made by `StdArc::into_raw` and is
            // released here once; owners hold their own `StdArc` clones.
            let record = unsafe { StdArc::from_raw(next) };
            // Ordering: Relaxed, as above (proofs-notes/reclamation.md#records).
            next = record.next.load(Relaxed);
        }
    }
}

/// A record this thread owns; returns it to the registry when dropped (at
/// thread exit, or after one steal from a thread-local destructor).
/// It keeps the record alive by itself: a model checker's registry can be
/// dropped before the main thread's thread-locals.
pub(crate) struct OwnedRecord {
    record: StdArc<Record>,
}

impl OwnedRecord {
    /// # Safety
    /// `record` came from `StdArc::into_raw`, and that count is still held.
    unsafe fn of(record: *const Record) -> OwnedRecord {
        // SAFETY: by the caller.
        unsafe { StdArc::increment_strong_count(record) };
        // SAFETY: the count taken just above.
        OwnedRecord {
            record: unsafe { StdArc::from_raw(record) },
        }
    }

    #[inline(always)]
    pub(crate) fn record(&self) -> *const Record {
        StdArc::as_ptr(&self.record)
    }

    /// The record, with this claim on it (its count and its `in_use`) kept
    /// until [`OwnedRecord::from_raw`] takes it back.
    fn into_raw(self) -> *const Record {
        let this = core::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again, so the `Arc` is
        // moved out exactly once.
        StdArc::into_raw(unsafe { ptr::read(&this.record) })
    }

    /// # Safety
    /// `record` came from [`OwnedRecord::into_raw`], once.
    unsafe fn from_raw(record: *const Record) -> OwnedRecord {
        OwnedRecord {
            // SAFETY: by the caller, `into_raw` kept this count.
            record: unsafe { StdArc::from_raw(record) },
        }
    }
}

impl Drop for OwnedRecord {
    fn drop(&mut self) {
        if crate::sync::model_is_unwinding() {
            return;
        }
        // Ordering: Release, as in `Record::clear`
        // (proofs-notes/reclamation.md#records).
        self.record.hazard.store(ptr::null_mut(), Release);
        // Ordering: Release, pairs with the Acquire of the next owner's CAS
        // (proofs-notes/reclamation.md#records).
        let release = choose!(
            Policy::of_registry(),
            RecordHandoffRelease,
            Release,
            Relaxed
        );
        // Ordering: as above (proofs-notes/reclamation.md#records).
        self.record.in_use.store(false, release);
    }
}

/// The thief's side: keeps this thread's hazard slot on one buffer until
/// dropped.
pub(crate) struct Hazard {
    record: *const Record,
    /// Set only when this thread's own record was unavailable (a steal from
    /// a thread-local destructor): `record` is then borrowed for this steal
    /// (`OwnedRecord::into_raw`), and given back when the hazard drops. A
    /// flag rather than the `OwnedRecord` itself, so that a hazard is plain
    /// words a steal keeps in registers.
    borrowed: bool,
    buffer: *mut (),
    policy: Policy,
}

impl Hazard {
    /// Publishes `buffer` in this thread's slot. The caller must issue the
    /// SeqCst fence next, and then check the pointer it loads with `covers`.
    #[inline(always)]
    pub(crate) fn protect(buffer: *mut (), policy: Policy) -> Hazard {
        let (record, borrowed) = crate::sync::this_threads_record();
        // Kept by the hazard until it drops (`give_back`).
        let borrowed = borrowed.map(OwnedRecord::into_raw).is_some();
        // SAFETY: the record is kept alive by this thread's thread-local
        // (which outlives everything the thread does before its own
        // destruction) or by the borrowed claim, which the hazard holds.
        unsafe { &*record }.protect(buffer, policy);
        Hazard {
            record,
            borrowed,
            buffer,
            policy,
        }
    }

    /// This hazard's slot, for a re-announcement out of line: a copy, so
    /// that the hazard itself need not leave the steal's registers.
    #[inline(always)]
    pub(crate) fn slot(&self) -> HazardSlot {
        HazardSlot {
            record: self.record,
            policy: self.policy,
        }
    }

    /// Records that `buffer` is now announced (through [`Hazard::slot`]).
    #[inline(always)]
    pub(crate) fn announced(&mut self, buffer: *mut ()) {
        self.buffer = buffer;
    }

    /// Whether `buffer`, loaded after the fence, is the one this hazard
    /// protects (if not, the owner replaced it meanwhile).
    #[inline(always)]
    pub(crate) fn covers(&self, buffer: *mut ()) -> bool {
        self.buffer == buffer
    }
}

/// The slot of a live [`Hazard`], to announce another buffer in it.
#[derive(Clone, Copy)]
pub(crate) struct HazardSlot {
    record: *const Record,
    policy: Policy,
}

impl HazardSlot {
    /// Announces `buffer` instead (the owner replaced the announced one);
    /// the caller must issue a SeqCst fence again, and tell the hazard
    /// ([`Hazard::announced`]).
    #[inline(always)]
    pub(crate) fn announce(self, buffer: *mut ()) {
        // SAFETY: as in `Hazard::protect`: the hazard this slot came from
        // is alive, and keeps the record alive.
        unsafe { &*self.record }.protect(buffer, self.policy);
    }
}

impl Drop for Hazard {
    #[inline(always)]
    fn drop(&mut self) {
        if crate::sync::model_is_unwinding() {
            // A failed model execution: nothing is freed any more (and a
            // borrowed record stays claimed, as its registry is leaked).
            return;
        }
        // SAFETY: as in `protect`.
        unsafe { &*self.record }.clear(self.policy);
        if self.borrowed {
            // SAFETY: `protect` kept this claim with `into_raw`, once.
            unsafe { give_back(self.record) };
        }
    }
}

/// Gives back a record borrowed for one hazard: out of line, as it happens
/// at most during a thread's destruction.
///
/// # Safety
/// `record` came from `OwnedRecord::into_raw`, once.
#[cold]
#[inline(never)]
unsafe fn give_back(record: *const Record) {
    // SAFETY: by the caller.
    drop(unsafe { OwnedRecord::from_raw(record) });
}

/// The owner's side: buffers replaced but maybe still read by a thief, and
/// a few that no thread holds (see [`SPARES`]), kept for the next buffer change
/// of the same capacity instead of being freed
/// (proofs-notes/reclamation.md#reuse).
/// Touched only by the owner (through its unique `Worker`) and by the deque's
/// final drop.
pub(crate) struct Retired<T> {
    buffers: Vec<*mut Buffer<T>>,
    spares: Vec<*mut Buffer<T>>,
    /// The most retired buffers one scan has found held at once.
    most_held: usize,
}

/// How many unheld buffers of the current capacity the owner keeps for
/// reuse, at least: with the current buffer and two spares, a thief, which
/// holds at most one buffer at a time, cannot leave the owner without a
/// spare at the next lap. The owner keeps one more than the most buffers a
/// scan has found held at once, so that with several thieves a lap change
/// allocates only when more of them hold buffers at once than ever before
/// (proofs-notes/reclamation.md#reuse).
const SPARES: usize = 2;

impl<T> Retired<T> {
    pub(crate) const fn new() -> Retired<T> {
        Retired {
            buffers: Vec::new(),
            spares: Vec::new(),
            most_held: 0,
        }
    }

    /// A spare of `capacity` slots, which no thread holds, if there is one:
    /// the one kept last (a buffer retired at the last move, rather than
    /// the extra one allocated with it, so that the loom scenario that
    /// reaches a reuse reuses a buffer thieves have read).
    pub(crate) fn take_spare(&mut self, capacity: usize) -> Option<*mut Buffer<T>> {
        // SAFETY: spares are live buffers owned by this list.
        let index = self
            .spares
            .iter()
            .rposition(|&spare| unsafe { &*spare }.capacity() == capacity)?;
        Some(self.spares.swap_remove(index))
    }

    /// Keeps `spare`, a buffer no thread has seen, for reuse.
    pub(crate) fn add_spare(&mut self, spare: *mut Buffer<T>) {
        self.spares.push(spare);
    }

    /// Adds `buffer`, just replaced, and frees every retired buffer that no
    /// thread holds, except a few (see [`SPARES`]) of `keep_capacity` slots (the
    /// current buffer's), which it keeps for reuse. Spares of another
    /// capacity (the deque grew or shrank) are freed.
    ///
    /// # Safety
    /// `buffer` came from `Box::into_raw`, is no longer the deque's buffer
    /// pointer (that store happened before this call), and is retired once.
    pub(crate) unsafe fn retire(
        &mut self,
        buffer: *mut Buffer<T>,
        keep_capacity: usize,
        policy: Policy,
    ) {
        self.buffers.push(buffer);
        // Ordering: SeqCst fence, between the store of the new buffer
        // pointer and the loads of the hazard slots; paired with the
        // thief's fence between its hazard store and its second pointer
        // load (proofs-notes/reclamation.md#hazard-slots).
        fence_if(choose!(policy, RetireFence, Some(SeqCst), None));
        let registry = crate::sync::registry();
        let spares = &mut self.spares;
        spares.retain(|&spare| {
            // SAFETY: spares are live buffers owned by this list.
            if unsafe { &*spare }.capacity() == keep_capacity {
                return true;
            }
            // SAFETY: a spare is held by no thread (it was not protected
            // when it became one, proofs-notes/reclamation.md#reuse).
            unsafe { crate::sync::free_buffer(spare) };
            false
        });
        let held = registry.keep_protected_first(&mut self.buffers, policy);
        self.most_held = self.most_held.max(held);
        let keep = SPARES.max(self.most_held + 1);
        // No slot showed these after the fence, so every thief that loads
        // the pointer from now on sees a newer one, and the ones that read
        // them are done (proofs-notes/reclamation.md#hazard-slots).
        for retired in self.buffers.drain(held..) {
            // SAFETY: retired buffers are live and owned by this list.
            if spares.len() < keep && unsafe { &*retired }.capacity() == keep_capacity {
                // Kept for reuse (proofs-notes/reclamation.md#reuse).
                spares.push(retired);
                continue;
            }
            // SAFETY: as above, no thread holds it.
            unsafe { crate::sync::free_buffer(retired) };
        }
    }

    /// How many buffers are retired but not yet freed.
    #[cfg(all(test, not(any(chase_lev_loom, chase_lev_shuttle))))]
    pub(crate) fn len(&self) -> usize {
        self.buffers.len()
    }
}

impl<T> Drop for Retired<T> {
    /// Runs when the last handle of the deque is gone: no thief is left.
    fn drop(&mut self) {
        if crate::sync::model_is_unwinding() {
            return; // a failed model execution: leak, loom reported already
        }
        for retired in self.buffers.drain(..).chain(self.spares.drain(..)) {
            // SAFETY: no thread can read a buffer of a deque without a
            // handle of it, so none holds one now.
            unsafe { crate::sync::free_buffer(retired) };
        }
    }
}
