//! chase-lev side by side with crossbeam-deque 0.8 and st3 0.4 (and `Vec` as
//! the floor for the owner paths), in one criterion run, followed by a ratio
//! table read back from this run's criterion estimates, interleaved tables
//! (the deques taking turns) of the single-threaded rows and of the
//! scenarios with thieves, a table of how often a steal came back `Retry`,
//! and the targets table
//! (`targets.rs`; run `benches/callgrind.sh` first for its locked
//! instructions).
//!
//! `cargo bench -p chase-lev-bench --bench compare` (a filter after `--` selects
//! benchmarks as usual). Budget, by environment variable:
//! - `CHASE_LEV_BENCH_SAMPLES`: criterion samples per benchmark (default 10,
//!   criterion's minimum);
//! - `CHASE_LEV_BENCH_SECONDS`: measurement time per benchmark (default 1);
//! - `CHASE_LEV_BENCH_WARMUP`: warm-up time per benchmark (default 0.3);
//! - `CHASE_LEV_BENCH_TASKS`: tasks per round of the concurrent scenarios
//!   (default 10000);
//! - `CHASE_LEV_BENCH_ROUNDS`: rounds per deque of the interleaved table
//!   (default 400; see `interleaved.rs`);
//! - `CHASE_LEV_BENCH_THIEF_TURNS`: turns of 4 rounds per deque and
//!   scenario in the interleaved table of the scenarios with thieves
//!   (default 200, about 12 s; see `interleaved_thieves.rs`; 0 skips it);
//! - `CHASE_LEV_BENCH_INJECTOR_TURNS`: turns of 10 rounds per injector and
//!   scenario in the interleaved injector table (default 200, about 40 s:
//!   fewer leave the rows with threads without a verdict; see
//!   `injector.rs`; 0 skips it).

mod concurrent;
mod cpu_time;
mod injector;
mod interleaved;
mod interleaved_thieves;
mod ratios;
mod targets;

// Shared with the callgrind workloads (examples/owner_paths.rs).
use chase_lev_bench::{contenders, owner_paths};

use std::hint::black_box;
use std::time::Duration;

use criterion::measurement::WallTime;

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

/// Runs one concurrent scenario for the three deques.
fn bench_concurrent(
    criterion: &mut Criterion,
    name: &str,
    tasks: u64,
    scenario: concurrent::Scenario,
) {
    fn one<C: Contender>(
        group: &mut BenchmarkGroup<'_, WallTime>,
        tasks: u64,
        scenario: concurrent::Scenario,
    ) {
        group.bench_function(C::NAME, |bencher| {
            bencher.iter_custom(|rounds| concurrent::run::<C>(scenario, tasks, rounds))
        });
    }
    let mut group = criterion.benchmark_group(name);
    group.throughput(Throughput::Elements(tasks));
    // One round is tens of microseconds to milliseconds: flat sampling keeps
    // the number of rounds (and the run time) small and predictable.
    group.sampling_mode(SamplingMode::Flat);
    one::<ChaseLev>(&mut group, tasks, scenario);
    one::<St3>(&mut group, tasks, scenario);
    one::<Crossbeam>(&mut group, tasks, scenario);
    group.finish();
}

/// Runs one injector scenario for chase-lev's and crossbeam-deque's.
fn bench_injector(criterion: &mut Criterion, tasks: u64, scenario: injector::Scenario) {
    fn one<C: injector::InjectorContender>(
        group: &mut BenchmarkGroup<'_, WallTime>,
        tasks: u64,
        scenario: injector::Scenario,
    ) {
        group.bench_function(C::NAME, |bencher| {
            bencher.iter_custom(|rounds| injector::run::<C>(scenario, tasks, rounds))
        });
    }
    let mut group = criterion.benchmark_group(scenario.label());
    group.throughput(Throughput::Elements(tasks));
    group.sampling_mode(SamplingMode::Flat);
    one::<injector::ChaseLevInjector>(&mut group, tasks, scenario);
    one::<injector::CrossbeamInjector>(&mut group, tasks, scenario);
    group.finish();
}

fn main() {
    let samples = env_number("CHASE_LEV_BENCH_SAMPLES", 10.0) as usize;
    let seconds = env_number("CHASE_LEV_BENCH_SECONDS", 1.0);
    let warmup = env_number("CHASE_LEV_BENCH_WARMUP", 0.3);
    let tasks = env_number("CHASE_LEV_BENCH_TASKS", 10_000.0) as u64;
    let interleaved_rounds = env_number("CHASE_LEV_BENCH_ROUNDS", 400.0) as u64;
    let injector_turns = env_number("CHASE_LEV_BENCH_INJECTOR_TURNS", 200.0) as u64;
    let thief_turns = env_number("CHASE_LEV_BENCH_THIEF_TURNS", 200.0) as u64;
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
    // Single-threaded benchmarks: the thread's CPU time (see cpu_time.rs).
    let mut single = configure(Criterion::default().with_measurement(ThreadCpuTime::default()));
    // Benchmarks with thieves: wall-clock time from release to the end.
    let mut criterion = Criterion::default()
        .sample_size(samples.max(10))
        .measurement_time(Duration::from_secs_f64(seconds))
        .warm_up_time(Duration::from_secs_f64(warmup))
        .output_directory(&output)
        .configure_from_args();

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
    use concurrent::Scenario;
    bench_concurrent(
        &mut criterion,
        "steal, owner idle",
        tasks,
        Scenario::StealOwnerIdle,
    );
    bench_concurrent(
        &mut criterion,
        "steal, owner pops",
        tasks,
        Scenario::StealOwnerPops,
    );
    bench_concurrent(
        &mut criterion,
        "batch steal, owner idle",
        tasks,
        Scenario::BatchOwnerIdle,
    );
    bench_concurrent(
        &mut criterion,
        "batch steal, owner pops",
        tasks,
        Scenario::BatchOwnerPops,
    );
    bench_concurrent(
        &mut criterion,
        "1 producer + 3 thieves",
        tasks,
        Scenario::ProducerThreeThieves,
    );

    for scenario in injector::SCENARIOS {
        bench_injector(&mut criterion, tasks, scenario);
    }

    single.final_summary();
    criterion.final_summary();
    ratios::print_ratio_table(&output, started);
    ratios::print_injector_table(&output, started, injector::SCENARIOS.map(|s| s.label()));
    let injector_rows = injector::print_interleaved_table(tasks, injector_turns);
    let quick = interleaved::print_interleaved_table(interleaved_rounds);
    let with_thieves = interleaved_thieves::print_interleaved_thief_table(thief_turns, tasks);
    concurrent::print_retry_table();
    targets::print_targets_table(&quick, &with_thieves, &injector_rows);
}
