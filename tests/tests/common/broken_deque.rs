//! A small Chase-Lev deque for `u64` tasks, with sequentially consistent
//! atomics and a fixed ring, into which one flaw can be planted: the planted
//! bugs that the deque crate's mutants do not cover. Without a flaw it is a
//! correct deque (a control test checks that), so that a failure with a flaw
//! is the flaw's doing.
//!
//! It is generic over where its atomics come from ([`Atomics`]): std's for
//! hardware threads, shuttle's for the shuttle driver.

use std::sync::Arc;

use chase_lev_tests::harness::DequeUnderTest;
use chase_lev_tests::history::{Flavor, Outcome, Task};
use chase_lev_tests::scenario::Destination;

/// The deliberate bug.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flaw {
    /// No bug: the control.
    None,
    /// A thief claims its task with a plain store of `top + 1` instead of a
    /// compare-and-swap, so two thieves (or a thief and the owner) can take
    /// the same task.
    StealWithoutCas,
    /// A batch steal takes every task it sees (up to its limit) instead of
    /// half of them.
    BatchTakesAll,
    /// A batch steal claims at `top` but reads the newest tasks, at the
    /// bottom end.
    BatchFromWrongEnd,
}

/// Sequentially consistent 64-bit atomics from one library.
pub trait Atomics: Send + Sync + 'static {
    /// The ring's size: more than any scenario of this driver pushes, so
    /// that it never fills.
    const RING: usize;
    type Index: Send + Sync;
    type Slot: Send + Sync;
    fn index(value: i64) -> Self::Index;
    fn load(index: &Self::Index) -> i64;
    fn store(index: &Self::Index, value: i64);
    fn compare_exchange(index: &Self::Index, current: i64, new: i64) -> bool;
    fn slot() -> Self::Slot;
    fn read(slot: &Self::Slot) -> u64;
    fn write(slot: &Self::Slot, value: u64);
}

/// Std's atomics, for hardware threads.
pub struct StdAtomics;

impl Atomics for StdAtomics {
    const RING: usize = 256;
    type Index = std::sync::atomic::AtomicI64;
    type Slot = std::sync::atomic::AtomicU64;
    fn index(value: i64) -> Self::Index {
        std::sync::atomic::AtomicI64::new(value)
    }
    fn load(index: &Self::Index) -> i64 {
        index.load(std::sync::atomic::Ordering::SeqCst)
    }
    fn store(index: &Self::Index, value: i64) {
        index.store(value, std::sync::atomic::Ordering::SeqCst)
    }
    fn compare_exchange(index: &Self::Index, current: i64, new: i64) -> bool {
        use std::sync::atomic::Ordering::SeqCst;
        index.compare_exchange(current, new, SeqCst, SeqCst).is_ok()
    }
    fn slot() -> Self::Slot {
        std::sync::atomic::AtomicU64::new(0)
    }
    fn read(slot: &Self::Slot) -> u64 {
        slot.load(std::sync::atomic::Ordering::SeqCst)
    }
    fn write(slot: &Self::Slot, value: u64) {
        slot.store(value, std::sync::atomic::Ordering::SeqCst)
    }
}

/// Shuttle's atomics: every access is a point where shuttle may switch
/// threads.
pub struct ShuttleAtomics;

impl Atomics for ShuttleAtomics {
    const RING: usize = 64;
    type Index = shuttle::sync::atomic::AtomicI64;
    type Slot = shuttle::sync::atomic::AtomicU64;
    fn index(value: i64) -> Self::Index {
        shuttle::sync::atomic::AtomicI64::new(value)
    }
    fn load(index: &Self::Index) -> i64 {
        index.load(shuttle::sync::atomic::Ordering::SeqCst)
    }
    fn store(index: &Self::Index, value: i64) {
        index.store(value, shuttle::sync::atomic::Ordering::SeqCst)
    }
    fn compare_exchange(index: &Self::Index, current: i64, new: i64) -> bool {
        use shuttle::sync::atomic::Ordering::SeqCst;
        index.compare_exchange(current, new, SeqCst, SeqCst).is_ok()
    }
    fn slot() -> Self::Slot {
        shuttle::sync::atomic::AtomicU64::new(0)
    }
    fn read(slot: &Self::Slot) -> u64 {
        slot.load(shuttle::sync::atomic::Ordering::SeqCst)
    }
    fn write(slot: &Self::Slot, value: u64) {
        slot.store(value, shuttle::sync::atomic::Ordering::SeqCst)
    }
}

struct Shared<A: Atomics> {
    top: A::Index,
    bottom: A::Index,
    ring: Box<[A::Slot]>,
    flavor: Flavor,
    bound: Option<i64>,
    flaw: Flaw,
}

/// A handle on a toy deque (the same type serves the owner and thieves).
pub struct Handle<A: Atomics>(Arc<Shared<A>>);

impl<A: Atomics> Clone for Handle<A> {
    fn clone(&self) -> Self {
        Handle(Arc::clone(&self.0))
    }
}

/// The family of toy deques with one flaw.
pub struct BrokenDeque<A: Atomics> {
    pub flaw: Flaw,
    _atomics: std::marker::PhantomData<fn() -> A>,
}

impl<A: Atomics> BrokenDeque<A> {
    pub fn new(flaw: Flaw) -> Self {
        BrokenDeque {
            flaw,
            _atomics: std::marker::PhantomData,
        }
    }
}

impl<A: Atomics> BrokenDeque<A> {
    fn with_ring(&self, flavor: Flavor, capacity: usize, bounded: bool, ring: usize) -> Handle<A> {
        Handle(Arc::new(Shared {
            top: A::index(0),
            bottom: A::index(0),
            ring: (0..ring).map(|_| A::slot()).collect(),
            flavor,
            bound: bounded.then_some(capacity as i64),
            flaw: self.flaw,
        }))
    }
}

impl<A: Atomics> Clone for BrokenDeque<A> {
    fn clone(&self) -> Self {
        BrokenDeque::new(self.flaw)
    }
}

impl<A: Atomics> Shared<A> {
    fn slot(&self, index: i64) -> &A::Slot {
        &self.ring[index.rem_euclid(self.ring.len() as i64) as usize]
    }

    fn push(&self, task: Task) -> Result<(), Task> {
        let bottom = A::load(&self.bottom);
        let top = A::load(&self.top);
        if self.bound.is_some_and(|bound| bottom - top >= bound) {
            return Err(task);
        }
        assert!(
            bottom - top < self.ring.len() as i64,
            "the toy deque's ring is full"
        );
        A::write(self.slot(bottom), task);
        A::store(&self.bottom, bottom + 1);
        Ok(())
    }

    fn pop(&self) -> Option<Task> {
        match self.flavor {
            Flavor::Lifo => {
                let bottom = A::load(&self.bottom) - 1;
                A::store(&self.bottom, bottom);
                let top = A::load(&self.top);
                if top > bottom {
                    A::store(&self.bottom, bottom + 1);
                    return None;
                }
                let task = A::read(self.slot(bottom));
                if top == bottom {
                    let won = A::compare_exchange(&self.top, top, top + 1);
                    A::store(&self.bottom, bottom + 1);
                    return won.then_some(task);
                }
                Some(task)
            }
            Flavor::Fifo => loop {
                let top = A::load(&self.top);
                let bottom = A::load(&self.bottom);
                if top >= bottom {
                    return None;
                }
                let task = A::read(self.slot(top));
                if A::compare_exchange(&self.top, top, top + 1) {
                    return Some(task);
                }
            },
        }
    }

    /// The thief's look: `(top, bottom)`, or `None` when empty.
    fn look(&self) -> Option<(i64, i64)> {
        let top = A::load(&self.top);
        let bottom = A::load(&self.bottom);
        (top < bottom).then_some((top, bottom))
    }

    /// Claims one task after a look; `from_bottom` reads the newest task
    /// instead of the one it claims.
    fn claim(&self, (top, bottom): (i64, i64), from_bottom: bool) -> Outcome {
        let task = A::read(self.slot(if from_bottom { bottom - 1 } else { top }));
        if self.flaw == Flaw::StealWithoutCas {
            A::store(&self.top, top + 1);
            return Outcome::Stolen(vec![task]);
        }
        if A::compare_exchange(&self.top, top, top + 1) {
            Outcome::Stolen(vec![task])
        } else {
            Outcome::Retry
        }
    }

    fn steal_one(&self) -> Outcome {
        match self.look() {
            Some(seen) => self.claim(seen, false),
            None => Outcome::Empty,
        }
    }

    /// A batch steal as a sequence of single steals, as the real deque does
    /// from a LIFO owner: the first claim uses the look that sized the batch
    /// (so it fails if `top` moved since), later ones look again.
    fn steal_batch(&self, limit: usize) -> Outcome {
        let Some(first) = self.look() else {
            return Outcome::Empty;
        };
        let len = (first.1 - first.0) as usize;
        let count = match self.flaw {
            Flaw::BatchTakesAll => len.min(limit),
            _ => len.div_ceil(2).min(limit),
        };
        let from_bottom = self.flaw == Flaw::BatchFromWrongEnd;
        let mut taken = Vec::new();
        let mut seen = Some(first);
        for _ in 0..count {
            let Some(now) = seen else { break };
            match self.claim(now, from_bottom) {
                Outcome::Stolen(task) => taken.extend(task),
                _ if taken.is_empty() => return Outcome::Retry,
                _ => break,
            }
            seen = self.look();
        }
        Outcome::Stolen(taken)
    }
}

impl<A: Atomics> DequeUnderTest for BrokenDeque<A> {
    type Worker = Handle<A>;
    type Stealer = Handle<A>;

    fn worker(&self, flavor: Flavor, capacity: usize, bounded: bool) -> Handle<A> {
        self.with_ring(flavor, capacity, bounded, A::RING)
    }

    fn stealer(&self, worker: &Handle<A>) -> Handle<A> {
        worker.clone()
    }

    fn push(&self, worker: &Handle<A>, task: Task) {
        worker
            .0
            .push(task)
            .expect("a growable deque takes every push");
    }

    fn try_push(&self, worker: &Handle<A>, task: Task) -> Result<(), Task> {
        worker.0.push(task)
    }

    fn pop(&self, worker: &Handle<A>) -> Option<Task> {
        worker.0.pop()
    }

    fn destination(&self, _destination: Destination) -> Handle<A> {
        // Batches return their tasks directly; the destination is unused.
        self.with_ring(Flavor::Fifo, 1, false, 1)
    }

    fn steal(&self, stealer: &Handle<A>) -> Outcome {
        stealer.0.steal_one()
    }

    fn steal_batch(
        &self,
        stealer: &Handle<A>,
        _destination: &Handle<A>,
        _victim: Flavor,
        limit: Option<usize>,
        _and_pop: bool,
    ) -> Outcome {
        stealer
            .0
            .steal_batch(limit.unwrap_or(chase_lev::DEFAULT_BATCH_LIMIT))
    }
}
