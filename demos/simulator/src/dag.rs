//! The fork-join graph of `fib(n)` as the seed text builds it.
//!
//! A call with `n >= cutoff` (and `n >= 2`) is three nodes: a *spawn* node
//! that enables the first recursive call and the *continuation*; the
//! continuation, which makes the second call; and a *sync* node that waits
//! for both calls to finish. A call below the cutoff is a single serial node
//! whose cost is the number of calls the plain recursive function makes, one
//! unit per call: below the cutoff the spawn, continuation and sync nodes
//! (the cost of being parallel) disappear. With the default cutoff of 2 the
//! serial nodes are exactly `fib(0)` and `fib(1)`, each of cost 1: the
//! unit-cost graph of the seed.

/// Index of a node in [`Dag::nodes`].
pub type NodeId = u32;

/// One node of the graph.
#[derive(Debug, Clone)]
pub struct Node {
    /// Steps a worker spends executing it.
    pub cost: u64,
    /// Nodes that may become ready when this one finishes. For a spawn node
    /// the first is the child call, which the worker runs at once, and the
    /// second is the continuation, which it pushes (work-first).
    pub successors: Vec<NodeId>,
    /// How many nodes must finish before this one is ready.
    pub predecessor_count: u32,
}

/// A fork-join graph with a single source (`root`) and a single sink (`sink`).
#[derive(Debug, Clone)]
pub struct Dag {
    /// All nodes; the successor lists index into it.
    pub nodes: Vec<Node>,
    /// The first node: worker 0 holds it at the start.
    pub root: NodeId,
    /// The last node: the computation is over when it finishes.
    pub sink: NodeId,
}

/// The number of calls the serial recursion `fib(n)` makes: its work when
/// run as one node, at one unit per call.
pub fn serial_calls(n: u32) -> u64 {
    if n < 2 {
        1
    } else {
        1 + serial_calls(n - 1) + serial_calls(n - 2)
    }
}

/// The entry and exit node of one call, for wiring it into its parent.
struct Call {
    entry: NodeId,
    exit: NodeId,
}

impl Dag {
    /// Builds the graph of `fib(n)` where calls with argument below
    /// `cutoff` run serially as one node (a cutoff of 2 or less gives the
    /// seed's unit-cost graph).
    pub fn fib(n: u32, cutoff: u32) -> Dag {
        let mut dag = Dag {
            nodes: Vec::new(),
            root: 0,
            sink: 0,
        };
        let call = dag.add_call(n, cutoff.max(2));
        dag.root = call.entry;
        dag.sink = call.exit;
        dag
    }

    fn add_node(&mut self, cost: u64) -> NodeId {
        let id = NodeId::try_from(self.nodes.len()).expect("graph too large for u32 ids");
        self.nodes.push(Node {
            cost,
            successors: Vec::new(),
            predecessor_count: 0,
        });
        id
    }

    fn add_edge(&mut self, from: NodeId, to: NodeId) {
        self.nodes[from as usize].successors.push(to);
        self.nodes[to as usize].predecessor_count += 1;
    }

    fn add_call(&mut self, n: u32, cutoff: u32) -> Call {
        if n < cutoff {
            let serial = self.add_node(serial_calls(n));
            return Call {
                entry: serial,
                exit: serial,
            };
        }
        let spawn = self.add_node(1);
        let continuation = self.add_node(1);
        let sync = self.add_node(1);
        let first = self.add_call(n - 1, cutoff);
        let second = self.add_call(n - 2, cutoff);
        // Order matters: the child first (run now), the continuation second
        // (pushed, so a thief can take the rest of this call).
        self.add_edge(spawn, first.entry);
        self.add_edge(spawn, continuation);
        self.add_edge(continuation, second.entry);
        self.add_edge(first.exit, sync);
        self.add_edge(second.exit, sync);
        Call {
            entry: spawn,
            exit: sync,
        }
    }

    /// The work T1: the sum of the node costs, the time on one worker.
    pub fn work(&self) -> u64 {
        self.nodes.iter().map(|node| node.cost).sum()
    }

    /// The span T∞: the costliest path from the root to the sink, the time
    /// on unboundedly many workers.
    pub fn span(&self) -> u64 {
        // Nodes are created parents before children, but a sync node is
        // created before the calls that precede it, so process in a
        // topological order (Kahn's algorithm) rather than by index.
        let mut remaining: Vec<u32> = self.nodes.iter().map(|n| n.predecessor_count).collect();
        let mut earliest_start = vec![0u64; self.nodes.len()];
        let mut ready = vec![self.root];
        let mut longest = 0;
        while let Some(id) = ready.pop() {
            let node = &self.nodes[id as usize];
            let done = earliest_start[id as usize] + node.cost;
            longest = longest.max(done);
            for &next in &node.successors {
                let start = &mut earliest_start[next as usize];
                *start = (*start).max(done);
                remaining[next as usize] -= 1;
                if remaining[next as usize] == 0 {
                    ready.push(next);
                }
            }
        }
        longest
    }
}
