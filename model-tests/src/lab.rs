//! The fence lab's search, shared by its text report, its pictures
//! ([`crate::diagram`]) and the gallery test: for a mutant, the first
//! scenario of the loom suite that kills it, the correct deque's count on
//! that scenario, and the failing execution with the deque's event log.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use crate::evidence::{self, Failure};
use crate::explore::{self, Exploration};
use crate::on_loom::scenarios::{self, Scenario};
use crate::Mutant;

/// A mutant's counterexample, as loom found it.
#[derive(Clone, Debug)]
pub struct Counterexample {
    /// The mutant.
    pub mutant: Mutant,
    /// The first scenario of the suite that kills it.
    pub scenario: &'static str,
    /// Threads in that scenario (the owner included).
    pub threads: usize,
    /// Loom's preemption bound for it (`None`: every interleaving).
    pub preemption_bound: Option<usize>,
    /// Interleavings the correct deque ran on that scenario.
    pub correct_interleavings: usize,
    /// How long that took (printed, never drawn: pictures must not change
    /// from run to run).
    pub correct_elapsed: Duration,
    /// The correct deque's violation, if it failed too (it never should).
    pub correct_failure: Option<String>,
    /// The mutant's failing execution is the how-manieth loom ran.
    pub failing_interleaving: usize,
    /// The violation and the deque's event log of that execution.
    pub failure: Failure,
}

impl Counterexample {
    /// The preemption bound in words.
    pub fn bound(&self) -> String {
        match self.preemption_bound {
            None => "every interleaving".to_string(),
            Some(bound) => format!("interleavings with at most {bound} preemptions"),
        }
    }

    /// What went wrong, in one sentence without a final full stop.
    pub fn verdict(&self) -> String {
        let violation = self.failure.violation.trim().trim_end_matches('.');
        if self.failure.found_by_ledger {
            violation.to_string()
        } else if violation.contains("Causality violation") {
            format!("a data race on a slot's bytes, so loom stops the execution ({violation})")
        } else {
            format!("the execution panics: {violation}")
        }
    }
}

/// The correct deque's explorations, one per scenario, kept so that the
/// mutants killed by the same scenario share one run of it (the biggest
/// scenarios take minutes).
#[derive(Default)]
pub struct CorrectRuns {
    runs: HashMap<&'static str, Exploration>,
}

impl CorrectRuns {
    fn of(&mut self, scenario: &'static Scenario) -> &Exploration {
        self.runs
            .entry(scenario.name)
            .or_insert_with(|| explore::with_loom(scenario, None))
    }
}

/// Runs the suite's scenarios under loom against `mutant` until one kills
/// it; `None` if none does.
pub fn find(mutant: Mutant) -> Option<Counterexample> {
    let scenario = scenarios::ALL
        .iter()
        .filter(|scenario| scenario.reaches(mutant.name()))
        .find(|scenario| !explore::with_loom(scenario, Some(mutant)).passed())?;
    counterexample(mutant, scenario, &mut CorrectRuns::default())
}

/// The counterexample of `mutant` in `scenario`, which kills it (the
/// matrix found so): the correct deque's run of the scenario (from
/// `correct`), and the mutant's failing execution again, with the deque's
/// event log on. `None` if the scenario does not kill it after all.
pub fn counterexample(
    mutant: Mutant,
    scenario: &'static Scenario,
    correct: &mut CorrectRuns,
) -> Option<Counterexample> {
    let correct = correct.of(scenario).clone();
    // Loom explores in the same order every time, so the failing execution
    // is the same one as the untraced run's.
    evidence::set_tracing(true);
    let traced = explore::with_loom(scenario, Some(mutant));
    evidence::set_tracing(false);
    Some(Counterexample {
        mutant,
        scenario: scenario.name,
        threads: scenario.threads,
        preemption_bound: explore::loom_preemption_bound(scenario),
        correct_interleavings: correct.interleavings,
        correct_elapsed: correct.elapsed,
        correct_failure: correct.failure.map(|failure| failure.violation),
        failing_interleaving: traced.interleavings,
        failure: traced.failure?,
    })
}

/// The steps of `counterexample` as the lab shows them: with each thief's
/// registration of its hazard record folded into one step
/// ([`crate::counterexample::fold_registration`]), unless the mutant
/// changes the registry, whose lesson the registration is part of.
pub fn steps_to_draw(counterexample: &Counterexample) -> Vec<crate::counterexample::Step> {
    let steps = crate::counterexample::steps(&counterexample.failure.trace);
    if crate::table::changes_the_registry(counterexample.mutant) {
        steps
    } else {
        crate::counterexample::fold_registration(steps)
    }
}

/// The scenario of the suite called `name`.
pub fn scenario_named(name: &str) -> Option<&'static Scenario> {
    scenarios::ALL.iter().find(|scenario| scenario.name == name)
}

/// Whether a counterexample has steps to draw: an event log (the deque's
/// and the injector's atomics record one; an execution stopped before its
/// first access has none).
pub fn has_steps(counterexample: &Counterexample) -> bool {
    !counterexample.failure.trace.is_empty()
}

/// Writes the gallery into `dir`: `<mutant>.svg` for every counterexample
/// with steps, and the index `README.md`. `found` has every mutant, in the
/// order of [`Mutant::ALL`]; `report` gets one line per mutant.
pub fn write_gallery(
    dir: &Path,
    found: &[(Mutant, Option<Counterexample>)],
    report: impl FnMut(String),
) -> Result<(), String> {
    write_pictures(dir, found, report)?;
    write(&dir.join("README.md"), &gallery_index(found))
}

fn write(file: &Path, contents: &str) -> Result<(), String> {
    std::fs::write(file, contents).map_err(|error| format!("{}: {error}", file.display()))
}

/// The pictures of [`write_gallery`] without its index: what
/// `mutation-matrix --only` redraws, since an index of some mutants would
/// drop the sections of all the others.
pub fn write_pictures(
    dir: &Path,
    found: &[(Mutant, Option<Counterexample>)],
    mut report: impl FnMut(String),
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|error| format!("{}: {error}", dir.display()))?;
    for (mutant, counterexample) in found {
        let name = mutant.name();
        match counterexample {
            Some(counterexample) if has_steps(counterexample) => {
                let file = dir.join(format!("{name}.svg"));
                let picture = crate::diagram::draw(counterexample);
                write(&file, &picture.svg)?;
                report(format!(
                    "{name:<30} killed by {} at interleaving {}: {} ({} steps, {}x{} px)",
                    counterexample.scenario,
                    counterexample.failing_interleaving,
                    file.display(),
                    picture.labels.len(),
                    picture.width,
                    picture.height
                ));
            }
            Some(counterexample) => report(format!(
                "{name:<30} killed by {}, but its execution has no event log: no picture",
                counterexample.scenario
            )),
            None => report(format!("{name:<30} not killed: no picture")),
        }
    }
    Ok(())
}

/// The gallery's index page (`docs/fence-lab/README.md`): for each mutant
/// that loom kills, its two-line lesson (from [`crate::lessons`]) and its
/// picture (`<mutant>.svg`); then the mutants it does not kill, with their
/// arguments. `found` has every mutant, in the order of [`Mutant::ALL`].
pub fn gallery_index(found: &[(Mutant, Option<Counterexample>)]) -> String {
    use std::fmt::Write as _;

    let mut out = String::new();
    let _ = writeln!(
        out,
        "# The fence lab's gallery\n\n\
         <!-- Generated by `cargo run --release -p model-tests --bin mutation-matrix -- --gallery docs/fence-lab`\n     \
         (loom at the matrix's preemption bound, 3) from model-tests/mutants.md and loom's\n     \
         counterexamples; .ci/run fails if it is out of date. -->\n\n\
         One picture for each mutant that loom kills: the failing interleaving the fence lab finds,\n\
         drawn as a sequence diagram. A lane per thread, time going down, one row per step of the\n\
         deque's event log (numbered as the lab's text trace), each operation a box from its call to its\n\
         return. Each load names the value it read, with an arrow from the store that wrote it; a\n\
         STALE load (red) has a dashed link to the newer store it missed. Which store a load read is\n\
         derived from the log: the last store of that value to that variable before the load (the\n\
         log is in execution order), STALE when another store to it came in between. The steps the\n\
         verdict is about are framed in red, and the verdict is at the bottom. A thief's first steal\n\
         claims its thread's hazard record in the registry's list of records; those accesses are\n\
         one row, `registers its hazard record (N accesses)`, except in the pictures of the\n\
         registry's own mutants, whose lesson they are part of.\n"
    );
    for (mutant, counterexample) in found {
        let Some(counterexample) = counterexample else {
            continue;
        };
        let lesson = crate::lessons::lesson(*mutant);
        let name = mutant.name();
        let _ = writeln!(out, "## {name}\n");
        let _ = writeln!(out, "**The mutant:** {}.  ", lesson.change);
        let _ = writeln!(
            out,
            "**What loom finds** ({}): {} (scenario `{}`, interleaving {}; the correct deque passes all {}, {}).\n",
            lesson.litmus,
            counterexample.verdict(),
            counterexample.scenario,
            counterexample.failing_interleaving,
            counterexample.correct_interleavings,
            counterexample.bound()
        );
        if has_steps(counterexample) {
            let _ = writeln!(out, "[![{name}]({name}.svg)]({name}.svg)\n");
        } else {
            let _ = writeln!(
                out,
                "No picture: loom stopped the failing execution before its first recorded \
                 access, so it has no steps to draw (`cargo run --release -p model-tests --bin fence-lab -- {name}` \
                 prints loom's verdict).\n"
            );
        }
    }
    let survivors: Vec<Mutant> = found
        .iter()
        .filter(|(_, counterexample)| counterexample.is_none())
        .map(|(mutant, _)| *mutant)
        .collect();
    if !survivors.is_empty() {
        let _ = writeln!(
            out,
            "## Not drawn: the mutants loom does not kill\n\n\
             No scenario of the suite has a failing interleaving for these, so there is no picture.\n"
        );
        for mutant in survivors {
            let lesson = crate::lessons::lesson(mutant);
            let argument = match crate::matrix::survivor_argument(mutant) {
                Some(argument) => {
                    let anchor = argument.anchor();
                    format!("argued in [{anchor}](../../{anchor})")
                }
                None => "no argument: a gap in the suite".to_string(),
            };
            let _ = writeln!(
                out,
                "- `{}`: {} ({}); {argument}.",
                mutant.name(),
                lesson.change,
                lesson.litmus
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use chase_lev_loom_mutants::Worker;

    /// The log's lines without their thread ids.
    fn events(trace: &[String]) -> Vec<String> {
        trace
            .iter()
            .map(|line| {
                line.split_once(": ")
                    .map_or(line.clone(), |(_, event)| event.to_string())
            })
            .collect()
    }

    #[test]
    fn the_mutant_builds_log_every_access_of_a_push_with_its_value_and_ordering() {
        loom::model(|| {
            let worker = Worker::<u64>::new_mutant(false, 4, false, None);
            chase_lev_loom_mutants::set_event_log(true);
            worker.push(7);
            assert_eq!(
                events(&chase_lev_loom_mutants::logged_events()),
                [
                    "load bottom = 0 (Relaxed)",
                    "write slot 0",
                    "fence (Release)",
                    "store bottom := 1 (Relaxed)",
                ]
            );
            chase_lev_loom_mutants::set_event_log(false);
        });
    }

    #[test]
    fn recording_the_log_changes_no_interleaving_loom_explores() {
        let scenario = scenario_named("prefilled_pop_pop_against_steal_steal").expect("a scenario");
        let quiet = explore::with_loom(scenario, Some(Mutant::TakeFence));
        evidence::set_tracing(true);
        let traced = explore::with_loom(scenario, Some(Mutant::TakeFence));
        let correct = explore::with_loom(scenario, None);
        evidence::set_tracing(false);
        assert_eq!(traced.interleavings, quiet.interleavings);
        assert!(!traced
            .failure
            .as_ref()
            .expect("the mutant fails")
            .trace
            .is_empty());
        assert_eq!(
            correct.interleavings,
            explore::with_loom(scenario, None).interleavings
        );
    }
}
