//! A process-wide log of task drops, in the order they happen.
//!
//! Every task type of the harnesses records its id here when it is dropped.
//! A task that is dropped twice (a duplicate bitwise copy taken out of the
//! deque) shows up twice; a lost task never shows up. The harnesses drain the
//! log after each step and say exactly which drops they expected.
//!
//! A `std` mutex rather than a thread-local: the shuttle scenario drops tasks
//! on several (simulated) threads. One input at a time owns the log
//! ([`start_input`]): libFuzzer runs inputs one by one anyway, but `cargo
//! test` runs tests on parallel threads.

use std::sync::{Mutex, MutexGuard};

/// One drop: the task's id, or `None` for a zero-sized task, which has none.
pub type Dropped = Option<u64>;

static LOG: Mutex<Vec<Dropped>> = Mutex::new(Vec::new());

/// Held by the input that owns the log.
static INPUT: Mutex<()> = Mutex::new(());

/// Proof that the caller's input owns the log, until dropped.
#[must_use]
pub struct InputGuard(#[allow(dead_code)] MutexGuard<'static, ()>);

/// Waits until no other input runs, then starts with an empty log.
pub fn start_input() -> InputGuard {
    // A failed input (a panic under `cargo test`) poisons the lock; the next
    // input starts clean all the same.
    let guard = INPUT
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    log().clear();
    InputGuard(guard)
}

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
