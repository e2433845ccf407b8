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
//! - A push claims the position at `tail` with a CAS on the tail index. The
//!   push that claims a block's last slot also installs the next block (it
//!   allocates it before its CAS). It then writes its task into the slot and
//!   sets the slot's `WRITE` bit.
//! - A steal claims the position(s) at `head` with a CAS on the head index,
//!   having first checked the tail (behind a SeqCst fence) unless `HAS_NEXT`
//!   says the tail is in a later block. The steal that claims a block's last
//!   slot moves the head into the next block. It then waits for `WRITE` and
//!   reads its task(s).
//! - Reclamation needs no epoch: no thread dereferences a block unless it
//!   holds a claimed, unfinished position in it (proofs-notes/injector.md
//!   explains why that suffices). The reader of a block's last slot starts
//!   freeing it; a slot that is still being read when the freer looks at it
//!   gets a `DESTROY` bit, and its reader finishes the free. So the memory of
//!   a block goes back to the allocator as soon as its last task is read.
//!
//! The idea, and the block size, are crossbeam-deque's (so that batch steals
//! take exactly as many tasks as crossbeam's). The costs are the same too:
//! a CAS per push on the tail index, a CAS per steal on the head index, a
//! SeqCst fence per steal when the head and the tail share a block, and an
//! allocation every 63 pushes.
//!
//! # Progress
//!
//! Pushes and steals never take a lock, and a failed CAS means another
//! thread's operation succeeded. Three short waits remain, each on a thread
//! that is between two steps of an operation it has already made take
//! effect (proofs-notes/injector.md#progress): a push waits while the push
//! that claimed a block's last slot installs the next block; a steal waits
//! for the push that claimed its slot to write it; the steal that claimed a
//! block's last slot waits for the next block to be linked. A steal that
//! finds the head on a block's marker (another steal moving it) returns
//! `Retry` instead of waiting.

use core::fmt;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::ptr;

use crossbeam_utils::CachePadded;

use crate::deque::Flavor;
use crate::policy::{fence_if, Policy};
use crate::steal::Steal;
use crate::sync::{
    wait_round, AtomicPtr, AtomicU64, AtomicUsize,
    Ordering::{Relaxed, SeqCst},
    SlotCell,
};
use crate::worker::{index_space_exhausted, Worker};

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

#[inline(always)]
fn position(index: u64) -> u64 {
    index >> SHIFT
}

#[inline(always)]
fn offset(index: u64) -> usize {
    (position(index) % LAP) as usize
}

/// Whether two indices are in the same lap (wrapping included: `LAP`
/// divides 2^63).
#[inline(always)]
fn same_lap(a: u64, b: u64) -> bool {
    position(a) / LAP == position(b) / LAP
}

struct Slot<T> {
    /// `WRITE`, `READ` and `DESTROY`.
    state: AtomicUsize,
    task: SlotCell<T>,
}

struct Block<T> {
    /// The next block, set by the push that claims this block's last slot.
    next: AtomicPtr<Block<T>>,
    slots: [Slot<T>; BLOCK_CAP],
}

impl<T> Block<T> {
    /// A fresh block: every slot empty, no next block. Allocated zeroed and
    /// in place, so that a large `T` never passes through the stack.
    #[cfg(not(any(chase_lev_loom, chase_lev_shuttle)))]
    fn new() -> *mut Block<T> {
        let layout = std::alloc::Layout::new::<Block<T>>();
        // SAFETY: the layout is not zero-sized (a block holds atomics).
        let block = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<Block<T>>();
        if block.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        // All zeroes is a valid block: a null `next`, states of 0, and
        // `MaybeUninit` tasks, which may hold any bytes.
        block
    }

    /// The model checkers' atomics and cells must be created one by one.
    #[cfg(any(chase_lev_loom, chase_lev_shuttle))]
    fn new() -> *mut Block<T> {
        Box::into_raw(Box::new(Block {
            next: AtomicPtr::new(ptr::null_mut()),
            slots: core::array::from_fn(|_| Slot {
                state: AtomicUsize::new(0),
                task: SlotCell::new(),
            }),
        }))
    }

    /// Frees a block made by `new`.
    ///
    /// # Safety
    /// `block` came from `Block::new`, no other thread will touch it again,
    /// and its slots hold no task the queue still owns.
    unsafe fn free(block: *mut Block<T>) {
        // SAFETY: by the caller the block is ours alone; `Box` frees it with
        // the layout `new` allocated it with (`Layout::new::<Block<T>>()`).
        let mut block = unsafe { Box::from_raw(block) };
        for slot in block.slots.iter_mut() {
            slot.task.before_free();
        }
        drop(block);
    }
}

/// A cursor: the index of a position and the block it is in.
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
        Injector {
            head: CachePadded::new(Cursor {
                index: AtomicU64::new(index),
                block: AtomicPtr::new(block),
            }),
            tail: CachePadded::new(Cursor {
                index: AtomicU64::new(index),
                block: AtomicPtr::new(block),
            }),
            policy,
            _tasks: PhantomData,
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
        // Allocated before the CAS that claims a block's last slot, so that
        // the pushes that wait for the new block wait as little as possible.
        let mut spare: *mut Block<T> = ptr::null_mut();
        let mut round = 0;
        // Ordering: Acquire, so that the block loaded next is at least the
        // one whose lap this index is in (proofs-notes/injector.md#block-of-an-index).
        let mut tail = self.tail.index.load(policy.injector_tail_index_load());
        // Ordering: Acquire (proofs-notes/injector.md#block-of-an-index).
        let mut block = self.tail.block.load(policy.injector_block_load());
        let claimed = loop {
            let offset = offset(tail);
            if offset == BLOCK_CAP {
                // Another push claimed the last slot and is installing the
                // next block (proofs-notes/injector.md#progress).
                wait_round(round);
                round = round.saturating_add(1);
                // Ordering: Acquire, as above (proofs-notes/injector.md#block-of-an-index).
                tail = self.tail.index.load(policy.injector_tail_index_load());
                // Ordering: Acquire (proofs-notes/injector.md#block-of-an-index).
                block = self.tail.block.load(policy.injector_block_load());
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
                policy.injector_push_cas_success(),
                policy.injector_tail_index_load(),
            ) {
                Ok(_) => break offset,
                Err(current) => {
                    tail = current;
                    // Ordering: Acquire (proofs-notes/injector.md#block-of-an-index).
                    block = self.tail.block.load(policy.injector_block_load());
                }
            }
        };
        // SAFETY: the CAS claimed position `claimed` of `block` (the block of
        // the claimed index, proofs-notes/injector.md#block-of-an-index), so
        // the block stays allocated until this slot is read, which needs the
        // `WRITE` bit set below (proofs-notes/injector.md#reclamation).
        let current = unsafe { &*block };
        if claimed + 1 == BLOCK_CAP {
            let next = core::mem::replace(&mut spare, ptr::null_mut());
            let next_lap = tail.wrapping_add(2 * ONE);
            // Ordering: Release, paired with the Acquire loads of the block
            // pointer (proofs-notes/injector.md#block-of-an-index).
            self.tail.block.store(next, policy.injector_block_store());
            // Ordering: Release: a push that reads the new lap's index also
            // reads the new block pointer (proofs-notes/injector.md#block-of-an-index).
            self.tail
                .index
                .store(next_lap, policy.injector_tail_publish());
            // Ordering: Release: the steal that follows the link reads the
            // new block's initialised slots (proofs-notes/injector.md#next-block).
            current.next.store(next, policy.injector_next_store());
        }
        if !spare.is_null() {
            // Allocated for a last slot that another push claimed.
            // SAFETY: never published: this thread is its only user.
            unsafe { Block::free(spare) };
        }
        let slot = &current.slots[claimed];
        // SAFETY: the claimed slot is written only by this push and read only
        // after the `WRITE` bit below (proofs-notes/injector.md#claims).
        unsafe { slot.task.write(MaybeUninit::new(task)) };
        // Ordering: Release: the steal that sees `WRITE` with acquire reads
        // the task's bytes (proofs-notes/injector.md#task-publication).
        slot.state.fetch_or(WRITE, policy.injector_write_mark());
    }

    /// Looks at the head (and, unless `HAS_NEXT`, at the tail) for a steal
    /// that may take up to `limit` positions.
    #[inline]
    fn look(&self, limit: usize) -> Steal<Look<T>> {
        let policy = self.policy;
        // Ordering: Acquire: reads the head index of a completed move to a
        // new block, so the block loaded next is that one, and inherits what
        // earlier steals saw of the tail (proofs-notes/injector.md#block-of-an-index,
        // #read-read-coherence).
        let head = self.head.index.load(policy.injector_head_index_load());
        // Ordering: Acquire (proofs-notes/injector.md#block-of-an-index).
        let block = self.head.block.load(policy.injector_block_load());
        let offset = offset(head);
        if offset == BLOCK_CAP {
            // Another steal is moving the head to the next block: it claimed
            // a task, so this attempt lost a race (proofs-notes/injector.md#progress).
            return Steal::Retry;
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
            fence_if(policy.injector_steal_fence());
            // Ordering: Relaxed, ordered by the fence above
            // (proofs-notes/injector.md#empty).
            let tail = self.tail.index.load(Relaxed);
            if position(head) == position(tail) {
                return Steal::Empty;
            }
            if !same_lap(head, tail) {
                next_head |= HAS_NEXT;
                rest_of_block.min(limit)
            } else {
                let len = (position(tail).wrapping_sub(position(head)) & POSITION_MASK) as usize;
                len.div_ceil(2).min(limit)
            }
        };
        Steal::Success(Look {
            head,
            block,
            offset,
            next_head,
            batch,
        })
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
                policy.injector_head_cas_success(),
                Relaxed,
            )
            .is_ok()
    }

    /// After a claim that took the block's last slot: moves the head to the
    /// next block.
    ///
    /// # Safety
    /// The caller claimed positions up to the last slot of `block`, and has
    /// not yet finished reading them.
    unsafe fn move_head_to_next_block(&self, block: &Block<T>, claimed_head: u64) {
        let policy = self.policy;
        let mut round = 0;
        let next = loop {
            // Ordering: Acquire, paired with the installing push's release
            // store: the new block's slots are seen initialised
            // (proofs-notes/injector.md#next-block).
            let next = block.next.load(policy.injector_next_load());
            if !next.is_null() {
                break next;
            }
            // The push that claimed the last slot is linking the block in
            // (proofs-notes/injector.md#progress).
            wait_round(round);
            round = round.saturating_add(1);
        };
        // `claimed_head` is the marker position; the next lap starts one on.
        let mut next_lap = (claimed_head & !HAS_NEXT).wrapping_add(ONE);
        // SAFETY: the next block is freed only once the head has moved past
        // it, which this call is yet to let happen
        // (proofs-notes/injector.md#reclamation).
        let next_block = unsafe { &*next };
        // Ordering: Relaxed: only a hint that the tail is past the next block;
        // if it is set, every slot of the next block has been claimed
        // (proofs-notes/injector.md#empty).
        if !next_block.next.load(Relaxed).is_null() {
            next_lap |= HAS_NEXT;
        }
        // Ordering: Release, paired with the Acquire loads of the block
        // pointer (proofs-notes/injector.md#block-of-an-index).
        self.head.block.store(next, policy.injector_block_store());
        // Ordering: Release: a steal that reads the new lap's index also
        // reads the new block pointer (proofs-notes/injector.md#block-of-an-index).
        self.head
            .index
            .store(next_lap, policy.injector_head_publish());
    }

    /// Waits for the slot's `WRITE` bit and reads its task.
    ///
    /// # Safety
    /// The caller claimed the slot and has not read it yet.
    unsafe fn read(&self, slot: &Slot<T>) -> MaybeUninit<T> {
        let mut round = 0;
        // Ordering: Acquire, paired with the push's release RMW: the task's
        // bytes are visible (proofs-notes/injector.md#task-publication).
        while slot.state.load(self.policy.injector_written_load()) & WRITE == 0 {
            // The push that claimed this slot is writing it
            // (proofs-notes/injector.md#progress).
            wait_round(round);
            round = round.saturating_add(1);
        }
        // SAFETY: written (the `WRITE` bit), and claimed by the caller alone.
        unsafe { slot.task.read() }
    }

    /// Marks the slots `[first, end)` of `block`, which the caller claimed
    /// and has read, as read; frees the block if the caller's claim reached
    /// its last slot, or if the thread freeing it has left that to us.
    ///
    /// # Safety
    /// As described; the caller does not touch `block` afterwards.
    unsafe fn finish(&self, block: *mut Block<T>, first: usize, end: usize) {
        if end == BLOCK_CAP {
            // The reader of the last slot starts the free; its own slots need
            // no mark (proofs-notes/injector.md#reclamation).
            // SAFETY: forwarded from the caller.
            unsafe { self.destroy(block, first) };
            return;
        }
        for offset in first..end {
            // SAFETY: the caller's claimed slots keep the block allocated.
            let slot = unsafe { &(*block).slots[offset] };
            // Ordering: AcqRel: release so that the freer's acquire orders
            // this thread's read before the free; acquire so that if the
            // freer left the free to us, we free after its checks
            // (proofs-notes/injector.md#reclamation).
            let state = slot.state.fetch_or(READ, self.policy.injector_read_mark());
            if state & DESTROY != 0 {
                // Only the highest of our slots can carry it: the freer checks
                // from the top down, and we mark from the bottom up.
                // SAFETY: the freer found every slot above ours read.
                unsafe { self.destroy(block, first) };
                return;
            }
        }
    }

    /// Frees `block` once the slots below `count` have all been read: stops
    /// at the first slot (from the top) still being read and leaves the rest
    /// of the free to its reader.
    ///
    /// # Safety
    /// Every position of the block has been claimed, the slots from `count`
    /// up are read, and the caller does not touch `block` afterwards.
    unsafe fn destroy(&self, block: *mut Block<T>, count: usize) {
        let policy = self.policy;
        for offset in (0..count).rev() {
            // SAFETY: a slot below `count` whose reader has not finished keeps
            // the block allocated; one that has finished cannot free it
            // without us (proofs-notes/injector.md#reclamation).
            let slot = unsafe { &(*block).slots[offset] };
            // Ordering: Acquire, then AcqRel, paired with the reader's AcqRel
            // mark: a read slot's reader has finished before the free; an
            // unread one is handed the free (proofs-notes/injector.md#reclamation).
            if slot.state.load(policy.injector_destroy_load()) & READ == 0
                && slot.state.fetch_or(DESTROY, policy.injector_destroy_mark()) & READ == 0
            {
                return;
            }
        }
        // SAFETY: every slot has been read, the head has moved past the block,
        // and no thread touches a block without a claim in it
        // (proofs-notes/injector.md#reclamation).
        unsafe { Block::free(block) };
    }

    /// Steals the oldest task.
    ///
    /// Returns [`Steal::Retry`] when the attempt lost a race with another
    /// steal; the queue may still hold tasks.
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
        // SAFETY: the claim keeps the block allocated
        // (proofs-notes/injector.md#reclamation), and it is the block of the
        // claimed position (proofs-notes/injector.md#block-of-an-index).
        let block = unsafe { &*seen.block };
        if seen.offset + 1 == BLOCK_CAP {
            // SAFETY: the claim reached the last slot.
            unsafe { self.move_head_to_next_block(block, seen.next_head) };
        }
        // SAFETY: claimed by this steal alone.
        let task = unsafe { self.read(&block.slots[seen.offset]) };
        // SAFETY: the slot is read; `block` is not used below.
        unsafe { self.finish(seen.block, seen.offset, seen.offset + 1) };
        // SAFETY: written by the push that claimed the slot
        // (proofs-notes/injector.md#task-publication).
        Steal::Success(unsafe { task.assume_init() })
    }

    /// Steals a batch of tasks and pushes them into `dest`.
    ///
    /// As crossbeam-deque's: it takes about half of the tasks (at most 32,
    /// and at most the rest of the oldest block of 63 tasks), in the order
    /// that `dest`'s own pops then return the oldest of them first (for a
    /// LIFO `dest` too). A bounded `dest` gets no more than it has room for;
    /// with no room at all the result is `Empty`.
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
    /// tasks.
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
    /// `dest`, as crossbeam-deque's (at most 33 in all by default).
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
    /// most `limit` tasks in all (the returned one included).
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
            return Steal::Empty;
        }
        let dest_bottom = dest.bottom();
        if dest_bottom.checked_add(room as i64).is_none() {
            index_space_exhausted();
        }
        if !self.claim(&seen, count) {
            return Steal::Retry;
        }
        // SAFETY: as in `steal`, for every claimed position.
        let block = unsafe { &*seen.block };
        let end = seen.offset + count;
        if end == BLOCK_CAP {
            // SAFETY: the claim reached the last slot.
            unsafe {
                self.move_head_to_next_block(
                    block,
                    seen.next_head.wrapping_add((count as u64 - 1) * ONE),
                )
            };
        }
        // SAFETY: claimed by this steal alone.
        let kept = keep_first.then(|| unsafe { self.read(&block.slots[seen.offset]) });
        let dest_buffer = dest.buffer();
        let lifo = dest.inner.flavor == Flavor::Lifo;
        for moved in 0..room {
            // SAFETY: claimed by this steal alone.
            let task = unsafe { self.read(&block.slots[seen.offset + keep + moved]) };
            // crossbeam's order: a FIFO destination gets the tasks oldest
            // first, a LIFO one newest first, so that its pops return the
            // oldest first either way.
            let at = if lifo { room - 1 - moved } else { moved };
            // SAFETY: the task was written (the `WRITE` bit); the destination
            // slots past its bottom are reserved and no thief reads them
            // until `publish` (proofs-notes/reclamation.md#no-wrap).
            unsafe { dest_buffer.write(dest_bottom + at as i64, task.assume_init()) };
        }
        if room > 0 {
            dest.publish(dest_bottom, room as i64);
        }
        // SAFETY: every claimed slot is read; `block` is not used below.
        unsafe { self.finish(seen.block, seen.offset, end) };
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

#[cfg(chase_lev_mutants)]
impl<T> Injector<T> {
    /// (Mutant builds only.) An injector whose orderings are those of
    /// `mutant`, or the correct ones for `None`.
    pub fn new_mutant(mutant: Option<crate::Mutant>) -> Injector<T> {
        Injector::build(Policy { mutant }, 0)
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
        let block = self.head.block.load(Relaxed);
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
