//! The joint-relaxation run (`model_tests::joint`): weakens the ordering
//! sites together, greedily, in the table's order and then in the reverse
//! order, and prints the maximally relaxed table each order reaches, with
//! the scenario that stopped each site, and how both compare with the
//! per-site mutation matrix.
//!
//! Usage: `cargo run --release -p model-tests --bin joint-relaxation [-- --no-shortcut]`
//! Loom explores at most `LOOM_MAX_PREEMPTIONS` preemptions, 3 unless set
//! (the matrix's bound). By default a set of weakenings contained in one that
//! already passed is taken as passing (weaker orderings only add executions):
//! the second order then explores only its kills; `--no-shortcut` explores
//! every step (about twice the time).
//! Not part of CI (its run time is in `proofs-notes/joint-relaxation.md`).

use std::time::Instant;

use model_tests::joint::{self, Outcome, Run};
use model_tests::matrix::survivor_argument;
use model_tests::Mutant;

use chase_lev_loom_mutants::joint_relaxation;

/// The bound unless `LOOM_MAX_PREEMPTIONS` says otherwise: the matrix's.
const DEFAULT_PREEMPTIONS: &str = "3";

fn main() {
    // Every kill is a panic inside the model checker; the table reports them.
    std::panic::set_hook(Box::new(|_| {}));
    if std::env::var_os("LOOM_MAX_PREEMPTIONS").is_none() {
        // Still one thread: nothing reads the environment concurrently.
        std::env::set_var("LOOM_MAX_PREEMPTIONS", DEFAULT_PREEMPTIONS);
    }
    let shortcut = !std::env::args().any(|argument| argument == "--no-shortcut");
    let started = Instant::now();
    let forward = joint::sites();
    let reverse: Vec<Mutant> = forward.iter().rev().copied().collect();
    println!(
        "# Joint relaxation: {} ordering sites, loom at LOOM_MAX_PREEMPTIONS={}",
        forward.len(),
        std::env::var("LOOM_MAX_PREEMPTIONS").unwrap_or_default()
    );
    println!(
        "Each site in turn is weakened as far as the loom suite (the scenarios that reach \
         it) still passes with every weakening accepted so far in place; its levels are \
         tried weakest first. Shortcut {}: a set of weakenings contained in one that \
         passed is marked implied, not explored again (weaker orderings only add \
         executions).\n",
        if shortcut { "on" } else { "off" }
    );
    let mut passed = Vec::new();
    let mut runs: Vec<Run> = Vec::new();
    for (name, order) in [
        ("the table's order (model-tests/mutants.md)", &forward),
        ("the reverse order", &reverse),
    ] {
        eprintln!("## {name}");
        let run = joint::run(
            name,
            order,
            &mut passed,
            shortcut,
            |site, level, outcome| {
                eprintln!("  {} {level}: {}", site.name(), describe(outcome));
            },
        );
        println!("## In {name}: {:.0} s\n", run.elapsed.as_secs_f64());
        println!("{}", joint::table(&run));
        runs.push(run);
    }
    println!("## Against the per-site matrix\n");
    compare(&runs);
    println!(
        "\nTotal: {:.0} s ({} ordering sites, two orders).",
        started.elapsed().as_secs_f64(),
        forward.len()
    );
}

fn describe(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Passed {
            interleavings,
            elapsed,
        } => format!(
            "passed ({interleavings} interleavings, {:.1} s)",
            elapsed.as_secs_f64()
        ),
        Outcome::Implied => "passed (implied)".to_string(),
        Outcome::Killed {
            scenario,
            interleavings,
            elapsed,
            violation,
        } => format!(
            "killed by {scenario} ({interleavings} interleavings, {:.1} s): {violation}",
            elapsed.as_secs_f64()
        ),
    }
}

/// Prints, per order, every site where the joint run differs from the
/// matrix: a survivor of the matrix the joint run could not weaken as far,
/// a site weakened further than the matrix's weakening, and a site the two
/// orders leave differently.
fn compare(runs: &[Run]) {
    let mut differences = 0;
    for run in runs {
        for row in &run.rows {
            let levels = joint_relaxation::levels(row.mutant);
            let own = joint_relaxation::table_level(row.mutant);
            let survives = survivor_argument(row.mutant).is_some();
            match row.kept() {
                None if survives => {
                    differences += 1;
                    println!(
                        "- {}: the matrix's `{}` survives alone, but not {}.",
                        row.mutant.name(),
                        levels[own],
                        run.order
                    );
                }
                Some(level) if survives && level > own => {
                    differences += 1;
                    println!(
                        "- {}: the matrix's `{}` survives alone; {} only {}.",
                        row.mutant.name(),
                        levels[own],
                        run.order,
                        levels[level]
                    );
                }
                Some(level) if level != own || !survives => println!(
                    "- {}: {} weakens it {} (the matrix tries only {}, {}).",
                    row.mutant.name(),
                    run.order,
                    levels[level],
                    levels[own],
                    if survives {
                        "which survives"
                    } else {
                        "which is killed"
                    }
                ),
                _ => {}
            }
        }
    }
    if let [first, second] = runs {
        for row in &first.rows {
            let other = second
                .rows
                .iter()
                .find(|other| other.mutant == row.mutant)
                .expect("both orders try every site");
            if row.kept() != other.kept() {
                differences += 1;
                let levels = joint_relaxation::levels(row.mutant);
                let kept = |kept: Option<usize>| kept.map_or("as shipped", |level| levels[level]);
                println!(
                    "- {}: {} leaves it {}, {} {}.",
                    row.mutant.name(),
                    first.order,
                    kept(row.kept()),
                    second.order,
                    kept(other.kept())
                );
            }
        }
    }
    if differences == 0 {
        println!(
            "No survivor of the matrix is left stronger than the matrix weakens it, in \
             either order, and both orders reach the same table (lines above, if any: \
             sites weakened beyond the matrix's one weakening)."
        );
    }
}
