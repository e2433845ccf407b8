//! The work-stealing simulator of the seed text, run on chase-lev's deques.
//!
//! Builds the fork-join graph of fib(20) (T1 = 43,781 unit nodes, T∞ = 40),
//! runs it on P = 1..64 simulated workers in synchronous steps, once with
//! thieves taking the oldest task (the real `Stealer::steal`) and once taking
//! the newest (the victim's own `Worker::pop`, the seed's ablation), and
//! prints mean T_P, the greedy bound, speedup and steals over several seeds.
//! The model and its choices are documented in `src/schedule.rs` of this package.
//!
//! ```text
//! cargo run --release -p chase-lev-simulator --bin simulate -- [--seeds N] [--csv] [--cutoff K]
//!     [--cutoff-sweep] [--fib N] [--plot FILE]
//! ```

mod plot;

use chase_lev_simulator::dag::{serial_calls, Dag};
use chase_lev_simulator::experiment::{summarize, Summary};
use chase_lev_simulator::schedule::StealEnd;
use std::path::PathBuf;
use std::process::ExitCode;

const WORKER_COUNTS: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];

/// The seed text's own measurements (three seeds), printed beside ours for
/// the default graph only: (P, end, T_P, successful steals).
const SEED_TEXT_RESULTS: [(usize, StealEnd, f64, f64); 4] = [
    (16, StealEnd::Oldest, 2775.0, 175.0),
    (64, StealEnd::Oldest, 731.0, 626.0),
    (16, StealEnd::Newest, 2901.0, 1391.0),
    (64, StealEnd::Newest, 830.0, 2998.0),
];

const USAGE: &str = "\
usage: simulate [--seeds N] [--csv] [--cutoff K] [--cutoff-sweep] [--fib N] [--plot FILE]
  --seeds N       average every configuration over seeds 0..N (default 20)
  --csv           print CSV (p,end,t_p,bound,speedup,steals) instead of the table
  --cutoff K      calls fib(n) with n < K run serially as one node costing
                  one unit per call (default 2: the seed's unit-cost graph)
  --cutoff-sweep  also print T_P and steals for a range of cutoffs
  --fib N         the argument of the root call (default 20)
  --plot FILE     where to write the speedup plot (SVG); default
                  $CARGO_TARGET_DIR/simulate-speedup.svg, else target/ of the workspace";

struct Options {
    seeds: u64,
    csv: bool,
    cutoff: u32,
    cutoff_sweep: bool,
    fib: u32,
    plot: PathBuf,
}

fn parse_options() -> Result<Options, String> {
    let default_plot = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"))
        .join("simulate-speedup.svg");
    let mut options = Options {
        seeds: 20,
        csv: false,
        cutoff: 2,
        cutoff_sweep: false,
        fib: 20,
        plot: default_plot,
    };
    let mut arguments = std::env::args().skip(1);
    while let Some(argument) = arguments.next() {
        let mut value = |name: &str| {
            arguments
                .next()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        // A number within `range`, so that a typo fails loudly instead of
        // running something else than asked.
        let number = |name: &str, text: String, range: std::ops::RangeInclusive<u64>| match text
            .parse::<u64>()
        {
            Ok(value) if range.contains(&value) => Ok(value),
            _ => Err(format!(
                "{name}: expected a number in {}..={}, got {text}",
                range.start(),
                range.end()
            )),
        };
        match argument.as_str() {
            "--seeds" => options.seeds = number("--seeds", value("--seeds")?, 1..=1_000_000)?,
            "--csv" => options.csv = true,
            "--cutoff" => options.cutoff = number("--cutoff", value("--cutoff")?, 0..=30)? as u32,
            "--cutoff-sweep" => options.cutoff_sweep = true,
            // fib(30) is already five million nodes.
            "--fib" => options.fib = number("--fib", value("--fib")?, 2..=30)? as u32,
            "--plot" => options.plot = PathBuf::from(value("--plot")?),
            "--help" | "-h" => return Err(String::new()),
            other => return Err(format!("unknown argument: {other}")),
        }
    }
    Ok(options)
}

fn main() -> ExitCode {
    let options = match parse_options() {
        Ok(options) => options,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("{message}");
            }
            eprintln!("{USAGE}");
            return if message.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            };
        }
    };
    let dag = Dag::fib(options.fib, options.cutoff);
    let summaries: Vec<Summary> = StealEnd::ALL
        .iter()
        .flat_map(|&end| WORKER_COUNTS.iter().map(move |&workers| (workers, end)))
        .map(|(workers, end)| summarize(&dag, workers, end, options.seeds))
        .collect();

    if options.csv {
        print_csv(&dag, &summaries);
    } else {
        print_table(&dag, &options, &summaries);
    }
    if options.cutoff_sweep {
        print_cutoff_sweep(&options);
    }
    match plot::speedup_svg(&options.plot, &dag, &summaries) {
        Ok(()) => eprintln!("speedup plot written to {}", options.plot.display()),
        Err(error) => {
            eprintln!(
                "could not write the plot to {}: {error}",
                options.plot.display()
            );
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

fn print_csv(dag: &Dag, summaries: &[Summary]) {
    println!("p,end,t_p,bound,speedup,steals");
    for summary in summaries {
        println!(
            "{},{},{:.2},{:.2},{:.4},{:.2}",
            summary.workers,
            summary.end.name(),
            summary.mean_steps,
            summary.greedy_bound(dag),
            summary.speedup(dag),
            summary.mean_successful_steals,
        );
    }
}

fn print_table(dag: &Dag, options: &Options, summaries: &[Summary]) {
    let work = dag.work();
    let span = dag.span();
    println!(
        "fib({}), calls below {} serial: work T1 = {work}, span T∞ = {span}, parallelism {:.1}, {} nodes; mean of {} seeds",
        options.fib,
        options.cutoff.max(2),
        work as f64 / span as f64,
        dag.nodes.len(),
        options.seeds,
    );
    let is_seed_graph = options.fib == 20 && options.cutoff <= 2;
    println!(
        "{:>6} {:>3} {:>9} {:>9} {:>8} {:>8} {:>9} {:>11}{}",
        "end",
        "P",
        "T_P",
        "T1/P+T∞",
        "speedup",
        "steals",
        "attempts",
        "steals/P·T∞",
        if is_seed_graph {
            "   seed: T_P  steals"
        } else {
            ""
        },
    );
    for summary in summaries {
        let seed_text = SEED_TEXT_RESULTS
            .iter()
            .find(|(workers, end, _, _)| *workers == summary.workers && *end == summary.end)
            .filter(|_| is_seed_graph)
            .map(|(_, _, steps, steals)| format!("   {steps:>9.0} {steals:>7.0}"))
            .unwrap_or_default();
        println!(
            "{:>6} {:>3} {:>9.1} {:>9.1} {:>8.2} {:>8.1} {:>9.1} {:>11.3}{}",
            summary.end.name(),
            summary.workers,
            summary.mean_steps,
            summary.greedy_bound(dag),
            summary.speedup(dag),
            summary.mean_successful_steals,
            summary.mean_steal_attempts,
            summary.steals_per_worker_per_span(dag),
            seed_text,
        );
    }
}

/// The granularity experiment. Below the cutoff a call runs as plain serial
/// recursion (one unit per call), so a higher cutoff removes the spawn,
/// continuation and sync nodes of the small calls: less work and fewer
/// steals, until the serial leaves are so big that the span limits the
/// speedup. The useful speedup is the one over the serial program.
fn print_cutoff_sweep(options: &Options) {
    let serial = serial_calls(options.fib);
    println!();
    println!(
        "granularity: calls fib(n) with n < cutoff run serially as one node, one unit per call \
         (serial program: {serial} units); thieves take the oldest; mean of {} seeds",
        options.seeds
    );
    println!(
        "{:>6} {:>6} {:>6} {:>5} {:>11} {:>3} {:>9} {:>8} {:>14} {:>8} {:>9}",
        "cutoff",
        "nodes",
        "T1",
        "T∞",
        "parallelism",
        "P",
        "T_P",
        "T1/T_P",
        "serial/T_P",
        "steals",
        "attempts"
    );
    for cutoff in (2..=options.fib.min(16)).step_by(2) {
        let dag = Dag::fib(options.fib, cutoff);
        for workers in [16, 64] {
            let summary = summarize(&dag, workers, StealEnd::Oldest, options.seeds);
            println!(
                "{:>6} {:>6} {:>6} {:>5} {:>11.1} {:>3} {:>9.1} {:>8.2} {:>14.2} {:>8.1} {:>9.1}",
                cutoff,
                dag.nodes.len(),
                dag.work(),
                dag.span(),
                dag.work() as f64 / dag.span() as f64,
                workers,
                summary.mean_steps,
                summary.speedup(&dag),
                serial as f64 / summary.mean_steps,
                summary.mean_successful_steals,
                summary.mean_steal_attempts,
            );
        }
    }
}
