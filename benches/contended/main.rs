//! The contended rows: every path where threads meet, chase-lev against
//! crossbeam-deque 0.8 (and st3 0.4 on the deque rows), measured by a
//! harness that does not measure itself.
//!
//! `cargo bench -p chase-lev-bench --bench contended [-- FILTER...]` (a row
//! runs if its label contains one of the filters; none: every row).
//!
//! Per sample: a fresh queue, at other addresses than the last one's
//! (`scatter`); the row's threads (kept for the whole run,
//! parked between samples) set themselves up and spin at a gate; the
//! bench's thread reads the clock and opens it; each thread takes tasks
//! with its counts in its own registers, and the clock stops when the last
//! task is taken (the threads that stop at `Empty` each read the clock
//! there, and the latest among those that took a task is the end; a lone
//! consumer stops at its count; several consumers add their counts to a
//! shared total on `Empty` once the producers are done, and the one that
//! completes it reads the clock; where threads outnumber cores, a thread
//! switched out after it took a task, holding none, stops the clock only
//! when it runs again). No shared write per task or per `Empty`. The
//! implementations take turns sample by sample (a warm-up lap first, not
//! kept), the first of each lap rotating. A sample in which any of its
//! threads had an involuntary context switch (`getrusage(RUSAGE_THREAD)`,
//! `ru_nivcsw`) is flagged as preempted.
//!
//! Each row is framed by its null run: the same threads, gate and clock,
//! with the queue replaced by a trivially fast one (chunks of the tasks
//! handed out by a `fetch_add` each, counted through in a register:
//! `sides.rs`). The table prints the null's time per task and its share
//! of the cheaper of chase-lev's and crossbeam-deque's (to be under 10%:
//! what the harness costs of itself, which would pull their ratio toward
//! 1; st3's time is not in the ratio and not in this share).
//!
//! The verdict: per lap, chase-lev's time over crossbeam-deque's; the
//! median of those ratios with its distribution-free ~95% interval
//! (`chase_lev_bench::paired`), against the row's target (1.00; 0.90 for
//! the steal with the owner idle): met, not met or cannot tell. Judged on
//! the laps in which neither was preempted, except in the rows with more
//! running threads than cores, where preemption is the row: all laps (the
//! column "judged on" says which, and how many laps). With
//! `CHASE_LEV_CONTENDED_ALL_LAPS=1` every row is judged on all its laps (a
//! smoke run on a busy machine, where most samples are preempted).
//! Then the diagnostics of every row and implementation, over all its
//! samples: how many were preempted, tasks per batch, `Empty` and `Retry`
//! answers per 100,000 tasks, the thieves' share of the tasks.
//!
//! The rows, and the variables that size them (defaults in brackets):
//! - `steal, owner pops`: the owner pops its deque while a thief steals;
//! - `batch steal, owner pops`: the same with `steal_batch_and_pop` into
//!   the thief's own worker, popped empty after each batch;
//! - `steal, owner idle` and `batch steal, owner idle`: one thief takes
//!   everything;
//! - `injector: 1 producer, 1 consumer`, `injector: 1 producer, N
//!   consumers` (`CHASE_LEV_CONTENDED_CONSUMERS` [3]), `injector: N
//!   producers, 1 consumer` (`CHASE_LEV_CONTENDED_PRODUCERS` [2]), `injector:
//!   batch steals into a worker` (1 producer, 1 consumer by
//!   `steal_batch_and_pop`), `injector: one thread pushes, then steals all`;
//! - `steal, N thieves, owner pops` (`CHASE_LEV_CONTENDED_THIEVES` [2]);
//! - `steal, N thieves, owner idle (more threads than cores)`
//!   (`CHASE_LEV_CONTENDED_OVERSUBSCRIBED` [cores + 1]): only thieves run,
//!   one more than there are cores.
//!
//! `CHASE_LEV_CONTENDED_THREADS=N` sets the three counts of the wide rows
//! at once to N threads in all (N - 1 consumers, N - 1 producers, N - 1
//! thieves), for a many-core machine in one command; the variables above
//! override it. `CHASE_LEV_CONTENDED_TASKS` [100000] tasks per sample,
//! `CHASE_LEV_CONTENDED_SAMPLES` [41] samples per implementation and row.
//! The CI's smoke run: `CHASE_LEV_CONTENDED_SAMPLES=7
//! CHASE_LEV_CONTENDED_TASKS=2000 CHASE_LEV_CONTENDED_ALL_LAPS=1` (seconds;
//! no time judged).
//!
//! A run of every row (no filter) also writes its rows to
//! `contended.tsv` in the target directory, from which the compare bench's
//! targets table quotes them: `cargo bench --bench contended` before
//! `cargo bench --bench compare` (docs/benchmarks.md).

mod harness;
mod samples;
mod sides;

use std::time::Instant;

use chase_lev_bench::contenders::{ChaseLev, Crossbeam, St3};
use chase_lev_bench::injectors::{ChaseLevInjector, CrossbeamInjector};
use chase_lev_bench::paired::{median, Interval};
use chase_lev_bench::table::{print_row, print_separator};

use harness::Pool;
use samples::{deque_sample, injector_sample, DequeShape, InjectorShape, Sample};
use sides::{Deque, Injector, NullDeque, NullInjector};

/// A deque row's contenders: the null first, chase-lev, crossbeam-deque.
type DequeRun = fn(&str, &Pool, u64, DequeShape) -> Sample;
const DEQUES: [(&str, DequeRun); 4] = [
    ("null", deque_sample::<NullDeque>),
    ("chase-lev", deque_sample::<Deque<ChaseLev>>),
    ("crossbeam-deque", deque_sample::<Deque<Crossbeam>>),
    ("st3", deque_sample::<Deque<St3>>),
];

type InjectorRun = fn(&str, &Pool, u64, InjectorShape) -> Sample;
const INJECTORS: [(&str, InjectorRun); 3] = [
    ("null", injector_sample::<NullInjector>),
    ("chase-lev", injector_sample::<Injector<ChaseLevInjector>>),
    (
        "crossbeam-deque",
        injector_sample::<Injector<CrossbeamInjector>>,
    ),
];

/// Where the null, chase-lev and crossbeam-deque are in a row's samples.
const NULL: usize = 0;
const CHASE_LEV: usize = 1;
const CROSSBEAM: usize = 2;

#[derive(Clone, Copy, Debug)]
enum Shape {
    Deque(DequeShape),
    Injector(InjectorShape),
}

impl Shape {
    /// Threads at work in the timed region (an idle owner is not).
    fn running(self) -> u64 {
        match self {
            Shape::Deque(shape) => shape.thieves + u64::from(shape.owner_pops),
            Shape::Injector(shape) => shape.producers + shape.consumers,
        }
    }

    /// Helper threads besides the bench's own.
    fn helpers(self) -> usize {
        match self {
            Shape::Deque(shape) => shape.thieves as usize,
            Shape::Injector(shape) => (shape.producers - 1 + shape.consumers) as usize,
        }
    }

    fn contenders(self) -> Vec<&'static str> {
        match self {
            Shape::Deque(_) => DEQUES.iter().map(|(name, _)| *name).collect(),
            Shape::Injector(_) => INJECTORS.iter().map(|(name, _)| *name).collect(),
        }
    }

    fn sample(self, contender: usize, pool: &Pool, tasks: u64) -> Sample {
        match self {
            Shape::Deque(shape) => {
                let (name, run) = DEQUES[contender];
                run(name, pool, tasks, shape)
            }
            Shape::Injector(shape) => {
                let (name, run) = INJECTORS[contender];
                run(name, pool, tasks, shape)
            }
        }
    }
}

struct Row {
    label: String,
    shape: Shape,
    /// chase-lev's time over crossbeam-deque's: at most this.
    target: f64,
}

struct Config {
    tasks: u64,
    samples: usize,
    cores: u64,
    thieves: u64,
    consumers: u64,
    producers: u64,
    oversubscribed: u64,
    /// Judge every row on all its laps, preempted or not.
    all_laps: bool,
    filters: Vec<String>,
}

fn env_count(name: &str) -> Option<u64> {
    let text = std::env::var(name).ok()?;
    let count = text
        .parse()
        .unwrap_or_else(|_| panic!("{name}={text} is not a whole number"));
    Some(count)
}

impl Config {
    fn from_env() -> Config {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
        let wide = env_count("CHASE_LEV_CONTENDED_THREADS").map(|threads| threads.max(2) - 1);
        let at_least_one = |name: &str, default: u64| env_count(name).unwrap_or(default).max(1);
        Config {
            tasks: at_least_one("CHASE_LEV_CONTENDED_TASKS", 100_000),
            samples: at_least_one("CHASE_LEV_CONTENDED_SAMPLES", 41) as usize,
            cores,
            thieves: at_least_one("CHASE_LEV_CONTENDED_THIEVES", wide.unwrap_or(2)),
            consumers: at_least_one("CHASE_LEV_CONTENDED_CONSUMERS", wide.unwrap_or(3)),
            producers: at_least_one("CHASE_LEV_CONTENDED_PRODUCERS", wide.unwrap_or(2)),
            oversubscribed: at_least_one("CHASE_LEV_CONTENDED_OVERSUBSCRIBED", cores + 1),
            all_laps: env_count("CHASE_LEV_CONTENDED_ALL_LAPS").is_some_and(|all| all != 0),
            // `cargo bench` passes `--bench`; the rest filters the rows.
            filters: std::env::args()
                .skip(1)
                .filter(|argument| !argument.starts_with('-'))
                .collect(),
        }
    }

    fn rows(&self) -> Vec<Row> {
        let deque = |thieves, owner_pops, batch| {
            Shape::Deque(DequeShape {
                thieves,
                owner_pops,
                batch,
            })
        };
        let injector = |producers, consumers, batch| {
            Shape::Injector(InjectorShape {
                producers,
                consumers,
                batch,
            })
        };
        let plural = |count: u64, one: &str, many: &str| {
            if count == 1 {
                format!("1 {one}")
            } else {
                format!("{count} {many}")
            }
        };
        let (thieves, consumers, producers) = (self.thieves, self.consumers, self.producers);
        let rows = [
            ("steal, owner pops".to_string(), deque(1, true, false), 1.0),
            ("batch steal, owner pops".into(), deque(1, true, true), 1.0),
            ("steal, owner idle".into(), deque(1, false, false), 0.9),
            ("batch steal, owner idle".into(), deque(1, false, true), 1.0),
            (
                "injector: 1 producer, 1 consumer".into(),
                injector(1, 1, false),
                1.0,
            ),
            (
                format!(
                    "injector: 1 producer, {}",
                    plural(consumers, "consumer", "consumers")
                ),
                injector(1, consumers, false),
                1.0,
            ),
            (
                format!(
                    "injector: {}, 1 consumer",
                    plural(producers, "producer", "producers")
                ),
                injector(producers, 1, false),
                1.0,
            ),
            (
                "injector: batch steals into a worker".into(),
                injector(1, 1, true),
                1.0,
            ),
            (
                "injector: one thread pushes, then steals all".into(),
                injector(1, 0, false),
                1.0,
            ),
            (
                format!("steal, {}, owner pops", plural(thieves, "thief", "thieves")),
                deque(thieves, true, false),
                1.0,
            ),
            (
                format!(
                    "steal, {}, owner idle{}",
                    plural(self.oversubscribed, "thief", "thieves"),
                    if self.oversubscribed > self.cores {
                        " (more threads than cores)"
                    } else {
                        ""
                    }
                ),
                deque(self.oversubscribed, false, false),
                1.0,
            ),
        ];
        rows.into_iter()
            .map(|(label, shape, target)| Row {
                label,
                shape,
                target,
            })
            .filter(|row| {
                self.filters.is_empty()
                    || self
                        .filters
                        .iter()
                        .any(|filter| row.label.contains(filter.as_str()))
            })
            .collect()
    }
}

/// Every sample of one row, by contender (in `Shape::contenders` order).
fn measure(row: &Row, pool: &Pool, config: &Config) -> Vec<Vec<Sample>> {
    let contenders = row.shape.contenders().len();
    // A warm-up lap: each thread's first operation on each implementation
    // registers it with that implementation's reclamation.
    for contender in 0..contenders {
        row.shape.sample(contender, pool, config.tasks);
    }
    let mut samples = vec![Vec::with_capacity(config.samples); contenders];
    for lap in 0..config.samples {
        for position in 0..contenders {
            let contender = (lap + position) % contenders;
            let _placement = scatter(lap * contenders + position);
            samples[contender].push(row.shape.sample(contender, pool, config.tasks));
        }
    }
    samples
}

/// Allocations to hold while a sample runs, a different number of each
/// size from sample to sample, so that the queue the sample allocates next
/// lands at other addresses (the allocator would otherwise hand every
/// sample's queue the memory the last one freed): a row's figures are then
/// not those of one placement, lucky or not, of its queue's lines.
fn scatter(sample: usize) -> Vec<Vec<u8>> {
    let sizes = (4..13).map(|shift| 1usize << shift); // 16 B to 4 KiB
    sizes
        .enumerate()
        .flat_map(|(index, size)| {
            let count = (sample + index) % 8;
            (0..count).map(move |_| vec![1u8; size])
        })
        .collect()
}

/// What a row's samples say.
struct Figures {
    /// Judged on every lap (more running threads than cores, or asked).
    all_laps: bool,
    /// Laps judged, of all laps.
    judged: usize,
    laps: usize,
    /// Median ns per task of each contender, over the samples judged.
    medians: Vec<Option<f64>>,
    /// chase-lev / crossbeam-deque, lap by lap, over the laps judged.
    paired: Option<Interval>,
}

fn figures(row: &Row, samples: &[Vec<Sample>], config: &Config) -> Figures {
    let all_laps = config.all_laps || row.shape.running() > config.cores;
    let judged = |sample: &Sample| all_laps || !sample.preempted;
    let medians = samples
        .iter()
        .map(|samples| {
            let mut times: Vec<f64> = samples
                .iter()
                .filter(|&sample| judged(sample))
                .map(|sample| sample.ns_per_task)
                .collect();
            (!times.is_empty()).then(|| median(&mut times))
        })
        .collect();
    let ratios: Vec<f64> = samples[CHASE_LEV]
        .iter()
        .zip(&samples[CROSSBEAM])
        .filter(|&(mine, theirs)| judged(mine) && judged(theirs))
        .map(|(mine, theirs)| mine.ns_per_task / theirs.ns_per_task)
        .collect();
    Figures {
        all_laps,
        judged: ratios.len(),
        laps: samples[CHASE_LEV].len(),
        medians,
        paired: (!ratios.is_empty()).then(|| Interval::of(ratios)),
    }
}

const WIDTHS: [usize; 11] = [56, 7, 6, 8, 9, 15, 6, 8, 7, 15, 46];

fn print_header() {
    print_row(
        &[
            "row",
            "threads",
            "null",
            "null/min",
            "chase-lev",
            "crossbeam-deque",
            "st3",
            "c-l / cb",
            "target",
            "judged on",
            "verdict",
        ],
        &WIDTHS,
    );
    print_separator(&WIDTHS);
}

/// Prints a row of the table; returns the null's share of the cheaper of
/// chase-lev and crossbeam-deque (the two whose ratio it would dilute).
fn print_figures(row: &Row, figures: &Figures) -> Option<f64> {
    let ns = |value: Option<f64>| value.map_or("-".to_string(), |ns| format!("{ns:.2}"));
    let null = figures.medians[NULL];
    let cheapest = figures.medians[CHASE_LEV..=CROSSBEAM]
        .iter()
        .flatten()
        .copied()
        .reduce(f64::min);
    let fraction = null.zip(cheapest).map(|(null, cheapest)| null / cheapest);
    let verdict = match figures.paired {
        Some(interval) => interval.judged(row.target),
        None => "too few samples (0 runs)".to_string(),
    };
    print_row(
        &[
            row.label.clone(),
            row.shape.running().to_string(),
            ns(null),
            fraction.map_or("-".to_string(), |f| format!("{:.1}%", 100.0 * f)),
            ns(figures.medians[CHASE_LEV]),
            ns(figures.medians[CROSSBEAM]),
            ns(figures.medians.get(3).copied().flatten()),
            figures.paired.map_or("-".to_string(), |interval| {
                format!("{:.3}", interval.median)
            }),
            format!("<= {:.2}", row.target),
            if figures.all_laps {
                format!("all {}", figures.laps)
            } else {
                format!("unflagged {}/{}", figures.judged, figures.laps)
            },
            verdict,
        ],
        &WIDTHS,
    );
    fraction
}

const DIAGNOSTIC_WIDTHS: [usize; 7] = [56, 15, 9, 11, 11, 11, 26];

/// The diagnostics of every row and contender but the null, over all
/// samples.
fn print_diagnostics(rows: &[(Row, Vec<Vec<Sample>>)], tasks: u64) {
    println!();
    println!(
        "Diagnostics, over every sample (preempted ones too): samples preempted; tasks per successful"
    );
    println!(
        "batch steal; Empty and Retry answers per 100,000 tasks (a thief's last Empty, which ends it,"
    );
    println!("counts); the thieves' share of the tasks, mean [least-most]:");
    print_row(
        &[
            "row",
            "implementation",
            "preempted",
            "tasks/batch",
            "Empty/100k",
            "Retry/100k",
            "thieves' share",
        ],
        &DIAGNOSTIC_WIDTHS,
    );
    print_separator(&DIAGNOSTIC_WIDTHS);
    for (row, samples) in rows {
        for (name, samples) in row.shape.contenders().into_iter().zip(samples).skip(1) {
            let total = |field: fn(&Sample) -> u64| samples.iter().map(field).sum::<u64>();
            let all_tasks = (samples.len() as u64 * tasks) as f64;
            let per_100k = |count: u64| format!("{:.0}", 1e5 * count as f64 / all_tasks);
            let batches = total(|sample| sample.batches);
            let per_batch = if batches == 0 {
                "-".to_string()
            } else {
                format!(
                    "{:.2}",
                    total(|sample| sample.in_batches) as f64 / batches as f64
                )
            };
            let share = match row.shape {
                Shape::Deque(_) => {
                    let shares: Vec<f64> = samples
                        .iter()
                        .map(|sample| sample.stolen as f64 / tasks as f64)
                        .collect();
                    let least = shares.iter().copied().fold(f64::INFINITY, f64::min);
                    let most = shares.iter().copied().fold(0.0, f64::max);
                    let mean = shares.iter().sum::<f64>() / shares.len() as f64;
                    format!(
                        "{:.1}% [{:.1}-{:.1}%]",
                        100.0 * mean,
                        100.0 * least,
                        100.0 * most
                    )
                }
                Shape::Injector(_) => "-".to_string(),
            };
            print_row(
                &[
                    row.label.clone(),
                    name.to_string(),
                    format!(
                        "{}/{}",
                        samples.iter().filter(|sample| sample.preempted).count(),
                        samples.len()
                    ),
                    per_batch,
                    per_100k(total(|sample| sample.empties)),
                    per_100k(total(|sample| sample.retries)),
                    share,
                ],
                &DIAGNOSTIC_WIDTHS,
            );
        }
    }
}

/// The CPU's model name, from /proc/cpuinfo where there is one.
fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|line| line.starts_with("model name"))
                .and_then(|line| line.split(':').nth(1))
                .map(|name| name.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".to_string())
}

/// The commit checked out, `+changes` if the tree differs from it.
fn commit() -> String {
    let git = |arguments: &[&str]| {
        std::process::Command::new("git")
            .args(arguments)
            .output()
            .ok()
            .filter(|output| output.status.success())
            .map(|output| String::from_utf8_lossy(&output.stdout).trim().to_string())
    };
    match git(&["rev-parse", "--short", "HEAD"]) {
        Some(commit) => {
            let changed = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|status| !status.is_empty());
            if changed {
                format!("{commit}+changes")
            } else {
                commit
            }
        }
        None => "unknown commit".to_string(),
    }
}

fn main() {
    let config = Config::from_env();
    let rows = config.rows();
    let started = Instant::now();
    println!(
        "Contended rows: {} tasks per sample, {} samples per implementation and row after a warm-up lap, \
         the implementations taking turns sample by sample; {} ({} cores), commit {}.",
        config.tasks,
        config.samples,
        cpu_model(),
        config.cores,
        commit()
    );
    println!(
        "ns per task from the gate's release to the last task taken, median; null = the same threads, gate"
    );
    println!(
        "and clock with a trivially fast queue, null/min = its share of the cheaper of chase-lev and"
    );
    println!(
        "crossbeam-deque (target < 10%); c-l / cb = chase-lev's time over crossbeam-deque's lap by lap,"
    );
    println!(
        "median, and in the verdict its ~95% interval; judged on the laps in which neither had a thread"
    );
    if config.all_laps {
        println!("preempted, but here on all laps (CHASE_LEV_CONTENDED_ALL_LAPS):");
    } else {
        println!(
            "preempted (an involuntary context switch), or on all laps where more threads run than cores:"
        );
    }
    print_header();
    let pool = Pool::new(
        rows.iter()
            .map(|row| row.shape.helpers())
            .max()
            .unwrap_or(0),
    );
    let mut measured = Vec::new();
    let mut fractions = Vec::new();
    let mut file = String::new();
    for row in rows {
        let samples = measure(&row, &pool, &config);
        let figures = figures(&row, &samples, &config);
        if let Some(fraction) = print_figures(&row, &figures) {
            fractions.push((row.label.clone(), fraction));
        }
        file += &tsv_line(&row, &figures);
        measured.push((row, samples));
    }
    print_diagnostics(&measured, config.tasks);
    println!();
    let over: Vec<String> = fractions
        .iter()
        .filter(|(_, fraction)| *fraction >= 0.1)
        .map(|(label, fraction)| format!("{label} ({:.1}%)", 100.0 * fraction))
        .collect();
    let worst = fractions
        .iter()
        .map(|(_, fraction)| *fraction)
        .fold(0.0, f64::max);
    if over.is_empty() {
        println!(
            "The null runs cost at most {:.1}% of the cheaper of chase-lev and crossbeam-deque (target < 10%).",
            100.0 * worst
        );
    } else {
        println!(
            "The null runs cost 10% or more of the cheaper of chase-lev and crossbeam-deque in: {}.",
            over.join(", ")
        );
    }
    if config.filters.is_empty() {
        write_tsv(&config, &file);
    }
    println!("({:.1} s)", started.elapsed().as_secs_f64());
}

/// The file the targets table reads (`benches/compare/targets.rs`).
const TSV: &str = "contended.tsv";

/// A row for `contended.tsv`: label, target, the paired interval (median,
/// low, high, laps), then ns per task of the null, chase-lev,
/// crossbeam-deque and st3 (`-` where there is none) and the laps judged.
fn tsv_line(row: &Row, figures: &Figures) -> String {
    let ns = |value: Option<f64>| value.map_or("-".to_string(), |ns| format!("{ns:.2}"));
    let Some(interval) = figures.paired else {
        return String::new();
    };
    format!(
        "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
        row.label,
        row.target,
        interval.median,
        interval.low,
        interval.high,
        interval.n,
        ns(figures.medians[NULL]),
        ns(figures.medians[CHASE_LEV]),
        ns(figures.medians[CROSSBEAM]),
        ns(figures.medians.get(3).copied().flatten()),
        if figures.all_laps {
            format!("all {}", figures.laps)
        } else {
            format!("unflagged {}/{}", figures.judged, figures.laps)
        },
    )
}

fn write_tsv(config: &Config, rows: &str) {
    let path = chase_lev_bench::target_file(TSV);
    let header = format!(
        "contended bench, {} tasks, {} samples, {} ({} cores), commit {}",
        config.tasks,
        config.samples,
        cpu_model(),
        config.cores,
        commit()
    );
    match std::fs::write(&path, format!("# {header}\n{rows}")) {
        Ok(()) => println!("(written to {} for the targets table)", path.display()),
        Err(error) => eprintln!("could not write {}: {error}", path.display()),
    }
}
