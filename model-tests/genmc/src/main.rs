//! The scenarios that Miri's GenMC mode explores on the deque as it ships:
//! every execution that RC11 allows (every interleaving, and every store
//! each weak load may read), on the compiled crate, with Miri's checks for
//! undefined behaviour, data races, reads of freed memory and leaks in each.
//!
//! `cargo miri run -- NAME` (with the flags of `run.sh`) runs one scenario;
//! without a name it lists them. Each starts its threads with pthreads (this
//! GenMC cannot run `std::thread`), makes every loop bounded, and checks,
//! once every thread is joined, that each task pushed was taken exactly
//! once (by a pop, a steal, a batch, or by the main thread draining what is
//! left); the tasks are boxes, so a task taken twice is also freed twice,
//! and one never taken, never dropped, is a leak Miri reports.
//!
//! The harness itself is kept lean: every memory access and allocation of
//! an execution, the harness's own included, is an event GenMC checks each
//! new event against, so an execution's cost grows with the square of its
//! events. A thread counts the tasks it takes in a fixed array ([`Taken`])
//! and drops each at once, with plain `while` loops: no `Vec`, no iterator
//! adaptors (at Miri's MIR opt-level 0 each is hundreds of events).
//!
//! With the feature `mutants` the scenarios run on the mutant build, with
//! the mutant named by `CHASE_LEV_GENMC_MUTANT` when they were compiled
//! (`run.sh --mutant NAME`).
#![no_main]

use core::ffi::{c_void, CStr};
use std::rc::Rc;

#[cfg(not(feature = "mutants"))]
use chase_lev_genmc as chase_lev;
#[cfg(feature = "mutants")]
use chase_lev_genmc_mutants as chase_lev;

use chase_lev::{Injector, Steal, Stealer, Worker};

/// A task: a box, so that a task taken twice is freed twice and one lost is
/// a leak.
type Task = Box<u64>;

/// The most tasks a scenario pushes, plus one (tasks are numbered from 1).
const TASKS: usize = 16;

// ----------------------------------------------------------------- checks --

/// Writes `message` to stderr and aborts: the execution fails, and GenMC
/// stops with it. (Neither `panic!` nor `eprintln!`: std's statics behind
/// them read back as this GenMC's dummy value.)
fn fail(message: &str) -> ! {
    let line = format!("genmc scenario failed: {message}\n");
    // SAFETY: a buffer of `line.len()` bytes.
    unsafe { libc::write(2, line.as_ptr().cast(), line.len()) };
    std::process::abort()
}

/// How many times each task was taken, by task number: a thread counts the
/// tasks it takes here and drops each at once.
#[derive(Clone, Copy)]
struct Taken([u8; TASKS]);

impl Taken {
    fn none() -> Taken {
        Taken([0; TASKS])
    }

    /// Counts `task` and drops it.
    fn take(&mut self, task: Task) {
        let number = *task as usize;
        if number == 0 || number >= TASKS {
            fail(&format!("a task that was never pushed was taken: {number}"));
        }
        self.0[number] += 1;
        drop(task);
    }

    /// Counts `task`, if any.
    fn take_some(&mut self, task: Option<Task>) {
        if let Some(task) = task {
            self.take(task);
        }
    }

    /// Adds the counts of `other` (another thread's).
    fn add(&mut self, other: Taken) {
        let mut number = 0;
        while number < TASKS {
            self.0[number] += other.0[number];
            number += 1;
        }
    }
}

/// Checks that the tasks `1..=pushed` were each taken exactly once (and no
/// other).
fn each_taken_once(pushed: u64, taken: Taken) {
    let mut number = 1;
    while number < TASKS {
        let expected = u8::from(number as u64 <= pushed);
        if taken.0[number] != expected {
            fail(&format!(
                "task {number} was taken {} times",
                taken.0[number]
            ));
        }
        number += 1;
    }
}

// ---------------------------------------------------------------- threads --

/// A thread's work, then the result it left.
type Slot<R> = (Option<Box<dyn FnOnce() -> R>>, Option<R>);

/// A thread started with `pthread_create`, and the result its closure left.
struct Thread<R> {
    id: libc::pthread_t,
    slot: *mut Slot<R>,
}

/// Starts a thread running `work`, which then gives its hazard record back
/// (`chase_lev::genmc::end_of_thread`: its thread-local has no destructor
/// under this GenMC). The caller joins it before anything `work` borrows
/// goes.
fn spawn<R: 'static>(work: impl FnOnce() -> R + 'static) -> Thread<R> {
    extern "C" fn run<R>(slot: *mut c_void) -> *mut c_void {
        // SAFETY: `spawn` passes its slot, which outlives the thread.
        let slot = unsafe { &mut *slot.cast::<Slot<R>>() };
        let work = slot.0.take().expect("the work, once");
        slot.1 = Some(work());
        chase_lev::genmc::end_of_thread();
        core::ptr::null_mut()
    }
    start_thread(run::<R>, work)
}

/// As `spawn`, but the thread ends without giving its hazard record back:
/// the record stays claimed for the rest of the execution, as the record
/// of a thread still running would.
fn spawn_keeping_the_record<R: 'static>(work: impl FnOnce() -> R + 'static) -> Thread<R> {
    extern "C" fn run<R>(slot: *mut c_void) -> *mut c_void {
        // SAFETY: `spawn_keeping_the_record` passes its slot, which
        // outlives the thread.
        let slot = unsafe { &mut *slot.cast::<Slot<R>>() };
        let work = slot.0.take().expect("the work, once");
        slot.1 = Some(work());
        core::ptr::null_mut()
    }
    start_thread(run::<R>, work)
}

/// Starts a thread running `run` on a slot holding `work`.
fn start_thread<R: 'static>(
    run: extern "C" fn(*mut c_void) -> *mut c_void,
    work: impl FnOnce() -> R + 'static,
) -> Thread<R> {
    let work: Box<dyn FnOnce() -> R> = Box::new(work);
    let slot = Box::into_raw(Box::new((Some(work), None)));
    let mut id: libc::pthread_t = 0;
    // SAFETY: `run` takes the slot made for it just above.
    if unsafe { libc::pthread_create(&mut id, core::ptr::null(), run, slot.cast()) } != 0 {
        fail("pthread_create");
    }
    Thread { id, slot }
}

impl<R> Thread<R> {
    fn join(self) -> R {
        // SAFETY: a thread of `spawn`, joined once.
        if unsafe { libc::pthread_join(self.id, core::ptr::null_mut()) } != 0 {
            fail("pthread_join");
        }
        // SAFETY: the thread is done with its slot.
        let slot = unsafe { Box::from_raw(self.slot) };
        slot.1.expect("the thread's result")
    }
}

/// A reference to share with the threads a scenario joins before the
/// referent goes (an injector, which must stay where its atomics got their
/// initial stores).
struct Shared<T>(*const T);

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Shared<T> {
        Shared(self.0)
    }
}

impl<T> Shared<T> {
    fn get(&self) -> &T {
        // SAFETY: the scenario keeps the referent until it has joined every
        // thread holding a copy.
        unsafe { &*self.0 }
    }
}

// ------------------------------------------------------------------ deques --

/// The mutant this build plants: the one named by `CHASE_LEV_GENMC_MUTANT`
/// when it was compiled (none in the shipped build).
#[cfg(feature = "mutants")]
fn mutant() -> Option<chase_lev::Mutant> {
    let name = option_env!("CHASE_LEV_GENMC_MUTANT")?;
    Some(chase_lev::Mutant::from_name(name).unwrap_or_else(|| fail("no such mutant")))
}

/// A growable worker of `capacity` slots.
fn worker(fifo: bool, capacity: usize) -> Worker<Task> {
    #[cfg(not(feature = "mutants"))]
    return if fifo {
        Worker::new_fifo_with_capacity(capacity)
    } else {
        Worker::new_lifo_with_capacity(capacity)
    };
    #[cfg(feature = "mutants")]
    return Worker::new_mutant(fifo, capacity, false, mutant());
}

/// A bounded worker of `capacity` slots.
fn bounded_worker(fifo: bool, capacity: usize) -> Worker<Task> {
    #[cfg(not(feature = "mutants"))]
    return if fifo {
        Worker::new_fifo_bounded(capacity)
    } else {
        Worker::new_lifo_bounded(capacity)
    };
    #[cfg(feature = "mutants")]
    return Worker::new_mutant(fifo, capacity, true, mutant());
}

/// The owner's `try_push`; a refused task goes back to the caller, which
/// counts it in `taken` (it is accounted for, not lost).
fn try_push(worker: &Worker<Task>, task: u64, taken: &mut Taken) -> bool {
    match worker.try_push(Box::new(task)) {
        Ok(()) => true,
        Err(task) => {
            taken.take(task);
            false
        }
    }
}

/// An empty injector, where it stays, its atomics given their initial stores.
fn injector() -> Box<Injector<Task>> {
    #[cfg(not(feature = "mutants"))]
    let injector = Box::new(Injector::new());
    #[cfg(feature = "mutants")]
    let injector = Box::new(Injector::new_mutant(mutant()));
    injector.store_initial_values();
    injector
}

/// A fresh injector holding tasks 1 to `count`, pushed in order.
fn injector_holding(count: u64) -> Box<Injector<Task>> {
    let queue = injector();
    let mut task = 1;
    while task <= count {
        queue.push(Box::new(task));
        task += 1;
    }
    queue
}

fn push(worker: &Worker<Task>, task: u64) {
    worker.push(Box::new(task));
}

/// Pushes tasks `first..=last`.
fn push_tasks(worker: &Worker<Task>, first: u64, last: u64) {
    let mut task = first;
    while task <= last {
        push(worker, task);
        task += 1;
    }
}

/// The owner's pop, its task (if any) counted in `taken`.
fn pop(worker: &Worker<Task>, taken: &mut Taken) {
    taken.take_some(worker.pop());
}

/// Every task left in `worker`, popped (at most `bound` of them).
fn drain(worker: &Worker<Task>, taken: &mut Taken, bound: usize) {
    let mut tries = 0;
    while tries < bound {
        match worker.pop() {
            Some(task) => taken.take(task),
            None => return,
        }
        tries += 1;
    }
    if !worker.is_empty() {
        fail("more tasks left than were pushed");
    }
}

/// One steal; a `Retry` takes nothing (the loop a scheduler would make is
/// not run: every loop of a scenario is bounded).
fn steal(stealer: &Stealer<Task>) -> Option<Task> {
    match stealer.steal() {
        Steal::Success(task) => Some(task),
        Steal::Empty | Steal::Retry => None,
    }
}

/// A thief that steals `times` times.
fn thief(stealer: Stealer<Task>, times: usize) -> Thread<Taken> {
    spawn(move || {
        let mut taken = Taken::none();
        let mut tries = 0;
        while tries < times {
            taken.take_some(steal(&stealer));
            tries += 1;
        }
        taken
    })
}

/// Makes the hazard registry's first chunk on the main thread, before any
/// thief starts: the main thread pushes `task` and steals it back (its
/// first steal claims a record, which makes the chunk), then gives its
/// record back (`end_of_thread`; the main thread stays the owner, which
/// needs no record). The thieves then claim records of that chunk, each
/// with one CAS on its mask, instead of each making a chunk of its own and
/// racing to publish it: that race (`publish_chunk`) is
/// `two_thieves_add_a_record_chunk_while_the_owner_grows`'s, and in a
/// scenario with two thieves it multiplies the executions without touching
/// the deque's own orderings.
fn make_the_first_record_chunk(owner: &Worker<Task>, task: u64, taken: &mut Taken) {
    push(owner, task);
    taken.take_some(steal(&owner.stealer()));
    chase_lev::genmc::end_of_thread();
}

/// A 1-slot LIFO owner holding task 1, the registry's first chunk made
/// before (with task `chunk_task`, already counted in the `Taken`
/// returned), and two thieves started that steal once each.
fn one_slot_owner_against_two_thieves(
    chunk_task: u64,
) -> (Worker<Task>, Taken, Vec<Thread<Taken>>) {
    let owner = worker(false, 1);
    let mut taken = Taken::none();
    make_the_first_record_chunk(&owner, chunk_task, &mut taken);
    push(&owner, 1);
    let thieves = vec![thief(owner.stealer(), 1), thief(owner.stealer(), 1)];
    (owner, taken, thieves)
}

/// A thief that steals a batch into a worker of its own (and, with
/// `and_pop`, takes one task of it at once), then drains that worker. The
/// worker is made before the thread starts: its making is thousands of
/// events, which, made in the thread, every execution would add again.
fn batch_thief(stealer: Stealer<Task>, fifo: bool, and_pop: bool) -> Thread<Taken> {
    let destination = worker(fifo, 4);
    spawn(move || {
        let mut taken = Taken::none();
        if and_pop {
            if let Steal::Success(task) = stealer.steal_batch_and_pop(&destination) {
                taken.take(task);
            }
        } else {
            let _ = stealer.steal_batch(&destination);
        }
        drain(&destination, &mut taken, 8);
        taken
    })
}

/// Joins `threads`, drains the owner's deque, drops it, and checks that
/// tasks `1..=pushed` were each taken once.
fn finish(owner: Worker<Task>, mut taken: Taken, pushed: u64, threads: Vec<Thread<Taken>>) {
    for thread in threads {
        taken.add(thread.join());
    }
    drain(&owner, &mut taken, pushed as usize);
    drop(owner);
    each_taken_once(pushed, taken);
}

/// A thief that steals once from a deque that holds a task from before the
/// thief starts until this thief itself takes one (the owner takes fewer
/// tasks than there are): an `Empty` is never linearizable there, so it
/// fails the execution (a `Retry`, a lost race, is allowed).
fn thief_that_must_not_find_it_empty(stealer: Stealer<Task>) -> Thread<Taken> {
    spawn(move || {
        let mut taken = Taken::none();
        match stealer.steal() {
            Steal::Success(task) => taken.take(task),
            Steal::Retry => {}
            Steal::Empty => fail("a thief found empty a deque that held a task throughout"),
        }
        taken
    })
}

/// One steal from `queue`, its task (if any) counted in `taken`.
fn steal_from_injector(queue: &Injector<Task>, taken: &mut Taken) {
    if let Steal::Success(task) = queue.steal() {
        taken.take(task);
    }
}

/// A thief that steals twice from `queue` (which outlives it: the scenario
/// joins it before the queue goes).
fn injector_thief_stealing_twice(queue: &Injector<Task>) -> Thread<Taken> {
    let shared = Shared(queue as *const Injector<Task>);
    spawn(move || {
        let mut taken = Taken::none();
        steal_from_injector(shared.get(), &mut taken);
        steal_from_injector(shared.get(), &mut taken);
        taken
    })
}

/// Every task left in `queue`, stolen (a bounded number of tries).
fn drain_injector(queue: &Injector<Task>, taken: &mut Taken) {
    let mut tries = 0;
    while tries < 8 {
        match queue.steal() {
            Steal::Success(task) => taken.take(task),
            Steal::Empty => break,
            Steal::Retry => {}
        }
        tries += 1;
    }
    if !queue.is_empty() {
        fail("the injector still holds tasks after the drain");
    }
}

/// A thread that steals a batch from the injector into a worker of its own
/// (and, with `and_pop`, takes one task of it at once), then drains it; the
/// worker made before the thread starts, as in `batch_thief`.
fn injector_batch_thief(queue: Shared<Injector<Task>>, fifo: bool, and_pop: bool) -> Thread<Taken> {
    let destination = worker(fifo, 4);
    spawn(move || {
        let mut taken = Taken::none();
        if and_pop {
            if let Steal::Success(task) = queue.get().steal_batch_and_pop(&destination) {
                taken.take(task);
            }
        } else {
            let _ = queue.get().steal_batch(&destination);
        }
        drain(&destination, &mut taken, 8);
        taken
    })
}

/// Joins `threads`, drains the injector, drops it, and checks that tasks
/// `1..=pushed` were each taken once.
fn finish_injector(
    queue: Box<Injector<Task>>,
    mut taken: Taken,
    pushed: u64,
    threads: Vec<Thread<Taken>>,
) {
    for thread in threads {
        taken.add(thread.join());
    }
    drain_injector(&queue, &mut taken);
    drop(queue);
    each_taken_once(pushed, taken);
}

// -------------------------------------------------------------- scenarios --

/// Around the last task: tasks 1 and 2 are in the deque before the thief
/// starts; the owner pops twice while the thief steals twice (the take
/// fence against the steal fence: `take-fence`, `steal-fence`).
fn prefilled_pop_pop_against_steal_steal() {
    let owner = worker(false, 4);
    push(&owner, 1);
    push(&owner, 2);
    let thief = thief(owner.stealer(), 2);
    let mut taken = Taken::none();
    pop(&owner, &mut taken);
    pop(&owner, &mut taken);
    finish(owner, taken, 2, vec![thief]);
}

/// The smallest: the owner pushes 2 and pops 1 while a thief steals once
/// (the pushes race the steal too: the push's release fence).
fn push_push_pop_against_a_steal() {
    let owner = worker(false, 4);
    let thief = thief(owner.stealer(), 1);
    push(&owner, 1);
    push(&owner, 2);
    let mut taken = Taken::none();
    pop(&owner, &mut taken);
    finish(owner, taken, 2, vec![thief]);
}

/// The pushes race the steals, then the owner pops twice.
fn push_push_pop_pop_against_steal_steal() {
    let owner = worker(false, 4);
    let thief = thief(owner.stealer(), 2);
    push(&owner, 1);
    push(&owner, 2);
    let mut taken = Taken::none();
    pop(&owner, &mut taken);
    pop(&owner, &mut taken);
    finish(owner, taken, 2, vec![thief]);
}

/// One task, which the owner's CAS-only pop and a thief's steal race for.
fn one_task_pop_pop_against_a_steal() {
    let owner = worker(false, 4);
    push(&owner, 1);
    let thief = thief(owner.stealer(), 1);
    let mut taken = Taken::none();
    pop(&owner, &mut taken);
    pop(&owner, &mut taken);
    finish(owner, taken, 1, vec![thief]);
}

/// Capacity 1, task 1 in it; a thief steals once while the owner's push of
/// task 2 grows the deque (copy, publish, retire, scan, free): the
/// smallest shape of the retire's store buffering against the steal's
/// (`retire-fence`: without the owner's fence its scan may miss the
/// thief's hazard while the thief's reload misses the new buffer, and the
/// thief reads the freed buffer).
fn grow_while_a_thief_steals_once() {
    let owner = worker(false, 1);
    push(&owner, 1);
    let thief = thief(owner.stealer(), 1);
    push(&owner, 2);
    finish(owner, Taken::none(), 2, vec![thief]);
}

/// Capacity 1, task 1 in it; a thief steals twice while the owner's push
/// of task 2 grows the deque (copy, publish, retire the old buffer, scan
/// the hazard slots, free it unless held): the thief's first steal may
/// take task 1 from the old buffer and its second announce the new one,
/// so the scan must not take the second announcement for a release of
/// the first steal's reads (`hazard-protect-release`). A free the thief
/// can still read is a use after free that Miri reports.
fn grow_while_a_thief_steals_twice() {
    let owner = worker(false, 1);
    push(&owner, 1);
    let thief = thief(owner.stealer(), 2);
    push(&owner, 2);
    finish(owner, Taken::none(), 2, vec![thief]);
}

/// Capacity 2: the third push grows while the thief steals; then the owner
/// pops twice.
fn grow_while_a_thief_steals() {
    let owner = worker(false, 2);
    let thief = thief(owner.stealer(), 1);
    push(&owner, 1);
    push(&owner, 2);
    push(&owner, 3);
    let mut taken = Taken::none();
    pop(&owner, &mut taken);
    pop(&owner, &mut taken);
    finish(owner, taken, 3, vec![thief]);
}

/// Before the thief starts, the owner grows a 1-slot deque to 8 slots and
/// pops it down to one task with the shrink credit one short; then its push
/// and pop shrink the buffer (copy, publish, retire) while the thief steals
/// task 1, possibly through the old buffer (the shape of CVE-2021-32810).
fn shrink_and_retire_while_a_thief_steals() {
    let owner = worker(false, 1);
    let mut taken = Taken::none();
    push_tasks(&owner, 1, 5);
    for _ in 0..4 {
        pop(&owner, &mut taken); // 5, 4, 3, 2: one task left, shrink credit 1
    }
    push(&owner, 6);
    pop(&owner, &mut taken);
    push(&owner, 7);
    pop(&owner, &mut taken); // shrink credit 3 of 4
    if owner.capacity() != 8 || owner.len() != 1 {
        fail("the owner is not at 8 slots with one task before the thief starts");
    }
    let thief = thief(owner.stealer(), 1);
    push(&owner, 8);
    pop(&owner, &mut taken); // the shrink, unless the thief emptied the deque first
    pop(&owner, &mut taken);
    finish(owner, taken, 8, vec![thief]);
}

/// A LIFO owner with tasks 1 to 3 pops twice while a thief steals a batch
/// (each task of a LIFO batch is claimed by its own CAS).
fn lifo_steal_batch_against_pop_pop() {
    let owner = worker(false, 4);
    push_tasks(&owner, 1, 3);
    let thief = batch_thief(owner.stealer(), false, false);
    let mut taken = Taken::none();
    pop(&owner, &mut taken);
    pop(&owner, &mut taken);
    finish(owner, taken, 3, vec![thief]);
}

/// A FIFO owner with tasks 1 to 3 pops twice while a thief steals a batch
/// and takes its first task (one CAS claims the whole FIFO batch).
fn fifo_steal_batch_and_pop_against_pop_pop() {
    let owner = worker(true, 4);
    push_tasks(&owner, 1, 3);
    let thief = batch_thief(owner.stealer(), true, true);
    let mut taken = Taken::none();
    pop(&owner, &mut taken);
    pop(&owner, &mut taken);
    finish(owner, taken, 3, vec![thief]);
}

/// Tasks 1 and 2; the owner pops twice while two thieves steal once each
/// (the registry's first chunk made before they start).
fn pop_pop_against_two_thieves() {
    let owner = worker(false, 4);
    let mut taken = Taken::none();
    make_the_first_record_chunk(&owner, 3, &mut taken);
    push(&owner, 1);
    push(&owner, 2);
    let first = thief(owner.stealer(), 1);
    let second = thief(owner.stealer(), 1);
    pop(&owner, &mut taken);
    pop(&owner, &mut taken);
    finish(owner, taken, 3, vec![first, second]);
}

/// Two thieves, and an owner that grows a 1-slot deque twice: thief 1 may
/// hold the first buffer and thief 2 the second when the owner retires the
/// second, so its scan must keep both.
fn owner_changes_buffer_twice_while_two_thieves_hold_slots() {
    let (owner, mut taken, thieves) = one_slot_owner_against_two_thieves(4);
    push(&owner, 2); // grows to 2 slots, retires the first buffer
    push(&owner, 3); // grows to 4 slots, retires the second
    pop(&owner, &mut taken);
    finish(owner, taken, 4, thieves);
}

/// The goal of the GenMC suite: an owner doing six operations, a grow and
/// a retire among them, against two thieves that steal once each. Capacity
/// 1, so the second push grows at once (copy, publish, retire the first
/// buffer, scan both thieves' slots, free it unless one holds it); then a
/// pop, a push and two pops around the last tasks. The registry's first
/// chunk is made before the thieves start (`make_the_first_record_chunk`).
fn six_owner_operations_with_a_grow_against_two_thieves() {
    let (owner, mut taken, thieves) = one_slot_owner_against_two_thieves(4);
    push(&owner, 2); // grows to 2 slots, retires the first buffer
    pop(&owner, &mut taken);
    push(&owner, 3);
    pop(&owner, &mut taken);
    pop(&owner, &mut taken);
    finish(owner, taken, 4, thieves);
}

/// The goal's smaller sibling: an owner doing four operations, a grow and
/// a retire among them (push, push that grows, pop, pop), against two
/// thieves that steal once each, the registry's chunk made first.
fn four_owner_operations_with_a_grow_against_two_thieves() {
    let (owner, mut taken, thieves) = one_slot_owner_against_two_thieves(3);
    push(&owner, 2); // grows to 2 slots, retires the first buffer
    pop(&owner, &mut taken);
    pop(&owner, &mut taken);
    finish(owner, taken, 3, thieves);
}

/// The owner fills a 1-slot lap with task 1; the allocation of the next
/// buffer, for its push of task 2, runs the owner's push of task 3 (a
/// global allocator that hands work to its own thread's deque, modelled by
/// the internal builds' allocation hook), while a thief steals once. The
/// nested push changes the buffer itself; the outer one must push into the
/// deque as it is now.
fn owner_push_nested_in_the_allocation_of_a_grow() {
    let owner = Rc::new(worker(false, 1));
    push(&owner, 1);
    let thief = thief(owner.stealer(), 1);
    let nested = Rc::clone(&owner);
    chase_lev::hooks::before_next_buffer_allocation(move || push(&nested, 3));
    push(&owner, 2); // the end of the lap: its allocation pushes task 3
    let owner = Rc::into_inner(owner).unwrap_or_else(|| fail("the nested push did not run"));
    finish(owner, Taken::none(), 3, vec![thief]);
}

/// Two pushers race at an injector's block end (three slots a block under
/// a model checker): tasks 1 and 2 are pushed and stolen first, so the
/// head and the tail are at the block's last slot; then one pusher claims
/// that slot and installs the next block, the other pushes into the new
/// one, and the main thread's steal, if it finds the slot claimed but not
/// yet written, abandons it (that push then pushes again).
fn injector_pushes_race_across_a_block_end() {
    let queue = injector();
    let mut taken = Taken::none();
    queue.push(Box::new(1));
    queue.push(Box::new(2));
    steal_from_injector(&queue, &mut taken);
    steal_from_injector(&queue, &mut taken);
    let shared = Shared(&*queue as *const Injector<Task>);
    let pusher = |task: u64| {
        let shared = shared.clone();
        spawn(move || {
            shared.get().push(Box::new(task));
            Taken::none()
        })
    };
    let pushers = vec![pusher(3), pusher(4)];
    steal_from_injector(&queue, &mut taken);
    finish_injector(queue, taken, 4, pushers);
}

/// Tasks 1 to 3 fill the first block, task 4 starts the second, and the
/// main thread steals task 1; then a thief and the main thread steal once
/// each (tasks 2 and 3): whoever takes task 3 moves the head on and frees
/// the first block, possibly while the other still reads it (the free is
/// then handed to that reader).
fn injector_steals_across_a_block_end_free_the_old_block() {
    let queue = injector_holding(4);
    let mut taken = Taken::none();
    steal_from_injector(&queue, &mut taken);
    let shared = Shared(&*queue as *const Injector<Task>);
    let thief = spawn(move || {
        let mut taken = Taken::none();
        steal_from_injector(shared.get(), &mut taken);
        taken
    });
    steal_from_injector(&queue, &mut taken);
    finish_injector(queue, taken, 4, vec![thief]);
}

/// Loom's shape of the steals across a block end: tasks 1 to 3 fill the
/// first block, task 4 starts the second, and the thief and the main thread
/// steal twice each at the same time (the port above takes task 1 first,
/// leaving one concurrent steal each): whoever takes task 3 moves the head
/// to the second block and frees the first, possibly while the other is
/// still reading task 1 or 2 of it.
fn injector_two_steals_each_across_a_block_end() {
    let queue = injector_holding(4);
    let thief = injector_thief_stealing_twice(&queue);
    let mut taken = Taken::none();
    steal_from_injector(&queue, &mut taken);
    steal_from_injector(&queue, &mut taken);
    finish_injector(queue, taken, 4, vec![thief]);
}

/// Three laps of a buffer of one slot, while a thief that started after
/// the first push steals once: the owner pops task 1 (or the thief takes
/// it), pushes task 2 into a new lap (the first buffer retired, kept as a
/// spare unless the thief's hazard holds it), pops it, and pushes task 3
/// into a third lap, which reuses the spare (a write to the slot the thief
/// may have read). The third task's pop is the drain's, after the join: it
/// races nothing (loom's scenario pops it before the join).
fn push_pop_three_laps_reusing_a_buffer_against_a_steal() {
    let owner = worker(false, 1);
    push(&owner, 1);
    let thief = thief(owner.stealer(), 1);
    let mut taken = Taken::none();
    pop(&owner, &mut taken);
    push(&owner, 2);
    pop(&owner, &mut taken);
    push(&owner, 3);
    finish(owner, taken, 3, vec![thief]);
}

/// The owner steals a batch from a second deque (filled by itself) into its
/// own while a thief steals from the owner's deque: the batch publishes the
/// owner's new `bottom` as a push does, so a thief that sees it sees the
/// copied task, or its read of the slot races the copy's write
/// (`batch-publish-fence`).
fn thief_of_the_destination_sees_the_batch() {
    let owner = worker(false, 4);
    let thief = thief(owner.stealer(), 1);
    let victim = worker(false, 4);
    push(&victim, 1);
    push(&victim, 2);
    let _ = victim.stealer().steal_batch(&owner);
    let mut taken = Taken::none();
    drain(&victim, &mut taken, 2);
    drop(victim);
    finish(owner, taken, 2, vec![thief]);
}

/// A client's store-buffering handshake: the main thread pushes, then,
/// behind a SeqCst fence, reads a flag; the thief sets the flag and steals.
/// They cannot both miss each other (the injector's steal fence:
/// `injector-steal-fence`).
fn injector_steal_that_misses_a_push_is_seen_by_the_pusher() {
    use std::sync::atomic::{fence, AtomicBool, Ordering::Relaxed, Ordering::SeqCst};
    let queue = injector();
    let flag = Box::new(AtomicBool::new(false));
    flag.store(false, Relaxed); // its initial store, where it stays
    let shared = Shared(&*queue as *const Injector<Task>);
    let flag_shared = Shared(&*flag as *const AtomicBool);
    let thief = spawn(move || {
        flag_shared.get().store(true, Relaxed);
        let mut taken = Taken::none();
        steal_from_injector(shared.get(), &mut taken);
        taken
    });
    queue.push(Box::new(1));
    fence(SeqCst);
    let pusher_saw_the_flag = flag.load(Relaxed);
    handshake_held(queue, thief.join(), pusher_saw_the_flag);
}

/// The end of both injector handshakes: the pusher saw the thief's flag or
/// the thief's steal took the push (not neither); then the queue drained,
/// and the one task taken exactly once.
fn handshake_held(queue: Box<Injector<Task>>, taken: Taken, pusher_saw_the_flag: bool) {
    if !pusher_saw_the_flag && taken.0[1] == 0 {
        fail("the pusher missed the thief's flag and the thief's steal missed the push");
    }
    finish_injector(queue, taken, 1, Vec::new());
}

/// Cost probe: one execution, no thread: push and pop (no hazard record).
fn probe_push_pop_on_one_thread() {
    let owner = worker(false, 4);
    push(&owner, 1);
    let mut taken = Taken::none();
    pop(&owner, &mut taken);
    finish(owner, taken, 1, Vec::new());
}

/// Cost probe: one execution, no thread: a steal on the main thread (which
/// claims its hazard record, making the registry's first chunk).
fn probe_steal_on_one_thread() {
    let owner = worker(false, 4);
    push(&owner, 1);
    let mut taken = Taken::none();
    taken.take_some(steal(&owner.stealer()));
    finish(owner, taken, 1, Vec::new());
}

/// More record holders than the first chunk of the hazard registry has
/// records (8 in the GenMC build): eight thieves, one after another, each
/// steal a task from a second deque and end without giving their records
/// back (so the records stay claimed, as those of threads still running
/// would). Then two thieves steal at once from the owner's deque while the
/// owner's push grows it: each thief finds the first chunk full and races
/// to publish the second (the loser frees its own), and the owner's scan
/// reads the first chunk's records and follows the link to the second,
/// where a thief's hazard may be.
fn two_thieves_add_a_record_chunk_while_the_owner_grows() {
    let warm_up = worker(false, 8);
    push_tasks(&warm_up, 1, 8);
    let mut taken = Taken::none();
    let mut thieves = 0;
    while thieves < 8 {
        let stealer = warm_up.stealer();
        // Not `spawn`: this thread keeps its record.
        let thief = spawn_keeping_the_record(move || {
            let mut taken = Taken::none();
            taken.take_some(steal(&stealer));
            taken
        });
        taken.add(thief.join());
        thieves += 1;
    }
    drain(&warm_up, &mut taken, 8);
    drop(warm_up);
    let owner = worker(false, 2);
    push(&owner, 9);
    push(&owner, 10);
    let first = thief(owner.stealer(), 1);
    let second = thief(owner.stealer(), 1);
    push(&owner, 11); // grows to 4 slots, retires the first buffer
    finish(owner, taken, 11, vec![first, second]);
}

/// A client's store-buffering handshake through SeqCst accesses alone (no
/// fence): the main thread pushes, then loads a flag with SeqCst; the
/// thief stores the flag with SeqCst, then steals. They cannot both miss
/// each other, as the push's CAS on the tail is SeqCst
/// (`injector-push-cas-seqcst`, proofs-notes/injector.md).
fn injector_steal_that_misses_a_push_is_seen_by_a_seqcst_flag() {
    use std::sync::atomic::{AtomicBool, Ordering::Relaxed, Ordering::SeqCst};
    let queue = injector();
    let flag = Box::new(AtomicBool::new(false));
    flag.store(false, Relaxed); // its initial store, where it stays
    let shared = Shared(&*queue as *const Injector<Task>);
    let flag_shared = Shared(&*flag as *const AtomicBool);
    let thief = spawn(move || {
        flag_shared.get().store(true, SeqCst);
        let mut taken = Taken::none();
        steal_from_injector(shared.get(), &mut taken);
        taken
    });
    queue.push(Box::new(1));
    let pusher_saw_the_flag = flag.load(SeqCst);
    handshake_held(queue, thief.join(), pusher_saw_the_flag);
}

// ------------------------------------------- loom's scenarios, under GenMC --
// Each as loom's scenario of the same name (model-tests/src/scenarios.rs),
// where the mutation matrix names it for a mutant.

/// A one-slot LIFO deque: the owner pushes and pops twice, the second push
/// starting a new lap (a buffer change and its scan), while a thief that
/// started first steals once (`record-publish-release` in loom's matrix).
fn push_pop_around_empty_across_a_lap_against_a_steal() {
    let owner = worker(false, 1);
    let thief = thief(owner.stealer(), 1);
    let mut taken = Taken::none();
    for task in 1..=2 {
        push(&owner, task);
        pop(&owner, &mut taken);
    }
    finish(owner, taken, 2, vec![thief]);
}

/// A FIFO owner holds task 1, pushes 2 and pops (task 1) while a thief
/// steals once: the deque holds a task throughout, so the thief must not
/// report it empty (`fifo-cas-seqcst`: the thief that reads the top the
/// pop wrote must see the push before it).
fn fifo_thief_that_sees_the_owners_pop_sees_the_push_before_it() {
    let owner = worker(true, 4);
    push(&owner, 1);
    let thief = thief_that_must_not_find_it_empty(owner.stealer());
    push(&owner, 2);
    let mut taken = Taken::none();
    pop(&owner, &mut taken);
    finish(owner, taken, 2, vec![thief]);
}

/// A FIFO deque bounded to 2 slots holds tasks 1 and 2 when a thief starts
/// stealing once; the owner pops (task 1), `try_push`es task 3 (which a
/// deque with room must accept) and pops again. The deque holds a task
/// throughout, so the thief must not report it empty (`steal-top-acquire`).
fn bounded_fifo_try_push_after_its_own_pop_against_a_thief() {
    let owner = bounded_worker(true, 2);
    let mut taken = Taken::none();
    for task in 1..=2 {
        if !try_push(&owner, task, &mut taken) {
            fail("a bounded deque with room refused a push");
        }
    }
    let thief = thief_that_must_not_find_it_empty(owner.stealer());
    pop(&owner, &mut taken);
    if !try_push(&owner, 3, &mut taken) {
        fail("a bounded deque with room refused a push");
    }
    pop(&owner, &mut taken);
    finish(owner, taken, 3, vec![thief]);
}

/// A FIFO owner holds task 1; a thief steals a batch while the owner
/// pushes tasks 2 and 3 (the batch copies tasks pushed after its first
/// look: `steal-bottom-acquire`).
fn fifo_steal_batch_against_push_push() {
    let owner = worker(true, 4);
    push(&owner, 1);
    let thief = batch_thief(owner.stealer(), true, false);
    push(&owner, 2);
    push(&owner, 3);
    finish(owner, Taken::none(), 3, vec![thief]);
}

/// An empty injector; a thief steals twice while the main thread pushes
/// tasks 1 and 2 (the write's release and acquire:
/// `injector-write-release`, `injector-write-acquire`).
fn injector_push_push_against_steal_steal() {
    let queue = injector();
    let thief = injector_thief_stealing_twice(&queue);
    queue.push(Box::new(1));
    queue.push(Box::new(2));
    finish_injector(queue, Taken::none(), 2, vec![thief]);
}

/// Tasks 1 and 2 in an injector (three slots a block); a thief steals a
/// batch into a FIFO worker and pops one while the main thread pushes task
/// 3, the block's last slot, and installs the next block
/// (`injector-next-release`, `injector-next-acquire`).
fn injector_steal_batch_and_pop_into_a_fifo_worker_against_a_push() {
    let queue = injector();
    queue.push(Box::new(1));
    queue.push(Box::new(2));
    let thief = injector_batch_thief(Shared(&*queue as *const Injector<Task>), true, true);
    queue.push(Box::new(3));
    finish_injector(queue, Taken::none(), 3, vec![thief]);
}

/// Tasks 1 to 3 fill an injector's block; a thief steals a batch into a
/// LIFO worker while the main thread steals once: whoever reads the block
/// last frees it (`injector-read-done-release`, `injector-destroy-acquire`).
fn injector_steal_batch_into_a_lifo_worker_against_a_steal() {
    let queue = injector();
    queue.push(Box::new(1));
    queue.push(Box::new(2));
    queue.push(Box::new(3));
    let thief = injector_batch_thief(Shared(&*queue as *const Injector<Task>), false, false);
    let mut taken = Taken::none();
    steal_from_injector(&queue, &mut taken);
    finish_injector(queue, taken, 3, vec![thief]);
}

/// Every scenario, by name.
const SCENARIOS: &[(&str, fn())] = &[
    ("probe_push_pop_on_one_thread", probe_push_pop_on_one_thread),
    ("probe_steal_on_one_thread", probe_steal_on_one_thread),
    (
        "push_push_pop_against_a_steal",
        push_push_pop_against_a_steal,
    ),
    (
        "prefilled_pop_pop_against_steal_steal",
        prefilled_pop_pop_against_steal_steal,
    ),
    (
        "push_push_pop_pop_against_steal_steal",
        push_push_pop_pop_against_steal_steal,
    ),
    (
        "one_task_pop_pop_against_a_steal",
        one_task_pop_pop_against_a_steal,
    ),
    (
        "push_pop_three_laps_reusing_a_buffer_against_a_steal",
        push_pop_three_laps_reusing_a_buffer_against_a_steal,
    ),
    (
        "thief_of_the_destination_sees_the_batch",
        thief_of_the_destination_sees_the_batch,
    ),
    ("grow_while_a_thief_steals", grow_while_a_thief_steals),
    (
        "grow_while_a_thief_steals_once",
        grow_while_a_thief_steals_once,
    ),
    (
        "grow_while_a_thief_steals_twice",
        grow_while_a_thief_steals_twice,
    ),
    (
        "shrink_and_retire_while_a_thief_steals",
        shrink_and_retire_while_a_thief_steals,
    ),
    (
        "lifo_steal_batch_against_pop_pop",
        lifo_steal_batch_against_pop_pop,
    ),
    (
        "fifo_steal_batch_and_pop_against_pop_pop",
        fifo_steal_batch_and_pop_against_pop_pop,
    ),
    ("pop_pop_against_two_thieves", pop_pop_against_two_thieves),
    (
        "owner_changes_buffer_twice_while_two_thieves_hold_slots",
        owner_changes_buffer_twice_while_two_thieves_hold_slots,
    ),
    (
        "six_owner_operations_with_a_grow_against_two_thieves",
        six_owner_operations_with_a_grow_against_two_thieves,
    ),
    (
        "four_owner_operations_with_a_grow_against_two_thieves",
        four_owner_operations_with_a_grow_against_two_thieves,
    ),
    (
        "owner_push_nested_in_the_allocation_of_a_grow",
        owner_push_nested_in_the_allocation_of_a_grow,
    ),
    (
        "injector_pushes_race_across_a_block_end",
        injector_pushes_race_across_a_block_end,
    ),
    (
        "injector_steals_across_a_block_end_free_the_old_block",
        injector_steals_across_a_block_end_free_the_old_block,
    ),
    (
        "injector_two_steals_each_across_a_block_end",
        injector_two_steals_each_across_a_block_end,
    ),
    (
        "injector_steal_that_misses_a_push_is_seen_by_the_pusher",
        injector_steal_that_misses_a_push_is_seen_by_the_pusher,
    ),
    (
        "injector_steal_that_misses_a_push_is_seen_by_a_seqcst_flag",
        injector_steal_that_misses_a_push_is_seen_by_a_seqcst_flag,
    ),
    (
        "two_thieves_add_a_record_chunk_while_the_owner_grows",
        two_thieves_add_a_record_chunk_while_the_owner_grows,
    ),
    (
        "push_pop_around_empty_across_a_lap_against_a_steal",
        push_pop_around_empty_across_a_lap_against_a_steal,
    ),
    (
        "fifo_thief_that_sees_the_owners_pop_sees_the_push_before_it",
        fifo_thief_that_sees_the_owners_pop_sees_the_push_before_it,
    ),
    (
        "bounded_fifo_try_push_after_its_own_pop_against_a_thief",
        bounded_fifo_try_push_after_its_own_pop_against_a_thief,
    ),
    (
        "fifo_steal_batch_against_push_push",
        fifo_steal_batch_against_push_push,
    ),
    (
        "injector_push_push_against_steal_steal",
        injector_push_push_against_steal_steal,
    ),
    (
        "injector_steal_batch_and_pop_into_a_fifo_worker_against_a_push",
        injector_steal_batch_and_pop_into_a_fifo_worker_against_a_push,
    ),
    (
        "injector_steal_batch_into_a_lifo_worker_against_a_steal",
        injector_steal_batch_into_a_lifo_worker_against_a_steal,
    ),
];

#[unsafe(no_mangle)]
fn miri_start(argc: isize, argv: *const *const u8) -> isize {
    let name = (argc > 1).then(|| {
        // SAFETY: Miri passes `argc` C strings.
        unsafe { CStr::from_ptr((*argv.add(1)).cast()) }
            .to_str()
            .unwrap_or_else(|_| fail("a scenario name in UTF-8"))
    });
    let Some(&(_, scenario)) = SCENARIOS.iter().find(|(known, _)| Some(*known) == name) else {
        let names: Vec<&str> = SCENARIOS.iter().map(|(name, _)| *name).collect();
        fail(&format!("name a scenario: {}", names.join(" ")));
    };
    chase_lev::genmc::start();
    scenario();
    0
}
