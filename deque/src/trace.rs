//! (Mutant builds only.) The event log: every access of a named atomic
//! (`atomic.rs`'s wrappers) and of a buffer's slot (`buffer.rs`), with the
//! value it read or wrote and the thread that did it, so that the fence lab
//! can print a counterexample a person can follow (loom's own trace shows no
//! values). The algorithm's functions record nothing themselves; the model
//! adds its notes (which operation each thread calls, what it returns).
//!
//! The log is a thread-local of the OS thread: loom and shuttle run all of a
//! model's threads on the OS thread that started the model, so it holds the
//! execution's events in their order, and when the model checker stops an
//! execution in the middle (a race on a slot cell) the events up to that
//! point can still be read here. It is plain memory, outside the model: a
//! record is no operation loom or shuttle can see.
//!
//! The lines are `"<thread>: <event>"`, the event one of
//! - `load NAME = V (ORDERING)`, `store NAME := V (ORDERING)`;
//! - `CAS NAME A -> B won (ORDERING)`, `CAS NAME A -> B lost, NAME = V (ORDERING)`;
//! - `fetch_add NAME A -> B (ORDERING)` (and `fetch_or`, `swap`): the value
//!   read, then the value written;
//! - `fence (ORDERING)`;
//! - `write slot I`, `read slot I`, `copy slot I`;
//! - or a note of the model's.
//!
//! An atomic is named where it is made (`Named::named`); a second atomic of
//! the same name (another thread's hazard slot, another block's slot state)
//! is `NAME#2`, and so on, in the order the execution first touches them. A
//! pointer is shown as `null` or `@N`, N numbering the addresses in the
//! order the log first shows them (addresses change from run to run, these
//! numbers do not), and `+K` for the tag in its low bits where the atomic
//! has one (the injector's ticket counts).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;

#[derive(Default)]
struct Log {
    events: Vec<String>,
    /// The label of each atomic, by the number its `Label` holds.
    atomics: Vec<String>,
    /// How many atomics of each name the log has labelled.
    instances: HashMap<&'static str, usize>,
    /// The number of each pointer value, by address, and how many numbers
    /// have been given (an address freed and allocated again gets a new
    /// one, see [`freed`]).
    pointers: Pointers,
}

#[derive(Default)]
pub(crate) struct Pointers {
    numbers: HashMap<usize, usize>,
    given: usize,
}

/// Which label of the log an atomic has, kept in the atomic (a plain std
/// atomic, outside the model): 0 for none yet, else the log's generation in
/// the high half and the label's number plus one in the low half. Labels
/// are not looked up by address, since an atomic freed during an
/// execution and a new one made at its address are two atomics; and all
/// zeroes (a zeroed injector block) is a valid `Label`.
pub(crate) struct Label(std::sync::atomic::AtomicU64);

impl Label {
    pub(crate) const fn new() -> Label {
        Label(std::sync::atomic::AtomicU64::new(0))
    }
}

std::thread_local! {
    static ENABLED: Cell<bool> = const { Cell::new(false) };
    /// Numbers the logs of this OS thread (each `set_event_log` starts a new
    /// one), so that a `Label` given by an earlier log counts as none.
    static GENERATION: Cell<u64> = const { Cell::new(0) };
    static LOG: RefCell<Log> = RefCell::new(Log::default());
}

/// (Mutant builds only.) Clears this OS thread's event log and turns the
/// recording on or off for the executions run from now on (on, each is
/// several times slower).
pub fn set_event_log(on: bool) {
    LOG.with(|log| *log.borrow_mut() = Log::default());
    GENERATION.with(|generation| generation.set(generation.get() + 1));
    ENABLED.with(|enabled| enabled.set(on));
}

/// (Mutant builds only.) Takes the events recorded on this OS thread since
/// the log was last cleared (`set_event_log`).
pub fn take_thread_trace() -> Vec<String> {
    LOG.with(|log| std::mem::take(&mut log.borrow_mut().events))
}

/// (Mutant builds only.) A copy of the events recorded so far.
pub fn logged_events() -> Vec<String> {
    LOG.with(|log| log.borrow().events.clone())
}

/// Whether this OS thread records events now.
#[inline(always)]
pub(crate) fn enabled() -> bool {
    ENABLED.with(Cell::get)
}

fn push(event: String) {
    if let Some(thread) = crate::sync::thread_label() {
        let line = format!("{thread}: {event}");
        LOG.with(|log| log.borrow_mut().events.push(line));
    }
}

/// (Mutant builds only.) Adds a line of the model's own (a call, a
/// return), when the log is on.
pub fn log_note(event: String) {
    if enabled() {
        push(event);
    }
}

/// Records an access of a slot (`what` is `read`, `write` or `copy`).
#[inline(always)]
pub(crate) fn slot(what: &str, index: i64) {
    if enabled() {
        push(format!("{what} slot {index}"));
    }
}

/// Shows values in an event: the log's numbering of pointers.
pub(crate) struct Shower<'a> {
    pointers: &'a mut Pointers,
}

impl Shower<'_> {
    /// A pointer whose low bits under `tags` are a tag, not address.
    pub(crate) fn pointer(&mut self, address: usize, tags: usize) -> String {
        let (base, tag) = (address & !tags, address & tags);
        let shown = if base == 0 {
            "null".to_string()
        } else {
            let pointers = &mut *self.pointers;
            let number = *pointers.numbers.entry(base).or_insert_with(|| {
                pointers.given += 1;
                pointers.given
            });
            format!("@{number}")
        };
        if tag == 0 {
            shown
        } else {
            format!("{shown}+{tag}")
        }
    }
}

/// Records an access of the atomic with `label` called `name` (`None`: an
/// atomic made without a name, as the std build's zeroed blocks): `event`
/// gets its label and a `Shower` for its values.
#[inline(always)]
pub(crate) fn access(
    name: Option<&'static str>,
    label: &Label,
    event: impl FnOnce(&str, &mut Shower<'_>) -> String,
) {
    if enabled() {
        record_access(name.unwrap_or("atomic"), label, event);
    }
}

fn record_access(
    name: &'static str,
    label: &Label,
    event: impl FnOnce(&str, &mut Shower<'_>) -> String,
) {
    use std::sync::atomic::Ordering::Relaxed;
    let generation = GENERATION.with(Cell::get);
    let event = LOG.with(|log| {
        let log = &mut *log.borrow_mut();
        // Ordering: Relaxed: the observer's own std atomic, outside the
        // model, read and written only by the thread that records
        // (proofs-notes/model.md#which-model).
        let mark = label.0.load(Relaxed);
        let number = if mark >> 32 == generation && mark & 0xffff_ffff != 0 {
            (mark & 0xffff_ffff) as usize - 1
        } else {
            let count = log.instances.entry(name).or_insert(0);
            *count += 1;
            log.atomics.push(if *count == 1 {
                name.to_string()
            } else {
                format!("{name}#{count}")
            });
            let number = log.atomics.len() - 1;
            let mark = (generation << 32) | (number as u64 + 1);
            // Ordering: Relaxed, as above (proofs-notes/model.md#which-model).
            label.0.store(mark, Relaxed);
            number
        };
        let label = log.atomics[number].clone();
        event(
            &label,
            &mut Shower {
                pointers: &mut log.pointers,
            },
        )
    });
    push(event);
}

/// Forgets the number of the pointer `address`, which is being freed: if
/// the allocator hands the address out again, the log shows it as a new
/// pointer, whatever the allocator does (so that the pictures do not depend
/// on the heap's history before the model ran).
pub(crate) fn freed(address: usize) {
    if enabled() {
        LOG.with(|log| log.borrow_mut().pointers.numbers.remove(&address));
    }
}

/// Records a fence.
#[inline(always)]
pub(crate) fn fence(ordering: crate::sync::Ordering) {
    if enabled() {
        push(format!("fence ({ordering:?})"));
    }
}
