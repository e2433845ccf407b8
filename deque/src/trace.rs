//! The event log of the mutant builds: every atomic access of the deque,
//! with the value it read or wrote and the thread that did it, so that the
//! fence lab can print a counterexample a person can follow (loom's own trace
//! shows no values). In the chase-lev crate `Trace` is empty and `trace!`
//! expands to nothing.

/// Records one event when the deque's trace is enabled (mutant builds only).
macro_rules! trace {
    ($inner:expr, $($arg:tt)*) => {
        #[cfg(chase_lev_mutants)]
        {
            $inner.trace.record(|| format!($($arg)*));
        }
    };
}
pub(crate) use trace;

#[cfg(not(chase_lev_mutants))]
#[derive(Default)]
pub(crate) struct Trace;

#[cfg(chase_lev_mutants)]
#[derive(Default)]
pub(crate) struct Trace {
    enabled: std::sync::atomic::AtomicBool,
    events: std::sync::Mutex<Vec<String>>,
}

#[cfg(chase_lev_mutants)]
std::thread_local! {
    /// A copy of every event recorded on this OS thread since the last
    /// traced deque was created. Loom and shuttle run all of a model's
    /// threads on one OS thread, so when the model checker stops an
    /// execution in the middle (a race on a slot cell), the events up to
    /// that point can still be read here, though the deque is gone.
    static THIS_EXECUTION: std::cell::RefCell<Vec<String>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// (Mutant builds only.) Takes the events recorded on this OS thread since
/// the last traced deque was created; see `THIS_EXECUTION`.
#[cfg(chase_lev_mutants)]
pub fn take_thread_trace() -> Vec<String> {
    THIS_EXECUTION.with(|events| std::mem::take(&mut *events.borrow_mut()))
}

#[cfg(chase_lev_mutants)]
impl Trace {
    pub(crate) fn enable(&self) {
        THIS_EXECUTION.with(|events| events.borrow_mut().clear());
        // A plain std atomic: the log is the observer's, not part of the model.
        self.enabled
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    pub(crate) fn record(&self, event: impl FnOnce() -> String) {
        if self.enabled.load(std::sync::atomic::Ordering::Relaxed) {
            let line = format!("{}: {}", crate::sync::thread_label(), event());
            THIS_EXECUTION.with(|events| events.borrow_mut().push(line.clone()));
            self.events.lock().unwrap().push(line);
        }
    }

    pub(crate) fn note(&self, event: String) {
        self.record(|| event);
    }

    pub(crate) fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.events.lock().unwrap())
    }
}
