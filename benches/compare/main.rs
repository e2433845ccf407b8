//! chase-lev side by side with crossbeam-deque 0.8 and st3 0.4 (and `Vec` as
//! the floor for the owner paths) on one thread, in one criterion run,
//! followed by a ratio table read back from this run's criterion estimates,
//! an interleaved table (the deques taking turns) of the owner's rows, and
//! the targets table (`targets.rs`; run `benches/callgrind.sh` first for its
//! locked instructions, and the contended bench, `benches/contended/`, for
//! every row where threads meet).
//!
//! `cargo bench -p chase-lev-bench --bench compare` (a filter after `--` selects
//! benchmarks as usual). Budget, by environment variable:
//! - `CHASE_LEV_BENCH_SAMPLES`: criterion samples per benchmark (default 10,
//!   criterion's minimum);
//! - `CHASE_LEV_BENCH_SECONDS`: measurement time per benchmark (default 1);
//! - `CHASE_LEV_BENCH_WARMUP`: warm-up time per benchmark (default 0.3);
//! - `CHASE_LEV_BENCH_ROUNDS`: rounds per deque of the interleaved table
//!   (default 400; see `interleaved.rs`).

mod cpu_time;
mod interleaved;
mod ratios;
mod targets;

// Shared with the callgrind workloads (examples/owner_paths.rs).
use chase_lev_bench::{contenders, owner_paths};

use std::hint::black_box;
use std::time::Duration;

use cpu_time::{thread_cpu_time, ThreadCpuTime};
use criterion::{BenchmarkGroup, Criterion, SamplingMode, Throughput};

use contenders::{take_all, ChaseLev, Contender, Crossbeam, Owned, OwnerPaths, St3};
use owner_paths::{push_pop_pairs, push_then_pop, PAIRS_PER_ITERATION};

fn env_number(name: &str, default: f64) -> f64 {
    match std::env::var(name) {
        Ok(text) => text
            .parse()
            .unwrap_or_else(|_| panic!("{name}={text} is not a number")),
        Err(_) => default,
    }
}

/// Push `count` then pop `count`, with a deque kept from one iteration to the
/// next (so a deque that shrinks when drained pays for growing again).
fn bench_push_then_pop(group: &mut BenchmarkGroup<'_, ThreadCpuTime>, count: u64) {
    fn one<O: OwnerPaths>(
        group: &mut BenchmarkGroup<'_, ThreadCpuTime>,
        name: &str,
        mut owner: O,
        count: u64,
    ) {
        group.bench_function(name, |bencher| {
            bencher.iter(|| push_then_pop(&mut owner, count))
        });
    }
    group.throughput(Throughput::Elements(2 * count));
    one(
        group,
        ChaseLev::NAME,
        Owned::<ChaseLev>(ChaseLev::owner(count as usize)),
        count,
    );
    one(
        group,
        St3::NAME,
        Owned::<St3>(St3::owner(count as usize)),
        count,
    );
    one(
        group,
        Crossbeam::NAME,
        Owned::<Crossbeam>(Crossbeam::owner(count as usize)),
        count,
    );
    one(group, "Vec", Vec::<u64>::new(), count);
}

fn bench_pairs(group: &mut BenchmarkGroup<'_, ThreadCpuTime>) {
    fn one<O: OwnerPaths>(group: &mut BenchmarkGroup<'_, ThreadCpuTime>, name: &str, mut owner: O) {
        group.bench_function(name, |bencher| {
            bencher.iter(|| push_pop_pairs(&mut owner, PAIRS_PER_ITERATION))
        });
    }
    group.throughput(Throughput::Elements(2 * PAIRS_PER_ITERATION));
    one(group, ChaseLev::NAME, Owned::<ChaseLev>(ChaseLev::owner(1)));
    one(group, St3::NAME, Owned::<St3>(St3::owner(1)));
    one(
        group,
        Crossbeam::NAME,
        Owned::<Crossbeam>(Crossbeam::owner(1)),
    );
    one(group, "Vec", Vec::<u64>::new());
}

/// Steals on the owner's own thread, nothing else running: the bare cost of
/// the thief's path (pin, fences, CAS) without cache-line transfers. The
/// owner pushes 1000 tasks outside the timed part of each iteration.
fn bench_uncontended_steals(criterion: &mut Criterion<ThreadCpuTime>, batch: bool) {
    const TASKS: u64 = 1_000;
    fn one<C: Contender>(group: &mut BenchmarkGroup<'_, ThreadCpuTime>, batch: bool) {
        let owner = C::owner(TASKS as usize);
        let thief = C::thief(&owner);
        let mine = C::owner(64);
        group.bench_function(C::NAME, |bencher| {
            bencher.iter_custom(|rounds| {
                let mut total = Duration::ZERO;
                for _ in 0..rounds {
                    for task in 0..TASKS {
                        C::push(&owner, black_box(task));
                    }
                    let start = thread_cpu_time();
                    take_all::<C>(&thief, &mine, TASKS, batch);
                    total += thread_cpu_time() - start;
                }
                total
            })
        });
    }
    let name = if batch {
        "batch steal 1k, same thread"
    } else {
        "steal 1k, same thread"
    };
    let mut group = criterion.benchmark_group(name);
    group.throughput(Throughput::Elements(TASKS));
    one::<ChaseLev>(&mut group, batch);
    one::<St3>(&mut group, batch);
    one::<Crossbeam>(&mut group, batch);
    group.finish();
}

fn main() {
    let samples = env_number("CHASE_LEV_BENCH_SAMPLES", 10.0) as usize;
    let seconds = env_number("CHASE_LEV_BENCH_SECONDS", 1.0);
    let warmup = env_number("CHASE_LEV_BENCH_WARMUP", 0.3);
    let interleaved_rounds = env_number("CHASE_LEV_BENCH_ROUNDS", 400.0) as u64;
    let output = ratios::output_directory();
    let started = std::time::SystemTime::now();

    let configure = |criterion: Criterion<ThreadCpuTime>| {
        criterion
            .sample_size(samples.max(10))
            .measurement_time(Duration::from_secs_f64(seconds))
            .warm_up_time(Duration::from_secs_f64(warmup))
            .output_directory(&output)
            .configure_from_args()
    };
    // The thread's CPU time (see cpu_time.rs).
    let mut single = configure(Criterion::default().with_measurement(ThreadCpuTime::default()));

    {
        let mut group = single.benchmark_group("owner push 1k then pop 1k");
        bench_push_then_pop(&mut group, 1_000);
        group.finish();
    }
    {
        let mut group = single.benchmark_group("owner push 1M then pop 1M");
        group.sampling_mode(SamplingMode::Flat);
        bench_push_then_pop(&mut group, 1_000_000);
        group.finish();
    }
    {
        let mut group = single.benchmark_group("owner push;pop pairs");
        bench_pairs(&mut group);
        group.finish();
    }
    bench_uncontended_steals(&mut single, false);
    bench_uncontended_steals(&mut single, true);
    single.final_summary();
    ratios::print_ratio_table(&output, started);
    let quick = interleaved::print_interleaved_table(interleaved_rounds);
    targets::print_targets_table(&quick);
}
