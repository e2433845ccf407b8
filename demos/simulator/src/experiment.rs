//! Averages over seeds: what the table, the CSV, the plot and the tests
//! report for one worker count and one steal end.

use crate::dag::Dag;
use crate::schedule::{simulate, RunStats, StealEnd};

/// Means over the runs of one configuration.
#[derive(Debug, Clone, Copy)]
pub struct Summary {
    /// Number of workers `P`.
    pub workers: usize,
    /// Which end thieves took from.
    pub end: StealEnd,
    /// Number of seeds averaged.
    pub runs: u64,
    /// Mean `T_P`.
    pub mean_steps: f64,
    /// Mean number of successful steals.
    pub mean_successful_steals: f64,
    /// Mean number of steal attempts, successful or not.
    pub mean_steal_attempts: f64,
}

impl Summary {
    /// `T1 / T_P` with the mean `T_P`.
    pub fn speedup(&self, dag: &Dag) -> f64 {
        dag.work() as f64 / self.mean_steps
    }

    /// The greedy-scheduler bound `T1/P + T∞` (not a hard ceiling for
    /// work stealing: its theorem has a constant in front of `T∞`).
    pub fn greedy_bound(&self, dag: &Dag) -> f64 {
        dag.work() as f64 / self.workers as f64 + dag.span() as f64
    }

    /// Successful steals per worker per unit of span, the quantity the
    /// theory's `O(P T∞)` steal bound says stays roughly constant.
    pub fn steals_per_worker_per_span(&self, dag: &Dag) -> f64 {
        self.mean_successful_steals / (self.workers as f64 * dag.span() as f64)
    }
}

/// Runs `dag` on `workers` workers once per seed in `0..seeds` and averages.
///
/// Panics if any run executed a node twice or lost one: the simulation
/// doubles as a check that the deque hands out every task exactly once.
pub fn summarize(dag: &Dag, workers: usize, end: StealEnd, seeds: u64) -> Summary {
    assert!(seeds >= 1, "at least one seed");
    let runs: Vec<RunStats> = (0..seeds)
        .map(|seed| simulate(dag, workers, end, seed))
        .collect();
    for run in &runs {
        assert_eq!(
            run.work_executed,
            dag.work(),
            "work lost or repeated: {run:?}"
        );
        assert_eq!(
            run.nodes_finished,
            dag.nodes.len() as u64,
            "node lost or repeated: {run:?}"
        );
    }
    let mean =
        |value: fn(&RunStats) -> u64| runs.iter().map(value).sum::<u64>() as f64 / seeds as f64;
    Summary {
        workers,
        end,
        runs: seeds,
        mean_steps: mean(|run| run.steps),
        mean_successful_steals: mean(|run| run.successful_steals),
        mean_steal_attempts: mean(|run| run.steal_attempts),
    }
}
