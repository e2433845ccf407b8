//! The one table of mutants, `model-tests/mutants.md`, read once: the
//! lessons of the fence lab and the arguments of the survivors come from
//! it, and the mutant builds' enum is generated from it
//! (`model-tests/builds/build.rs`).

use std::sync::OnceLock;

use crate::lessons::Lesson;
use crate::matrix::Argument;
use crate::Mutant;

/// The table's text, compiled in.
const TABLE: &str = include_str!("../mutants.md");

/// One record of the table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub name: String,
    pub variant: String,
    pub change: String,
    pub litmus: String,
    /// The `survivor:` line: `-`, or `<class>, <proofs-notes anchor>`.
    pub survivor: String,
    pub why: String,
    /// The `shuttle:` line, if any: why the matrix does not run the mutant
    /// under shuttle.
    pub shuttle: String,
    /// The `killed by:` line, if any: the loom scenario the matrix runs
    /// first for this mutant.
    pub killed_by: String,
}

/// Reads the records of a table in `mutants.md`'s format, or says which
/// line or record is wrong.
pub fn parse(table: &str) -> Result<Vec<Record>, String> {
    let mut records: Vec<Record> = Vec::new();
    let mut key: Option<&str> = None;
    for (number, line) in table
        .lines()
        .enumerate()
        .map(|(index, line)| (index + 1, line))
    {
        if let Some(name) = line.strip_prefix("## ") {
            records.push(Record {
                name: name.trim().to_string(),
                variant: String::new(),
                change: String::new(),
                litmus: String::new(),
                survivor: String::new(),
                why: String::new(),
                shuttle: String::new(),
                killed_by: String::new(),
            });
            key = None;
            continue;
        }
        let Some(record) = records.last_mut() else {
            continue; // the preamble
        };
        if line.trim().is_empty() {
            key = None;
            continue;
        }
        let (field, value) = match line.strip_prefix("  ") {
            Some(more) => (
                key.ok_or(format!("line {number}: a continuation outside a field"))?,
                more,
            ),
            None => {
                let (field, value) = line.split_once(": ").ok_or(format!(
                    "line {number}: neither `key: value` nor a continuation"
                ))?;
                key = Some(match field {
                    "variant" | "change" | "litmus" | "survivor" | "why" | "shuttle"
                    | "killed by" => field,
                    // An ordering mutant's weakening and its sites' names,
                    // or the ordering mutants a mutant combines: the mutant
                    // builds' build script reads them; nothing here does.
                    "weakens" | "sites" | "combines" | "planted for" => field,
                    other => return Err(format!("line {number}: unknown key `{other}`")),
                });
                (field, value)
            }
        };
        let text = match field {
            "weakens" | "sites" | "combines" | "planted for" => continue,
            "variant" => &mut record.variant,
            "change" => &mut record.change,
            "litmus" => &mut record.litmus,
            "survivor" => &mut record.survivor,
            "shuttle" => &mut record.shuttle,
            "killed by" => &mut record.killed_by,
            _ => &mut record.why,
        };
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(value.trim());
    }
    for record in &records {
        for (field, text) in [
            ("variant", &record.variant),
            ("change", &record.change),
            ("litmus", &record.litmus),
            ("survivor", &record.survivor),
            ("why", &record.why),
        ] {
            if text.is_empty() {
                return Err(format!("mutant {}: no `{field}:`", record.name));
            }
        }
        let argued = split_survivor(&record.survivor)
            .map_err(|error| format!("mutant {}: {error}", record.name))?;
        if argued.is_some() && !record.killed_by.is_empty() {
            return Err(format!(
                "mutant {}: a survivor with a `killed by:` scenario",
                record.name
            ));
        }
    }
    Ok(records)
}

/// How a survivor is argued, as the table writes it.
type ArgumentClass = fn(&'static str) -> Argument;

/// A `survivor:` value split into its class and its `proofs-notes/`
/// anchor, or `None` for `-`.
fn split_survivor(survivor: &str) -> Result<Option<(ArgumentClass, &str)>, String> {
    if survivor == "-" {
        return Ok(None);
    }
    let (class, anchor) = survivor.split_once(", ").ok_or(format!(
        "survivor `{survivor}`: not `-` nor `<class>, <anchor>`"
    ))?;
    if !anchor.starts_with("proofs-notes/") {
        return Err(format!(
            "survivor `{survivor}`: the anchor is not in proofs-notes/"
        ));
    }
    let class: ArgumentClass = match class {
        "argued safe" => Argument::ArguedSafe,
        "needs load buffering" => Argument::NeedsLoadBuffering,
        "beyond loom" => Argument::BeyondLoom,
        "needs seqcst accesses" => Argument::NeedsSeqCstAccesses,
        other => return Err(format!("survivor `{survivor}`: unknown class `{other}`")),
    };
    Ok(Some((class, anchor)))
}

/// The committed table's records (read once; it is the same file the
/// mutant builds' enum came from, so every mutant has its record).
pub fn records() -> &'static [Record] {
    static RECORDS: OnceLock<Vec<Record>> = OnceLock::new();
    RECORDS.get_or_init(|| {
        parse(TABLE).unwrap_or_else(|error| panic!("model-tests/mutants.md: {error}"))
    })
}

/// The record of `mutant`.
pub fn record(mutant: Mutant) -> &'static Record {
    records()
        .iter()
        .find(|record| record.name == mutant.name())
        .unwrap_or_else(|| panic!("model-tests/mutants.md has no record for {}", mutant.name()))
}

/// The fence lab's lesson of `mutant`.
pub fn lesson(mutant: Mutant) -> Lesson {
    let record = record(mutant);
    Lesson {
        change: &record.change,
        litmus: &record.litmus,
        why: &record.why,
    }
}

/// The argument of `mutant` if the suite cannot kill it.
pub fn survivor_argument(mutant: Mutant) -> Option<Argument> {
    split_survivor(&record(mutant).survivor)
        .expect("checked when the table was read")
        .map(|(class, anchor)| class(anchor))
}

/// Whether `mutant` changes the hazard registry (`deque/src/reclamation.rs`):
/// an ordering mutant with a `site!` there, or a logic mutant with a branch
/// (`mutant!(..)`) there. Only these mutants' pictures draw a thief's
/// registration of its hazard record access by access; the others fold it
/// (`crate::lab::steps_to_draw`).
pub fn changes_the_registry(mutant: Mutant) -> bool {
    const RECLAMATION: &str = include_str!("../../deque/src/reclamation.rs");
    let variant = &record(mutant).variant;
    RECLAMATION.contains(&format!("site!({variant},"))
        || RECLAMATION.contains(&format!("mutant!({variant})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mutant_has_a_record_in_the_order_of_mutant_all() {
        let names: Vec<&str> = records()
            .iter()
            .map(|record| record.name.as_str())
            .collect();
        let all: Vec<&str> = Mutant::ALL.iter().map(|mutant| mutant.name()).collect();
        assert_eq!(names, all);
    }

    #[test]
    fn the_registrys_mutants_are_those_of_reclamation_rs() {
        for (mutant, registry) in [
            (Mutant::RecordPublishRelease, true),
            (Mutant::RetireFence, true),
            (Mutant::ScanStopsAtFirstHeld, true),
            (Mutant::TakeFence, false),
            (Mutant::BatchReadsFirstBuffer, false),
        ] {
            assert_eq!(changes_the_registry(mutant), registry, "{}", mutant.name());
        }
    }

    #[test]
    fn a_continued_value_is_joined_with_single_spaces() {
        let table =
            "preamble\n## a-b\nvariant: AB\nchange: one\n  two\nlitmus: l\nsurvivor: -\nwhy: w\n";
        let records = parse(table).unwrap();
        assert_eq!(records[0].change, "one two");
    }

    #[test]
    fn a_record_without_a_field_is_rejected() {
        let table = "## a-b\nvariant: AB\nchange: c\nlitmus: l\nwhy: w\n";
        assert_eq!(parse(table).unwrap_err(), "mutant a-b: no `survivor:`");
    }

    #[test]
    fn an_unknown_argument_class_is_rejected() {
        let table = "## a-b\nvariant: AB\nchange: c\nlitmus: l\nsurvivor: probably fine, proofs-notes/x.md#y\nwhy: w\n";
        assert!(parse(table)
            .unwrap_err()
            .contains("unknown class `probably fine`"));
    }
}
