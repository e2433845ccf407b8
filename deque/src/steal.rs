//! `Steal`, the result of a steal attempt, with crossbeam-deque's helpers.

use core::fmt;
use core::iter::FromIterator;

/// The result of a steal attempt.
///
/// Shaped like `crossbeam_deque::Steal`, so code written against it compiles
/// unchanged.
///
/// ```
/// use chase_lev::{Steal, Worker};
///
/// let worker = Worker::new_lifo();
/// let stealer = worker.stealer();
/// assert_eq!(stealer.steal(), Steal::Empty);
/// worker.push(7);
/// assert_eq!(stealer.steal(), Steal::Success(7));
/// ```
#[must_use]
#[derive(PartialEq, Eq, Copy, Clone)]
pub enum Steal<T> {
    /// The source (the deque or the injector stolen from) was empty at the
    /// moment of the attempt. Only that: a batch steal into a full bounded
    /// destination is not `Empty` (see `Success`).
    Empty,
    /// A task was stolen. From the batch steals that return `Steal<()>`
    /// (`steal_batch`, `steal_batch_with_limit`): the destination holds at
    /// least one task it can pop (at least one moved, or it is bounded and
    /// full).
    Success(T),
    /// The attempt lost a race (with the owner or another thief) and should
    /// be repeated; the deque is not known to be empty.
    Retry,
}

impl<T> Steal<T> {
    /// Returns `true` if the source (deque or injector) was empty.
    ///
    /// ```
    /// use chase_lev::Steal;
    /// assert!(Steal::<i32>::Empty.is_empty());
    /// assert!(!Steal::Success(1).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        matches!(self, Steal::Empty)
    }

    /// Returns `true` if a task was stolen.
    ///
    /// ```
    /// use chase_lev::Steal;
    /// assert!(Steal::Success(1).is_success());
    /// assert!(!Steal::<i32>::Retry.is_success());
    /// ```
    pub fn is_success(&self) -> bool {
        matches!(self, Steal::Success(_))
    }

    /// Returns `true` if the attempt should be retried.
    ///
    /// ```
    /// use chase_lev::Steal;
    /// assert!(Steal::<i32>::Retry.is_retry());
    /// assert!(!Steal::<i32>::Empty.is_retry());
    /// ```
    pub fn is_retry(&self) -> bool {
        matches!(self, Steal::Retry)
    }

    /// Returns the stolen task, if there is one.
    ///
    /// ```
    /// use chase_lev::Steal;
    /// assert_eq!(Steal::Success(3).success(), Some(3));
    /// assert_eq!(Steal::<i32>::Retry.success(), None);
    /// ```
    pub fn success(self) -> Option<T> {
        match self {
            Steal::Success(task) => Some(task),
            _ => None,
        }
    }

    /// If no task was stolen, tries `f` instead. A `Retry` from either side
    /// wins over `Empty`, so that a caller never mistakes a lost race for an
    /// empty system.
    ///
    /// ```
    /// use chase_lev::Steal;
    /// assert_eq!(Steal::Empty.or_else(|| Steal::Success(1)), Steal::Success(1));
    /// assert_eq!(Steal::Retry.or_else(|| Steal::<i32>::Empty), Steal::Retry);
    /// assert_eq!(Steal::Success(2).or_else(|| Steal::Success(1)), Steal::Success(2));
    /// ```
    pub fn or_else<F>(self, f: F) -> Steal<T>
    where
        F: FnOnce() -> Steal<T>,
    {
        match self {
            Steal::Empty => f(),
            Steal::Success(_) => self,
            Steal::Retry => match f() {
                Steal::Success(task) => Steal::Success(task),
                _ => Steal::Retry,
            },
        }
    }

    /// The stolen task passed through `f`; `Empty` and `Retry` unchanged.
    /// (Not in crossbeam-deque's API, so crate-private.)
    pub(crate) fn map<U>(self, f: impl FnOnce(T) -> U) -> Steal<U> {
        match self {
            Steal::Success(task) => Steal::Success(f(task)),
            Steal::Empty => Steal::Empty,
            Steal::Retry => Steal::Retry,
        }
    }
}

/// The value of a `Success`; on `Empty` or `Retry`, returns that from the
/// enclosing function (what `?` would do, had `Steal` a stable `Try`).
macro_rules! success_or_return {
    ($attempt:expr) => {
        match $attempt {
            $crate::steal::Steal::Success(value) => value,
            $crate::steal::Steal::Empty => return $crate::steal::Steal::Empty,
            $crate::steal::Steal::Retry => return $crate::steal::Steal::Retry,
        }
    };
}
pub(crate) use success_or_return;

impl<T> fmt::Debug for Steal<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Steal::Empty => f.pad("Empty"),
            Steal::Success(_) => f.pad("Success(..)"),
            Steal::Retry => f.pad("Retry"),
        }
    }
}

/// Collects steal attempts: the first `Success` wins; otherwise `Retry` if any
/// attempt asked for one, else `Empty`. Attempts after the first success are
/// not made (the iterator is lazy).
///
/// ```
/// use chase_lev::{Steal, Worker};
///
/// let workers: Vec<Worker<i32>> = (0..3).map(|_| Worker::new_lifo()).collect();
/// workers[2].push(9);
/// let stealers: Vec<_> = workers.iter().map(Worker::stealer).collect();
/// let found: Steal<i32> = stealers.iter().map(|s| s.steal()).collect();
/// assert_eq!(found, Steal::Success(9));
/// ```
impl<T> FromIterator<Steal<T>> for Steal<T> {
    fn from_iter<I>(iter: I) -> Steal<T>
    where
        I: IntoIterator<Item = Steal<T>>,
    {
        let mut retry = false;
        for attempt in iter {
            match attempt {
                Steal::Empty => {}
                Steal::Success(task) => return Steal::Success(task),
                Steal::Retry => retry = true,
            }
        }
        if retry {
            Steal::Retry
        } else {
            Steal::Empty
        }
    }
}
