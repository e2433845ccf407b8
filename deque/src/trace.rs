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
impl Trace {
    pub(crate) fn enable(&self) {
        // A plain std atomic: the log is the observer's, not part of the model.
        self.enabled
            .store(true, std::sync::atomic::Ordering::Relaxed);
    }

    pub(crate) fn record(&self, event: impl FnOnce() -> String) {
        if self.enabled.load(std::sync::atomic::Ordering::Relaxed) {
            let line = format!("{}: {}", crate::sync::thread_label(), event());
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
