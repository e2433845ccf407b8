//! The injector's two cursors, `tail` and `head`, each an index and a block
//! word (blocks.rs says how both are encoded); the moves of a
//! cursor to the next block (`advance`, `link`, `move_index`), and a
//! steal's look at the head and its claim.

use core::ptr;

use super::blocks::{
    lap, next_lap, offset, past_marker, position, same_lap, tickets, untag, Block, BLOCK_CAP,
    HAS_NEXT, ONE, POSITION_MASK, TICKETS,
};
use super::{Injector, Pause};
use crate::atomic::{fence, AtomicPtr, AtomicU64};
#[cfg(chase_lev_mutants)]
use crate::sites::mutant;
use crate::sites::site;
use crate::steal::Steal;
use crate::sync::{
    wait_round,
    Ordering::{AcqRel, Acquire, Relaxed, Release, SeqCst},
    UNDER_A_MODEL_CHECKER,
};

/// How many snapshots of the two indices `indices` tries (see there); two
/// in the model builds, so that a model with two pushes reaches the count
/// `indices` settles for.
const SNAPSHOT_ATTEMPTS: u32 = if UNDER_A_MODEL_CHECKER { 2 } else { 4 };

/// Which cursor.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    Tail = 0,
    Head = 1,
}

/// A cursor: the index of a position, and a block word: the block that
/// position is in and the tickets taken on it (see `TICKETS`).
pub(super) struct Cursor<T> {
    pub(super) index: AtomicU64,
    pub(super) block: AtomicPtr<Block<T>>,
}

impl<T> Cursor<T> {
    /// The cursor's block word (`untag` gives the block): the load of it
    /// that push, `look` and `advance` make (the ticket CAS of `take_ticket`
    /// and the guess of `drop_ticket` are their own).
    #[inline(always)]
    pub(super) fn load_block_word(&self) -> *mut Block<T> {
        // Ordering: Acquire: after an acquire load of the index, the block
        // is the one that index is in, not older, not newer
        // (proofs-notes/injector.md#block-of-an-index).
        self.block.load(site!(InjectorBlockPointerAcquire, Acquire))
    }
}

/// What a steal's first look at the head showed.
pub(super) struct Look<T> {
    head: u64,
    pub(super) block: *mut Block<T>,
    pub(super) offset: usize,
    /// The head index the CAS installs for one position (with `HAS_NEXT`
    /// if the tail is known to be in a later block).
    next_head: u64,
    /// How many positions a batch may take (crossbeam's rule): all of the
    /// rest of the block when the tail is in a later block, else about half
    /// of the tasks present.
    pub(super) batch: usize,
}

impl<T> Injector<T> {
    fn cursor(&self, side: Side) -> &Cursor<T> {
        match side {
            Side::Tail => &self.tail,
            Side::Head => &self.head,
        }
    }

    /// Helps the cursor of `side` over a block end: takes a ticket on the
    /// cursor's block (which keeps it allocated), and if the cursor's index
    /// is on that block's marker, does what the thread that claimed the
    /// block's last slot would do; gives the ticket back
    /// (proofs-notes/injector.md#tickets).
    pub(super) fn help(&self, side: Side, spare: &mut *mut Block<T>) {
        let cursor = self.cursor(side);
        let block = self.take_ticket(side);
        // SAFETY: the ticket keeps the block allocated
        // (proofs-notes/injector.md#tickets).
        let block_lap = unsafe { (*block).lap() };
        // Ordering: Acquire, as the cursor's other index loads
        // (proofs-notes/injector.md#block-of-an-index).
        let index = cursor.index.load(match side {
            Side::Tail => site!(InjectorTailIndexAcquire, Acquire),
            Side::Head => site!(InjectorHeadIndexAcquire, Acquire),
        });
        if offset(index) == BLOCK_CAP {
            if block_lap == lap(index) {
                // SAFETY: the ticket is a hold on the block; the index is on
                // its marker, so every position of it is claimed.
                unsafe { self.advance(side, block, index, spare) };
            } else if block_lap == next_lap(lap(index)) {
                // The block pointer is already moved; only the index is left.
                self.move_index(side, index);
            }
        }
        // SAFETY: our ticket, taken above.
        unsafe { self.drop_ticket(side, block) };
    }

    /// Takes a ticket on the cursor's current block and returns the block.
    fn take_ticket(&self, side: Side) -> *mut Block<T> {
        let cursor = self.cursor(side);
        let mut round = 0;
        // Ordering: Acquire: the block is seen initialised (its lap), as by
        // the cursor's other block loads (proofs-notes/injector.md#tickets).
        let mut word = cursor.block.load(site!(InjectorTicketAcquire, Acquire));
        loop {
            if tickets(word) == TICKETS {
                // As many helpers as the word can count: wait for one to
                // leave (proofs-notes/injector.md#progress).
                wait_round(round);
                round = round.saturating_add(1);
                // Ordering: Acquire, as above (proofs-notes/injector.md#tickets).
                word = cursor.block.load(site!(InjectorTicketAcquire, Acquire));
                continue;
            }
            // Ordering: Acquire, as above; the block cannot be freed while
            // the word counts our ticket (proofs-notes/injector.md#tickets).
            match cursor.block.compare_exchange(
                word,
                word.wrapping_byte_add(1),
                site!(InjectorTicketAcquire, Acquire),
                site!(InjectorTicketAcquire, Acquire),
            ) {
                Ok(_) => return untag(word),
                Err(current) => word = current,
            }
        }
    }

    /// Gives back a ticket on `block` taken with `take_ticket`.
    ///
    /// # Safety
    /// The caller holds a ticket on `block` and does not touch it afterwards.
    unsafe fn drop_ticket(&self, side: Side, block: *mut Block<T>) {
        let cursor = self.cursor(side);
        // Ordering: Relaxed: a guess for the CAS, which checks it
        // (proofs-notes/injector.md#tickets).
        let mut word = cursor.block.load(Relaxed);
        loop {
            if untag(word) != block {
                // The cursor has moved on and handed its tickets over to the
                // block (the block is alive, so no other block has its
                // address, and the cursor never comes back to it).
                // SAFETY: forwarded from the caller.
                unsafe { self.release_tickets(side, block, 1usize.wrapping_neg()) };
                return;
            }
            // Ordering: Release: our reads of the block happen before whoever
            // moves the cursor off it, and so before its free
            // (proofs-notes/injector.md#tickets). Relaxed on failure: re-checked.
            match cursor.block.compare_exchange(
                word,
                word.wrapping_byte_sub(1),
                site!(InjectorTicketRelease, Release),
                Relaxed,
            ) {
                Ok(_) => return,
                Err(current) => word = current,
            }
        }
    }

    /// Adds `delta` (wrapping) to the tickets the cursor of `side` handed
    /// over to `block`; whoever brings the count to zero releases the
    /// cursor's share of the block.
    ///
    /// # Safety
    /// The caller holds a ticket on `block`, or is the thread whose CAS
    /// moved the cursor off it (handing over), and does not touch it after.
    unsafe fn release_tickets(&self, side: Side, block: *mut Block<T>, delta: usize) {
        // SAFETY: the caller's hold, which this call gives up.
        let count = unsafe { &(*block).tickets[side as usize] };
        // Ordering: AcqRel: every ticket holder's reads of the block happen
        // before the release of the share (proofs-notes/injector.md#tickets).
        let before = count.fetch_add(delta, site!(InjectorShareAcqRel, AcqRel));
        if before.wrapping_add(delta) == 0 {
            // SAFETY: the last hold of this cursor on the block.
            unsafe { self.release_share(block) };
        }
    }

    /// Moves the cursor of `side` from the marker `marker` of `block` to the
    /// first position of the next block, linking that block first if no one
    /// has. Every step is a CAS that only one thread's call makes, so any
    /// number of threads may call this for the same block end.
    ///
    /// # Safety
    /// The caller holds a claim in `block` or a ticket on it, and the
    /// cursor's index has reached `marker`, the block's marker.
    pub(super) unsafe fn advance(
        &self,
        side: Side,
        block: *mut Block<T>,
        marker: u64,
        spare: &mut *mut Block<T>,
    ) {
        let cursor = self.cursor(side);
        // SAFETY: the caller's hold on the block.
        let current = unsafe { &*block };
        let next = self.link(current, spare);
        let mut word = cursor.load_block_word();
        while untag(word) == block {
            // Ordering: AcqRel: release, so that a thread that reads the next
            // lap's index reads the next block (block-of-an-index); acquire,
            // so that the tickets given back before it happen before the
            // free (proofs-notes/injector.md#tickets). Acquire on failure, as
            // the loads. Two mutants weaken the success ordering: the
            // cursor's own to Release, the block pointers' to Acquire.
            match cursor.block.compare_exchange(
                word,
                next,
                site!(
                    InjectorCursorCasAcqRel,
                    site!(InjectorBlockPointerAcqRel, AcqRel)
                ),
                site!(InjectorBlockPointerAcquire, Acquire),
            ) {
                Ok(_) => {
                    // The tickets still counted in the word are now counted
                    // by the block.
                    // SAFETY: the caller's hold on the block.
                    unsafe { self.release_tickets(side, block, tickets(word)) };
                    break;
                }
                Err(found) => word = found,
            }
        }
        self.move_index(side, marker);
    }

    /// Moves the cursor's index from `marker` to the next lap, once the
    /// caller has seen its block pointer moved to the next block.
    fn move_index(&self, side: Side, marker: u64) {
        let mut new_index = (marker & !HAS_NEXT).wrapping_add(ONE);
        let publish = match side {
            Side::Tail => site!(InjectorTailPublishRelease, Release),
            Side::Head => {
                // Ordering: Relaxed: only a hint. If the tail is at or past
                // the marker of the next block, every slot of that block is
                // claimed by a push (proofs-notes/injector.md#empty).
                let tail = self.tail.index.load(Relaxed);
                let ahead = position(tail).wrapping_sub(position(new_index)) & POSITION_MASK;
                if ahead >= BLOCK_CAP as u64 && ahead < POSITION_MASK / 2 {
                    new_index |= HAS_NEXT;
                }
                site!(InjectorHeadPublishRelease, Release)
            }
        };
        // Ordering: Release: a thread that reads the new lap's index also
        // reads the new block pointer (proofs-notes/injector.md#block-of-an-index).
        // Relaxed on failure: another thread moved it.
        let _ = self
            .cursor(side)
            .index
            .compare_exchange(marker, new_index, publish, Relaxed);
    }

    /// The block after `block`, linked now if no one has.
    fn link(&self, block: &Block<T>, spare: &mut *mut Block<T>) -> *mut Block<T> {
        // Ordering: Acquire: the new block is seen initialised
        // (proofs-notes/injector.md#next-block).
        let next = block.next.load(site!(InjectorNextAcquire, Acquire));
        if !next.is_null() {
            return next;
        }
        let fresh = if spare.is_null() {
            Block::new()
        } else {
            core::mem::replace(spare, ptr::null_mut())
        };
        // SAFETY: `fresh` is not published.
        unsafe { Block::set_lap(fresh, next_lap(block.lap())) };
        // Ordering: Release: whoever follows the link sees the new block
        // initialised; Acquire on failure, for the winner's block
        // (proofs-notes/injector.md#next-block).
        match block.next.compare_exchange(
            ptr::null_mut(),
            fresh,
            site!(InjectorNextRelease, Release),
            site!(InjectorNextAcquire, Acquire),
        ) {
            Ok(_) => fresh,
            Err(winner) => {
                *spare = fresh;
                winner
            }
        }
    }

    /// Looks at the head (and, unless `HAS_NEXT`, at the tail) for a steal
    /// that may take up to `limit` positions.
    #[inline]
    pub(super) fn look(&self, limit: usize) -> Steal<Look<T>> {
        loop {
            // Ordering: Acquire: reads the head index of a completed move to
            // a new block, so the block loaded next is that one, and inherits
            // what earlier steals saw of the tail (proofs-notes/injector.md#block-of-an-index,
            // #read-read-coherence).
            let head = self
                .head
                .index
                .load(site!(InjectorHeadIndexAcquire, Acquire));
            let block = untag(self.head.load_block_word());
            let offset = offset(head);
            if offset == BLOCK_CAP {
                // Another steal claimed the block's last slot: help the head
                // over the block end (proofs-notes/injector.md#tickets).
                let mut spare = ptr::null_mut();
                self.help(Side::Head, &mut spare);
                if !spare.is_null() {
                    // SAFETY: lost the race to link it: never published.
                    unsafe { Block::free(spare) };
                }
                continue;
            }
            let rest_of_block = BLOCK_CAP - offset;
            let mut next_head = head.wrapping_add(ONE);
            let batch = if head & HAS_NEXT != 0 {
                rest_of_block.min(limit)
            } else {
                // Ordering: SeqCst fence: the steal sees every push whose CAS
                // precedes it in the single total order, which is what makes
                // `Empty` linearizable and keeps clients' store-buffering
                // handshakes sound (proofs-notes/injector.md#empty).
                site!(InjectorStealFence, fence(SeqCst));
                // Ordering: Relaxed, ordered by the fence above
                // (proofs-notes/injector.md#empty). A tail on a marker is the
                // next lap's first position.
                let tail = past_marker(self.tail.index.load(Relaxed));
                #[cfg(chase_lev_mutants)]
                if mutant!(InjectorStealMissesLastTask)
                    && position(tail).wrapping_sub(position(head)) & POSITION_MASK <= 1
                {
                    return Steal::Empty;
                }
                if position(head) == position(tail) {
                    return Steal::Empty;
                }
                if !same_lap(head, tail) {
                    next_head |= HAS_NEXT;
                    rest_of_block.min(limit)
                } else {
                    let len =
                        (position(tail).wrapping_sub(position(head)) & POSITION_MASK) as usize;
                    len.div_ceil(2).min(limit)
                }
            };
            return Steal::Success(Look {
                head,
                block,
                offset,
                next_head,
                batch,
            });
        }
    }

    /// The CAS that claims `count` positions from `seen.head`.
    #[inline]
    pub(super) fn claim(&self, seen: &Look<T>, count: usize) -> bool {
        let new_head = seen.next_head.wrapping_add((count as u64 - 1) * ONE);
        // Ordering: SeqCst success, whose release half hands what this steal
        // saw of the tail to the steals that read this head
        // (proofs-notes/injector.md#read-read-coherence). Relaxed on failure:
        // nothing read is used.
        self.head
            .index
            .compare_exchange(
                seen.head,
                new_head,
                site!(InjectorHeadCasSeqCst, SeqCst),
                Relaxed,
            )
            .is_ok()
    }

    /// After a claim of `count` positions that reached the block's last
    /// slot: moves the head to the next block (any steal may help with it).
    ///
    /// # Safety
    /// The caller's claim, not yet finished.
    #[inline(always)]
    pub(super) unsafe fn move_head_on(&self, seen: &Look<T>, count: usize) {
        let marker = seen.next_head.wrapping_add((count as u64 - 1) * ONE);
        // SAFETY: forwarded from the caller.
        unsafe { self.move_head_from(seen.block, marker) };
    }

    /// `move_head_on` out of line, from two words: a steal's look stays in
    /// registers, not spilled to be passed by reference.
    ///
    /// # Safety
    /// As for `move_head_on`; `marker` is the marker of `block`.
    #[inline(never)]
    unsafe fn move_head_from(&self, block: *mut Block<T>, marker: u64) {
        self.pause(Pause::LastSlotStolen);
        let mut spare = ptr::null_mut();
        // SAFETY: the caller's claim is a hold on the block.
        unsafe { self.advance(Side::Head, block, marker, &mut spare) };
        if !spare.is_null() {
            // SAFETY: lost the race to link it: never published.
            unsafe { Block::free(spare) };
        }
    }

    /// Both indices, each position on a block's marker moved on to the next
    /// lap's first slot: the head, and the tail loaded after it. The tail
    /// is loaded before the head as well, and while pushes move it between
    /// the two loads the snapshot is tried again, at most
    /// `SNAPSHOT_ATTEMPTS` times in all, so that it ends whatever other
    /// threads do. When the two tail loads agree, both indices are of one
    /// moment; when they do not, the pair counts the queue at the head's
    /// load plus the pushes that claimed a slot after it
    /// (proofs-notes/injector.md#len).
    pub(super) fn indices(&self) -> (u64, u64) {
        let fix = |index: u64| position(past_marker(index));
        let mut attempts = 1;
        loop {
            // Ordering: SeqCst, as crossbeam's: a client's store-buffering
            // handshake around `is_empty` holds
            // (proofs-notes/injector.md#len).
            let tail = self.tail.index.load(SeqCst);
            let head = self.head.index.load(SeqCst);
            let tail_after = self.tail.index.load(SeqCst);
            if tail_after == tail || attempts == SNAPSHOT_ATTEMPTS {
                #[cfg(chase_lev_mutants)]
                if mutant!(InjectorLenSettlesForEmpty) && tail_after != tail {
                    return (fix(head), fix(head));
                }
                return (fix(head), fix(tail_after));
            }
            attempts += 1;
        }
    }
}
