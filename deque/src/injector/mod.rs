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
//!   writes its task into the slot and publishes it with one read-modify-write
//!   that sets the slot's `WRITE` bit; if the state it returns shows that the
//!   steal of that slot gave up on it first (`ABANDONED`), the push takes its
//!   task back and pushes it again.
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
//! are the same too: a CAS per push on the tail index and an RMW on its slot, a
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
//!
//! # The files
//!
//! This one has the public API, the push and the steals; `blocks.rs` the
//! blocks and slots, and their reclamation; `cursors.rs` the cursors, their
//! tickets and the moves over a block end; `hooks.rs` what the internal
//! builds add (the pause points' hooks and constructors).

mod blocks;
mod cursors;
mod hooks;

use core::fmt;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::ptr;

use crossbeam_utils::CachePadded;

use crate::atomic::{AtomicPtr, AtomicU64, Named};
use crate::batch::assert_batch_limit;
use crate::deque::Worker;
use crate::deque::{index_space_exhausted, Flavor};
#[cfg(chase_lev_mutants)]
use crate::sites::mutant;
use crate::sites::site;
use crate::steal::{success_or_return, Steal};
use crate::sync::Backoff;
use crate::sync::Ordering::{Acquire, Release, SeqCst};
use blocks::{
    lap, offset, past_marker, position, untag, Block, ABANDONED, BLOCK_CAP, LAP, ONE,
    POSITION_MASK, SHIFT, TICKETS, WRITE,
};
use cursors::{Cursor, Side};
pub use hooks::Pause;
#[cfg(chase_lev_hooks)]
pub use hooks::PauseHook;

/// The most tasks a batch steal moves when the caller gives no limit
/// (crossbeam-deque's default; `steal_batch_and_pop` takes one more).
const MAX_BATCH: usize = crate::DEFAULT_BATCH_LIMIT;

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
    /// (Mutant builds.) The mutant this queue carries (`sites.rs`).
    #[cfg(chase_lev_mutants)]
    mutant: Option<crate::sites::Mutant>,
    /// (Internal builds.) Called at the `Pause` points.
    #[cfg(chase_lev_hooks)]
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
        Injector::build(0)
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
    fn build(first: u64) -> Injector<T> {
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
            #[cfg(chase_lev_mutants)]
            mutant: crate::sites::mutant_of_a_new_deque(),
            #[cfg(chase_lev_hooks)]
            pause: None,
            _tasks: PhantomData,
        }
    }

    /// (GenMC build only.) Gives the cursors' atomics their atomic initial
    /// stores (`sync::InitialValue`): a scenario calls it once the injector
    /// is where it stays, before another thread can see it.
    #[cfg(chase_lev_genmc)]
    #[doc(hidden)]
    pub fn store_initial_values(&self) {
        use crate::sync::InitialValue;
        for cursor in [&self.head, &self.tail] {
            cursor.index.store_initial_value();
            cursor.block.store_initial_value();
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
        #[cfg(chase_lev_mutants)]
        crate::sites::enter(self.mutant);
        if let Some(task) = self.push_once(task) {
            self.push_again(task);
        }
    }

    /// The pushes after an abandoned one, out of line: the first attempt's
    /// code stays free of the loop and of the task's way back.
    #[cold]
    #[inline(never)]
    fn push_again(&self, mut task: T) {
        while let Some(back) = self.push_once(task) {
            task = back;
        }
    }

    /// One attempt to push: claims the position at the tail and publishes
    /// `task` there. Returns the task if the steal of that slot gave up on
    /// it first: then the attempt has not taken effect
    /// (proofs-notes/injector.md#abandoned-slots).
    #[inline(always)]
    fn push_once(&self, task: T) -> Option<T> {
        // Allocated before the CAS that claims a block's last slot, so that
        // the block end costs the other pushes as little as possible.
        let mut spare: *mut Block<T> = ptr::null_mut();
        // Ordering: Acquire, so that the block loaded next is at least the
        // one whose lap this index is in (proofs-notes/injector.md#block-of-an-index).
        let mut tail = self
            .tail
            .index
            .load(site!(InjectorTailIndexAcquire, Acquire));
        let mut block = untag(self.tail.load_block_word());
        let mut contention = Backoff::default();
        let claimed = loop {
            let offset = offset(tail);
            if offset == BLOCK_CAP {
                // Every slot of the block is claimed: help the tail over
                // the block end instead of waiting for the push that
                // claimed the last one (proofs-notes/injector.md#tickets).
                self.help(Side::Tail, &mut spare);
                // Ordering: Acquire, as above (proofs-notes/injector.md#block-of-an-index).
                tail = self
                    .tail
                    .index
                    .load(site!(InjectorTailIndexAcquire, Acquire));
                block = untag(self.tail.load_block_word());
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
                site!(InjectorPushCasSeqCst, SeqCst),
                site!(InjectorTailIndexAcquire, Acquire),
            ) {
                Ok(_) => break offset,
                Err(current) => {
                    // Another push took the position: let it finish before
                    // trying the next, as crossbeam-deque's push does, so
                    // that pushers do not take the tail's line from each
                    // other at every try (docs/benchmarks.md#the-rows-not-met).
                    contention.wait();
                    tail = current;
                    block = untag(self.tail.load_block_word());
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
        unsafe { slot.task.write(MaybeUninit::new(task)) };
        // Ordering: Release: the steal that sees `WRITE` with acquire
        // reads the task's bytes (proofs-notes/injector.md#task-publication).
        // One RMW, as crossbeam's: the state it returns says whether the
        // steal of this slot gave up on it first
        // (proofs-notes/injector.md#abandoned-slots).
        let state = slot.set_once(WRITE, site!(InjectorWriteRelease, Release));
        if !spare.is_null() {
            // Allocated for a block end that another thread linked.
            // SAFETY: never published: this thread is its only user.
            unsafe { Block::free(spare) };
        }
        if state & ABANDONED == 0 {
            return None;
        }
        // SAFETY: the slot is ours, written above and abandoned; `block`
        // is the block of `claimed`.
        Some(unsafe { self.take_back(block, claimed) })
    }

    /// Takes the task back out of an abandoned slot the caller wrote, and
    /// finishes the slot (proofs-notes/injector.md#abandoned-slots).
    ///
    /// # Safety
    /// The caller's push claimed and wrote the slot at `claimed` of
    /// `block`, found it abandoned, and does not touch the block after.
    #[cold]
    #[inline(never)]
    unsafe fn take_back(&self, block: *mut Block<T>, claimed: usize) -> T {
        // SAFETY: the caller's claim keeps the block allocated.
        let slot = unsafe { &(*block).slots[claimed] };
        // SAFETY: written by the caller; no steal reads an abandoned slot.
        let task = unsafe { slot.task.read().assume_init() };
        // The push is the slot's last user: it marks it as a steal marks a
        // slot it read (proofs-notes/injector.md#reclamation).
        // SAFETY: the caller's claim, its only one in the block; the caller
        // does not touch the block after.
        unsafe { self.mark_read(block, claimed) };
        task
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
        #[cfg(chase_lev_mutants)]
        crate::sites::enter(self.mutant);
        let seen = success_or_return!(self.look(1));
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
        // SAFETY: the slot is read or abandoned; `seen.block` is not used below.
        unsafe { self.finish_one(seen.block, seen.offset, task.is_some()) };
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
        #[cfg(chase_lev_mutants)]
        crate::sites::enter(self.mutant);
        assert_batch_limit(limit);
        self.steal_batch_into(dest, limit, false).map(|_| ())
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
        #[cfg(chase_lev_mutants)]
        crate::sites::enter(self.mutant);
        assert_batch_limit(limit);
        self.steal_batch_into(dest, limit, true)
            .map(|task| task.expect("the first task is kept"))
    }

    /// The batch steal. With `keep_first`, the oldest task is returned
    /// instead of being pushed into `dest`.
    fn steal_batch_into(
        &self,
        dest: &Worker<T>,
        limit: usize,
        keep_first: bool,
    ) -> Steal<Option<T>> {
        let seen = success_or_return!(self.look(limit));
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
        // SAFETY: as in `steal`, for every claimed position.
        let block = unsafe { &*seen.block };
        // Which claimed slots are written; the others are abandoned
        // (proofs-notes/injector.md#abandoned-slots).
        let mut read = 0u64;
        for offset in seen.offset..end {
            // SAFETY: claimed by this steal alone, not finished.
            if unsafe { self.resolve(&block.slots[offset]) } {
                read |= 1 << offset;
            }
        }
        let written = read.count_ones() as usize;
        let moving = written.saturating_sub(keep);
        let mut kept = None;
        let mut moved = 0;
        let dest_buffer = dest.buffer();
        let lifo = dest.flavor() == Flavor::Lifo;
        let mut unread = read;
        while unread != 0 {
            let offset = unread.trailing_zeros() as usize;
            unread &= unread - 1;
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
            #[cfg(chase_lev_mutants)]
            let at = match () {
                _ if !mutant!(InjectorBatchReversed) => at,
                _ if lifo => moved,
                _ => moving - 1 - moved,
            };
            // SAFETY: the task was written (the `WRITE` bit); the destination
            // slots past its bottom are reserved (`moving <= room`) and no
            // thief reads them until `publish` (proofs-notes/reclamation.md#no-wrap).
            unsafe { dest_buffer.write(dest_bottom + at as i64, task.assume_init()) };
            moved += 1;
        }
        if moved > 0 {
            dest.publish(dest_bottom, moved as i64);
        }
        if end == BLOCK_CAP {
            // Only now, with `dest` published: moving the head on may
            // allocate or free a block, and the global allocator may then
            // run an operation of `dest`'s owner, which must find `dest`
            // whole (proofs-notes/reclamation.md#reentrant-owner-operations).
            // SAFETY: the claim reached the last slot, and is not finished.
            unsafe { self.move_head_on(&seen, count) };
        }
        // SAFETY: every claimed slot is read or abandoned; `block` is not
        // used below.
        unsafe { self.finish(seen.block, seen.offset, end, read) };
        if written == 0 {
            // Every push of the batch is still running (as in `steal`).
            return Steal::Retry;
        }
        // SAFETY: as in `steal`.
        Steal::Success(kept.map(|task| unsafe { task.assume_init() }))
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
        #[cfg(chase_lev_mutants)]
        crate::sites::enter(self.mutant);
        // Two loads, the head's first: empty at the tail's load if both are
        // at the same position; else some push claimed a slot after the
        // head's load, and its task was in the queue then
        // (proofs-notes/injector.md#len).
        // Ordering: SeqCst, as crossbeam's: a client's store-buffering
        // handshake around `is_empty` holds (proofs-notes/injector.md#len).
        let head = self.head.index.load(SeqCst);
        let tail = self.tail.index.load(SeqCst);
        position(past_marker(head)) == position(past_marker(tail))
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
        #[cfg(chase_lev_mutants)]
        crate::sites::enter(self.mutant);
        let (head, tail) = self.indices();
        let distance = tail.wrapping_sub(head) & POSITION_MASK;
        // Every marker between the two is a position without a task.
        let markers = (distance + head % LAP) / LAP;
        (distance - markers) as usize
    }
}

impl<T> fmt::Debug for Injector<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad("Injector { .. }")
    }
}

#[cfg(all(test, not(chase_lev_loom)))]
mod tests;
