//! The scenarios compiled against shuttle's build of the deque.

pub use chase_lev_shuttle as deque;
/// The model checker's `Arc` and atomics, for the injector's scenarios.
pub use shuttle::sync::{atomic, Arc};
pub use shuttle::thread;

// The same scenarios, compiled once per model checker against that checker's
// build of the deque (`super::deque`): loading the file twice is the point.
#[allow(clippy::duplicate_mod)]
#[path = "scenarios.rs"]
pub mod scenarios;
