//! One sample of a row: a fresh queue, the row's threads released at once
//! by the gate, the clock stopped by the thread that sees the last task go,
//! and the threads' local counts summed after it.

use std::sync::Arc;
use std::time::Instant;

use crate::harness::{pop_all, push_all, take, Finish, Gate, Job, Pool, Role, Tally, Until};
use crate::sides::{DequeSide, InjectorSide};

/// A deque row: the owner (the bench's thread) fills its deque outside the
/// clock, then pops it or stays idle while `thieves` thieves steal (or
/// batch-steal into a worker of their own and pop it empty). Every thread
/// stops at its first `Empty`: nobody pushes in the sample.
#[derive(Clone, Copy, Debug)]
pub struct DequeShape {
    pub thieves: u64,
    pub owner_pops: bool,
    pub batch: bool,
}

/// An injector row: the bench's thread and `producers - 1` helpers push
/// their share of the tasks while `consumers` consumers steal (or
/// batch-steal into a worker and pop it empty); with no consumer, the
/// bench's thread pushes every task and then steals them all back.
#[derive(Clone, Copy, Debug)]
pub struct InjectorShape {
    pub producers: u64,
    pub consumers: u64,
    pub batch: bool,
}

/// What one sample measured.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    pub ns_per_task: f64,
    /// A thread of the sample was switched out against its will.
    pub preempted: bool,
    /// Tasks the thieves took (deque rows).
    pub stolen: u64,
    pub empties: u64,
    pub retries: u64,
    pub batches: u64,
    pub in_batches: u64,
}

impl Sample {
    /// Checks that every task was taken exactly once (their count and the
    /// sum of their values) and sums the tallies; the time runs from
    /// `start` to the latest end recorded by a thread that took a task: one
    /// that took none (not running when the gate opened, and back once the
    /// others had taken everything) did not stretch the work.
    fn of(name: &str, tasks: u64, start: Instant, tallies: &[Tally]) -> Sample {
        let taken: u64 = tallies.iter().map(|tally| tally.taken).sum();
        assert_eq!(
            taken, tasks,
            "{name}: {taken} tasks taken of {tasks}: one was lost or taken twice"
        );
        let sum = tallies
            .iter()
            .fold(0u64, |sum, tally| sum.wrapping_add(tally.sum));
        let expected = (u128::from(tasks) * u128::from(tasks.saturating_sub(1)) / 2) as u64;
        assert_eq!(
            sum, expected,
            "{name}: {tasks} tasks taken, but not each of them once"
        );
        let end = tallies
            .iter()
            .filter(|tally| tally.taken > 0)
            .filter_map(|tally| tally.end)
            .max()
            .expect("a thread saw the last task go");
        let total = |field: fn(&Tally) -> u64| tallies.iter().map(field).sum::<u64>();
        Sample {
            ns_per_task: end.duration_since(start).as_nanos() as f64 / tasks as f64,
            preempted: tallies.iter().any(|tally| tally.switches > 0),
            stolen: tallies
                .iter()
                .filter(|tally| tally.role == Role::Thief)
                .map(|tally| tally.taken)
                .sum(),
            empties: total(|tally| tally.empties),
            retries: total(|tally| tally.retries),
            batches: total(|tally| tally.batches),
            in_batches: tallies
                .iter()
                .filter(|tally| tally.batches > 0)
                .map(|tally| tally.taken)
                .sum(),
        }
    }
}

/// A sample of a deque row on `D`.
pub fn deque_sample<D: DequeSide + 'static>(
    name: &str,
    pool: &Pool,
    tasks: u64,
    shape: DequeShape,
) -> Sample {
    let DequeShape {
        thieves,
        owner_pops,
        batch,
    } = shape;
    let owner = D::filled(tasks, thieves, owner_pops);
    let jobs = (0..thieves)
        .map(|_| {
            let mut thief = D::thief(&owner);
            Box::new(move |gate: &Gate| {
                let mine = D::mine();
                gate.wait();
                let mut tally = Tally::new(Role::Thief);
                if batch {
                    take(
                        || D::steal_batch_and_pop(&mut thief, &mine),
                        || D::pop_mine(&mine),
                        true,
                        Until::Empty,
                        &mut tally,
                    );
                } else {
                    take(
                        || D::steal(&mut thief, &mine),
                        || None,
                        false,
                        Until::Empty,
                        &mut tally,
                    );
                }
                tally
            }) as Job
        })
        .collect();
    let (start, tallies) = pool.sample(jobs, || {
        let mut tally = Tally::new(Role::Owner);
        if owner_pops {
            pop_all(|| D::pop(&owner), &mut tally);
        }
        tally
    });
    Sample::of(name, tasks, start, &tallies)
}

/// A sample of an injector row on `I`. `tasks` is rounded down to a
/// multiple of the producers.
pub fn injector_sample<I: InjectorSide + 'static>(
    name: &str,
    pool: &Pool,
    tasks: u64,
    shape: InjectorShape,
) -> Sample {
    let InjectorShape {
        producers,
        consumers,
        batch,
    } = shape;
    let share = tasks / producers;
    let tasks = share * producers;
    let queue = Arc::new(I::queue(tasks, consumers));
    let finish = Arc::new(Finish::default());
    let mut jobs: Vec<Job> = Vec::new();
    for producer in 1..producers {
        let (queue, finish) = (queue.clone(), finish.clone());
        jobs.push(Box::new(move |gate: &Gate| {
            gate.wait();
            let values = producer * share..(producer + 1) * share;
            push_all(|task| I::push(&queue, task), values, &finish);
            Tally::new(Role::Producer)
        }));
    }
    for _ in 0..consumers {
        let (queue, finish) = (queue.clone(), finish.clone());
        let consumer = I::consumer();
        jobs.push(Box::new(move |gate: &Gate| {
            // Moved out of the closure's captures into a local, which the
            // compiler can keep in registers (the null queue's chunk).
            let mut consumer = consumer;
            let worker = I::worker();
            gate.wait();
            // Alone, a consumer knows when it has everything; several
            // share a total (`Finish`).
            let until = if consumers == 1 {
                Until::Count(tasks)
            } else {
                Until::Shared {
                    finish: &finish,
                    producers: producers as usize,
                    tasks,
                }
            };
            let mut tally = Tally::new(Role::Consumer);
            consume::<I>(&queue, &mut consumer, &worker, batch, until, &mut tally);
            tally
        }));
    }
    let own_worker = I::worker();
    let (start, tallies) = pool.sample(jobs, || {
        // Made here, not captured: a local the compiler can keep in
        // registers (the null queue's chunk), as in the consumers' jobs.
        let mut own = I::consumer();
        let mut tally = Tally::new(Role::Producer);
        push_all(|task| I::push(&queue, task), 0..share, &finish);
        if consumers == 0 {
            consume::<I>(
                &queue,
                &mut own,
                &own_worker,
                batch,
                Until::Empty,
                &mut tally,
            );
        }
        tally
    });
    Sample::of(name, tasks, start, &tallies)
}

/// A consumer's loop: steals, or batch steals followed by its worker's pops.
#[inline(always)]
fn consume<I: InjectorSide>(
    queue: &I::Queue,
    consumer: &mut I::Consumer,
    worker: &I::Worker,
    batch: bool,
    until: Until<'_>,
    tally: &mut Tally,
) {
    if batch {
        take(
            || I::steal_batch_and_pop(queue, consumer, worker),
            || I::pop(worker),
            true,
            until,
            tally,
        );
    } else {
        take(|| I::steal(queue, consumer), || None, false, until, tally);
    }
}
