//! The scenarios with thieves (`concurrent.rs`), measured like the
//! single-threaded rows of `interleaved.rs`: the three deques take turns, a
//! few rounds each, turn after turn, so that a burst of load from another
//! process on this shared machine falls on all of them alike; each deque
//! keeps its fastest round. Criterion measures one deque after the other,
//! and there one burst of load can move one deque's median many times over
//! (docs/benchmarks.md#the-compare-bench-and-the-targets-table).
//!
//! The minimum is the figure the targets table uses. Beside it the table
//! prints the median of the same rounds, and the share of the fastest
//! round's tasks that the thieves took. Where the owner pops, the plain
//! minimum is not the race it is meant to measure: on this 2-core machine,
//! shared with other jobs, one of the two threads is often descheduled for
//! the whole round, and then the other takes every task alone, with no
//! contention, faster than any real race (the first runs' fastest rounds of
//! "batch steal, owner pops" were the thief's alone, at the owner-idle
//! row's time). For those scenarios a second table keeps only the rounds in
//! which the owner and the thief each took at least a tenth of the tasks,
//! and its fastest round is the figure of the targets table.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::concurrent::{run_rounds, Scenario};
use crate::contenders::{ChaseLev, Contender, Crossbeam, St3};
use crate::ratios::{print_row, print_separator};

pub const SCENARIOS: [Scenario; 6] = [
    Scenario::StealOwnerIdle,
    Scenario::StealOwnerPops,
    Scenario::BatchOwnerIdle,
    Scenario::BatchOwnerPops,
    Scenario::ProducerThreeThieves,
    Scenario::ProducerThreeThievesOneByOne,
];

/// Rounds each deque runs per turn, after one that is not kept: a fresh
/// deque (chase-lev's and crossbeam's grow during their first producer
/// round) and thieves just spawned.
const ROUNDS_PER_TURN: u64 = 4;

/// One round: its time and how many of its tasks the thieves took.
type Sample = (Duration, u64);

fn turn<C: Contender>(scenario: Scenario, tasks: u64, samples: &mut Vec<Sample>) {
    let mut first = true;
    run_rounds::<C>(scenario, tasks, ROUNDS_PER_TURN + 1, |time, stolen| {
        if !std::mem::take(&mut first) {
            samples.push((time, stolen));
        }
    });
}

/// The least share of a round's tasks that the owner and the thieves must
/// each have taken for the round to count as a race (owner-pops scenarios).
const RACE_SHARE: f64 = 0.1;

/// A scenario's figures for one deque, in nanoseconds per task.
#[derive(Clone, Copy)]
pub struct Figures {
    pub fastest: f64,
    pub median: f64,
    /// The share of the fastest round's tasks that the thieves took.
    pub stolen_share: f64,
    /// Among the rounds where owner and thieves each took at least
    /// [`RACE_SHARE`] of the tasks: how many, the fastest, the median.
    pub races: usize,
    pub race_fastest: Option<f64>,
    pub race_median: Option<f64>,
}

fn figures(mut samples: Vec<Sample>, tasks: u64) -> Option<Figures> {
    if samples.is_empty() {
        return None;
    }
    samples.sort_by_key(|&(time, _)| time);
    let per_task = |time: Duration| time.as_secs_f64() * 1e9 / tasks as f64;
    let share = |stolen: u64| stolen as f64 / tasks as f64;
    let races: Vec<Duration> = samples
        .iter()
        .filter(|&&(_, stolen)| share(stolen) >= RACE_SHARE && 1.0 - share(stolen) >= RACE_SHARE)
        .map(|&(time, _)| time)
        .collect();
    let (fastest, stolen) = samples[0];
    Some(Figures {
        fastest: per_task(fastest),
        median: per_task(samples[samples.len() / 2].0),
        stolen_share: share(stolen),
        races: races.len(),
        race_fastest: races.first().map(|&time| per_task(time)),
        race_median: races.get(races.len() / 2).map(|&time| per_task(time)),
    })
}

/// Runs every scenario for `turns` turns and prints the table. Returns the
/// figures of (chase-lev, st3, crossbeam-deque) by scenario label.
pub fn print_interleaved_thief_table(
    turns: u64,
    tasks: u64,
) -> BTreeMap<&'static str, [Option<Figures>; 3]> {
    let mut table = BTreeMap::new();
    if turns == 0 {
        return table;
    }
    let mut rows = Vec::new();
    for scenario in SCENARIOS {
        let mut samples: [Vec<Sample>; 3] = Default::default();
        for turn_number in 0..turns {
            // Each deque goes first in every third turn: none always runs
            // right after the same neighbour.
            for position in 0..3 {
                match (turn_number as usize + position) % 3 {
                    0 => turn::<ChaseLev>(scenario, tasks, &mut samples[0]),
                    1 => turn::<St3>(scenario, tasks, &mut samples[1]),
                    _ => turn::<Crossbeam>(scenario, tasks, &mut samples[2]),
                }
            }
        }
        let [mine, st3, crossbeam] = samples.map(|samples| figures(samples, tasks));
        table.insert(scenario.label(), [mine, st3, crossbeam]);
        rows.push((scenario.label(), [mine, st3, crossbeam]));
    }

    let cell = |value: Option<f64>| value.map_or("-".to_string(), |ns| format!("{ns:.2}"));
    let ratio = |mine: Option<f64>, theirs: Option<f64>| match (mine, theirs) {
        (Some(mine), Some(theirs)) if theirs > 0.0 => Some(mine / theirs),
        _ => None,
    };
    println!();
    println!(
        "Scenarios with thieves, interleaved (wall-clock ns per task, {tasks} tasks a round): the deques"
    );
    println!(
        "take turns of {ROUNDS_PER_TURN} rounds, {turns} turns each; first the fastest round of each, its ratios"
    );
    println!(
        "(chase-lev / st3, chase-lev / crossbeam-deque), then the median of the same rounds, and the"
    );
    println!("share of the fastest round's tasks that the thieves took:");
    print_header("stolen c-l/st3/cb");
    for (label, figures) in rows {
        let fastest = figures.map(|f| f.map(|f| f.fastest));
        let median = figures.map(|f| f.map(|f| f.median));
        let share = figures
            .map(|f| {
                f.map_or("-".to_string(), |f| {
                    format!("{:.0}%", 100.0 * f.stolen_share)
                })
            })
            .join("/");
        print_row(
            &[
                label.to_string(),
                (turns * ROUNDS_PER_TURN).to_string(),
                cell(fastest[0]),
                cell(fastest[1]),
                cell(fastest[2]),
                cell(ratio(fastest[0], fastest[1])),
                cell(ratio(fastest[0], fastest[2])),
                cell(median[0]),
                cell(median[1]),
                cell(median[2]),
                share,
            ],
            &TABLE_WIDTHS,
        );
    }
    println!();
    println!(
        "The scenarios where the owner pops, only the rounds in which the owner and the thief each took"
    );
    println!(
        "at least {:.0}% of the tasks (a race; in the others one side ran alone): how many of the rounds,",
        100.0 * RACE_SHARE
    );
    println!("the fastest, its ratios, the median:");
    print_header("races c-l/st3/cb");
    for scenario in SCENARIOS.into_iter().filter(|s| s.owner_pops()) {
        let figures = table[scenario.label()];
        let fastest = figures.map(|f| f.and_then(|f| f.race_fastest));
        let median = figures.map(|f| f.and_then(|f| f.race_median));
        let races = figures
            .map(|f| f.map_or("-".to_string(), |f| f.races.to_string()))
            .join("/");
        print_row(
            &[
                scenario.label().to_string(),
                (turns * ROUNDS_PER_TURN).to_string(),
                cell(fastest[0]),
                cell(fastest[1]),
                cell(fastest[2]),
                cell(ratio(fastest[0], fastest[1])),
                cell(ratio(fastest[0], fastest[2])),
                cell(median[0]),
                cell(median[1]),
                cell(median[2]),
                races,
            ],
            &TABLE_WIDTHS,
        );
    }
    table
}

/// The columns of both tables of this file.
const TABLE_WIDTHS: [usize; 11] = [34, 6, 9, 7, 9, 5, 10, 14, 8, 14, 17];

/// The header of a table of this file, whose last column is `last`.
fn print_header(last: &str) {
    print_row(
        &[
            "scenario",
            "rounds",
            "chase-lev",
            "st3",
            "crossbeam",
            "/st3",
            "/crossbeam",
            "chase-lev med.",
            "st3 med.",
            "crossbeam med.",
            last,
        ],
        &TABLE_WIDTHS,
    );
    print_separator(&TABLE_WIDTHS);
}
