//! chase-lev under the name `crossbeam-deque`, for `[patch.crates-io]`: every
//! public item of crossbeam-deque 0.8 (`Worker`, `Stealer`, `Injector`,
//! `Steal`), with crossbeam-deque's observable behaviour, plus chase-lev's
//! own additions (bounded workers, `Worker::with_capacity`).

pub use chase_lev::{Injector, Steal, Stealer, Worker};
