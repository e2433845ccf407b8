//! The joint-relaxation run: the mutation matrix weakens one ordering site at
//! a time, and two weakenings that are each safe can be unsafe together. This
//! run starts from the shipped orderings and, site after site in a stated
//! order, weakens each site as far as the loom suite still passes *with every
//! weakening accepted so far in place* (a greedy search, as VSync's optimiser
//! does with a model checker as its oracle). It prints the maximally relaxed
//! table it reaches, with the scenario that stopped each site.
//!
//! A site is an ordering mutant of `model-tests/mutants.md` (logic mutants
//! take no part). Its levels, weakest first, come from the mutant builds'
//! joint-relaxation mode (`joint_relaxation` in `deque/src/sites.rs`): the
//! orderings weaker than the shipped one that the operation allows, the
//! table's own weakening among them. The run tries them weakest first and
//! keeps the first under which the suite passes.
//!
//! What a step runs: the scenarios that reach the site
//! ([`Scenario::reaches`]), as the matrix does. A scenario that does not run
//! the site's code (an injector site, outside the injector's scenarios)
//! explores exactly what it explored when the last weakening it does run
//! was accepted, and passed then.
//!
//! One shortcut, on unless `--no-shortcut`, and stated in the output: a weaker ordering only adds executions (the behaviours of a
//! program with a set of weakenings in place include those with any subset
//! of them), so a set of weakenings contained in one that already passed
//! passes too; the run then does not explore it again but marks the step
//! "implied". Kills are always run (they are fast).

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use chase_lev_loom_mutants::joint_relaxation;

use crate::explore;
use crate::on_loom::scenarios::{Scenario, ALL};
use crate::Mutant;

/// A weakening in place: a site and the index of its level.
pub type Weakening = (Mutant, usize);

/// The sites of the run: every mutant with levels (the ordering mutants),
/// in the table's order.
pub fn sites() -> Vec<Mutant> {
    Mutant::ALL
        .into_iter()
        .filter(|mutant| !joint_relaxation::levels(*mutant).is_empty())
        .collect()
}

/// What one try of a level came to.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// Every scenario that reaches the site passed, with this many
    /// interleavings, in this time.
    Passed {
        /// Interleavings explored across the scenarios.
        interleavings: usize,
        /// Wall-clock time of the exploration.
        elapsed: Duration,
    },
    /// Not explored: the set is contained in one that passed.
    Implied,
    /// A scenario broke a promise.
    Killed {
        /// The scenario that stopped the site.
        scenario: &'static str,
        /// Interleavings of that scenario up to the kill.
        interleavings: usize,
        /// Wall-clock time of the whole try.
        elapsed: Duration,
        /// What went wrong (first line).
        violation: String,
    },
}

impl Outcome {
    /// Whether the suite passed (or would, by the shortcut).
    pub fn passed(&self) -> bool {
        !matches!(self, Outcome::Killed { .. })
    }
}

/// One site's row of a run.
#[derive(Clone, Debug)]
pub struct SiteResult {
    /// The site.
    pub mutant: Mutant,
    /// The levels tried, weakest first, each with its outcome; the last is
    /// the one kept if it passed.
    pub tries: Vec<(usize, Outcome)>,
}

impl SiteResult {
    /// The level kept, if any.
    pub fn kept(&self) -> Option<usize> {
        self.tries
            .last()
            .filter(|(_, outcome)| outcome.passed())
            .map(|(level, _)| *level)
    }
}

/// One greedy run in one order.
#[derive(Clone, Debug)]
pub struct Run {
    /// The name of the order.
    pub order: &'static str,
    /// The sites in the order tried.
    pub rows: Vec<SiteResult>,
    /// Wall-clock time of the run.
    pub elapsed: Duration,
}

/// Explores the scenarios that reach `site` with `weakenings` in place.
fn explore_with(weakenings: &[Weakening], site: Mutant) -> Outcome {
    joint_relaxation::reset();
    for &(mutant, level) in weakenings {
        joint_relaxation::set(mutant, Some(level));
    }
    let started = Instant::now();
    let mut interleavings = 0;
    let scenarios: Vec<&Scenario> = ALL
        .iter()
        .filter(|scenario| scenario.reaches(site.name()))
        .collect();
    let mut outcome = None;
    for scenario in scenarios {
        // No mutant: the deque runs its original functions, whose sites
        // consult the table set above.
        let exploration = explore::with_loom(scenario, None);
        if let Some(failure) = exploration.failure {
            outcome = Some(Outcome::Killed {
                scenario: scenario.name,
                interleavings: exploration.interleavings,
                elapsed: started.elapsed(),
                violation: failure.violation.lines().next().unwrap_or("").to_string(),
            });
            break;
        }
        interleavings += exploration.interleavings;
    }
    joint_relaxation::reset();
    outcome.unwrap_or(Outcome::Passed {
        interleavings,
        elapsed: started.elapsed(),
    })
}

/// Runs the greedy search over `order`. `passed` holds the sets that passed
/// so far (across runs), for the shortcut; `progress` is told each try.
pub fn run(
    name: &'static str,
    order: &[Mutant],
    passed: &mut Vec<Vec<Weakening>>,
    shortcut: bool,
    mut progress: impl FnMut(Mutant, &str, &Outcome),
) -> Run {
    let started = Instant::now();
    let mut accepted: Vec<Weakening> = Vec::new();
    let mut rows = Vec::new();
    for &site in order {
        let levels = joint_relaxation::levels(site);
        let mut tries = Vec::new();
        for (level, description) in levels.iter().enumerate() {
            let mut set = accepted.clone();
            set.push((site, level));
            let implied = shortcut
                && passed
                    .iter()
                    .any(|bigger| set.iter().all(|weakening| bigger.contains(weakening)));
            let outcome = if implied {
                Outcome::Implied
            } else {
                explore_with(&set, site)
            };
            progress(site, description, &outcome);
            let ok = outcome.passed();
            tries.push((level, outcome));
            if ok {
                if !implied {
                    passed.push(set.clone());
                }
                accepted = set;
                break;
            }
        }
        rows.push(SiteResult {
            mutant: site,
            tries,
        });
    }
    Run {
        order: name,
        rows,
        elapsed: started.elapsed(),
    }
}

/// The ordering a level leaves at the site: the part after "to" of its
/// description (`` `Acquire` to `Relaxed` `` gives `` `Relaxed` ``); the
/// whole description for a level of several pairs.
fn target(description: &str) -> &str {
    match description.split_once(" to ") {
        Some((_, to)) if !to.contains(" to ") => to,
        _ => description,
    }
}

/// The shipped ordering of a site: the part before "to" of its levels'
/// descriptions.
fn shipped(mutant: Mutant) -> String {
    let levels = joint_relaxation::levels(mutant);
    let mut froms: Vec<&str> = Vec::new();
    for description in &levels {
        for pair in description.split(", ") {
            let from = pair.split(" to ").next().unwrap_or(pair);
            if !froms.contains(&from) {
                froms.push(from);
            }
        }
    }
    froms.join(", ")
}

/// The run's table as Markdown: per site, the shipped ordering, what it was
/// relaxed to, the table's weakening (the matrix's mutant), and what
/// stopped it (the scenario that killed each weaker level tried).
pub fn table(run: &Run) -> String {
    let mut out = String::new();
    writeln!(
        out,
        "| site | shipped | relaxed to | the matrix, this weakening alone | stopped by (each weaker level tried) | loom time |"
    )
    .unwrap();
    out.push_str("|---|---|---|---|---|---:|\n");
    for row in &run.rows {
        let levels = joint_relaxation::levels(row.mutant);
        let relaxed = match row.kept() {
            Some(level) => {
                let implied = matches!(row.tries.last(), Some((_, Outcome::Implied)));
                format!(
                    "{}{}",
                    target(levels[level]),
                    if implied { " (implied)" } else { "" }
                )
            }
            None => "as shipped".to_string(),
        };
        let table_level = joint_relaxation::table_level(row.mutant);
        // The per-site matrix's verdict on the table's weakening alone.
        let matrix = format!(
            "{}: {}",
            target(levels[table_level]),
            match crate::matrix::survivor_argument(row.mutant) {
                Some(argument) => format!("survives ({})", argument.anchor()),
                None => "killed".to_string(),
            }
        );
        let stopped: Vec<String> = row
            .tries
            .iter()
            .filter_map(|(level, outcome)| match outcome {
                Outcome::Killed {
                    scenario,
                    interleavings,
                    ..
                } => Some(format!(
                    "{}: `{scenario}` ({interleavings} interleavings)",
                    target(levels[*level])
                )),
                _ => None,
            })
            .collect();
        let seconds: f64 = row
            .tries
            .iter()
            .map(|(_, outcome)| match outcome {
                Outcome::Passed { elapsed, .. } | Outcome::Killed { elapsed, .. } => {
                    elapsed.as_secs_f64()
                }
                Outcome::Implied => 0.0,
            })
            .sum();
        writeln!(
            out,
            "| {} | {} | {relaxed} | {matrix} | {} | {seconds:.1} s |",
            row.mutant.name(),
            shipped(row.mutant),
            if stopped.is_empty() {
                "-".to_string()
            } else {
                stopped.join("; ")
            },
        )
        .unwrap();
    }
    out
}
