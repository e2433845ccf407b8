//! Freeing retired buffers: hazard slots published by the steal's own
//! SeqCst fence (proofs-notes/reclamation.md#hazard-slots).
//!
//! A thief that is about to read a buffer writes the buffer's address into a
//! hazard slot, *before* the fence that Lê et al.'s steal issues anyway, and
//! loads the buffer pointer again after it. The owner, after publishing a new
//! buffer, issues a SeqCst fence of its own and reads every hazard slot in
//! use. This is store buffering with fences on both sides
//! (proofs-notes/model.md#store-buffering): either the owner sees the hazard
//! and keeps the old buffer, or the thief's second load sees the new pointer
//! and it never touches the old buffer. So a steal pays no barrier for
//! reclamation beyond the paper's.
//!
//! Slots live in records, and records in chunks, each chunk with a bitmask
//! of the records in use, one word per 64 records, the words side by side
//! (`Registry`). The first chunk has 64 records and each next one twice as
//! many as the one before, up to [`MAX_CHUNK_WORDS`] words, so a process
//! that once had `n` threads holding records at once has about `log2(n /
//! 64)` chunks. A thread claims a record at its first steal and gives it
//! back when it exits; the next thread that needs one takes the lowest free
//! record, so records of exited threads are reused. The owner's scan reads
//! the mask words in order, a few cache lines per chunk, and the slots of
//! the records in use only (proofs-notes/reclamation.md#records).
//!
//! Protection is reentrant: a steal that starts while another steal of the
//! same thread holds its record (from a global allocator, a panic hook, a
//! thread-local destructor) borrows a free record for itself, so every steal
//! keeps its own announcement until it ends
//! (proofs-notes/reclamation.md#nested-steals). The common, unnested steal
//! reads and writes one flag of its own record for this, no atomic.
//!
//! Memory: record chunks are never returned to the allocator (scans read
//! them without any reclamation of their own); they hold fewer than three
//! times as many records (of 128 bytes, a pair of cache lines each) as the
//! most threads that held one at once, and at least 64.
//! Everything here is built on the sync shim's atomics (`atomic.rs`), so
//! loom, shuttle and miri check this code as it ships.

use core::cell::Cell;
use core::ptr;

use crate::atomic::{fence, AtomicPtr, Named};
use crate::buffer::Buffer;
#[cfg(chase_lev_mutants)]
use crate::sites::mutant;
use crate::sites::site;
use crate::sync::Ordering::{self, Acquire, Relaxed, Release, SeqCst};
use crate::sync::{CachePadded, StdArc};

/// A word of a chunk's in-use mask, one bit a record.
#[cfg(not(chase_lev_genmc))]
type MaskWord = crate::atomic::AtomicU64;
/// The value of a [`MaskWord`].
#[cfg(not(chase_lev_genmc))]
type MaskBits = u64;

/// (GenMC build.) A mask word of 8 bits, so that the first chunk has 8
/// records: every record a chunk holds is memory each execution writes, and
/// under this GenMC a chunk of 64 costs seconds an execution
/// (proofs-notes/limits.md#miris-genmc-mode). The same code claims, scans
/// and releases the bits; only the word is narrower.
#[cfg(chase_lev_genmc)]
use crate::sync::AtomicU8 as MaskWord;
/// The value of a [`MaskWord`].
#[cfg(chase_lev_genmc)]
type MaskBits = u8;

/// Records per word of a chunk's in-use mask: 64 (8 in the GenMC build).
const RECORDS_PER_WORD: usize = MaskBits::BITS as usize;

/// The most mask words of one chunk (2,048 records, 256 KiB): chunks double
/// in size up to it, so that the list stays short, and stay at it, so that
/// one more thread never allocates more than this.
pub(crate) const MAX_CHUNK_WORDS: usize = 32;

/// One hazard slot, owned by one thread (or one borrowing steal) at a time.
pub(crate) struct Record {
    /// The buffer the owner of this record may be reading, or null.
    hazard: AtomicPtr<()>,
    /// Whether a steal of the record's owner is protecting a buffer through
    /// it now. Read and written only by the thread that holds the record.
    protecting: Cell<bool>,
    /// This record's place in its chunk.
    index: usize,
}

// SAFETY: `hazard` is an atomic; `protecting` is touched only by the thread
// that holds the record (its bit set in the chunk's `in_use` by that
// thread's claim), and a record passes from one thread to the next through
// the release of the bit and the acquire of the claim
// (proofs-notes/reclamation.md#records), so no two threads ever race on it.
unsafe impl Sync for Record {}

/// Records and the mask of those in use.
pub(crate) struct Chunk {
    /// Bit `i` of word `w` is set while record `64 w + i` is held by a
    /// thread. The words side by side, so that a scan reads them as a few
    /// cache lines of one allocation.
    in_use: Box<[MaskWord]>,
    /// The next chunk of the registry; set once, when that chunk is
    /// published.
    next: AtomicPtr<Chunk>,
    /// 64 per mask word, each on cache lines of its own: every steal writes
    /// its slot twice, and thieves on other cores must not contend for one
    /// line.
    records: Box<[CachePadded<Record>]>,
}

/// The ordering of a claim of a free record (mutant `record-handoff-release`
/// weakens it with the release that frees one).
#[inline(always)]
fn handoff_acquire() -> Ordering {
    site!(RecordHandoffAcquire, Acquire)
}

/// The ordering of a load of a chunk pointer, paired with the Release CAS
/// that published the chunk.
#[inline(always)]
fn publish_acquire() -> Ordering {
    site!(RecordPublishAcquire, Acquire)
}

/// Every chunk ever made, oldest first.
pub(crate) struct Registry {
    first: AtomicPtr<Chunk>,
}

impl Registry {
    #[cfg(not(any(chase_lev_loom, chase_lev_shuttle)))]
    pub(crate) const fn new() -> Registry {
        Registry {
            first: AtomicPtr::new(ptr::null_mut()),
        }
    }

    #[cfg(any(chase_lev_loom, chase_lev_shuttle))]
    pub(crate) fn new() -> Registry {
        Registry {
            first: AtomicPtr::new(ptr::null_mut()).named("records"),
        }
    }

    /// Takes the lowest free record, or adds a chunk. Lock-free: a CAS on a
    /// mask with a free bit, or on the link a new chunk is published in.
    pub(crate) fn acquire(&self) -> OwnedRecord {
        let mut link = &self.first;
        let mut words = 1;
        loop {
            // Ordering: Acquire, pairs with the Release CAS that published
            // the chunk (proofs-notes/reclamation.md#records).
            let mut chunk = link.load(publish_acquire());
            if chunk.is_null() {
                chunk = publish_chunk(link, words);
            }
            // SAFETY: chunks are never freed while the registry lives.
            let current = unsafe { &*chunk };
            if let Some(index) = current.claim() {
                // SAFETY: `chunk` came from `StdArc::into_raw` and the
                // registry still holds that count.
                return unsafe { OwnedRecord::of(chunk, index) };
            }
            link = &current.next;
            words = (words * 2).min(MAX_CHUNK_WORDS);
        }
    }

    /// Moves the buffers of `buffers` that some thread's hazard slot holds
    /// to its front and returns how many there are. Each slot is read once,
    /// so a thief that moves its slot from one buffer to another during the
    /// scan keeps at most one of them, as it reads at most one
    /// (proofs-notes/reclamation.md#reuse). The caller issued a SeqCst fence
    /// after replacing every buffer in `buffers` (`Retired::retire`).
    fn keep_protected_first<B>(&self, buffers: &mut [*mut B]) -> usize {
        let mut protected = 0;
        // Ordering: Acquire, as in `acquire` (proofs-notes/reclamation.md#records).
        let mut chunk = self.first.load(publish_acquire());
        // SAFETY: chunks are never freed while the registry lives.
        while let Some(current) = unsafe { chunk.as_ref() } {
            for (word, mask) in current.in_use.iter().enumerate() {
                // Ordering: Acquire, pairs with the Release that frees a record
                // (proofs-notes/reclamation.md#records): a thread that gave its
                // record back read its buffers before a free this scan allows.
                // (The fence before the scan makes every claim made before an
                // announcement visible here.)
                let mut in_use = mask.load(site!(InUseScanAcquire, Acquire));
                while in_use != 0 {
                    #[cfg(chase_lev_mutants)]
                    if mutant!(ScanStopsAtFirstHeld) && protected > 0 {
                        return protected;
                    }
                    if protected == buffers.len() {
                        return protected; // every one is held: nothing left to look for
                    }
                    let index = word * RECORDS_PER_WORD + in_use.trailing_zeros() as usize;
                    in_use &= in_use - 1;
                    // Ordering: Acquire, pairs with the thief's Release stores of
                    // its slot, so that its reads of a buffer happen before the
                    // free (proofs-notes/reclamation.md#hazard-slots).
                    let hazard = current.records[index]
                        .hazard
                        .load(site!(HazardScanAcquire, Acquire));
                    if let Some(held) = buffers[protected..]
                        .iter()
                        .position(|&buffer| buffer.cast::<()>() == hazard)
                    {
                        <[*mut B]>::swap(buffers, protected, protected + held);
                        protected += 1;
                    }
                }
            }
            // Ordering: Acquire, as in `acquire` (proofs-notes/reclamation.md#records).
            chunk = current.next.load(publish_acquire());
        }
        protected
    }
}

/// Publishes a new chunk of `words` mask words in `link` (null when
/// loaded), with no record claimed yet; returns the chunk now in `link`,
/// ours or the one another thread published first (of the same size: the
/// size follows from the chunk's place in the list). Out of line: a chunk
/// is added when the threads holding records at once outgrow the list.
#[cold]
#[inline(never)]
fn publish_chunk(link: &AtomicPtr<Chunk>, words: usize) -> *mut Chunk {
    let new = StdArc::into_raw(StdArc::new(Chunk {
        in_use: (0..words)
            .map(|_| MaskWord::new(0).named("records.in_use"))
            .collect(),
        next: AtomicPtr::new(ptr::null_mut()).named("records.next"),
        records: (0..words * RECORDS_PER_WORD)
            .map(|index| {
                CachePadded::new(Record {
                    hazard: AtomicPtr::new(ptr::null_mut()).named("hazard"),
                    protecting: Cell::new(false),
                    index,
                })
            })
            .collect(),
    }))
    .cast_mut();
    #[cfg(chase_lev_genmc)]
    // SAFETY: made just above, not published yet.
    unsafe { &*new }.store_initial_values();
    // Ordering: Release, so that a thread that loads this pointer reads the
    // chunk's fields as initialised; failure Acquire, as the load of the
    // winner's chunk in `acquire` (proofs-notes/reclamation.md#records).
    let publish = site!(RecordPublishRelease, Release);
    // Ordering: as above (proofs-notes/reclamation.md#records).
    match link.compare_exchange(ptr::null_mut(), new, publish, publish_acquire()) {
        Ok(_) => new,
        Err(winner) => {
            // SAFETY: `new` was never published: this is its only count.
            drop(unsafe { StdArc::from_raw(new) });
            winner
        }
    }
}

impl Chunk {
    /// (GenMC build.) Gives each atomic of a chunk not yet published its
    /// atomic initial store (`sync::InitialValue`).
    #[cfg(chase_lev_genmc)]
    fn store_initial_values(&self) {
        use crate::sync::InitialValue;
        self.in_use
            .iter()
            .for_each(InitialValue::store_initial_value);
        self.next.store_initial_value();
        for record in self.records.iter() {
            record.hazard.store_initial_value();
        }
    }

    /// Claims the lowest free record of this chunk, if any.
    fn claim(&self) -> Option<usize> {
        self.in_use.iter().enumerate().find_map(|(word, mask)| {
            let bit = claim_a_bit(mask)?;
            Some(word * RECORDS_PER_WORD + bit)
        })
    }
}

/// Sets the lowest clear bit of `mask` and returns its place, unless every
/// bit is set.
fn claim_a_bit(mask: &MaskWord) -> Option<usize> {
    // Ordering: Relaxed: only a guess of the free bits; the CAS decides
    // (proofs-notes/reclamation.md#records).
    let mut in_use = mask.load(Relaxed);
    loop {
        let free = !in_use;
        if free == 0 {
            return None;
        }
        let bit = free & free.wrapping_neg();
        // Ordering: Acquire, so that this thread's later stores of the
        // record come after the previous holder's last ones; failure
        // Relaxed, nothing is read (proofs-notes/reclamation.md#records).
        match mask.compare_exchange(in_use, in_use | bit, handoff_acquire(), Relaxed) {
            Ok(_) => return Some(bit.trailing_zeros() as usize),
            Err(now) => in_use = now,
        }
    }
}

impl Record {
    /// Marks this record as protecting for a steal of its holder; `false`
    /// if an enclosing steal of the same thread protects through it already
    /// (the new steal then borrows a record of its own).
    #[inline(always)]
    fn start_protecting(&self) -> bool {
        #[cfg(chase_lev_mutants)]
        if mutant!(HazardNotReentrant) {
            self.protecting.set(true);
            return true;
        }
        !self.protecting.replace(true)
    }

    /// Announces that this thread may read `buffer`. The caller then issues
    /// the steal's SeqCst fence and loads the buffer pointer again.
    #[inline(always)]
    fn announce(&self, buffer: *mut ()) {
        // Ordering: Release, so that an owner whose scan reads this value
        // also sees this thread's earlier reads of buffers as done; the
        // steal's SeqCst fence after it orders it before the thief's second
        // load of the pointer (proofs-notes/reclamation.md#hazard-slots).
        self.hazard
            .store(buffer, site!(HazardProtectRelease, Release));
    }

    /// This thread no longer reads any buffer through this record.
    #[inline(always)]
    fn clear(&self) {
        // Ordering: Release, so that the reads of the buffer happen before
        // the owner's free once its scan reads null
        // (proofs-notes/reclamation.md#hazard-slots).
        self.hazard
            .store(ptr::null_mut(), site!(HazardClearRelease, Release));
        self.protecting.set(false);
    }
}

impl Drop for Registry {
    /// Only loom's per-execution registries are ever dropped here (std's is
    /// a static, shuttle's leak: `sync::statics_drop_outside_the_model`): then no thread
    /// is left, so every chunk goes.
    fn drop(&mut self) {
        if crate::sync::statics_drop_outside_the_model() {
            return; // a model execution's chunks (see the shim)
        }
        // Ordering: Relaxed: `&mut self`, no other thread is left
        // (proofs-notes/reclamation.md#records).
        let mut next = self.first.load(Relaxed);
        while !next.is_null() {
            // SAFETY: each chunk was made by `StdArc::into_raw` and is
            // released here once; holders keep their own `StdArc` counts.
            let chunk = unsafe { StdArc::from_raw(next) };
            // Ordering: Relaxed, as above (proofs-notes/reclamation.md#records).
            next = chunk.next.load(Relaxed);
        }
    }
}

/// A record this thread holds; gives it back when dropped (at thread exit,
/// or when a borrowing steal ends). It keeps its chunk alive by itself: a
/// model checker's registry can be dropped before the main thread's
/// thread-locals.
pub(crate) struct OwnedRecord {
    chunk: StdArc<Chunk>,
    index: usize,
}

impl OwnedRecord {
    /// # Safety
    /// `chunk` came from `StdArc::into_raw`, that count is still held, and
    /// this thread has just claimed record `index` of it.
    unsafe fn of(chunk: *const Chunk, index: usize) -> OwnedRecord {
        // SAFETY: by the caller.
        unsafe { StdArc::increment_strong_count(chunk) };
        OwnedRecord {
            // SAFETY: the count taken just above.
            chunk: unsafe { StdArc::from_raw(chunk) },
            index,
        }
    }

    #[inline(always)]
    pub(crate) fn record(&self) -> *const Record {
        &*self.chunk.records[self.index]
    }

    /// The record, with this claim on it (its count and its bit) kept until
    /// [`OwnedRecord::from_raw`] takes it back.
    fn into_raw(self) -> (*const Chunk, *const Record) {
        let record = self.record();
        let this = core::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again, so the `Arc` is
        // moved out exactly once.
        let chunk = StdArc::into_raw(unsafe { ptr::read(&this.chunk) });
        (chunk, record)
    }

    /// # Safety
    /// `chunk` and `record` came from one [`OwnedRecord::into_raw`], once.
    unsafe fn from_raw(chunk: *const Chunk, record: *const Record) -> OwnedRecord {
        OwnedRecord {
            // SAFETY: by the caller, `into_raw` kept this count.
            chunk: unsafe { StdArc::from_raw(chunk) },
            // SAFETY: by the caller, the record is alive in that chunk.
            index: unsafe { &*record }.index,
        }
    }
}

impl Drop for OwnedRecord {
    fn drop(&mut self) {
        if crate::sync::model_is_unwinding() {
            return;
        }
        let record = &self.chunk.records[self.index];
        // Ordering: Release, as in `Record::clear`
        // (proofs-notes/reclamation.md#records).
        record.hazard.store(ptr::null_mut(), Release);
        record.protecting.set(false);
        // Ordering: Release, pairs with the Acquire of the next holder's
        // claim and of the owners' scans (proofs-notes/reclamation.md#records).
        let release = site!(RecordHandoffRelease, Release);
        let (word, bit) = (self.index / RECORDS_PER_WORD, self.index % RECORDS_PER_WORD);
        // Ordering: as above (proofs-notes/reclamation.md#records).
        self.chunk.in_use[word].fetch_and(!(1 << bit), release);
    }
}

/// A thread's own record, claimed at its first steal and given back when
/// the thread exits: the thread-local of the sync shim. Plain cells, so that
/// it can be made without allocating (a `const` thread-local).
pub(crate) struct ThreadRecord {
    chunk: Cell<*const Chunk>,
    record: Cell<*const Record>,
}

impl ThreadRecord {
    /// A thread's record before its first steal.
    pub(crate) const fn none() -> ThreadRecord {
        ThreadRecord {
            chunk: Cell::new(ptr::null()),
            record: Cell::new(ptr::null()),
        }
    }

    /// This thread's record, claimed now if this is its first steal.
    #[inline(always)]
    pub(crate) fn get(&self) -> *const Record {
        let record = self.record.get();
        if !record.is_null() {
            return record;
        }
        self.claim()
    }

    #[cold]
    #[inline(never)]
    fn claim(&self) -> *const Record {
        let owned = registry().acquire();
        if !self.record.get().is_null() {
            // A steal nested in the claim (the allocator's, while it made a
            // chunk) claimed this thread's record first: keep that one.
            drop(owned);
            return self.record.get();
        }
        let (chunk, record) = owned.into_raw();
        self.chunk.set(chunk);
        self.record.set(record);
        record
    }
}

impl Drop for ThreadRecord {
    fn drop(&mut self) {
        let chunk = self.chunk.get();
        if !chunk.is_null() {
            // SAFETY: both came from one `into_raw` in `claim`, taken back
            // once, here.
            drop(unsafe { OwnedRecord::from_raw(chunk, self.record.get()) });
        }
    }
}

// ------------------------------------ the registry and each thread's record --

crate::sync::process_static! {
    /// Every thread's hazard record: one registry per process.
    pub(crate) fn registry() -> &'static Registry = Registry::new();
}

crate::sync::thread_local_static! {
    static RECORD: ThreadLocal = const ThreadLocal::new();
}

/// What a thread keeps: its hazard record and, in the internal builds, a
/// hook run when the thread-local is destroyed, after the record is given
/// back (fields drop in this order).
struct ThreadLocal {
    record: ThreadRecord,
    #[cfg(chase_lev_hooks)]
    after_record_released: AfterRecordReleased,
}

impl ThreadLocal {
    const fn new() -> ThreadLocal {
        ThreadLocal {
            record: ThreadRecord::none(),
            #[cfg(chase_lev_hooks)]
            after_record_released: AfterRecordReleased(core::cell::RefCell::new(None)),
        }
    }
}

/// (GenMC build only.) Gives the registry's atomic its initial store
/// (`sync::InitialValue`): the scenario calls it first, before it starts a
/// thread.
#[cfg(chase_lev_genmc)]
pub fn store_the_registrys_initial_value() {
    use crate::sync::InitialValue;
    registry().first.store_initial_value();
}

/// (GenMC build only.) What the destructor of this thread's thread-local
/// would do at the thread's end, which this GenMC cannot run: gives the
/// thread's hazard record back (the hook of the internal builds runs not).
/// The scenario calls it last on each thread it starts; the thread must
/// not use the deque afterwards.
#[cfg(chase_lev_genmc)]
pub fn end_of_thread() {
    RECORD.with(|local| {
        let record = ThreadRecord {
            chunk: Cell::new(local.record.chunk.replace(ptr::null())),
            record: Cell::new(local.record.record.replace(ptr::null())),
        };
        drop(record); // `Drop for ThreadRecord` gives it back
    });
}

/// This thread's hazard record (claimed at its first steal), or `None`
/// during the thread's own destruction, once its thread-local is gone.
#[inline(always)]
fn this_threads_record() -> Option<*const Record> {
    RECORD.try_with(|local| local.record.get()).ok()
}

/// (Internal builds only.) Runs `hook` when this thread's thread-locals are
/// destroyed, right after its hazard record is given back: where a
/// thread-local destructor of the user's that steals would run once the
/// record is gone. (A thread-local of its own would not do: loom destroys a
/// thread's thread-locals in an order that changes between executions.)
#[cfg(chase_lev_hooks)]
pub fn after_this_threads_record_is_released(hook: impl FnOnce() + 'static) {
    RECORD.with(|local| *local.after_record_released.0.borrow_mut() = Some(Box::new(hook)));
}

/// The hook of [`after_this_threads_record_is_released`].
#[cfg(chase_lev_hooks)]
struct AfterRecordReleased(core::cell::RefCell<Option<Box<dyn FnOnce()>>>);

#[cfg(chase_lev_hooks)]
impl Drop for AfterRecordReleased {
    fn drop(&mut self) {
        if let Some(hook) = self.0.get_mut().take() {
            hook();
        }
    }
}

/// The hazard slot of one steal: this thread's own record, or one borrowed
/// for this steal alone. Announcing a buffer in it is one store; dropping
/// it clears it (and gives a borrowed record back). The guard that steals
/// hold, which announces, fences and checks, is `hazard::Hazard`.
pub(crate) struct HazardSlot {
    record: *const Record,
    /// Null when `record` is this thread's own; else the chunk of a record
    /// borrowed for this steal alone (`OwnedRecord::into_raw`), given back
    /// when the slot drops: during a thread's destruction, when its
    /// thread-local is gone, or when this steal is nested in another of the
    /// same thread, which holds the thread's record
    /// (proofs-notes/reclamation.md#nested-steals). A pointer rather than
    /// the `OwnedRecord` itself, so that a slot is plain words a steal
    /// keeps in registers.
    borrowed: *const Chunk,
}

impl HazardSlot {
    /// A slot for one steal, `buffer` announced in it: this thread's own,
    /// unless a steal of this thread already announces through it.
    #[inline(always)]
    pub(crate) fn new(buffer: *mut ()) -> HazardSlot {
        let own = this_threads_record();
        #[cfg(chase_lev_mutants)]
        if own.is_none() && mutant!(DestructorStealUnannounced) {
            // Nothing to announce in: a record, but no announcement.
            return HazardSlot {
                record: borrow_a_record().0,
                borrowed: ptr::null(),
            };
        }
        let (record, borrowed) = match own {
            // SAFETY: the thread-local that holds the record outlives
            // everything the thread does before its own destruction.
            Some(own) if unsafe { &*own }.start_protecting() => (own, ptr::null()),
            _ => borrow_a_record(),
        };
        let slot = HazardSlot { record, borrowed };
        slot.announce(buffer);
        slot
    }

    /// Announces `buffer` in this slot (instead of the one before).
    #[inline(always)]
    pub(crate) fn announce(&self, buffer: *mut ()) {
        // SAFETY: the record is kept alive by this thread's thread-local or
        // by the borrowed claim, which the slot holds.
        unsafe { &*self.record }.announce(buffer);
    }
}

/// A record of the registry's, held for one steal: out of line, as it is
/// needed only by a steal nested in another of its thread's or run during
/// the thread's destruction.
#[cold]
#[inline(never)]
fn borrow_a_record() -> (*const Record, *const Chunk) {
    let borrowed = registry().acquire();
    // SAFETY: a record just claimed is held by no steal.
    let started = unsafe { &*borrowed.record() }.start_protecting();
    debug_assert!(started, "a record just claimed was protecting");
    let (chunk, record) = borrowed.into_raw();
    (record, chunk)
}

impl Drop for HazardSlot {
    #[inline(always)]
    fn drop(&mut self) {
        if crate::sync::model_is_unwinding() {
            // A failed model execution: nothing is freed any more (and a
            // borrowed record stays claimed, as its registry is leaked).
            return;
        }
        // SAFETY: as in `announce`.
        unsafe { &*self.record }.clear();
        if !self.borrowed.is_null() {
            // SAFETY: `borrow_a_record` kept this claim with `into_raw`, once.
            unsafe { give_back(self.borrowed, self.record) };
        }
    }
}

/// Gives back a record borrowed for one steal's slot.
///
/// # Safety
/// `chunk` and `record` came from one `OwnedRecord::into_raw`, once.
#[cold]
#[inline(never)]
unsafe fn give_back(chunk: *const Chunk, record: *const Record) {
    // SAFETY: by the caller.
    drop(unsafe { OwnedRecord::from_raw(chunk, record) });
}

/// The owner's side: buffers replaced but maybe still read by a thief, and
/// a few that no thread holds (see [`SPARES`]), kept for the next buffer change
/// of the same capacity instead of being freed
/// (proofs-notes/reclamation.md#reuse).
/// Touched only by the owner (through its unique `Worker`) and by the deque's
/// final drop.
///
/// The lists are in cells, and every method takes a list out of its cell
/// before working on it and puts it back after: the allocator and the frees
/// they call may run another owner operation of the same worker, which then
/// finds an empty list (and, if it changes buffers, leaves a list of its
/// own, which `put_back` merges). So no reference into these lists lives
/// across a call out of the crate, and a nested operation never sees or
/// frees a buffer an enclosing one is working on
/// (proofs-notes/reclamation.md#reentrant-owner-operations).
pub(crate) struct Retired<T> {
    buffers: Cell<Vec<*mut Buffer<T>>>,
    spares: Cell<Vec<*mut Buffer<T>>>,
    /// The most retired buffers one scan has found held at once.
    most_held: Cell<usize>,
}

/// How many unheld buffers of the current capacity the owner keeps for
/// reuse, at least: with the current buffer and two spares, a thief, which
/// holds at most one buffer at a time, cannot leave the owner without a
/// spare at the next lap. The owner keeps one more than the most buffers a
/// scan has found held at once, so that with several thieves a lap change
/// allocates only when more of them hold buffers at once than ever before
/// (proofs-notes/reclamation.md#reuse).
const SPARES: usize = 2;

/// Puts `list` back in `cell`, followed by whatever an operation nested in
/// the caller's calls out of the crate put there meanwhile. Merging may call
/// the allocator again (and so nest again): the loop takes what that leaves
/// too, until the cell is empty when `list` goes in.
fn put_back<B>(cell: &Cell<Vec<*mut B>>, mut list: Vec<*mut B>) {
    loop {
        let nested = cell.take();
        if nested.is_empty() {
            cell.set(list);
            // Its memory, if any, is freed with `list` in place.
            drop(nested);
            return;
        }
        list.extend_from_slice(&nested);
        drop(nested);
    }
}

impl<T> Retired<T> {
    pub(crate) const fn new() -> Retired<T> {
        Retired {
            buffers: Cell::new(Vec::new()),
            spares: Cell::new(Vec::new()),
            most_held: Cell::new(0),
        }
    }

    /// A spare of `capacity` slots, which no thread holds, if there is one:
    /// the one kept last (a buffer retired at the last move, rather than
    /// the extra one allocated with it, so that the loom scenario that
    /// reaches a reuse reuses a buffer thieves have read).
    pub(crate) fn take_spare(&self, capacity: usize) -> Option<*mut Buffer<T>> {
        let mut spares = self.spares.take();
        // SAFETY: spares are live buffers owned by this list.
        let found = spares
            .iter()
            .rposition(|&spare| unsafe { &*spare }.capacity() == capacity)
            .map(|index| spares.swap_remove(index));
        // Nothing above calls out of the crate, so the cell is still empty.
        put_back(&self.spares, spares);
        found
    }

    /// Keeps `spare`, a buffer no thread has seen, for reuse.
    pub(crate) fn add_spare(&self, spare: *mut Buffer<T>) {
        let mut spares = self.spares.take();
        spares.push(spare); // may call the allocator
        put_back(&self.spares, spares);
    }

    /// Adds `buffer`, just replaced, and frees every retired buffer that no
    /// thread holds, except a few (see [`SPARES`]) of `keep_capacity` slots (the
    /// current buffer's), which it keeps for reuse. Spares of another
    /// capacity (the deque grew or shrank) are freed.
    ///
    /// # Safety
    /// `buffer` came from `Box::into_raw`, is no longer the deque's buffer
    /// pointer (that store happened before this call), and is retired once.
    pub(crate) unsafe fn retire(&self, buffer: *mut Buffer<T>, keep_capacity: usize) {
        // Both lists are this call's until they are put back at its end.
        let mut buffers = self.buffers.take();
        let mut spares = self.spares.take();
        buffers.push(buffer);
        // Ordering: SeqCst fence, between the store of the new buffer
        // pointer and the loads of the hazard slots; paired with the
        // thief's fence between its hazard store and its second pointer
        // load (proofs-notes/reclamation.md#hazard-slots).
        site!(RetireFence, fence(SeqCst));
        let registry = registry();
        spares.retain(|&spare| {
            // SAFETY: spares are live buffers owned by this list.
            if unsafe { &*spare }.capacity() == keep_capacity {
                return true;
            }
            // SAFETY: a spare is held by no thread (it was not protected
            // when it became one, proofs-notes/reclamation.md#reuse).
            unsafe { Buffer::free(spare) };
            false
        });
        let held = registry.keep_protected_first(&mut buffers);
        let most_held = self.most_held.get().max(held);
        self.most_held.set(most_held);
        let keep = SPARES.max(most_held + 1);
        // No slot showed these after the fence, so every thief that loads
        // the pointer from now on sees a newer one, and the ones that read
        // them are done (proofs-notes/reclamation.md#hazard-slots).
        for retired in buffers.drain(held..) {
            // SAFETY: retired buffers are live and owned by this list.
            if spares.len() < keep && unsafe { &*retired }.capacity() == keep_capacity {
                // Kept for reuse (proofs-notes/reclamation.md#reuse).
                spares.push(retired);
                continue;
            }
            // SAFETY: as above, no thread holds it.
            unsafe { Buffer::free(retired) };
        }
        put_back(&self.buffers, buffers);
        put_back(&self.spares, spares);
    }

    /// How many buffers are retired but not yet freed.
    #[cfg(all(test, not(any(chase_lev_loom, chase_lev_shuttle))))]
    pub(crate) fn len(&self) -> usize {
        let buffers = self.buffers.take();
        let len = buffers.len();
        put_back(&self.buffers, buffers);
        len
    }
}

impl<T> Drop for Retired<T> {
    /// Runs when the last handle of the deque is gone: no thief is left.
    fn drop(&mut self) {
        if crate::sync::model_is_unwinding() {
            return; // a failed model execution: leak, loom reported already
        }
        let buffers = self.buffers.get_mut().drain(..);
        for retired in buffers.chain(self.spares.get_mut().drain(..)) {
            // SAFETY: no thread can read a buffer of a deque without a
            // handle of it, so none holds one now.
            unsafe { Buffer::free(retired) };
        }
    }
}

#[cfg(all(test, not(any(chase_lev_loom, chase_lev_shuttle))))]
mod tests {
    use super::*;

    /// The records of every chunk of `registry`, oldest first.
    fn chunk_sizes(registry: &Registry) -> Vec<usize> {
        let mut sizes = Vec::new();
        // Ordering: Acquire, as in `Registry::acquire` (proofs-notes/reclamation.md#records).
        let mut chunk = registry.first.load(Acquire);
        // SAFETY: the registry is alive and never frees a chunk meanwhile.
        while let Some(current) = unsafe { chunk.as_ref() } {
            sizes.push(current.records.len());
            // Ordering: Acquire, as above (proofs-notes/reclamation.md#records).
            chunk = current.next.load(Acquire);
        }
        sizes
    }

    #[test]
    fn chunks_double_in_size_up_to_the_largest() {
        let registry = Registry::new();
        let largest = MAX_CHUNK_WORDS * RECORDS_PER_WORD;
        let mut expected = vec![64];
        while *expected.last().unwrap() < largest {
            expected.push(expected.last().unwrap() * 2);
        }
        expected.push(largest);
        let held: Vec<OwnedRecord> = (0..expected.iter().sum::<usize>())
            .map(|_| registry.acquire())
            .collect();
        assert_eq!(chunk_sizes(&registry), expected);
        drop(held);
    }

    #[test]
    fn a_record_given_back_is_the_next_one_claimed_in_any_word() {
        let registry = Registry::new();
        let mut held: Vec<OwnedRecord> = (0..64 + 128).map(|_| registry.acquire()).collect();
        // Record 64 + 70 of the second chunk: in its second mask word.
        let given_back = held.remove(64 + 70);
        let record = given_back.record();
        drop(given_back);
        let again = registry.acquire();
        assert_eq!(again.record(), record);
        assert_eq!(chunk_sizes(&registry), [64, 128]);
    }

    #[test]
    fn a_scan_finds_a_hazard_in_any_word_of_any_chunk() {
        let registry = Registry::new();
        let held: Vec<OwnedRecord> = (0..64 + 128 + 256).map(|_| registry.acquire()).collect();
        let mut storage = [0u8; 4];
        let mut buffers: Vec<*mut u8> = storage.iter_mut().map(|byte| byte as *mut u8).collect();
        let third = buffers[2];
        // The last record of the third chunk (its fourth word) holds buffer 3.
        let holder = held.last().expect("records");
        // SAFETY: the record is held by `holder`, alive until the end.
        unsafe { &*holder.record() }.announce(buffers[2].cast());
        assert_eq!(registry.keep_protected_first(&mut buffers), 1);
        assert_eq!(buffers[0], third, "the held buffer comes first");
        drop(held);
    }
}
