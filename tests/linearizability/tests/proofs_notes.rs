//! The proofs notes and the code cannot drift apart.
//!
//! `deque/src` justifies every atomic operation with an `// Ordering:` comment
//! that names a section of `proofs-notes/`; these tests read the source and
//! the notes as text and check that:
//!
//! 1. every `proofs-notes/<file>.md#<anchor>` reference in `deque/src` names a
//!    note that exists and a heading in it whose GitHub anchor is `<anchor>`
//!    (lowercase; spaces become hyphens; other punctuation except `-` and `_`
//!    is dropped; a repeated heading gets `-1`, `-2`, ...);
//! 2. every `// Ordering:` comment cites a note. The comment is the line that
//!    contains `// Ordering:` together with the plain `//` comment lines that
//!    follow it directly, up to four lines in all; one of those lines must
//!    contain `proofs-notes/`;
//! 3. every atomic operation or fence in `deque/src` is preceded by an
//!    `// Ordering:` comment (the heuristic is described at
//!    [`atomic_operations_without_an_ordering_comment`]);
//! 4. every mutant named in `model-tests/mutants.md` has its section and its row in
//!    `proofs-notes/obligations.md`, and, when the mutation matrix has been
//!    run (`model-tests/mutation-matrix.tsv`), the table's verdicts are the
//!    matrix's.
//!
//! Each checker is also run on planted text that it must reject, so that a
//! checker that silently checks nothing fails too.
//!
//! Not run under miri: it only reads files, and miri's isolation forbids that.
//!
//! It lives in this package (chase-lev-tests), not in chase-lev's own tests,
//! because it reads the repository around the crate (proofs-notes/,
//! model-tests/): the published chase-lev package holds none of that, and
//! its tests must pass from the unpacked `.crate`.
#![cfg(not(miri))]

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// The workspace root (this package is tests/linearizability/).
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.rs` file of `deque/src` and of its folders (such as
/// `deque/src/injector/`), as (path relative to the workspace, text).
fn source_files() -> Vec<(String, String)> {
    let directory = workspace().join("deque/src");
    let mut files = Vec::new();
    read_sources(&directory, "deque/src", &mut files);
    files.sort();
    assert!(
        files.len() >= 5,
        "expected the deque's source files in {}",
        directory.display()
    );
    files
}

/// Adds every `.rs` file of `directory` (at `path` in the workspace) and of
/// its folders to `files`.
fn read_sources(directory: &Path, path: &str, files: &mut Vec<(String, String)>) {
    for entry in fs::read_dir(directory).expect("deque/src is readable") {
        let entry = entry.expect("a directory entry").path();
        let name = entry.file_name().unwrap().to_string_lossy().into_owned();
        if entry.is_dir() {
            read_sources(&entry, &format!("{path}/{name}"), files);
        } else if entry.extension().is_some_and(|extension| extension == "rs") {
            files.push((
                format!("{path}/{name}"),
                fs::read_to_string(&entry).expect("a readable source file"),
            ));
        }
    }
}

/// The text of `proofs-notes/<file>`, or `None` if there is no such note.
fn note(file: &str) -> Option<String> {
    fs::read_to_string(workspace().join("proofs-notes").join(file)).ok()
}

/// GitHub's anchor for a heading's text.
fn github_anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|character| match character {
            ' ' => Some('-'),
            '-' | '_' => Some(character),
            _ if character.is_alphanumeric() => Some(character),
            _ => None,
        })
        .collect()
}

/// The anchors of every heading of a Markdown text (headings inside fenced
/// code blocks are not headings).
fn anchors(markdown: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut in_code_block = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_code_block = !in_code_block;
            continue;
        }
        if in_code_block {
            continue;
        }
        let hashes = line
            .chars()
            .take_while(|&character| character == '#')
            .count();
        if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
            let base = github_anchor(&line[hashes..]);
            let mut anchor = base.clone();
            let mut repeat = 0;
            while found.contains(&anchor) {
                repeat += 1;
                anchor = format!("{base}-{repeat}");
            }
            found.insert(anchor);
        }
    }
    found
}

/// A reference `proofs-notes/<file>.md` or `proofs-notes/<file>.md#<anchor>`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Reference {
    file: String,
    anchor: Option<String>,
}

/// Every reference to a note in `text`.
fn references(text: &str) -> Vec<Reference> {
    const PREFIX: &str = "proofs-notes/";
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(PREFIX) {
        rest = &rest[start + PREFIX.len()..];
        let name_length = rest
            .find(|character: char| {
                !(character.is_ascii_alphanumeric() || character == '-' || character == '_')
            })
            .unwrap_or(rest.len());
        let name = &rest[..name_length];
        let after_name = &rest[name_length..];
        if name.is_empty() || !after_name.starts_with(".md") {
            continue; // the directory itself, e.g. "see proofs-notes/"
        }
        let after_file = &after_name[".md".len()..];
        let anchor = after_file.strip_prefix('#').map(|tail| {
            let length = tail
                .find(|character: char| {
                    !(character.is_ascii_alphanumeric() || character == '-' || character == '_')
                })
                .unwrap_or(tail.len());
            tail[..length].to_string()
        });
        found.push(Reference {
            file: format!("{name}.md"),
            anchor,
        });
    }
    found
}

/// The references among `sources` that name a missing note or heading, as
/// `path: reference` lines. `note_text` looks a note up by file name.
fn dangling_references(
    sources: &[(String, String)],
    note_text: &dyn Fn(&str) -> Option<String>,
) -> Vec<String> {
    let mut dangling = Vec::new();
    for (path, text) in sources {
        for reference in references(text) {
            let shown = match &reference.anchor {
                Some(anchor) => format!("proofs-notes/{}#{anchor}", reference.file),
                None => format!("proofs-notes/{}", reference.file),
            };
            match (note_text(&reference.file), &reference.anchor) {
                (None, _) => dangling.push(format!("{path}: {shown} (no such note)")),
                (Some(markdown), Some(anchor)) if !anchors(&markdown).contains(anchor) => {
                    dangling.push(format!("{path}: {shown} (no such heading)"))
                }
                _ => {}
            }
        }
    }
    dangling
}

/// How a source line reads once its leading whitespace is gone.
enum Line<'a> {
    Blank,
    /// A plain `//` comment (not `///` or `//!`), its text after `//`.
    Comment(&'a str),
    /// A doc comment or an attribute: neither code nor an ordering comment.
    Other,
    /// Code, without any trailing comment.
    Code(&'a str),
}

fn classify(line: &str) -> Line<'_> {
    let trimmed = line.trim();
    if trimmed.is_empty() {
        Line::Blank
    } else if trimmed.starts_with("///") || trimmed.starts_with("//!") {
        Line::Other
    } else if let Some(comment) = trimmed.strip_prefix("//") {
        Line::Comment(comment)
    } else if trimmed.starts_with("#[") || trimmed.starts_with("#![") {
        Line::Other
    } else {
        Line::Code(code_before_comment(trimmed))
    }
}

/// The code of a line up to a trailing `//` comment (outside string literals).
fn code_before_comment(line: &str) -> &str {
    let bytes = line.as_bytes();
    let mut in_string = false;
    let mut index = 0;
    while index < bytes.len() {
        match bytes[index] {
            b'\\' if in_string => index += 1,
            b'"' => in_string = !in_string,
            b'/' if !in_string && bytes.get(index + 1) == Some(&b'/') => {
                return line[..index].trim_end()
            }
            _ => {}
        }
        index += 1;
    }
    line
}

/// `// Ordering:` comments that do not cite a note, as `path:line` entries.
/// The comment is its `Ordering:` line plus the `//` lines that directly
/// follow it, four lines at most.
fn ordering_comments_without_a_reference(sources: &[(String, String)]) -> (usize, Vec<String>) {
    let mut seen = 0;
    let mut uncited = Vec::new();
    for (path, text) in sources {
        let lines: Vec<&str> = text.lines().collect();
        for (index, line) in lines.iter().enumerate() {
            let Line::Comment(comment) = classify(line) else {
                continue;
            };
            if !comment.trim_start().starts_with("Ordering:") {
                continue;
            }
            seen += 1;
            let cites = lines[index..]
                .iter()
                .take(4)
                .take_while(|line| matches!(classify(line), Line::Comment(_)))
                .any(|line| line.contains("proofs-notes/"));
            if !cites {
                uncited.push(format!("{path}:{}", index + 1));
            }
        }
    }
    (seen, uncited)
}

/// Does this code perform an atomic operation or issue a fence?
///
/// Method calls `.load(`, `.store(`, `.swap(`, `.fetch_…(` and
/// `.compare_exchange…(`, and calls of `fence(` as a whole word (so
/// `push_fence(` is not one). Not counted: definitions (`fn fence(`),
/// and atomics whose ordering is spelled `std::sync::atomic::Ordering`: the
/// algorithm's atomics all come from the sync shim (`crate::sync`), so an
/// atomic spelled out from `std` is, by the crate's design, not part of the
/// algorithm (today there is none: the mutant builds' event log, `trace.rs`, is
/// plain thread-local memory).
fn is_atomic_operation(code: &str) -> bool {
    if code.contains("std::sync::atomic::Ordering") {
        return false;
    }
    let method = [
        ".load(",
        ".store(",
        ".swap(",
        ".fetch_",
        ".compare_exchange",
    ]
    .iter()
    .any(|call| code.contains(call));
    let fence = ["fence("].iter().any(|name| {
        code.match_indices(name).any(|(at, _)| {
            let before = code[..at].trim_end();
            let previous = code[..at].chars().next_back();
            let whole_word =
                !previous.is_some_and(|character| character.is_alphanumeric() || character == '_');
            whole_word && !before.ends_with("fn")
        })
    });
    method || fence
}

/// Atomic operations and fences in `sources` with no `// Ordering:` comment
/// above them, as `path:line: code` entries; also how many were found.
///
/// The heuristic: from an operation's line, walk up. Lines of the same
/// statement (the line above does not end in `;`, `{` or `}`) and other
/// atomic operations (a run of them shares one comment) are stepped over.
/// The first line that is none of those must be the last line of a `//`
/// comment block, and some line of that block must contain `Ordering:`. A
/// blank line, other code, a doc comment or an attribute ends the walk: not
/// justified.
fn atomic_operations_without_an_ordering_comment(
    sources: &[(String, String)],
) -> (usize, Vec<String>) {
    let mut seen = 0;
    let mut unjustified = Vec::new();
    for (path, text) in sources {
        let lines: Vec<&str> = text.lines().collect();
        for (index, line) in lines.iter().enumerate() {
            let Line::Code(code) = classify(line) else {
                continue;
            };
            if !is_atomic_operation(code) {
                continue;
            }
            seen += 1;
            if !has_ordering_comment_above(&lines, index) {
                unjustified.push(format!("{path}:{}: {code}", index + 1));
            }
        }
    }
    (seen, unjustified)
}

fn has_ordering_comment_above(lines: &[&str], operation: usize) -> bool {
    let mut index = operation;
    while index > 0 {
        let above = index - 1;
        match classify(lines[above]) {
            Line::Code(code) => {
                let same_statement =
                    !(code.ends_with(';') || code.ends_with('{') || code.ends_with('}'));
                if same_statement || is_atomic_operation(code) {
                    index = above;
                } else {
                    return false;
                }
            }
            Line::Comment(_) => {
                let mut first = above;
                while first > 0 && matches!(classify(lines[first - 1]), Line::Comment(_)) {
                    first -= 1;
                }
                return lines[first..=above]
                    .iter()
                    .any(|line| line.contains("Ordering:"));
            }
            Line::Blank | Line::Other => return false,
        }
    }
    false
}

/// The mutant names of the table of mutants, `model-tests/mutants.md` (its
/// `## name` headings, from which the mutant builds' `Mutant::name` is
/// generated).
fn mutant_names(table: &str) -> Vec<String> {
    table
        .lines()
        .filter_map(|line| line.strip_prefix("## "))
        .map(|name| name.trim().to_string())
        .collect()
}

/// The rows of the matrix table in `obligations.md`, as (mutant, verdict)
/// with any `*expected:*` marker kept in the verdict.
fn table_rows(obligations: &str) -> Vec<(String, String)> {
    marked_table_rows(obligations, "matrix-table")
}

/// The rows of the table between `<!-- {marker}` and `<!-- end {marker} -->`.
fn marked_table_rows(note: &str, marker: &str) -> Vec<(String, String)> {
    let (start, end) = (format!("<!-- {marker}"), format!("<!-- end {marker} -->"));
    let start = note.find(&start).expect("the matrix table's start marker");
    let end = note.find(&end).expect("the matrix table's end marker");
    let obligations = note;
    obligations[start..end]
        .lines()
        .filter(|line| line.starts_with("| `"))
        .map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            (cells[1].trim_matches('`').to_string(), cells[2].to_string())
        })
        .collect()
}

#[test]
fn every_proofs_notes_reference_in_the_source_names_an_existing_section() {
    let sources = source_files();
    let count: usize = sources.iter().map(|(_, text)| references(text).len()).sum();
    assert!(
        count >= 20,
        "only {count} references to proofs-notes/ found in deque/src: is the scan broken?"
    );
    let dangling = dangling_references(&sources, &note);
    assert!(
        dangling.is_empty(),
        "references to missing notes or sections:\n{}",
        dangling.join("\n")
    );
}

#[test]
fn every_ordering_comment_cites_a_note() {
    let (seen, uncited) = ordering_comments_without_a_reference(&source_files());
    assert!(
        seen >= 20,
        "only {seen} `// Ordering:` comments found in deque/src: is the scan broken?"
    );
    assert!(
        uncited.is_empty(),
        "`// Ordering:` comments without a proofs-notes/ reference in their first four lines:\n{}",
        uncited.join("\n")
    );
}

#[test]
fn every_atomic_operation_has_an_ordering_comment() {
    let (seen, unjustified) = atomic_operations_without_an_ordering_comment(&source_files());
    assert!(
        seen >= 25,
        "only {seen} atomic operations found in deque/src: is the scan broken?"
    );
    assert!(
        unjustified.is_empty(),
        "atomic operations or fences with no `// Ordering:` comment above them:\n{}",
        unjustified.join("\n")
    );
}

#[test]
fn every_mutant_has_a_section_and_a_row_in_the_obligations_note() {
    let table = fs::read_to_string(workspace().join("model-tests/mutants.md"))
        .expect("model-tests/mutants.md");
    let (injector_names, names): (Vec<String>, Vec<String>) = mutant_names(&table)
        .into_iter()
        .partition(|name| name.starts_with("injector-"));
    assert_eq!(
        names.len(),
        44,
        "expected the deque's 44 mutants of Mutant::name, found {names:?}"
    );
    assert_eq!(
        injector_names.len(),
        22,
        "expected the injector's 22 mutants of Mutant::name, found {injector_names:?}"
    );
    // The injector's mutants are argued in their own note.
    let injector = note("injector.md").expect("proofs-notes/injector.md");
    let injector_sections = anchors(&injector);
    for name in &injector_names {
        assert!(
            injector_sections.contains(name),
            "injector.md has no section `## {name}`"
        );
    }
    let injector_rows: Vec<String> = marked_table_rows(&injector, "injector-matrix-table")
        .into_iter()
        .map(|(mutant, _)| mutant)
        .collect();
    assert_eq!(
        injector_rows, injector_names,
        "injector.md's matrix table's rows must be its mutants, in Mutant::ALL's order"
    );
    let obligations = note("obligations.md").expect("proofs-notes/obligations.md");
    let sections = anchors(&obligations);
    let rows: Vec<String> = table_rows(&obligations)
        .into_iter()
        .map(|(mutant, _)| mutant)
        .collect();
    for name in &names {
        assert!(
            sections.contains(name),
            "obligations.md has no section `## {name}`"
        );
    }
    assert_eq!(
        rows, names,
        "the matrix table's rows must be the mutants, in Mutant::ALL's order"
    );
}

#[test]
fn the_obligations_table_agrees_with_the_mutation_matrix() {
    let matrix_path = workspace().join("model-tests/mutation-matrix.tsv");
    let matrix = fs::read_to_string(&matrix_path).unwrap_or_else(|_| {
        panic!(
            "{} is missing: run `cargo run --release -p model-tests --bin mutation-matrix` \
             and commit its output, so that proofs-notes/obligations.md can be checked against it",
            matrix_path.display()
        )
    });
    let obligations = note("obligations.md").expect("proofs-notes/obligations.md");
    let injector = note("injector.md").expect("proofs-notes/injector.md");
    let mut table = table_rows(&obligations);
    table.extend(marked_table_rows(&injector, "injector-matrix-table"));
    let mut disagreements = Vec::new();
    for line in matrix
        .lines()
        .skip(1)
        .filter(|line| !line.trim().is_empty())
    {
        let fields: Vec<&str> = line.split('\t').collect();
        let (mutant, verdict, argument) =
            (fields[0], fields[1], fields.get(2).copied().unwrap_or(""));
        match table.iter().find(|(name, _)| name == mutant) {
            None => disagreements.push(format!("{mutant}: no row in the table")),
            Some((_, noted)) if noted != verdict => disagreements.push(format!(
                "{mutant}: the table says `{noted}`, the matrix `{verdict}`"
            )),
            Some(_) => {}
        }
        if verdict != "killed" {
            // A survivor's argument is a reference into the notes: it must exist.
            let dangling = dangling_references(
                &[(format!("{mutant}'s argument"), argument.to_string())],
                &note,
            );
            disagreements.extend(dangling);
            if !argument.contains("proofs-notes/") {
                disagreements.push(format!(
                    "{mutant}: survived without an argument in proofs-notes/ ({argument})"
                ));
            }
        }
    }
    assert!(
        disagreements.is_empty(),
        "proofs-notes/obligations.md and {} disagree:\n{}",
        matrix_path.display(),
        disagreements.join("\n")
    );
}

// The checkers themselves, on planted text they must reject.

#[test]
fn the_anchor_rule_is_githubs() {
    assert_eq!(github_anchor(" Load buffering"), "load-buffering");
    assert_eq!(
        github_anchor(" The owner's cached buffer pointer"),
        "the-owners-cached-buffer-pointer"
    );
    assert_eq!(github_anchor(" CVE-2021-32810"), "cve-2021-32810");
    let repeated = anchors("# Push\n```\n# not a heading\n```\n## Push\n");
    assert_eq!(
        repeated,
        BTreeSet::from(["push".to_string(), "push-1".to_string()])
    );
}

#[test]
fn a_reference_to_a_missing_section_is_reported() {
    let planted = vec![(
        "planted.rs".to_string(),
        "// Ordering: Relaxed (proofs-notes/model.md#message-passing).\n\
         // Ordering: Relaxed (proofs-notes/model.md#no-such-section).\n\
         // Ordering: Relaxed (proofs-notes/no-such-note.md#anything).\n"
            .to_string(),
    )];
    let notes =
        |file: &str| (file == "model.md").then(|| "# Model\n## Message passing\n".to_string());
    assert_eq!(
        dangling_references(&planted, &notes),
        vec![
            "planted.rs: proofs-notes/model.md#no-such-section (no such heading)".to_string(),
            "planted.rs: proofs-notes/no-such-note.md#anything (no such note)".to_string(),
        ]
    );
}

#[test]
fn an_ordering_comment_must_cite_a_note_within_four_lines() {
    let planted = vec![(
        "planted.rs".to_string(),
        "// Ordering: Acquire, cited on its second line\n\
         // (proofs-notes/model.md#message-passing).\n\
         x.load(Acquire);\n\
         // Ordering: Relaxed, and no reference at all.\n\
         y.load(Relaxed);\n\
         // Ordering: a long comment\n// two\n// three\n// four\n// (proofs-notes/model.md#too-late)\n\
         z.load(Relaxed);\n"
            .to_string(),
    )];
    let (seen, uncited) = ordering_comments_without_a_reference(&planted);
    assert_eq!(seen, 3);
    assert_eq!(
        uncited,
        vec!["planted.rs:4".to_string(), "planted.rs:6".to_string()]
    );
}

#[test]
fn an_atomic_operation_without_an_ordering_comment_is_reported() {
    let planted = vec![(
        "planted.rs".to_string(),
        [
            "fn justified() {",
            "    // Ordering: Relaxed (proofs-notes/model.md#message-passing).",
            "    let bottom = inner.bottom.load(Relaxed);",
            "    let top = inner.top.load(Acquire);", // shares the comment above
            "    let won = inner",
            "        .top",
            "        .compare_exchange(top, top + 1, SeqCst, Relaxed)", // same statement
            "        .is_ok();",
            "}",
            "fn unjustified() {",
            "    let buffer = inner.buffer.load(Relaxed);", // code above it
            "    // A comment that gives no ordering.",
            "    fence(SeqCst);",
            "",
            "    inner.bottom.store(1, Relaxed);", // a blank line above it
            "    let value = push_fence(at);",     // not a fence call
            "    flag.store(true, std::sync::atomic::Ordering::Relaxed);", // outside the algorithm
            "}",
        ]
        .join("\n"),
    )];
    let (seen, unjustified) = atomic_operations_without_an_ordering_comment(&planted);
    assert_eq!(seen, 6);
    assert_eq!(
        unjustified,
        vec![
            "planted.rs:11: let buffer = inner.buffer.load(Relaxed);".to_string(),
            "planted.rs:13: fence(SeqCst);".to_string(),
            "planted.rs:15: inner.bottom.store(1, Relaxed);".to_string(),
        ]
    );
}
