//! A process-wide log of task drops, in the order they happen.
//!
//! Every task type of the harnesses records its id here when it is dropped.
//! A task that is dropped twice (a duplicate bitwise copy taken out of the
//! deque) shows up twice; a lost task never shows up. The harnesses drain the
//! log after each step and say exactly which drops they expected.
//!
//! A `std` mutex rather than a thread-local: the shuttle scenario drops tasks
//! on several (simulated) threads. libFuzzer runs one input at a time, so the
//! harness that starts an input owns the log until it ends.

use std::sync::{Mutex, MutexGuard};

/// One drop: the task's id, or `None` for a zero-sized task, which has none.
pub type Dropped = Option<u64>;

static LOG: Mutex<Vec<Dropped>> = Mutex::new(Vec::new());

fn log() -> MutexGuard<'static, Vec<Dropped>> {
    // A panic while the lock is held aborts the fuzzer anyway; under
    // `cargo test` a poisoned log should not hide the first failure.
    LOG.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Records that the task `id` was dropped.
pub fn record(id: Dropped) {
    log().push(id);
}

/// Takes the drops recorded since the last call.
pub fn take() -> Vec<Dropped> {
    std::mem::take(&mut *log())
}
