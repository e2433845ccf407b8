//! The harnesses behind the fuzz targets of the chase-lev deque.
//!
//! The targets in `fuzz_targets/` are one line each; the work is here, in a
//! library, so that the seed corpus can also be replayed by `cargo test`
//! without libFuzzer (see `tests/replay_seeds.rs`).
//!
//! - [`ops`]: one thread drives workers and stealers through an arbitrary
//!   sequence of operations and compares every result with [`model`], a
//!   `VecDeque` per deque; [`drop_log`] checks that every task is dropped
//!   exactly once, and when.
//! - [`schedule`]: a small concurrent scenario of the `tests` package's
//!   scenario language, run by that package's harness under shuttle, whose
//!   interleaving [`byte_scheduler`] takes from the fuzzer's bytes; the
//!   oracles are the linearizability checker of the `tests` package and
//!   the drop log (every task dropped exactly once).

/// The deque the `ops` target drives: chase-lev as users get it, or, with
/// the `planted-bug` feature, the internal mutant build of the same source,
/// whose public constructors carry the mutant that `CHASE_LEV_MUTANT` names
/// (one record of `model-tests/mutants.md`; see `planted-bug.sh`).
#[cfg(not(feature = "planted-bug"))]
pub use chase_lev as deque;
#[cfg(feature = "planted-bug")]
pub use chase_lev_mutants as deque;

pub mod byte_scheduler;
pub mod constructor;
pub mod drop_log;
pub mod model;
pub mod ops;
pub mod schedule;
pub mod tracked_task;
