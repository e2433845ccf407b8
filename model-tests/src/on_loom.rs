//! The scenarios compiled against loom's build of the deque.

pub use chase_lev_loom as deque;
/// The model checker's `Arc` and atomics, for the injector's scenarios.
pub use loom::sync::{atomic, Arc};
pub use loom::thread;

// The same scenarios, compiled once per model checker against that checker's
// build of the deque (`super::deque`): loading the file twice is the point.
#[allow(clippy::duplicate_mod)]
#[path = "scenarios.rs"]
pub mod scenarios;
