//! The mutation matrix: runs every mutant against the loom suite and
//! shuttle, reads miri's results, prints the table and writes
//! `model-tests/mutation-matrix.tsv`.
//!
//! Usage: `cargo run --release -p model-tests --bin mutation-matrix [-- --no-shuttle] [--gallery DIR] [--only MUTANT]...`
//! With `--only MUTANT` (repeatable) it runs those mutants' rows alone and
//! prints them, without writing `mutation-matrix.tsv` or the gallery's index
//! (a partial table would drop every other row); with `--gallery DIR` it
//! still draws their pictures.
//! With `--gallery DIR` it also draws the fence lab's gallery into DIR from
//! the same run (each killing scenario is run again only for the killed
//! mutant's event log, and once for the correct deque); `.ci/run` compares
//! it with `docs/fence-lab/`.
//! Budget: `SHUTTLE_SCHEDULES` schedules per scenario for each of shuttle's
//! random and PCT schedulers (default 500: the shuttle build leaks a few
//! kilobytes per schedule, its retired buffers and its hazard records, so
//! at 1000 a run of every mutant held about 24 GB by the end and was
//! killed). Loom explores every scenario
//! with at most `LOOM_MAX_PREEMPTIONS` preemptions, 3 unless set (the budget
//! that keeps the whole matrix within CI's time: the deque's survivors run
//! the whole suite, about 720 thousand interleavings each at 3, more at
//! the scenarios' own bounds); `--own-bounds` uses the scenarios' own
//! bounds instead (the loom suite's: exhaustive where it can be).
//! Exits with failure if a mutant survives without an argument.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use model_tests::lab;
use model_tests::matrix::{self, ShuttleBudget};

/// The matrix's preemption bound unless `LOOM_MAX_PREEMPTIONS` says otherwise.
const DEFAULT_PREEMPTIONS: &str = "3";

fn main() -> ExitCode {
    // Every kill is a panic inside the model checker; the table reports them.
    std::panic::set_hook(Box::new(|_| {}));
    let arguments: Vec<String> = std::env::args().collect();
    let own_bounds = arguments.iter().any(|argument| argument == "--own-bounds");
    if own_bounds {
        std::env::remove_var("LOOM_MAX_PREEMPTIONS");
    } else if std::env::var_os("LOOM_MAX_PREEMPTIONS").is_none() {
        // Still one thread: nothing reads the environment concurrently.
        std::env::set_var("LOOM_MAX_PREEMPTIONS", DEFAULT_PREEMPTIONS);
    }
    let run_shuttle = !arguments.iter().any(|argument| argument == "--no-shuttle");
    let gallery = arguments
        .iter()
        .position(|argument| argument == "--gallery")
        .map(|at| PathBuf::from(arguments.get(at + 1).expect("--gallery needs a directory")));
    let only: Vec<model_tests::Mutant> = arguments
        .windows(2)
        .filter(|pair| pair[0] == "--only")
        .map(|pair| {
            model_tests::Mutant::from_name(&pair[1])
                .unwrap_or_else(|| panic!("--only {}: no such mutant", pair[1]))
        })
        .collect();
    let mutants: &[model_tests::Mutant] = if only.is_empty() {
        &model_tests::Mutant::ALL
    } else {
        &only
    };
    let schedules = std::env::var("SHUTTLE_SCHEDULES").map_or(500, |value| {
        value.parse().expect("SHUTTLE_SCHEDULES must be a number")
    });
    let budget = ShuttleBudget {
        schedules_per_scheduler: if run_shuttle { schedules } else { 0 },
        seed: 1,
    };
    let directory = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let miri_results = directory.join("miri-results.tsv");
    println!(
        "mutation matrix: {} mutants against the loom suite",
        mutants.len()
    );
    match std::env::var("LOOM_MAX_PREEMPTIONS") {
        Ok(bound) => println!(
            "loom: every scenario with at most {bound} preemptions (LOOM_MAX_PREEMPTIONS; \
             --own-bounds for the suite's own bounds)"
        ),
        Err(_) => println!("loom: every scenario at its own bound (--own-bounds)"),
    }
    if run_shuttle {
        println!("shuttle: PCT (depth 3) and random, {schedules} schedules per scenario each (SHUTTLE_SCHEDULES)");
    }
    match std::fs::metadata(&miri_results) {
        Ok(_) => println!("miri: results read from {}", miri_results.display()),
        Err(_) => println!(
            "miri: no {} (run model-tests/run-miri-matrix.sh)",
            miri_results.display()
        ),
    }
    let started = Instant::now();
    let rows = matrix::run_rows(mutants, budget, &miri_results, |row| {
        println!(
            "  {:<24} {:<22} {:<52} {:>7} interleavings  {:>6.2} s",
            row.mutant.name(),
            row.verdict(),
            row.scenario_or_argument(),
            row.interleavings(),
            row.seconds()
        );
    });
    println!();
    print!("{}", matrix::table(&rows));
    if only.is_empty() {
        let output = directory.join("mutation-matrix.tsv");
        std::fs::write(&output, matrix::tsv(&rows)).expect("write the matrix file");
        println!(
            "\nwritten to {} in {:.1} s",
            output.display(),
            started.elapsed().as_secs_f64()
        );
    } else {
        println!(
            "\n--only: {} rows in {:.1} s; mutation-matrix.tsv not written",
            rows.len(),
            started.elapsed().as_secs_f64()
        );
    }
    if let Some(dir) = &gallery {
        let started = Instant::now();
        let mut correct = lab::CorrectRuns::default();
        let found: Vec<_> = rows
            .iter()
            .map(|row| {
                let counterexample = match &row.loom {
                    matrix::LoomVerdict::Killed { scenario, .. } => {
                        let scenario = lab::scenario_named(scenario).expect("a suite scenario");
                        lab::counterexample(row.mutant, scenario, &mut correct)
                    }
                    matrix::LoomVerdict::Survived { .. } => None,
                };
                (row.mutant, counterexample)
            })
            .collect();
        let report = |line| println!("  {line}");
        let written = if only.is_empty() {
            lab::write_gallery(dir, &found, report)
        } else {
            // The index is not written, but its sections for these mutants
            // are printed, to be put in by hand until the next whole run.
            println!("{}", lab::gallery_index(&found));
            lab::write_pictures(dir, &found, report)
        };
        if let Err(message) = written {
            eprintln!("mutation-matrix: {message}");
            return ExitCode::FAILURE;
        }
        println!(
            "the fence lab's gallery drawn in {} in {:.1} s",
            dir.display(),
            started.elapsed().as_secs_f64()
        );
    }
    let gaps: Vec<&str> = rows
        .iter()
        .filter(|row| row.verdict() == "SURVIVED (gap)")
        .map(|row| row.mutant.name())
        .collect();
    let stale = matrix::stale_arguments(&rows);
    if !gaps.is_empty() {
        println!(
            "mutants that survive without an argument (gaps in the suite): {}",
            gaps.join(", ")
        );
    }
    if !stale.is_empty() {
        println!(
            "mutants that loom kills but matrix.rs excuses with an argument (remove the stale \
             argument, so that losing the killing scenario fails loudly): {}",
            stale.join(", ")
        );
    }
    if gaps.is_empty() && stale.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
