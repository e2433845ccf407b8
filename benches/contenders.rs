//! The deques under comparison behind one small interface, so that every
//! scenario is written once and runs the same code for each of them.
//!
//! Tasks are `u64`: one machine word, like the task pointers a scheduler
//! pushes. `chase-lev` and `crossbeam-deque` are created growable with their
//! default capacity, as a scheduler would create them; `st3` is bounded, so
//! each scenario sizes it to hold everything it pushes.
//!
//! Shared by `compare/` (criterion) and `examples/owner_paths.rs`
//! (callgrind instruction counts).
//!
//! The wrappers are `#[inline(always)]`, so that they add no layer of their
//! own: whether a deque's `push` or `pop` is inlined into the measuring loop
//! is decided by that deque's own attributes, as in a scheduler calling it.

#![allow(dead_code)] // each includer uses a different part

/// The outcome of one steal attempt, whatever the library calls it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Taken {
    Task(u64),
    Empty,
    /// The attempt lost a race (crossbeam's and chase-lev's `Retry`, st3's
    /// `StealError::Busy`).
    Retry,
}

/// The owner's side only: what `Vec` can be compared on as well.
pub trait OwnerPaths {
    fn push(&mut self, task: u64);
    fn pop(&mut self) -> Option<u64>;
}

/// A work-stealing deque: an owner handle and a thief handle.
pub trait Contender: 'static {
    /// The name in the criterion report and the tables.
    const NAME: &'static str;
    type Owner: Send;
    type Thief: Clone + Send + Sync;

    /// An owner handle; `capacity` is how many tasks the scenario will hold
    /// at most (only the bounded `st3` uses it).
    fn owner(capacity: usize) -> Self::Owner;
    fn thief(owner: &Self::Owner) -> Self::Thief;
    fn push(owner: &Self::Owner, task: u64);
    fn pop(owner: &Self::Owner) -> Option<u64>;
    /// Steals the oldest task. `scratch` is a worker of the thief's own:
    /// `st3` can only steal into a destination queue, so its single steal is
    /// `steal_and_pop` of exactly one task, which leaves `scratch` untouched.
    fn steal(thief: &Self::Thief, scratch: &Self::Owner) -> Taken;
    /// Steals about half of the tasks (at most 32), returns one and pushes
    /// the rest into `dest`.
    fn steal_batch_and_pop(thief: &Self::Thief, dest: &Self::Owner) -> Taken;
}

/// The largest batch: crossbeam-deque's (and chase-lev's) default limit,
/// applied to st3 too so that the three move the same number of tasks.
const BATCH_LIMIT: usize = 32;

/// The `Contender` of a crate with crossbeam-deque's API (`Worker`,
/// `Stealer`, `Steal`): chase-lev and crossbeam-deque itself, so that both
/// run exactly the same wrapper code.
macro_rules! crossbeam_shaped {
    ($contender:ident, $name:literal, $krate:ident) => {
        pub struct $contender;

        impl Contender for $contender {
            const NAME: &'static str = $name;
            type Owner = $krate::Worker<u64>;
            type Thief = $krate::Stealer<u64>;

            fn owner(_capacity: usize) -> Self::Owner {
                $krate::Worker::new_lifo()
            }
            fn thief(owner: &Self::Owner) -> Self::Thief {
                owner.stealer()
            }
            #[inline(always)]
            fn push(owner: &Self::Owner, task: u64) {
                owner.push(task)
            }
            #[inline(always)]
            fn pop(owner: &Self::Owner) -> Option<u64> {
                owner.pop()
            }
            #[inline(always)]
            fn steal(thief: &Self::Thief, _scratch: &Self::Owner) -> Taken {
                match thief.steal() {
                    $krate::Steal::Success(task) => Taken::Task(task),
                    $krate::Steal::Empty => Taken::Empty,
                    $krate::Steal::Retry => Taken::Retry,
                }
            }
            #[inline(always)]
            fn steal_batch_and_pop(thief: &Self::Thief, dest: &Self::Owner) -> Taken {
                match thief.steal_batch_and_pop(dest) {
                    $krate::Steal::Success(task) => Taken::Task(task),
                    $krate::Steal::Empty => Taken::Empty,
                    $krate::Steal::Retry => Taken::Retry,
                }
            }
        }
    };
}

crossbeam_shaped!(ChaseLev, "chase-lev", chase_lev);
crossbeam_shaped!(Crossbeam, "crossbeam-deque", crossbeam_deque);

pub struct St3;

impl Contender for St3 {
    const NAME: &'static str = "st3";
    type Owner = st3::lifo::Worker<u64>;
    type Thief = st3::lifo::Stealer<u64>;

    fn owner(capacity: usize) -> Self::Owner {
        // Bounded: room for everything the scenario pushes, and at least
        // one batch for a thief's destination.
        st3::lifo::Worker::new(capacity.max(2 * BATCH_LIMIT))
    }
    fn thief(owner: &Self::Owner) -> Self::Thief {
        owner.stealer()
    }
    #[inline(always)]
    fn push(owner: &Self::Owner, task: u64) {
        if owner.push(task).is_err() {
            too_small()
        }
    }
    #[inline(always)]
    fn pop(owner: &Self::Owner) -> Option<u64> {
        owner.pop()
    }
    #[inline(always)]
    fn steal(thief: &Self::Thief, scratch: &Self::Owner) -> Taken {
        st3_taken(thief.steal_and_pop(scratch, |_available| 1))
    }
    #[inline(always)]
    fn steal_batch_and_pop(thief: &Self::Thief, dest: &Self::Owner) -> Taken {
        st3_taken(thief.steal_and_pop(dest, |available| available.div_ceil(2).min(BATCH_LIMIT)))
    }
}

#[inline]
fn st3_taken(result: Result<(u64, usize), st3::StealError>) -> Taken {
    match result {
        Ok((task, _moved)) => Taken::Task(task),
        Err(st3::StealError::Empty) => Taken::Empty,
        Err(st3::StealError::Busy) => Taken::Retry,
    }
}

#[cold]
#[inline(never)]
fn too_small() -> ! {
    panic!("the st3 queue of this scenario was sized too small")
}

/// An owner handle seen through the owner-only interface.
pub struct Owned<C: Contender>(pub C::Owner);

impl<C: Contender> OwnerPaths for Owned<C> {
    #[inline(always)]
    fn push(&mut self, task: u64) {
        C::push(&self.0, task)
    }
    #[inline(always)]
    fn pop(&mut self) -> Option<u64> {
        C::pop(&self.0)
    }
}

/// The floor: a plain `Vec` used as a stack, no atomics at all.
impl OwnerPaths for Vec<u64> {
    #[inline(always)]
    fn push(&mut self, task: u64) {
        Vec::push(self, task)
    }
    #[inline(always)]
    fn pop(&mut self) -> Option<u64> {
        Vec::pop(self)
    }
}

/// The thief takes `tasks` tasks, all there from the start and nobody else
/// taking any: one by one, or in batches that it then pops from its own
/// deque `mine`. A single steal leaves `mine` untouched (st3's moves exactly
/// one task, which it returns), so only a batch is followed by pops.
#[inline(always)]
pub fn take_all<C: Contender>(thief: &C::Thief, mine: &C::Owner, tasks: u64, batch: bool) {
    let mut taken = 0;
    while taken < tasks {
        let attempt = if batch {
            C::steal_batch_and_pop(thief, mine)
        } else {
            C::steal(thief, mine)
        };
        match attempt {
            Taken::Task(task) => {
                std::hint::black_box(task);
                taken += 1;
                if batch {
                    while let Some(task) = C::pop(mine) {
                        std::hint::black_box(task);
                        taken += 1;
                    }
                }
            }
            other => panic!("{}: an uncontended steal returned {other:?}", C::NAME),
        }
    }
}
