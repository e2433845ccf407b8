//! What one locked instruction costs on this machine, beside the patterns a
//! steal executes: a CAS alone (st3's steal), the SeqCst fence then a CAS
//! (chase-lev's and crossbeam-deque's), the fence alone, and a plain release
//! store. On x86-64 `fence(SeqCst)` compiles to `lock or` on the stack, the
//! same kind of locked read-modify-write as the CAS
//! (docs/benchmarks.md, "The steal, instruction by instruction").
//!
//! Then the three ways an Injector sets a slot's state bit, each on a fresh
//! word of a row of slots as the pushes and steals of a block do: an add
//! whose old value is used (`lock xadd`, chase-lev's), an or whose old value
//! is unused (`lock or`, crossbeam-deque's push) and an or whose old value
//! is used (a load and a CAS loop, crossbeam-deque's steal).
//!
//! `cargo run --release -p chase-lev-bench --example locked_cost`: the patterns
//! take turns, 300 rounds of 100,000 each, and each keeps its fastest round
//! (ns per iteration). Uses no deque.

use std::hint::black_box;
use std::sync::atomic::{fence, AtomicPtr, AtomicU64, Ordering};
use std::time::Instant;

const ITERATIONS: u64 = 100_000;
const ROUNDS: usize = 300;

/// Two words on lines of their own, like a deque's `top` and a thief's
/// hazard slot.
#[repr(align(128))]
struct Line<T>(T);

struct Words {
    top: Line<AtomicU64>,
    slot: Line<AtomicPtr<u8>>,
    /// Slot states, two words apart as in an Injector block (a state and
    /// a task per slot).
    states: Line<[AtomicU64; 2 * STATES]>,
}

/// Slot states per row: a row spans 16 KiB, in the first-level cache.
const STATES: usize = 1024;

/// One measured loop of `ITERATIONS`.
type Pattern = fn(&Words);

#[inline(never)]
fn cas(words: &Words) {
    for index in 0..ITERATIONS {
        let claimed =
            words
                .top
                .0
                .compare_exchange(index, index + 1, Ordering::SeqCst, Ordering::Relaxed);
        let _ = black_box(claimed);
    }
}

#[inline(never)]
fn fence_then_cas(words: &Words) {
    for index in 0..ITERATIONS {
        fence(Ordering::SeqCst);
        let claimed =
            words
                .top
                .0
                .compare_exchange(index, index + 1, Ordering::SeqCst, Ordering::Relaxed);
        let _ = black_box(claimed);
    }
}

/// A steal's pattern with a hazard slot: announce, fence, CAS, clear.
#[inline(never)]
fn store_fence_cas_store(words: &Words) {
    let announced = words as *const Words as *mut u8;
    for index in 0..ITERATIONS {
        words.slot.0.store(announced, Ordering::Release);
        fence(Ordering::SeqCst);
        let claimed =
            words
                .top
                .0
                .compare_exchange(index, index + 1, Ordering::SeqCst, Ordering::Relaxed);
        let _ = black_box(claimed);
        words.slot.0.store(std::ptr::null_mut(), Ordering::Release);
    }
}

#[inline(never)]
fn fence_alone(_words: &Words) {
    for _ in 0..ITERATIONS {
        fence(Ordering::SeqCst);
        black_box(());
    }
}

#[inline(never)]
fn release_store(words: &Words) {
    for index in 0..ITERATIONS {
        words.top.0.store(black_box(index), Ordering::Release);
    }
}

/// The state word of the `index`-th slot of the row.
fn state(words: &Words, index: u64) -> &AtomicU64 {
    &words.states.0[2 * (index as usize % STATES)]
}

#[inline(never)]
fn add_old_value_used(words: &Words) {
    for index in 0..ITERATIONS {
        let before = state(words, index).fetch_add(1, Ordering::AcqRel);
        black_box(before & 8 != 0);
    }
}

#[inline(never)]
fn or_old_value_unused(words: &Words) {
    for index in 0..ITERATIONS {
        state(words, index).fetch_or(1, Ordering::Release);
        black_box(());
    }
}

#[inline(never)]
fn or_old_value_used(words: &Words) {
    for index in 0..ITERATIONS {
        let before = state(words, index).fetch_or(1, Ordering::AcqRel);
        black_box(before & 8 != 0);
    }
}

fn main() {
    let words = Words {
        top: Line(AtomicU64::new(0)),
        slot: Line(AtomicPtr::new(std::ptr::null_mut())),
        states: Line(std::array::from_fn(|_| AtomicU64::new(0))),
    };
    let patterns: [(&str, Pattern); 8] = [
        ("CAS", cas),
        ("fence(SeqCst); CAS", fence_then_cas),
        ("store; fence; CAS; store", store_fence_cas_store),
        ("fence(SeqCst)", fence_alone),
        ("store (Release)", release_store),
        ("slot: add, old value used", add_old_value_used),
        ("slot: or, old value unused", or_old_value_unused),
        ("slot: or, old value used", or_old_value_used),
    ];
    let mut fastest = [f64::INFINITY; 8];
    for _ in 0..ROUNDS {
        for ((_, pattern), best) in patterns.iter().zip(&mut fastest) {
            words.top.0.store(0, Ordering::Relaxed);
            let start = Instant::now();
            pattern(&words);
            let per_iteration = start.elapsed().as_secs_f64() * 1e9 / ITERATIONS as f64;
            *best = best.min(per_iteration);
        }
    }
    for ((name, _), best) in patterns.iter().zip(fastest) {
        println!("{name:<26} {best:.2} ns");
    }
}
