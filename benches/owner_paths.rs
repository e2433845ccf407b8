//! The owner-only workloads, shared by the criterion bench and the callgrind
//! example so that both measure exactly the same loops.

#![allow(dead_code)] // each includer uses a different part

use std::hint::black_box;

use super::contenders::OwnerPaths;

/// Pushes `count` tasks, then pops them all: 2 x `count` operations.
#[inline]
pub fn push_then_pop<O: OwnerPaths>(owner: &mut O, count: u64) {
    for task in 0..count {
        owner.push(black_box(task));
    }
    for _ in 0..count {
        black_box(owner.pop());
    }
}

/// `count` times a push immediately followed by a pop: 2 x `count` operations
/// on a deque that stays nearly empty (the common case in fork-join).
#[inline]
pub fn push_pop_pairs<O: OwnerPaths>(owner: &mut O, count: u64) {
    for task in 0..count {
        owner.push(black_box(task));
        black_box(owner.pop());
    }
}

/// `count` pops on an empty deque: `count` operations (an idle owner's look
/// for work of its own).
#[inline]
pub fn pop_empty<O: OwnerPaths>(owner: &mut O, count: u64) {
    for _ in 0..count {
        black_box(owner.pop());
    }
}

/// How many pairs one iteration of the pairs workload makes.
pub const PAIRS_PER_ITERATION: u64 = 1_000;
