//! What a sample runs on: the deques and injectors under comparison, and the
//! null queue, behind the two interfaces the samples are written against,
//! so that a row's null run is the very code of its other runs with the
//! queue's operations swapped for a trivially fast queue.
//!
//! The null queue hands the tasks' values out in chunks, a sixteenth of a
//! taker's even share, by one `fetch_add` each; a taker (owner, thief or
//! consumer) counts through its chunk in a register, task by task (the
//! value goes through an empty `asm!` block, so that the compiler cannot
//! sum the loop in closed form). A thread that is not running takes no
//! chunk, as it would take no task from a real queue. Its producers'
//! pushes pass the value through the same empty block (no memory
//! touched); its batches are of one task. A thief's chunk lives in its
//! `Mine`, a local of its thread, so that its counting stays in registers:
//! a null whose loop stores and reloads memory costs as much as 2 ns per
//! task here, a fifth of the cheapest row.

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use crossbeam_utils::CachePadded;

use chase_lev_bench::contenders::{Contender, Taken};
use chase_lev_bench::injectors::InjectorContender;

/// Room in a thief's or consumer's own worker: one batch (at most 32) and
/// then some.
const OWN_WORKER: usize = 64;

/// A work-stealing deque as the deque rows use it.
pub trait DequeSide {
    type Owner;
    /// One thief's handle, moved to its thread.
    type Thief: Send + 'static;
    /// A thief's own worker: where its batches go (st3's scratch queue for
    /// its single steals).
    type Mine;
    /// A fresh deque holding `0..tasks`, pushed in order, for `thieves`
    /// thieves with the owner popping or not.
    fn filled(tasks: u64, thieves: u64, owner_pops: bool) -> Self::Owner;
    /// A thief's handle.
    fn thief(owner: &Self::Owner) -> Self::Thief;
    fn mine() -> Self::Mine;
    fn pop(owner: &Self::Owner) -> Option<u64>;
    fn steal(thief: &mut Self::Thief, mine: &Self::Mine) -> Taken;
    fn steal_batch_and_pop(thief: &mut Self::Thief, mine: &Self::Mine) -> Taken;
    fn pop_mine(mine: &Self::Mine) -> Option<u64>;
}

/// A deque of `chase_lev_bench::contenders`.
pub struct Deque<C>(PhantomData<C>);

impl<C: Contender> DequeSide for Deque<C>
where
    C::Thief: 'static,
{
    type Owner = C::Owner;
    type Thief = C::Thief;
    type Mine = C::Owner;

    fn filled(tasks: u64, _thieves: u64, _owner_pops: bool) -> C::Owner {
        let owner = C::owner(tasks as usize);
        for task in 0..tasks {
            C::push(&owner, task);
        }
        owner
    }
    fn thief(owner: &C::Owner) -> C::Thief {
        C::thief(owner)
    }
    fn mine() -> C::Owner {
        C::owner(OWN_WORKER)
    }
    #[inline(always)]
    fn pop(owner: &C::Owner) -> Option<u64> {
        C::pop(owner)
    }
    #[inline(always)]
    fn steal(thief: &mut C::Thief, mine: &C::Owner) -> Taken {
        C::steal(thief, mine)
    }
    #[inline(always)]
    fn steal_batch_and_pop(thief: &mut C::Thief, mine: &C::Owner) -> Taken {
        C::steal_batch_and_pop(thief, mine)
    }
    #[inline(always)]
    fn pop_mine(mine: &C::Owner) -> Option<u64> {
        C::pop(mine)
    }
}

/// The null queue: the values `0..end`, handed out `chunk` at a time.
pub struct Chunks {
    next: CachePadded<AtomicU64>,
    end: u64,
    chunk: u64,
}

impl Chunks {
    /// `tasks` values for `takers` threads.
    fn new(tasks: u64, takers: u64) -> Chunks {
        Chunks {
            next: CachePadded::new(AtomicU64::new(0)),
            end: tasks,
            chunk: (tasks / (16 * takers.max(1))).max(1),
        }
    }

    /// The first value of the next chunk and the end of that chunk, equal
    /// once every value is handed out (without a write: a consumer may ask
    /// again on every `Empty`). Not inlined, and returning two integers
    /// (in registers) rather than an `Option` (through the caller's
    /// stack, which would keep the taker's `Chunk` in memory too), so
    /// that the compiler keeps the chunk in registers.
    #[inline(never)]
    fn claim(&self) -> (u64, u64) {
        if self.next.load(Relaxed) >= self.end {
            return (self.end, self.end);
        }
        let start = self.next.fetch_add(self.chunk, Relaxed).min(self.end);
        (start, (start + self.chunk).min(self.end))
    }
}

/// A taker's current chunk of the null queue.
#[derive(Default)]
pub struct Chunk {
    next: Cell<u64>,
    end: Cell<u64>,
}

impl Chunk {
    #[inline(always)]
    fn take(&self, chunks: &Chunks) -> Option<u64> {
        let next = opaque(self.next.get());
        if next < self.end.get() {
            self.next.set(next + 1);
            return Some(next);
        }
        let (start, end) = chunks.claim();
        if start == end {
            return None;
        }
        self.next.set(start + 1);
        self.end.set(end);
        Some(start)
    }

    #[inline(always)]
    fn steal(&self, chunks: &Chunks) -> Taken {
        self.take(chunks).map_or(Taken::Empty, Taken::Task)
    }
}

/// `value`, through an empty `asm!` block: the compiler cannot tell that
/// it is unchanged, so a loop over it runs step by step, yet it stays in
/// its register (`black_box` would send it through memory).
#[inline(always)]
fn opaque(mut value: u64) -> u64 {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    // SAFETY: the block is empty: it touches nothing but `value`'s register.
    unsafe {
        std::arch::asm!(
            "/* {0} */",
            inout(reg) value,
            options(pure, nomem, nostack, preserves_flags)
        );
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        value = std::hint::black_box(value);
    }
    value
}

/// The null deque.
pub struct NullDeque;

/// A null deque's owner: the queue and its own chunk.
pub struct NullOwner {
    chunks: Arc<Chunks>,
    chunk: Chunk,
}

impl DequeSide for NullDeque {
    type Owner = NullOwner;
    /// A thief's handle is the queue; its chunk is its `Mine`, a local of
    /// its thread that nothing else points to (so the compiler can keep it
    /// in registers: in the handle, which is dropped through a pointer to
    /// it, it would stay in memory).
    type Thief = Arc<Chunks>;
    type Mine = Chunk;

    fn filled(tasks: u64, thieves: u64, owner_pops: bool) -> NullOwner {
        NullOwner {
            chunks: Arc::new(Chunks::new(tasks, thieves + u64::from(owner_pops))),
            chunk: Chunk::default(),
        }
    }
    fn thief(owner: &NullOwner) -> Arc<Chunks> {
        owner.chunks.clone()
    }
    fn mine() -> Chunk {
        Chunk::default()
    }
    #[inline(always)]
    fn pop(owner: &NullOwner) -> Option<u64> {
        owner.chunk.take(&owner.chunks)
    }
    #[inline(always)]
    fn steal(thief: &mut Arc<Chunks>, mine: &Chunk) -> Taken {
        mine.steal(thief)
    }
    #[inline(always)]
    fn steal_batch_and_pop(thief: &mut Arc<Chunks>, mine: &Chunk) -> Taken {
        mine.steal(thief)
    }
    #[inline(always)]
    fn pop_mine(_mine: &Chunk) -> Option<u64> {
        None
    }
}

/// An Injector as the injector rows use it.
pub trait InjectorSide {
    type Queue: Send + Sync + 'static;
    /// One consumer's handle (the null queue's share), moved to its thread.
    type Consumer: Send + 'static;
    type Worker;
    /// A fresh queue for `tasks` tasks and `consumers` consumers (none: the
    /// producer takes them back).
    fn queue(tasks: u64, consumers: u64) -> Self::Queue;
    fn consumer() -> Self::Consumer;
    fn worker() -> Self::Worker;
    fn push(queue: &Self::Queue, task: u64);
    fn steal(queue: &Self::Queue, consumer: &mut Self::Consumer) -> Taken;
    fn steal_batch_and_pop(
        queue: &Self::Queue,
        consumer: &mut Self::Consumer,
        worker: &Self::Worker,
    ) -> Taken;
    fn pop(worker: &Self::Worker) -> Option<u64>;
}

/// An injector of `chase_lev_bench::injectors`.
pub struct Injector<C>(PhantomData<C>);

impl<C: InjectorContender> InjectorSide for Injector<C>
where
    C::Queue: 'static,
{
    type Queue = C::Queue;
    type Consumer = ();
    type Worker = C::Worker;

    fn queue(_tasks: u64, _consumers: u64) -> C::Queue {
        C::queue()
    }
    fn consumer() {}
    fn worker() -> C::Worker {
        C::worker()
    }
    #[inline(always)]
    fn push(queue: &C::Queue, task: u64) {
        C::push(queue, task)
    }
    #[inline(always)]
    fn steal(queue: &C::Queue, _consumer: &mut ()) -> Taken {
        C::steal(queue)
    }
    #[inline(always)]
    fn steal_batch_and_pop(queue: &C::Queue, _consumer: &mut (), worker: &C::Worker) -> Taken {
        C::steal_batch_and_pop(queue, worker)
    }
    #[inline(always)]
    fn pop(worker: &C::Worker) -> Option<u64> {
        C::pop(worker)
    }
}

/// The null injector: pushes do nothing, consumers take chunks.
pub struct NullInjector;

impl InjectorSide for NullInjector {
    type Queue = Chunks;
    type Consumer = Chunk;
    type Worker = ();

    fn queue(tasks: u64, consumers: u64) -> Chunks {
        Chunks::new(tasks, consumers)
    }
    fn consumer() -> Chunk {
        Chunk::default()
    }
    fn worker() {}
    #[inline(always)]
    fn push(_queue: &Chunks, task: u64) {
        opaque(task);
    }
    #[inline(always)]
    fn steal(queue: &Chunks, consumer: &mut Chunk) -> Taken {
        consumer.steal(queue)
    }
    #[inline(always)]
    fn steal_batch_and_pop(queue: &Chunks, consumer: &mut Chunk, _worker: &()) -> Taken {
        consumer.steal(queue)
    }
    #[inline(always)]
    fn pop(_worker: &()) -> Option<u64> {
        None
    }
}
