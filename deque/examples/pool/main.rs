//! A work-stealing pool on chase-lev, to copy from: `pool.rs` is the pool
//! (workers, stealers, an injector, sleeping and waking, termination; each
//! step says why it is there), and this file runs it:
//!
//! ```sh
//! cargo run -p chase-lev --example pool
//! ```
//!
//! The work is a sum over the numbers below `LEN`, split in halves until a
//! piece is at most `LEAF` numbers long: each task spawns its two halves,
//! so most tasks start on one thread and the others steal them. Four roots
//! are submitted from outside the pool, through its injector. Each number
//! is marked when its leaf adds it, so the run checks that every task ran
//! exactly once: no number added twice, none missed, and the sum right.
//!
//! The repository's `tests/downstream-loom` model-checks `pool.rs` itself
//! under loom (`RUSTFLAGS="--cfg chase_lev_loom"`, see chase-lev's README).

mod pool;

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use pool::Pool;

/// The numbers summed: `0..LEN`.
const LEN: usize = 1 << 20;
/// A piece at most this long is summed by one task; longer ones split.
const LEAF: usize = 1 << 10;
/// The roots submitted from outside: `LEN` in this many pieces.
const ROOTS: usize = 4;

fn main() {
    let workers = std::thread::available_parallelism().map_or(4, |n| n.get());
    let marked: Arc<Vec<AtomicBool>> = Arc::new((0..LEN).map(|_| AtomicBool::new(false)).collect());
    let sum = Arc::new(AtomicU64::new(0));
    let pool = {
        let (marked, sum) = (Arc::clone(&marked), Arc::clone(&sum));
        Pool::new(workers, move |piece: Range<usize>, spawner| {
            if piece.len() > LEAF {
                let middle = piece.start + piece.len() / 2;
                spawner.spawn(piece.start..middle);
                spawner.spawn(middle..piece.end);
            } else {
                for number in piece {
                    // Ordering: Relaxed: `join` has joined the workers
                    // before `main` reads the marks and the sum.
                    let twice = marked[number].swap(true, Ordering::Relaxed);
                    assert!(!twice, "{number} added twice: a task ran twice");
                    sum.fetch_add(number as u64, Ordering::Relaxed);
                }
            }
        })
    };
    for root in 0..ROOTS {
        pool.submit(root * LEN / ROOTS..(root + 1) * LEN / ROOTS);
    }
    let ran = pool.join();

    let missed = marked
        .iter()
        .filter(|mark| !mark.load(Ordering::Relaxed))
        .count();
    assert_eq!(missed, 0, "{missed} numbers never added: a task never ran");
    let expected = (LEN as u64) * (LEN as u64 - 1) / 2;
    assert_eq!(sum.load(Ordering::Relaxed), expected);
    // A binary tree over `LEN / LEAF` leaves from `ROOTS` roots.
    let tasks = 2 * LEN / LEAF - ROOTS;
    assert_eq!(ran.iter().sum::<usize>(), tasks);
    println!(
        "{workers} workers ran {tasks} tasks, every one exactly once (per worker: {ran:?}); \
         the sum of 0..{LEN} is {expected}"
    );
}
