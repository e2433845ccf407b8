//! `Injector`, a FIFO queue that any thread pushes to and steals from: the
//! entry point of new tasks in a scheduler, with crossbeam-deque 0.8's API.
//!
//! # Design
//!
//! The queue is a singly linked list of *blocks*, each holding one *lap* of
//! `LAP` positions: `BLOCK_CAP = LAP - 1` slots and, at the last offset, a
//! marker that means "the next block is being linked in". Two cursors,
//! `tail` (where pushes go) and `head` (where steals take), each hold an
//! index (a position, shifted left by one, plus at the head a `HAS_NEXT`
//! bit) and the pointer of the block that position is in.
//!
//! - A push claims the position at `tail` with a CAS on the tail index,
//!   writes its task into the slot and publishes it with a CAS that sets the
//!   slot's `WRITE` bit, unless the steal of that slot gave up on it first
//!   (`ABANDONED`): then the push takes its task back and pushes it again.
//! - A steal claims the position(s) at `head` with a CAS on the head index,
//!   having first checked the tail (behind a SeqCst fence) unless `HAS_NEXT`
//!   says the tail is in a later block. It reads each claimed slot whose
//!   `WRITE` bit is set (after a short bounded spin); a slot still unwritten
//!   is abandoned, and a steal that got nothing returns `Retry`.
//! - At a block end, the thread that claimed the last slot moves the cursor
//!   to the next block (linking it, allocated, if no one has yet). Any other
//!   thread that finds the cursor there helps: it takes a *ticket* (a count
//!   in the low bits of the cursor's block pointer) that keeps the block
//!   allocated, and does the same steps, each a CAS that one thread wins.
//! - Reclamation needs no epoch: no thread dereferences a block unless it
//!   holds a claimed, unfinished position in it or a ticket on it
//!   (proofs-notes/injector.md explains why that suffices). A block is freed
//!   by whoever releases the last of three shares: its slots' (all read or
//!   given back; the reader of the last slot starts that, and a slot still
//!   in use when it looks gets a `DESTROY` bit and its user carries on), and
//!   each cursor's (moved past it, every ticket given back). So the memory of
//!   a block goes back to the allocator as soon as its last task is read and
//!   both cursors are past it.
//!
//! The idea of linked blocks, and the block size, are crossbeam-deque's (so
//! that batch steals take exactly as many tasks as crossbeam's). The costs
//! are the same too: a CAS per push on the tail index and one on its slot, a
//! CAS per steal on the head index, a SeqCst fence per steal when the head
//! and the tail share a block, and an allocation every 63 pushes.
//!
//! # Progress
//!
//! Lock-free: no operation waits for a step of another thread
//! (proofs-notes/injector.md#progress). A push that finds the tail at a block
//! end moves it on itself; a steal whose slot is not written yet abandons it
//! and returns `Retry` (the push, still running, pushes its task again); a
//! steal that finds the head at a block end moves it on itself. The one
//! exception: a helper that finds 127 other helpers at the same block end
//! waits for one of them to leave. Not wait-free: a push whose slot is
//! abandoned again and again never completes, while the steals that abandon
//! it each return `Retry`.

use core::fmt;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::ptr;

use crossbeam_utils::CachePadded;

use crate::deque::{index_space_exhausted, Flavor};
use crate::policy::{choose, fence_if, Policy};
use crate::steal::Steal;
use crate::sync::{
    wait_round, AtomicPtr, AtomicU64, AtomicUsize, Named,
    Ordering::{AcqRel, Acquire, Relaxed, Release, SeqCst},
    SlotCell,
};
use crate::worker::Worker;

/// Positions per block. The model builds use tiny blocks, so that loom and
/// shuttle reach a block boundary in a few operations.
#[cfg(not(any(chase_lev_loom, chase_lev_shuttle)))]
const LAP: u64 = 64;
#[cfg(any(chase_lev_loom, chase_lev_shuttle))]
const LAP: u64 = 4;

/// Slots per block: the last position of a lap is the marker.
const BLOCK_CAP: usize = LAP as usize - 1;

/// The index holds the position shifted by this much...
const SHIFT: u32 = 1;
/// ...and, in the head index, this bit: the tail is in a later block, so the
/// head's block is full and a steal need not look at the tail.
const HAS_NEXT: u64 = 1;
/// One position, as an index increment.
const ONE: u64 = 1 << SHIFT;
/// Positions wrap around at 2^63 (indices at 2^64); see `position`.
const POSITION_MASK: u64 = u64::MAX >> SHIFT;

/// The most tasks a batch steal moves when the caller gives no limit
/// (crossbeam-deque's default; `steal_batch_and_pop` takes one more).
const MAX_BATCH: usize = crate::DEFAULT_BATCH_LIMIT;

/// A slot's state bits.
const WRITE: usize = 1;
const READ: usize = 2;
const DESTROY: usize = 4;
/// Set by a steal that found its claimed slot not yet written and gave up on
/// it: the push that claimed the slot takes its task back and pushes it
/// again at a fresh position (proofs-notes/injector.md#abandoned-slots).
const ABANDONED: usize = 8;

/// How many rounds a steal waits for a claimed slot to be written before it
/// abandons the slot. Bounded, so that a push descheduled between its claim
/// and its write never holds a steal up for longer than this; zero in the
/// model builds, so that loom and shuttle explore the abandoning path.
#[cfg(not(any(chase_lev_loom, chase_lev_shuttle)))]
const PATIENCE: u32 = 6;
#[cfg(any(chase_lev_loom, chase_lev_shuttle))]
const PATIENCE: u32 = 0;

/// Whether a steal that has waited `round` rounds for its slot waits one more.
#[inline(always)]
#[allow(clippy::absurd_extreme_comparisons)] // `PATIENCE` is zero in the model builds
fn still_patient(round: u32) -> bool {
    round < PATIENCE
}

/// A cursor's block word is a block's address plus, in its low bits, the
/// number of tickets taken on that block by threads helping the cursor over
/// the block's end (proofs-notes/injector.md#tickets). Blocks are aligned to
/// `TICKETS + 1` bytes so that those bits are free.
const TICKETS: usize = 127;
const _: () = assert!(core::mem::align_of::<Block<()>>() > TICKETS);

#[inline(always)]
fn position(index: u64) -> u64 {
    index >> SHIFT
}

#[inline(always)]
fn offset(index: u64) -> usize {
    (position(index) % LAP) as usize
}

/// The lap of an index (wrapping at 2^63 / `LAP`).
#[inline(always)]
fn lap(index: u64) -> u64 {
    position(index) / LAP
}

/// The lap after `lap`.
#[inline(always)]
fn next_lap(lap: u64) -> u64 {
    lap.wrapping_add(1) & (POSITION_MASK / LAP)
}

/// Whether two indices are in the same lap (wrapping included: `LAP`
/// divides 2^63).
#[inline(always)]
fn same_lap(a: u64, b: u64) -> bool {
    lap(a) == lap(b)
}

/// A tail index on a block's marker means the same as the first position of
/// the next lap: every slot of the block is claimed.
#[inline(always)]
fn past_marker(index: u64) -> u64 {
    if offset(index) == BLOCK_CAP {
        index.wrapping_add(ONE)
    } else {
        index
    }
}

/// The block address of a cursor's block word.
#[inline(always)]
fn untag<T>(word: *mut Block<T>) -> *mut Block<T> {
    word.wrapping_byte_sub(tickets(word))
}

/// The ticket count of a cursor's block word.
#[inline(always)]
fn tickets<T>(word: *mut Block<T>) -> usize {
    // (`as usize`, not `addr()`: the crate's minimum Rust is 1.82.)
    word as usize & TICKETS
}

struct Slot<T> {
    /// `WRITE`, `READ`, `DESTROY` and `ABANDONED`.
    state: AtomicUsize,
    task: SlotCell<T>,
}

/// Which cursor.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Tail = 0,
    Head = 1,
}

#[repr(align(128))]
struct Block<T> {
    /// The next block, linked by the first thread that needs it: a push or a
    /// steal holding a claim in this block, or a helper holding a ticket on
    /// it (proofs-notes/injector.md#next-block).
    next: AtomicPtr<Block<T>>,
    /// The lap this block holds, written before the block is linked and
    /// never again; a cell, so that loom checks that every read of it happens
    /// before the block is freed.
    lap: SlotCell<u64>,
    /// Per cursor (`Side`), the tickets it handed over to this block when it
    /// moved off it, less those given back since (wrapping).
    tickets: [AtomicUsize; 2],
    /// How many of the block's three shares (its slots, its tail ticket
    /// count, its head ticket count) are released: the third frees it
    /// (proofs-notes/injector.md#reclamation).
    released: AtomicUsize,
    slots: [Slot<T>; BLOCK_CAP],
}

impl<T> Block<T> {
    /// A fresh block: every slot empty, no next block, lap unset. Allocated
    /// zeroed and in place, so that a large `T` never passes through the stack.
    #[cfg(not(any(chase_lev_loom, chase_lev_shuttle)))]
    fn new() -> *mut Block<T> {
        let layout = std::alloc::Layout::new::<Block<T>>();
        // SAFETY: the layout is not zero-sized (a block holds atomics).
        let block = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<Block<T>>();
        if block.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        // All zeroes is a valid block: a null `next`, counts and states of 0,
        // and `MaybeUninit` cells, which may hold any bytes.
        block
    }

    /// The model checkers' atomics and cells must be created one by one.
    #[cfg(any(chase_lev_loom, chase_lev_shuttle))]
    fn new() -> *mut Block<T> {
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
        }))
    }

    /// Sets the lap of a block no other thread can see yet.
    ///
    /// # Safety
    /// `block` came from `Block::new` and is not published.
    unsafe fn set_lap(block: *mut Block<T>, lap: u64) {
        // SAFETY: unpublished, so ours alone.
        unsafe { (*block).lap.write(MaybeUninit::new(lap)) };
    }

    /// The block's lap.
    fn lap(&self) -> u64 {
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
    unsafe fn free(block: *mut Block<T>) {
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

/// A cursor: the index of a position, and a block word: the block that
/// position is in and the tickets taken on it (see `TICKETS`).
struct Cursor<T> {
    index: AtomicU64,
    block: AtomicPtr<Block<T>>,
}

/// What a steal's first look at the head showed.
struct Look<T> {
    head: u64,
    block: *mut Block<T>,
    offset: usize,
    /// The head index the CAS installs for one position (with `HAS_NEXT`
    /// if the tail is known to be in a later block).
    next_head: u64,
    /// How many positions a batch may take (crossbeam's rule): all of the
    /// rest of the block when the tail is in a later block, else about half
    /// of the tasks present.
    batch: usize,
}

/// (Model and mutant builds only.) A point of an operation where a
/// scenario's hook may hold the thread up, to model its being descheduled
/// there for as long as the scenario likes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pause {
    /// A push claimed a slot and has not written it (after moving the tail
    /// on, if it claimed the block's last slot).
    PushClaimed,
    /// A push claimed its block's last slot, and has not moved the tail on.
    LastSlotClaimed,
    /// A steal claimed its block's last slot, and has not moved the head on.
    LastSlotStolen,
}

/// (Model and mutant builds only.) A pause hook: see [`Injector::set_pause`].
#[cfg(any(chase_lev_loom, chase_lev_shuttle, chase_lev_mutants))]
pub type PauseHook = std::sync::Arc<dyn Fn(Pause) + Send + Sync>;

/// A FIFO queue of tasks shared by any number of threads, each of which may
/// push and steal: the entry point of new tasks in a work-stealing
/// scheduler. Its API is crossbeam-deque 0.8's `Injector`; batch steals move
/// tasks into a [`Worker`].
///
/// `Injector<T>` is `Send + Sync` when `T: Send`. Tasks left in it when it
/// is dropped are dropped with it, each exactly once.
///
/// ```
/// use chase_lev::{Injector, Steal, Worker};
///
/// let injector = Injector::new();
/// for task in 1..=4 {
///     injector.push(task);
/// }
/// assert_eq!(injector.steal(), Steal::Success(1)); // the oldest first
///
/// // A worker takes about half of the rest into its own deque.
/// let worker = Worker::new_fifo();
/// assert_eq!(injector.steal_batch_and_pop(&worker), Steal::Success(2));
/// assert_eq!(worker.pop(), Some(3));
/// assert_eq!(injector.len(), 1);
/// ```
pub struct Injector<T> {
    head: CachePadded<Cursor<T>>,
    tail: CachePadded<Cursor<T>>,
    policy: Policy,
    /// (Model and mutant builds.) Called at the `Pause` points.
    #[cfg(any(chase_lev_loom, chase_lev_shuttle, chase_lev_mutants))]
    pause: Option<PauseHook>,
    /// The queue owns `T`s: dropping it may drop tasks.
    _tasks: PhantomData<T>,
}

// SAFETY: tasks are moved between threads, never shared: each is written by
// the push that claimed its slot and read by the one steal that claimed it
// (proofs-notes/injector.md#claims). So the queue may be sent and shared
// between threads whenever the tasks may be sent, as for a channel.
unsafe impl<T: Send> Send for Injector<T> {}
// SAFETY: as above.
unsafe impl<T: Send> Sync for Injector<T> {}

impl<T> Default for Injector<T> {
    fn default() -> Injector<T> {
        Injector::build(Policy::default(), 0)
    }
}

impl<T> Injector<T> {
    /// Creates an empty injector.
    ///
    /// ```
    /// use chase_lev::Injector;
    ///
    /// let injector = Injector::<u32>::new();
    /// assert!(injector.is_empty());
    /// ```
    pub fn new() -> Injector<T> {
        Injector::default()
    }

    /// An empty queue whose first position is `first` (a multiple of `LAP`;
    /// tests start near the end of the index space to cross its wrap).
    fn build(policy: Policy, first: u64) -> Injector<T> {
        debug_assert_eq!(first % LAP, 0);
        let block = Block::new();
        let index = (first & POSITION_MASK) << SHIFT;
        // SAFETY: not published yet.
        unsafe { Block::set_lap(block, lap(index)) };
        Injector {
            head: CachePadded::new(Cursor {
                index: AtomicU64::new(index).named("head"),
                block: AtomicPtr::new(block).named_with_tags("head.block", TICKETS),
            }),
            tail: CachePadded::new(Cursor {
                index: AtomicU64::new(index).named("tail"),
                block: AtomicPtr::new(block).named_with_tags("tail.block", TICKETS),
            }),
            policy,
            #[cfg(any(chase_lev_loom, chase_lev_shuttle, chase_lev_mutants))]
            pause: None,
            _tasks: PhantomData,
        }
    }

    /// Calls the pause hook, if any (model and mutant builds only).
    #[inline(always)]
    fn pause(&self, at: Pause) {
        #[cfg(any(chase_lev_loom, chase_lev_shuttle, chase_lev_mutants))]
        if let Some(hook) = &self.pause {
            hook(at);
        }
        #[cfg(not(any(chase_lev_loom, chase_lev_shuttle, chase_lev_mutants)))]
        let _ = at;
    }

    fn cursor(&self, side: Side) -> &Cursor<T> {
        match side {
            Side::Tail => &self.tail,
            Side::Head => &self.head,
        }
    }

    /// Pushes a task at the back of the queue.
    ///
    /// ```
    /// use chase_lev::{Injector, Steal};
    ///
    /// let injector = Injector::new();
    /// injector.push('a');
    /// injector.push('b');
    /// assert_eq!(injector.steal(), Steal::Success('a'));
    /// ```
    pub fn push(&self, task: T) {
        let policy = self.policy;
        let mut task = MaybeUninit::new(task);
        // Allocated before the CAS that claims a block's last slot, so that
        // the block end costs the other pushes as little as possible.
        let mut spare: *mut Block<T> = ptr::null_mut();
        loop {
            // Ordering: Acquire, so that the block loaded next is at least the
            // one whose lap this index is in (proofs-notes/injector.md#block-of-an-index).
            let mut tail =
                self.tail
                    .index
                    .load(choose!(policy, InjectorTailIndexAcquire, Acquire, Relaxed));
            // Ordering: Acquire (proofs-notes/injector.md#block-of-an-index).
            let mut block = untag(self.tail.block.load(choose!(
                policy,
                InjectorBlockPointerAcqRel,
                Acquire,
                Relaxed
            )));
            let claimed = loop {
                let offset = offset(tail);
                if offset == BLOCK_CAP {
                    // Every slot of the block is claimed: help the tail over
                    // the block end instead of waiting for the push that
                    // claimed the last one (proofs-notes/injector.md#tickets).
                    self.help(Side::Tail, &mut spare);
                    // Ordering: Acquire, as above (proofs-notes/injector.md#block-of-an-index).
                    tail = self.tail.index.load(choose!(
                        policy,
                        InjectorTailIndexAcquire,
                        Acquire,
                        Relaxed
                    ));
                    // Ordering: Acquire (proofs-notes/injector.md#block-of-an-index).
                    block = untag(self.tail.block.load(choose!(
                        policy,
                        InjectorBlockPointerAcqRel,
                        Acquire,
                        Relaxed
                    )));
                    continue;
                }
                if offset + 1 == BLOCK_CAP && spare.is_null() {
                    spare = Block::new();
                }
                let next_tail = tail.wrapping_add(ONE);
                // Ordering: SeqCst success, so that a steal whose fence follows
                // this CAS in the single total order sees the push; Acquire on
                // failure, as for the loads above
                // (proofs-notes/injector.md#empty, #block-of-an-index).
                match self.tail.index.compare_exchange_weak(
                    tail,
                    next_tail,
                    choose!(policy, InjectorPushCasSeqCst, SeqCst, Relaxed),
                    choose!(policy, InjectorTailIndexAcquire, Acquire, Relaxed),
                ) {
                    Ok(_) => break offset,
                    Err(current) => {
                        tail = current;
                        // Ordering: Acquire (proofs-notes/injector.md#block-of-an-index).
                        block = untag(self.tail.block.load(choose!(
                            policy,
                            InjectorBlockPointerAcqRel,
                            Acquire,
                            Relaxed
                        )));
                    }
                }
            };
            if claimed + 1 == BLOCK_CAP {
                self.pause(Pause::LastSlotClaimed);
                // The claim keeps the block allocated: move the tail on.
                // SAFETY: the claim of the block's last slot, not finished.
                unsafe { self.advance(Side::Tail, block, tail.wrapping_add(ONE), &mut spare) };
            }
            self.pause(Pause::PushClaimed);
            // SAFETY: the CAS claimed position `claimed` of `block` (the block
            // of the claimed index, proofs-notes/injector.md#block-of-an-index),
            // so the block stays allocated until this slot is finished, by
            // its steal or by us (proofs-notes/injector.md#reclamation).
            let slot = unsafe { &(*block).slots[claimed] };
            // SAFETY: the claimed slot is written only by this push and read
            // only after the `WRITE` bit below (proofs-notes/injector.md#claims).
            unsafe { slot.task.write(task) };
            // Ordering: Relaxed: only a first guess for the CAS below
            // (proofs-notes/injector.md#abandoned-slots).
            let mut state = slot.state.load(Relaxed);
            let published = loop {
                if state & ABANDONED != 0 {
                    break false;
                }
                // Ordering: Release: the steal that sees `WRITE` with acquire
                // reads the task's bytes (proofs-notes/injector.md#task-publication).
                // Relaxed on failure: the state is only tested for `ABANDONED`.
                match slot.state.compare_exchange(
                    state,
                    state | WRITE,
                    choose!(policy, InjectorWriteRelease, Release, Relaxed),
                    Relaxed,
                ) {
                    Ok(_) => break true,
                    Err(current) => state = current,
                }
            };
            if published {
                break;
            }
            // The steal of this slot gave up on it: the push has not taken
            // effect, so it takes its task back and claims a fresh position
            // (proofs-notes/injector.md#abandoned-slots).
            // SAFETY: written above; no steal reads an abandoned slot.
            task = unsafe { slot.task.read() };
            // Ordering: AcqRel, as a steal's mark of a slot it read
            // (proofs-notes/injector.md#reclamation).
            let state = slot.state.fetch_or(
                READ,
                choose!(policy, InjectorReadDoneRelease, AcqRel, Acquire),
            );
            if state & DESTROY != 0 {
                // SAFETY: the freer found every slot above ours finished.
                unsafe { self.destroy(block, claimed) };
            }
        }
        if !spare.is_null() {
            // Allocated for a block end that another thread linked.
            // SAFETY: never published: this thread is its only user.
            unsafe { Block::free(spare) };
        }
    }

    /// Helps the cursor of `side` over a block end: takes a ticket on the
    /// cursor's block (which keeps it allocated), and if the cursor's index
    /// is on that block's marker, does what the thread that claimed the
    /// block's last slot would do; gives the ticket back
    /// (proofs-notes/injector.md#tickets).
    fn help(&self, side: Side, spare: &mut *mut Block<T>) {
        let policy = self.policy;
        let cursor = self.cursor(side);
        let block = self.take_ticket(side);
        // SAFETY: the ticket keeps the block allocated
        // (proofs-notes/injector.md#tickets).
        let block_lap = unsafe { (*block).lap() };
        // Ordering: Acquire, as the cursor's other index loads
        // (proofs-notes/injector.md#block-of-an-index).
        let index = cursor.index.load(match side {
            Side::Tail => choose!(policy, InjectorTailIndexAcquire, Acquire, Relaxed),
            Side::Head => choose!(policy, InjectorHeadIndexAcquire, Acquire, Relaxed),
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
        let policy = self.policy;
        let cursor = self.cursor(side);
        let mut round = 0;
        // Ordering: Acquire: the block is seen initialised (its lap), as by
        // the cursor's other block loads (proofs-notes/injector.md#tickets).
        let mut word = cursor
            .block
            .load(choose!(policy, InjectorTicketAcquire, Acquire, Relaxed));
        loop {
            if tickets(word) == TICKETS {
                // As many helpers as the word can count: wait for one to
                // leave (proofs-notes/injector.md#progress).
                wait_round(round);
                round = round.saturating_add(1);
                // Ordering: Acquire, as above (proofs-notes/injector.md#tickets).
                word = cursor
                    .block
                    .load(choose!(policy, InjectorTicketAcquire, Acquire, Relaxed));
                continue;
            }
            // Ordering: Acquire, as above; the block cannot be freed while
            // the word counts our ticket (proofs-notes/injector.md#tickets).
            match cursor.block.compare_exchange(
                word,
                word.wrapping_byte_add(1),
                choose!(policy, InjectorTicketAcquire, Acquire, Relaxed),
                choose!(policy, InjectorTicketAcquire, Acquire, Relaxed),
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
        let policy = self.policy;
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
                choose!(policy, InjectorTicketRelease, Release, Relaxed),
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
        let before = count.fetch_add(
            delta,
            choose!(self.policy, InjectorShareAcqRel, AcqRel, Relaxed),
        );
        if before.wrapping_add(delta) == 0 {
            // SAFETY: the last hold of this cursor on the block.
            unsafe { self.release_share(block) };
        }
    }

    /// Releases one of the block's three shares; the third frees it.
    ///
    /// # Safety
    /// The caller owns one unreleased share of `block` and does not touch it
    /// afterwards.
    unsafe fn release_share(&self, block: *mut Block<T>) {
        // SAFETY: the caller's share keeps the block allocated.
        let released = unsafe { &(*block).released };
        // Ordering: AcqRel: the holders of the other two shares finished with
        // the block before the free (proofs-notes/injector.md#reclamation).
        if released.fetch_add(
            1,
            choose!(self.policy, InjectorShareAcqRel, AcqRel, Relaxed),
        ) == 2
        {
            // SAFETY: all three shares released: every slot is finished and
            // both cursors have moved off the block with no ticket left on it
            // (proofs-notes/injector.md#reclamation).
            unsafe { Block::free(block) };
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
    unsafe fn advance(
        &self,
        side: Side,
        block: *mut Block<T>,
        marker: u64,
        spare: &mut *mut Block<T>,
    ) {
        let policy = self.policy;
        let cursor = self.cursor(side);
        // SAFETY: the caller's hold on the block.
        let current = unsafe { &*block };
        let next = self.link(current, spare);
        // Ordering: Acquire, as the cursor's other block loads
        // (proofs-notes/injector.md#block-of-an-index).
        let mut word = cursor.block.load(choose!(
            policy,
            InjectorBlockPointerAcqRel,
            Acquire,
            Relaxed
        ));
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
                choose!(
                    policy,
                    InjectorCursorCasAcquire,
                    choose!(policy, InjectorBlockPointerAcqRel, AcqRel, Acquire),
                    Release
                ),
                choose!(policy, InjectorBlockPointerAcqRel, Acquire, Relaxed),
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
        let policy = self.policy;
        let mut new_index = (marker & !HAS_NEXT).wrapping_add(ONE);
        let publish = match side {
            Side::Tail => choose!(policy, InjectorTailPublishRelease, Release, Relaxed),
            Side::Head => {
                // Ordering: Relaxed: only a hint. If the tail is at or past
                // the marker of the next block, every slot of that block is
                // claimed by a push (proofs-notes/injector.md#empty).
                let tail = self.tail.index.load(Relaxed);
                let ahead = position(tail).wrapping_sub(position(new_index)) & POSITION_MASK;
                if ahead >= BLOCK_CAP as u64 && ahead < POSITION_MASK / 2 {
                    new_index |= HAS_NEXT;
                }
                choose!(policy, InjectorHeadPublishRelease, Release, Relaxed)
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
        let policy = self.policy;
        // Ordering: Acquire: the new block is seen initialised
        // (proofs-notes/injector.md#next-block).
        let next = block
            .next
            .load(choose!(policy, InjectorNextAcquire, Acquire, Relaxed));
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
            choose!(policy, InjectorNextRelease, Release, Relaxed),
            choose!(policy, InjectorNextAcquire, Acquire, Relaxed),
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
    fn look(&self, limit: usize) -> Steal<Look<T>> {
        let policy = self.policy;
        loop {
            // Ordering: Acquire: reads the head index of a completed move to
            // a new block, so the block loaded next is that one, and inherits
            // what earlier steals saw of the tail (proofs-notes/injector.md#block-of-an-index,
            // #read-read-coherence).
            let head =
                self.head
                    .index
                    .load(choose!(policy, InjectorHeadIndexAcquire, Acquire, Relaxed));
            // Ordering: Acquire (proofs-notes/injector.md#block-of-an-index).
            let block = untag(self.head.block.load(choose!(
                policy,
                InjectorBlockPointerAcqRel,
                Acquire,
                Relaxed
            )));
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
                fence_if(choose!(policy, InjectorStealFence, Some(SeqCst), None));
                // Ordering: Relaxed, ordered by the fence above
                // (proofs-notes/injector.md#empty). A tail on a marker is the
                // next lap's first position.
                let tail = past_marker(self.tail.index.load(Relaxed));
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
    fn claim(&self, seen: &Look<T>, count: usize) -> bool {
        let policy = self.policy;
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
                choose!(policy, InjectorHeadCasSeqCst, SeqCst, Relaxed),
                Relaxed,
            )
            .is_ok()
    }

    /// After a claim of `count` positions that reached the block's last
    /// slot: moves the head to the next block (any steal may help with it).
    ///
    /// # Safety
    /// The caller's claim, not yet finished.
    unsafe fn move_head_on(&self, seen: &Look<T>, count: usize) {
        self.pause(Pause::LastSlotStolen);
        let marker = seen.next_head.wrapping_add((count as u64 - 1) * ONE);
        let mut spare = ptr::null_mut();
        // SAFETY: the caller's claim is a hold on the block.
        unsafe { self.advance(Side::Head, seen.block, marker, &mut spare) };
        if !spare.is_null() {
            // SAFETY: lost the race to link it: never published.
            unsafe { Block::free(spare) };
        }
    }

    /// Whether the claimed slot is written; if it is not after `PATIENCE`
    /// rounds, abandons it (proofs-notes/injector.md#abandoned-slots).
    ///
    /// # Safety
    /// The caller claimed the slot and has not finished it.
    unsafe fn resolve(&self, slot: &Slot<T>) -> bool {
        let policy = self.policy;
        let mut round = 0;
        // Ordering: Acquire, paired with the push's release CAS: the task's
        // bytes are visible (proofs-notes/injector.md#task-publication).
        let mut state = slot
            .state
            .load(choose!(policy, InjectorWriteAcquire, Acquire, Relaxed));
        loop {
            if state & WRITE != 0 {
                return true;
            }
            if still_patient(round) {
                wait_round(round);
                round += 1;
                // Ordering: Acquire, as above (proofs-notes/injector.md#task-publication).
                state = slot
                    .state
                    .load(choose!(policy, InjectorWriteAcquire, Acquire, Relaxed));
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
                choose!(policy, InjectorWriteAcquire, Acquire, Relaxed),
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
    unsafe fn read(&self, slot: &Slot<T>) -> MaybeUninit<T> {
        // SAFETY: written (the `WRITE` bit), and claimed by the caller alone.
        unsafe { slot.task.read() }
    }

    /// Marks the slots of `[first, end)` of `block` that the caller read
    /// (the bits of `read`) as read; starts the free of the block if the
    /// claim reached its last slot, or carries on with it if the thread
    /// freeing it has left that to us. The abandoned slots are finished by
    /// their pushes.
    ///
    /// # Safety
    /// As described; the caller does not touch `block` afterwards.
    unsafe fn finish(&self, block: *mut Block<T>, first: usize, end: usize, read: u64) {
        for offset in first..end {
            if read & (1 << offset) == 0 {
                continue;
            }
            // SAFETY: the caller's claimed slots keep the block allocated.
            let slot = unsafe { &(*block).slots[offset] };
            // Ordering: AcqRel: release so that the freer's acquire orders
            // this thread's read before the free; acquire so that if the
            // freer left the free to us, we free after its checks
            // (proofs-notes/injector.md#reclamation).
            let state = slot.state.fetch_or(
                READ,
                choose!(self.policy, InjectorReadDoneRelease, AcqRel, Acquire),
            );
            if state & DESTROY != 0 {
                // The freer found every slot above this one finished; ours
                // below it are marked already (we mark from the bottom up).
                // SAFETY: forwarded from the caller.
                unsafe { self.destroy(block, offset) };
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

    /// Releases the slots' share of `block` once the slots below `count` are
    /// all finished: stops at the first slot (from the top) not finished yet
    /// and leaves the rest to whoever finishes it.
    ///
    /// # Safety
    /// Every position of the block has been claimed, the slots from `count`
    /// up are finished, and the caller does not touch `block` afterwards.
    unsafe fn destroy(&self, block: *mut Block<T>, count: usize) {
        let policy = self.policy;
        for offset in (0..count).rev() {
            // SAFETY: a slot below `count` not finished keeps the block
            // allocated; one that is finished cannot release the share
            // without us (proofs-notes/injector.md#reclamation).
            let slot = unsafe { &(*block).slots[offset] };
            // Ordering: Acquire, then AcqRel, paired with the finisher's AcqRel
            // mark: a finished slot's users are done before the free; an
            // unfinished one is handed the free (proofs-notes/injector.md#reclamation).
            if slot
                .state
                .load(choose!(policy, InjectorDestroyAcquire, Acquire, Relaxed))
                & READ
                == 0
                && slot.state.fetch_or(
                    DESTROY,
                    choose!(policy, InjectorDestroyAcquire, AcqRel, Release),
                ) & READ
                    == 0
            {
                return;
            }
        }
        // SAFETY: every slot is finished (proofs-notes/injector.md#reclamation).
        unsafe { self.release_share(block) };
    }

    /// Steals the oldest task.
    ///
    /// Returns [`Steal::Retry`] when the attempt got no task although the
    /// queue may still hold some: it lost a race with another steal, or the
    /// slot it claimed belongs to a push that has claimed it but not yet
    /// written its task. The steal waits for such a push only a bounded
    /// time, then gives the slot up and returns `Retry`; the push, when it
    /// comes to write, finds its slot given up and pushes its task again at
    /// the tail, so the task is not lost but comes later in the FIFO order.
    /// crossbeam-deque's steal waits for the push there instead. Call
    /// `steal` again on `Retry`, as with crossbeam-deque.
    ///
    /// ```
    /// use chase_lev::{Injector, Steal};
    ///
    /// let injector = Injector::new();
    /// injector.push(1);
    /// injector.push(2);
    /// assert_eq!(injector.steal(), Steal::Success(1));
    /// assert_eq!(injector.steal(), Steal::Success(2));
    /// assert_eq!(injector.steal(), Steal::Empty);
    /// ```
    pub fn steal(&self) -> Steal<T> {
        let seen = match self.look(1) {
            Steal::Success(seen) => seen,
            Steal::Empty => return Steal::Empty,
            Steal::Retry => return Steal::Retry,
        };
        if !self.claim(&seen, 1) {
            return Steal::Retry;
        }
        if seen.offset + 1 == BLOCK_CAP {
            // SAFETY: the claim reached the last slot, and is not finished.
            unsafe { self.move_head_on(&seen, 1) };
        }
        // SAFETY: the claim keeps the block allocated
        // (proofs-notes/injector.md#reclamation), and it is the block of the
        // claimed position (proofs-notes/injector.md#block-of-an-index).
        let slot = unsafe { &(*seen.block).slots[seen.offset] };
        // SAFETY: claimed by this steal alone, not finished.
        let task = unsafe { self.resolve(slot) }.then(|| {
            // SAFETY: found written, claimed by this steal alone.
            unsafe { self.read(slot) }
        });
        let read = if task.is_some() { 1 << seen.offset } else { 0 };
        // SAFETY: the slot is read or abandoned; `seen.block` is not used below.
        unsafe { self.finish(seen.block, seen.offset, seen.offset + 1, read) };
        match task {
            // SAFETY: written by the push that claimed the slot
            // (proofs-notes/injector.md#task-publication).
            Some(task) => Steal::Success(unsafe { task.assume_init() }),
            // The push that claimed the slot has not written it: it is still
            // running, and will push its task again
            // (proofs-notes/injector.md#abandoned-slots).
            None => Steal::Retry,
        }
    }

    /// Steals a batch of tasks and pushes them into `dest`.
    ///
    /// As crossbeam-deque's: it takes about half of the tasks (at most 32,
    /// and at most the rest of the oldest block of 63 tasks), in the order
    /// that `dest`'s own pops then return the oldest of them first (for a
    /// LIFO `dest` too). A bounded `dest` gets no more than it has room for.
    ///
    /// Returns `Success(())` when `dest` holds at least one task it can pop:
    /// at least one task moved, or the queue had a task but `dest` is bounded
    /// and full (then nothing moves). `Empty` means only that the queue
    /// looked empty, and `Retry` that the attempt got no task although the
    /// queue may hold some (a lost race, or a push that has claimed its slot
    /// but not yet written it; see [`steal`](Injector::steal)).
    ///
    /// ```
    /// use chase_lev::{Injector, Steal, Worker};
    ///
    /// let injector = Injector::new();
    /// for task in 1..=4 {
    ///     injector.push(task);
    /// }
    /// let worker = Worker::new_fifo();
    /// assert_eq!(injector.steal_batch(&worker), Steal::Success(()));
    /// assert_eq!(worker.pop(), Some(1));
    /// assert_eq!(worker.pop(), Some(2));
    /// assert_eq!(worker.pop(), None);
    /// ```
    pub fn steal_batch(&self, dest: &Worker<T>) -> Steal<()> {
        self.steal_batch_with_limit(dest, MAX_BATCH)
    }

    /// As [`steal_batch`](Injector::steal_batch), moving at most `limit`
    /// tasks. The same results: `Success(())` when `dest` holds at least one
    /// task it can pop (at least one moved, or it is bounded and full),
    /// `Empty` only when the queue looked empty.
    ///
    /// # Panics
    /// If `limit` is zero.
    ///
    /// ```
    /// use chase_lev::{Injector, Steal, Worker};
    ///
    /// let injector = Injector::new();
    /// for task in 1..=6 {
    ///     injector.push(task);
    /// }
    /// let worker = Worker::new_lifo();
    /// assert_eq!(injector.steal_batch_with_limit(&worker, 2), Steal::Success(()));
    /// assert_eq!(worker.pop(), Some(1)); // the oldest first, LIFO or not
    /// assert_eq!(worker.pop(), Some(2));
    /// assert_eq!(worker.pop(), None);
    /// ```
    pub fn steal_batch_with_limit(&self, dest: &Worker<T>, limit: usize) -> Steal<()> {
        assert!(
            limit > 0,
            "chase-lev: a batch steal needs a limit of at least 1"
        );
        match self.steal_batch_into(dest, limit, false) {
            Steal::Success(_) => Steal::Success(()),
            Steal::Empty => Steal::Empty,
            Steal::Retry => Steal::Retry,
        }
    }

    /// Steals a batch of tasks, returns the oldest and pushes the rest into
    /// `dest`, as crossbeam-deque's (at most 33 in all by default). Into a
    /// bounded `dest` with no room it still returns one task and moves none,
    /// so `Empty` means only that the queue looked empty.
    ///
    /// ```
    /// use chase_lev::{Injector, Steal, Worker};
    ///
    /// let injector = Injector::new();
    /// for task in 1..=4 {
    ///     injector.push(task);
    /// }
    /// let worker = Worker::new_fifo();
    /// assert_eq!(injector.steal_batch_and_pop(&worker), Steal::Success(1));
    /// assert_eq!(worker.pop(), Some(2));
    /// assert_eq!(worker.pop(), None);
    /// ```
    pub fn steal_batch_and_pop(&self, dest: &Worker<T>) -> Steal<T> {
        self.steal_batch_with_limit_and_pop(dest, MAX_BATCH + 1)
    }

    /// As [`steal_batch_and_pop`](Injector::steal_batch_and_pop), taking at
    /// most `limit` tasks in all (the returned one included): one task even
    /// into a full bounded `dest`, `Empty` only when the queue looked empty.
    ///
    /// # Panics
    /// If `limit` is zero.
    ///
    /// ```
    /// use chase_lev::{Injector, Steal, Worker};
    ///
    /// let injector = Injector::new();
    /// for task in 1..=6 {
    ///     injector.push(task);
    /// }
    /// let worker = Worker::new_fifo();
    /// assert_eq!(injector.steal_batch_with_limit_and_pop(&worker, 2), Steal::Success(1));
    /// assert_eq!(worker.pop(), Some(2));
    /// assert_eq!(worker.pop(), None);
    /// ```
    pub fn steal_batch_with_limit_and_pop(&self, dest: &Worker<T>, limit: usize) -> Steal<T> {
        assert!(
            limit > 0,
            "chase-lev: a batch steal needs a limit of at least 1"
        );
        match self.steal_batch_into(dest, limit, true) {
            Steal::Success(task) => Steal::Success(task.expect("the first task is kept")),
            Steal::Empty => Steal::Empty,
            Steal::Retry => Steal::Retry,
        }
    }

    /// The batch steal. With `keep_first`, the oldest task is returned
    /// instead of being pushed into `dest`.
    fn steal_batch_into(
        &self,
        dest: &Worker<T>,
        limit: usize,
        keep_first: bool,
    ) -> Steal<Option<T>> {
        let seen = match self.look(limit) {
            Steal::Success(seen) => seen,
            Steal::Empty => return Steal::Empty,
            Steal::Retry => return Steal::Retry,
        };
        let keep = usize::from(keep_first);
        // Room first (a bounded destination may have less), before anything
        // is claimed: a growable one grows here, and whatever panics here
        // (capacity overflow) loses no task.
        let room = dest.reserve(seen.batch - keep);
        let count = room + keep;
        if count == 0 {
            // The queue had a task, but `dest` is bounded and full: it holds
            // tasks of its own to pop, so not `Empty`.
            return Steal::Success(None);
        }
        let dest_bottom = dest.bottom();
        if dest_bottom.checked_add(room as i64).is_none() {
            index_space_exhausted();
        }
        if !self.claim(&seen, count) {
            return Steal::Retry;
        }
        let end = seen.offset + count;
        if end == BLOCK_CAP {
            // SAFETY: the claim reached the last slot, and is not finished.
            unsafe { self.move_head_on(&seen, count) };
        }
        // SAFETY: as in `steal`, for every claimed position.
        let block = unsafe { &*seen.block };
        // Which claimed slots are written; the others are abandoned
        // (proofs-notes/injector.md#abandoned-slots).
        let mut read = 0u64;
        let mut written = 0;
        for offset in seen.offset..end {
            // SAFETY: claimed by this steal alone, not finished.
            if unsafe { self.resolve(&block.slots[offset]) } {
                read |= 1 << offset;
                written += 1;
            }
        }
        if written == 0 {
            // SAFETY: nothing read; `block` is not used below.
            unsafe { self.finish(seen.block, seen.offset, end, 0) };
            // Every push of the batch is still running (as in `steal`).
            return Steal::Retry;
        }
        let moving = written - keep;
        let mut kept = None;
        let mut moved = 0;
        let dest_buffer = dest.buffer();
        let lifo = dest.inner.flavor == Flavor::Lifo;
        for offset in (seen.offset..end).filter(|offset| read & (1 << offset) != 0) {
            // SAFETY: claimed by this steal alone, found written.
            let task = unsafe { self.read(&block.slots[offset]) };
            if keep_first && kept.is_none() {
                kept = Some(task);
                continue;
            }
            // crossbeam's order: a FIFO destination gets the tasks oldest
            // first, a LIFO one newest first, so that its pops return the
            // oldest first either way.
            let at = if lifo { moving - 1 - moved } else { moved };
            // SAFETY: the task was written (the `WRITE` bit); the destination
            // slots past its bottom are reserved (`moving <= room`) and no
            // thief reads them until `publish` (proofs-notes/reclamation.md#no-wrap).
            unsafe { dest_buffer.write(dest_bottom + at as i64, task.assume_init()) };
            moved += 1;
        }
        if moved > 0 {
            dest.publish(dest_bottom, moved as i64);
        }
        // SAFETY: every claimed slot is read or abandoned; `block` is not
        // used below.
        unsafe { self.finish(seen.block, seen.offset, end, read) };
        // SAFETY: as in `steal`.
        Steal::Success(kept.map(|task| unsafe { task.assume_init() }))
    }

    /// A snapshot of both indices at one moment: the tail is loaded before
    /// and after the head, and only an unchanged tail is used
    /// (proofs-notes/injector.md#len). Each position on a block's marker is
    /// moved on to the next lap's first slot.
    fn indices(&self) -> (u64, u64) {
        loop {
            // Ordering: SeqCst, as crossbeam's: a client's store-buffering
            // handshake around `is_empty` holds
            // (proofs-notes/injector.md#len).
            let tail = self.tail.index.load(SeqCst);
            let head = self.head.index.load(SeqCst);
            if self.tail.index.load(SeqCst) == tail {
                let fix = |index: u64| {
                    let position = position(index);
                    if position % LAP == LAP - 1 {
                        position.wrapping_add(1) & POSITION_MASK
                    } else {
                        position
                    }
                };
                return (fix(head), fix(tail));
            }
        }
    }

    /// Returns `true` if the queue was empty at one moment during the call.
    ///
    /// ```
    /// use chase_lev::Injector;
    ///
    /// let injector = Injector::new();
    /// assert!(injector.is_empty());
    /// injector.push(1);
    /// assert!(!injector.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        let (head, tail) = self.indices();
        head == tail
    }

    /// The number of tasks in the queue at one moment during the call
    /// (counting pushes that have claimed their slot and are writing it).
    ///
    /// ```
    /// use chase_lev::Injector;
    ///
    /// let injector = Injector::new();
    /// injector.push(1);
    /// injector.push(2);
    /// assert_eq!(injector.len(), 2);
    /// ```
    pub fn len(&self) -> usize {
        let (head, tail) = self.indices();
        let distance = tail.wrapping_sub(head) & POSITION_MASK;
        // Every marker between the two is a position without a task.
        let markers = (distance + head % LAP) / LAP;
        (distance - markers) as usize
    }
}

#[cfg(any(chase_lev_loom, chase_lev_shuttle, chase_lev_mutants))]
impl<T> Injector<T> {
    /// (Model and mutant builds only.) Makes `hook` run at every [`Pause`]
    /// point of this injector's operations.
    pub fn set_pause(&mut self, hook: PauseHook) {
        self.pause = Some(hook);
    }
}

#[cfg(chase_lev_mutants)]
impl<T> Injector<T> {
    /// (Mutant builds only.) An injector whose orderings are those of
    /// `mutant`, or the correct ones for `None`.
    pub fn new_mutant(mutant: Option<crate::Mutant>) -> Injector<T> {
        Injector::build(Policy { mutant }, 0)
    }

    /// (Mutant builds only.) `new_mutant`, with a pause hook.
    pub fn new_pausing(mutant: Option<crate::Mutant>, hook: PauseHook) -> Injector<T> {
        let mut injector = Injector::new_mutant(mutant);
        injector.set_pause(hook);
        injector
    }
}

#[cfg(all(test, not(chase_lev_loom)))]
impl<T> Injector<T> {
    /// An injector whose first position is `first` (a multiple of `LAP`).
    pub(crate) fn starting_at(first: u64) -> Injector<T> {
        Injector::build(Policy::default(), first)
    }

    pub(crate) const LAP: u64 = LAP;
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

impl<T> fmt::Debug for Injector<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("Injector { .. }")
    }
}

#[cfg(all(test, not(chase_lev_loom)))]
mod tests;
