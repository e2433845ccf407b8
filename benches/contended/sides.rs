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
//! pushes do nothing; its batches are of one task.

use std::cell::Cell;
use std::hint::black_box;
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

    /// The first value of the next chunk and the end of that chunk; none
    /// once every value is handed out (without a write: a consumer may ask
    /// again on every `Empty`). Not inlined, and given no pointer to the
    /// taker's `Chunk`, so that the compiler keeps the chunk in registers.
    #[inline(never)]
    fn claim(&self) -> Option<(u64, u64)> {
        if self.next.load(Relaxed) >= self.end {
            return None;
        }
        let start = self.next.fetch_add(self.chunk, Relaxed);
        (start < self.end).then(|| (start, (start + self.chunk).min(self.end)))
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
        let (start, end) = chunks.claim()?;
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
        value = black_box(value);
    }
    value
}

/// The null deque.
pub struct NullDeque;

/// A null deque's owner or thief: the queue and its own chunk.
pub struct NullTaker {
    chunks: Arc<Chunks>,
    chunk: Chunk,
}

impl NullTaker {
    #[inline(always)]
    fn steal(&self) -> Taken {
        self.chunk.steal(&self.chunks)
    }
}

impl DequeSide for NullDeque {
    type Owner = NullTaker;
    type Thief = NullTaker;
    type Mine = ();

    fn filled(tasks: u64, thieves: u64, owner_pops: bool) -> NullTaker {
        NullTaker {
            chunks: Arc::new(Chunks::new(tasks, thieves + u64::from(owner_pops))),
            chunk: Chunk::default(),
        }
    }
    fn thief(owner: &NullTaker) -> NullTaker {
        NullTaker {
            chunks: owner.chunks.clone(),
            chunk: Chunk::default(),
        }
    }
    fn mine() {}
    #[inline(always)]
    fn pop(owner: &NullTaker) -> Option<u64> {
        owner.chunk.take(&owner.chunks)
    }
    #[inline(always)]
    fn steal(thief: &mut NullTaker, _mine: &()) -> Taken {
        thief.steal()
    }
    #[inline(always)]
    fn steal_batch_and_pop(thief: &mut NullTaker, _mine: &()) -> Taken {
        thief.steal()
    }
    #[inline(always)]
    fn pop_mine(_mine: &()) -> Option<u64> {
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
        black_box(task);
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
