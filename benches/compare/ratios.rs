//! Reads back the estimates criterion wrote during this run and prints the
//! ratios chase-lev / st3 and chase-lev / crossbeam-deque, so that the table
//! compares figures from one run on the same (noisy, shared) machine.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;

/// Where criterion writes its reports: `$CRITERION_HOME`, else
/// `$CARGO_TARGET_DIR/criterion`, else `criterion/` in the target directory
/// that holds this bench executable (`<target>/release/deps/compare-…`).
pub fn output_directory() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(home);
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(target).join("criterion");
    }
    let executable = std::env::current_exe().expect("the bench knows its own path");
    match executable.ancestors().nth(3) {
        Some(target) => target.join("criterion"),
        None => PathBuf::from("target/criterion"),
    }
}

/// One benchmark's figures, in nanoseconds per element of its throughput.
struct Figures {
    median: f64,
    /// The fastest sample's time per element: the least disturbed by the
    /// other users of the machine.
    best: f64,
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

/// Finds every `new/` directory written since `since` and reads its figures,
/// keyed by (group, function).
fn collect(directory: &Path, since: SystemTime, found: &mut BTreeMap<(String, String), Figures>) {
    let Ok(entries) = std::fs::read_dir(directory) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if !path.is_dir() {
            continue;
        }
        if path.file_name().is_some_and(|name| name == "new") {
            if let Some(figures) = read_figures(&path, since) {
                found.insert(figures.0, figures.1);
            }
        } else {
            collect(&path, since, found);
        }
    }
}

fn read_figures(new: &Path, since: SystemTime) -> Option<((String, String), Figures)> {
    let estimates_path = new.join("estimates.json");
    let modified = std::fs::metadata(&estimates_path).ok()?.modified().ok()?;
    if modified < since {
        return None; // from an earlier run (or filtered out of this one)
    }
    let benchmark = read_json(&new.join("benchmark.json"))?;
    let estimates = read_json(&estimates_path)?;
    let sample = read_json(&new.join("sample.json"))?;
    let elements = benchmark["throughput"]["Elements"].as_f64().unwrap_or(1.0);
    let median = estimates["median"]["point_estimate"].as_f64()? / elements;
    let iterations = sample["iters"].as_array()?;
    let times = sample["times"].as_array()?;
    let best = iterations
        .iter()
        .zip(times)
        .filter_map(|(count, time)| Some(time.as_f64()? / count.as_f64()?))
        .fold(f64::INFINITY, f64::min)
        / elements;
    let key = (
        benchmark["group_id"].as_str()?.to_string(),
        benchmark["function_id"].as_str().unwrap_or("").to_string(),
    );
    Some((key, Figures { median, best }))
}

/// Each group, with the ratio table's target as the largest chase-lev/st3
/// and chase-lev/crossbeam ratios that meet it (`None`: no target).
const GROUPS: [(&str, Option<f64>, Option<f64>); 5] = [
    ("owner push 1k then pop 1k", Some(1.0), None),
    ("owner push 1M then pop 1M", Some(1.2), None),
    ("owner push;pop pairs", Some(1.0), None),
    ("steal 1k, same thread", Some(1.0), Some(1.0 / 1.5)),
    ("batch steal 1k, same thread", Some(1.0), Some(1.0 / 1.5)),
];

/// The ratio table's targets for `group`: the largest chase-lev/st3 and
/// chase-lev/crossbeam ratios that meet them.
pub fn target(group: &str) -> (Option<f64>, Option<f64>) {
    GROUPS
        .iter()
        .find(|(name, _, _)| *name == group)
        .map_or((None, None), |&(_, st3, crossbeam)| (st3, crossbeam))
}

/// "yes" or "NO" for a ratio against its target, "-" without one of them.
pub fn met(ratio: Option<f64>, target: Option<f64>) -> &'static str {
    match (ratio, target) {
        (Some(ratio), Some(target)) if ratio <= target => "yes",
        (Some(_), Some(_)) => "NO",
        _ => "-",
    }
}

/// [`met`] for the median ratio of two benchmarks' figures.
fn verdict(mine: Option<&Figures>, theirs: Option<&Figures>, target: Option<f64>) -> &'static str {
    let ratio = mine
        .zip(theirs)
        .map(|(mine, theirs)| mine.median / theirs.median);
    met(ratio, target)
}

pub fn print_ratio_table(directory: &Path, since: SystemTime) {
    let mut found = BTreeMap::new();
    collect(directory, since, &mut found);
    if found.is_empty() {
        println!(
            "(no criterion estimates written by this run under {}: nothing to compare)",
            directory.display()
        );
        return;
    }
    let figure = |group: &str, deque: &str| found.get(&(group.to_string(), deque.to_string()));
    let nanoseconds = |figures: Option<&Figures>| match figures {
        Some(figures) => format!("{:.2}", figures.median),
        None => "-".to_string(),
    };
    let ratio = |mine: Option<&Figures>, theirs: Option<&Figures>, best: bool| match (mine, theirs)
    {
        (Some(mine), Some(theirs)) if best => format!("{:.2}", mine.best / theirs.best),
        (Some(mine), Some(theirs)) => format!("{:.2}", mine.median / theirs.median),
        _ => "-".to_string(),
    };
    println!();
    println!("Ratios from this run (ns per operation for the owner rows, per task for the others; the owner");
    println!("rows and the same-thread steals are thread CPU time, the rows with thieves wall-clock time;");
    println!("median of criterion's samples; 'best' divides the fastest samples; below 1 means chase-lev is faster;");
    println!(
        "'met': the ratio table's targets on the median ratios: owner paths <= st3 (1M: <= 1.2 x st3),"
    );
    println!("steals <= st3 and <= crossbeam / 1.5):");
    const WIDTHS: [usize; 11] = [27, 9, 7, 9, 6, 13, 19, 11, 17, 8, 14];
    let header = [
        &["benchmark"][..],
        &FIGURE_COLUMNS,
        &["(best) /st3", "(best) /crossbeam"],
        &VERDICT_COLUMNS,
    ];
    print_row(&header.concat(), &WIDTHS);
    print_separator(&WIDTHS);
    for (group, st3_target, crossbeam_target) in GROUPS {
        let mine = figure(group, "chase-lev");
        let st3 = figure(group, "st3");
        let crossbeam = figure(group, "crossbeam-deque");
        if mine.is_none() && st3.is_none() && crossbeam.is_none() {
            continue;
        }
        print_row(
            &[
                group.to_string(),
                nanoseconds(mine),
                nanoseconds(st3),
                nanoseconds(crossbeam),
                nanoseconds(figure(group, "Vec")),
                ratio(mine, st3, false),
                ratio(mine, crossbeam, false),
                ratio(mine, st3, true),
                ratio(mine, crossbeam, true),
                verdict(mine, st3, st3_target).to_string(),
                verdict(mine, crossbeam, crossbeam_target).to_string(),
            ],
            &WIDTHS,
        );
    }
}

/// The columns that both tables share: each deque's figure and the ratios.
pub const FIGURE_COLUMNS: [&str; 6] = [
    "chase-lev",
    "st3",
    "crossbeam",
    "Vec",
    "chase-lev/st3",
    "chase-lev/crossbeam",
];

/// The columns of the targets' verdicts.
pub const VERDICT_COLUMNS: [&str; 2] = ["met /st3", "met /crossbeam"];

// The tables' rows, shared with the contended bench.
pub use chase_lev_bench::table::{print_row, print_separator};
