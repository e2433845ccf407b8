//! The work-stealing simulator of the seed text: the fork-join graph of
//! fib, a seeded random generator, and the synchronous-step scheduler that
//! runs the graph on this crate's deques. Shared by the `simulate` example
//! and by `tests/simulator.rs`.

pub mod dag;
pub mod experiment;
pub mod rng;
pub mod schedule;
