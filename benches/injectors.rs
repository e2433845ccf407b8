//! The two `Injector`s under comparison behind one small interface, as
//! [`contenders`](crate::contenders) puts the deques behind one: chase-lev's
//! and crossbeam-deque's, each with the `Worker` its batch steals go into.
//! Used by the contended bench (`contended/`).

use crate::contenders::Taken;

/// An injector and the worker that its batch steals go into.
pub trait InjectorContender: 'static {
    const NAME: &'static str;
    type Queue: Send + Sync;
    type Worker;
    fn queue() -> Self::Queue;
    fn worker() -> Self::Worker;
    fn push(queue: &Self::Queue, task: u64);
    fn steal(queue: &Self::Queue) -> Taken;
    fn steal_batch_and_pop(queue: &Self::Queue, dest: &Self::Worker) -> Taken;
    /// `steal_batch_with_limit` into `dest`, then `dest`'s first pop.
    fn steal_batch_with_limit(queue: &Self::Queue, dest: &Self::Worker, limit: usize) -> Taken;
    fn pop(worker: &Self::Worker) -> Option<u64>;
}

macro_rules! injector_contender {
    ($name:ident, $label:literal, $krate:ident) => {
        pub struct $name;

        impl InjectorContender for $name {
            const NAME: &'static str = $label;
            type Queue = $krate::Injector<u64>;
            type Worker = $krate::Worker<u64>;
            fn queue() -> Self::Queue {
                $krate::Injector::new()
            }
            fn worker() -> Self::Worker {
                $krate::Worker::new_lifo()
            }
            #[inline(always)]
            fn push(queue: &Self::Queue, task: u64) {
                queue.push(task)
            }
            #[inline(always)]
            fn steal(queue: &Self::Queue) -> Taken {
                match queue.steal() {
                    $krate::Steal::Success(task) => Taken::Task(task),
                    $krate::Steal::Empty => Taken::Empty,
                    $krate::Steal::Retry => Taken::Retry,
                }
            }
            #[inline(always)]
            fn steal_batch_and_pop(queue: &Self::Queue, dest: &Self::Worker) -> Taken {
                match queue.steal_batch_and_pop(dest) {
                    $krate::Steal::Success(task) => Taken::Task(task),
                    $krate::Steal::Empty => Taken::Empty,
                    $krate::Steal::Retry => Taken::Retry,
                }
            }
            #[inline(always)]
            fn steal_batch_with_limit(
                queue: &Self::Queue,
                dest: &Self::Worker,
                limit: usize,
            ) -> Taken {
                match queue.steal_batch_with_limit(dest, limit) {
                    $krate::Steal::Success(()) => dest.pop().map_or(Taken::Retry, Taken::Task),
                    $krate::Steal::Empty => Taken::Empty,
                    $krate::Steal::Retry => Taken::Retry,
                }
            }
            #[inline(always)]
            fn pop(worker: &Self::Worker) -> Option<u64> {
                worker.pop()
            }
        }
    };
}

injector_contender!(ChaseLevInjector, "chase-lev", chase_lev);
injector_contender!(CrossbeamInjector, "crossbeam-deque", crossbeam_deque);
