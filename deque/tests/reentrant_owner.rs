//! Operations nested in the callbacks of operations, on the same thread:
//! every pair of a point where the crate calls code it does not own (the
//! global allocator's `alloc` and `dealloc`, a panic hook) and an operation
//! that code may call on the same deque or injector.
//!
//! The global allocator of this binary forwards everything to `System`, and,
//! once armed with a *trap* on this thread, runs one nested operation when
//! the allocation or free the trap names comes: a buffer's slot array of a
//! given size (8 bytes a slot), or an injector block (the only allocations
//! over a kilobyte here). The trap disarms itself before it runs the nested
//! operation, so the nested operation's own allocations go straight through.
//! Each case:
//!
//! 1. makes a fresh subject (a worker, its stealer, an injector and a victim
//!    deque to batch-steal from) and brings it to the point (a full buffer,
//!    a lap's end, spares to free, a shrink one pop away, a block's end);
//! 2. arms the trap and runs the outer operation, which must spring it;
//! 3. takes every task left, and checks that every task made was taken
//!    exactly once, that the deque still works (a few thousand pushes and
//!    pops, grows and shrinks included), and that nothing is left.
//!
//! A use-after-free or double free shows natively as a crash or a task
//! taken twice or never, and under miri (default flags) as undefined
//! behaviour; a counter that wraps panics in this debug-asserted build
//! inside the allocator, which aborts the process. This binary has no test
//! harness (`harness = false` in `deque/Cargo.toml`): one thread runs the
//! cases in order, so that a trap meets only the allocations of its case.
//! The inventory of callback points and why each nesting is sound is in
//! proofs-notes/reclamation.md#reentrant-owner-operations.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::panic::{self, AssertUnwindSafe};
use std::ptr;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::SeqCst};

use chase_lev::{Injector, Steal, Stealer, Worker};

/// A task: numbered, and counted when it is dropped, so that a task dropped
/// twice (taken twice) or never (lost) shows natively; boxed, so that miri
/// reports the double free or the leak too.
#[derive(Debug, PartialEq)]
struct Task(Box<u64>);

impl Drop for Task {
    fn drop(&mut self) {
        DROPPED[*self.0 as usize].fetch_add(1, SeqCst);
    }
}

/// The most tasks one case makes.
const MOST_TASKS: usize = 16_384;

/// How many times each task was dropped, by number.
static DROPPED: [AtomicU8; MOST_TASKS] = [const { AtomicU8::new(0) }; MOST_TASKS];
/// The next task's number: how many tasks this case has made.
static MADE: AtomicU64 = AtomicU64::new(0);

fn task() -> Task {
    let id = MADE.fetch_add(1, SeqCst);
    assert!((id as usize) < MOST_TASKS, "a case made too many tasks");
    Task(Box::new(id))
}

/// Takes `task` (drops it, which counts it).
fn took(task: Task) {
    drop(task);
}

fn took_stolen(steal: Steal<Task>) {
    if let Steal::Success(task) = steal {
        took(task);
    }
}

// ----------------------------------------------------- the trap allocator --

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Callback {
    Alloc,
    Free,
}

/// Which allocation or free springs the trap.
#[derive(Clone, Copy, Debug)]
enum Size {
    /// The slot array of a buffer of this many slots (tasks are pointers).
    Slots(usize),
    /// An injector block (nothing else this large is allocated here).
    Block,
}

impl Size {
    fn matches(self, bytes: usize) -> bool {
        match self {
            Size::Slots(slots) => bytes == slots * size_of::<Task>(),
            Size::Block => bytes >= 1024,
        }
    }
}

#[derive(Clone, Copy)]
struct Trap {
    on: Callback,
    size: Size,
    nested: Nested,
}

thread_local! {
    static TRAP: Cell<Option<Trap>> = const { Cell::new(None) };
    static SPRUNG: Cell<bool> = const { Cell::new(false) };
    static SUBJECT: Cell<*const Subject> = const { Cell::new(ptr::null()) };
}

/// Runs the armed trap's nested operation if this callback is the one it
/// waits for.
fn spring(on: Callback, bytes: usize) {
    let Ok(Some(trap)) = TRAP.try_with(Cell::get) else {
        return;
    };
    if trap.on != on || !trap.size.matches(bytes) {
        return;
    }
    TRAP.set(None);
    SPRUNG.set(true);
    // SAFETY: the subject is set for the whole case, on this thread, and
    // outlives every armed trap (`Case::run` disarms before it drops).
    let subject = unsafe { &*SUBJECT.get() };
    (trap.nested.run)(subject);
}

struct TrapAllocator;

// SAFETY: every allocation and free is the system allocator's, unchanged; the
// trap only runs code before forwarding.
unsafe impl GlobalAlloc for TrapAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        spring(Callback::Alloc, layout.size());
        // SAFETY: forwarded from the caller.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        spring(Callback::Free, layout.size());
        // SAFETY: forwarded from the caller.
        unsafe { System.dealloc(pointer, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: TrapAllocator = TrapAllocator;

// --------------------------------------------------------------- subjects --

/// What a case works on. The nested operations reach it through `SUBJECT`.
struct Subject {
    worker: Worker<Task>,
    stealer: Stealer<Task>,
    injector: Injector<Task>,
    /// Another deque, with tasks, to batch-steal from into `worker`.
    victim: Worker<Task>,
    victim_stealer: Stealer<Task>,
}

impl Subject {
    fn new(worker: Worker<Task>) -> Subject {
        let victim = Worker::new_fifo_with_capacity(8);
        // 8: a batch of 4 grows a full 8-slot destination to 16.
        for _ in 0..8 {
            victim.push(task());
        }
        Subject {
            stealer: worker.stealer(),
            worker,
            injector: Injector::new(),
            victim_stealer: victim.stealer(),
            victim,
        }
    }

    /// Takes every task left anywhere, and checks the deque still works.
    fn drain_and_exercise(&self) {
        while let Some(task) = self.worker.pop() {
            took(task);
        }
        assert!(self.worker.is_empty());
        assert_eq!(self.worker.len(), 0);
        assert_eq!(self.stealer.steal(), Steal::Empty);
        while let Some(task) = self.victim.pop() {
            took(task);
        }
        loop {
            match self.injector.steal() {
                Steal::Success(task) => took(task),
                Steal::Empty => break,
                Steal::Retry => {}
            }
        }
        // The owner's counters and cached bounds are still right: grows,
        // moves to new laps and shrinks, with the counts checked.
        let rounds = if cfg!(miri) { 3 } else { 20 };
        let bound = self.worker.bound().unwrap_or(usize::MAX);
        for round in 0..rounds {
            let count = (1 << (round % 8 + 2)).min(bound);
            for _ in 0..count {
                self.worker.push(task());
            }
            assert_eq!(self.worker.len(), count);
            for _ in 0..count {
                took(self.worker.pop().expect("a task pushed above"));
            }
            assert_eq!(self.worker.pop(), None);
        }
    }
}

// -------------------------------------------------- the nested operations --

/// An operation the user's callback may run on the subject.
#[derive(Clone, Copy)]
struct Nested {
    name: &'static str,
    run: fn(&Subject),
}

const NESTED: &[Nested] = &[
    Nested {
        name: "push",
        run: |s| s.worker.push(task()),
    },
    Nested {
        name: "push 8 (grows)",
        run: |s| (0..8).for_each(|_| s.worker.push(task())),
    },
    Nested {
        name: "pop",
        run: |s| s.worker.pop().into_iter().for_each(took),
    },
    Nested {
        name: "pop every task",
        run: |s| std::iter::from_fn(|| s.worker.pop()).for_each(took),
    },
    Nested {
        name: "steal",
        run: |s| took_stolen(s.stealer.steal()),
    },
    Nested {
        name: "steal_batch into it",
        run: |s| {
            let _ = s.victim_stealer.steal_batch(&s.worker);
        },
    },
    Nested {
        name: "steal_batch_and_pop into it",
        run: |s| took_stolen(s.victim_stealer.steal_batch_and_pop(&s.worker)),
    },
    Nested {
        name: "injector push",
        run: |s| s.injector.push(task()),
    },
    Nested {
        name: "injector steal",
        run: |s| took_stolen(s.injector.steal()),
    },
    Nested {
        name: "injector steal_batch_and_pop into it",
        run: |s| took_stolen(s.injector.steal_batch_and_pop(&s.worker)),
    },
];

// ------------------------------------------------------------------ points --

/// A callback point: how to bring a subject there, the trap, and the outer
/// operation that must spring it.
struct Point {
    name: &'static str,
    make: fn() -> Subject,
    on: Callback,
    size: Size,
    /// The outer operation; called again (up to `tries` times in all) until
    /// the trap springs, for points the subject reaches after an unknown
    /// number of operations (an injector's block end).
    outer: fn(&Subject),
    tries: usize,
}

fn lifo(capacity: usize) -> Worker<Task> {
    Worker::new_lifo_with_capacity(capacity)
}

fn fifo(capacity: usize) -> Worker<Task> {
    Worker::new_fifo_with_capacity(capacity)
}

fn push_n(subject: &Subject, count: usize) {
    for _ in 0..count {
        subject.worker.push(task());
    }
}

/// 8 slots, full: the next push grows to 16, and so does a batch of 4 from
/// the victim.
fn full_of_eight(worker: Worker<Task>) -> Subject {
    let subject = Subject::new(worker);
    push_n(&subject, 8);
    subject
}

/// 8 slots, 7 tasks, `bottom` at the lap's end: the next push moves to a
/// new 8-slot buffer, allocating it and a spare.
fn at_the_end_of_a_lap(worker: Worker<Task>) -> Subject {
    let subject = Subject::new(worker);
    push_n(&subject, 8);
    took_stolen(subject.stealer.steal());
    subject
}

/// 8 slots, full, with two spare 8-slot buffers kept from a move to the
/// next lap: the next push grows to 16 and frees both spares.
fn full_with_spares(worker: Worker<Task>) -> Subject {
    let subject = at_the_end_of_a_lap(worker);
    subject.worker.push(task()); // the move: a spare, and the old buffer kept
    while subject.worker.len() < 8 {
        subject.worker.push(task());
    }
    subject
}

/// 16 slots, 3 tasks, one counted pop short of a shrink to 8.
fn one_pop_from_a_shrink(worker: Worker<Task>) -> Subject {
    let subject = Subject::new(worker);
    push_n(&subject, 9); // grown to 16 (the count starts at 8)
    assert_eq!(subject.worker.capacity(), 16);
    // Pops that leave fewer than 4 tasks count; 8 of them halve the buffer.
    while subject.worker.len() > 4 {
        took(subject.worker.pop().unwrap());
    }
    for _ in 0..7 {
        took(subject.worker.pop().unwrap()); // leaves 3: counted
        subject.worker.push(task());
    }
    assert_eq!(subject.worker.capacity(), 16);
    subject
}

/// A full 8-slot destination (`full_of_eight`), with tasks in the injector to
/// batch-steal.
fn full_destination_and_injector(worker: Worker<Task>) -> Subject {
    let subject = full_of_eight(worker);
    for _ in 0..16 {
        subject.injector.push(task());
    }
    subject
}

fn full_destination_with_spares_and_injector(worker: Worker<Task>) -> Subject {
    let subject = full_with_spares(worker);
    for _ in 0..16 {
        subject.injector.push(task());
    }
    subject
}

/// An injector with more tasks than a block holds.
fn injector_past_a_block() -> Subject {
    let subject = Subject::new(lifo(8));
    for _ in 0..100 {
        subject.injector.push(task());
    }
    subject
}

macro_rules! flavours {
    ($name:literal, $make:ident, $on:expr, $size:expr, $outer:expr) => {
        [
            Point {
                name: concat!($name, " (lifo)"),
                make: || $make(lifo(8)),
                on: $on,
                size: $size,
                outer: $outer,
                tries: 1,
            },
            Point {
                name: concat!($name, " (fifo)"),
                make: || $make(fifo(8)),
                on: $on,
                size: $size,
                outer: $outer,
                tries: 1,
            },
        ]
    };
}

fn points() -> Vec<Point> {
    use Callback::{Alloc, Free};
    let mut points = Vec::new();
    points.extend(flavours!(
        "push grows a full buffer: its allocation",
        full_of_eight,
        Alloc,
        Size::Slots(16),
        |s| s.worker.push(task())
    ));
    points.extend(flavours!(
        "push moves to the next lap: its allocation",
        at_the_end_of_a_lap,
        Alloc,
        Size::Slots(8),
        |s| s.worker.push(task())
    ));
    points.extend(flavours!(
        "push grows and frees the spares: the free",
        full_with_spares,
        Free,
        Size::Slots(8),
        |s| s.worker.push(task())
    ));
    points.extend(flavours!(
        "pop shrinks: its allocation",
        one_pop_from_a_shrink,
        Alloc,
        Size::Slots(8),
        |s| took(s.worker.pop().unwrap())
    ));
    points.extend(flavours!(
        "pop shrinks: the free of the old buffer",
        one_pop_from_a_shrink,
        Free,
        Size::Slots(16),
        |s| took(s.worker.pop().unwrap())
    ));
    points.extend(flavours!(
        "Stealer::steal_batch grows its destination: the allocation",
        full_of_eight,
        Alloc,
        Size::Slots(16),
        |s| {
            // `Retry` if a nested batch steal from the same victim claimed first.
            let _ = s.victim_stealer.steal_batch(&s.worker);
        }
    ));
    points.extend(flavours!(
        "Stealer::steal_batch_and_pop grows its destination: the allocation",
        full_of_eight,
        Alloc,
        Size::Slots(16),
        |s| took_stolen(s.victim_stealer.steal_batch_and_pop(&s.worker))
    ));
    points.extend(flavours!(
        "Stealer::steal_batch grows its destination: the free of the spares",
        full_with_spares,
        Free,
        Size::Slots(8),
        |s| {
            // `Retry` if a nested batch steal from the same victim claimed first.
            let _ = s.victim_stealer.steal_batch(&s.worker);
        }
    ));
    points.extend(flavours!(
        "Injector::steal_batch grows its destination: the allocation",
        full_destination_and_injector,
        Alloc,
        Size::Slots(16),
        |s| {
            let _ = s.injector.steal_batch(&s.worker);
        }
    ));
    points.extend(flavours!(
        "Injector::steal_batch_and_pop grows its destination: the free of the spares",
        full_destination_with_spares_and_injector,
        Free,
        Size::Slots(8),
        |s| took_stolen(s.injector.steal_batch_and_pop(&s.worker))
    ));
    points.push(Point {
        name: "Injector::push links a new block: its allocation",
        make: || Subject::new(lifo(8)),
        on: Alloc,
        size: Size::Block,
        outer: |s| s.injector.push(task()),
        tries: 200,
    });
    points.push(Point {
        name: "Injector::steal finishes a block: its free",
        make: injector_past_a_block,
        on: Free,
        size: Size::Block,
        outer: |s| took_stolen(s.injector.steal()),
        tries: 200,
    });
    points.push(Point {
        name: "Injector::steal_batch_and_pop crosses a block end: the free",
        make: injector_past_a_block,
        on: Free,
        size: Size::Block,
        outer: |s| took_stolen(s.injector.steal_batch_and_pop(&s.worker)),
        tries: 200,
    });
    points
}

// ------------------------------------------------------------------- cases --

fn reset_counts() {
    let made = MADE.swap(0, SeqCst) as usize;
    for count in &DROPPED[..made] {
        count.store(0, SeqCst);
    }
}

/// Every task made so far was dropped exactly once: taken and dropped, or
/// dropped by the operation it was handed to (a push that panics drops its
/// task while it unwinds).
fn every_task_taken_once() -> Result<(), String> {
    let made = MADE.load(SeqCst) as usize;
    let wrong: Vec<(usize, u8)> = (0..made)
        .map(|id| (id, DROPPED[id].load(SeqCst)))
        .filter(|&(_, count)| count != 1)
        .take(8)
        .collect();
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(format!("of {made} tasks, dropped (task, times): {wrong:?}"))
    }
}

/// Runs `outer` on a fresh subject with the trap armed, then drains and
/// checks it.
fn run_case(
    make: fn() -> Subject,
    arm: impl Fn() -> Option<Trap>,
    outer: impl Fn(&Subject),
    tries: usize,
) -> Result<(), String> {
    reset_counts();
    let subject = make();
    SUBJECT.set(&subject);
    SPRUNG.set(false);
    let mut sprung = false;
    for _ in 0..tries {
        TRAP.set(arm());
        outer(&subject);
        TRAP.set(None);
        sprung = SPRUNG.get();
        if sprung {
            break;
        }
    }
    subject.drain_and_exercise();
    SUBJECT.set(ptr::null());
    drop(subject);
    if !sprung {
        return Err("the outer operation never reached the callback".into());
    }
    every_task_taken_once()
}

/// The panic points: the crate's own panics, raised with the deque in use,
/// with a panic hook that runs the nested operation. (Nested operations
/// that would panic again, which aborts whatever the crate does, are left
/// out: a push on the full bounded worker.)
fn run_panic_case(
    make: fn() -> Subject,
    outer: fn(&Subject),
    nested: Nested,
) -> Result<(), String> {
    reset_counts();
    let subject = make();
    SUBJECT.set(&subject);
    SPRUNG.set(false);
    panic::set_hook(Box::new(move |_| {
        SPRUNG.set(true);
        // SAFETY: as in `spring`: set for the whole case.
        (nested.run)(unsafe { &*SUBJECT.get() });
    }));
    let unwound = panic::catch_unwind(AssertUnwindSafe(|| outer(&subject))).is_err();
    let _ = panic::take_hook();
    subject.drain_and_exercise();
    SUBJECT.set(ptr::null());
    drop(subject);
    if !unwound || !SPRUNG.get() {
        return Err("the outer operation did not panic".into());
    }
    every_task_taken_once()
}

fn bounded_and_full() -> Subject {
    let subject = Subject::new(Worker::new_lifo_bounded(8));
    push_n(&subject, 8);
    subject
}

fn main() {
    // A case's name, or part of it, runs only the cases that match (each in
    // a process of its own, say, to see each one that crashes).
    let filter = std::env::args().skip(1).find(|arg| !arg.starts_with('-'));
    let selected = |name: &str| filter.as_deref().is_none_or(|part| name.contains(part));
    let mut passed = 0;
    let mut failed = Vec::new();
    let mut record = |name: String, result: Result<(), String>| match result {
        Ok(()) => {
            println!("{name} ... ok");
            passed += 1;
        }
        Err(why) => {
            println!("{name} ... FAILED: {why}");
            failed.push(name);
        }
    };
    // This thread's hazard record (its first steal allocates a chunk of
    // records) and the injector's statics, before any trap.
    let warm_up = Subject::new(lifo(8));
    warm_up.worker.push(task());
    took_stolen(warm_up.stealer.steal());
    warm_up.drain_and_exercise();
    drop(warm_up);

    for point in points() {
        for nested in NESTED {
            let name = format!("{} / nested {}", point.name, nested.name);
            if !selected(&name) {
                continue;
            }
            println!("{name}");
            let trap = Trap {
                on: point.on,
                size: point.size,
                nested: *nested,
            };
            let result = run_case(point.make, || Some(trap), point.outer, point.tries);
            record(name, result);
        }
    }
    type PanicPoint = (&'static str, fn() -> Subject, fn(&Subject));
    let panic_points: [PanicPoint; 2] = [
        (
            "push on a full bounded worker panics",
            bounded_and_full,
            |s| s.worker.push(task()),
        ),
        (
            "a batch steal with a zero limit panics",
            || full_of_eight(lifo(8)),
            |s| {
                let _ = s.victim_stealer.steal_batch_with_limit(&s.worker, 0);
            },
        ),
    ];
    for (point, make, outer) in panic_points {
        for nested in NESTED
            .iter()
            .filter(|nested| !nested.name.starts_with("push"))
        {
            let name = format!("{point}: its panic hook / nested {}", nested.name);
            if !selected(&name) {
                continue;
            }
            println!("{name}");
            record(name, run_panic_case(make, outer, *nested));
        }
    }
    println!("{passed} passed, {} failed", failed.len());
    if !failed.is_empty() {
        for name in &failed {
            println!("failed: {name}");
        }
        std::process::exit(1);
    }
}
