//! A fork-join thread pool on chase-lev deques (`pool.rs`), measured against
//! a serial run and against `rayon::join` in the same process, on three
//! workloads: fib with a serial cutoff, a parallel quicksort of 10M integers,
//! and a sum over an unbalanced tree. Then the grain-size sweeps: time per
//! element against the cutoff, to show where the knee is.
//!
//! `cargo run --release -p chase-lev --example forkjoin`
//!
//! Environment: `FORKJOIN_THREADS` (default: the available parallelism),
//! `FORKJOIN_RUNS` (timed runs per figure, the best is kept; default 3),
//! `FORKJOIN_SORT_LEN` (default 10000000), `FORKJOIN_FIB_N` (default 36),
//! `FORKJOIN_TREE_NODES` (default 2000000), `FORKJOIN_SWEEP_LEN` (elements
//! sorted in the sweep; default 2000000).

mod pool;
mod workloads;

use std::time::{Duration, Instant};

use pool::{Stats, ThreadPool};
use workloads::{
    fib, fib_calls, fib_serial, quicksort, random_values, tree_sum, ChaseLevJoin, RayonJoin,
    Serial, Tree,
};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(default)
}

/// The best of `runs` timed runs (the machine is shared: the minimum is the
/// least disturbed figure), with `prepare` outside the timing.
fn best_of<P, R>(
    runs: usize,
    mut prepare: impl FnMut() -> P,
    mut run: impl FnMut(P) -> R,
) -> (Duration, R) {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..runs.max(1) {
        let input = prepare();
        let start = Instant::now();
        let result = run(input);
        best = best.min(start.elapsed());
        last = Some(result);
    }
    (best, last.expect("at least one run"))
}

fn milliseconds(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

struct Row {
    workload: String,
    serial: Duration,
    ours: Duration,
    rayon: Duration,
    stats: Stats,
}

fn print_rows(threads: usize, rows: &[Row]) {
    println!();
    println!("Fork-join on {threads} threads (best of the runs; speedup = serial / parallel):");
    println!(
        "| {:<34} | {:>10} | {:>14} | {:>7} | {:>11} | {:>7} | {:>12} | {:>7} | {:>13} |",
        "workload",
        "serial ms",
        "chase-lev ms",
        "speedup",
        "rayon ms",
        "speedup",
        "chase/rayon",
        "steals",
        "failed steals"
    );
    println!(
        "|{:-<36}|{:->12}|{:->16}|{:->9}|{:->13}|{:->9}|{:->14}|{:->9}|{:->15}|",
        "", "", "", "", "", "", "", "", ""
    );
    for row in rows {
        println!(
            "| {:<34} | {:>10.1} | {:>14.1} | {:>6.2}x | {:>11.1} | {:>6.2}x | {:>12.2} | {:>7} | {:>13} |",
            row.workload,
            milliseconds(row.serial),
            milliseconds(row.ours),
            row.serial.as_secs_f64() / row.ours.as_secs_f64(),
            milliseconds(row.rayon),
            row.serial.as_secs_f64() / row.rayon.as_secs_f64(),
            row.ours.as_secs_f64() / row.rayon.as_secs_f64(),
            row.stats.steals,
            row.stats.failed_steals,
        );
    }
}

/// Our pool's counters accumulated during `run` (over all its runs).
fn counted<R>(pool: &ThreadPool, run: impl FnOnce() -> R) -> (R, Stats) {
    let before = pool.stats();
    let result = run();
    let after = pool.stats();
    let stats = Stats {
        steals: after.steals - before.steals,
        failed_steals: after.failed_steals - before.failed_steals,
        sleeps: after.sleeps - before.sleeps,
    };
    (result, stats)
}

fn main() {
    let threads = env_usize(
        "FORKJOIN_THREADS",
        std::thread::available_parallelism().map_or(2, |n| n.get()),
    );
    let runs = env_usize("FORKJOIN_RUNS", 3);
    let sort_len = env_usize("FORKJOIN_SORT_LEN", 10_000_000);
    let fib_n = env_usize("FORKJOIN_FIB_N", 36) as u32;
    let tree_nodes = env_usize("FORKJOIN_TREE_NODES", 2_000_000);
    let sweep_len = env_usize("FORKJOIN_SWEEP_LEN", 2_000_000);

    let ours = ThreadPool::new(threads);
    let rayon = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a rayon pool");
    let mut rows = Vec::new();

    // fib ---------------------------------------------------------------------
    let fib_cutoff = 20;
    let expected = fib_serial(fib_n);
    let (serial, _) = best_of(runs, || (), |()| fib_serial(fib_n));
    let ((ours_time, value), stats) = counted(&ours, || {
        best_of(
            runs,
            || (),
            |()| ours.install(|| fib(ChaseLevJoin, fib_n, fib_cutoff)),
        )
    });
    assert_eq!(value, expected, "fib on the chase-lev pool");
    let (rayon_time, value) = best_of(
        runs,
        || (),
        |()| rayon.install(|| fib(RayonJoin, fib_n, fib_cutoff)),
    );
    assert_eq!(value, expected, "fib on rayon");
    rows.push(Row {
        workload: format!("fib({fib_n}), cutoff {fib_cutoff}"),
        serial,
        ours: ours_time,
        rayon: rayon_time,
        stats,
    });

    // quicksort ---------------------------------------------------------------
    let sort_cutoff = 16_384;
    let input = random_values(sort_len, 42);
    let mut sorted = input.clone();
    sorted.sort_unstable();
    let (serial, _) = best_of(
        runs,
        || input.clone(),
        |mut values| quicksort(Serial, &mut values, sort_cutoff),
    );
    let ((ours_time, values), stats) = counted(&ours, || {
        best_of(
            runs,
            || input.clone(),
            |mut values| {
                ours.install(|| quicksort(ChaseLevJoin, &mut values, sort_cutoff));
                values
            },
        )
    });
    assert!(values == sorted, "quicksort on the chase-lev pool");
    let (rayon_time, values) = best_of(
        runs,
        || input.clone(),
        |mut values| {
            rayon.install(|| quicksort(RayonJoin, &mut values, sort_cutoff));
            values
        },
    );
    assert!(values == sorted, "quicksort on rayon");
    rows.push(Row {
        workload: format!("quicksort {sort_len}, cutoff {sort_cutoff}"),
        serial,
        ours: ours_time,
        rayon: rayon_time,
        stats,
    });
    drop((input, sorted, values));

    // unbalanced tree ---------------------------------------------------------
    let tree_cutoff = 4_096;
    let tree = Tree::build(tree_nodes, &mut workloads::Random::new(7));
    let (serial, expected) = best_of(runs, || (), |()| tree_sum(Serial, &tree, usize::MAX));
    let ((ours_time, value), stats) = counted(&ours, || {
        best_of(
            runs,
            || (),
            |()| ours.install(|| tree_sum(ChaseLevJoin, &tree, tree_cutoff)),
        )
    });
    assert_eq!(value, expected, "tree sum on the chase-lev pool");
    let (rayon_time, value) = best_of(
        runs,
        || (),
        |()| rayon.install(|| tree_sum(RayonJoin, &tree, tree_cutoff)),
    );
    assert_eq!(value, expected, "tree sum on rayon");
    rows.push(Row {
        workload: format!("tree sum {tree_nodes} nodes, cutoff {tree_cutoff}"),
        serial,
        ours: ours_time,
        rayon: rayon_time,
        stats,
    });
    workloads::drop_tree(tree);

    print_rows(threads, &rows);

    // grain-size sweeps -------------------------------------------------------
    println!();
    println!(
        "Grain-size sweep, quicksort of {sweep_len} integers: ns per element against the cutoff"
    );
    println!(
        "| {:>9} | {:>9} | {:>9} | {:>9} | {:>7} |",
        "cutoff", "serial", "chase-lev", "rayon", "steals"
    );
    println!(
        "|{:->11}|{:->11}|{:->11}|{:->11}|{:->9}|",
        "", "", "", "", ""
    );
    let input = random_values(sweep_len, 43);
    let per_element = |duration: Duration| duration.as_secs_f64() * 1e9 / sweep_len as f64;
    for cutoff in [64, 256, 1_024, 4_096, 16_384, 65_536, 262_144, 1_048_576] {
        let (serial, _) = best_of(
            runs,
            || input.clone(),
            |mut values| quicksort(Serial, &mut values, cutoff),
        );
        let ((ours_time, _), stats) = counted(&ours, || {
            best_of(
                runs,
                || input.clone(),
                |mut values| ours.install(|| quicksort(ChaseLevJoin, &mut values, cutoff)),
            )
        });
        let (rayon_time, _) = best_of(
            runs,
            || input.clone(),
            |mut values| rayon.install(|| quicksort(RayonJoin, &mut values, cutoff)),
        );
        println!(
            "| {:>9} | {:>9.2} | {:>9.2} | {:>9.2} | {:>7} |",
            cutoff,
            per_element(serial),
            per_element(ours_time),
            per_element(rayon_time),
            stats.steals
        );
    }

    let sweep_n = fib_n.min(32);
    let calls = fib_calls(sweep_n) as f64;
    println!();
    println!(
        "Grain-size sweep, fib({sweep_n}): ns per call of the serial recursion against the cutoff"
    );
    println!(
        "| {:>9} | {:>9} | {:>9} | {:>7} |",
        "cutoff", "chase-lev", "rayon", "steals"
    );
    println!("|{:->11}|{:->11}|{:->11}|{:->9}|", "", "", "", "");
    let (serial, _) = best_of(runs, || (), |()| fib_serial(sweep_n));
    println!(
        "| {:>9} | {:>9.2} | {:>9.2} | {:>7} |",
        "serial",
        serial.as_secs_f64() * 1e9 / calls,
        serial.as_secs_f64() * 1e9 / calls,
        0
    );
    for cutoff in [2, 6, 10, 14, 18, 22, 26] {
        let ((ours_time, _), stats) = counted(&ours, || {
            best_of(
                runs,
                || (),
                |()| ours.install(|| fib(ChaseLevJoin, sweep_n, cutoff)),
            )
        });
        let (rayon_time, _) = best_of(
            runs,
            || (),
            |()| rayon.install(|| fib(RayonJoin, sweep_n, cutoff)),
        );
        println!(
            "| {:>9} | {:>9.2} | {:>9.2} | {:>7} |",
            cutoff,
            ours_time.as_secs_f64() * 1e9 / calls,
            rayon_time.as_secs_f64() * 1e9 / calls,
            stats.steals
        );
    }
    let stats = ours.stats();
    println!();
    println!(
        "chase-lev pool totals: {} steals, {} failed steal attempts, {} sleeps",
        stats.steals, stats.failed_steals, stats.sleeps
    );
}
