//! The Injector's uncontended paths, one per process, for
//! `valgrind --tool=callgrind` (`benches/callgrind.sh` counts them with the
//! owner paths): instruction counts that do not depend on the machine's load.
//!
//! Usage: `injector_paths <chase-lev|crossbeam-deque> <case>` where case is
//! `injector-push-then-steal` (one thread pushes 100,000 tasks, then steals
//! them all back one by one) or `injector-push-then-steal-batch` (the same,
//! taken back by `steal_batch_and_pop` into a worker and popped from it).
//! The process prints the number of operations (every push, and every task
//! taken, counts one); callgrind counts the instructions inside
//! `measured_injector_rounds` only.

use std::hint::black_box;

const TASKS: u64 = 100_000;
const ROUNDS: u64 = 5;

macro_rules! rounds {
    ($krate:ident, $batch:expr) => {{
        let injector = $krate::Injector::<u64>::new();
        let worker = $krate::Worker::<u64>::new_fifo();
        let round = |injector: &$krate::Injector<u64>| {
            for task in 0..TASKS {
                injector.push(black_box(task));
            }
            let mut taken = 0;
            while taken < TASKS {
                let stolen = if $batch {
                    injector.steal_batch_and_pop(&worker)
                } else {
                    injector.steal()
                };
                if let $krate::Steal::Success(task) = stolen {
                    black_box(task);
                    taken += 1;
                }
                while let Some(task) = worker.pop() {
                    black_box(task);
                    taken += 1;
                }
            }
        };
        warm_up(|| round(&injector));
        measured_injector_rounds(|| round(&injector));
    }};
}

/// Not counted: the first round (the allocator's first blocks).
#[inline(never)]
fn warm_up(round: impl Fn()) {
    round();
}

#[inline(never)]
fn measured_injector_rounds(round: impl Fn()) {
    for _ in 0..ROUNDS {
        round();
    }
}

fn main() {
    let arguments: Vec<String> = std::env::args().collect();
    let [_, queue, case] = arguments.as_slice() else {
        panic!("usage: injector_paths <chase-lev|crossbeam-deque> <case>");
    };
    let batch = match case.as_str() {
        "injector-push-then-steal" => false,
        "injector-push-then-steal-batch" => true,
        _ => panic!("unknown case {case}"),
    };
    match queue.as_str() {
        "chase-lev" => rounds!(chase_lev, batch),
        "crossbeam-deque" => rounds!(crossbeam_deque, batch),
        _ => panic!("unknown queue {queue}"),
    }
    println!("operations {}", 2 * TASKS * ROUNDS);
}
