//! The fork-join thread pool of this package (on chase-lev deques), measured against
//! a serial run and against `rayon::join` in the same process, on three
//! workloads: fib with a serial cutoff, a parallel quicksort of 10M integers,
//! and a sum over an unbalanced tree. Then the grain-size sweeps: time per
//! element against the cutoff, to show where the knee is.
//!
//! `cargo run --release -p chase-lev-forkjoin --example forkjoin`
//!
//! Environment: `FORKJOIN_THREADS` (default: the available parallelism),
//! `FORKJOIN_RUNS` (timed runs per figure, interleaved, the best is kept;
//! default 5),
//! `FORKJOIN_SORT_LEN` (default 10000000), `FORKJOIN_FIB_N` (default 36),
//! `FORKJOIN_TREE_NODES` (default 2000000), `FORKJOIN_SWEEP_LEN` (elements
//! sorted in the sweep; default 2000000).
//!
//! The three workloads' best times, and the median of the pool's time over
//! rayon's run by run with its confidence interval, also go to
//! `$CARGO_TARGET_DIR/forkjoin-vs-rayon.tsv` (default: the target directory
//! that holds this example), where the targets table of
//! `cargo bench -p chase-lev-bench --bench compare` reads them.

use std::time::{Duration, Instant};

use chase_lev_forkjoin::{Stats, ThreadPool};

use chase_lev_forkjoin::workloads::{
    self, fib, fib_calls, fib_serial, quicksort, random_values, tree_sum, ChaseLevJoin, RayonJoin,
    Serial, Tree,
};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(default)
}

/// Runs every contender `runs` times in rotation (serial, chase-lev, rayon,
/// serial, ...) so that a burst of load from the machine's other users hits
/// them alike, and returns each one's times in run order. Each contender
/// prepares its input, times its run and checks its result itself.
fn race(runs: usize, contenders: &mut [&mut dyn FnMut() -> Duration]) -> Vec<Vec<Duration>> {
    let mut times = vec![Vec::new(); contenders.len()];
    for _ in 0..runs.max(1) {
        for (index, contender) in contenders.iter_mut().enumerate() {
            times[index].push(contender());
        }
    }
    times
}

/// The best of a contender's times (the least disturbed run).
fn best(times: &[Duration]) -> Duration {
    times.iter().copied().min().unwrap_or(Duration::MAX)
}

/// The pool's time over rayon's, run by run (the two ran one after the
/// other): their median and its distribution-free confidence interval, the
/// order statistics k and n - k + 1 with k = (n - 1.96 sqrt(n)) / 2 (about
/// 95%; for 5 runs the least and the greatest ratio, 94%), as
/// `benches/rayon_on_chase_lev.sh` computes for rayon's two builds.
struct Paired {
    median: f64,
    low: f64,
    high: f64,
}

impl Paired {
    fn of(ours: &[Duration], theirs: &[Duration]) -> Paired {
        let mut ratios: Vec<f64> = ours
            .iter()
            .zip(theirs)
            .map(|(ours, theirs)| ours.as_secs_f64() / theirs.as_secs_f64())
            .collect();
        ratios.sort_by(f64::total_cmp);
        let n = ratios.len();
        let median = if n % 2 == 1 {
            ratios[n / 2]
        } else {
            (ratios[n / 2 - 1] + ratios[n / 2]) / 2.0
        };
        let k = (((n as f64 - 1.96 * (n as f64).sqrt()) / 2.0) as usize).max(1);
        Paired {
            median,
            low: ratios[k - 1],
            high: ratios[n - k],
        }
    }
}

/// The time `run` takes.
fn timed<R>(run: impl FnOnce() -> R) -> (Duration, R) {
    let start = Instant::now();
    let result = run();
    (start.elapsed(), result)
}

fn milliseconds(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

struct Row {
    workload: String,
    serial: Duration,
    ours: Duration,
    rayon: Duration,
    against_rayon: Paired,
    stats: Stats,
}

impl Row {
    /// A row from `race`'s times, in the order serial, ours, rayon.
    fn new(workload: String, times: &[Vec<Duration>], stats: Stats) -> Row {
        Row {
            workload,
            serial: best(&times[0]),
            ours: best(&times[1]),
            rayon: best(&times[2]),
            against_rayon: Paired::of(&times[1], &times[2]),
            stats,
        }
    }
}

fn print_rows(threads: usize, rows: &[Row]) {
    println!();
    println!("Fork-join on {threads} threads (best of the runs; speedup = serial / parallel;");
    println!("chase/rayon = the median of the run-by-run ratios [its ~95% confidence interval]):");
    println!(
        "| {:<34} | {:>10} | {:>14} | {:>7} | {:>11} | {:>7} | {:>21} | {:>7} | {:>13} |",
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
        "|{:-<36}|{:->12}|{:->16}|{:->9}|{:->13}|{:->9}|{:->23}|{:->9}|{:->15}|",
        "", "", "", "", "", "", "", "", ""
    );
    for row in rows {
        println!(
            "| {:<34} | {:>10.1} | {:>14.1} | {:>6.2}x | {:>11.1} | {:>6.2}x | {:>21} | {:>7} | {:>13} |",
            row.workload,
            milliseconds(row.serial),
            milliseconds(row.ours),
            row.serial.as_secs_f64() / row.ours.as_secs_f64(),
            milliseconds(row.rayon),
            row.serial.as_secs_f64() / row.rayon.as_secs_f64(),
            format!(
                "{:.3} [{:.3}, {:.3}]",
                row.against_rayon.median, row.against_rayon.low, row.against_rayon.high
            ),
            row.stats.steals,
            row.stats.failed_steals,
        );
    }
}

/// `$CARGO_TARGET_DIR/forkjoin-vs-rayon.tsv`, or the target directory that
/// holds this example (`<target>/release/examples/forkjoin`).
fn rows_file() -> std::path::PathBuf {
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return std::path::PathBuf::from(target).join("forkjoin-vs-rayon.tsv");
    }
    let executable = std::env::current_exe().expect("the example knows its own path");
    match executable.ancestors().nth(3) {
        Some(target) => target.join("forkjoin-vs-rayon.tsv"),
        None => std::path::PathBuf::from("target/forkjoin-vs-rayon.tsv"),
    }
}

/// Writes each workload's best times (ms) for the compare bench's targets
/// table: workload, chase-lev pool, rayon, threads, runs, and the paired
/// ratio's median and interval.
fn write_rows(threads: usize, runs: usize, rows: &[Row]) {
    let mut text = String::from(
        "workload\tchase_lev_ms\trayon_ms\tthreads\truns\tpaired_ratio\tci_low\tci_high\n",
    );
    for row in rows {
        let paired = &row.against_rayon;
        text += &format!(
            "{}\t{:.3}\t{:.3}\t{threads}\t{runs}\t{:.4}\t{:.4}\t{:.4}\n",
            row.workload,
            milliseconds(row.ours),
            milliseconds(row.rayon),
            paired.median,
            paired.low,
            paired.high
        );
    }
    let path = rows_file();
    match std::fs::write(&path, text) {
        Ok(()) => println!("(the three rows written to {})", path.display()),
        Err(error) => println!("(could not write {}: {error})", path.display()),
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
    let runs = env_usize("FORKJOIN_RUNS", 5);
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
    let (times, stats) = counted(&ours, || {
        race(
            runs,
            &mut [
                &mut || timed(|| fib_serial(fib_n)).0,
                &mut || {
                    let (time, value) =
                        timed(|| ours.install(|| fib(ChaseLevJoin, fib_n, fib_cutoff)));
                    assert_eq!(value, expected, "fib on the chase-lev pool");
                    time
                },
                &mut || {
                    let (time, value) =
                        timed(|| rayon.install(|| fib(RayonJoin, fib_n, fib_cutoff)));
                    assert_eq!(value, expected, "fib on rayon");
                    time
                },
            ],
        )
    });
    rows.push(Row::new(
        format!("fib({fib_n}), cutoff {fib_cutoff}"),
        &times,
        stats,
    ));

    // quicksort ---------------------------------------------------------------
    let sort_cutoff = 16_384;
    let input = random_values(sort_len, 42);
    let mut sorted = input.clone();
    sorted.sort_unstable();
    let (times, stats) = counted(&ours, || {
        race(
            runs,
            &mut [
                &mut || {
                    let mut values = input.clone();
                    let (time, ()) = timed(|| quicksort(Serial, &mut values, sort_cutoff));
                    assert!(values == sorted, "serial quicksort");
                    time
                },
                &mut || {
                    let mut values = input.clone();
                    let (time, ()) = timed(|| {
                        ours.install(|| quicksort(ChaseLevJoin, &mut values, sort_cutoff))
                    });
                    assert!(values == sorted, "quicksort on the chase-lev pool");
                    time
                },
                &mut || {
                    let mut values = input.clone();
                    let (time, ()) =
                        timed(|| rayon.install(|| quicksort(RayonJoin, &mut values, sort_cutoff)));
                    assert!(values == sorted, "quicksort on rayon");
                    time
                },
            ],
        )
    });
    rows.push(Row::new(
        format!("quicksort {sort_len}, cutoff {sort_cutoff}"),
        &times,
        stats,
    ));
    drop((input, sorted));

    // unbalanced tree ---------------------------------------------------------
    let tree_cutoff = 4_096;
    let tree = Tree::build(tree_nodes, &mut workloads::Random::new(7));
    let expected = tree_sum(Serial, &tree, usize::MAX);
    let (times, stats) = counted(&ours, || {
        race(
            runs,
            &mut [
                &mut || timed(|| tree_sum(Serial, &tree, usize::MAX)).0,
                &mut || {
                    let (time, value) =
                        timed(|| ours.install(|| tree_sum(ChaseLevJoin, &tree, tree_cutoff)));
                    assert_eq!(value, expected, "tree sum on the chase-lev pool");
                    time
                },
                &mut || {
                    let (time, value) =
                        timed(|| rayon.install(|| tree_sum(RayonJoin, &tree, tree_cutoff)));
                    assert_eq!(value, expected, "tree sum on rayon");
                    time
                },
            ],
        )
    });
    rows.push(Row::new(
        format!("tree sum {tree_nodes} nodes, cutoff {tree_cutoff}"),
        &times,
        stats,
    ));
    workloads::drop_tree(tree);

    print_rows(threads, &rows);
    write_rows(threads, runs, &rows);

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
        let (times, stats) = counted(&ours, || {
            race(
                runs,
                &mut [
                    &mut || timed(|| quicksort(Serial, &mut input.clone(), cutoff)).0,
                    &mut || {
                        let mut values = input.clone();
                        timed(|| ours.install(|| quicksort(ChaseLevJoin, &mut values, cutoff))).0
                    },
                    &mut || {
                        let mut values = input.clone();
                        timed(|| rayon.install(|| quicksort(RayonJoin, &mut values, cutoff))).0
                    },
                ],
            )
        });
        println!(
            "| {:>9} | {:>9.2} | {:>9.2} | {:>9.2} | {:>7} |",
            cutoff,
            per_element(best(&times[0])),
            per_element(best(&times[1])),
            per_element(best(&times[2])),
            stats.steals
        );
    }

    let sweep_n = fib_n.min(32);
    let calls = fib_calls(sweep_n) as f64;
    let per_call = |duration: Duration| duration.as_secs_f64() * 1e9 / calls;
    println!();
    println!(
        "Grain-size sweep, fib({sweep_n}): ns per call of the serial recursion against the cutoff"
    );
    println!(
        "| {:>9} | {:>9} | {:>9} | {:>9} | {:>7} |",
        "cutoff", "serial", "chase-lev", "rayon", "steals"
    );
    println!(
        "|{:->11}|{:->11}|{:->11}|{:->11}|{:->9}|",
        "", "", "", "", ""
    );
    for cutoff in [2, 6, 10, 14, 18, 22, 26] {
        let (times, stats) = counted(&ours, || {
            race(
                runs,
                &mut [
                    &mut || timed(|| fib_serial(sweep_n)).0,
                    &mut || timed(|| ours.install(|| fib(ChaseLevJoin, sweep_n, cutoff))).0,
                    &mut || timed(|| rayon.install(|| fib(RayonJoin, sweep_n, cutoff))).0,
                ],
            )
        });
        println!(
            "| {:>9} | {:>9.2} | {:>9.2} | {:>9.2} | {:>7} |",
            cutoff,
            per_call(best(&times[0])),
            per_call(best(&times[1])),
            per_call(best(&times[2])),
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
