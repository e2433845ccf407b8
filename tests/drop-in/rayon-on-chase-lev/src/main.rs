//! A rayon program, to run rayon's scheduler on whichever crossbeam-deque the
//! build resolved (chase-lev through the workspace's `[patch.crates-io]`).
//!
//! - `rayon-on-chase-lev check`: each workload at a small size, its result
//!   checked; exits non-zero on a wrong result, or if the deque is not
//!   chase-lev's (unless `--any-deque` is given). This is CI's step.
//! - `rayon-on-chase-lev bench WORKLOAD`: one timed run of one workload at
//!   the benchmark's size; prints `WORKLOAD NANOSECONDS`. The timing covers
//!   the parallel work only (not the input's generation, not the pool's
//!   start-up). benches/rayon_on_chase_lev.sh alternates the two builds.
//!   WORKLOAD is one of `fib-join`, `fib-cutoff`, `sort`, `sum`, or
//!   `fib-serial` (a control without rayon).

use rayon::prelude::*;
use std::process::ExitCode;
use std::time::Instant;

/// Fibonacci with a `rayon::join` at every level: about 2 fib(n) joins, each
/// pushing a job on the worker's deque that an idle thread may steal.
fn fib_join(n: u32) -> u64 {
    if n < 2 {
        return n as u64;
    }
    let (a, b) = rayon::join(|| fib_join(n - 1), || fib_join(n - 2));
    a + b
}

/// Fibonacci with a join only above `cutoff`: the usual way to use join.
fn fib_cutoff(n: u32, cutoff: u32) -> u64 {
    if n <= cutoff {
        return fib_sequential(n);
    }
    let (a, b) = rayon::join(|| fib_cutoff(n - 1, cutoff), || fib_cutoff(n - 2, cutoff));
    a + b
}

fn fib_sequential(n: u32) -> u64 {
    if n < 2 {
        n as u64
    } else {
        fib_sequential(n - 1) + fib_sequential(n - 2)
    }
}

/// fib(n) by iteration, to check the others against.
fn fib_expected(n: u32) -> u64 {
    let (mut a, mut b) = (0u64, 1u64);
    for _ in 0..n {
        (a, b) = (b, a + b);
    }
    a
}

/// `len` pseudo-random integers (xorshift), the same on every run.
fn random_integers(len: usize) -> Vec<u64> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        })
        .collect()
}

/// Which crate the deque types come from, e.g. `chase_lev::worker::Worker<u8>`.
fn deque_type() -> &'static str {
    std::any::type_name::<crossbeam_deque::Worker<u8>>()
}

/// One run of `workload`, at the benchmark's size or a `small` one; returns
/// the nanoseconds of the parallel part, after checking its result.
fn run(workload: &str, small: bool) -> Result<u128, String> {
    let check = |ok: bool, what: String| if ok { Ok(()) } else { Err(what) };
    match workload {
        "fib-join" => {
            let n = if small { 25 } else { 32 };
            let start = Instant::now();
            let got = fib_join(n);
            let elapsed = start.elapsed().as_nanos();
            check(got == fib_expected(n), format!("fib_join({n}) = {got}"))?;
            Ok(elapsed)
        }
        "fib-cutoff" => {
            let (n, cutoff) = if small { (30, 15) } else { (38, 20) };
            let start = Instant::now();
            let got = fib_cutoff(n, cutoff);
            let elapsed = start.elapsed().as_nanos();
            check(got == fib_expected(n), format!("fib_cutoff({n}) = {got}"))?;
            Ok(elapsed)
        }
        "fib-serial" => {
            // A control: fib_cutoff's leaves, with no rayon at all, to tell a
            // difference in code generation between two builds from one in
            // their deques.
            let n = if small { 25 } else { 35 };
            let start = Instant::now();
            let got = fib_sequential(std::hint::black_box(n));
            let elapsed = start.elapsed().as_nanos();
            check(
                got == fib_expected(n),
                format!("fib_sequential({n}) = {got}"),
            )?;
            Ok(elapsed)
        }
        "sort" => {
            let len = if small { 100_000 } else { 4_000_000 };
            let mut data = random_integers(len);
            let mut expected = data.clone();
            let start = Instant::now();
            data.par_sort_unstable();
            let elapsed = start.elapsed().as_nanos();
            expected.sort_unstable();
            check(
                data == expected,
                format!("par_sort_unstable of {len} integers"),
            )?;
            Ok(elapsed)
        }
        "sum" => {
            let len = if small { 100_000u64 } else { 10_000_000 };
            let data: Vec<u64> = (0..len).collect();
            let start = Instant::now();
            let got: u64 = data.par_iter().sum();
            let elapsed = start.elapsed().as_nanos();
            check(
                got == len * (len - 1) / 2,
                format!("par_iter sum of {len} = {got}"),
            )?;
            Ok(elapsed)
        }
        other => Err(format!("unknown workload {other}")),
    }
}

const WORKLOADS: [&str; 5] = ["fib-join", "fib-cutoff", "fib-serial", "sort", "sum"];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    // Start the pool before any timing.
    rayon::ThreadPoolBuilder::new()
        .build_global()
        .expect("the global pool starts once");
    match args[..] {
        ["check", ref rest @ ..] => {
            let deque = deque_type();
            println!(
                "rayon {} threads; deques from {deque}",
                rayon::current_num_threads()
            );
            if !deque.starts_with("chase_lev::") && !rest.contains(&"--any-deque") {
                eprintln!("FAIL: rayon's deque is not chase-lev's (is the [patch] applied?)");
                return ExitCode::FAILURE;
            }
            for workload in WORKLOADS {
                // A few rounds each, so that steals, injections and idle
                // threads all happen.
                for _ in 0..3 {
                    if let Err(what) = run(workload, true) {
                        eprintln!("FAIL: {what}");
                        return ExitCode::FAILURE;
                    }
                }
                println!("{workload}: ok");
            }
            ExitCode::SUCCESS
        }
        ["bench", workload] => match run(workload, false) {
            Ok(nanoseconds) => {
                println!("{workload} {nanoseconds}");
                ExitCode::SUCCESS
            }
            Err(what) => {
                eprintln!("FAIL: {what}");
                ExitCode::FAILURE
            }
        },
        _ => {
            eprintln!("usage: rayon-on-chase-lev check [--any-deque] | bench fib-join|fib-cutoff|fib-serial|sort|sum");
            ExitCode::FAILURE
        }
    }
}
