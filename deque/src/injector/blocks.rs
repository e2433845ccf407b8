//! The injector's blocks and slots: a block holds one lap of positions
//! (`BLOCK_CAP` slots and, at the last offset, the marker), a slot one task
//! and its state bits; how a position is encoded in a cursor's index, and a
//! block's address and tickets in a cursor's block word. Here too are a
//! steal's steps on the slots it claimed (`resolve`, `read`, `finish`), the
//! release of a block's three shares that frees it (`destroy`,
//! `release_share`; proofs-notes/injector.md#reclamation), and the drop of
//! the queue.

use core::mem::MaybeUninit;
#[cfg(any(chase_lev_loom, chase_lev_shuttle))]
use core::ptr;

use super::Injector;
#[cfg(any(chase_lev_loom, chase_lev_shuttle))]
use crate::atomic::Named;
use crate::atomic::{AtomicPtr, AtomicUsize};
#[cfg(chase_lev_mutants)]
use crate::sites::mutant;
use crate::sites::site;
#[cfg(chase_lev_loom)]
use crate::sync::LeakCheck;
use crate::sync::{
    wait_round,
    Ordering::{self, AcqRel, Acquire, Relaxed},
    SlotCell, UNDER_A_MODEL_CHECKER,
};

/// Positions per block. The model builds use tiny blocks, so that loom and
/// shuttle reach a block boundary in a few operations.
pub(super) const LAP: u64 = if UNDER_A_MODEL_CHECKER { 4 } else { 64 };

/// Slots per block: the last position of a lap is the marker.
pub(super) const BLOCK_CAP: usize = LAP as usize - 1;

// ------------------------------------------------ indices and block words --
//
// A cursor's index: a position shifted left by one, plus `HAS_NEXT` at the
// head; its block word: a block's address and the tickets of the threads
// helping the cursor over the block's end (proofs-notes/injector.md#tickets).

/// The index holds the position shifted by this much...
pub(super) const SHIFT: u32 = 1;
/// ...and, in the head index, this bit: the tail is in a later block, so the
/// head's block is full and a steal need not look at the tail.
pub(super) const HAS_NEXT: u64 = 1;
/// One position, as an index increment.
pub(super) const ONE: u64 = 1 << SHIFT;
/// Positions wrap around at 2^63 (indices at 2^64); see `position`.
pub(super) const POSITION_MASK: u64 = u64::MAX >> SHIFT;

/// A cursor's block word is a block's address plus, in its low bits, the
/// number of tickets taken on that block by threads helping the cursor over
/// the block's end (proofs-notes/injector.md#tickets). Blocks are aligned to
/// `TICKETS + 1` bytes so that those bits are free.
pub(super) const TICKETS: usize = 127;
/// (Model builds.) A block is allocated as a `Box`, aligned by its type.
#[cfg(any(chase_lev_loom, chase_lev_shuttle))]
const _: () = assert!(core::mem::align_of::<Block<()>>() > TICKETS);

#[inline(always)]
pub(super) fn position(index: u64) -> u64 {
    index >> SHIFT
}

#[inline(always)]
pub(super) fn offset(index: u64) -> usize {
    (position(index) % LAP) as usize
}

/// The lap of an index (wrapping at 2^63 / `LAP`).
#[inline(always)]
pub(super) fn lap(index: u64) -> u64 {
    position(index) / LAP
}

/// The lap after `lap`.
#[inline(always)]
pub(super) fn next_lap(lap: u64) -> u64 {
    lap.wrapping_add(1) & (POSITION_MASK / LAP)
}

/// Whether two indices are in the same lap (wrapping included: `LAP`
/// divides 2^63).
#[inline(always)]
pub(super) fn same_lap(a: u64, b: u64) -> bool {
    lap(a) == lap(b)
}

/// A tail index on a block's marker means the same as the first position of
/// the next lap: every slot of the block is claimed.
#[inline(always)]
pub(super) fn past_marker(index: u64) -> u64 {
    if offset(index) == BLOCK_CAP {
        index.wrapping_add(ONE)
    } else {
        index
    }
}

/// The block address of a cursor's block word.
#[inline(always)]
pub(super) fn untag<T>(word: *mut Block<T>) -> *mut Block<T> {
    word.wrapping_byte_sub(tickets(word))
}

/// The ticket count of a cursor's block word.
#[inline(always)]
pub(super) fn tickets<T>(word: *mut Block<T>) -> usize {
    // (`as usize`, not `addr()`: the crate's minimum Rust is 1.82.)
    word as usize & TICKETS
}

// ------------------------------------------------------------ slots --

/// A slot's state bits.
pub(super) const WRITE: usize = 1;
pub(super) const READ: usize = 2;
pub(super) const DESTROY: usize = 4;
/// Set by a steal that found its claimed slot not yet written and gave up on
/// it: the push that claimed the slot takes its task back and pushes it
/// again at a fresh position (proofs-notes/injector.md#abandoned-slots).
pub(super) const ABANDONED: usize = 8;

/// How many rounds a steal waits for a claimed slot to be written before it
/// abandons the slot. Bounded, so that a push descheduled between its claim
/// and its write never holds a steal up for longer than this; zero in the
/// model builds, so that loom and shuttle explore the abandoning path.
const PATIENCE: u32 = if UNDER_A_MODEL_CHECKER { 0 } else { 6 };

/// Whether a steal that has waited `round` rounds for its slot waits one more.
#[inline(always)]
#[allow(clippy::absurd_extreme_comparisons)] // `PATIENCE` is zero in the model builds
fn still_patient(round: u32) -> bool {
    round < PATIENCE
}

pub(super) struct Slot<T> {
    /// `WRITE`, `READ`, `DESTROY` and `ABANDONED`, each set at most once in
    /// the slot's life (proofs-notes/injector.md#state-bits).
    pub(super) state: AtomicUsize,
    pub(super) task: SlotCell<T>,
}

impl<T> Slot<T> {
    /// Sets `bit`, which no thread has set in this slot before, and returns
    /// the state before. An add, not an or: the bit is clear, so the two
    /// agree, and x86 returns the old value of an add from one locked
    /// instruction where an or whose old value is used is a CAS loop
    /// (proofs-notes/injector.md#state-bits). Debug and model builds check
    /// that the bit was clear.
    #[inline(always)]
    pub(super) fn set_once(&self, bit: usize, ordering: Ordering) -> usize {
        // Ordering: the caller's, named where it calls (the push's release
        // `WRITE`, the acquire-release `READ` and `DESTROY`,
        // proofs-notes/injector.md#state-bits).
        let before = self.state.fetch_add(bit, ordering);
        if (cfg!(debug_assertions) || UNDER_A_MODEL_CHECKER) && before & bit != 0 {
            set_twice(bit);
        }
        before
    }
}

/// The panic of a state bit set a second time, saying what it means.
#[cold]
#[inline(never)]
fn set_twice(bit: usize) -> ! {
    let meaning = match bit {
        WRITE => "two pushes wrote one slot",
        READ => "two threads finished one slot: its task was taken twice",
        DESTROY => "the walk towards the block's free passed one slot twice",
        _ => "a bit set with a CAS, not `set_once`",
    };
    panic!("a slot's state bit was set twice: {meaning}");
}

/// In the model builds, aligned by its type for the tickets. The std build
/// aligns it by hand instead (`new`): a `repr(align(128))` would round the
/// block's size up to 1,152 bytes (the header and 63 slots of a `u64` take
/// 1,056) and cost every task a seventh more memory, which the rows where
/// the Injector holds many tasks pay in page faults
/// (docs/benchmarks.md#layout-attributes).
#[cfg_attr(any(chase_lev_loom, chase_lev_shuttle), repr(align(128)))]
pub(super) struct Block<T> {
    /// The next block, linked by the first thread that needs it: a push or a
    /// steal holding a claim in this block, or a helper holding a ticket on
    /// it (proofs-notes/injector.md#next-block).
    pub(super) next: AtomicPtr<Block<T>>,
    /// The lap this block holds, written before the block is linked and
    /// never again; a cell, so that loom checks that every read of it happens
    /// before the block is freed.
    lap: SlotCell<u64>,
    /// Per cursor (`Side`), the tickets it handed over to this block when it
    /// moved off it, less those given back since (wrapping).
    pub(super) tickets: [AtomicUsize; 2],
    /// How many of the block's three shares (its slots, its tail ticket
    /// count, its head ticket count) are released: the third frees it
    /// (proofs-notes/injector.md#reclamation).
    released: AtomicUsize,
    pub(super) slots: [Slot<T>; BLOCK_CAP],
    /// (Loom build) Loom reports a block that is never freed.
    #[cfg(chase_lev_loom)]
    _leak_check: LeakCheck,
    /// (std build) Where the allocation this block was carved from starts.
    #[cfg(not(any(chase_lev_loom, chase_lev_shuttle)))]
    allocation: *mut u8,
}

impl<T> Block<T> {
    /// A fresh block: every slot empty, no next block, lap unset. Allocated
    /// zeroed and in place, so that a large `T` never passes through the
    /// stack, and carved out of a plain allocation `align - 1` bytes larger
    /// than the block, at its first `align`-byte boundary: the system
    /// allocator serves the blocks' alignment (128 bytes, for the tickets in
    /// a cursor's block word) through `posix_memalign`, which costs about
    /// twice a plain zeroed allocation (docs/benchmarks.md#the-rows-not-met).
    #[cfg(not(any(chase_lev_loom, chase_lev_shuttle)))]
    pub(super) fn new() -> *mut Block<T> {
        let layout = Self::allocation_layout();
        // SAFETY: the layout is not zero-sized (a block holds atomics).
        let allocation = unsafe { std::alloc::alloc_zeroed(layout) };
        if allocation.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        let align = Self::alignment();
        let offset = (allocation as usize).wrapping_neg() & (align - 1);
        // SAFETY: `offset < align`, and the allocation is `align - 1` bytes
        // longer than a block, so the block lies inside it.
        let block = unsafe { allocation.add(offset) }.cast::<Block<T>>();
        // All zeroes is a valid block: a null `next`, counts and states of 0,
        // and `MaybeUninit` cells, which may hold any bytes; only the
        // allocation's start is set.
        // SAFETY: in bounds and aligned, as above; not published yet.
        unsafe { core::ptr::addr_of_mut!((*block).allocation).write(allocation) };
        #[cfg(chase_lev_genmc)]
        // SAFETY: a valid block (all zeroes), not published yet.
        unsafe { &*block }.store_initial_values();
        block
    }

    /// (GenMC build.) Gives each atomic of a block not yet published its
    /// atomic initial store (`sync::InitialValue`): zeroed memory is no
    /// store this GenMC sees.
    #[cfg(chase_lev_genmc)]
    fn store_initial_values(&self) {
        use crate::sync::InitialValue;
        self.next.store_initial_value();
        self.tickets
            .iter()
            .for_each(InitialValue::store_initial_value);
        self.released.store_initial_value();
        for slot in &self.slots {
            slot.state.store_initial_value();
        }
    }

    /// The layout of the allocation a block is carved from (see `new`).
    #[cfg(not(any(chase_lev_loom, chase_lev_shuttle)))]
    fn allocation_layout() -> std::alloc::Layout {
        let block = std::alloc::Layout::new::<Block<T>>();
        std::alloc::Layout::from_size_align(block.size() + Self::alignment() - 1, 1)
            .expect("a block's size fits in an isize")
    }

    /// Where a block starts: at a multiple of `TICKETS + 1` bytes (the
    /// tickets' bits), or of its type's alignment if that is larger (a
    /// task aligned to more than 128 bytes).
    #[cfg(not(any(chase_lev_loom, chase_lev_shuttle)))]
    fn alignment() -> usize {
        (TICKETS + 1).max(core::mem::align_of::<Block<T>>())
    }

    /// The model checkers' atomics and cells must be created one by one.
    #[cfg(any(chase_lev_loom, chase_lev_shuttle))]
    pub(super) fn new() -> *mut Block<T> {
        Box::into_raw(Box::new(Block {
            next: AtomicPtr::new(ptr::null_mut()).named("block.next"),
            lap: SlotCell::new(),
            tickets: [
                AtomicUsize::new(0).named("block.tail_tickets"),
                AtomicUsize::new(0).named("block.head_tickets"),
            ],
            released: AtomicUsize::new(0).named("block.released"),
            slots: core::array::from_fn(|_| Slot {
                state: AtomicUsize::new(0).named("slot.state"),
                task: SlotCell::new(),
            }),
            #[cfg(chase_lev_loom)]
            _leak_check: LeakCheck::new(),
        }))
    }

    /// Sets the lap of a block no other thread can see yet.
    ///
    /// # Safety
    /// `block` came from `Block::new` and is not published.
    pub(super) unsafe fn set_lap(block: *mut Block<T>, lap: u64) {
        // SAFETY: unpublished, so ours alone.
        unsafe { (*block).lap.write(MaybeUninit::new(lap)) };
    }

    /// The block's lap.
    pub(super) fn lap(&self) -> u64 {
        // SAFETY: written before the block was published (the release
        // operations that publish it, proofs-notes/injector.md#next-block),
        // never written again.
        unsafe { self.lap.read().assume_init() }
    }

    /// Frees a block made by `new`.
    ///
    /// # Safety
    /// `block` came from `Block::new`, no other thread will touch it again,
    /// and its slots hold no task the queue still owns.
    #[cfg(not(any(chase_lev_loom, chase_lev_shuttle)))]
    pub(super) unsafe fn free(block: *mut Block<T>) {
        #[cfg(chase_lev_mutants)]
        crate::trace::freed(block as usize);
        // SAFETY: by the caller the block is ours alone; it holds nothing to
        // drop (atomics and `MaybeUninit` cells), and its allocation was made
        // by `new` with `allocation_layout`.
        unsafe {
            let allocation = (*block).allocation;
            std::alloc::dealloc(allocation, Self::allocation_layout());
        }
    }

    /// Frees a block made by `new`, telling loom that each cell is freed
    /// after every access to it.
    ///
    /// # Safety
    /// As above.
    #[cfg(any(chase_lev_loom, chase_lev_shuttle))]
    pub(super) unsafe fn free(block: *mut Block<T>) {
        #[cfg(chase_lev_mutants)]
        crate::trace::freed(block as usize);
        // SAFETY: by the caller the block is ours alone; `Box` frees it with
        // the layout `new` allocated it with (`Layout::new::<Block<T>>()`).
        let mut block = unsafe { Box::from_raw(block) };
        block.lap.before_free();
        for slot in block.slots.iter_mut() {
            slot.task.before_free();
        }
        drop(block);
    }
}

impl<T> Injector<T> {
    /// Whether the claimed slot is written; if it is not after `PATIENCE`
    /// rounds, abandons it (proofs-notes/injector.md#abandoned-slots).
    ///
    /// # Safety
    /// The caller claimed the slot and has not finished it.
    #[inline(always)]
    pub(super) unsafe fn resolve(&self, slot: &Slot<T>) -> bool {
        // Ordering: Acquire, paired with the push's release RMW of `WRITE`: the
        // task's bytes are visible (proofs-notes/injector.md#task-publication).
        let state = slot.state.load(site!(InjectorWriteAcquire, Acquire));
        // SAFETY: forwarded from the caller.
        state & WRITE != 0 || unsafe { self.wait_or_abandon(slot, state) }
    }

    /// `resolve`'s slow path: the slot was not written at the first look.
    ///
    /// # Safety
    /// As for `resolve`.
    #[cold]
    #[inline(never)]
    unsafe fn wait_or_abandon(&self, slot: &Slot<T>, mut state: usize) -> bool {
        let mut round = 0;
        loop {
            if state & WRITE != 0 {
                return true;
            }
            if still_patient(round) {
                wait_round(round);
                round += 1;
                // Ordering: Acquire, as in `resolve` (proofs-notes/injector.md#task-publication).
                state = slot.state.load(site!(InjectorWriteAcquire, Acquire));
                continue;
            }
            // Ordering: Relaxed success: the steal has touched nothing of the
            // slot but its state, and the push takes its own task back
            // (proofs-notes/injector.md#abandoned-slots). Acquire on failure,
            // as the load above (the push may have written meanwhile).
            match slot.state.compare_exchange(
                state,
                state | ABANDONED,
                Relaxed,
                site!(InjectorWriteAcquire, Acquire),
            ) {
                Ok(_) => return false,
                Err(current) => state = current,
            }
        }
    }

    /// Reads a slot `resolve` found written.
    ///
    /// # Safety
    /// The caller claimed the slot, `resolve` returned `true` for it, and the
    /// caller has not read it yet.
    pub(super) unsafe fn read(&self, slot: &Slot<T>) -> MaybeUninit<T> {
        // SAFETY: written (the `WRITE` bit), and claimed by the caller alone.
        unsafe { slot.task.read() }
    }

    /// Finishes a claim of the slots `[first, end)` of `block`, of which the
    /// caller read those of the bits of `read` (its pushes finish the
    /// others, which the caller abandoned). Each run of consecutive read
    /// slots, from the lowest up, is marked `READ` with one RMW, on its top
    /// slot, after plain stores on the slots below it
    /// (proofs-notes/injector.md#reclamation). Starts the free of the block if
    /// the claim reached its last slot, or carries on with it if the thread
    /// freeing it has left that to us.
    ///
    /// # Safety
    /// As described; the caller does not touch `block` afterwards.
    pub(super) unsafe fn finish(&self, block: *mut Block<T>, first: usize, end: usize, read: u64) {
        debug_assert_eq!(read & !(((1u64 << (end - first)) - 1) << first), 0);
        let mut unmarked = read;
        while unmarked != 0 {
            let bottom = unmarked.trailing_zeros() as usize;
            let top = bottom + (!(unmarked >> bottom)).trailing_zeros() as usize - 1;
            unmarked &= !0u64 << (top + 1);
            #[cfg(chase_lev_mutants)]
            if mutant!(InjectorRunTopMarkedFirst) {
                // The top first.
                // SAFETY: forwarded from the caller.
                if unsafe { self.mark_read(block, top) } {
                    return;
                }
                for offset in bottom..top {
                    // SAFETY: the caller's claim keeps the block allocated.
                    let slot = unsafe { &(*block).slots[offset] };
                    // Ordering: Relaxed, as below; the top slot was marked first
                    // (proofs-notes/injector.md#injector-run-top-marked-first).
                    slot.state.store(WRITE | READ, Relaxed);
                }
                continue;
            }
            for offset in bottom..top {
                // SAFETY: the caller's claim keeps the block allocated.
                let slot = unsafe { &(*block).slots[offset] };
                // Ordering: Relaxed, a plain store: the free's walk reaches
                // this slot only through the run's top slot, whose RMW below
                // orders this store (proofs-notes/injector.md#reclamation);
                // no other thread touches the slot's state before that.
                slot.state.store(WRITE | READ, Relaxed);
            }
            // SAFETY: forwarded from the caller; the runs below are marked.
            if unsafe { self.mark_read(block, top) } {
                return;
            }
        }
        if end == BLOCK_CAP {
            // Every position of the block is claimed: the claimer of the
            // last slot starts the free (proofs-notes/injector.md#reclamation).
            // SAFETY: forwarded from the caller.
            unsafe { self.destroy(block, BLOCK_CAP) };
        }
    }

    /// `finish` of a claim of the one slot at `offset`, read or not: the
    /// steal's, without the loop over a range.
    ///
    /// # Safety
    /// As for `finish`.
    #[inline(always)]
    pub(super) unsafe fn finish_one(&self, block: *mut Block<T>, offset: usize, read: bool) {
        // SAFETY: forwarded from the caller.
        if read && unsafe { self.mark_read(block, offset) } {
            return;
        }
        if offset + 1 == BLOCK_CAP {
            // As in `finish` (proofs-notes/injector.md#reclamation).
            // SAFETY: forwarded from the caller.
            unsafe { self.destroy(block, BLOCK_CAP) };
        }
    }

    /// Marks the slot at `offset`, which the caller read (a steal, or the
    /// push that took its task back from an abandoned slot), as read; `true`
    /// if the freer had left the free of the block to us, done now.
    ///
    /// # Safety
    /// The caller's claim of the slot keeps `block` allocated; its claimed
    /// slots below `offset` are marked already, and if this returns `true`
    /// the caller does not touch `block` afterwards.
    #[inline(always)]
    pub(super) unsafe fn mark_read(&self, block: *mut Block<T>, offset: usize) -> bool {
        // SAFETY: the caller's claimed slot keeps the block allocated.
        let slot = unsafe { &(*block).slots[offset] };
        // Ordering: AcqRel: release so that the freer's acquire orders
        // this thread's read before the free; acquire so that if the
        // freer left the free to us, we free after its checks
        // (proofs-notes/injector.md#reclamation).
        let state = slot.set_once(READ, site!(InjectorReadDoneAcqRel, AcqRel));
        if state & DESTROY == 0 {
            return false;
        }
        // The freer found every slot above this one finished; the caller's
        // below it are marked already.
        // SAFETY: forwarded from the caller.
        unsafe { self.destroy(block, offset) };
        true
    }

    /// Releases the slots' share of `block` once the slots below `count` are
    /// all finished: stops at the first slot (from the top) not finished yet
    /// and leaves the rest to whoever finishes it.
    ///
    /// # Safety
    /// Every position of the block has been claimed, the slots from `count`
    /// up are finished, and the caller does not touch `block` afterwards.
    pub(super) unsafe fn destroy(&self, block: *mut Block<T>, count: usize) {
        for offset in (0..count).rev() {
            // SAFETY: a slot below `count` not finished keeps the block
            // allocated; one that is finished cannot release the share
            // without us (proofs-notes/injector.md#reclamation).
            let slot = unsafe { &(*block).slots[offset] };
            // Ordering: Acquire, then AcqRel, paired with the finisher's AcqRel
            // mark: a finished slot's users are done before the free; an
            // unfinished one is handed the free (proofs-notes/injector.md#reclamation).
            if slot.state.load(site!(InjectorDestroyAcquire, Acquire)) & READ == 0
                && slot.set_once(DESTROY, site!(InjectorDestroyAcqRel, AcqRel)) & READ == 0
            {
                return;
            }
        }
        // SAFETY: every slot is finished (proofs-notes/injector.md#reclamation).
        unsafe { self.release_share(block) };
    }

    /// Releases one of the block's three shares; the third frees it.
    ///
    /// # Safety
    /// The caller owns one unreleased share of `block` and does not touch it
    /// afterwards.
    pub(super) unsafe fn release_share(&self, block: *mut Block<T>) {
        // SAFETY: the caller's share keeps the block allocated.
        let released = unsafe { &(*block).released };
        // Ordering: AcqRel: the holders of the other two shares finished with
        // the block before the free (proofs-notes/injector.md#reclamation).
        if released.fetch_add(1, site!(InjectorShareAcqRel, AcqRel)) == 2 {
            // SAFETY: all three shares released: every slot is finished and
            // both cursors have moved off the block with no ticket left on it
            // (proofs-notes/injector.md#reclamation).
            unsafe { Block::free(block) };
        }
    }
}

impl<T> Drop for Injector<T> {
    fn drop(&mut self) {
        // Ordering: Relaxed everywhere: `&mut self` means no other thread
        // uses the queue any more, and whatever handed it to us synchronised
        // with them (proofs-notes/injector.md#drop).
        let head = self.head.index.load(Relaxed) & !HAS_NEXT;
        let tail = self.tail.index.load(Relaxed);
        let block = untag(self.head.block.load(Relaxed));
        // SAFETY: every position in [head, tail) holds a written task the
        // queue owns, in the chain of blocks from `block`.
        unsafe { drop_from(block, head, tail) };
    }
}

/// Drops the tasks of the positions `[head, tail)` and frees their blocks,
/// from `block` (the block of `head`) on. If a task's `Drop` panics, the rest
/// are still dropped and every block freed while the panic unwinds (as `Vec`
/// does); a second panic aborts the process, as it does for `Vec`.
///
/// # Safety
/// As in `Drop for Injector`.
unsafe fn drop_from<T>(mut block: *mut Block<T>, mut head: u64, tail: u64) {
    struct Rest<T> {
        block: *mut Block<T>,
        head: u64,
        tail: u64,
    }
    impl<T> Drop for Rest<T> {
        fn drop(&mut self) {
            // SAFETY: the positions not yet dropped, as the caller vouched.
            unsafe { drop_from(self.block, self.head, self.tail) };
        }
    }
    while position(head) != position(tail) {
        let offset = offset(head);
        if offset == BLOCK_CAP {
            // Ordering: Relaxed, as in `drop` (proofs-notes/injector.md#drop).
            // SAFETY: the chain is intact and ours alone.
            let next = unsafe { (*block).next.load(Relaxed) };
            // SAFETY: every task of this block has been dropped or taken.
            unsafe { Block::free(block) };
            block = next;
            head = head.wrapping_add(ONE);
            continue;
        }
        head = head.wrapping_add(ONE);
        let rest = Rest { block, head, tail };
        // SAFETY: the slot holds a written task that nothing else owns.
        drop(unsafe { (*block).slots[offset].task.read().assume_init() });
        core::mem::forget(rest);
    }
    // SAFETY: the last block; its tasks are gone.
    unsafe { Block::free(block) };
}
