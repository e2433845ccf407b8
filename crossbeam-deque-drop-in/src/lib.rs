//! chase-lev under the name `crossbeam-deque`, for `[patch.crates-io]`: every
//! public item of crossbeam-deque 0.8 (`Worker`, `Stealer`, `Injector`,
//! `Steal`), with crossbeam-deque's observable behaviour and auto traits,
//! plus chase-lev's own additions (bounded workers,
//! `Worker::new_lifo_with_capacity`).
//!
//! ```
//! use crossbeam_deque::{Injector, Steal, Worker};
//!
//! let worker = Worker::new_lifo();
//! worker.push(1);
//! assert_eq!(worker.stealer().steal(), Steal::Success(1));
//! let injector = Injector::new();
//! injector.push(2);
//! assert_eq!(injector.steal_batch_and_pop(&worker), Steal::Success(2));
//! ```

pub use chase_lev::{Injector, Steal, Stealer, Worker};
