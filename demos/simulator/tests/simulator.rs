//! The work-stealing simulator of the seed text (this package), run
//! on chase-lev's deques: the graph has the seed's work and span, the
//! schedule respects the lower bounds, speedup is near linear, and thieves
//! take from the right end of the deque.
//!
//! Not run under miri: each schedule is tens of thousands of deque
//! operations, hours under the interpreter, and the deque's operations are
//! covered there by the unit tests.
#![cfg(not(miri))]

use chase_lev_simulator::dag::Dag;
use chase_lev_simulator::experiment::summarize;
use chase_lev_simulator::schedule::{simulate, StealEnd};

const WORKER_COUNTS: [usize; 7] = [1, 2, 4, 8, 16, 32, 64];

/// Few seeds keep the debug build fast; the criteria below leave room for
/// the noise of a three-seed mean (measured over 100 seeds in the README).
const SEEDS: u64 = 3;

fn seed_graph() -> Dag {
    Dag::fib(20, 2)
}

#[test]
fn fib_20_graph_has_the_seeds_work_and_span() {
    let dag = seed_graph();
    assert_eq!(dag.work(), 43_781);
    assert_eq!(dag.nodes.len(), 43_781, "every node costs one unit");
    assert_eq!(dag.span(), 40);
}

#[test]
fn one_worker_takes_exactly_the_work_and_never_steals() {
    let dag = seed_graph();
    for end in StealEnd::ALL {
        let run = simulate(&dag, 1, end, 0);
        assert_eq!(run.steps, 43_781);
        assert_eq!(run.steal_attempts, 0);
    }
}

#[test]
fn every_node_runs_exactly_once_on_any_number_of_workers() {
    let dag = seed_graph();
    for end in StealEnd::ALL {
        for workers in WORKER_COUNTS {
            let run = simulate(&dag, workers, end, 7);
            assert_eq!(run.work_executed, dag.work(), "P = {workers}, {end:?}");
            assert_eq!(
                run.nodes_finished,
                dag.nodes.len() as u64,
                "P = {workers}, {end:?}"
            );
        }
    }
}

#[test]
fn time_never_beats_work_over_p_or_the_span() {
    for cutoff in [2, 8, 14] {
        let dag = Dag::fib(20, cutoff);
        for end in StealEnd::ALL {
            for workers in WORKER_COUNTS {
                for seed in 0..SEEDS {
                    let run = simulate(&dag, workers, end, seed);
                    let work_bound = dag.work().div_ceil(workers as u64);
                    assert!(
                        run.steps >= work_bound.max(dag.span()),
                        "cutoff {cutoff}, P = {workers}, {end:?}, seed {seed}: T_P = {} below \
                         max(T1/P = {work_bound}, T∞ = {})",
                        run.steps,
                        dag.span()
                    );
                }
            }
        }
    }
}

#[test]
fn a_seed_determines_the_run() {
    let dag = seed_graph();
    for end in StealEnd::ALL {
        assert_eq!(simulate(&dag, 16, end, 42), simulate(&dag, 16, end, 42));
    }
}

/// Near linear: at least 0.9 P up to 64 workers when thieves take the
/// oldest task. Measured over 100 seeds the mean speedup is 15.8 at 16
/// workers, 31.1 at 32 and 60.2 at 64 (0.94 P); the newest-end ablation
/// reaches only 52.3 at 64 (0.82 P), so the criterion has teeth.
#[test]
fn stealing_the_oldest_gives_near_linear_speedup_up_to_64_workers() {
    let dag = seed_graph();
    for workers in WORKER_COUNTS {
        let speedup = summarize(&dag, workers, StealEnd::Oldest, SEEDS).speedup(&dag);
        assert!(
            speedup >= 0.9 * workers as f64,
            "P = {workers}: speedup {speedup:.2} below 0.9 P"
        );
    }
}

/// The seed's ablation as a test that the real `Stealer` takes the oldest
/// task: a thief that took the newest (the victim's own `pop`) gets a tiny
/// subtree and must steal again, so successful steals multiply (about ten
/// times at 16 workers over 100 seeds; the seed text reports eight).
#[test]
fn taking_the_newest_task_multiplies_steals_at_least_fourfold_at_16_workers() {
    let dag = seed_graph();
    let oldest = summarize(&dag, 16, StealEnd::Oldest, SEEDS).mean_successful_steals;
    let newest = summarize(&dag, 16, StealEnd::Newest, SEEDS).mean_successful_steals;
    assert!(
        newest >= 4.0 * oldest,
        "steals: {oldest:.1} taking the oldest, {newest:.1} taking the newest"
    );
}
