//! The crate's modules form layers: each module of `deque/src` names only
//! modules that `lib.rs` declares before it, so there is no import circle
//! and a reader can take the files in `lib.rs`'s order, each built on the
//! ones already read. (A child module's use of its parent, as the
//! injector's files use `Injector`, is inside one module and not counted.)
//!
//! One module is declared early on purpose, and listed here with the module
//! it builds on: `worker` holds `Worker`'s constructors, and rustdoc lists a
//! type's impl blocks in the order of the modules that hold them, so lib.rs
//! declares it before `deque` (which holds push and pop) for the
//! constructors to come first on `Worker`'s page. A reader takes it after
//! `deque`, as lib.rs says.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn source_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../deque/src")
}

/// The modules `lib.rs` declares, in its order (test-only modules left out).
fn declared_modules(lib: &str) -> Vec<String> {
    let mut modules = Vec::new();
    let mut test_only = false;
    for line in lib.lines().map(str::trim) {
        if line.starts_with("#[cfg(") && line.contains("test") {
            test_only = true;
            continue;
        }
        let declaration = line
            .strip_prefix("pub mod ")
            .or_else(|| line.strip_prefix("mod "))
            .and_then(|rest| rest.strip_suffix(';'));
        if let Some(name) = declaration {
            if !test_only {
                modules.push(name.to_string());
            }
        }
        if !line.starts_with("#[") {
            test_only = false;
        }
    }
    modules
}

/// The text of a module (its file, or its folder's files), without comments
/// and without its `#[cfg(test)]` unit tests.
fn module_code(name: &str) -> String {
    let file = source_dir().join(format!("{name}.rs"));
    let mut paths: Vec<PathBuf> = if file.exists() {
        vec![file]
    } else {
        std::fs::read_dir(source_dir().join(name))
            .unwrap_or_else(|error| panic!("deque/src/{name}: {error}"))
            .map(|entry| entry.expect("a directory entry").path())
            .filter(|path| path.file_name() != Some("tests.rs".as_ref()))
            .collect()
    };
    paths.sort();
    paths.iter().map(|path| code_of(path)).collect()
}

fn code_of(path: &Path) -> String {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
    let text = match text.find("\nmod tests {") {
        Some(at) => &text[..at],
        None => &text,
    };
    text.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .map(|line| format!("{line}\n"))
        .collect()
}

/// The modules of `declared` that `code` names as `crate::name`.
fn named_modules<'a>(code: &str, declared: &'a [String]) -> Vec<&'a str> {
    declared
        .iter()
        .filter(|module| {
            code.match_indices(&format!("crate::{module}"))
                .any(|(at, matched)| {
                    let next = code[at + matched.len()..].chars().next();
                    !next.is_some_and(|c| c.is_alphanumeric() || c == '_')
                })
        })
        .map(String::as_str)
        .collect()
}

/// (module, a module declared after it that it names): the early
/// declarations above, each one explained in lib.rs.
const DECLARED_BEFORE_WHAT_IT_BUILDS_ON: &[(&str, &str)] = &[("worker", "deque")];

#[test]
fn every_module_names_only_modules_declared_before_it() {
    let lib = std::fs::read_to_string(source_dir().join("lib.rs")).expect("deque/src/lib.rs");
    let declared = declared_modules(&lib);
    assert!(
        declared.len() >= 10,
        "lib.rs declares too few modules to be read: {declared:?}"
    );
    let mut later_ones: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut early_declarations_seen = Vec::new();
    for (position, module) in declared.iter().enumerate() {
        let code = module_code(module);
        for named in named_modules(&code, &declared) {
            let named_at = declared.iter().position(|m| m == named).expect("declared");
            if named_at >= position && named != module {
                if DECLARED_BEFORE_WHAT_IT_BUILDS_ON.contains(&(module.as_str(), named)) {
                    early_declarations_seen.push((module.as_str(), named));
                } else {
                    later_ones.entry(module).or_default().push(named);
                }
            }
        }
    }
    // An exception that no longer occurs (the module moved, or stopped
    // naming the other) comes off the list, so that the list says what
    // lib.rs does.
    assert_eq!(
        early_declarations_seen, DECLARED_BEFORE_WHAT_IT_BUILDS_ON,
        "the modules declared before a module they name are not the ones listed"
    );
    assert!(
        later_ones.is_empty(),
        "modules naming modules lib.rs declares after them (an import circle, or lib.rs out of \
         order), in lib.rs's order {declared:?}: {later_ones:?}"
    );
}
