//! The fence lab: what breaks when one ordering of the deque is weakened.
//!
//! ```text
//! cargo run --release -p model-tests --bin fence-lab -- take-fence
//! cargo run --release -p model-tests --bin fence-lab -- take-fence --hardware [--seconds 3] [--thieves 1] [--batch 8]
//! cargo run --release -p model-tests --bin fence-lab -- take-fence --svg take-fence.svg
//! cargo run --release -p model-tests --bin fence-lab -- --svg-dir docs/fence-lab
//! cargo run --release -p model-tests --bin fence-lab -- --list
//! ```
//!
//! For a mutant: loom explores the first scenario of the suite that kills
//! it, against the correct deque (which passes) and against the mutant
//! (which fails); the failing execution is printed as a numbered
//! interleaving built from the deque's own event log, then why the ordering
//! forbids it. With `--hardware`, the mutant and the correct deque then run
//! on real threads and the lab counts tasks taken twice per second. With
//! `--svg FILE` the counterexample is also drawn as a sequence diagram
//! (`model_tests::diagram`); `--svg-dir DIR` draws one for every mutant that
//! loom kills and writes the gallery's index, `DIR/README.md`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use model_tests::counterexample;
use model_tests::diagram;
use model_tests::hardware::{self, Setup};
use model_tests::lab::{self, Counterexample};
use model_tests::lessons::lesson;
use model_tests::matrix::survivor_argument;
use model_tests::Mutant;

struct Options {
    mutant: Option<Mutant>,
    list: bool,
    hardware: bool,
    seconds: u64,
    thieves: usize,
    batch: u64,
    svg: Option<PathBuf>,
    svg_dir: Option<PathBuf>,
}

fn parse() -> Result<Options, String> {
    let mut options = Options {
        mutant: None,
        list: false,
        hardware: false,
        seconds: 3,
        thieves: 1,
        batch: 8,
        svg: None,
        svg_dir: None,
    };
    let mut arguments = std::env::args().skip(1);
    while let Some(argument) = arguments.next() {
        match argument.as_str() {
            "--list" => options.list = true,
            "--hardware" => options.hardware = true,
            "--seconds" => options.seconds = number(arguments.next(), "--seconds")?,
            "--thieves" => options.thieves = number(arguments.next(), "--thieves")?,
            "--batch" => options.batch = number(arguments.next(), "--batch")?,
            "--svg" => options.svg = Some(path(arguments.next(), "--svg")?),
            "--svg-dir" => options.svg_dir = Some(path(arguments.next(), "--svg-dir")?),
            name => {
                options.mutant = Some(
                    Mutant::from_name(name)
                        .ok_or_else(|| format!("unknown mutant `{name}` (see --list)"))?,
                )
            }
        }
    }
    Ok(options)
}

fn number<N: std::str::FromStr>(value: Option<String>, flag: &str) -> Result<N, String> {
    value
        .and_then(|value| value.parse().ok())
        .ok_or_else(|| format!("{flag} needs a number"))
}

fn path(value: Option<String>, flag: &str) -> Result<PathBuf, String> {
    value
        .map(PathBuf::from)
        .ok_or_else(|| format!("{flag} needs a path"))
}

fn list() {
    println!("mutants (each weakens one ordering, fence or step of the deque):\n");
    for mutant in Mutant::ALL {
        let lesson = lesson(mutant);
        println!(
            "  {:<24} {} [{}]",
            mutant.name(),
            lesson.change,
            lesson.litmus
        );
    }
    println!("\nrun one with: cargo run --release -p model-tests --bin fence-lab -- <mutant> [--hardware] [--svg FILE]");
    println!("draw them all: cargo run --release -p model-tests --bin fence-lab -- --svg-dir DIR");
}

fn main() -> ExitCode {
    let options = match parse() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("fence-lab: {message}");
            return ExitCode::FAILURE;
        }
    };
    // Kills are panics inside loom; the lab prints its own account of them.
    if let Some(dir) = &options.svg_dir {
        std::panic::set_hook(Box::new(|_| {}));
        return match gallery(dir) {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("fence-lab: {message}");
                ExitCode::FAILURE
            }
        };
    }
    if options.list || options.mutant.is_none() {
        list();
        return ExitCode::SUCCESS;
    }
    let mutant = options.mutant.expect("checked above");
    std::panic::set_hook(Box::new(|_| {}));
    let found = model_check(mutant);
    let killed = found.is_some();
    if let Some(file) = &options.svg {
        match &found {
            Some(counterexample) => {
                if let Err(message) = write(file, &diagram::draw(counterexample).svg) {
                    eprintln!("fence-lab: {message}");
                    return ExitCode::FAILURE;
                }
                println!("the picture: {}", file.display());
            }
            None => println!(
                "no counterexample, so no picture ({} not written)",
                file.display()
            ),
        }
    }
    if options.hardware {
        let setup = Setup {
            thieves: options.thieves,
            batch: options.batch,
            duration: Duration::from_secs(options.seconds),
        };
        on_hardware(mutant, setup);
    }
    if killed || survivor_argument(mutant).is_some() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Loom's part; returns the counterexample if the mutant was killed.
fn model_check(mutant: Mutant) -> Option<Counterexample> {
    let lesson = lesson(mutant);
    println!("FENCE LAB: {}", mutant.name());
    println!("the mutant: {}", lesson.change);
    println!("the litmus shape: {}\n", lesson.litmus);

    let Some(found) = lab::find(mutant) else {
        println!("no scenario of the suite kills this mutant.");
        match survivor_argument(mutant) {
            Some(argument) => println!(
                "the suite cannot show it; the argument is in {}",
                argument.anchor()
            ),
            None => println!("and no argument covers it: a gap in the suite"),
        }
        println!("\nwhy ({}):\n{}\n", lesson.litmus, wrap(lesson.why, 100));
        return None;
    };
    println!(
        "scenario: {} ({} threads, {})",
        found.scenario,
        found.threads,
        found.bound()
    );
    match &found.correct_failure {
        None => println!(
            "1. the correct deque: {} interleavings explored, every task taken exactly once, no wrong Empty ({:.2} s)",
            found.correct_interleavings,
            found.correct_elapsed.as_secs_f64()
        ),
        Some(violation) => println!("1. the correct deque FAILED: {violation}"),
    }
    let failure = &found.failure;
    println!(
        "2. the mutant fails at interleaving {}: {}\n",
        found.failing_interleaving,
        failure.violation.trim()
    );
    if failure.trace.is_empty() && !failure.violation.contains("Causality violation") {
        println!(
            "(the execution panicked before its end, so the deque's event log was not kept)\n"
        );
    } else if failure.trace.is_empty() {
        println!(
            "(loom itself stopped this execution: it saw a slot read and written with no \
             happens-before between them, a data race on the task's bytes; no event was recorded \
             before it, so there is no step list for this one.)\n"
        );
    } else {
        println!(
            "the failing interleaving (loads show the value read and the store it came from):\n"
        );
        let steps = lab::steps_to_draw(&found);
        print!("{}", counterexample::render(&steps));
        if failure.found_by_ledger {
            println!(
                "     then: every thread has finished and the deque is dropped; the ledger finds that {}\n",
                failure.violation
            );
        } else {
            println!(
                "     then, at the next step: {} (loom stops the execution)\n",
                failure.violation.trim()
            );
        }
    }
    println!("why the correct ordering forbids it ({}):", lesson.litmus);
    println!("{}\n", wrap(lesson.why, 100));
    Some(found)
}

/// `--svg-dir`: a picture for every mutant that loom kills, and the index,
/// at the scenarios' own preemption bounds (the committed gallery is
/// `mutation-matrix --gallery DIR`'s, at the matrix's bound).
fn gallery(dir: &Path) -> Result<(), String> {
    let mut correct = lab::CorrectRuns::default();
    let mut found = Vec::new();
    for mutant in Mutant::ALL {
        // A mutant the matrix files as surviving (with its argument) has no
        // counterexample to draw; the matrix itself fails if loom kills one
        // (`matrix::stale_arguments`), so the whole suite need not run again
        // here for each of them.
        let counterexample = match survivor_argument(mutant) {
            Some(_) => None,
            None => model_tests::on_loom::scenarios::ALL
                .iter()
                .filter(|scenario| scenario.reaches(mutant.name()))
                .find(|scenario| !model_tests::explore::with_loom(scenario, Some(mutant)).passed())
                .and_then(|scenario| lab::counterexample(mutant, scenario, &mut correct)),
        };
        found.push((mutant, counterexample));
    }
    lab::write_gallery(dir, &found, |line| println!("{line}"))?;
    println!("index: {}", dir.join("README.md").display());
    Ok(())
}

fn write(file: &Path, contents: &str) -> Result<(), String> {
    std::fs::write(file, contents).map_err(|error| format!("{}: {error}", file.display()))
}

fn on_hardware(mutant: Mutant, setup: Setup) {
    println!(
        "3. on this machine's threads: 1 owner pushing {} tasks then popping them all, {} thief(s) stealing \
         in a loop, {} s each, std atomics:",
        setup.batch,
        setup.thieves,
        setup.duration.as_secs()
    );
    for (label, which) in [(mutant.name(), Some(mutant)), ("correct deque", None)] {
        let run = hardware::run(which, setup);
        println!(
            "   {:<24} {:>11} tasks  {:>8} taken twice ({:>10.1}/s)  {:>6} lost  {:>6} read unwritten",
            label,
            run.tasks,
            run.taken_twice,
            run.taken_twice_per_second(),
            run.lost,
            run.invented
        );
    }
}

fn wrap(text: &str, width: usize) -> String {
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let line = lines.last_mut().expect("one line at least");
        if !line.is_empty() && line.len() + 1 + word.len() > width {
            lines.push(word.to_string());
        } else {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    lines.join("\n")
}
