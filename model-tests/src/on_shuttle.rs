//! The scenarios compiled against shuttle's build of the deque.

pub use chase_lev_shuttle as deque;
pub use shuttle::thread;

#[path = "scenarios.rs"]
pub mod scenarios;
