//! The fork-join workloads, written once over a `Fork` (our pool's `join`,
//! `rayon::join`, or plain sequential calls) so that every contender runs the
//! same code. Used by the `forkjoin` and `join_overhead` examples and by
//! `tests/forkjoin.rs`.

use std::hint::black_box;

/// A way to run two closures, potentially in parallel.
pub trait Fork: Copy + Send + Sync {
    fn join<A, B, RA, RB>(self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send;
}

/// The chase-lev pool of this crate (must run inside `ThreadPool::install`).
#[derive(Clone, Copy)]
pub struct ChaseLevJoin;

impl Fork for ChaseLevJoin {
    #[inline]
    fn join<A, B, RA, RB>(self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        crate::join(a, b)
    }
}

/// `rayon::join` (inside a rayon pool's `install`).
#[derive(Clone, Copy)]
pub struct RayonJoin;

impl Fork for RayonJoin {
    #[inline]
    fn join<A, B, RA, RB>(self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        rayon::join(a, b)
    }
}

/// No parallelism: `a` then `b`. The serial baseline runs the same recursion.
#[derive(Clone, Copy)]
pub struct Serial;

impl Fork for Serial {
    #[inline]
    fn join<A, B, RA, RB>(self, a: A, b: B) -> (RA, RB)
    where
        A: FnOnce() -> RA + Send,
        B: FnOnce() -> RB + Send,
        RA: Send,
        RB: Send,
    {
        (a(), b())
    }
}

// --- fib ---------------------------------------------------------------------

/// The plain recursive Fibonacci number (fib(0) = 0, fib(1) = 1).
pub fn fib_serial(n: u32) -> u64 {
    if n < 2 {
        return n as u64;
    }
    black_box(fib_serial(n - 1)) + fib_serial(n - 2)
}

/// Fibonacci with a join at every level above `cutoff`.
pub fn fib<F: Fork>(fork: F, n: u32, cutoff: u32) -> u64 {
    if n <= cutoff || n < 2 {
        return fib_serial(n);
    }
    let (a, b) = fork.join(|| fib(fork, n - 1, cutoff), || fib(fork, n - 2, cutoff));
    a + b
}

/// How many calls `fib_serial(n)` makes: the "elements" of the fib sweep.
pub fn fib_calls(n: u32) -> u64 {
    // calls(n) = 1 + calls(n - 1) + calls(n - 2), calls(0) = calls(1) = 1
    let (mut previous, mut current) = (1u64, 1u64);
    for _ in 1..n {
        (previous, current) = (current, 1 + current + previous);
    }
    current
}

// --- quicksort ---------------------------------------------------------------

/// A xorshift64* generator: reproducible inputs without a dependency.
pub struct Random(u64);

impl Random {
    pub fn new(seed: u64) -> Random {
        Random(seed.max(1))
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

pub fn random_values(count: usize, seed: u64) -> Vec<u64> {
    let mut random = Random::new(seed);
    (0..count).map(|_| random.next_u64()).collect()
}

/// Quicksort: a three-way partition around a median of three, both sides
/// sorted with a join, and slices of at most `cutoff` elements handed to
/// `sort_unstable`. Equal keys gather in the middle and are never recursed
/// into, so many duplicates do not deepen the recursion.
pub fn quicksort<F: Fork>(fork: F, values: &mut [u64], cutoff: usize) {
    if values.len() <= cutoff.max(16) {
        values.sort_unstable();
        return;
    }
    let (less, greater) = partition(values);
    let (left, rest) = values.split_at_mut(less);
    let right = &mut rest[greater - less..];
    fork.join(
        || quicksort(fork, left, cutoff),
        || quicksort(fork, right, cutoff),
    );
}

/// Dutch-flag partition around the median of the first, middle and last
/// elements: afterwards `[0, less)` < pivot, `[less, greater)` == pivot and
/// `[greater, len)` > pivot.
fn partition(values: &mut [u64]) -> (usize, usize) {
    let (first, middle, last) = (
        values[0],
        values[values.len() / 2],
        values[values.len() - 1],
    );
    let pivot = first.max(middle).min(first.min(middle).max(last));
    let (mut less, mut index, mut greater) = (0, 0, values.len());
    while index < greater {
        if values[index] < pivot {
            values.swap(less, index);
            less += 1;
            index += 1;
        } else if values[index] > pivot {
            greater -= 1;
            values.swap(index, greater);
        } else {
            index += 1;
        }
    }
    (less, greater)
}

// --- an unbalanced tree ------------------------------------------------------

/// A binary tree whose every node splits its descendants between its two
/// children at a random ratio: sibling subtrees differ wildly in size, so a
/// static split of the work would be unbalanced.
pub struct Tree {
    pub value: u64,
    /// Nodes in this subtree, this one included.
    pub size: usize,
    pub left: Option<Box<Tree>>,
    pub right: Option<Box<Tree>>,
}

impl Tree {
    /// A tree of `size` nodes with values and shape drawn from `random`.
    pub fn build(size: usize, random: &mut Random) -> Option<Box<Tree>> {
        if size == 0 {
            return None;
        }
        let below = size - 1;
        // Splits of 1/64 .. 63/64 of the descendants to the left.
        let share = 1 + random.next_u64() % 63;
        let left_size = (below as u64 * share / 64) as usize;
        let value = random.next_u64() % 1_000;
        let left = Tree::build(left_size, random);
        let right = Tree::build(below - left_size, random);
        Some(Box::new(Tree {
            value,
            size,
            left,
            right,
        }))
    }
}

/// The work done at each node: a few dozen nanoseconds of arithmetic, so that
/// the sum is compute-bound rather than a pointer chase.
#[inline]
pub fn node_work(value: u64) -> u64 {
    let mut x = value.wrapping_add(0x9e37_79b9_7f4a_7c15);
    for _ in 0..24 {
        x ^= x >> 31;
        x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    }
    value + (x & 1)
}

/// The sum of `node_work` over the tree, joining at every node whose subtree
/// has more than `cutoff` nodes.
pub fn tree_sum<F: Fork>(fork: F, tree: &Option<Box<Tree>>, cutoff: usize) -> u64 {
    let Some(node) = tree else { return 0 };
    if node.size <= cutoff {
        return node_work(node.value)
            + tree_sum(fork, &node.left, cutoff)
            + tree_sum(fork, &node.right, cutoff);
    }
    let (left, right) = fork.join(
        || tree_sum(fork, &node.left, cutoff),
        || tree_sum(fork, &node.right, cutoff),
    );
    node_work(node.value) + left + right
}

/// Frees a deep tree without recursion limits mattering (it is at most a few
/// hundred levels deep, but dropping iteratively is cheap insurance).
pub fn drop_tree(tree: Option<Box<Tree>>) {
    let mut stack: Vec<Box<Tree>> = tree.into_iter().collect();
    while let Some(mut node) = stack.pop() {
        stack.extend(node.left.take());
        stack.extend(node.right.take());
    }
}
