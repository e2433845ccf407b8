//! The fence lab: what breaks when one ordering of the deque is weakened.
//!
//! ```text
//! cargo run --release -p model-tests --bin fence-lab -- take-fence
//! cargo run --release -p model-tests --bin fence-lab -- take-fence --hardware [--seconds 3] [--thieves 1] [--batch 8]
//! cargo run --release -p model-tests --bin fence-lab -- --list
//! ```
//!
//! For a mutant: loom explores the first scenario of the suite that kills
//! it, against the correct deque (which passes) and against the mutant
//! (which fails); the failing execution is printed as a numbered
//! interleaving built from the deque's own event log, then why the ordering
//! forbids it. With `--hardware`, the mutant and the correct deque then run
//! on real threads and the lab counts tasks taken twice per second.

use std::process::ExitCode;
use std::time::Duration;

use model_tests::counterexample;
use model_tests::evidence;
use model_tests::explore;
use model_tests::hardware::{self, Setup};
use model_tests::lessons::lesson;
use model_tests::matrix::survivor_argument;
use model_tests::on_loom::scenarios;
use model_tests::Mutant;

struct Options {
    mutant: Option<Mutant>,
    list: bool,
    hardware: bool,
    seconds: u64,
    thieves: usize,
    batch: u64,
}

fn parse() -> Result<Options, String> {
    let mut options = Options {
        mutant: None,
        list: false,
        hardware: false,
        seconds: 3,
        thieves: 1,
        batch: 8,
    };
    let mut arguments = std::env::args().skip(1);
    while let Some(argument) = arguments.next() {
        match argument.as_str() {
            "--list" => options.list = true,
            "--hardware" => options.hardware = true,
            "--seconds" => options.seconds = number(arguments.next(), "--seconds")?,
            "--thieves" => options.thieves = number(arguments.next(), "--thieves")?,
            "--batch" => options.batch = number(arguments.next(), "--batch")?,
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
    println!("\nrun one with: cargo run --release -p model-tests --bin fence-lab -- <mutant> [--hardware]");
}

fn main() -> ExitCode {
    let options = match parse() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("fence-lab: {message}");
            return ExitCode::FAILURE;
        }
    };
    if options.list || options.mutant.is_none() {
        list();
        return ExitCode::SUCCESS;
    }
    let mutant = options.mutant.expect("checked above");
    // Kills are panics inside loom; the lab prints its own account of them.
    std::panic::set_hook(Box::new(|_| {}));
    let killed = model_check(mutant);
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

/// Loom's part; returns whether the mutant was killed.
fn model_check(mutant: Mutant) -> bool {
    let lesson = lesson(mutant);
    println!("FENCE LAB: {}", mutant.name());
    println!("the mutant: {}", lesson.change);
    println!("the litmus shape: {}\n", lesson.litmus);

    for scenario in scenarios::ALL {
        let mutated = explore::with_loom(scenario, Some(mutant));
        let Some(_) = mutated.failure else { continue };
        let bound = match explore::loom_preemption_bound(scenario) {
            None => "every interleaving".to_string(),
            Some(bound) => format!("interleavings with at most {bound} preemptions"),
        };
        println!(
            "scenario: {} ({} threads, {bound})",
            scenario.name, scenario.threads
        );
        let correct = explore::with_loom(scenario, None);
        match &correct.failure {
            None => println!(
                "1. the correct deque: {} interleavings explored, every task taken exactly once, no wrong Empty ({:.2} s)",
                correct.interleavings,
                correct.elapsed.as_secs_f64()
            ),
            Some(failure) => println!("1. the correct deque FAILED: {}", failure.violation),
        }
        // Again with the deque's event log on: loom explores in the same
        // order, so the failing execution is the same one.
        evidence::set_tracing(true);
        let traced = explore::with_loom(scenario, Some(mutant));
        evidence::set_tracing(false);
        let failure = traced
            .failure
            .unwrap_or_else(|| mutated.failure.clone().expect("failed above"));
        println!(
            "2. the mutant fails at interleaving {}: {}\n",
            traced.interleavings,
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
            println!("the failing interleaving (loads show the value read and the store it came from):\n");
            let steps = counterexample::steps(&failure.trace);
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
        return true;
    }
    println!("no scenario of the suite kills this mutant.");
    match survivor_argument(mutant) {
        Some(argument) => println!(
            "the suite cannot show it; the argument is in {}",
            argument.anchor()
        ),
        None => println!("and no argument covers it: a gap in the suite"),
    }
    println!("\nwhy ({}):\n{}\n", lesson.litmus, wrap(lesson.why, 100));
    false
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
