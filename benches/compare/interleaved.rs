//! A second measurement of the single-threaded rows, robust to the other
//! users of this shared machine: the deques take turns, round by round, and
//! each keeps its fastest round. Another job can only add time to a round, so
//! the minimum over many short rounds, taken at interleaved moments, compares
//! the deques under the same conditions. Criterion measures one deque after
//! the other, and its medians moved far between runs here
//! (docs/benchmarks.md#the-compare-bench-and-the-targets-table).

use std::hint::black_box;
use std::time::{Duration, Instant};

use crate::contenders::{take_all, ChaseLev, Contender, Crossbeam, Owned, OwnerPaths, St3};
use crate::owner_paths::{push_pop_pairs, push_then_pop, PAIRS_PER_ITERATION};
use crate::ratios::{met, print_row, print_separator, target, FIGURE_COLUMNS, VERDICT_COLUMNS};

/// Runs one round and returns how long its measured part took.
type Round = Box<dyn FnMut() -> Duration>;

/// One row: a round for each deque (`None` where a deque has no such
/// operation), and how many operations a round makes.
struct Row {
    group: &'static str,
    operations: u64,
    rounds: u64,
    contenders: [Option<Round>; 4],
}

const STEAL_TASKS: u64 = 1_000;

fn owner_round<O: OwnerPaths + 'static>(
    mut owner: O,
    workload: impl Fn(&mut O) + 'static,
) -> Option<Round> {
    Some(Box::new(move || {
        let start = Instant::now();
        workload(&mut owner);
        start.elapsed()
    }))
}

/// The owner pushes 1,000 tasks outside the measured part, then the thief
/// (the same thread) takes them all: one by one, or in batches that it then
/// pops from its own deque.
fn steal_round<C: Contender>(batch: bool) -> Option<Round> {
    let owner = C::owner(STEAL_TASKS as usize);
    let thief = C::thief(&owner);
    let mine = C::owner(64);
    Some(Box::new(move || {
        for task in 0..STEAL_TASKS {
            C::push(&owner, black_box(task));
        }
        let start = Instant::now();
        take_all::<C>(&thief, &mine, STEAL_TASKS, batch);
        start.elapsed()
    }))
}

/// Push `count` then pop `count` or, with `pairs`, `count` push;pop pairs,
/// on deques kept from one round to the next.
fn owner_row(group: &'static str, count: u64, rounds: u64, pairs: bool) -> Row {
    fn round<O: OwnerPaths + 'static>(owner: O, count: u64, pairs: bool) -> Option<Round> {
        if pairs {
            owner_round(owner, move |owner| push_pop_pairs(owner, count))
        } else {
            owner_round(owner, move |owner| push_then_pop(owner, count))
        }
    }
    let capacity = if pairs { 1 } else { count as usize };
    Row {
        group,
        operations: 2 * count,
        rounds,
        contenders: [
            round(Owned::<ChaseLev>(ChaseLev::owner(capacity)), count, pairs),
            round(Owned::<St3>(St3::owner(capacity)), count, pairs),
            round(Owned::<Crossbeam>(Crossbeam::owner(capacity)), count, pairs),
            round(Vec::<u64>::new(), count, pairs),
        ],
    }
}

fn steal_row(group: &'static str, batch: bool, rounds: u64) -> Row {
    Row {
        group,
        operations: STEAL_TASKS,
        rounds,
        contenders: [
            steal_round::<ChaseLev>(batch),
            steal_round::<St3>(batch),
            steal_round::<Crossbeam>(batch),
            None,
        ],
    }
}

/// Runs the row's rounds in turn and returns each deque's fastest round, in
/// nanoseconds per operation.
fn measure(row: &mut Row) -> [Option<f64>; 4] {
    let mut fastest = [Duration::MAX; 4];
    for _ in 0..row.rounds {
        for (round, best) in row.contenders.iter_mut().zip(&mut fastest) {
            if let Some(round) = round {
                *best = (*best).min(round());
            }
        }
    }
    let mut per_operation = [None; 4];
    for (index, round) in row.contenders.iter().enumerate() {
        if round.is_some() {
            per_operation[index] = Some(fastest[index].as_secs_f64() * 1e9 / row.operations as f64);
        }
    }
    per_operation
}

/// Measures the single-threaded rows, interleaved, and prints their table.
/// `rounds` is the number of rounds of each 1,000-task row per deque (the
/// 1M row runs `rounds / 40`, at least 5).
/// Returns each row's group and figures (chase-lev, st3, crossbeam-deque,
/// Vec), for the targets table.
pub fn print_interleaved_table(rounds: u64) -> Vec<(&'static str, [Option<f64>; 4])> {
    let rounds = rounds.max(1);
    let mut rows = Vec::new();
    for (group, count, row_rounds, pairs) in [
        ("owner push 1k then pop 1k", 1_000, rounds, false),
        (
            "owner push 1M then pop 1M",
            1_000_000,
            (rounds / 40).max(5),
            false,
        ),
        ("owner push;pop pairs", PAIRS_PER_ITERATION, rounds, true),
    ] {
        let mut row = owner_row(group, count, row_rounds, pairs);
        rows.push((row.group, row.rounds, measure(&mut row)));
    }
    for (group, batch) in [
        ("steal 1k, same thread", false),
        ("batch steal 1k, same thread", true),
    ] {
        let mut row = steal_row(group, batch, rounds);
        rows.push((row.group, row.rounds, measure(&mut row)));
    }

    let cell = |value: Option<f64>| value.map_or("-".to_string(), |ns| format!("{ns:.2}"));
    let ratio = |mine: Option<f64>, theirs: Option<f64>| match (mine, theirs) {
        (Some(mine), Some(theirs)) => Some(mine / theirs),
        _ => None,
    };
    println!();
    println!(
        "Interleaved minimum (wall-clock ns per operation, or per task for the steals): the deques"
    );
    println!(
        "take turns round by round and each keeps its fastest round; below 1 means chase-lev is"
    );
    println!("faster; 'met' as above:");
    const WIDTHS: [usize; 10] = [27, 6, 9, 7, 9, 6, 13, 19, 8, 14];
    let header = [
        &["benchmark", "rounds"][..],
        &FIGURE_COLUMNS,
        &VERDICT_COLUMNS,
    ];
    print_row(&header.concat(), &WIDTHS);
    print_separator(&WIDTHS);
    let figures = rows
        .iter()
        .map(|&(group, _, figures)| (group, figures))
        .collect();
    for (group, rounds, [mine, st3, crossbeam, vec]) in rows {
        let (st3_target, crossbeam_target) = target(group);
        let (against_st3, against_crossbeam) = (ratio(mine, st3), ratio(mine, crossbeam));
        print_row(
            &[
                group.to_string(),
                rounds.to_string(),
                cell(mine),
                cell(st3),
                cell(crossbeam),
                cell(vec),
                cell(against_st3),
                cell(against_crossbeam),
                met(against_st3, st3_target).to_string(),
                met(against_crossbeam, crossbeam_target).to_string(),
            ],
            &WIDTHS,
        );
    }
    figures
}
