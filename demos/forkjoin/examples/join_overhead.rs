//! The cost of one `join` on the fork-join pool of this package
//! against `rayon::join`, in instructions, for callgrind (noise-free, unlike
//! wall-clock time on a shared machine). One thread per pool: this is the
//! fast path (push, run, pop back), no steals.
//!
//! `benches/join_overhead.sh` runs it under callgrind; by hand:
//! `join_overhead <chase-lev|rayon|serial> <n> <cutoff>` computes fib(n)
//! joining above `cutoff` and prints the number of joins.

use chase_lev_forkjoin::workloads::{fib, ChaseLevJoin, RayonJoin, Serial};
use chase_lev_forkjoin::ThreadPool;

/// The joins `fib(n)` makes with this cutoff.
fn joins(n: u32, cutoff: u32) -> u64 {
    if n <= cutoff || n < 2 {
        0
    } else {
        1 + joins(n - 1, cutoff) + joins(n - 2, cutoff)
    }
}

#[inline(never)]
fn measured_chase_lev(pool: &ThreadPool, n: u32, cutoff: u32) -> u64 {
    pool.install(|| fib(ChaseLevJoin, n, cutoff))
}

#[inline(never)]
fn measured_rayon(pool: &rayon::ThreadPool, n: u32, cutoff: u32) -> u64 {
    pool.install(|| fib(RayonJoin, n, cutoff))
}

#[inline(never)]
fn measured_serial(n: u32, cutoff: u32) -> u64 {
    fib(Serial, n, cutoff)
}

fn main() {
    let arguments: Vec<String> = std::env::args().collect();
    let [_, contender, n, cutoff] = arguments.as_slice() else {
        panic!("usage: join_overhead <chase-lev|rayon|serial> <n> <cutoff>");
    };
    let n: u32 = n.parse().expect("n");
    let cutoff: u32 = cutoff.parse().expect("cutoff");
    let value = match contender.as_str() {
        "chase-lev" => measured_chase_lev(&ThreadPool::new(1), n, cutoff),
        "rayon" => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .expect("a rayon pool");
            measured_rayon(&pool, n, cutoff)
        }
        "serial" => measured_serial(n, cutoff),
        other => panic!("unknown contender {other}"),
    };
    std::hint::black_box(value);
    println!("joins {}", joins(n, cutoff));
}
