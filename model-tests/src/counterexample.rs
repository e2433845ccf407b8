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
}

/// A store to one of the deque's indices, as seen in the log.
#[derive(Clone, Copy)]
struct Store {
    step: usize,
    value: i64,
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
        let mut read_from = Vec::new();
        if !is_note {
            for variable in ["top", "bottom"] {
                for value in loads(event, variable) {
                    read_from.push(describe_read(
                        variable,
                        value,
                        stores.get(variable).map(Vec::as_slice),
                    ));
                }
            }
            for (variable, value) in writes(event) {
                stores.entry(variable).or_default().push(Store {
                    step: number,
                    value,
                });
            }
        }
        let read_from = (!read_from.is_empty()).then(|| read_from.join("; "));
        steps.push(Step {
            thread: role,
            event: event.to_string(),
            read_from,
            is_note,
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

fn describe_read(variable: &str, value: i64, stores: Option<&[Store]>) -> String {
    let stores = stores.unwrap_or(&[]);
    let source = stores.iter().rposition(|store| store.value == value);
    let newest = stores.last();
    match (source, newest) {
        (None, None) => format!("{variable} = {value}: the initial value, nothing stored yet"),
        (None, Some(newest)) => format!(
            "{variable} = {value}: the initial value, STALE: step {} had already stored {}",
            newest.step, newest.value
        ),
        (Some(index), Some(newest)) if index + 1 < stores.len() => format!(
            "{variable} = {value}: written at step {}, STALE: step {} had already stored {}",
            stores[index].step, newest.step, newest.value
        ),
        (Some(index), _) => format!(
            "{variable} = {value}: written at step {} (the newest)",
            stores[index].step
        ),
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
