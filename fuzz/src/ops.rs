//! The `ops` harness: one thread drives several workers and stealers through
//! an arbitrary sequence of operations, and after every step compares what
//! the deque did with the sequential [`model`](crate::model).
//!
//! Checked after every step:
//! - each result: `push`/`try_push` (`Ok`, or `Err` with the same task back),
//!   `pop`, `steal`, and the four batch steals (`Empty`, `Success`, which
//!   task, how many moved where; `Retry` is never right on one thread);
//! - `len` and `is_empty` of every worker and every stealer;
//! - `capacity` (see [`ModelDeque::check_capacity`]) and `bound`;
//! - drops: a task taken out is dropped by the harness and must be dropped
//!   exactly then; no operation drops a task by itself; when the last handle
//!   of a deque goes, exactly the tasks of its model are dropped, oldest
//!   first. So at the end every task has been dropped exactly once.

use std::fmt::Debug;

use crate::deque::{Injector, Steal, Stealer, Worker};
use arbitrary::Arbitrary;

use crate::constructor::Constructor;
use crate::drop_log;
use crate::model::{batch_size, ModelDeque, ModelInjector, DEFAULT_BATCH_LIMIT};
use crate::tracked_task::{
    assert_is, expected_id, BoxedTask, OddSizedTask, TaskKind, TrackedTask, WordTask, ZeroSizedTask,
};

/// More workers add little but slow every step's checks down.
const MAX_WORKERS: usize = 4;
/// Keeps one input fast; the bulk operations reach large deques anyway.
const MAX_OPERATIONS: usize = 256;

/// One fuzz input: the task type, the workers (the first always exists, the
/// others are destinations for batch steals or victims themselves) and the
/// operations. Every worker starts with one stealer.
#[derive(Debug, Arbitrary)]
pub struct OpsInput {
    pub task_kind: TaskKind,
    pub first_worker: Constructor,
    pub more_workers: Vec<Constructor>,
    pub operations: Vec<Operation>,
}

/// One step. Indices pick among the live workers or stealers, modulo their
/// number; a step with nothing to act on does nothing.
#[derive(Clone, Copy, Debug, Arbitrary)]
pub enum Operation {
    /// `push`; on a full bounded worker (where `push` panics by design) it
    /// is a `try_push` that must hand the task back.
    Push {
        worker: u8,
    },
    TryPush {
        worker: u8,
    },
    /// `count` times `Push`: reaches growth and full bounds in one step.
    PushMany {
        worker: u8,
        count: u8,
    },
    Pop {
        worker: u8,
    },
    /// `count` times `Pop`: drains a grown deque in one step.
    PopMany {
        worker: u8,
        count: u8,
    },
    /// `count` times a `Push` then a `Pop`: a deque that hovers at one
    /// length, which is how the shrinking hysteresis is reached.
    Churn {
        worker: u8,
        count: u8,
    },
    StealOne {
        stealer: u8,
    },
    /// `steal_batch` (limit `None`) or `steal_batch_with_limit` (a limit of
    /// 0 panics by design and is read as 1). `dest` may be the victim.
    StealBatch {
        stealer: u8,
        dest: u8,
        limit: Option<u8>,
    },
    /// `steal_batch_and_pop` or `steal_batch_with_limit_and_pop`.
    StealBatchAndPop {
        stealer: u8,
        dest: u8,
        limit: Option<u8>,
    },
    NewStealer {
        worker: u8,
    },
    CloneStealer {
        stealer: u8,
    },
    DropStealer {
        stealer: u8,
    },
    /// Drops a worker; its stealers keep the deque (and its tasks) alive.
    DropWorker {
        worker: u8,
    },
    /// `Injector::push` on the harness's one injector.
    InjectorPush,
    /// `count` times `InjectorPush`: reaches block ends (63 tasks) quickly.
    InjectorPushMany {
        count: u8,
    },
    InjectorSteal,
    /// `Injector::steal_batch` (limit `None`) or `steal_batch_with_limit`
    /// (0 is read as 1) into a worker.
    InjectorStealBatch {
        dest: u8,
        limit: Option<u8>,
    },
    /// `Injector::steal_batch_and_pop` or `steal_batch_with_limit_and_pop`.
    InjectorStealBatchAndPop {
        dest: u8,
        limit: Option<u8>,
    },
    /// Drops the injector (it drops its tasks) and starts a new one.
    DropInjector,
}

/// Runs one input; panics on the first difference from the model.
pub fn run(input: &OpsInput) {
    match input.task_kind {
        TaskKind::Word => Harness::<WordTask>::run(input),
        TaskKind::OddSized => Harness::<OddSizedTask>::run(input),
        TaskKind::Boxed => Harness::<BoxedTask>::run(input),
        TaskKind::ZeroSized => Harness::<ZeroSizedTask>::run(input),
    }
}

/// One deque: its owner handle (until dropped), its model, and how many
/// stealers still point to it.
struct Deque<T> {
    worker: Option<Worker<T>>,
    model: ModelDeque,
    stealers: usize,
}

struct Harness<T> {
    deques: Vec<Deque<T>>,
    /// Each stealer with the index of its deque.
    stealers: Vec<(usize, Stealer<T>)>,
    /// The injector and its model.
    injector: Injector<T>,
    injector_model: ModelInjector,
    next_id: u64,
    /// What the current step is, for failure messages.
    context: String,
}

impl<T: TrackedTask + Debug> Harness<T> {
    fn run(input: &OpsInput) {
        let _owner_of_the_drop_log = drop_log::start_input();
        let zero_sized = std::mem::size_of::<T>() == 0;
        let mut harness = Harness::<T> {
            deques: Vec::new(),
            stealers: Vec::new(),
            injector: Injector::new(),
            injector_model: ModelInjector::default(),
            next_id: 0,
            context: String::from("construction"),
        };
        let constructors = std::iter::once(&input.first_worker).chain(&input.more_workers);
        for (index, constructor) in constructors.take(MAX_WORKERS).enumerate() {
            let worker = constructor.build::<T>();
            let initial_capacity = worker.capacity();
            if let Some(documented) = constructor.documented_capacity(zero_sized) {
                assert_eq!(
                    initial_capacity, documented,
                    "{constructor:?}: the initial capacity is not the documented one"
                );
            }
            let model = ModelDeque::new(*constructor, initial_capacity);
            harness.stealers.push((index, worker.stealer()));
            harness.deques.push(Deque {
                worker: Some(worker),
                model,
                stealers: 1,
            });
        }
        harness.check_every_handle();
        for (step, operation) in input.operations.iter().take(MAX_OPERATIONS).enumerate() {
            harness.context = format!("step {step}: {operation:?}");
            harness.apply(*operation);
            harness.expect_drops(std::iter::empty());
            harness.check_every_handle();
        }
        harness.context = String::from("dropping every handle at the end");
        while !harness.stealers.is_empty() {
            harness.drop_stealer(0);
        }
        for index in 0..harness.deques.len() {
            if harness.deques[index].worker.is_some() {
                harness.drop_worker(index);
            }
        }
        harness.drop_injector();
    }

    fn apply(&mut self, operation: Operation) {
        match operation {
            Operation::Push { worker } => {
                self.with_worker(worker, |this, index| this.push(index, false))
            }
            Operation::TryPush { worker } => {
                self.with_worker(worker, |this, index| this.push(index, true))
            }
            Operation::PushMany { worker, count } => self.with_worker(worker, |this, index| {
                for _ in 0..count {
                    this.push(index, false);
                }
            }),
            Operation::Pop { worker } => self.with_worker(worker, Self::pop),
            Operation::PopMany { worker, count } => self.with_worker(worker, |this, index| {
                for _ in 0..count {
                    this.pop(index);
                }
            }),
            Operation::Churn { worker, count } => self.with_worker(worker, |this, index| {
                for _ in 0..count {
                    this.push(index, false);
                    this.pop(index);
                }
            }),
            Operation::StealOne { stealer } => self.with_stealer(stealer, Self::steal),
            Operation::StealBatch {
                stealer,
                dest,
                limit,
            } => self.with_stealer(stealer, |this, stealer| {
                this.with_worker(dest, |this, dest| {
                    this.steal_batch(stealer, dest, limit, false)
                })
            }),
            Operation::StealBatchAndPop {
                stealer,
                dest,
                limit,
            } => self.with_stealer(stealer, |this, stealer| {
                this.with_worker(dest, |this, dest| {
                    this.steal_batch(stealer, dest, limit, true)
                })
            }),
            Operation::NewStealer { worker } => self.with_worker(worker, |this, index| {
                let stealer = this.worker(index).stealer();
                this.stealers.push((index, stealer));
                this.deques[index].stealers += 1;
            }),
            Operation::CloneStealer { stealer } => self.with_stealer(stealer, |this, stealer| {
                let (index, handle) = &this.stealers[stealer];
                let clone = (*index, handle.clone());
                this.deques[clone.0].stealers += 1;
                this.stealers.push(clone);
            }),
            Operation::DropStealer { stealer } => self.with_stealer(stealer, Self::drop_stealer),
            Operation::DropWorker { worker } => self.with_worker(worker, Self::drop_worker),
            Operation::InjectorPush => self.injector_push(),
            Operation::InjectorPushMany { count } => (0..count).for_each(|_| self.injector_push()),
            Operation::InjectorSteal => self.injector_steal(),
            Operation::InjectorStealBatch { dest, limit } => {
                self.with_worker(dest, |this, dest| this.injector_batch(dest, limit, false))
            }
            Operation::InjectorStealBatchAndPop { dest, limit } => {
                self.with_worker(dest, |this, dest| this.injector_batch(dest, limit, true))
            }
            Operation::DropInjector => {
                self.drop_injector();
                self.injector = Injector::new();
                self.injector_model = ModelInjector::default();
            }
        }
    }

    fn injector_push(&mut self) {
        let (id, task) = self.new_task();
        self.injector.push(task);
        self.injector_model.push(id);
    }

    fn injector_steal(&mut self) {
        let expected = self.injector_model.steal();
        match (expected, self.injector.steal()) {
            (None, Steal::Empty) => {}
            (Some(id), Steal::Success(task)) => self.take_back(task, id, "injector steal"),
            (expected, actual) => panic!(
                "{}: the injector's steal returned {actual:?}, the model says task {expected:?}",
                self.context
            ),
        }
    }

    /// The injector's batch steals, checked against crossbeam's batch size
    /// (`ModelInjector::batch_size`), clipped to the destination's room; the
    /// destination then pops the oldest moved task first, whatever its
    /// flavour.
    fn injector_batch(&mut self, dest: usize, limit: Option<u8>, keep_first: bool) {
        let default = DEFAULT_BATCH_LIMIT + usize::from(keep_first);
        let limit_used = limit.map_or(default, |limit| usize::from(limit).max(1));
        let wanted = self.injector_model.batch_size(limit_used);
        let room = self.deques[dest].model.room().unwrap_or(usize::MAX);
        let moved = wanted.saturating_sub(usize::from(keep_first)).min(room);
        let count = if wanted == 0 {
            0
        } else {
            moved + usize::from(keep_first)
        };
        let taken: Vec<u64> = (0..count)
            .map(|_| self.injector_model.steal().expect("within len"))
            .collect();
        let (kept, to_dest) = match keep_first {
            true => (taken.first().copied(), taken.get(1..).unwrap_or(&[])),
            false => (None, &taken[..]),
        };
        let fifo = self.deques[dest].model.is_fifo();
        if fifo {
            to_dest
                .iter()
                .for_each(|&id| self.deques[dest].model.push(id));
        } else {
            to_dest
                .iter()
                .rev()
                .for_each(|&id| self.deques[dest].model.push(id));
        }
        // `Empty` only when the injector was empty: into a full bounded
        // destination nothing moves and the result is `Success(())`.
        let expected = (wanted > 0).then_some(kept);
        let destination = self.deques[dest].worker.as_ref().expect("a live worker");
        let actual: Steal<Option<T>> = match (keep_first, limit) {
            (false, None) => self
                .injector
                .steal_batch(destination)
                .map_success(|()| None),
            (false, Some(_)) => self
                .injector
                .steal_batch_with_limit(destination, limit_used)
                .map_success(|()| None),
            (true, None) => self
                .injector
                .steal_batch_and_pop(destination)
                .map_success(Some),
            (true, Some(_)) => self
                .injector
                .steal_batch_with_limit_and_pop(destination, limit_used)
                .map_success(Some),
        };
        match (expected, actual) {
            (None, Steal::Empty) | (Some(None), Steal::Success(None)) => {}
            (Some(Some(id)), Steal::Success(Some(task))) => {
                self.take_back(task, id, "injector batch kept")
            }
            (expected, actual) => panic!(
                "{}: the injector's batch steal returned {actual:?}, the model says {expected:?}",
                self.context
            ),
        }
    }

    /// Drops the injector; exactly its model's tasks are dropped, oldest first.
    fn drop_injector(&mut self) {
        let left: Vec<u64> = self.injector_model.tasks().collect();
        drop(std::mem::replace(&mut self.injector, Injector::new()));
        self.expect_drops(left.into_iter());
        self.injector_model = ModelInjector::default();
    }

    /// Calls `action` with the index of the `choice`-th live worker, if any.
    fn with_worker(&mut self, choice: u8, action: impl FnOnce(&mut Self, usize)) {
        let live: Vec<usize> = (0..self.deques.len())
            .filter(|&index| self.deques[index].worker.is_some())
            .collect();
        if !live.is_empty() {
            action(self, live[usize::from(choice) % live.len()]);
        }
    }

    /// Calls `action` with the index of the `choice`-th stealer, if any.
    fn with_stealer(&mut self, choice: u8, action: impl FnOnce(&mut Self, usize)) {
        if !self.stealers.is_empty() {
            let stealer = usize::from(choice) % self.stealers.len();
            action(self, stealer);
        }
    }

    fn worker(&self, index: usize) -> &Worker<T> {
        self.deques[index].worker.as_ref().expect("a live worker")
    }

    fn new_task(&mut self) -> (u64, T) {
        let id = self.next_id;
        self.next_id += 1;
        (id, T::new(id))
    }

    fn push(&mut self, index: usize, use_try_push: bool) {
        let (id, task) = self.new_task();
        let full = self.deques[index].model.is_full();
        if use_try_push || full {
            match self.worker(index).try_push(task) {
                Ok(()) if full => panic!(
                    "{}: try_push on a full bounded worker accepted task {id}",
                    self.context
                ),
                Ok(()) => self.deques[index].model.push(id),
                Err(task) if full => self.take_back(task, id, "try_push handed back"),
                Err(task) => panic!(
                    "{}: try_push refused task {task:?} with room left",
                    self.context
                ),
            }
        } else {
            self.worker(index).push(task);
            self.deques[index].model.push(id);
        }
    }

    fn pop(&mut self, index: usize) {
        let expected = self.deques[index].model.pop();
        let actual = self.worker(index).pop();
        match (expected, actual) {
            (None, None) => {}
            (Some(id), Some(task)) => self.take_back(task, id, "pop"),
            (expected, actual) => {
                panic!(
                    "{}: pop returned {actual:?}, the model says task {expected:?}",
                    self.context
                )
            }
        }
    }

    fn steal(&mut self, stealer: usize) {
        let index = self.stealers[stealer].0;
        let expected = self.deques[index].model.steal();
        let actual = self.stealers[stealer].1.steal();
        match (expected, actual) {
            (None, Steal::Empty) => {}
            (Some(id), Steal::Success(task)) => self.take_back(task, id, "steal"),
            (expected, actual) => {
                panic!(
                    "{}: steal returned {actual:?}, the model says task {expected:?}",
                    self.context
                )
            }
        }
    }

    /// The four batch steals, checked against [`batch_size`] and, when the
    /// destination is the victim itself, against the documented no-op
    /// (`steal_batch`) or owner's pop (`steal_batch_and_pop`).
    fn steal_batch(&mut self, stealer: usize, dest: usize, limit: Option<u8>, keep_first: bool) {
        let victim = self.stealers[stealer].0;
        let limit_used = limit.map_or(DEFAULT_BATCH_LIMIT, |limit| usize::from(limit).max(1));
        // The expected outcome: `None` is `Empty`, else the kept task (if any).
        let expected: Option<Option<u64>> = if victim == dest {
            let model = &mut self.deques[victim].model;
            match (model.is_empty(), keep_first) {
                (true, _) => None,
                (false, false) => Some(None),
                (false, true) => Some(model.pop()),
            }
        } else {
            let victim_len = self.deques[victim].model.len();
            let room = self.deques[dest].model.room();
            let count = batch_size(victim_len, limit_used, keep_first, room);
            let mut taken: Vec<u64> = (0..count)
                .map(|_| self.deques[victim].model.steal().expect("within len"))
                .collect();
            // crossbeam-deque's arrangement: the kept task and then the
            // destination's pops come in the victim owner's pop order.
            if !self.deques[victim].model.is_fifo() {
                taken.reverse();
            }
            let (kept, moved) = match keep_first {
                true => (taken.first().copied(), taken.get(1..).unwrap_or(&[])),
                false => (None, &taken[..]),
            };
            let dest_model = &mut self.deques[dest].model;
            if dest_model.is_fifo() {
                moved.iter().for_each(|&id| dest_model.push(id));
            } else {
                moved.iter().rev().for_each(|&id| dest_model.push(id));
            }
            // `Empty` only when the victim was empty: into a full bounded
            // destination nothing moves and the result is `Success(())`.
            (victim_len > 0).then_some(kept)
        };
        let thief = &self.stealers[stealer].1;
        let destination = self.worker(dest);
        let actual: Steal<Option<T>> = match (keep_first, limit) {
            (false, None) => thief.steal_batch(destination).map_success(|()| None),
            (false, Some(_)) => thief
                .steal_batch_with_limit(destination, limit_used)
                .map_success(|()| None),
            (true, None) => thief.steal_batch_and_pop(destination).map_success(Some),
            (true, Some(_)) => thief
                .steal_batch_with_limit_and_pop(destination, limit_used)
                .map_success(Some),
        };
        match (expected, actual) {
            (None, Steal::Empty) | (Some(None), Steal::Success(None)) => {}
            (Some(Some(id)), Steal::Success(Some(task))) => self.take_back(task, id, "batch kept"),
            (expected, actual) => panic!(
                "{}: the batch steal returned {actual:?}, the model says {}",
                self.context,
                match expected {
                    None => String::from("Empty"),
                    Some(None) => String::from("Success(())"),
                    Some(Some(id)) => format!("Success(task {id})"),
                }
            ),
        }
    }

    fn drop_stealer(&mut self, stealer: usize) {
        let (index, handle) = self.stealers.remove(stealer);
        drop(handle);
        self.deques[index].stealers -= 1;
        self.after_handle_dropped(index);
    }

    fn drop_worker(&mut self, index: usize) {
        drop(self.deques[index].worker.take());
        self.after_handle_dropped(index);
    }

    /// When the last handle goes the deque drops its tasks, oldest first;
    /// before that, dropping a handle drops nothing.
    fn after_handle_dropped(&mut self, index: usize) {
        let deque = &mut self.deques[index];
        if deque.worker.is_none() && deque.stealers == 0 {
            let left: Vec<u64> = deque.model.tasks().collect();
            while deque.model.steal().is_some() {}
            self.expect_drops(left.into_iter());
        } else {
            self.expect_drops(std::iter::empty());
        }
    }

    /// Checks that `task` is task `id`, drops it, and checks that dropping it
    /// was its one and only drop so far.
    fn take_back(&self, task: T, id: u64, what: &str) {
        assert_is(&task, id, &format_args!("{}: {what}", self.context));
        drop(task);
        self.expect_drops(std::iter::once(id));
    }

    /// Checks that the drops since the last check are exactly `expected`.
    fn expect_drops(&self, expected: impl Iterator<Item = u64>) {
        let expected: Vec<Option<u64>> = expected.map(expected_id::<T>).collect();
        let actual = drop_log::take();
        assert_eq!(
            actual, expected,
            "{}: the tasks dropped (left) are not those expected (right)",
            self.context
        );
    }

    /// `len`, `is_empty`, `capacity` and `bound` of every handle against the
    /// model.
    fn check_every_handle(&self) {
        assert_eq!(
            self.injector.len(),
            self.injector_model.len(),
            "{}: the injector's len",
            self.context
        );
        assert_eq!(
            self.injector.is_empty(),
            self.injector_model.is_empty(),
            "{}: the injector's is_empty",
            self.context
        );
        for (index, deque) in self.deques.iter().enumerate() {
            let Some(worker) = &deque.worker else {
                continue;
            };
            let model = &deque.model;
            assert_eq!(
                worker.len(),
                model.len(),
                "{}: worker {index}: len",
                self.context
            );
            assert_eq!(
                worker.is_empty(),
                model.is_empty(),
                "{}: worker {index}: is_empty",
                self.context
            );
            assert_eq!(
                worker.bound(),
                model.bound(),
                "{}: worker {index}: bound",
                self.context
            );
            if let Err(problem) = model.check_capacity(worker.capacity()) {
                panic!("{}: worker {index}: {problem}", self.context);
            }
        }
        for (number, (index, stealer)) in self.stealers.iter().enumerate() {
            let model = &self.deques[*index].model;
            assert_eq!(
                stealer.len(),
                model.len(),
                "{}: stealer {number}: len",
                self.context
            );
            assert_eq!(
                stealer.is_empty(),
                model.is_empty(),
                "{}: stealer {number}: is_empty",
                self.context
            );
        }
    }
}

/// `Steal::map`, which the crate does not have (nor does crossbeam's).
trait MapSuccess<T> {
    fn map_success<U>(self, f: impl FnOnce(T) -> U) -> Steal<U>;
}

impl<T> MapSuccess<T> for Steal<T> {
    fn map_success<U>(self, f: impl FnOnce(T) -> U) -> Steal<U> {
        match self {
            Steal::Empty => Steal::Empty,
            Steal::Success(task) => Steal::Success(f(task)),
            Steal::Retry => Steal::Retry,
        }
    }
}
