//! The public ways to make a `Worker`, as fuzzer input.

use crate::deque::Worker;
use arbitrary::Arbitrary;

/// One of the six public constructors of `Worker`, with its capacity.
/// Capacities are small (a byte) so that the fuzzer reaches full, growing
/// and shrinking deques quickly; 0 and odd values are included.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Arbitrary)]
pub enum Constructor {
    NewLifo,
    NewFifo,
    WithCapacity(u8),
    FifoWithCapacity(u8),
    /// A bound of 0 panics by design; the harness asks for at least 1.
    LifoBounded(u8),
    FifoBounded(u8),
}

impl Constructor {
    pub fn build<T>(self) -> Worker<T> {
        match self {
            Constructor::NewLifo => Worker::new_lifo(),
            Constructor::NewFifo => Worker::new_fifo(),
            Constructor::WithCapacity(capacity) => Worker::new_lifo_with_capacity(capacity.into()),
            Constructor::FifoWithCapacity(capacity) => {
                Worker::new_fifo_with_capacity(capacity.into())
            }
            Constructor::LifoBounded(_) | Constructor::FifoBounded(_) => {
                let bound = self.bound().expect("bounded");
                if self.is_fifo() {
                    Worker::new_fifo_bounded(bound)
                } else {
                    Worker::new_lifo_bounded(bound)
                }
            }
        }
    }

    /// Whether the owner pops the oldest task (else the newest).
    pub fn is_fifo(self) -> bool {
        matches!(
            self,
            Constructor::NewFifo | Constructor::FifoWithCapacity(_) | Constructor::FifoBounded(_)
        )
    }

    /// The bound of a bounded worker.
    pub fn bound(self) -> Option<usize> {
        match self {
            Constructor::LifoBounded(bound) | Constructor::FifoBounded(bound) => {
                Some(usize::from(bound).max(1))
            }
            _ => None,
        }
    }

    /// The capacity right after construction, where the documentation
    /// fixes it: the requested capacity (or bound) rounded up to a power of
    /// two, at least 1. `None` where it does not: the default of `new_lifo`
    /// and `new_fifo`, and growable workers of zero-sized tasks (which take
    /// no memory, so the deque may start them at any size).
    pub fn documented_capacity(self, zero_sized_tasks: bool) -> Option<usize> {
        match self {
            Constructor::NewLifo | Constructor::NewFifo => None,
            Constructor::WithCapacity(_) | Constructor::FifoWithCapacity(_) if zero_sized_tasks => {
                None
            }
            Constructor::WithCapacity(capacity) | Constructor::FifoWithCapacity(capacity) => {
                Some(usize::from(capacity).max(1).next_power_of_two())
            }
            Constructor::LifoBounded(_) | Constructor::FifoBounded(_) => {
                Some(self.bound().expect("bounded").next_power_of_two())
            }
        }
    }
}
