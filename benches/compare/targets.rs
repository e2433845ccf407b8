//! The targets table: every target row, with the figure this run
//! (or `benches/callgrind.sh`) measured, its ratio and "met" or "not
//! met". Locked instructions come from the callgrind script's file (exact
//! counts; the bench itself cannot count them), times from this run: the
//! interleaved minimum for the single-threaded rows (`interleaved.rs`).
//! Every row where threads meet (a thief, the Injector) comes from the
//! contended bench's file (`cargo bench -p chase-lev-bench --bench
//! contended`, benches/contended/), whose harness shows its own cost: a
//! null run beside each row. The example pool's
//! rows come from the file its example writes
//! (`cargo run --release -p chase-lev-forkjoin --example forkjoin`), where
//! the pool and `rayon::join` take turns. The rayon rows come from the file
//! `benches/rayon_on_chase_lev.sh` writes (rayon from the registry,
//! built on chase-lev and on crossbeam-deque, runs alternating), and say
//! "not measured" when it has not run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use chase_lev_bench::paired::{read_rows, read_tsv, Interval, Row, FEWEST};
use chase_lev_bench::target_file;

use crate::ratios::{print_row, print_separator};

/// The file the contended bench writes: each row's paired interval, the
/// null's, chase-lev's, crossbeam-deque's and st3's ns per task, and the
/// laps judged (benches/contended/main.rs, `tsv_line`).
fn contended_file() -> PathBuf {
    target_file("contended.tsv")
}

/// The file `benches/callgrind.sh` writes.
fn callgrind_file() -> PathBuf {
    target_file("callgrind-owner-paths.tsv")
}

/// The file `demos/forkjoin/examples/forkjoin.rs` writes: the pool's and
/// rayon's best times on its three workloads.
fn forkjoin_file() -> PathBuf {
    callgrind_file().with_file_name("forkjoin-vs-rayon.tsv")
}

/// The file `benches/rayon_on_chase_lev.sh` writes: rayon on
/// chase-lev against rayon on crossbeam-deque, builds alternating (medians,
/// the paired ratio and its interval, instructions if counted).
fn rayon_file() -> PathBuf {
    callgrind_file().with_file_name("rayon-on-chase-lev.tsv")
}

/// Two programs timed run by run, one right after the other: the median of
/// the ratios of their times and its interval (`chase_lev_bench::paired`),
/// as the rayon script and the forkjoin example write them.
struct Paired {
    interval: Interval,
    /// Instructions of each on one thread (callgrind), if counted.
    instructions: Option<(f64, f64)>,
}

impl Paired {
    /// The interval's verdict against "at most `bound`", then the interval
    /// and, where counted, the ratio of instructions.
    fn verdict(&self, bound: f64) -> String {
        format!("{} {}", self.interval.verdict(bound), self.evidence())
    }

    /// The interval, and the ratio of instructions where counted.
    fn evidence(&self) -> String {
        let instructions = match self.instructions {
            Some((ours, theirs)) if theirs > 0.0 => format!("; instr. {:.3}", ours / theirs),
            _ => String::new(),
        };
        format!(
            "({} runs, CI {:.3}-{:.3}{instructions})",
            self.interval.n, self.interval.low, self.interval.high
        )
    }
}

/// One workload of the rayon script's file.
struct RayonRow {
    workload: String,
    description: String,
    /// Medians over the runs, ms.
    on_chase_lev: f64,
    on_crossbeam: f64,
    /// chase-lev's time over crossbeam-deque's.
    paired: Paired,
}

/// The rayon script's first line (runs, flags, commit) and its rows.
struct RayonRuns {
    header: String,
    rows: Vec<RayonRow>,
}

fn read_rayon(path: &Path) -> RayonRuns {
    let (header, lines) = read_tsv(path);
    let rows = lines
        .iter()
        .skip(1)
        .filter_map(|fields| {
            let number = |index: usize| fields.get(index)?.parse::<f64>().ok();
            Some(RayonRow {
                workload: fields.first()?.to_string(),
                description: fields.get(1)?.to_string(),
                on_chase_lev: number(2)?,
                on_crossbeam: number(3)?,
                paired: Paired {
                    interval: Interval {
                        median: number(4)?,
                        low: number(5)?,
                        high: number(6)?,
                        n: number(9)? as usize,
                    },
                    instructions: number(7).zip(number(8)),
                },
            })
        })
        .collect();
    RayonRuns { header, rows }
}

/// (workload, the pool's best ms, rayon's best ms, the pool's time over
/// rayon's run by run), in the file's order.
fn read_forkjoin(path: &Path) -> Vec<(String, f64, f64, Paired)> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            let number = |index: usize| fields.get(index)?.parse::<f64>().ok();
            let paired = Paired {
                interval: Interval {
                    median: number(5)?,
                    low: number(6)?,
                    high: number(7)?,
                    n: number(4)? as usize,
                },
                instructions: None,
            };
            Some((fields[0].to_string(), number(1)?, number(2)?, paired))
        })
        .collect()
}

/// Locked instructions per operation, keyed by (case, deque).
fn read_locked(path: &Path) -> BTreeMap<(String, String), f64> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return BTreeMap::new();
    };
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            let locked = fields.get(3)?.parse().ok()?;
            Some(((fields[0].to_string(), fields[1].to_string()), locked))
        })
        .collect()
}

fn verdict(met: Option<bool>) -> &'static str {
    match met {
        Some(true) => "met",
        Some(false) => "not met",
        None => "not measured",
    }
}

fn two(value: Option<f64>) -> String {
    value.map_or("-".to_string(), |value| format!("{value:.2}"))
}

/// Prints the table. `interleaved` is the interleaved table's rows
/// (chase-lev, st3, crossbeam-deque, Vec).
pub fn print_targets_table(interleaved: &[(&'static str, [Option<f64>; 4])]) {
    let path = callgrind_file();
    let locked = read_locked(&path);
    let locked_of =
        |case: &str, deque: &str| locked.get(&(case.to_string(), deque.to_string())).copied();
    let quick = |group: &str| {
        interleaved
            .iter()
            .find(|(name, _)| *name == group)
            .map(|(_, figures)| *figures)
            .unwrap_or([None; 4])
    };
    let ratio = |mine: Option<f64>, theirs: Option<f64>| match (mine, theirs) {
        (Some(mine), Some(theirs)) if theirs > 0.0 => Some(mine / theirs),
        _ => None,
    };
    let at_most = |value: Option<f64>, target: f64| value.map(|value| value <= target);

    // (figure, target, chase-lev, st3, crossbeam-deque, ratio, met)
    let mut rows: Vec<[String; 7]> = Vec::new();
    // A row whose target is a ratio to st3's figure.
    let st3_row = |label: &str,
                   target: f64,
                   mine: Option<f64>,
                   st3: Option<f64>,
                   crossbeam: Option<f64>|
     -> [String; 7] {
        [
            label.into(),
            format!("<= {target:.1}x st3"),
            two(mine),
            two(st3),
            two(crossbeam),
            two(ratio(mine, st3)),
            verdict(at_most(ratio(mine, st3), target)).into(),
        ]
    };

    // Locked instructions: per pair is twice per operation. Rounded to two
    // decimals before the comparison: the default worker's retire fence,
    // once per 256 pairs, adds 0.004 to the push;pop pair's 1.
    let pair = |deque: &str| locked_of("push-pop-pairs", deque).map(|per_op| 2.0 * per_op);
    let rounded = |value: Option<f64>| value.map(|value| (value * 100.0).round() / 100.0);
    rows.push([
        "push;pop pairs: locked instructions per pair".into(),
        "1 (st3: 1)".into(),
        two(pair("chase-lev")),
        two(pair("st3")),
        two(pair("crossbeam-deque")),
        two(ratio(pair("chase-lev"), pair("st3"))),
        verdict(at_most(rounded(pair("chase-lev")), 1.0)).into(),
    ]);
    for (label, group, target) in [
        ("push;pop pairs, time (ns/op)", "owner push;pop pairs", 1.0),
        (
            "push 1k then pop 1k, time (ns/op)",
            "owner push 1k then pop 1k",
            0.9,
        ),
        (
            "push 1M then pop 1M, time (ns/op)",
            "owner push 1M then pop 1M",
            0.9,
        ),
    ] {
        let [mine, st3, crossbeam, _] = quick(group);
        rows.push(st3_row(label, target, mine, st3, crossbeam));
    }
    let empty = locked_of("pop-empty", "chase-lev");
    rows.push([
        "pop on an empty deque: locked instructions".into(),
        "0".into(),
        two(empty),
        two(locked_of("pop-empty", "st3")),
        two(locked_of("pop-empty", "crossbeam-deque")),
        "-".into(),
        verdict(at_most(empty, 0.0)).into(),
    ]);
    let contended_path = contended_file();
    let (contended_header, contended) = read_tsv(&contended_path);
    let contended: Vec<_> = contended
        .iter()
        .filter_map(|fields| ContendedRow::parse(fields))
        .collect();
    if contended.is_empty() {
        rows.push([
            "every row where threads meet (a thief, the Injector)".into(),
            "<= 1.00x crossbeam".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            "not measured (cargo bench --bench contended)".into(),
        ]);
    }
    for row in &contended {
        rows.push([
            format!(
                "{} (ns/task; null {}; judged on {})",
                row.paired.label, row.null, row.judged_on
            ),
            format!("<= {:.2}x crossbeam, paired", row.paired.target),
            row.chase_lev.clone(),
            row.st3.clone(),
            row.crossbeam.clone(),
            format!("{:.3}", row.paired.interval.median),
            row.paired.interval.judged(row.paired.target),
        ]);
    }
    // Figures other programs measured with paired intervals: the steal
    // against the bare paper steal (the producer_thief example), and what
    // thread churn costs the deques of the rest of the process (the churn
    // bench).
    for (file, command) in [
        (
            "steal-vs-bare.tsv",
            "cargo run --release -p chase-lev-bench --example producer_thief",
        ),
        ("churn.tsv", "cargo bench -p chase-lev-bench --bench churn"),
    ] {
        let (header, paired_rows) = read_rows(&target_file(file));
        if paired_rows.is_empty() {
            rows.push([
                format!("(the rows of {file})"),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                format!("not measured ({command})"),
            ]);
        }
        for row in paired_rows {
            rows.push([
                format!("{} ({header})", row.label),
                format!("<= {:.2}, paired", row.target),
                "-".into(),
                "-".into(),
                "-".into(),
                format!("{:.3}", row.interval.median),
                row.interval.judged(row.target),
            ]);
        }
    }
    let rayon_path = rayon_file();
    let rayon = read_rayon(&rayon_path);
    if rayon.rows.is_empty() {
        rows.push([
            "rayon on chase-lev / on crossbeam-deque, every workload".into(),
            "<= 1.00".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            "not measured (rayon_on_chase_lev.sh)".into(),
        ]);
    }
    for row in &rayon.rows {
        let description = &row.description;
        let theirs = row.on_crossbeam;
        let mut push = |label: String, target: &str, met: String| {
            rows.push([
                label,
                format!("{target} (ms; crossbeam {theirs:.1})"),
                format!("{:.1}", row.on_chase_lev),
                "-".into(),
                format!("{theirs:.1}"),
                format!("{:.3}", row.paired.interval.median),
                met,
            ])
        };
        if row.workload == "fib-serial" {
            // The control runs no rayon code: no target; its interval is
            // what code layout alone puts between the two binaries.
            push(
                format!("{description}, in both rayon binaries"),
                "(no target)",
                format!("- {}", row.paired.evidence()),
            );
            continue;
        }
        push(
            format!("rayon on chase-lev / on crossbeam: {description}"),
            "<= 1.00",
            row.paired.verdict(1.0),
        );
        if row.workload == "fib-join" {
            push(
                "same, fib(32) with a join at every level (stretch)".into(),
                "<= 0.90",
                row.paired.verdict(0.9),
            );
        }
    }
    let forkjoin_path = forkjoin_file();
    let forkjoin = read_forkjoin(&forkjoin_path);
    if forkjoin.is_empty() {
        rows.push([
            "the example pool / rayon, its three workloads".into(),
            "<= 1.00".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            "not measured (forkjoin example)".into(),
        ]);
    }
    for (workload, ours, rayon, against_rayon) in &forkjoin {
        rows.push([
            format!("example pool / rayon: {workload}"),
            format!("<= 1.00 (best ms; rayon {rayon:.1})"),
            format!("{ours:.1}"),
            "-".into(),
            "-".into(),
            format!("{:.3}", against_rayon.interval.median),
            against_rayon.verdict(1.0),
        ]);
    }

    println!();
    println!(
        "The targets table. Locked instructions (x86 lock-prefixed instructions, xchg with memory,"
    );
    if locked.is_empty() {
        println!(
            "mfence) from {}: missing, run benches/callgrind.sh first;",
            path.display()
        );
    } else {
        println!("mfence) per operation from {} (callgrind);", path.display());
    }
    println!("times: the interleaved minimum above (the single-threaded table);");
    if !contended.is_empty() {
        println!(
            "the rows where threads meet: the contended bench's last run ({contended_header}), from {}:",
            contended_path.display()
        );
        println!("  medians in ns per task, null = its null run's; ratio = chase-lev / crossbeam-deque lap by");
        println!("  lap, median, and its ~95% interval; judged on the laps with no thread preempted, or on all");
        println!("  where more threads run than cores;");
    }
    if !forkjoin.is_empty() {
        println!(
            "the example pool's rows: the forkjoin example's last run, from {} (best times; ratio and CI",
            forkjoin_path.display()
        );
        println!("  run by run, as for the rayon rows below);");
    }
    if !rayon.rows.is_empty() {
        println!(
            "the rayon rows: benches/rayon_on_chase_lev.sh's last run ({}), from {}:",
            rayon.header,
            rayon_path.display()
        );
        println!(
            "  medians in ms; ratio = the median of the two builds' ratios run by run; CI = its"
        );
        println!("  confidence interval (about 95%), met only if all of it is within the target, not met");
        println!(
            "  if none is, no verdict under {FEWEST} runs; instr. = instructions on one thread,"
        );
        println!("  chase-lev / crossbeam (callgrind);");
    }
    println!("ratio = chase-lev / st3 (and / crossbeam-deque where the target names it):");
    const WIDTHS: [usize; 7] = [64, 32, 9, 7, 15, 11, 51];
    print_row(
        &[
            "figure",
            "target",
            "chase-lev",
            "st3",
            "crossbeam-deque",
            "ratio",
            "verdict",
        ],
        &WIDTHS,
    );
    print_separator(&WIDTHS);
    for row in rows {
        print_row(&row, &WIDTHS);
    }
}

/// A row of the contended bench's file: a paired row (label, target,
/// interval), then the ns per task of each contender and the laps judged.
struct ContendedRow {
    paired: Row,
    null: String,
    chase_lev: String,
    crossbeam: String,
    st3: String,
    judged_on: String,
}

impl ContendedRow {
    fn parse(fields: &[String]) -> Option<ContendedRow> {
        let text = |index: usize| fields.get(index).cloned();
        Some(ContendedRow {
            paired: Row::parse(fields)?,
            null: text(6)?,
            chase_lev: text(7)?,
            crossbeam: text(8)?,
            st3: text(9)?,
            judged_on: text(10)?,
        })
    }
}
