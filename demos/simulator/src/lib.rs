//! The work-stealing simulator of the seed text: the fork-join graph of
//! fib, a seeded random generator, and the synchronous-step scheduler that
//! runs the graph on chase-lev's deques. Used by the `simulate` binary
//! (the table and the plot) and by `tests/simulator.rs`.

pub mod dag;
pub mod experiment;
pub mod rng;
pub mod schedule;
