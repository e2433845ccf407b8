//! The scenarios: small concurrent programs against the deque, each one
//! execution of a model. This file is compiled once per model checker (see
//! `on_loom.rs` and `on_shuttle.rs`), which provide `super::deque` (that
//! checker's build of the deque) and `super::thread`.
//!
//! Every scenario ends the same way: join every thread, drop every handle of
//! the deque (so that it drops the tasks left in it), and check the ledger
//! (`crate::ledger`): each task left the deque exactly once, no `Empty` while
//! a task was certainly there, no bounded push refused below the bound or
//! accepted above it. Loom adds its own checks: no `Arc` leaked (the deque's
//! shared state must be freed by the last handle), no deadlock.

use super::atomic::{fence, AtomicBool, AtomicUsize, Ordering};
use super::deque::{
    log_note, logged_events, set_event_log, Injector, Mutant, Pause, PauseHook, Steal, Stealer,
    Worker,
};
use super::{thread, Arc};
use crate::evidence::{self, Failure};
use crate::ledger::{self, Mark, Task};

/// One scenario of the suite.
#[derive(Clone, Copy, Debug)]
pub struct Scenario {
    /// Its name, as the test and the matrix print it.
    pub name: &'static str,
    /// Which scenario family (1 to 7, the deque's) it belongs to; 8 is the
    /// injector's, 9 the hazard registry's.
    pub family: u8,
    /// Threads in the model, the main thread (the owner) included.
    pub threads: usize,
    /// Loom's preemption bound: `None` explores every interleaving.
    pub preemption_bound: Option<usize>,
    /// One execution of the scenario against the deque weakened by a mutant
    /// (`None`: the correct deque).
    pub body: fn(Option<Mutant>),
}

impl Scenario {
    /// Whether this scenario runs the code that the mutant called
    /// `mutant` weakens. An
    /// injector mutant (`injector-…`) changes only the injector, and only
    /// the injector's scenarios (family 8) make one (`Queue::new`): anywhere
    /// else it would run the correct code once more, so the matrix and the
    /// fence lab skip those.
    pub fn reaches(&self, mutant: &str) -> bool {
        self.family == INJECTOR_FAMILY || !crate::is_injector_mutant(mutant)
    }
}

/// The family of the injector's scenarios.
pub const INJECTOR_FAMILY: u8 = 8;

/// The family of the hazard registry's scenarios: what the process around
/// the deque does between its threads (nested steals, threads that exit).
pub const REGISTRY_FAMILY: u8 = 9;

/// Every scenario, cheapest first, so that the mutation matrix finds most
/// kills early.
pub const ALL: &[Scenario] = &[
    Scenario {
        name: "prefilled_pop_pop_against_steal_steal",
        family: 1,
        threads: 2,
        preemption_bound: None,
        body: prefilled_pop_pop_against_steal_steal,
    },
    Scenario {
        name: "push_push_pop_pop_against_steal_steal",
        family: 1,
        threads: 2,
        preemption_bound: None,
        body: push_push_pop_pop_against_steal_steal,
    },
    Scenario {
        name: "one_task_pop_pop_against_a_steal",
        family: 1,
        threads: 2,
        preemption_bound: None,
        body: one_task_pop_pop_against_a_steal,
    },
    Scenario {
        name: "push_pop_around_empty_across_a_lap_against_a_steal",
        family: 1,
        threads: 2,
        preemption_bound: None,
        body: push_pop_around_empty_across_a_lap_against_a_steal,
    },
    Scenario {
        name: "push_pop_three_laps_reusing_a_buffer_against_a_steal",
        family: 1,
        threads: 2,
        preemption_bound: Some(3),
        body: push_pop_three_laps_reusing_a_buffer_against_a_steal,
    },
    Scenario {
        name: "grow_while_a_thief_steals",
        family: 3,
        threads: 2,
        preemption_bound: None,
        body: grow_while_a_thief_steals,
    },
    Scenario {
        name: "grow_while_a_thief_steals_twice",
        family: 3,
        threads: 2,
        preemption_bound: None,
        body: grow_while_a_thief_steals_twice,
    },
    Scenario {
        name: "shrink_and_retire_while_a_thief_steals",
        family: 4,
        threads: 2,
        preemption_bound: None,
        body: shrink_and_retire_while_a_thief_steals,
    },
    Scenario {
        name: "lifo_steal_batch_against_pop_pop",
        family: 5,
        threads: 2,
        preemption_bound: None,
        body: lifo_steal_batch_against_pop_pop,
    },
    Scenario {
        name: "fifo_steal_batch_and_pop_against_pop_pop",
        family: 5,
        threads: 2,
        preemption_bound: None,
        body: fifo_steal_batch_and_pop_against_pop_pop,
    },
    Scenario {
        name: "fifo_push_push_pop_pop_against_steal_steal",
        family: 6,
        threads: 2,
        preemption_bound: None,
        body: fifo_push_push_pop_pop_against_steal_steal,
    },
    Scenario {
        name: "bounded_try_push_at_the_full_edge_against_a_thief",
        family: 6,
        threads: 2,
        preemption_bound: None,
        body: bounded_try_push_at_the_full_edge_against_a_thief,
    },
    Scenario {
        name: "bounded_fifo_try_push_after_its_own_pop_against_a_thief",
        family: 6,
        threads: 2,
        preemption_bound: None,
        body: bounded_fifo_try_push_after_its_own_pop_against_a_thief,
    },
    Scenario {
        name: "drop_with_tasks_while_a_stealer_lives_on",
        family: 7,
        threads: 2,
        preemption_bound: None,
        body: drop_with_tasks_while_a_stealer_lives_on,
    },
    Scenario {
        name: "fifo_thief_that_sees_the_owners_pop_sees_the_push_before_it",
        family: 6,
        threads: 2,
        preemption_bound: None,
        body: fifo_thief_that_sees_the_owners_pop_sees_the_push_before_it,
    },
    Scenario {
        name: "fifo_steal_batch_against_push_push",
        family: 5,
        threads: 2,
        preemption_bound: None,
        body: fifo_steal_batch_against_push_push,
    },
    Scenario {
        name: "thief_of_the_destination_sees_the_batch",
        family: 5,
        threads: 2,
        preemption_bound: None,
        body: thief_of_the_destination_sees_the_batch,
    },
    Scenario {
        name: "thief_that_sees_another_thiefs_steal_sees_the_push_before_it",
        family: 2,
        threads: 3,
        preemption_bound: None,
        body: thief_that_sees_another_thiefs_steal_sees_the_push_before_it,
    },
    Scenario {
        name: "pop_pop_against_two_thieves",
        family: 2,
        threads: 3,
        preemption_bound: Some(4),
        body: pop_pop_against_two_thieves,
    },
    Scenario {
        name: "lifo_steal_batch_and_pop_against_pop_and_a_thief",
        family: 5,
        threads: 3,
        preemption_bound: Some(5),
        body: lifo_steal_batch_and_pop_against_pop_and_a_thief,
    },
    Scenario {
        name: "fifo_steal_batch_against_pop_and_a_thief",
        family: 5,
        threads: 3,
        preemption_bound: None,
        body: fifo_steal_batch_against_pop_and_a_thief,
    },
    Scenario {
        name: "fifo_pop_pop_against_two_thieves",
        family: 6,
        threads: 3,
        preemption_bound: Some(6),
        body: fifo_pop_pop_against_two_thieves,
    },
    Scenario {
        name: "injector_push_push_against_steal_steal",
        family: INJECTOR_FAMILY,
        threads: 2,
        preemption_bound: None,
        body: injector_push_push_against_steal_steal,
    },
    Scenario {
        name: "injector_steal_batch_into_a_lifo_worker_against_a_steal",
        family: INJECTOR_FAMILY,
        threads: 2,
        preemption_bound: None,
        body: injector_steal_batch_into_a_lifo_worker_against_a_steal,
    },
    Scenario {
        name: "injector_batch_of_two_marks_its_run_while_the_last_steal_walks_the_block",
        family: INJECTOR_FAMILY,
        threads: 2,
        preemption_bound: None,
        body: injector_batch_of_two_marks_its_run_while_the_last_steal_walks_the_block,
    },
    Scenario {
        name: "injector_steal_batch_and_pop_into_a_fifo_worker_against_a_push",
        family: INJECTOR_FAMILY,
        threads: 2,
        preemption_bound: None,
        body: injector_steal_batch_and_pop_into_a_fifo_worker_against_a_push,
    },
    Scenario {
        name: "injector_steals_across_a_block_end_free_the_old_block",
        family: INJECTOR_FAMILY,
        threads: 2,
        preemption_bound: None,
        body: injector_steals_across_a_block_end_free_the_old_block,
    },
    Scenario {
        name: "injector_dropped_with_tasks_in_two_blocks_while_a_thief_steals",
        family: INJECTOR_FAMILY,
        threads: 2,
        preemption_bound: None,
        body: injector_dropped_with_tasks_in_two_blocks_while_a_thief_steals,
    },
    Scenario {
        name: "injector_steal_that_misses_a_push_is_seen_by_the_pusher",
        family: INJECTOR_FAMILY,
        threads: 2,
        preemption_bound: None,
        body: injector_steal_that_misses_a_push_is_seen_by_the_pusher,
    },
    Scenario {
        name: "injector_len_and_is_empty_while_a_pusher_moves_the_tail",
        family: INJECTOR_FAMILY,
        threads: 2,
        preemption_bound: None,
        body: injector_len_and_is_empty_while_a_pusher_moves_the_tail,
    },
    Scenario {
        name: "injector_pushes_race_across_a_block_end",
        family: INJECTOR_FAMILY,
        threads: 3,
        preemption_bound: None,
        body: injector_pushes_race_across_a_block_end,
    },
    Scenario {
        name: "injector_two_thieves_against_a_push",
        family: INJECTOR_FAMILY,
        threads: 3,
        preemption_bound: None,
        body: injector_two_thieves_against_a_push,
    },
    Scenario {
        name: "injector_three_steals_of_one_block_race_its_free",
        family: INJECTOR_FAMILY,
        threads: 3,
        preemption_bound: None,
        body: injector_three_steals_of_one_block_race_its_free,
    },
    Scenario {
        name: "injector_thief_that_sees_another_thiefs_steal_sees_the_push_before_it",
        family: INJECTOR_FAMILY,
        threads: 3,
        preemption_bound: None,
        body: injector_thief_that_sees_another_thiefs_steal_sees_the_push_before_it,
    },
    Scenario {
        name: "injector_steal_completes_while_a_push_is_stopped_between_claim_and_write",
        family: 8,
        threads: 2,
        preemption_bound: None,
        body: injector_steal_completes_while_a_push_is_stopped_between_claim_and_write,
    },
    Scenario {
        name: "injector_push_completes_while_the_push_installing_a_block_is_stopped",
        family: 8,
        threads: 2,
        preemption_bound: None,
        body: injector_push_completes_while_the_push_installing_a_block_is_stopped,
    },
    Scenario {
        name: "injector_steal_completes_while_the_steal_moving_the_head_is_stopped",
        family: 8,
        threads: 2,
        preemption_bound: None,
        body: injector_steal_completes_while_the_steal_moving_the_head_is_stopped,
    },
    Scenario {
        name: "injector_steals_link_the_next_block_while_the_push_installing_it_is_stopped",
        family: 8,
        threads: 2,
        preemption_bound: None,
        body: injector_steals_link_the_next_block_while_the_push_installing_it_is_stopped,
    },
    Scenario {
        name: "injector_late_helper_gives_its_ticket_back_before_the_block_is_freed",
        family: 8,
        threads: 2,
        preemption_bound: Some(3),
        body: injector_late_helper_gives_its_ticket_back_before_the_block_is_freed,
    },
    Scenario {
        name: "lifo_steal_batch_with_limit_one_against_a_pop",
        family: 5,
        threads: 2,
        preemption_bound: None,
        body: lifo_steal_batch_with_limit_one_against_a_pop,
    },
    Scenario {
        name: "steal_nested_in_a_batch_keeps_the_outer_buffer_the_owner_retires",
        family: REGISTRY_FAMILY,
        threads: 2,
        preemption_bound: None,
        body: steal_nested_in_a_batch_keeps_the_outer_buffer_the_owner_retires,
    },
    Scenario {
        name: "owner_push_nested_in_the_allocation_of_a_grow",
        family: REGISTRY_FAMILY,
        threads: 2,
        preemption_bound: None,
        body: owner_push_nested_in_the_allocation_of_a_grow,
    },
    Scenario {
        name: "record_of_an_exited_thief_taken_by_the_next_while_the_owner_scans",
        family: REGISTRY_FAMILY,
        threads: 2,
        preemption_bound: Some(3),
        body: record_of_an_exited_thief_taken_by_the_next_while_the_owner_scans,
    },
    Scenario {
        name: "steal_from_a_thread_local_destructor_borrows_a_record",
        family: REGISTRY_FAMILY,
        threads: 2,
        preemption_bound: Some(3),
        body: steal_from_a_thread_local_destructor_borrows_a_record,
    },
    Scenario {
        name: "owner_changes_buffer_twice_while_two_thieves_hold_slots",
        family: REGISTRY_FAMILY,
        threads: 3,
        preemption_bound: Some(2),
        body: owner_changes_buffer_twice_while_two_thieves_hold_slots,
    },
    // -- The states no other scenario reaches: a bounded destination, a
    // destination moved to a new lap by `reserve` while it is stolen from,
    // a shrink against a batch steal, a FIFO worker that shrinks. Each
    // asserts that it reaches its state.
    Scenario {
        name: "batch_into_a_bounded_destination_takes_only_the_room_it_has",
        family: 5,
        threads: 2,
        preemption_bound: None,
        body: batch_into_a_bounded_destination_takes_only_the_room_it_has,
    },
    Scenario {
        name: "reserve_moves_the_destination_to_a_new_lap_while_its_thief_steals",
        family: 5,
        threads: 2,
        // Exhaustively, over 645,000 interleavings in 150 s without
        // finishing; 6 preemptions: 88,116 in 5 s of CPU (release), the
        // most that keeps it cheap in CI (VERIFYING.md has the counts
        // beyond).
        preemption_bound: Some(6),
        body: reserve_moves_the_destination_to_a_new_lap_while_its_thief_steals,
    },
    Scenario {
        name: "shrink_while_a_thief_steals_a_batch_task_by_task",
        family: 4,
        threads: 2,
        preemption_bound: None,
        body: shrink_while_a_thief_steals_a_batch_task_by_task,
    },
    Scenario {
        name: "fifo_shrink_and_retire_while_a_thief_steals",
        family: 4,
        threads: 2,
        preemption_bound: None,
        body: fifo_shrink_and_retire_while_a_thief_steals,
    },
    // -- End of the block.
    Scenario {
        name: "lifo_steal_batch_while_the_owner_pops_shrinks_and_pushes",
        family: 5,
        threads: 2,
        preemption_bound: Some(4),
        body: lifo_steal_batch_while_the_owner_pops_shrinks_and_pushes,
    },
];

/// Looks a scenario up by name.
pub fn by_name(name: &str) -> Option<&'static Scenario> {
    ALL.iter().find(|scenario| scenario.name == name)
}

// ---------------------------------------------------------------------------
// Handles that keep the ledger and the deque's event log up to date.

/// Which deque, which flavour, which size.
struct Shape {
    fifo: bool,
    capacity: usize,
    bounded: bool,
}

const LIFO: Shape = Shape {
    fifo: false,
    capacity: 4,
    bounded: false,
};
/// A LIFO deque of one slot: a push past its lap moves it to a new buffer.
const LIFO_ONE_SLOT: Shape = Shape {
    fifo: false,
    capacity: 1,
    bounded: false,
};
const FIFO: Shape = Shape {
    fifo: true,
    capacity: 4,
    bounded: false,
};

/// The owner's handle: the main thread of every scenario.
struct Owner {
    worker: Worker<Task>,
}

impl Owner {
    fn new(shape: Shape, mutant: Option<Mutant>) -> Owner {
        let worker = Worker::new_mutant(shape.fifo, shape.capacity, shape.bounded, mutant);
        if evidence::tracing() {
            set_event_log(true);
        }
        Owner { worker }
    }

    fn note(&self, note: impl FnOnce() -> String) {
        if evidence::tracing() {
            log_note(note());
        }
    }

    fn push(&self, id: u64) {
        self.note(|| format!("owner calls push(task {id})"));
        self.worker.push(Task(id));
        ledger::pushed(id);
        self.note(|| "owner's push returns".into());
    }

    fn try_push(&self, id: u64, bound: usize) {
        self.note(|| format!("owner calls try_push(task {id})"));
        let operation = ledger::begin("owner", "try_push", None);
        let result = self.worker.try_push(Task(id));
        self.note(|| {
            format!(
                "owner's try_push returns {}",
                if result.is_ok() { "Ok" } else { "Err (full)" }
            )
        });
        ledger::push_attempted(operation, id, bound, result.err());
    }

    fn pop(&self) {
        self.note(|| "owner calls pop()".into());
        let operation = ledger::begin("owner", "pop", None);
        match self.worker.pop() {
            Some(task) => {
                self.note(|| format!("owner's pop returns Some({task:?})"));
                ledger::took(&operation, task);
            }
            None => {
                self.note(|| "owner's pop returns None".into());
                ledger::returned_empty(operation);
            }
        }
    }

    fn stealer(&self, name: &'static str) -> Thief {
        Thief {
            name,
            stealer: self.worker.stealer(),
            known_pushed_before: ledger::now(),
        }
    }

    /// Takes the event log, drops the owner's handle, and (once the caller
    /// has joined every thread) checks the ledger.
    fn finish(self, threads: Vec<thread::JoinHandle<()>>) {
        for thread in threads {
            thread.join().unwrap();
        }
        let trace = logged_events();
        drop(self);
        conclude(trace);
    }
}

/// Checks the ledger of the finished execution; on a violation, keeps the
/// evidence and fails the execution.
fn conclude(trace: Vec<String>) {
    if let Err(violation) = ledger::verify() {
        evidence::record_failure(Failure {
            violation: violation.0.clone(),
            trace,
            found_by_ledger: true,
        });
        panic!("violation: {violation}");
    }
}

/// A thief's handle. It knows the pushes made before it was created (its
/// thread is spawned after that, so they happen before its operations).
struct Thief {
    name: &'static str,
    stealer: Stealer<Task>,
    known_pushed_before: Mark,
}

impl Thief {
    fn note(&self, note: impl FnOnce() -> String) {
        if evidence::tracing() {
            log_note(note());
        }
    }

    fn steal(&self) {
        self.note(|| format!("{} calls steal()", self.name));
        let operation = ledger::begin(self.name, "steal", Some(self.known_pushed_before));
        match self.stealer.steal() {
            Steal::Success(task) => {
                self.note(|| format!("{}'s steal returns Success({task:?})", self.name));
                ledger::took(&operation, task);
            }
            Steal::Empty => {
                self.note(|| format!("{}'s steal returns Empty", self.name));
                ledger::returned_empty(operation);
            }
            Steal::Retry => self.note(|| format!("{}'s steal returns Retry", self.name)),
        }
    }

    /// A destination worker for batch steals, with the same mutant.
    fn destination(&self, mutant: Option<Mutant>, fifo: bool) -> Worker<Task> {
        Worker::new_mutant(fifo, 4, false, mutant)
    }

    /// Moves the tasks of a batch out of `destination`, recording them as
    /// taken by the batch steal.
    fn drain(&self, operation: &ledger::Operation, destination: &Worker<Task>) {
        while let Some(task) = destination.pop() {
            self.note(|| format!("{} finds {task:?} in its own worker", self.name));
            ledger::took(operation, task);
        }
    }

    fn steal_batch(&self, mutant: Option<Mutant>, fifo: bool) {
        self.steal_batch_with_limit(mutant, fifo, super::deque::DEFAULT_BATCH_LIMIT);
    }

    fn steal_batch_with_limit(&self, mutant: Option<Mutant>, fifo: bool, limit: usize) {
        let destination = self.destination(mutant, fifo);
        self.steal_batch_into(&destination, limit);
    }

    /// A batch steal into `destination`, which is then drained.
    fn steal_batch_into(&self, destination: &Worker<Task>, limit: usize) {
        let operation = self.batch_into(destination, limit);
        self.drain(&operation, destination);
    }

    /// A batch steal into `destination`, left there: the caller drains it.
    fn batch_into(&self, destination: &Worker<Task>, limit: usize) -> ledger::Operation {
        if limit == super::deque::DEFAULT_BATCH_LIMIT {
            self.note(|| format!("{} calls steal_batch()", self.name));
        } else {
            self.note(|| format!("{} calls steal_batch_with_limit({limit})", self.name));
        }
        let operation = ledger::begin_batch(
            self.name,
            "steal_batch",
            Some(self.known_pushed_before),
            limit,
        );
        match self.stealer.steal_batch_with_limit(destination, limit) {
            Steal::Success(()) => {
                self.note(|| format!("{}'s steal_batch returns Success", self.name))
            }
            Steal::Empty => {
                self.note(|| format!("{}'s steal_batch returns Empty", self.name));
                ledger::returned_empty(operation.clone());
            }
            Steal::Retry => self.note(|| format!("{}'s steal_batch returns Retry", self.name)),
        }
        operation
    }

    fn steal_batch_and_pop(&self, mutant: Option<Mutant>, fifo: bool) {
        let destination = self.destination(mutant, fifo);
        self.note(|| format!("{} calls steal_batch_and_pop()", self.name));
        let operation = ledger::begin_batch(
            self.name,
            "steal_batch_and_pop",
            Some(self.known_pushed_before),
            super::deque::DEFAULT_BATCH_LIMIT,
        );
        match self.stealer.steal_batch_and_pop(&destination) {
            Steal::Success(task) => {
                self.note(|| {
                    format!(
                        "{}'s steal_batch_and_pop returns Success({task:?})",
                        self.name
                    )
                });
                ledger::took(&operation, task);
            }
            Steal::Empty => {
                self.note(|| format!("{}'s steal_batch_and_pop returns Empty", self.name));
                ledger::returned_empty(operation.clone());
            }
            Steal::Retry => {
                self.note(|| format!("{}'s steal_batch_and_pop returns Retry", self.name))
            }
        }
        self.drain(&operation, &destination);
    }

    /// Runs `work` on a new thread of the model.
    fn spawn(self, work: impl FnOnce(&Thief) + Send + 'static) -> thread::JoinHandle<()> {
        thread::spawn(move || {
            self.note(|| format!("{} starts", self.name));
            work(&self);
        })
    }
}

// ---------------------------------------------------------------------------
// Family 1: the last-element race, both ways.

/// The owner holds tasks 1 and 2 before the thief starts; it pops twice
/// while the thief steals twice. Every way to share two tasks, and the
/// thief knows both were pushed, so a wrong `Empty` is caught.
fn prefilled_pop_pop_against_steal_steal(mutant: Option<Mutant>) {
    let owner = Owner::new(LIFO, mutant);
    owner.push(1);
    owner.push(2);
    let thief = owner.stealer("thief 1").spawn(|thief| {
        thief.steal();
        thief.steal();
    });
    owner.pop();
    owner.pop();
    owner.finish(vec![thief]);
}

/// The pushes race the steals too (push's release fence, the thief's
/// acquire of bottom).
fn push_push_pop_pop_against_steal_steal(mutant: Option<Mutant>) {
    let owner = Owner::new(LIFO, mutant);
    let thief = owner.stealer("thief 1").spawn(|thief| {
        thief.steal();
        thief.steal();
    });
    owner.push(1);
    owner.push(2);
    owner.pop();
    owner.pop();
    owner.finish(vec![thief]);
}

/// The owner's fast paths (proofs-notes/fast-paths.md): one task, which the
/// owner's CAS-only pop and a thief's steal race for; the owner's second
/// pop then finds the deque empty at its look (or, if the thief has not
/// come yet, the owner's first pop won and the thief finds it empty).
fn one_task_pop_pop_against_a_steal(mutant: Option<Mutant>) {
    let owner = Owner::new(LIFO, mutant);
    owner.push(1);
    let thief = owner.stealer("thief 1").spawn(Thief::steal);
    owner.pop();
    owner.pop();
    owner.finish(vec![thief]);
}

/// A join in a flat loop: push a task and pop it back, twice, on a buffer
/// of one slot, so that the second push moves to a new lap (and retires the
/// old buffer) after a CAS-only pop left `bottom` where it was; a thief that
/// started before any push steals once, racing either CAS-only pop, the slot
/// the owner writes after it, and the retire. (With a thief that steals
/// twice, loom explores 1,148,603 interleavings in 105 s.)
fn push_pop_around_empty_across_a_lap_against_a_steal(mutant: Option<Mutant>) {
    let owner = Owner::new(LIFO_ONE_SLOT, mutant);
    let thief = owner.stealer("thief 1").spawn(Thief::steal);
    for task in 1..=2 {
        owner.push(task);
        owner.pop();
    }
    owner.finish(vec![thief]);
}

/// As above, three times, under a preemption bound (exhaustively it ran
/// for over two minutes without finishing): the thief's steal may read the
/// first buffer's slot while the second push retires that buffer (kept as a
/// spare only if the thief does not hold it), and the third push reuses it
/// (proofs-notes/reclamation.md#reuse). A planted bug that makes a held
/// buffer a spare is a causality violation here at interleaving 1,747.
fn push_pop_three_laps_reusing_a_buffer_against_a_steal(mutant: Option<Mutant>) {
    let owner = Owner::new(LIFO_ONE_SLOT, mutant);
    owner.push(1);
    let thief = owner.stealer("thief 1").spawn(Thief::steal);
    owner.pop();
    for task in 2..=3 {
        owner.push(task);
        owner.pop();
    }
    owner.finish(vec![thief]);
}

// ---------------------------------------------------------------------------
// Family 2: two thieves, where the steal fence matters.

/// Tasks 1 and 2; the owner pops twice while two thieves steal once each.
fn pop_pop_against_two_thieves(mutant: Option<Mutant>) {
    let owner = Owner::new(LIFO, mutant);
    owner.push(1);
    owner.push(2);
    let first = owner.stealer("thief 1").spawn(Thief::steal);
    let second = owner.stealer("thief 2").spawn(Thief::steal);
    owner.pop();
    owner.pop();
    owner.finish(vec![first, second]);
}

/// Write-to-read causality through a thief's CAS: thief 1 starts knowing
/// task 1; the owner pushes task 2 and starts thief 2, which steals task 1.
/// If thief 1 then reads the `top` thief 2's CAS wrote, it must also see
/// task 2 (the CAS's release, thief 1's fence): the deque was never empty
/// since thief 1 started, and `Empty` would be a lie. (The ledger's `Empty`
/// check follows exactly this chain: task 1 known, its remover knew task 2.)
fn thief_that_sees_another_thiefs_steal_sees_the_push_before_it(mutant: Option<Mutant>) {
    let owner = Owner::new(LIFO, mutant);
    owner.push(1);
    let knows_task_1 = owner.stealer("thief 1").spawn(Thief::steal);
    owner.push(2);
    let knows_both = owner.stealer("thief 2").spawn(Thief::steal);
    owner.finish(vec![knows_task_1, knows_both]);
}

// ---------------------------------------------------------------------------
// Family 3: growing while a thief steals.

/// Capacity 2: the third push grows the buffer (copy, publish) while the
/// thief steals; then the owner takes twice. A thief that sees the new
/// buffer without its copied slots reads zeroes (task 0).
fn grow_while_a_thief_steals(mutant: Option<Mutant>) {
    let owner = Owner::new(
        Shape {
            fifo: false,
            capacity: 2,
            bounded: false,
        },
        mutant,
    );
    let thief = owner.stealer("thief 1").spawn(Thief::steal);
    owner.push(1);
    owner.push(2);
    owner.push(3);
    owner.pop();
    owner.pop();
    owner.finish(vec![thief]);
}

/// Capacity 1: the second push grows the buffer while a thief steals twice.
/// Its first steal may read the old buffer and its second announce the new
/// one before the owner scans the hazard slots to free the old buffer; the
/// free must still come after the first steal's read (the announcement is a
/// release store).
fn grow_while_a_thief_steals_twice(mutant: Option<Mutant>) {
    let owner = Owner::new(LIFO_ONE_SLOT, mutant);
    let thief = owner.stealer("thief 1").spawn(|thief| {
        thief.steal();
        thief.steal();
    });
    owner.push(1);
    owner.push(2);
    owner.finish(vec![thief]);
}

// ---------------------------------------------------------------------------
// Family 4: shrinking, and retiring the old buffer, while a thief steals.

/// Before the thief starts, the owner grows a capacity-1 deque to 8 slots
/// and pops it down to one task with the shrink credit one short (the
/// hysteresis needs `capacity / 2` pops under a quarter full). Then the
/// owner's push and pop trigger the shrink (copy task 1 into a 4-slot buffer,
/// publish it, retire the old one) while the thief steals task 1, possibly
/// through the old buffer: the shape of crossbeam-deque's CVE-2021-32810.
fn shrink_and_retire_while_a_thief_steals(mutant: Option<Mutant>) {
    let owner = Owner::new(LIFO_ONE_SLOT, mutant);
    for id in 1..=5 {
        owner.push(id);
    }
    for _ in 0..4 {
        owner.pop(); // 5, 4, 3, 2: one task left, shrink credit 1
    }
    owner.push(6);
    owner.pop();
    owner.push(7);
    owner.pop(); // shrink credit 3 of 4
    let thief = owner.stealer("thief 1").spawn(Thief::steal);
    owner.push(8);
    owner.pop(); // the shrink, unless the thief emptied the deque first
    owner.pop();
    owner.finish(vec![thief]);
}

// ---------------------------------------------------------------------------
// Family 5: batch steals.

/// A LIFO owner with tasks 1 to 3 pops twice while a thief steals a batch
/// (each task of a LIFO batch is claimed by its own CAS).
fn lifo_steal_batch_against_pop_pop(mutant: Option<Mutant>) {
    let owner = Owner::new(LIFO, mutant);
    for id in 1..=3 {
        owner.push(id);
    }
    let thief = owner
        .stealer("thief 1")
        .spawn(move |thief| thief.steal_batch(mutant, false));
    owner.pop();
    owner.pop();
    owner.finish(vec![thief]);
}

/// A thief steals a batch with limit 1 from a LIFO owner holding tasks 1 to
/// 3 while the owner pops once: the ledger checks that the batch took at
/// most one task (the limit), as well as the usual exactly-once rules.
fn lifo_steal_batch_with_limit_one_against_a_pop(mutant: Option<Mutant>) {
    let owner = Owner::new(LIFO, mutant);
    for id in 1..=3 {
        owner.push(id);
    }
    let thief = owner
        .stealer("thief 1")
        .spawn(move |thief| thief.steal_batch_with_limit(mutant, false, 1));
    owner.pop();
    owner.finish(vec![thief]);
}

/// A FIFO owner with tasks 1 to 3 pops twice while a thief steals a batch
/// and takes its first task (one CAS claims the whole FIFO batch).
fn fifo_steal_batch_and_pop_against_pop_pop(mutant: Option<Mutant>) {
    let owner = Owner::new(FIFO, mutant);
    for id in 1..=3 {
        owner.push(id);
    }
    let thief = owner
        .stealer("thief 1")
        .spawn(move |thief| thief.steal_batch_and_pop(mutant, true));
    owner.pop();
    owner.pop();
    owner.finish(vec![thief]);
}

/// A FIFO owner holds task 1 when a thief starts a batch steal, then pushes
/// tasks 2 and 3. A batch whose load of `bottom` after the fence sees the new
/// pushes copies task 2's slot too, which only that load's acquire
/// publishes: the first look's load of `bottom`, which the fence after it
/// makes an acquire, may have seen task 1 alone
/// (proofs-notes/fast-paths.md#the-thiefs-empty-look).
fn fifo_steal_batch_against_push_push(mutant: Option<Mutant>) {
    let owner = Owner::new(FIFO, mutant);
    owner.push(1);
    let thief = owner
        .stealer("thief 1")
        .spawn(move |thief| thief.steal_batch(mutant, true));
    owner.push(2);
    owner.push(3);
    owner.finish(vec![thief]);
}

/// The owner steals a batch from a second deque (filled by itself) into
/// its own, while a thief steals from the owner's deque: the batch publishes
/// the owner's new `bottom` as a push does, so a thief that sees it sees the
/// copied task.
fn thief_of_the_destination_sees_the_batch(mutant: Option<Mutant>) {
    let owner = Owner::new(LIFO, mutant);
    // Created before any push: it knows no task, so an `Empty` is allowed.
    let thief = owner.stealer("thief 1");
    let victim = Owner::new(LIFO, mutant);
    for id in 1..=2 {
        victim.push(id);
    }
    let thief = thief.spawn(Thief::steal);
    let batch = victim.stealer("owner");
    owner.note(|| "owner calls steal_batch() from a second deque into its own".into());
    let operation = ledger::begin("owner", "steal_batch", Some(batch.known_pushed_before));
    if batch.stealer.steal_batch(&owner.worker).is_empty() {
        ledger::returned_empty(operation);
    }
    drop(batch);
    drop(victim); // drops what the batch left behind
    owner.finish(vec![thief]);
}

/// LIFO, three threads: a batch-and-pop thief, a plain thief, one pop.
fn lifo_steal_batch_and_pop_against_pop_and_a_thief(mutant: Option<Mutant>) {
    let owner = Owner::new(LIFO, mutant);
    for id in 1..=3 {
        owner.push(id);
    }
    let batch = owner
        .stealer("thief 1")
        .spawn(move |thief| thief.steal_batch_and_pop(mutant, false));
    let single = owner.stealer("thief 2").spawn(Thief::steal);
    owner.pop();
    owner.finish(vec![batch, single]);
}

/// FIFO, three threads: a batch thief, a plain thief, one pop.
fn fifo_steal_batch_against_pop_and_a_thief(mutant: Option<Mutant>) {
    let owner = Owner::new(FIFO, mutant);
    for id in 1..=3 {
        owner.push(id);
    }
    let batch = owner
        .stealer("thief 1")
        .spawn(move |thief| thief.steal_batch(mutant, true));
    let single = owner.stealer("thief 2").spawn(Thief::steal);
    owner.pop();
    owner.finish(vec![batch, single]);
}

// ---------------------------------------------------------------------------
// Family 6: the FIFO owner, and the bounded worker's full edge.

/// The FIFO owner's pops take the oldest task with a CAS, racing the thief's.
fn fifo_push_push_pop_pop_against_steal_steal(mutant: Option<Mutant>) {
    let owner = Owner::new(FIFO, mutant);
    let thief = owner.stealer("thief 1").spawn(|thief| {
        thief.steal();
        thief.steal();
    });
    owner.push(1);
    owner.push(2);
    owner.pop();
    owner.pop();
    owner.finish(vec![thief]);
}

/// Write-to-read causality through the FIFO owner's CAS: the thief starts
/// knowing task 1; the owner pushes task 2 and pops task 1 with its CAS. A
/// thief that reads the `top` of that CAS must also see task 2.
fn fifo_thief_that_sees_the_owners_pop_sees_the_push_before_it(mutant: Option<Mutant>) {
    let owner = Owner::new(FIFO, mutant);
    owner.push(1);
    let thief = owner.stealer("thief 1").spawn(Thief::steal);
    owner.push(2);
    owner.pop();
    owner.finish(vec![thief]);
}

/// FIFO, three threads: tasks 1 and 2, two pops, two thieves.
fn fifo_pop_pop_against_two_thieves(mutant: Option<Mutant>) {
    let owner = Owner::new(FIFO, mutant);
    owner.push(1);
    owner.push(2);
    let first = owner.stealer("thief 1").spawn(Thief::steal);
    let second = owner.stealer("thief 2").spawn(Thief::steal);
    owner.pop();
    owner.pop();
    owner.finish(vec![first, second]);
}

/// A LIFO worker bounded to 2 holds tasks 1 and 2 (full) when a thief
/// starts stealing; the owner's `try_push(3)` is refused or accepted
/// depending on whether it sees the steal, and must be neither refused by a
/// deque with room nor accepted by a full one. Then the owner pops twice.
fn bounded_try_push_at_the_full_edge_against_a_thief(mutant: Option<Mutant>) {
    let owner = Owner::new(
        Shape {
            fifo: false,
            capacity: 2,
            bounded: true,
        },
        mutant,
    );
    owner.try_push(1, 2);
    owner.try_push(2, 2);
    let thief = owner.stealer("thief 1").spawn(Thief::steal);
    owner.try_push(3, 2);
    owner.pop();
    owner.pop();
    owner.finish(vec![thief]);
}

/// A FIFO worker bounded to 2 holds tasks 1 and 2 (full) when a thief
/// starts stealing; the owner pops one task, so its `try_push(3)` must be
/// accepted whatever the thief did. The push finds that room only by loading
/// `top` again: the `top` it saw last, before its own pop, still shows a
/// full worker (proofs-notes/fast-paths.md#the-push-without-top).
fn bounded_fifo_try_push_after_its_own_pop_against_a_thief(mutant: Option<Mutant>) {
    let owner = Owner::new(
        Shape {
            fifo: true,
            capacity: 2,
            bounded: true,
        },
        mutant,
    );
    owner.try_push(1, 2);
    owner.try_push(2, 2);
    let thief = owner.stealer("thief 1").spawn(Thief::steal);
    owner.pop();
    owner.try_push(3, 2);
    owner.pop();
    owner.finish(vec![thief]);
}

// ---------------------------------------------------------------------------
// Family 7: dropping a deque that still holds tasks.

/// The owner pops one task and drops its worker with the others still in
/// it, while a thief, on another thread, steals twice and then drops the last
/// stealer. Whichever handle goes last drops the remaining tasks, each
/// exactly once, and frees the shared state (loom reports a leaked `Arc`).
fn drop_with_tasks_while_a_stealer_lives_on(mutant: Option<Mutant>) {
    let owner = Owner::new(LIFO, mutant);
    for id in 1..=3 {
        owner.push(id);
    }
    let thief = owner.stealer("thief 1").spawn(|thief| {
        thief.steal();
        thief.steal();
    });
    owner.pop();
    let trace = logged_events();
    drop(owner);
    thief.join().unwrap();
    conclude(trace);
}

// ---------------------------------------------------------------------------
// Family 8: the injector (a FIFO queue every thread pushes to and steals
// from). In the model builds a block holds 3 tasks, so a few pushes reach a
// block end, where the queue allocates (the push that claims a block's last
// slot installs the next block) and frees (the reader of a block's last slot
// frees it, or hands the free to a slot still being read).

/// A thread's handle on the injector of a scenario. It knows the pushes
/// recorded before it was made: every handle is made on the main thread
/// before any thread is spawned, so those pushes happen before its
/// operations. The main thread's own handle also knows its own later pushes.
struct Queue {
    name: &'static str,
    injector: Arc<Injector<Task>>,
    known_pushed_before: std::cell::Cell<Mark>,
}

impl Queue {
    fn new(mutant: Option<Mutant>) -> Queue {
        Queue::main(Injector::new_mutant(mutant))
    }

    /// A queue whose operations call `hook` at their pause points.
    fn pausing(mutant: Option<Mutant>, hook: PauseHook) -> Queue {
        Queue::main(Injector::new_pausing(mutant, hook))
    }

    fn main(injector: Injector<Task>) -> Queue {
        if evidence::tracing() {
            set_event_log(true);
        }
        Queue {
            name: "main",
            injector: Arc::new(injector),
            known_pushed_before: std::cell::Cell::new(ledger::now()),
        }
    }

    fn note(&self, note: impl FnOnce() -> String) {
        if evidence::tracing() {
            log_note(note());
        }
    }

    /// The event log so far.
    fn trace(&self) -> Vec<String> {
        logged_events()
    }

    fn handle(&self, name: &'static str) -> Queue {
        Queue {
            name,
            injector: Arc::clone(&self.injector),
            known_pushed_before: std::cell::Cell::new(ledger::now()),
        }
    }

    fn push(&self, id: u64) {
        self.note(|| format!("{} calls push(task {id})", self.name));
        self.injector.push(Task(id));
        ledger::pushed_by(id, self.name);
        self.note(|| format!("{}'s push returns", self.name));
        if self.name == "main" {
            self.known_pushed_before.set(ledger::now());
        }
    }

    fn begin(&self, what: &'static str) -> ledger::Operation {
        ledger::begin_in_queue_order(self.name, what, Some(self.known_pushed_before.get()))
    }

    fn steal(&self) -> bool {
        self.note(|| format!("{} calls steal()", self.name));
        let operation = self.begin("steal");
        match self.injector.steal() {
            Steal::Success(task) => {
                self.note(|| format!("{}'s steal returns Success({task:?})", self.name));
                ledger::took(&operation, task);
                true
            }
            Steal::Empty => {
                self.note(|| format!("{}'s steal returns Empty", self.name));
                ledger::returned_empty(operation);
                false
            }
            Steal::Retry => {
                self.note(|| format!("{}'s steal returns Retry", self.name));
                false
            }
        }
    }

    fn steal_batch(&self, mutant: Option<Mutant>, fifo: bool) {
        self.steal_batch_with_limit(mutant, fifo, super::deque::DEFAULT_BATCH_LIMIT);
    }

    fn steal_batch_with_limit(&self, mutant: Option<Mutant>, fifo: bool, limit: usize) {
        let destination = Worker::new_mutant(fifo, 4, false, mutant);
        if limit == super::deque::DEFAULT_BATCH_LIMIT {
            self.note(|| format!("{} calls steal_batch()", self.name));
        } else {
            self.note(|| format!("{} calls steal_batch_with_limit({limit})", self.name));
        }
        let operation = self.begin("steal_batch");
        let result = self.injector.steal_batch_with_limit(&destination, limit);
        self.note(|| format!("{}'s steal_batch returns {result:?}", self.name));
        if result == Steal::Empty {
            ledger::returned_empty(operation.clone());
        }
        while let Some(task) = destination.pop() {
            self.note(|| format!("{} finds {task:?} in its own worker", self.name));
            ledger::took(&operation, task);
        }
    }

    fn steal_batch_and_pop(&self, mutant: Option<Mutant>, fifo: bool) {
        let destination = Worker::new_mutant(fifo, 4, false, mutant);
        self.note(|| format!("{} calls steal_batch_and_pop()", self.name));
        let operation = self.begin("steal_batch_and_pop");
        let result = self.injector.steal_batch_and_pop(&destination);
        self.note(|| format!("{}'s steal_batch_and_pop returns {result:?}", self.name));
        match result {
            Steal::Success(task) => ledger::took(&operation, task),
            Steal::Empty => ledger::returned_empty(operation.clone()),
            Steal::Retry => {}
        }
        while let Some(task) = destination.pop() {
            self.note(|| format!("{} finds {task:?} in its own worker", self.name));
            ledger::took(&operation, task);
        }
    }

    fn spawn(self, work: impl FnOnce(&Queue) + Send + 'static) -> thread::JoinHandle<()> {
        thread::spawn(move || work(&self))
    }

    /// Joins the threads, drops the main handle (the last one: the queue
    /// drops the tasks left in it) and checks the ledger.
    fn finish(self, threads: Vec<thread::JoinHandle<()>>) {
        for thread in threads {
            thread.join().unwrap();
        }
        let trace = self.trace();
        drop(self);
        conclude(trace);
    }
}

/// Two pushes race two steals; the thief knows neither push.
fn injector_push_push_against_steal_steal(mutant: Option<Mutant>) {
    let main = Queue::new(mutant);
    let thief = main.handle("thief 1").spawn(|thief| {
        thief.steal();
        thief.steal();
    });
    main.push(1);
    main.push(2);
    main.finish(vec![thief]);
}

/// A batch into a LIFO worker (moved newest first, so that the worker pops
/// the oldest first) races a single steal.
fn injector_steal_batch_into_a_lifo_worker_against_a_steal(mutant: Option<Mutant>) {
    let main = Queue::new(mutant);
    for id in 1..=3 {
        main.push(id);
    }
    let thief = main
        .handle("thief 1")
        .spawn(move |thief| thief.steal_batch(mutant, false));
    main.steal();
    main.finish(vec![thief]);
}

/// A batch of the block's first two tasks races the steal of its last: if
/// the steal claims the last slot while the batch is still marking its run
/// read, the steal's walk towards the block's free must meet the run's top
/// slot unmarked and hand the free over, or meet every slot of the run
/// marked. A block that is never freed is a leak loom reports. (The main
/// thread tries twice: loom then also explores its steal after the batch's
/// claim.)
fn injector_batch_of_two_marks_its_run_while_the_last_steal_walks_the_block(
    mutant: Option<Mutant>,
) {
    let main = Queue::new(mutant);
    for id in 1..=3 {
        main.push(id);
    }
    let thief = main
        .handle("thief 1")
        .spawn(move |thief| thief.steal_batch_with_limit(mutant, true, 2));
    // A second try if the first lost its claim to the batch.
    if !main.steal() {
        main.steal();
    }
    main.finish(vec![thief]);
}

/// A batch-and-pop into a FIFO worker races a push at the end of the block
/// (the push that installs the next block).
fn injector_steal_batch_and_pop_into_a_fifo_worker_against_a_push(mutant: Option<Mutant>) {
    let main = Queue::new(mutant);
    main.push(1);
    main.push(2);
    let thief = main
        .handle("thief 1")
        .spawn(move |thief| thief.steal_batch_and_pop(mutant, true));
    main.push(3);
    main.finish(vec![thief]);
}

/// Tasks 1 to 3 fill the first block, task 4 starts the second. The thief
/// and the main thread steal twice each: whoever takes task 3 moves the head
/// to the second block and frees the first, possibly while the other is
/// still reading task 1 or 2 of it (the free is then handed to that reader).
fn injector_steals_across_a_block_end_free_the_old_block(mutant: Option<Mutant>) {
    let main = Queue::new(mutant);
    for id in 1..=4 {
        main.push(id);
    }
    let thief = main.handle("thief 1").spawn(|thief| {
        thief.steal();
        thief.steal();
    });
    main.steal();
    main.steal();
    main.finish(vec![thief]);
}

/// The main thread drops its handle with tasks in two blocks while the thief
/// steals twice and drops the last handle, or the other way round: whoever
/// goes last drops the tasks left, each exactly once, and frees every block
/// (loom reports a leaked `Arc`; miri, on the std build, a leaked block).
fn injector_dropped_with_tasks_in_two_blocks_while_a_thief_steals(mutant: Option<Mutant>) {
    let main = Queue::new(mutant);
    for id in 1..=5 {
        main.push(id);
    }
    let thief = main.handle("thief 1").spawn(|thief| {
        thief.steal();
        thief.steal();
    });
    main.steal();
    let trace = main.trace();
    drop(main);
    thief.join().unwrap();
    conclude(trace);
}

/// A client's store-buffering handshake (a scheduler's "push, then look for
/// sleepers" against "announce sleep, then look for work"): the pusher pushes
/// and then, behind a SeqCst fence, reads a flag; the thief sets the flag and
/// steals. They cannot both miss each other: if the pusher read no flag, the
/// steal must find the task (the steal's SeqCst fence).
fn injector_steal_that_misses_a_push_is_seen_by_the_pusher(mutant: Option<Mutant>) {
    let main = Queue::new(mutant);
    let flag = Arc::new(AtomicBool::new(false));
    let found = Arc::new(AtomicBool::new(false));
    let (thief_flag, thief_found) = (Arc::clone(&flag), Arc::clone(&found));
    let thief = main.handle("thief 1").spawn(move |thief| {
        thief_flag.store(true, Ordering::Relaxed);
        thief_found.store(thief.steal(), Ordering::Relaxed);
    });
    main.push(1);
    fence(Ordering::SeqCst);
    let pusher_saw_the_flag = flag.load(Ordering::Relaxed);
    thief.join().unwrap();
    let steal_found_the_task = found.load(Ordering::Relaxed);
    if !pusher_saw_the_flag && !steal_found_the_task {
        let violation = "the pusher missed the thief's flag and the thief's steal missed the \
                         push: a store-buffering handshake around the injector failed"
            .to_string();
        evidence::record_failure(Failure {
            violation: violation.clone(),
            trace: main.trace(),
            found_by_ledger: false,
        });
        panic!("violation: {violation}");
    }
    main.finish(Vec::new());
}

/// A thread asks for `len` and `is_empty` while the main thread pushes
/// twice. Nobody steals, so the task pushed before the thread starts is in
/// the queue throughout: each answer must count it. The model builds give
/// `len` two snapshots of the indices before it settles
/// (`SNAPSHOT_ATTEMPTS`), so the two pushes can move the tail inside both
/// and make it settle.
fn injector_len_and_is_empty_while_a_pusher_moves_the_tail(mutant: Option<Mutant>) {
    let main = Queue::new(mutant);
    main.push(1);
    let counted = Arc::new(AtomicUsize::new(0));
    let empty = Arc::new(AtomicBool::new(false));
    let (observer_counted, observer_empty) = (Arc::clone(&counted), Arc::clone(&empty));
    let observer = main.handle("observer").spawn(move |observer| {
        observer.note(|| "observer calls len()".to_string());
        let len = observer.injector.len();
        observer.note(|| format!("observer's len returns {len}"));
        observer.note(|| "observer calls is_empty()".to_string());
        let is_empty = observer.injector.is_empty();
        observer.note(|| format!("observer's is_empty returns {is_empty}"));
        observer_counted.store(len, Ordering::Relaxed);
        observer_empty.store(is_empty, Ordering::Relaxed);
    });
    main.push(2);
    main.push(3);
    observer.join().unwrap();
    let (len, is_empty) = (
        counted.load(Ordering::Relaxed),
        empty.load(Ordering::Relaxed),
    );
    if !(1..=3).contains(&len) || is_empty {
        let violation = format!(
            "len returned {len} and is_empty {is_empty} while the queue held task 1 throughout \
             and at most three tasks"
        );
        evidence::record_failure(Failure {
            violation: violation.clone(),
            trace: main.trace(),
            found_by_ledger: false,
        });
        panic!("violation: {violation}");
    }
    main.finish(Vec::new());
}

/// Two pushers race at a block end: one claims the block's last slot and
/// installs the next block, the other waits for it and pushes into the new
/// block; meanwhile the main thread steals the two tasks it pushed before.
fn injector_pushes_race_across_a_block_end(mutant: Option<Mutant>) {
    let main = Queue::new(mutant);
    main.push(1);
    main.push(2);
    let first = main.handle("pusher 1").spawn(|pusher| pusher.push(3));
    let second = main.handle("pusher 2").spawn(|pusher| pusher.push(4));
    main.steal();
    main.steal();
    main.finish(vec![first, second]);
}

/// Two thieves steal once each while the main thread pushes a second task.
fn injector_two_thieves_against_a_push(mutant: Option<Mutant>) {
    let main = Queue::new(mutant);
    main.push(1);
    let first = main.handle("thief 1").spawn(|thief| {
        thief.steal();
    });
    let second = main.handle("thief 2").spawn(|thief| {
        thief.steal();
    });
    main.push(2);
    main.finish(vec![first, second]);
}

/// One block of three tasks and a fourth in the next: two thieves and the
/// main thread steal once each, so the reader of the last slot frees the
/// block while the others may still be reading theirs.
fn injector_three_steals_of_one_block_race_its_free(mutant: Option<Mutant>) {
    let main = Queue::new(mutant);
    for id in 1..=4 {
        main.push(id);
    }
    let first = main.handle("thief 1").spawn(|thief| {
        thief.steal();
    });
    let second = main.handle("thief 2").spawn(|thief| {
        thief.steal();
    });
    main.steal();
    main.finish(vec![first, second]);
}

/// Write-to-read causality through a thief's CAS on the head: thief 1 knows
/// task 1; the main thread pushes task 2 and starts thief 2, which knows both
/// and steals task 1. If thief 1 then reads the head thief 2's CAS wrote, it
/// must also see the tail of task 2: `Empty` would be a lie.
fn injector_thief_that_sees_another_thiefs_steal_sees_the_push_before_it(mutant: Option<Mutant>) {
    let main = Queue::new(mutant);
    main.push(1);
    let knows_task_1 = main.handle("thief 1");
    // Thief 1 may run before the second push: it is spawned first.
    let first = knows_task_1.spawn(|thief| {
        thief.steal();
    });
    main.push(2);
    let second = main.handle("thief 2").spawn(|thief| {
        thief.steal();
    });
    main.finish(vec![first, second]);
}

/// Holds one thread up at a pause point of the injector, as if it were
/// descheduled there, until the scenario releases it: what the other
/// threads do meanwhile must complete without it (a wait for it would never
/// end, and loom would report the execution).
#[derive(Clone)]
struct Stop {
    stopped: Arc<AtomicBool>,
    released: Arc<AtomicBool>,
}

impl Stop {
    fn new() -> Stop {
        Stop {
            stopped: Arc::new(AtomicBool::new(false)),
            released: Arc::new(AtomicBool::new(false)),
        }
    }

    /// A hook that stops the first thread to reach `at`, once.
    fn hook(&self, at: Pause) -> PauseHook {
        let stop = self.clone();
        let fired = std::sync::atomic::AtomicBool::new(false);
        std::sync::Arc::new(move |point| {
            if point == at && !fired.swap(true, std::sync::atomic::Ordering::Relaxed) {
                stop.stopped.store(true, Ordering::SeqCst);
                while !stop.released.load(Ordering::SeqCst) {
                    thread::yield_now();
                }
            }
        })
    }

    fn wait_until_stopped(&self) {
        while !self.stopped.load(Ordering::SeqCst) {
            thread::yield_now();
        }
    }

    fn release(&self) {
        self.released.store(true, Ordering::SeqCst);
    }
}

/// A push is stopped between the CAS that claimed its slot and its write;
/// a steal of that slot completes meanwhile (it abandons the slot and
/// returns `Retry`); the push, released, pushes its task again, and the
/// queue still drops it exactly once.
fn injector_steal_completes_while_a_push_is_stopped_between_claim_and_write(
    mutant: Option<Mutant>,
) {
    let stop = Stop::new();
    let main = Queue::pausing(mutant, stop.hook(Pause::PushClaimed));
    let pusher = main.handle("pusher 1").spawn(|pusher| pusher.push(1));
    stop.wait_until_stopped();
    main.steal();
    stop.release();
    main.finish(vec![pusher]);
}

/// The push that claims a block's last slot is stopped before it moves the
/// tail to the next block: another push completes meanwhile (it links the
/// next block and moves the tail itself), and so do three steals, the last
/// of which claims the stopped push's slot, moves the head on and abandons
/// the slot.
fn injector_push_completes_while_the_push_installing_a_block_is_stopped(mutant: Option<Mutant>) {
    let stop = Stop::new();
    let main = Queue::pausing(mutant, stop.hook(Pause::LastSlotClaimed));
    main.push(1);
    main.push(2);
    let installer = main.handle("pusher 1").spawn(|pusher| pusher.push(3));
    stop.wait_until_stopped();
    main.push(4);
    main.steal();
    main.steal();
    main.steal();
    stop.release();
    main.finish(vec![installer]);
}

/// The steal that claims a block's last slot is stopped before it moves the
/// head to the next block: another steal completes meanwhile (it moves the
/// head itself) and takes the task of the next block, which it knows was
/// pushed.
fn injector_steal_completes_while_the_steal_moving_the_head_is_stopped(mutant: Option<Mutant>) {
    let stop = Stop::new();
    let main = Queue::pausing(mutant, stop.hook(Pause::LastSlotStolen));
    for id in 1..=4 {
        main.push(id);
    }
    main.steal();
    main.steal();
    let mover = main.handle("thief 1").spawn(|thief| {
        thief.steal();
    });
    stop.wait_until_stopped();
    main.steal();
    stop.release();
    main.finish(vec![mover]);
}

/// The push that claims a block's last slot is stopped before it links the
/// next block, and no other push comes: the steal that claims that slot
/// links the next block itself, moves the head into it and abandons the
/// slot; released, the push finds the block linked and pushes its task again
/// in it.
fn injector_steals_link_the_next_block_while_the_push_installing_it_is_stopped(
    mutant: Option<Mutant>,
) {
    let stop = Stop::new();
    let main = Queue::pausing(mutant, stop.hook(Pause::LastSlotClaimed));
    main.push(1);
    main.push(2);
    let installer = main.handle("pusher 1").spawn(|pusher| pusher.push(3));
    stop.wait_until_stopped();
    main.steal();
    main.steal();
    main.steal();
    stop.release();
    main.steal();
    main.finish(vec![installer]);
}

/// A push finds the tail on the first block's marker, and by the time it has
/// its ticket the main thread has moved the tail on: the ticket is on the
/// second block, which the push only reads (its lap) before giving the
/// ticket back to the cursor. The main thread then fills the second block,
/// moves the tail past it and steals every task of it (two batches), freeing
/// it: the free must come after the helper's read, through the ticket's
/// return.
fn injector_late_helper_gives_its_ticket_back_before_the_block_is_freed(mutant: Option<Mutant>) {
    let main = Queue::new(mutant);
    main.push(1);
    main.push(2);
    let helper = main.handle("pusher 1").spawn(|pusher| pusher.push(4));
    main.push(3);
    main.push(5);
    main.push(6);
    main.push(7);
    // Each batch takes the rest of its block (the tail is in a later one).
    main.steal_batch(mutant, true);
    main.steal_batch(mutant, true);
    main.finish(vec![helper]);
}

// ---------------------------------------------------------------------------
// Family 9: the hazard registry between threads.

/// A steal whose thread runs another steal in the middle of it: a global
/// allocator that steals, called while a batch steal grows its destination
/// (modelled by the internal builds' allocation hook). The victim is a FIFO
/// deque with tasks 1 to 4 in its 4-slot buffer; the thief's batch (two
/// tasks) goes into a 1-slot worker, whose growth allocates, and the
/// allocator steals from the same victim, announcing in a record it
/// borrows. Meanwhile the owner pushes task 5, which moves the victim to a
/// new buffer and retires the old one, so its scan races both
/// announcements. The nested steal must not end the outer steal's
/// announcement: with one slot a thread (mutant `hazard-not-reentrant`),
/// the owner's scan finds the slot cleared and frees the buffer the outer
/// batch then copies from (proofs-notes/reclamation.md#nested-steals).
fn steal_nested_in_a_batch_keeps_the_outer_buffer_the_owner_retires(mutant: Option<Mutant>) {
    let owner = Owner::new(FIFO, mutant);
    for id in 1..=4 {
        owner.push(id);
    }
    assert_eq!(owner.worker.capacity(), 4, "the victim's buffer is full");
    let nested = owner.stealer("thief 1's allocator");
    let thief = owner.stealer("thief 1").spawn(move |thief| {
        let destination = Worker::new_mutant(false, 1, false, mutant);
        super::deque::hooks::before_next_buffer_allocation(move || nested.steal());
        thief.steal_batch_into(&destination, super::deque::DEFAULT_BATCH_LIMIT);
    });
    owner.push(5); // at the end of the lap: a new buffer, the old one retired
    owner.finish(vec![thief]);
}

/// An owner operation nested in another of the same worker: the owner's
/// push of task 5 finds its 4-slot buffer at the end of its lap, and the
/// allocation of the next buffer runs the owner's push of task 6 (a global
/// allocator that hands work to its own thread's deque, modelled by the
/// internal builds' allocation hook), while a thief steals. The nested push
/// finds the same lap's end and changes the buffer itself. The outer one
/// must then see that the deque changed under its allocation, keep its new
/// buffer as a spare and push into the deque as it is now; one that moves
/// the tasks it saw before the allocation (mutant
/// `buffer-change-not-reentrant`) writes task 5 over task 6's place, and
/// task 6 is lost (proofs-notes/reclamation.md#reentrant-owner-operations).
fn owner_push_nested_in_the_allocation_of_a_grow(mutant: Option<Mutant>) {
    let owner = std::rc::Rc::new(Owner::new(LIFO, mutant));
    for id in 1..=4 {
        owner.push(id);
    }
    let thief = owner.stealer("thief 1").spawn(Thief::steal);
    let nested = std::rc::Rc::clone(&owner);
    super::deque::hooks::before_next_buffer_allocation(move || nested.push(6));
    owner.push(5); // the end of the lap: its allocation pushes task 6
    let owner = std::rc::Rc::into_inner(owner).expect("the allocation ran the nested push");
    owner.finish(vec![thief]);
}

/// A thief steals task 1 and exits, giving its record back; the owner joins
/// it, pushes task 2 into a new 1-slot buffer and starts a second thief,
/// whose first steal takes that record (the lowest free one) and may read
/// task 2 while the owner pushes task 3, moves to a new buffer and scans.
/// The scan must see the second thief's announcement in the record the
/// first one held (mutant `retire-fence` misses it;
/// proofs-notes/reclamation.md#records).
fn record_of_an_exited_thief_taken_by_the_next_while_the_owner_scans(mutant: Option<Mutant>) {
    let owner = Owner::new(LIFO_ONE_SLOT, mutant);
    owner.push(1);
    let first = owner.stealer("thief 1").spawn(Thief::steal);
    first.join().unwrap(); // thief 1 took task 1, and gave its record back
    owner.push(2); // in a new buffer, with no thief left to hold the old one
    let second = owner.stealer("thief 2").spawn(Thief::steal);
    owner.push(3); // a new buffer again: task 2's is retired and scanned
    owner.finish(vec![second]);
}

/// A thief steals task 1 (claiming its thread's record) and leaves a steal
/// to run when its thread exits, after its record is given back, as a
/// thread-local destructor of the user's that steals would run once the
/// registry's thread-local is gone (the internal builds' hook,
/// `chase_lev::hooks`, stands in for it: loom would destroy two thread-locals
/// in an order that changes between executions). That steal has no record
/// of its own: it must borrow one and announce in it, while the owner
/// pushes tasks 2 and 3 into new 1-slot buffers and scans at each change
/// (mutant `destructor-steal-unannounced` steals unannounced, and the owner
/// frees or reuses the buffer it reads; proofs-notes/reclamation.md#records).
fn steal_from_a_thread_local_destructor_borrows_a_record(mutant: Option<Mutant>) {
    let owner = Owner::new(LIFO_ONE_SLOT, mutant);
    owner.push(1);
    let at_exit = owner.stealer("thief 1's thread-local destructor");
    // Loom lets `join` return before the joined thread's thread-locals are
    // destroyed (std's `join` waits for them): the destructor says when it
    // is done, its stealer dropped.
    let done = Arc::new(AtomicBool::new(false));
    let destructor_done = done.clone();
    let thief = owner.stealer("thief 1").spawn(move |thief| {
        thief.steal();
        super::deque::hooks::after_this_threads_record_is_released(move || {
            at_exit.steal();
            drop(at_exit);
            destructor_done.store(true, Ordering::Release);
        });
    });
    owner.push(2); // a new buffer (or a bigger one, if task 1 is still here)
    owner.push(3); // another: task 2's buffer is retired and scanned
    thief.join().unwrap();
    while !done.load(Ordering::Acquire) {
        thread::yield_now(); // the thief's thread-locals are being destroyed
    }
    owner.finish(Vec::new());
}

/// Two thieves, and an owner that grows a 1-slot deque twice: thief 1 may
/// hold the first buffer and thief 2 the second when the owner retires the
/// second, so its scan finds two slots in use, holding two different
/// retired buffers, and must keep both (mutant `scan-stops-at-first-held`
/// frees the second), and the spares it keeps must be held by neither
/// (proofs-notes/reclamation.md#reuse).
fn owner_changes_buffer_twice_while_two_thieves_hold_slots(mutant: Option<Mutant>) {
    let owner = Owner::new(LIFO_ONE_SLOT, mutant);
    owner.push(1);
    let first = owner.stealer("thief 1").spawn(Thief::steal);
    let second = owner.stealer("thief 2").spawn(Thief::steal);
    // The owner yields where a thief's steal may begin (a switch loom does
    // not count as a preemption), so that the two preemptions of the bound
    // can stop each thief inside its steal.
    thread::yield_now();
    owner.push(2); // grows to 2 slots, retires the first buffer
    thread::yield_now();
    owner.push(3); // grows to 4 slots, retires the second
    owner.pop();
    owner.finish(vec![first, second]);
}

// ---------------------------------------------------------------------------
// The states no other scenario reaches (families 4 and 5): a bounded
// destination, `reserve` moving a destination to a new lap while a thief
// steals from it, a shrink against a batch steal, and a FIFO worker that
// shrinks. Each asserts, before its threads start or where the state is
// reached, that the execution is in the state its name says: a scenario
// that silently stopped reaching it would pass and check nothing.

/// Fails the execution with a broken promise that the scenario checks
/// itself (the ledger checks the others when the execution ends).
fn violated(violation: String) -> ! {
    evidence::record_failure(Failure {
        violation: violation.clone(),
        trace: logged_events(),
        found_by_ledger: false,
    });
    panic!("violation: {violation}");
}

/// A LIFO worker bounded to 2 that holds its owner's task 10 (one slot of
/// room) is the destination of a batch steal from a LIFO owner holding
/// tasks 1 to 3 (the half rule asks for two), while that owner pops twice.
/// The batch takes only what fits: only the thief changes its destination,
/// so its length after the batch is exact, and must not exceed the bound
/// (mutant `reserve-one-past-bound` makes room for one task more, growing
/// the destination past it).
fn batch_into_a_bounded_destination_takes_only_the_room_it_has(mutant: Option<Mutant>) {
    let owner = Owner::new(LIFO, mutant);
    for id in 1..=3 {
        owner.push(id);
    }
    let destination = Owner::new(
        Shape {
            fifo: false,
            capacity: 2,
            bounded: true,
        },
        mutant,
    );
    destination.push(10);
    assert_eq!(
        (destination.worker.bound(), destination.worker.len()),
        (Some(2), 1),
        "the destination has one slot of room"
    );
    let thief = owner.stealer("thief 1").spawn(move |thief| {
        let batch = thief.batch_into(&destination.worker, super::deque::DEFAULT_BATCH_LIMIT);
        let held = destination.worker.len();
        if held > 2 {
            violated(format!(
                "thief 1's batch left its destination, bounded to 2, holding {held} tasks"
            ));
        }
        let own = ledger::begin("thief 1", "pop from its own worker", None);
        while let Some(task) = destination.worker.pop() {
            ledger::took(if task.0 == 10 { &own } else { &batch }, task);
        }
    });
    owner.pop();
    owner.pop();
    owner.finish(vec![thief]);
}

/// A FIFO worker of two slots has used up its first lap (tasks 10 and 11
/// pushed, 10 popped: `bottom` is at the lap's end) when its owner steals a
/// batch of one task into it, so `reserve` moves it to a new lap of the
/// same capacity (a new buffer, the old one retired) while a thief steals
/// task 11 from it, possibly from the old buffer. The old buffer must be
/// retired as at any other buffer change, so that the thief's announcement
/// keeps it (mutant `reserve-frees-at-once` frees it under the thief).
fn reserve_moves_the_destination_to_a_new_lap_while_its_thief_steals(mutant: Option<Mutant>) {
    let destination = Owner::new(
        Shape {
            fifo: true,
            capacity: 2,
            bounded: false,
        },
        mutant,
    );
    destination.push(10);
    destination.push(11);
    destination.pop(); // task 10
    assert_eq!(
        (destination.worker.capacity(), destination.worker.len()),
        (2, 1),
        "two pushes into a fresh buffer of two slots: its lap is used up, one task left"
    );
    let victim = Owner::new(LIFO, mutant);
    victim.push(1);
    let thief = destination.stealer("thief 2");
    let owner_of_the_destination = victim.stealer("thief 1").spawn(move |batch| {
        // The batch's room is made by `reserve`: an allocation there is
        // the move to a new buffer.
        let moved = std::rc::Rc::new(std::cell::Cell::new(false));
        let allocated = std::rc::Rc::clone(&moved);
        super::deque::hooks::before_next_buffer_allocation(move || allocated.set(true));
        batch.batch_into(&destination.worker, super::deque::DEFAULT_BATCH_LIMIT);
        assert!(
            moved.get() && destination.worker.capacity() == 2,
            "reserve moved the destination to a new buffer of the same capacity: a new lap"
        );
        destination.pop();
        destination.pop();
    });
    thief.steal();
    victim.finish(vec![owner_of_the_destination]);
}

/// A LIFO deque grown to 16 slots holds four tasks (1, 2, 3 and 16) with
/// its shrink credit one short (seven pops have left it under a quarter
/// full since the last resize; the eighth shrinks it). A thief steals a
/// batch of two, claiming them one by one under one announcement, while the
/// owner's pop, which leaves three tasks or fewer, shrinks the buffer to 8
/// slots and retires the old one: the batch's next claim must see the
/// change (and end), and the retire must keep the buffer the batch reads
/// (mutant `retire-fence` scans without its fence, misses the batch's
/// announcement and frees that buffer).
fn shrink_while_a_thief_steals_a_batch_task_by_task(mutant: Option<Mutant>) {
    let owner = Owner::new(LIFO_ONE_SLOT, mutant);
    for id in 1..=9 {
        owner.push(id); // grows to 16 slots
    }
    for _ in 0..6 {
        owner.pop(); // 9 to 4: three tasks left, the first pop under a quarter full
    }
    for id in 10..=15 {
        owner.push(id);
        owner.pop(); // three tasks left again: one more pop under a quarter
    }
    owner.push(16);
    assert_eq!(
        (owner.worker.capacity(), owner.worker.len()),
        (16, 4),
        "16 slots, four tasks: a quarter full, one pop short of the shrink"
    );
    let thief = owner
        .stealer("thief 1")
        .spawn(move |thief| thief.steal_batch(mutant, false));
    owner.pop(); // the batch takes at most two: a task for the pop, and the shrink
    assert_eq!(owner.worker.capacity(), 8, "the pop shrank the buffer");
    owner.finish(vec![thief]);
}

/// The FIFO twin of `shrink_and_retire_while_a_thief_steals`: a FIFO deque
/// grown from one slot to 8 pops its oldest tasks down to one with the
/// shrink credit one short; then the owner pushes task 8 and pops (with its
/// CAS on `top`, as a thief claims), which shrinks the buffer to 4 slots
/// and retires the old one, while the thief steals, possibly through the
/// old buffer. Every FIFO scenario before this one stays at its minimum
/// capacity, where a FIFO pop never shrinks. The shrink must copy every
/// task (mutant `shrink-drops-newest` leaves task 8 behind, and the owner's
/// pop reads a slot nobody wrote).
fn fifo_shrink_and_retire_while_a_thief_steals(mutant: Option<Mutant>) {
    let owner = Owner::new(
        Shape {
            fifo: true,
            capacity: 1,
            bounded: false,
        },
        mutant,
    );
    for id in 1..=5 {
        owner.push(id); // grows to 8 slots
    }
    for _ in 0..4 {
        owner.pop(); // 1 to 4: task 5 left, the first pop under a quarter full
    }
    for id in 6..=7 {
        owner.push(id);
        owner.pop(); // one task left again: one more pop under a quarter
    }
    assert_eq!(
        (owner.worker.capacity(), owner.worker.len()),
        (8, 1),
        "8 slots, one task: one pop short of the shrink"
    );
    let thief = owner.stealer("thief 1").spawn(Thief::steal);
    owner.push(8);
    owner.pop(); // the thief takes one task at most: a task for the pop, and the shrink
    assert_eq!(owner.worker.capacity(), 4, "the pop shrank the buffer");
    owner.pop();
    owner.finish(vec![thief]);
}

/// crossbeam-deque's CVE-2021-32810 (docs/shipped-bugs.md): a LIFO batch
/// steal between whose claims the owner replaces the buffer. The owner grows
/// to 16 slots and is left with four tasks and two counted pops before a
/// shrink. The thief's batch wants two of them (indices 0 and 1) while the
/// owner pops three times and pushes once: its first two pops always take
/// tasks (the batch takes at most two, and only the oldest), so the second
/// shrinks to 8 slots; the third pops index 1, and the push puts task 20 at
/// index 1, in the new buffer only. A batch whose second claim reads index 1
/// from the buffer it loaded first takes task 2 again, and task 20 is lost.
fn lifo_steal_batch_while_the_owner_pops_shrinks_and_pushes(mutant: Option<Mutant>) {
    let owner = Owner::new(LIFO_ONE_SLOT, mutant);
    for id in 1..=9 {
        owner.push(id); // 1, 2, 4, 8 and 16 slots
    }
    for _ in 0..6 {
        owner.pop(); // 9 to 4: tasks 1 to 3 left; the last pop counts (shrink credit 1 of 8)
    }
    for id in 10..=14 {
        owner.push(id);
        owner.pop(); // credits 2 to 6 of 8
    }
    owner.push(15); // tasks 1, 2, 3 and 15; a push does not reset the count
    assert_eq!(owner.worker.capacity(), 16, "the buffer grew to 16 slots");
    assert_eq!(
        owner.worker.len(),
        4,
        "four tasks, so that the batch wants two"
    );
    let thief = owner
        .stealer("thief 1")
        .spawn(move |thief| thief.steal_batch(mutant, false));
    owner.pop();
    owner.pop(); // credit 8 of 8: the shrink to 8 slots
    owner.pop();
    owner.push(20);
    owner.finish(vec![thief]);
}
