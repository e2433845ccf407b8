//! The scenarios compiled against loom's build of the deque as it ships
//! (`chase-lev-loom`: `--cfg chase_lev_loom`, no mutant compiled in, and the
//! internal builds' hooks, `--cfg chase_lev_hooks`, which do nothing until a
//! scenario sets one). The loom suite's verdicts are about this build.
//!
//! The scenarios are written against the mutant builds' constructor and
//! event log; here `deque` adapts the shipped public API to them: a worker
//! is made by the public constructor of the same shape, an injector by
//! `Injector::new` (with the hooks' `set_pause` for a pausing one), and the
//! log stays empty (the shipped deque records nothing).

/// The model checker's `Arc` and atomics, for the injector's scenarios.
pub use loom::sync::{atomic, Arc};
pub use loom::thread;

/// The shipped deque, shaped like the mutant builds for the scenarios.
pub mod deque {
    use core::ops::Deref;

    pub use crate::Mutant;
    pub use chase_lev_loom::{hooks, Pause, PauseHook, Steal, Stealer, DEFAULT_BATCH_LIMIT};

    /// A shipped `Worker`, made by its public constructors.
    pub struct Worker<T>(chase_lev_loom::Worker<T>);

    impl<T> Worker<T> {
        /// The public constructor of this shape; the shipped build has no
        /// mutant, so `mutant` must be `None`.
        pub fn new_mutant(
            fifo: bool,
            capacity: usize,
            bounded: bool,
            mutant: Option<Mutant>,
        ) -> Self {
            assert!(mutant.is_none(), "the shipped build has no mutant");
            use chase_lev_loom::Worker as Shipped;
            Worker(match (fifo, bounded) {
                (false, false) => Shipped::new_lifo_with_capacity(capacity),
                (true, false) => Shipped::new_fifo_with_capacity(capacity),
                (false, true) => Shipped::new_lifo_bounded(capacity),
                (true, true) => Shipped::new_fifo_bounded(capacity),
            })
        }
    }

    impl<T> Deref for Worker<T> {
        type Target = chase_lev_loom::Worker<T>;

        fn deref(&self) -> &Self::Target {
            &self.0
        }
    }

    /// A shipped `Injector`.
    pub struct Injector<T>(chase_lev_loom::Injector<T>);

    impl<T> Injector<T> {
        /// `Injector::new`; the shipped build has no mutant, so `mutant`
        /// must be `None`.
        pub fn new_mutant(mutant: Option<Mutant>) -> Self {
            assert!(mutant.is_none(), "the shipped build has no mutant");
            Injector(chase_lev_loom::Injector::new())
        }

        /// `new_mutant`, with a pause hook.
        pub fn new_pausing(mutant: Option<Mutant>, hook: chase_lev_loom::PauseHook) -> Self {
            let mut injector = Injector::new_mutant(mutant);
            injector.0.set_pause(hook);
            injector
        }
    }

    impl<T> Deref for Injector<T> {
        type Target = chase_lev_loom::Injector<T>;

        fn deref(&self) -> &Self::Target {
            &self.0
        }
    }

    /// The shipped deque records no events: the scenarios' calls of the
    /// mutant builds' event log do nothing here.
    pub fn set_event_log(_on: bool) {}

    /// The shipped deque records no events.
    pub fn log_note(_note: String) {}

    /// The shipped deque records no events.
    pub fn logged_events() -> Vec<String> {
        Vec::new()
    }
}

#[allow(clippy::duplicate_mod)]
#[path = "scenarios.rs"]
pub mod scenarios;
