//! `Empty` means empty: a batch steal into a bounded
//! destination that is full.
//!
//! The rule: `Steal::Empty` only ever says that the *source* (a deque or the
//! injector) looked empty. A batch steal into a full bounded destination,
//! from a source that has tasks, moves nothing and returns `Success(())`
//! (`steal_batch`, `steal_batch_with_limit`: the destination holds at least
//! one task it can pop), or hands one task to the caller
//! (`steal_batch_and_pop`, `steal_batch_with_limit_and_pop`). Before the
//! rule, `steal_batch` returned `Empty` there, and a scheduler that parks on
//! `Empty` would park with work in hand.
//!
//! Each test covers both sources' flavours (LIFO and FIFO deques, the
//! injector) and both flavours of bounded destination, at several bounds.

use chase_lev::{Injector, Steal, Stealer, Worker};

/// The bounds of the full destinations: one slot, a few, a power of two.
const BOUNDS: [usize; 3] = [1, 3, 8];

/// The limits passed to the `_with_limit` methods.
const LIMITS: [usize; 3] = [1, 2, usize::MAX];

/// A bounded destination of `bound` slots holding `bound` tasks of its own
/// (1000, 1001, ...).
fn full_destination(fifo: bool, bound: usize) -> Worker<u32> {
    let dest = if fifo {
        Worker::new_fifo_bounded(bound)
    } else {
        Worker::new_lifo_bounded(bound)
    };
    for task in 0..bound {
        dest.try_push(1000 + task as u32)
            .expect("room up to the bound");
    }
    assert_eq!(dest.try_push(0), Err(0), "the destination is full");
    dest
}

/// A deque source (`fifo` or LIFO) holding tasks 0 to `len - 1`.
fn deque_source(fifo: bool, len: u32) -> Worker<u32> {
    let source = if fifo {
        Worker::new_fifo()
    } else {
        Worker::new_lifo()
    };
    (0..len).for_each(|task| source.push(task));
    source
}

/// An injector holding tasks 0 to `len - 1`.
fn injector_source(len: u32) -> Injector<u32> {
    let injector = Injector::new();
    (0..len).for_each(|task| injector.push(task));
    injector
}

/// What the destination's owner pops, in order (emptying it).
fn drained(dest: &Worker<u32>) -> Vec<u32> {
    std::iter::from_fn(|| dest.pop()).collect()
}

/// The destination's own tasks, in the order its owner pops them.
fn own_tasks(fifo: bool, bound: usize) -> Vec<u32> {
    let mut own: Vec<u32> = (0..bound as u32).map(|task| 1000 + task).collect();
    if !fifo {
        own.reverse();
    }
    own
}

/// Each way to call a batch steal that returns `Steal<()>`, by name.
fn unit_batches<S>(
    steal_batch: impl Fn(&S, &Worker<u32>) -> Steal<()>,
    with_limit: impl Fn(&S, &Worker<u32>, usize) -> Steal<()>,
    source: &S,
    dest: &Worker<u32>,
) -> Vec<(String, Steal<()>)> {
    let mut results = vec![("steal_batch".to_string(), steal_batch(source, dest))];
    for limit in LIMITS {
        results.push((
            format!("steal_batch_with_limit({limit})"),
            with_limit(source, dest, limit),
        ));
    }
    results
}

/// From a deque with tasks into a full bounded destination, `steal_batch`
/// and `steal_batch_with_limit` (any limit) return `Success(())` and move
/// nothing: the source keeps every task, the destination its own.
#[test]
fn a_batch_from_a_deque_with_tasks_into_a_full_destination_is_success_and_moves_nothing() {
    for source_fifo in [false, true] {
        for dest_fifo in [false, true] {
            for bound in BOUNDS {
                let source = deque_source(source_fifo, 5);
                let stealer = source.stealer();
                let dest = full_destination(dest_fifo, bound);
                let results = unit_batches(
                    Stealer::steal_batch,
                    Stealer::steal_batch_with_limit,
                    &stealer,
                    &dest,
                );
                let case = format!(
                    "source {}, destination {} bounded to {bound}",
                    if source_fifo { "FIFO" } else { "LIFO" },
                    if dest_fifo { "FIFO" } else { "LIFO" },
                );
                for (method, result) in results {
                    assert_eq!(result, Steal::Success(()), "{case}: {method}");
                }
                assert_eq!(drained(&dest), own_tasks(dest_fifo, bound), "{case}");
                assert_eq!(source.len(), 5, "{case}: nothing left the source");
            }
        }
    }
}

/// The same from the injector: `Success(())`, nothing moved.
#[test]
fn a_batch_from_an_injector_with_tasks_into_a_full_destination_is_success_and_moves_nothing() {
    for dest_fifo in [false, true] {
        for bound in BOUNDS {
            let injector = injector_source(5);
            let dest = full_destination(dest_fifo, bound);
            let results = unit_batches(
                Injector::steal_batch,
                Injector::steal_batch_with_limit,
                &injector,
                &dest,
            );
            let case = format!(
                "injector, destination {} bounded to {bound}",
                if dest_fifo { "FIFO" } else { "LIFO" },
            );
            for (method, result) in results {
                assert_eq!(result, Steal::Success(()), "{case}: {method}");
            }
            assert_eq!(drained(&dest), own_tasks(dest_fifo, bound), "{case}");
            assert_eq!(injector.len(), 5, "{case}: nothing left the injector");
        }
    }
}

/// `steal_batch_and_pop` and `steal_batch_with_limit_and_pop` into a full
/// destination still hand one task to the caller (the source's oldest: a
/// batch of one) and move none into the destination, from both deque
/// flavours and from the injector.
#[test]
fn a_batch_and_pop_into_a_full_destination_returns_the_oldest_task_and_moves_nothing() {
    for dest_fifo in [false, true] {
        for bound in BOUNDS {
            for source_fifo in [None, Some(false), Some(true)] {
                for limit in [None, Some(1), Some(2), Some(usize::MAX)] {
                    let dest = full_destination(dest_fifo, bound);
                    let case = format!(
                        "source {source_fifo:?} (None: the injector), destination {} \
                         bounded to {bound}, limit {limit:?}",
                        if dest_fifo { "FIFO" } else { "LIFO" },
                    );
                    let (result, left) = match source_fifo {
                        Some(fifo) => {
                            let source = deque_source(fifo, 5);
                            let stealer = source.stealer();
                            let result = match limit {
                                None => stealer.steal_batch_and_pop(&dest),
                                Some(limit) => stealer.steal_batch_with_limit_and_pop(&dest, limit),
                            };
                            (result, source.len())
                        }
                        None => {
                            let injector = injector_source(5);
                            let result = match limit {
                                None => injector.steal_batch_and_pop(&dest),
                                Some(limit) => {
                                    injector.steal_batch_with_limit_and_pop(&dest, limit)
                                }
                            };
                            (result, injector.len())
                        }
                    };
                    assert_eq!(result, Steal::Success(0), "{case}");
                    assert_eq!(left, 4, "{case}: exactly one task left the source");
                    assert_eq!(drained(&dest), own_tasks(dest_fifo, bound), "{case}");
                }
            }
        }
    }
}

/// From an *empty* source every batch method returns `Empty`, full
/// destination or not: `Empty` is about the source alone.
#[test]
fn a_batch_from_an_empty_source_is_empty_whatever_the_destination() {
    for dest_fifo in [false, true] {
        for bound in BOUNDS {
            for full in [false, true] {
                let dest = if full {
                    full_destination(dest_fifo, bound)
                } else if dest_fifo {
                    Worker::new_fifo_bounded(bound)
                } else {
                    Worker::new_lifo_bounded(bound)
                };
                let case = format!(
                    "destination {} bounded to {bound}, full: {full}",
                    if dest_fifo { "FIFO" } else { "LIFO" },
                );
                for source_fifo in [false, true] {
                    let source = deque_source(source_fifo, 0);
                    let stealer = source.stealer();
                    for (method, result) in unit_batches(
                        Stealer::steal_batch,
                        Stealer::steal_batch_with_limit,
                        &stealer,
                        &dest,
                    ) {
                        assert_eq!(result, Steal::Empty, "{case}, deque: {method}");
                    }
                    assert_eq!(stealer.steal_batch_and_pop(&dest), Steal::Empty, "{case}");
                    assert_eq!(
                        stealer.steal_batch_with_limit_and_pop(&dest, 3),
                        Steal::Empty,
                        "{case}"
                    );
                }
                let injector = injector_source(0);
                for (method, result) in unit_batches(
                    Injector::steal_batch,
                    Injector::steal_batch_with_limit,
                    &injector,
                    &dest,
                ) {
                    assert_eq!(result, Steal::Empty, "{case}, injector: {method}");
                }
                assert_eq!(injector.steal_batch_and_pop(&dest), Steal::Empty, "{case}");
                assert_eq!(
                    injector.steal_batch_with_limit_and_pop(&dest, 3),
                    Steal::Empty,
                    "{case}"
                );
                let expected = if full {
                    own_tasks(dest_fifo, bound)
                } else {
                    Vec::new()
                };
                assert_eq!(drained(&dest), expected, "{case}");
            }
        }
    }
}

/// The crate docs' scheduler loop collects batch steals with `FromIterator`:
/// with its local worker full (bounded) and work in the injector and in the
/// other deques, the collected result is `Success`, never `Empty` ("no work,
/// park"); and after popping one local task there is room again and the
/// next batch moves tasks.
#[test]
fn a_scheduler_with_a_full_local_worker_does_not_read_no_work() {
    for local_fifo in [false, true] {
        let local = full_destination(local_fifo, 2);
        let injector = injector_source(3);
        let victims: Vec<Worker<u32>> = (0..3)
            .map(|index| deque_source(index % 2 == 0, 4))
            .collect();
        let stealers: Vec<Stealer<u32>> = victims.iter().map(Worker::stealer).collect();
        let found: Steal<()> = std::iter::once(injector.steal_batch(&local))
            .chain(stealers.iter().map(|stealer| stealer.steal_batch(&local)))
            .collect();
        assert_eq!(found, Steal::Success(()), "local worker FIFO: {local_fifo}");
        assert_eq!(local.len(), 2, "nothing moved into the full worker");
        assert_eq!(injector.len(), 3);
        assert!(victims.iter().all(|victim| victim.len() == 4));

        // One local pop makes room: the next batch moves one task.
        assert!(local.pop().is_some());
        assert_eq!(injector.steal_batch(&local), Steal::Success(()));
        assert_eq!(local.len(), 2);
        assert_eq!(injector.len(), 2);
    }
}
