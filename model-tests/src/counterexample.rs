//! Turns the deque's event log of a failing execution into a numbered
//! interleaving a person can follow: which thread ran which operation, the
//! value each load read and which earlier store wrote it, and whether a newer
//! store to the same variable existed that the load did not see (the mark of
//! weak memory: in a sequentially consistent run every load reads the newest
//! store).

use std::collections::HashMap;
use std::fmt::Write as _;

/// One step of the interleaving.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The thread's role (`owner`, `thief 1`, ...).
    pub thread: String,
    /// What it did, as the deque's log (or the model's note) says.
    pub event: String,
    /// For a load: which store it read, and whether it was the newest.
    pub read_from: Option<String>,
    /// Whether this is a model note (an operation's call or return) rather
    /// than one of the deque's accesses.
    pub is_note: bool,
    /// The values this step read from atomics (a load, a CAS, a
    /// read-modify-write), with the store each read (what `read_from` says,
    /// for the pictures of `crate::diagram`).
    pub reads: Vec<Read>,
    /// A compare-and-swap in this step.
    pub cas: Option<Cas>,
}

/// Which store a load read. The deque's log has values, not sources, so the
/// source is derived: the last store of that value to that variable earlier
/// in the log (the log is in execution order: loom runs one thread at a
/// time and an event is logged right after its access).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// No store of that value yet: the variable's initial value.
    Initial,
    /// The store made at this step (numbered from 1, as printed).
    Step(usize),
}

/// One read of an atomic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Read {
    /// The atomic's name in the log (`top`, `bottom`, `hazard#2`, ...).
    pub variable: String,
    /// The value read, as the log shows it (`3`, `@1`, `null`).
    pub value: String,
    /// The store it read.
    pub source: Source,
    /// STALE: the newest store to the variable before the load, when that is
    /// not the one it read (a sequentially consistent run never does this).
    pub missed: Option<Missed>,
}

/// The newer store a STALE load did not see.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Missed {
    /// Its step.
    pub step: usize,
    /// The value it stored.
    pub value: String,
}

/// A compare-and-swap (`CAS top 0 -> 1 won (SeqCst)`,
/// `CAS top 0 -> 1 lost, top = 1 (Relaxed)`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cas {
    /// The atomic it was on.
    pub variable: String,
    /// The value it expected.
    pub expected: String,
    /// Whether it swapped.
    pub won: bool,
    /// What it read: the expected value if it won, the value it found if it
    /// lost, with the store it came from.
    pub read: Option<Read>,
    /// A CAS that lost, lost to this step: the earlier CAS that won with the
    /// same expected value, or else the newest store to the variable before it.
    pub lost_to: Option<usize>,
}

/// A store to an atomic, as seen in the log.
#[derive(Clone)]
struct Store {
    step: usize,
    value: String,
    /// For a store made by a won CAS: the value that CAS expected.
    by_cas_from: Option<String>,
}

/// What one logged access did to its atomic.
#[derive(Debug, Default, PartialEq, Eq)]
struct Access {
    variable: String,
    /// The value read, if the access read one (a CAS's is in `cas`).
    read: Option<String>,
    /// The value written, if it wrote one.
    wrote: Option<String>,
    /// A CAS: expected, won, and (lost) the value found.
    cas: Option<(String, bool, Option<String>)>,
}

/// The words that begin an access in the deque's log (`deque/src/trace.rs`);
/// any other line is a note of the model's.
const ACCESSES: [&str; 9] = [
    "load",
    "store",
    "CAS",
    "swap",
    "fetch_add",
    "fetch_or",
    "fence",
    "read",
    "write",
];

/// Parses one access of the log: `load NAME = V (ORD)`, `store NAME := V
/// (ORD)`, `CAS NAME A -> B won (ORD)`, `CAS NAME A -> B lost, NAME = V
/// (ORD)`, `swap|fetch_add|fetch_or NAME A -> B (ORD)`. Fences and slot
/// accesses touch no atomic: `None`.
fn access(event: &str) -> Option<Access> {
    let words: Vec<&str> = event
        .split_whitespace()
        .map(|word| word.trim_end_matches(','))
        .collect();
    let word = |at: usize| words.get(at).map(|word| word.to_string());
    let variable = word(1)?;
    match words[0] {
        "load" if words.get(2) == Some(&"=") => Some(Access {
            variable,
            read: word(3),
            ..Access::default()
        }),
        "store" if words.get(2) == Some(&":=") => Some(Access {
            variable,
            wrote: word(3),
            ..Access::default()
        }),
        "CAS" if words.get(3) == Some(&"->") => {
            let (expected, new) = (word(2)?, word(4)?);
            match words.get(5) {
                Some(&"won") => Some(Access {
                    variable,
                    wrote: Some(new),
                    cas: Some((expected, true, None)),
                    ..Access::default()
                }),
                Some(&"lost") => Some(Access {
                    variable,
                    cas: Some((expected, false, word(8))),
                    ..Access::default()
                }),
                _ => None,
            }
        }
        "swap" | "fetch_add" | "fetch_or" if words.get(3) == Some(&"->") => Some(Access {
            variable,
            read: word(2),
            wrote: word(4),
            ..Access::default()
        }),
        _ => None,
    }
}

/// Parses the log (`"<thread id>: <event>"` lines) into steps, naming the
/// threads by the roles the model's notes give them.
pub fn steps(trace: &[String]) -> Vec<Step> {
    let roles = roles(trace);
    let mut stores: HashMap<String, Vec<Store>> = HashMap::new();
    let mut steps = Vec::new();
    for line in trace {
        let (thread, event) = line.split_once(": ").unwrap_or(("?", line.as_str()));
        let role = roles
            .get(thread)
            .cloned()
            .unwrap_or_else(|| thread.to_string());
        let is_note = is_note(event);
        let number = steps.len() + 1;
        let mut reads = Vec::new();
        let mut cas = None;
        if let Some(access) = access(event).filter(|_| !is_note) {
            let before = stores.get(&access.variable).map(Vec::as_slice);
            if let Some(value) = &access.read {
                reads.push(read(&access.variable, value, before));
            }
            if let Some((expected, won, found)) = &access.cas {
                let seen = if *won { Some(expected) } else { found.as_ref() };
                let store_list = before.unwrap_or(&[]);
                let lost_to = (!won)
                    .then(|| {
                        store_list
                            .iter()
                            .rev()
                            .find(|store| store.by_cas_from.as_ref() == Some(expected))
                            .or(store_list.last())
                            .map(|store| store.step)
                    })
                    .flatten();
                cas = Some(Cas {
                    variable: access.variable.clone(),
                    expected: expected.clone(),
                    won: *won,
                    read: seen.map(|value| read(&access.variable, value, before)),
                    lost_to,
                });
            }
            if let Some(value) = access.wrote {
                stores.entry(access.variable).or_default().push(Store {
                    step: number,
                    value,
                    by_cas_from: access.cas.map(|(expected, _, _)| expected),
                });
            }
        }
        let mut step = Step {
            thread: role,
            event: event.to_string(),
            read_from: None,
            is_note,
            reads,
            cas,
        };
        step.read_from = read_from(&step);
        steps.push(step);
    }
    steps
}

/// What a step read, in words (the text trace's line under it).
fn read_from(step: &Step) -> Option<String> {
    let reads: Vec<&Read> = step
        .reads
        .iter()
        .chain(step.cas.iter().filter_map(|cas| cas.read.as_ref()))
        .collect();
    (!reads.is_empty()).then(|| {
        reads
            .into_iter()
            .map(describe_read)
            .collect::<Vec<_>>()
            .join("; ")
    })
}

/// The atomics of the hazard registry's list of records (reclamation.rs).
const REGISTRY: [&str; 3] = ["records", "records.in_use", "records.next"];

/// `steps` with each thief's registration folded into one step: the
/// accesses to the registry's list of records that a steal makes to claim
/// its thread's hazard record, the first time the thread steals. They are
/// in every counterexample with a thief and belong to none of their
/// lessons except the registry's own, so a run of them (consecutive steps
/// of one thread inside one of its steals) becomes the access
/// `registers its hazard record (N accesses)`. The steps are numbered
/// again, and every reference to a folded step (the store a load read, the
/// newer store it missed, the CAS a CAS lost to) points at its fold. The
/// owner's scans of the list, outside any steal, are not folded.
pub fn fold_registration(steps: Vec<Step>) -> Vec<Step> {
    let mut stealing: HashMap<String, bool> = HashMap::new();
    let mut in_registration: Vec<bool> = steps
        .iter()
        .map(|step| {
            if step.is_note && step.event.contains(" calls ") {
                let call = step.event.split(" calls ").nth(1).unwrap_or("");
                stealing.insert(step.thread.clone(), call.starts_with("steal"));
            }
            !step.is_note
                && stealing.get(&step.thread).copied().unwrap_or(false)
                && step
                    .event
                    .split_whitespace()
                    .nth(1)
                    .is_some_and(|variable| REGISTRY.contains(&variable))
        })
        .collect();
    // A run that only loads is not a registration but a scan of the list
    // (a batch steal's destination that grows retires its old buffer): the
    // registration claims a record, so its run writes.
    let mut start = 0;
    while start < steps.len() {
        let same_run = |at: usize| in_registration[at] && steps[at].thread == steps[start].thread;
        let end = (start..steps.len())
            .find(|&at| !same_run(at))
            .unwrap_or(steps.len());
        let claims = steps[start..end]
            .iter()
            .any(|step| step.cas.as_ref().is_some_and(|cas| cas.won));
        if !claims {
            in_registration[start..end].fill(false);
        }
        start = end.max(start + 1);
    }
    // `number[i]`: the new number of old step i + 1.
    let mut number = Vec::with_capacity(steps.len());
    let mut folded: Vec<Step> = Vec::new();
    let mut run = 0;
    for (index, step) in steps.into_iter().enumerate() {
        let continues = in_registration[index]
            && index > 0
            && in_registration[index - 1]
            && folded.last().is_some_and(|last| last.thread == step.thread);
        if continues {
            run += 1;
            let last = folded.last_mut().expect("a run has a first step");
            last.event = format!("registers its hazard record ({run} accesses)");
        } else {
            run = 1;
            if in_registration[index] {
                folded.push(Step {
                    thread: step.thread,
                    event: "registers its hazard record (1 access)".to_string(),
                    read_from: None,
                    is_note: false,
                    reads: Vec::new(),
                    cas: None,
                });
            } else {
                folded.push(step);
            }
        }
        number.push(folded.len());
    }
    let renumber = |step: usize| number[step - 1];
    for step in &mut folded {
        let cas_read = step.cas.as_mut().and_then(|cas| cas.read.as_mut());
        for read in step.reads.iter_mut().chain(cas_read) {
            if let Source::Step(source) = read.source {
                read.source = Source::Step(renumber(source));
            }
            if let Some(missed) = &mut read.missed {
                missed.step = renumber(missed.step);
            }
        }
        if let Some(cas) = &mut step.cas {
            cas.lost_to = cas.lost_to.map(renumber);
        }
        step.read_from = read_from(step);
    }
    folded
}

/// Notes are written by the model (`crate::scenarios`): whatever is not one
/// of the deque's accesses.
fn is_note(event: &str) -> bool {
    let first = event.split_whitespace().next().unwrap_or("");
    !ACCESSES.contains(&first)
}

/// The role a note names: the words before ` calls `, `'s ` or ` starts`
/// (`owner`, `thief 1`, `main`).
fn role_of(note: &str) -> String {
    [" calls ", "'s ", " starts"]
        .iter()
        .filter_map(|separator| note.find(separator))
        .min()
        .map_or_else(
            || {
                note.split_whitespace()
                    .take(2)
                    .collect::<Vec<_>>()
                    .join(" ")
            },
            |end| note[..end].to_string(),
        )
}

/// Maps thread ids to roles, from the first note each thread wrote.
fn roles(trace: &[String]) -> HashMap<String, String> {
    let mut roles = HashMap::new();
    for line in trace {
        if let Some((thread, event)) = line.split_once(": ") {
            if is_note(event) && !roles.contains_key(thread) {
                roles.insert(thread.to_string(), role_of(event));
            }
        }
    }
    roles
}

/// The read of `value` from `variable`, given the stores to it so far: it
/// read the last store of that value (or the initial value), and it is STALE
/// if a newer store to the variable came before it.
fn read(variable: &str, value: &str, stores: Option<&[Store]>) -> Read {
    let stores = stores.unwrap_or(&[]);
    let source = stores.iter().rposition(|store| store.value == value);
    let missed = match (source, stores.last()) {
        (Some(index), _) if index + 1 == stores.len() => None,
        (_, newest) => newest.map(|newest| Missed {
            step: newest.step,
            value: newest.value.clone(),
        }),
    };
    Read {
        variable: variable.to_string(),
        value: value.to_string(),
        source: source.map_or(Source::Initial, |index| Source::Step(stores[index].step)),
        missed,
    }
}

fn describe_read(read: &Read) -> String {
    let Read {
        variable, value, ..
    } = read;
    match (read.source, &read.missed) {
        (Source::Initial, None) => {
            format!("{variable} = {value}: the initial value, nothing stored yet")
        }
        (Source::Initial, Some(missed)) => format!(
            "{variable} = {value}: the initial value, STALE: step {} had already stored {}",
            missed.step, missed.value
        ),
        (Source::Step(step), Some(missed)) => format!(
            "{variable} = {value}: written at step {step}, STALE: step {} had already stored {}",
            missed.step, missed.value
        ),
        (Source::Step(step), None) => {
            format!("{variable} = {value}: written at step {step} (the newest)")
        }
    }
}

/// The steps as numbered lines: notes flush left, the deque's atomic
/// accesses indented under them, each load followed by what it read.
pub fn render(steps: &[Step]) -> String {
    let width = steps
        .iter()
        .map(|step| step.thread.len())
        .max()
        .unwrap_or(5);
    let mut out = String::new();
    for (index, step) in steps.iter().enumerate() {
        let event = if step.is_note {
            let rest = step.event.strip_prefix(&step.thread).unwrap_or(&step.event);
            rest.trim_start_matches("'s").trim_start().to_string()
        } else {
            format!("    {}", step.event)
        };
        let _ = writeln!(out, "{:>3}. {:<width$}  {}", index + 1, step.thread, event);
        if let Some(read_from) = &step.read_from {
            let _ = writeln!(out, "     {:<width$}        read {}", "", read_from);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|line| line.to_string()).collect()
    }

    #[test]
    fn threads_are_named_by_the_role_of_their_first_note() {
        let steps = steps(&trace(&[
            "ThreadId(0): owner calls pop()",
            "ThreadId(1): thief 1 calls steal()",
            "ThreadId(1): load top = 0 (Acquire)",
            "ThreadId(2): main calls push(task 1)",
        ]));
        assert_eq!(steps[2].thread, "thief 1");
        assert!(!steps[2].is_note);
        assert_eq!(steps[3].thread, "main");
    }

    #[test]
    fn a_load_that_misses_a_newer_store_is_marked_stale() {
        let steps = steps(&trace(&[
            "ThreadId(0): owner calls pop()",
            "ThreadId(1): thief 1 calls steal()",
            "ThreadId(0): store bottom := 1 (Relaxed)",
            "ThreadId(1): load bottom = 2 (Acquire)",
        ]));
        let read = steps[3].read_from.as_deref().unwrap();
        assert!(
            read.contains("STALE: step 3 had already stored 1"),
            "{read}"
        );
    }

    #[test]
    fn a_cas_that_won_read_the_store_of_the_value_it_expected() {
        let steps = steps(&trace(&[
            "ThreadId(1): thief 1 calls steal()",
            "ThreadId(1): CAS top 0 -> 1 won (SeqCst)",
            "ThreadId(2): thief 2 calls steal()",
            "ThreadId(2): CAS top 1 -> 2 won (SeqCst)",
        ]));
        let read = steps[3].cas.as_ref().and_then(|cas| cas.read.clone());
        assert_eq!(
            read.map(|read| (read.source, read.missed)),
            Some((Source::Step(2), None))
        );
    }

    #[test]
    fn a_cas_that_lost_lost_to_the_cas_that_won_the_same_index() {
        let steps = steps(&trace(&[
            "ThreadId(1): thief 1 calls steal()",
            "ThreadId(1): CAS top 0 -> 1 won (SeqCst)",
            "ThreadId(1): CAS top 1 -> 2 won (SeqCst)",
            "ThreadId(0): owner calls pop()",
            "ThreadId(0): CAS top 0 -> 1 lost, top = 2 (Relaxed)",
        ]));
        let cas = steps[4].cas.as_ref().expect("a CAS");
        assert!(!cas.won);
        assert_eq!(cas.lost_to, Some(2));
        assert_eq!(
            cas.read
                .as_ref()
                .map(|read| (read.value.as_str(), read.source)),
            Some(("2", Source::Step(3)))
        );
    }

    #[test]
    fn a_load_of_the_newest_store_names_it() {
        let steps = steps(&trace(&[
            "ThreadId(0): owner calls push(task 1)",
            "ThreadId(0): store bottom := 1 (Relaxed)",
            "ThreadId(1): thief 1 calls steal()",
            "ThreadId(1): load bottom = 1 (Acquire)",
        ]));
        assert_eq!(
            steps[3].read_from.as_deref(),
            Some("bottom = 1: written at step 2 (the newest)")
        );
    }

    #[test]
    fn a_read_modify_write_reads_the_old_value_and_stores_the_new_one() {
        let steps = steps(&trace(&[
            "ThreadId(0): main calls push(task 1)",
            "ThreadId(0): fetch_or slot.state 0 -> 1 (Release)",
            "ThreadId(1): thief 1 calls steal()",
            "ThreadId(1): load slot.state = 0 (Acquire)",
            "ThreadId(1): swap hazard null -> @1 (SeqCst)",
        ]));
        let read = steps[3].read_from.as_deref().unwrap();
        assert!(
            read.contains("slot.state = 0: the initial value, STALE: step 2 had already stored 1"),
            "{read}"
        );
        assert_eq!(
            steps[4].read_from.as_deref(),
            Some("hazard = null: the initial value, nothing stored yet")
        );
    }

    #[test]
    fn a_thiefs_registration_is_folded_into_one_step_and_links_follow_it() {
        let steps = fold_registration(steps(&trace(&[
            "ThreadId(1): thief 1 calls steal()",
            "ThreadId(1): load top = 0 (Acquire)",
            "ThreadId(1): load records = null (Acquire)",
            "ThreadId(1): CAS records null -> @2 won (Release)",
            "ThreadId(1): load records.in_use = 0 (Relaxed)",
            "ThreadId(1): CAS records.in_use 0 -> 1 won (Acquire)",
            "ThreadId(1): store hazard := @1 (Release)",
            "ThreadId(0): owner calls push(task 1)",
            "ThreadId(0): load records = @2 (Acquire)",
        ])));
        let events: Vec<&str> = steps.iter().map(|step| step.event.as_str()).collect();
        assert_eq!(
            events[2..5],
            [
                "registers its hazard record (4 accesses)",
                "store hazard := @1 (Release)",
                "owner calls push(task 1)",
            ]
        );
        // The owner's scan (outside a steal) stays, and reads the fold.
        assert_eq!(
            steps[5].read_from.as_deref(),
            Some("records = @2: written at step 3 (the newest)")
        );
    }

    #[test]
    fn a_scan_of_the_records_inside_a_steal_is_not_folded() {
        // A batch steal's destination that grows retires its old buffer and
        // scans the records: loads only, no claim.
        let steps = fold_registration(steps(&trace(&[
            "ThreadId(1): thief 1 calls steal_batch()",
            "ThreadId(1): load records = @2 (Acquire)",
            "ThreadId(1): load records.in_use = 1 (Acquire)",
        ])));
        assert_eq!(steps.len(), 3);
        assert_eq!(steps[1].event, "load records = @2 (Acquire)");
    }

    #[test]
    fn fences_and_slot_accesses_are_accesses_that_read_no_atomic() {
        let steps = steps(&trace(&[
            "ThreadId(0): owner calls pop()",
            "ThreadId(0): fence (SeqCst)",
            "ThreadId(0): read slot 3",
        ]));
        assert!(steps[1..]
            .iter()
            .all(|step| !step.is_note && step.reads.is_empty()));
        assert_eq!(steps[2].thread, "owner");
    }
}
