//! The owner-only workloads of the comparison bench, one per process, for
//! `valgrind --tool=callgrind`: instruction counts do not depend on what else
//! runs on the machine. `benches/callgrind.sh` runs every combination
//! and prints instructions per operation.
//!
//! Usage: `owner_paths <chase-lev|st3|crossbeam-deque|Vec> <case>` where case is
//! `push-1k-then-pop-1k`, `push-1M-then-pop-1M`, `push-pop-pairs`, or
//! `steal-1k` (push 1k, then steal them back on the same thread: the steal
//! path without contention; not for Vec), or `steal-empty` (1k steals from an
//! empty deque: an idle thief's attempt), or `pop-empty` (1k owner pops on an
//! empty deque: an idle owner's look), or `steal-only-1k` (as `steal-1k`, but
//! the pushes are outside the measured function: the steal alone, for
//! `benches/steal_breakdown.sh`), or `steal-batch-1k` (push 1k, then a
//! thief takes them back with `steal_batch_and_pop` into its own LIFO
//! worker, which it pops empty after each batch, as the contended bench's
//! batch rows do; every push counts one, and every task taken one, by its
//! batch or by a pop). The process prints the number of
//! operations the measured function performs; callgrind counts the
//! instructions inside `measured_rounds` only (`--toggle-collect`; for
//! `steal-only-1k`, inside `measured_steals_only`).

use chase_lev_bench::{contenders, owner_paths};

use std::hint::black_box;

use contenders::{ChaseLev, Contender, Crossbeam, Owned, OwnerPaths, St3, Taken};
use owner_paths::{pop_empty, push_pop_pairs, push_then_pop, PAIRS_PER_ITERATION};

#[derive(Clone, Copy)]
enum Case {
    PushThenPop(u64),
    Pairs,
    PopEmpty(u64),
    Steal(u64),
    StealEmpty(u64),
    StealOnly(u64),
    StealBatch(u64),
}

impl Case {
    fn parse(name: &str) -> Case {
        match name {
            "push-1k-then-pop-1k" => Case::PushThenPop(1_000),
            "push-1M-then-pop-1M" => Case::PushThenPop(1_000_000),
            "push-pop-pairs" => Case::Pairs,
            "pop-empty" => Case::PopEmpty(1_000),
            "steal-1k" => Case::Steal(1_000),
            "steal-empty" => Case::StealEmpty(1_000),
            "steal-only-1k" => Case::StealOnly(1_000),
            "steal-batch-1k" => Case::StealBatch(1_000),
            _ => panic!("unknown case {name}"),
        }
    }

    /// Measured rounds: enough that one-off costs (the first growth of the
    /// buffer happens in the unmeasured warm-up round anyway) vanish.
    fn rounds(self) -> u64 {
        match self {
            Case::PushThenPop(count) if count >= 1_000_000 => 2,
            _ => 100,
        }
    }

    /// Operations per round: every push and every pop (or steal) counts one.
    fn operations_per_round(self) -> u64 {
        match self {
            Case::PushThenPop(count) | Case::Steal(count) | Case::StealBatch(count) => 2 * count,
            Case::Pairs => 2 * PAIRS_PER_ITERATION,
            Case::PopEmpty(count) | Case::StealEmpty(count) | Case::StealOnly(count) => count,
        }
    }
}

#[inline(always)]
fn one_round<O: OwnerPaths>(owner: &mut O, case: Case) {
    match case {
        Case::PushThenPop(count) => push_then_pop(owner, count),
        Case::Pairs => push_pop_pairs(owner, PAIRS_PER_ITERATION),
        Case::PopEmpty(count) => pop_empty(owner, count),
        Case::Steal(_) | Case::StealEmpty(_) | Case::StealOnly(_) | Case::StealBatch(_) => {
            unreachable!("steals are measured by measured_steal_rounds")
        }
    }
}

/// Not counted: brings the buffer to its working size first.
#[inline(never)]
fn warm_up<O: OwnerPaths>(owner: &mut O, case: Case) {
    one_round(owner, case);
}

/// The only function callgrind counts.
#[inline(never)]
fn measured_rounds<O: OwnerPaths>(owner: &mut O, case: Case, rounds: u64) {
    for _ in 0..rounds {
        one_round(owner, case);
    }
}

/// The only function callgrind counts for the steal cases (its name also
/// matches the `measured_*` pattern of the script).
#[inline(never)]
fn measured_steal_rounds<C: Contender>(
    owner: &C::Owner,
    thief: &C::Thief,
    scratch: &C::Owner,
    case: Case,
    rounds: u64,
) {
    for _ in 0..rounds {
        steal_round::<C>(owner, thief, scratch, case);
    }
}

#[inline(always)]
fn steal_round<C: Contender>(owner: &C::Owner, thief: &C::Thief, scratch: &C::Owner, case: Case) {
    match case {
        Case::Steal(count) => {
            for task in 0..count {
                C::push(owner, black_box(task));
            }
            for _ in 0..count {
                match C::steal(thief, scratch) {
                    Taken::Task(task) => {
                        black_box(task);
                    }
                    other => panic!("a single-threaded steal returned {other:?}"),
                }
            }
        }
        Case::StealBatch(count) => {
            for task in 0..count {
                C::push(owner, black_box(task));
            }
            contenders::take_all::<C>(thief, scratch, count, true);
        }
        Case::StealEmpty(count) => {
            for _ in 0..count {
                match C::steal(thief, scratch) {
                    Taken::Empty => {}
                    other => panic!("a steal from an empty deque returned {other:?}"),
                }
            }
        }
        _ => unreachable!("not a steal case"),
    }
}

/// Not counted: the owner's pushes of a `steal-only-1k` round.
#[inline(never)]
fn refill<C: Contender>(owner: &C::Owner, count: u64) {
    for task in 0..count {
        C::push(owner, black_box(task));
    }
}

#[inline(always)]
fn steals_only<C: Contender>(thief: &C::Thief, scratch: &C::Owner, count: u64) {
    for _ in 0..count {
        match C::steal(thief, scratch) {
            Taken::Task(task) => {
                black_box(task);
            }
            other => panic!("a single-threaded steal returned {other:?}"),
        }
    }
}

/// The only function callgrind counts for `steal-only-1k`: `count` steals,
/// each finding a task, nothing else (the pushes are in `refill`).
#[inline(never)]
fn measured_steals_only<C: Contender>(thief: &C::Thief, scratch: &C::Owner, count: u64) {
    steals_only::<C>(thief, scratch, count);
}

fn run_steal_only<C: Contender>(count: u64, rounds: u64) {
    let owner = C::owner(count as usize);
    let thief = C::thief(&owner);
    let scratch = C::owner(64);
    // Not counted: the first round (the thread's hazard record, the first
    // touches of each deque's state). Inlined here, not a function of its
    // own: LLVM would merge two identical functions into one symbol.
    refill::<C>(&owner, count);
    steals_only::<C>(&thief, &scratch, count);
    for _ in 0..rounds {
        refill::<C>(&owner, count);
        measured_steals_only::<C>(&thief, &scratch, count);
    }
}

fn run_owner<O: OwnerPaths>(mut owner: O, case: Case) {
    warm_up(&mut owner, case);
    measured_rounds(&mut owner, case, case.rounds());
}

fn run_steal<C: Contender>(case: Case) {
    let (Case::Steal(count) | Case::StealEmpty(count) | Case::StealBatch(count)) = case else {
        unreachable!()
    };
    let owner = C::owner(count as usize);
    let thief = C::thief(&owner);
    let scratch = C::owner(64);
    steal_round::<C>(&owner, &thief, &scratch, case);
    measured_steal_rounds::<C>(&owner, &thief, &scratch, case, case.rounds());
}

fn main() {
    let arguments: Vec<String> = std::env::args().collect();
    let [_, deque, case] = arguments.as_slice() else {
        panic!("usage: owner_paths <chase-lev|st3|crossbeam-deque|Vec> <case>");
    };
    let case = Case::parse(case);
    let capacity = match case {
        Case::PushThenPop(count)
        | Case::Steal(count)
        | Case::StealEmpty(count)
        | Case::StealOnly(count)
        | Case::StealBatch(count) => count as usize,
        Case::Pairs | Case::PopEmpty(_) => 1,
    };
    if let Case::StealOnly(count) = case {
        match deque.as_str() {
            ChaseLev::NAME => run_steal_only::<ChaseLev>(count, case.rounds()),
            St3::NAME => run_steal_only::<St3>(count, case.rounds()),
            Crossbeam::NAME => run_steal_only::<Crossbeam>(count, case.rounds()),
            _ => panic!("{deque} has no steal"),
        }
        println!("operations {}", case.operations_per_round() * case.rounds());
        return;
    }
    match (deque.as_str(), case) {
        (ChaseLev::NAME, Case::Steal(_) | Case::StealEmpty(_) | Case::StealBatch(_)) => {
            run_steal::<ChaseLev>(case)
        }
        (St3::NAME, Case::Steal(_) | Case::StealEmpty(_) | Case::StealBatch(_)) => {
            run_steal::<St3>(case)
        }
        (Crossbeam::NAME, Case::Steal(_) | Case::StealEmpty(_) | Case::StealBatch(_)) => {
            run_steal::<Crossbeam>(case)
        }
        ("Vec", Case::Steal(_) | Case::StealEmpty(_) | Case::StealBatch(_)) => {
            panic!("Vec has no steal")
        }
        (ChaseLev::NAME, _) => run_owner(Owned::<ChaseLev>(ChaseLev::owner(capacity)), case),
        (St3::NAME, _) => run_owner(Owned::<St3>(St3::owner(capacity)), case),
        (Crossbeam::NAME, _) => run_owner(Owned::<Crossbeam>(Crossbeam::owner(capacity)), case),
        ("Vec", _) => run_owner(Vec::<u64>::new(), case),
        _ => panic!("unknown deque {deque}"),
    }
    println!("operations {}", case.operations_per_round() * case.rounds());
}
