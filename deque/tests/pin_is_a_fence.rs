//! A thief uses crossbeam-epoch's pin as Lê et al.'s steal fence
//! (proofs-notes/reclamation.md#pin-fence). That is an assumption about the
//! crossbeam-epoch in the lockfile, so it is checked here with the
//! store-buffering litmus test the fence exists for: each thread stores its
//! own flag, then reads the other's; with a `SeqCst` fence on both sides at
//! least one of them sees the other's store.
//!
//! Under miri (the `SeqCst` fence is modelled exactly, and relaxed loads may
//! read stale values) both directions are asserted: without a fence the
//! forbidden outcome shows up, so the test can see it, and with a pin in the
//! fence's place it never does. On hardware only the second is asserted:
//! whether two threads overlap at all depends on the machine's load, so the
//! control's count is printed, not asserted.

// The retained-buffers build (`--cfg chase_lev_retain_buffers`, the
// Stacked-Borrows miri run of `.ci/run`) uses no epoch, and Stacked Borrows
// stops inside crossbeam-epoch's own code (crossbeam-rs/crossbeam#545).
#![cfg(not(chase_lev_retain_buffers))]

use std::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering::Relaxed, Ordering::SeqCst};
use std::thread;

/// How the first thread separates its store from its load.
#[derive(Clone, Copy, Debug)]
enum Separator {
    Nothing,
    Pin,
    NestedPin,
}

/// Waits until both threads have arrived at round `round`, so that the two
/// halves of a round run at the same time.
fn meet(arrived: &AtomicUsize, round: usize) {
    arrived.fetch_add(1, SeqCst);
    while arrived.load(SeqCst) < 2 * (round + 1) {
        std::hint::spin_loop();
        if cfg!(miri) {
            thread::yield_now();
        }
    }
}

/// Runs the litmus test `rounds` times on two long-lived threads and counts
/// the rounds in which both read the other's flag as unset.
fn both_missed(separator: Separator, rounds: usize) -> usize {
    let first_flags: Vec<AtomicBool> = (0..rounds).map(|_| AtomicBool::new(false)).collect();
    let second_flags: Vec<AtomicBool> = (0..rounds).map(|_| AtomicBool::new(false)).collect();
    let arrived = AtomicUsize::new(0);
    let (first_saw, second_saw) = thread::scope(|scope| {
        let first = scope.spawn(|| {
            let handle = crossbeam_epoch::default_collector().register();
            let mut saw = Vec::with_capacity(rounds);
            for round in 0..rounds {
                meet(&arrived, round);
                let outer = matches!(separator, Separator::NestedPin).then(|| handle.pin());
                first_flags[round].store(true, Relaxed);
                let guard = match separator {
                    Separator::Nothing => None,
                    Separator::Pin => Some(handle.pin()),
                    Separator::NestedPin => {
                        // What `pin_with_fence` does for an already pinned
                        // thread: the nested pin executes no fence.
                        let guard = handle.pin();
                        fence(SeqCst);
                        Some(guard)
                    }
                };
                saw.push(second_flags[round].load(Relaxed));
                drop(guard);
                drop(outer);
            }
            saw
        });
        let second = scope.spawn(|| {
            let mut saw = Vec::with_capacity(rounds);
            for round in 0..rounds {
                meet(&arrived, round);
                second_flags[round].store(true, Relaxed);
                fence(SeqCst);
                saw.push(first_flags[round].load(Relaxed));
            }
            saw
        });
        (first.join().unwrap(), second.join().unwrap())
    });
    first_saw
        .iter()
        .zip(&second_saw)
        .filter(|(first, second)| !**first && !**second)
        .count()
}

const ROUNDS: usize = if cfg!(miri) { 100 } else { 50_000 };

#[test]
fn a_pin_orders_a_store_before_a_later_load_like_a_seqcst_fence() {
    assert_eq!(both_missed(Separator::Pin, ROUNDS), 0);
}

#[test]
fn a_nested_pin_followed_by_a_fence_orders_them_too() {
    assert_eq!(both_missed(Separator::NestedPin, ROUNDS), 0);
}

#[test]
fn without_a_fence_the_litmus_test_shows_the_forbidden_outcome() {
    let forbidden = both_missed(Separator::Nothing, ROUNDS);
    println!("no fence: both threads missed the other's store in {forbidden} of {ROUNDS} rounds");
    if cfg!(miri) {
        assert!(forbidden > 0, "the checker never saw store buffering");
    }
}
