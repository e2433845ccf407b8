//! The model: the linearizability checker's sequential deque
//! (`chase_lev_tests::specification`) per worker, plus what only the fuzz
//! target checks (the capacity a worker reports), the batch-size rule of
//! `Stealer::steal_batch*` with a destination's room, and the injector's
//! model with crossbeam-deque's block rule.

use std::collections::VecDeque;

use chase_lev_tests::history::{Flavor, Specification};
use chase_lev_tests::specification::{most_a_batch_takes, SequentialDeque};

use crate::constructor::Constructor;

/// The limit of `steal_batch` and `steal_batch_and_pop` (crossbeam's),
/// chase-lev's own constant.
pub use crate::deque::DEFAULT_BATCH_LIMIT;

/// What one deque should hold, and what its capacity may be.
#[derive(Debug)]
pub struct ModelDeque {
    tasks: SequentialDeque,
    fifo: bool,
    bound: Option<usize>,
    initial_capacity: usize,
    /// The most tasks it ever held: a growable buffer never needs more slots
    /// than the next power of two of this.
    peak_len: usize,
}

impl ModelDeque {
    /// The model of a worker made by `constructor`, whose `capacity()` was
    /// `initial_capacity` right after (checked against the documentation
    /// by the caller where it says something).
    pub fn new(constructor: Constructor, initial_capacity: usize) -> Self {
        let fifo = constructor.is_fifo();
        let bound = constructor.bound();
        let flavor = if fifo { Flavor::Fifo } else { Flavor::Lifo };
        ModelDeque {
            tasks: SequentialDeque::new(Specification { flavor, bound }),
            fifo,
            bound,
            initial_capacity,
            peak_len: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    pub fn bound(&self) -> Option<usize> {
        self.bound
    }

    pub fn is_fifo(&self) -> bool {
        self.fifo
    }

    /// Room left before a bounded deque refuses a push (`None`: unbounded).
    pub fn room(&self) -> Option<usize> {
        self.bound.map(|bound| bound - self.len())
    }

    pub fn is_full(&self) -> bool {
        self.room() == Some(0)
    }

    /// The tasks from oldest to newest (the order `Drop` drops them in).
    pub fn tasks(&self) -> impl Iterator<Item = u64> + '_ {
        self.tasks.tasks()
    }

    /// A push that fits (the caller checked `is_full`).
    pub fn push(&mut self, id: u64) {
        let pushed = self.tasks.try_push(id);
        assert!(pushed.is_ok(), "harness bug: pushed on a full model");
        self.peak_len = self.peak_len.max(self.len());
    }

    /// The owner's pop: the newest task (LIFO) or the oldest (FIFO).
    pub fn pop(&mut self) -> Option<u64> {
        self.tasks.pop()
    }

    /// A thief's steal: always the oldest task.
    pub fn steal(&mut self) -> Option<u64> {
        self.tasks.steal()
    }

    /// Checks `capacity()`: at least `len`; a power of two; a bounded
    /// worker's never changes ("its buffer never grows"); a growable
    /// worker's never goes below its initial capacity (documented for
    /// `new_lifo_with_capacity` and `new_fifo_with_capacity`, and the design
    /// for the default) and never beyond the next power of two of the most
    /// tasks it held (it grows only to make room: a memory bound no document
    /// states, but a bug would break).
    pub fn check_capacity(&self, capacity: usize) -> Result<(), String> {
        if capacity < self.len() {
            return Err(format!("capacity {capacity} is below len {}", self.len()));
        }
        if !capacity.is_power_of_two() {
            return Err(format!("capacity {capacity} is not a power of two"));
        }
        if self.bound.is_some() {
            if capacity != self.initial_capacity {
                return Err(format!(
                    "a bounded worker's capacity changed from {} to {capacity}",
                    self.initial_capacity
                ));
            }
            return Ok(());
        }
        if capacity < self.initial_capacity {
            return Err(format!(
                "capacity {capacity} is below the initial capacity {}",
                self.initial_capacity
            ));
        }
        let most_needed = self.initial_capacity.max(self.peak_len.next_power_of_two());
        if capacity > most_needed {
            return Err(format!(
                "capacity {capacity} is more than the {most_needed} slots ever needed \
                 (at most {} tasks were held)",
                self.peak_len
            ));
        }
        Ok(())
    }
}

/// How many tasks a batch steal takes from a victim holding `victim_len`
/// tasks, into a destination with `dest_room` free places (`None`: it grows),
/// returning the oldest one to the caller when `keep_first`.
///
/// The documented rule: `min((len + 1) / 2, limit)` tasks are wanted; those
/// that go into the destination are clipped to its room; the kept one needs
/// no room. Zero tasks from an empty victim is `Steal::Empty`; zero tasks
/// from a victim with tasks (into a full bounded destination) is
/// `Success(())`.
pub fn batch_size(
    victim_len: usize,
    limit: usize,
    keep_first: bool,
    dest_room: Option<usize>,
) -> usize {
    if victim_len == 0 {
        return 0;
    }
    let wanted = most_a_batch_takes(victim_len, limit);
    let kept = usize::from(keep_first);
    let into_dest = wanted - kept;
    let into_dest = match dest_room {
        Some(room) => into_dest.min(room),
        None => into_dest,
    };
    into_dest + kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_takes_half_rounded_up() {
        assert_eq!(batch_size(1, DEFAULT_BATCH_LIMIT, false, None), 1);
        assert_eq!(batch_size(4, DEFAULT_BATCH_LIMIT, false, None), 2);
        assert_eq!(batch_size(5, DEFAULT_BATCH_LIMIT, false, None), 3);
    }

    #[test]
    fn a_batch_stops_at_its_limit() {
        assert_eq!(batch_size(100, 5, false, None), 5);
        assert_eq!(batch_size(100, 5, true, Some(0)), 1);
    }

    #[test]
    fn a_batch_into_a_full_bounded_worker_moves_none_unless_one_task_is_kept() {
        assert_eq!(batch_size(10, DEFAULT_BATCH_LIMIT, false, Some(0)), 0);
        assert_eq!(batch_size(10, DEFAULT_BATCH_LIMIT, true, Some(0)), 1);
        assert_eq!(batch_size(10, DEFAULT_BATCH_LIMIT, false, Some(2)), 2);
    }

    #[test]
    fn a_batch_from_an_empty_victim_is_empty() {
        assert_eq!(batch_size(0, DEFAULT_BATCH_LIMIT, true, None), 0);
    }
}

/// The injector's model: a FIFO queue, and the two counters that decide
/// crossbeam's batch sizes (the injector's blocks hold 63 tasks each).
#[derive(Debug, Default)]
pub struct ModelInjector {
    tasks: VecDeque<u64>,
    pushed: usize,
    stolen: usize,
}

/// Tasks per block of the injector (crossbeam-deque's `BLOCK_CAP`).
const INJECTOR_BLOCK: usize = 63;

impl ModelInjector {
    pub fn push(&mut self, id: u64) {
        self.tasks.push_back(id);
        self.pushed += 1;
    }

    pub fn steal(&mut self) -> Option<u64> {
        let task = self.tasks.pop_front();
        self.stolen += usize::from(task.is_some());
        task
    }

    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    pub fn tasks(&self) -> impl Iterator<Item = u64> + '_ {
        self.tasks.iter().copied()
    }

    /// How many tasks a batch steal with `limit` claims before the
    /// destination's room is applied (crossbeam-deque 0.8's rule): the rest
    /// of the oldest block if the newest task is in a later block, else half
    /// of the tasks rounded up; at most `limit`; 0 when empty.
    pub fn batch_size(&self, limit: usize) -> usize {
        if self.tasks.is_empty() {
            return 0;
        }
        let (head, tail) = (self.stolen, self.pushed);
        if head / INJECTOR_BLOCK != tail / INJECTOR_BLOCK {
            (INJECTOR_BLOCK - head % INJECTOR_BLOCK).min(limit)
        } else {
            most_a_batch_takes(self.tasks.len(), limit)
        }
    }
}
