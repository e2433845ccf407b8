//! The synchronous-step work-stealing scheduler of the seed text, driving
//! this crate's real deques from one thread.
//!
//! # The model, and the choices the seed leaves open
//!
//! * Time advances in steps. In every step each worker, in index order,
//!   does exactly one of: execute one unit of the node in its hands, or make
//!   one steal attempt.
//! * A worker whose hands are empty first pops its own deque (newest first);
//!   the pop is free, and the popped node runs in the same step. Only when
//!   the pop finds nothing does the worker spend the step on a steal attempt
//!   against a victim chosen uniformly among the *other* workers.
//! * A steal attempt costs the step whether it succeeds or not: a stolen
//!   node is executed from the next step on.
//! * When a node finishes, the worker decrements the predecessor count of
//!   each successor; those that reach zero are enabled. A spawn node enables
//!   two: the worker pushes the continuation and keeps the child
//!   (work-first). A sync node is enabled by whichever of its two
//!   predecessors finishes last, and the worker that finished it continues
//!   with the sync node. Nodes enabled in a step are executed from the next
//!   step on (the worker has already used its step).
//! * Worker 0 holds the root at the start; the run ends in the step in which
//!   the sink finishes, and `T_P` is the number of that step.
//! * Workers act one after another within a step, so a thief can take a
//!   continuation that a lower-numbered worker pushed earlier in the same
//!   step. This cannot shorten the critical path: the stolen node still runs
//!   no earlier than the next step.
//!
//! With one worker the deque is never stolen from and every step executes a
//! node, so `T_1` equals the work exactly.
//!
//! # How much the open choices matter
//!
//! The order of workers within a step is the one choice the seed's loop
//! does not pin down. Measured over 100 seeds on fib(20) (P = 16 / P = 64,
//! mean `T_P` and successful steals):
//!
//! | order within a step              | oldest, 16 | oldest, 64 | newest, 16  | newest, 64 |
//! |----------------------------------|------------|------------|-------------|------------|
//! | index order (this model)         | 2771, 156  | 727, 564   | 2937, 1620  | 844, 3193  |
//! | shuffled every step              | 2771, 153  | 727, 573   | 2946, 1705  | 846, 3224  |
//! | all thieves before all executors | 2773, 148  | 729, 524   | 2903, 1293  | 822, 2611  |
//! | all executors before all thieves | 2770, 155  | 726, 567   | 2934, 1577  | 845, 3223  |
//!
//! `T_P` of the oldest end moves by less than 0.3 %; the steal counts move by
//! up to 20 % for the newest end, which is within the seed-to-seed spread
//! (one standard deviation of a single run's steals is about 28 of 156 and
//! 476 of 1620 at P = 16).

use crate::dag::{Dag, NodeId};
use crate::rng::SplitMix64;
use chase_lev::{Steal, Stealer, Worker};

/// Which end of a victim's deque a thief takes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StealEnd {
    /// The top, through the victim's `Stealer::steal`: the oldest task, the
    /// continuation closest to the root. This is the Chase-Lev deque.
    Oldest,
    /// The bottom, through the victim's own `Worker::pop` of its LIFO deque:
    /// the newest task. The seed's ablation.
    Newest,
}

impl StealEnd {
    /// Both ends, the real one first.
    pub const ALL: [StealEnd; 2] = [StealEnd::Oldest, StealEnd::Newest];

    /// A short name for tables and CSV.
    pub fn name(self) -> &'static str {
        match self {
            StealEnd::Oldest => "oldest",
            StealEnd::Newest => "newest",
        }
    }
}

/// What one run measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunStats {
    /// `T_P`: the number of steps until the sink finished.
    pub steps: u64,
    /// Steal attempts that brought back a node.
    pub successful_steals: u64,
    /// All steal attempts, successful or not.
    pub steal_attempts: u64,
    /// Units of work executed; equals the graph's work if no node was run
    /// twice or lost.
    pub work_executed: u64,
    /// Nodes finished; equals the node count under the same condition.
    pub nodes_finished: u64,
}

/// The node a worker is executing and the steps it still needs.
#[derive(Debug, Clone, Copy)]
struct InHand {
    node: NodeId,
    remaining: u64,
}

/// Runs `dag` on `worker_count` workers until the sink finishes.
pub fn simulate(dag: &Dag, worker_count: usize, end: StealEnd, seed: u64) -> RunStats {
    assert!(worker_count >= 1, "at least one worker");
    let mut rng = SplitMix64::new(seed);
    let deques: Vec<Worker<NodeId>> = (0..worker_count).map(|_| Worker::new_lifo()).collect();
    let stealers: Vec<Stealer<NodeId>> = deques.iter().map(Worker::stealer).collect();
    let mut waiting_for: Vec<u32> = dag
        .nodes
        .iter()
        .map(|node| node.predecessor_count)
        .collect();
    let mut hands: Vec<Option<InHand>> = vec![None; worker_count];
    hands[0] = Some(in_hand(dag, dag.root));
    let mut stats = RunStats {
        steps: 0,
        successful_steals: 0,
        steal_attempts: 0,
        work_executed: 0,
        nodes_finished: 0,
    };

    loop {
        stats.steps += 1;
        let mut executed_this_step = false;
        for me in 0..worker_count {
            let current = hands[me].or_else(|| deques[me].pop().map(|node| in_hand(dag, node)));
            let Some(InHand { node, remaining }) = current else {
                hands[me] = steal_attempt(&deques, &stealers, me, end, &mut rng, &mut stats)
                    .map(|node| in_hand(dag, node));
                continue;
            };
            stats.work_executed += 1;
            executed_this_step = true;
            if remaining > 1 {
                hands[me] = Some(InHand {
                    node,
                    remaining: remaining - 1,
                });
                continue;
            }
            stats.nodes_finished += 1;
            if node == dag.sink {
                return stats;
            }
            hands[me] = None;
            // Successors are listed child first, continuation second: keep
            // the first enabled one, push the others (work-first).
            for &next in &dag.nodes[node as usize].successors {
                let waiting = &mut waiting_for[next as usize];
                *waiting = waiting.checked_sub(1).expect("a node finished twice");
                if *waiting == 0 {
                    if hands[me].is_none() {
                        hands[me] = Some(in_hand(dag, next));
                    } else {
                        deques[me].push(next);
                    }
                }
            }
        }
        // Every worker with empty hands found its own deque empty, and no
        // one executed anything that could have pushed: no node is held or
        // queued anywhere, yet the sink has not finished.
        if !executed_this_step && hands.iter().all(Option::is_none) {
            panic!(
                "a node was lost: nothing left to run after {} steps",
                stats.steps
            );
        }
    }
}

fn in_hand(dag: &Dag, node: NodeId) -> InHand {
    InHand {
        node,
        remaining: dag.nodes[node as usize].cost,
    }
}

/// One steal attempt by worker `me` against a uniformly random other worker.
fn steal_attempt(
    deques: &[Worker<NodeId>],
    stealers: &[Stealer<NodeId>],
    me: usize,
    end: StealEnd,
    rng: &mut SplitMix64,
    stats: &mut RunStats,
) -> Option<NodeId> {
    let others = deques.len() as u64 - 1;
    if others == 0 {
        return None;
    }
    stats.steal_attempts += 1;
    let drawn = rng.below(others) as usize;
    let victim = if drawn >= me { drawn + 1 } else { drawn };
    let taken = match end {
        StealEnd::Oldest => match stealers[victim].steal() {
            Steal::Success(node) => Some(node),
            // One thread drives every deque, so no race can make a steal
            // lose; a `Retry` would mean the deque is broken.
            Steal::Retry => panic!("steal returned Retry with no concurrent access"),
            Steal::Empty => None,
        },
        StealEnd::Newest => deques[victim].pop(),
    };
    if taken.is_some() {
        stats.successful_steals += 1;
    }
    taken
}
