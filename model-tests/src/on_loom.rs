//! The scenarios compiled against loom's build of the deque.

pub use chase_lev_loom as deque;
pub use loom::thread;

#[path = "scenarios.rs"]
pub mod scenarios;
