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
    /// than one of the deque's atomic accesses.
    pub is_note: bool,
    /// The loads of `top` and `bottom` in this step, with the store each
    /// read (what `read_from` says, for the pictures of `crate::diagram`).
    pub reads: Vec<Read>,
    /// A CAS on `top` in this step.
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

/// One load of `top` or `bottom`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Read {
    /// `"top"` or `"bottom"`.
    pub variable: &'static str,
    /// The value read.
    pub value: i64,
    /// The store it read.
    pub source: Source,
    /// STALE: the newest store to the variable before the load, when that is
    /// not the one it read (a sequentially consistent run never does this).
    pub missed: Option<Missed>,
}

/// The newer store a STALE load did not see.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Missed {
    /// Its step.
    pub step: usize,
    /// The value it stored.
    pub value: i64,
}

/// A compare-and-swap on `top` (`CAS top A -> B won`, `CAS top A lost`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cas {
    /// The value it expected.
    pub expected: i64,
    /// Whether it swapped.
    pub won: bool,
    /// A CAS that won read `top = expected`, from this store.
    pub read: Option<Read>,
    /// A CAS that lost, lost to this step: the earlier CAS that won with the
    /// same expected value, or else the newest store to `top` before it.
    pub lost_to: Option<usize>,
}

/// A store to one of the deque's indices, as seen in the log.
#[derive(Clone, Copy)]
struct Store {
    step: usize,
    value: i64,
    /// For a store made by a won CAS: the value that CAS expected.
    by_cas_from: Option<i64>,
}

/// Parses the log (`"<thread id>: <event>"` lines) into steps, naming the
/// threads by the roles the model's notes give them.
pub fn steps(trace: &[String]) -> Vec<Step> {
    let roles = roles(trace);
    let mut stores: HashMap<&'static str, Vec<Store>> = HashMap::new();
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
        if !is_note {
            for variable in ["top", "bottom"] {
                for value in loads(event, variable) {
                    reads.push(read(
                        variable,
                        value,
                        stores.get(variable).map(Vec::as_slice),
                    ));
                }
            }
            cas = compare_and_swap(event, stores.get("top").map(Vec::as_slice));
            for (variable, value) in writes(event) {
                stores.entry(variable).or_default().push(Store {
                    step: number,
                    value,
                    by_cas_from: cas.as_ref().map(|cas| cas.expected),
                });
            }
        }
        let read_from = (!reads.is_empty()).then(|| {
            reads
                .iter()
                .map(describe_read)
                .collect::<Vec<_>>()
                .join("; ")
        });
        steps.push(Step {
            thread: role,
            event: event.to_string(),
            read_from,
            is_note,
            reads,
            cas,
        });
    }
    steps
}

/// Notes are written by the model (`crate::scenarios`): they name a role.
fn is_note(event: &str) -> bool {
    event.starts_with("owner") || event.starts_with("thief")
}

/// Maps thread ids to roles, from the first note each thread wrote.
fn roles(trace: &[String]) -> HashMap<String, String> {
    let mut roles = HashMap::new();
    for line in trace {
        if let Some((thread, event)) = line.split_once(": ") {
            if is_note(event) && !roles.contains_key(thread) {
                let role = if event.starts_with("owner") {
                    "owner".to_string()
                } else {
                    event
                        .split_whitespace()
                        .take(2)
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                roles.insert(thread.to_string(), role);
            }
        }
    }
    roles
}

/// The values of `load <variable> = N` in an event.
fn loads(event: &str, variable: &str) -> Vec<i64> {
    let pattern = format!("load {variable} = ");
    event
        .match_indices(&pattern)
        .filter_map(|(at, _)| leading_number(&event[at + pattern.len()..]))
        .collect()
}

/// The stores in an event: `store bottom := N`, a won `CAS top A -> B`.
fn writes(event: &str) -> Vec<(&'static str, i64)> {
    let mut writes = Vec::new();
    if let Some(at) = event.find("store bottom := ") {
        if let Some(value) = leading_number(&event[at + "store bottom := ".len()..]) {
            writes.push(("bottom", value));
        }
    }
    if event.ends_with(" won") {
        if let Some(at) = event.find("-> ") {
            if let Some(value) = leading_number(&event[at + 3..]) {
                writes.push(("top", value));
            }
        }
    }
    writes
}

fn leading_number(text: &str) -> Option<i64> {
    let end = text
        .find(|c: char| c != '-' && !c.is_ascii_digit())
        .unwrap_or(text.len());
    text[..end].parse().ok()
}

/// The load of `value` from `variable`, given the stores to it so far: it
/// read the last store of that value (or the initial value), and it is STALE
/// if a newer store to the variable came before it.
fn read(variable: &'static str, value: i64, stores: Option<&[Store]>) -> Read {
    let stores = stores.unwrap_or(&[]);
    let source = stores.iter().rposition(|store| store.value == value);
    let missed = match (source, stores.last()) {
        (Some(index), _) if index + 1 == stores.len() => None,
        (_, newest) => newest.map(|newest| Missed {
            step: newest.step,
            value: newest.value,
        }),
    };
    Read {
        variable,
        value,
        source: source.map_or(Source::Initial, |index| Source::Step(stores[index].step)),
        missed,
    }
}

/// The CAS on `top` in an event, if any.
fn compare_and_swap(event: &str, top_stores: Option<&[Store]>) -> Option<Cas> {
    let pattern = "CAS top ";
    let at = event.find(pattern)?;
    let expected = leading_number(&event[at + pattern.len()..])?;
    let won = event.ends_with(" won");
    let stores = top_stores.unwrap_or(&[]);
    let lost_to = (!won)
        .then(|| {
            stores
                .iter()
                .rev()
                .find(|store| store.by_cas_from == Some(expected))
                .or(stores.last())
                .map(|store| store.step)
        })
        .flatten();
    Some(Cas {
        expected,
        won,
        read: won.then(|| read("top", expected, top_stores)),
        lost_to,
    })
}

fn describe_read(read: &Read) -> String {
    let Read {
        variable, value, ..
    } = read;
    match (read.source, read.missed) {
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
            "ThreadId(1): thief 1 starts",
            "ThreadId(1): steal: load top = 0",
        ]));
        assert_eq!(steps[2].thread, "thief 1");
        assert!(!steps[2].is_note);
    }

    #[test]
    fn a_load_that_misses_a_newer_store_is_marked_stale() {
        let steps = steps(&trace(&[
            "ThreadId(0): owner calls pop()",
            "ThreadId(1): thief 1 starts",
            "ThreadId(0): pop: store bottom := 1",
            "ThreadId(1): steal: load bottom = 2",
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
            "ThreadId(1): thief 1 starts",
            "ThreadId(1): steal: CAS top 0 -> 1 won",
            "ThreadId(2): thief 2 starts",
            "ThreadId(2): steal: CAS top 1 -> 2 won",
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
            "ThreadId(1): thief 1 starts",
            "ThreadId(1): steal: CAS top 0 -> 1 won",
            "ThreadId(1): steal: CAS top 1 -> 2 won",
            "ThreadId(0): owner calls pop()",
            "ThreadId(0): pop: CAS top 0 -> 1 lost",
        ]));
        let cas = steps[4].cas.as_ref().expect("a CAS");
        assert!(!cas.won);
        assert_eq!(cas.lost_to, Some(2));
    }

    #[test]
    fn a_load_of_the_newest_store_names_it() {
        let steps = steps(&trace(&[
            "ThreadId(0): owner calls push(task 1)",
            "ThreadId(0): push: store bottom := 1",
            "ThreadId(1): thief 1 starts",
            "ThreadId(1): steal: load bottom = 1",
        ]));
        assert_eq!(
            steps[3].read_from.as_deref(),
            Some("bottom = 1: written at step 2 (the newest)")
        );
    }
}
