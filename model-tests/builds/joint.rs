//! The joint-relaxation mode of the loom mutant build (`chase-lev-loom-mutants`
//! only): the mutation matrix weakens one site per copy of a function, which
//! cannot express two weakenings at once. Here every `site!(Variant, correct)`
//! left in the generated source (the original functions, run when the deque
//! carries no mutant) becomes a runtime choice that consults one global table,
//! `joint_relaxation::LEVEL`, so that the joint-relaxation run
//! (`model-tests/src/joint.rs`) can weaken any set of sites together without
//! recompiling. The table starts empty: until a run sets it, every site is its
//! `correct` value and the build behaves as before.
//!
//! Each ordering mutant gets *levels*, weakest first, which the run tries in
//! turn: the orderings weaker than the shipped one that the operation allows,
//! and always the table's own weakening (`weakens:` in
//! `model-tests/mutants.md`). A mutant with more than one `weakens:` pair has
//! only its table's level (its pairs are one weakening).
use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::{closing_paren, ordering_sites, sites_on_one_line, Record};

/// Whether this build is the one that carries the joint-relaxation mode: the
/// loom mutant build, the only one the run explores.
pub(super) fn enabled() -> bool {
    std::env::var("CARGO_PKG_NAME").as_deref() == Ok("chase-lev-loom-mutants")
}

/// For each variant with a site: whether every one of its sites is the
/// success ordering of a read-modify-write (a CAS or a `fetch_`), found by
/// the call on the site's line or the three before it. Only those may take
/// every weaker ordering; a load may not be `Release`, nor a store `Acquire`.
pub(super) fn read_modify_write_sites(files: &BTreeMap<String, String>) -> BTreeMap<String, bool> {
    let mut rmw: BTreeMap<String, bool> = BTreeMap::new();
    for (name, text) in files {
        let text = sites_on_one_line(text);
        let lines: Vec<&str> = text.lines().collect();
        for (variant, site, _, _) in ordering_sites(name, &text) {
            let context = lines[site.first.saturating_sub(3)..=site.first].join(" ");
            let is_rmw = ["compare_exchange", "fetch_", "swap("]
                .iter()
                .any(|call| context.contains(call));
            *rmw.entry(variant).or_insert(true) &= is_rmw;
        }
    }
    rmw
}

/// `text` (one generated file, its sites each on one line) with every
/// `site!(Variant, correct)` in code turned into the runtime choice.
pub(super) fn sites_as_runtime_choices(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let (code, comment) = match line.find("//") {
            Some(at) => line.split_at(at),
            None => (line, ""),
        };
        if code.trim_start().starts_with("macro_rules!") || code.contains("($site:ident") {
            out.push_str(line);
        } else {
            out.push_str(&rewrite(code));
            out.push_str(comment);
        }
        out.push('\n');
    }
    out
}

/// `code` with each outermost `site!(..)` rewritten (nested ones inside it
/// by [`choice`]).
fn rewrite(code: &str) -> String {
    let mut code = code.to_string();
    let mut from = 0;
    while let Some(at) = code[from..].find("site!(").map(|at| from + at) {
        let open = at + "site!".len();
        let close = closing_paren(&code, open).expect("a site! closed on its line");
        let (variant, correct) = code[open + 1..close]
            .split_once(',')
            .expect("site!(Variant, correct)");
        // Still inside the `site!` (which expands to its value) and with the
        // orderings as the file writes them: the file's imports stay used.
        let replacement = format!(
            "site!({}, {})",
            variant.trim(),
            choice(variant.trim(), correct.trim())
        );
        code.replace_range(at..=close, &replacement);
        from = at + replacement.len();
    }
    code
}

/// The runtime choice for one site.
fn choice(variant: &str, correct: &str) -> String {
    let mutant = format!("crate::policy::Mutant::{variant}");
    if let Some(inner) = correct
        .strip_prefix("fence(")
        .and_then(|rest| rest.strip_suffix(')'))
    {
        // A fence weakened to `()` is not issued at all.
        format!(
            "if let Some(joint_order) = crate::joint_relaxation::fence({mutant}, {inner}) \
             {{ fence(joint_order) }}"
        )
    } else if correct.starts_with("site!(") {
        // A site inside another site: the inner one's choice is the outer
        // one's correct value.
        format!(
            "crate::joint_relaxation::ordering({mutant}, {})",
            rewrite(correct)
        )
    } else {
        // In a mutant's copy, a site inside one it weakens holds the
        // weakened ordering, qualified.
        let bare = correct
            .strip_prefix("crate::sync::Ordering::")
            .unwrap_or(correct);
        assert!(
            ORDERINGS.contains(&bare),
            "site!({variant}, {correct}): the joint mode knows orderings and fences"
        );
        format!("crate::joint_relaxation::ordering({mutant}, {correct})")
    }
}

/// The orderings, weakest first, as the generated table codes them (index + 1).
const ORDERINGS: [&str; 5] = ["Relaxed", "Release", "Acquire", "AcqRel", "SeqCst"];

/// A fence's code: 16 + its ordering's; `()` (no fence) is 0.
const FENCE: u8 = 16;

fn code(value: &str) -> u8 {
    if value == "()" {
        return 0;
    }
    match value
        .strip_prefix("fence(")
        .and_then(|rest| rest.strip_suffix(')'))
    {
        Some(inner) => FENCE + code(inner),
        None => {
            ORDERINGS
                .iter()
                .position(|ordering| *ordering == value)
                .unwrap_or_else(|| panic!("not an ordering: {value}")) as u8
                + 1
        }
    }
}

/// The orderings strictly weaker than `from`, weakest first (`Acquire`
/// before `Release` where both are).
fn weaker(from: &str) -> &'static [&'static str] {
    match from {
        "SeqCst" => &["Relaxed", "Acquire", "Release", "AcqRel"],
        "AcqRel" => &["Relaxed", "Acquire", "Release"],
        "Acquire" | "Release" => &["Relaxed"],
        _ => &[],
    }
}

/// The levels of one ordering mutant, weakest first: each a description
/// and its (from, to) pairs.
fn levels(record: &Record, all_rmw: bool) -> Vec<(String, Vec<(String, String)>)> {
    let table = || {
        let text = record
            .weakens
            .iter()
            .map(|(from, to)| format!("`{from}` to `{to}`"))
            .collect::<Vec<_>>()
            .join(", ");
        (text, record.weakens.clone())
    };
    let [(from, to)] = record.weakens.as_slice() else {
        return vec![table()];
    };
    let targets: Vec<String> = match from
        .strip_prefix("fence(")
        .and_then(|rest| rest.strip_suffix(')'))
    {
        // A fence can be dropped or issued with a weaker ordering (loom has
        // no Relaxed fence).
        Some(inner) if to == "()" => std::iter::once("()".to_string())
            .chain(
                weaker(inner)
                    .iter()
                    .filter(|ordering| **ordering != "Relaxed")
                    .map(|ordering| format!("fence({ordering})")),
            )
            .collect(),
        // A SeqCst load or store may only lose its SeqCst for the
        // ordering the table names: only a read-modify-write takes all.
        _ if from == "SeqCst" && !all_rmw => vec![to.clone()],
        _ => weaker(from)
            .iter()
            .map(|ordering| ordering.to_string())
            .collect(),
    };
    if !targets.contains(to) {
        return vec![table()];
    }
    targets
        .into_iter()
        .map(|target| {
            (
                format!("`{from}` to `{target}`"),
                vec![(from.clone(), target)],
            )
        })
        .collect()
}

/// The module `joint_relaxation` appended to the generated crate root: the
/// levels of every ordering mutant, the global table of chosen levels, and
/// the two functions the rewritten sites call.
pub(super) fn module(records: &[Record], rmw: &BTreeMap<String, bool>) -> String {
    let mut table = String::new();
    let mut table_levels = Vec::new();
    for record in records {
        if record.weakens.is_empty() {
            table.push_str("    &[],\n");
            table_levels.push("0".to_string());
            continue;
        }
        let all_rmw = rmw.get(&record.variant).copied().unwrap_or(false);
        let levels = levels(record, all_rmw);
        let own = levels
            .iter()
            .position(|(_, pairs)| *pairs == record.weakens)
            .expect("the table's weakening is a level");
        table_levels.push(own.to_string());
        table.push_str("    &[\n");
        for (text, pairs) in levels {
            let pairs: Vec<String> = pairs
                .iter()
                .map(|(from, to)| format!("({}, {})", code(from), code(to)))
                .collect();
            writeln!(table, "        ({text:?}, &[{}]),", pairs.join(", ")).unwrap();
        }
        table.push_str("    ],\n");
    }
    let count = records.len();
    let table_levels = table_levels.join(", ");
    format!(
        r#"
/// (Loom mutant build.) The joint-relaxation mode: which level of each
/// ordering mutant is in place, for the sites of a deque that carries no
/// mutant (generated by `model-tests/builds/joint.rs`).
#[doc(hidden)]
pub mod joint_relaxation {{
    use crate::policy::Mutant;
    use crate::sync::Ordering;
    use core::sync::atomic::{{AtomicUsize, Ordering as TableOrdering}};

    /// Per mutant, its levels, weakest first: a description and the
    /// (from, to) pairs, orderings coded as index + 1 in Relaxed, Release,
    /// Acquire, AcqRel, SeqCst; a fence as 16 + its ordering; no fence 0.
    type Levels = &'static [(&'static str, &'static [(u8, u8)])];

    static LEVELS: [Levels; {count}] = [
{table}    ];

    /// Per mutant: 0 for the shipped ordering, else its level's index + 1.
    /// A plain static, not a model checker's atomic: it is set before an
    /// exploration and only read during it.
    static LEVEL: [AtomicUsize; {count}] = [const {{ AtomicUsize::new(0) }}; {count}];

    /// Per mutant, the index of its level that is the table's weakening (the
    /// matrix's mutant).
    static TABLE_LEVEL: [usize; {count}] = [{table_levels}];

    /// The level of `mutant` that is its `weakens:` line in
    /// `model-tests/mutants.md`, as the matrix weakens it.
    pub fn table_level(mutant: Mutant) -> usize {{
        TABLE_LEVEL[mutant as usize]
    }}

    /// The levels of `mutant`, weakest first (none for a logic mutant).
    pub fn levels(mutant: Mutant) -> Vec<&'static str> {{
        LEVELS[mutant as usize].iter().map(|(text, _)| *text).collect()
    }}

    /// Puts level `level` of `mutant` in place (`None`: the shipped ordering).
    pub fn set(mutant: Mutant, level: Option<usize>) {{
        assert!(!matches!(level, Some(level) if level >= LEVELS[mutant as usize].len()));
        LEVEL[mutant as usize].store(level.map_or(0, |level| level + 1), TableOrdering::Relaxed);
    }}

    /// Every site back to its shipped ordering.
    pub fn reset() {{
        for mutant in Mutant::ALL {{
            set(mutant, None);
        }}
    }}

    fn pairs(mutant: Mutant) -> &'static [(u8, u8)] {{
        match LEVEL[mutant as usize].load(TableOrdering::Relaxed) {{
            0 => &[],
            level => LEVELS[mutant as usize][level - 1].1,
        }}
    }}

    fn encode(ordering: Ordering) -> u8 {{
        match ordering {{
            Ordering::Relaxed => 1,
            Ordering::Release => 2,
            Ordering::Acquire => 3,
            Ordering::AcqRel => 4,
            _ => 5,
        }}
    }}

    fn decode(code: u8) -> Ordering {{
        match code {{
            1 => Ordering::Relaxed,
            2 => Ordering::Release,
            3 => Ordering::Acquire,
            4 => Ordering::AcqRel,
            _ => Ordering::SeqCst,
        }}
    }}

    /// The ordering of a site of `mutant` whose shipped ordering is `correct`.
    #[inline]
    pub(crate) fn ordering(mutant: Mutant, correct: Ordering) -> Ordering {{
        let from = encode(correct);
        pairs(mutant)
            .iter()
            .find(|(pair_from, _)| *pair_from == from)
            .map_or(correct, |&(_, to)| decode(to))
    }}

    /// The fence of a site of `mutant` whose shipped fence is
    /// `fence(correct)`: `None` where it is weakened away.
    #[inline]
    pub(crate) fn fence(mutant: Mutant, correct: Ordering) -> Option<Ordering> {{
        let from = {FENCE} + encode(correct);
        match pairs(mutant).iter().find(|(pair_from, _)| *pair_from == from) {{
            None => Some(correct),
            Some(&(_, 0)) => None,
            Some(&(_, to)) => Some(decode(to - {FENCE})),
        }}
    }}
}}
"#
    )
}
