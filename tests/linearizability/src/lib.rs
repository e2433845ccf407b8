//! Linearizability checking for the chase-lev deque.
//!
//! - [`history`]: what threads asked and what the deque answered, with
//!   precedence from program order and the harness's phases only (no
//!   timestamps);
//! - [`specification`]: the sequential deque (a `VecDeque`) the history is
//!   checked against;
//! - [`checker`]: Wing and Gong's search with Lowe's memoisation;
//! - [`explanation`]: a minimal non-linearizable sub-history when the check
//!   fails;
//! - [`fifo_queue`]: the injector's FIFO-queue specification, its checker
//!   and its harness;
//! - [`scenario`] and [`harness`]: generated scenarios, run on any deque
//!   build and any kind of thread (hardware or shuttle), recording histories.
//!
//! ```
//! use chase_lev_tests::checker::check;
//! use chase_lev_tests::history::*;
//!
//! let specification = Specification { flavor: Flavor::Lifo, bound: None };
//! let mut owner = ThreadLog::new();
//! owner.record(0, Operation::Push(1), Outcome::Pushed);
//! owner.record(0, Operation::Push(2), Outcome::Pushed);
//! owner.record(1, Operation::Pop, Outcome::Popped(Some(2)));
//! let mut thief = ThreadLog::new();
//! // The thief runs concurrently with the pop (same phase): it may take 1 or 2.
//! thief.record(1, Operation::Steal, Outcome::Stolen(vec![1]));
//! assert!(check(&History::new(specification, vec![owner.clone(), thief])).is_ok());
//!
//! let mut greedy = ThreadLog::new();
//! greedy.record(1, Operation::Steal, Outcome::Stolen(vec![2])); // the newest: wrong
//! assert!(check(&History::new(specification, vec![owner, greedy])).is_err());
//! ```
#![warn(missing_docs)]

pub mod checker;
pub mod drivers;
pub mod explanation;
pub mod fifo_queue;
pub mod harness;
pub mod history;
pub mod scenario;
pub mod specification;

pub use checker::{check, Linearization, Violation};
pub use explanation::{explain, Explanation};
