//! The evidence of a failed execution, kept for whoever runs the model: the
//! violation and the deque's own event log of that execution (loom's trace
//! shows no values, the deque's log does).
//!
//! Like the ledger, this is plain thread-local memory of the OS thread that
//! runs the model checker, outside the model.

use std::cell::{Cell, RefCell};

/// What went wrong in one execution, and how it got there.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The broken promise, in one sentence.
    pub violation: String,
    /// The deque's event log: every atomic access with the value it read or
    /// wrote, and the model's own notes of which operation each thread ran.
    pub trace: Vec<String>,
    /// `true` if the ledger's end-of-execution check found the violation;
    /// `false` if the execution panicked first (loom's own race check, a
    /// leaked `Arc`, or a panic in the deque), and the log stops there.
    pub found_by_ledger: bool,
}

thread_local! {
    static TRACING: Cell<bool> = const { Cell::new(false) };
    static LAST_FAILURE: RefCell<Option<Failure>> = const { RefCell::new(None) };
}

/// Turns the deque's event log on or off for the models run from now on
/// (it makes each execution several times slower, so only the fence lab
/// turns it on).
pub fn set_tracing(on: bool) {
    TRACING.with(|tracing| tracing.set(on));
}

/// Whether models record the deque's event log.
pub fn tracing() -> bool {
    TRACING.with(Cell::get)
}

/// Keeps the evidence of a failed execution (the last one wins).
pub fn record_failure(failure: Failure) {
    LAST_FAILURE.with(|last| *last.borrow_mut() = Some(failure));
}

/// Takes the evidence of the last failed execution, if any.
pub fn take_failure() -> Option<Failure> {
    LAST_FAILURE.with(|last| last.borrow_mut().take())
}
