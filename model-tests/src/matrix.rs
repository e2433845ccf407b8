//! The mutation matrix: every mutant against the loom suite (and shuttle),
//! with miri's results read from the file the miri run writes.
//!
//! A mutant is *killed* when some scenario has an execution that breaks a
//! promise of the deque (or makes the deque or loom panic). A mutant that
//! survives the whole suite must carry an argument in `proofs-notes/`: either
//! the weakening is provably safe, or the bug it allows needs load buffering,
//! which neither loom nor miri can produce. [`survivor_argument`] is that list;
//! a survivor without an entry is a gap in the suite and the matrix says so.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use crate::explore::{self, Exploration, ShuttleScheduler};
use crate::{on_loom, on_shuttle, Mutant};

/// Why a surviving mutant is acceptable, with the section that argues it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Argument {
    /// The weakening is provably safe.
    ArguedSafe(&'static str),
    /// The bug needs load buffering, which loom and miri never produce.
    NeedsLoadBuffering(&'static str),
    /// The bug needs another execution that loom does not produce (a
    /// modification order against loom's execution order, or a race with an
    /// atomic's non-atomic initialisation); the ordering is needed.
    BeyondLoom(&'static str),
    /// What the ordering protects is the single total order of SeqCst
    /// operations as seen by clients that use SeqCst loads and stores (not
    /// fences); loom models those as acquire/release, so it cannot show the
    /// bug.
    NeedsSeqCstAccesses(&'static str),
}

impl Argument {
    /// The `proofs-notes/` anchor of the argument.
    pub fn anchor(self) -> &'static str {
        match self {
            Argument::ArguedSafe(anchor)
            | Argument::NeedsLoadBuffering(anchor)
            | Argument::BeyondLoom(anchor)
            | Argument::NeedsSeqCstAccesses(anchor) => anchor,
        }
    }
}

/// The argument for `mutant` if the suite cannot kill it (see the module
/// documentation): its `survivor:` line in `model-tests/mutants.md`, which
/// a test compares with `proofs-notes/obligations.md`.
pub fn survivor_argument(mutant: Mutant) -> Option<Argument> {
    crate::table::survivor_argument(mutant)
}

/// The mutants that loom killed although `survivor_argument` excuses them:
/// a stale argument, which would hide the loss of the killing scenario. The
/// matrix fails on any.
pub fn stale_arguments(rows: &[Row]) -> Vec<&'static str> {
    rows.iter()
        .filter(|row| matches!(row.loom, LoomVerdict::Killed { .. }))
        .filter(|row| survivor_argument(row.mutant).is_some())
        .map(|row| row.mutant.name())
        .collect()
}

/// What loom made of one mutant.
#[derive(Clone, Debug)]
pub enum LoomVerdict {
    /// A scenario broke a promise.
    Killed {
        /// The scenario that killed it.
        scenario: &'static str,
        /// Interleavings explored in that scenario up to the kill.
        interleavings: usize,
        /// Time spent in the whole suite up to the kill.
        elapsed: Duration,
        /// What went wrong.
        violation: String,
    },
    /// No scenario broke a promise.
    Survived {
        /// Interleavings explored across the suite.
        interleavings: usize,
        /// Time spent on the whole suite.
        elapsed: Duration,
        /// The argument in `proofs-notes/`, or `None`: a gap in the suite.
        argument: Option<Argument>,
    },
}

/// What shuttle made of one mutant.
#[derive(Clone, Debug)]
pub enum ShuttleVerdict {
    /// A schedule broke a promise.
    Caught {
        /// The scenario.
        scenario: &'static str,
        /// Schedules run in that scenario up to the catch.
        schedules: usize,
    },
    /// Every schedule of every scenario passed.
    Missed {
        /// Schedules run in all.
        schedules: usize,
    },
    /// Shuttle was not run.
    NotRun,
}

/// What miri made of one mutant, from the miri run's results file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MiriVerdict {
    /// Seeds on which miri's run found a violation, out of seeds run.
    Seeds {
        /// Seeds with a violation (or undefined behaviour).
        caught: usize,
        /// Seeds run.
        run: usize,
    },
    /// No results for this mutant.
    NotRun,
}

/// One row of the matrix.
#[derive(Clone, Debug)]
pub struct Row {
    /// The mutant.
    pub mutant: Mutant,
    /// Loom's verdict.
    pub loom: LoomVerdict,
    /// Shuttle's verdict.
    pub shuttle: ShuttleVerdict,
    /// Miri's verdict.
    pub miri: MiriVerdict,
}

/// How much shuttle to run.
#[derive(Clone, Copy, Debug)]
pub struct ShuttleBudget {
    /// Schedules per scenario for each of the random and the PCT scheduler
    /// (0: do not run shuttle).
    pub schedules_per_scheduler: usize,
    /// The seed of both schedulers.
    pub seed: u64,
}

/// Runs the scenarios until one kills `mutant`: first the one its record
/// names (`killed by:` in `mutants.md`), then every other in suite order.
/// A survivor runs them all; a killed mutant whose named scenario does kill
/// it costs that scenario alone, which keeps the matrix within CI's time.
pub fn loom_verdict(mutant: Mutant) -> LoomVerdict {
    let named = crate::table::record(mutant).killed_by.as_str();
    let reaching = || {
        on_loom::scenarios::ALL
            .iter()
            .filter(|scenario| scenario.reaches(mutant.name()))
    };
    let first = (!named.is_empty()).then(|| {
        reaching()
            .find(|scenario| scenario.name == named)
            .unwrap_or_else(|| {
                panic!(
                    "mutant {}: `killed by: {named}` names no loom scenario that reaches it",
                    mutant.name()
                )
            })
    });
    let mut interleavings = 0;
    let mut elapsed = Duration::ZERO;
    for scenario in first
        .into_iter()
        .chain(reaching().filter(|scenario| scenario.name != named))
    {
        let exploration: Exploration = explore::with_loom(scenario, Some(mutant));
        elapsed += exploration.elapsed;
        if let Some(failure) = exploration.failure {
            return LoomVerdict::Killed {
                scenario: scenario.name,
                interleavings: exploration.interleavings,
                elapsed,
                violation: failure.violation,
            };
        }
        interleavings += exploration.interleavings;
    }
    LoomVerdict::Survived {
        interleavings,
        elapsed,
        argument: survivor_argument(mutant),
    }
}

/// Runs shuttle's PCT (depth 3) and random schedulers over every scenario
/// until one catches `mutant`.
pub fn shuttle_verdict(mutant: Mutant, budget: ShuttleBudget) -> ShuttleVerdict {
    // A mutant whose record says why it is not run under shuttle (its
    // failure aborts the process there instead of failing a schedule).
    if budget.schedules_per_scheduler == 0 || !crate::table::record(mutant).shuttle.is_empty() {
        return ShuttleVerdict::NotRun;
    }
    let mut schedules = 0;
    for scenario in on_shuttle::scenarios::ALL
        .iter()
        .filter(|scenario| scenario.reaches(mutant.name()))
    {
        for scheduler in [ShuttleScheduler::Pct(3), ShuttleScheduler::Random] {
            let exploration = explore::with_shuttle(
                scenario,
                Some(mutant),
                scheduler,
                budget.schedules_per_scheduler,
                budget.seed,
            );
            if !exploration.passed() {
                return ShuttleVerdict::Caught {
                    scenario: scenario.name,
                    schedules: exploration.interleavings,
                };
            }
            schedules += exploration.interleavings;
        }
    }
    ShuttleVerdict::Missed { schedules }
}

/// Reads miri's results: lines `mutant<TAB>seeds caught<TAB>seeds run`
/// (the file `model-tests/miri-results.tsv` that `run-miri-matrix.sh`
/// writes). A missing file means miri was not run.
pub fn read_miri_results(path: &Path) -> Vec<(String, MiriVerdict)> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.starts_with("mutant\t"))
        .filter_map(|line| {
            let mut fields = line.split('\t');
            let mutant = fields.next()?.to_string();
            let caught = fields.next()?.parse().ok()?;
            let run = fields.next()?.parse().ok()?;
            Some((mutant, MiriVerdict::Seeds { caught, run }))
        })
        .collect()
}

/// Runs the whole matrix, several mutants side by side
/// ([`explore::side_by_side`]); `progress` is called after each row, in the
/// order the rows finish. The rows come back in the order of [`Mutant::ALL`].
pub fn run_matrix(
    shuttle: ShuttleBudget,
    miri_results: &Path,
    progress: impl FnMut(&Row) + Send,
) -> Vec<Row> {
    run_rows(&Mutant::ALL, shuttle, miri_results, progress)
}

/// As [`run_matrix`], for the rows of `mutants` only (the binary's
/// `--only`: one mutant's row without the hour of the whole matrix); the
/// rows come back in the order of `mutants`.
pub fn run_rows(
    mutants: &[Mutant],
    shuttle: ShuttleBudget,
    miri_results: &Path,
    mut progress: impl FnMut(&Row) + Send,
) -> Vec<Row> {
    let miri = read_miri_results(miri_results);
    explore::side_by_side(
        mutants,
        |&mutant| Row {
            mutant,
            loom: loom_verdict(mutant),
            shuttle: shuttle_verdict(mutant, shuttle),
            miri: miri
                .iter()
                .find(|(name, _)| name == mutant.name())
                .map_or(MiriVerdict::NotRun, |(_, verdict)| verdict.clone()),
        },
        |_, row| progress(row),
    )
}

impl Row {
    /// `killed`, `argued safe`, `needs load buffering`, `needs SeqCst
    /// accesses`, `beyond loom`, or `SURVIVED (gap)`.
    pub fn verdict(&self) -> &'static str {
        match &self.loom {
            LoomVerdict::Killed { .. } => "killed",
            LoomVerdict::Survived {
                argument: Some(Argument::ArguedSafe(_)),
                ..
            } => "argued safe",
            LoomVerdict::Survived {
                argument: Some(Argument::NeedsLoadBuffering(_)),
                ..
            } => "needs load buffering",
            LoomVerdict::Survived {
                argument: Some(Argument::BeyondLoom(_)),
                ..
            } => "beyond loom",
            LoomVerdict::Survived {
                argument: Some(Argument::NeedsSeqCstAccesses(_)),
                ..
            } => "needs SeqCst accesses",
            LoomVerdict::Survived { argument: None, .. } => "SURVIVED (gap)",
        }
    }

    /// The killing scenario, or the argument's anchor for a survivor.
    pub fn scenario_or_argument(&self) -> String {
        match &self.loom {
            LoomVerdict::Killed { scenario, .. } => scenario.to_string(),
            LoomVerdict::Survived {
                argument: Some(argument),
                ..
            } => argument.anchor().to_string(),
            LoomVerdict::Survived { argument: None, .. } => "-".to_string(),
        }
    }

    /// Interleavings to the kill, or explored in all by a survivor.
    pub fn interleavings(&self) -> usize {
        match &self.loom {
            LoomVerdict::Killed { interleavings, .. }
            | LoomVerdict::Survived { interleavings, .. } => *interleavings,
        }
    }

    /// Seconds of loom to the kill (or for the whole suite).
    pub fn seconds(&self) -> f64 {
        match &self.loom {
            LoomVerdict::Killed { elapsed, .. } | LoomVerdict::Survived { elapsed, .. } => {
                elapsed.as_secs_f64()
            }
        }
    }

    /// Shuttle's column.
    pub fn shuttle_cell(&self) -> String {
        match &self.shuttle {
            ShuttleVerdict::Caught {
                scenario,
                schedules,
            } => format!("caught ({schedules} schedules, {scenario})"),
            ShuttleVerdict::Missed { schedules } => format!("missed ({schedules} schedules)"),
            ShuttleVerdict::NotRun => "not run".to_string(),
        }
    }

    /// Miri's column.
    pub fn miri_cell(&self) -> String {
        match &self.miri {
            MiriVerdict::Seeds { caught: 0, run } => format!("missed (0/{run} seeds)"),
            MiriVerdict::Seeds { caught, run } => format!("caught ({caught}/{run} seeds)"),
            MiriVerdict::NotRun => "not run".to_string(),
        }
    }
}

/// The matrix as a Markdown table (what the binary prints).
pub fn table(rows: &[Row]) -> String {
    let mut out = String::new();
    out.push_str("| mutant | loom verdict | killing scenario (or argument) | interleavings | loom time to the kill | shuttle | miri |\n");
    out.push_str("|---|---|---|---:|---:|---|---|\n");
    for row in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.2} s | {} | {} |",
            row.mutant.name(),
            row.verdict(),
            row.scenario_or_argument(),
            row.interleavings(),
            row.seconds(),
            row.shuttle_cell(),
            row.miri_cell(),
        );
    }
    out
}

/// The matrix as tab-separated values, one row per mutant, with a header:
/// `mutant verdict scenario interleavings seconds shuttle miri violation`.
/// For a survivor, `scenario` holds the argument's anchor.
pub fn tsv(rows: &[Row]) -> String {
    let mut out = String::from(
        "mutant\tverdict\tscenario\tinterleavings\tseconds\tshuttle\tmiri\tviolation\n",
    );
    for row in rows {
        let violation = match &row.loom {
            LoomVerdict::Killed { violation, .. } => violation.replace(['\t', '\n'], " "),
            LoomVerdict::Survived { .. } => "-".to_string(),
        };
        let _ = writeln!(
            out,
            "{}\t{}\t{}\t{}\t{:.3}\t{}\t{}\t{}",
            row.mutant.name(),
            row.verdict(),
            row.scenario_or_argument(),
            row.interleavings(),
            row.seconds(),
            row.shuttle_cell(),
            row.miri_cell(),
            violation,
        );
    }
    out
}

/// One row of a matrix file, as [`tsv`] wrote it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// The mutant's name.
    pub mutant: String,
    /// `killed`, `argued safe`, `needs load buffering`, `SURVIVED (gap)`.
    pub verdict: String,
    /// The killing scenario, or the argument's anchor.
    pub scenario: String,
}

/// Reads a matrix file back (for tests that compare it with `proofs-notes/`).
pub fn read_tsv(text: &str) -> Vec<Record> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let mut fields = line.split('\t');
            Some(Record {
                mutant: fields.next()?.to_string(),
                verdict: fields.next()?.to_string(),
                scenario: fields.next()?.to_string(),
            })
        })
        .collect()
}
