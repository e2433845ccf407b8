//! The build script of the internal builds of the deque source
//! (`chase-lev-loom`, `chase-lev-loom-mutants`, `chase-lev-shuttle`,
//! `chase-lev-mutants`, and under model-tests/genmc/ `chase-lev-genmc` and
//! `chase-lev-genmc-mutants`): sets the cfgs that make each one a model or mutant
//! build. They are set here, for these packages only, never by a cargo
//! feature. For the mutant builds it also reads the one table of mutants,
//! `model-tests/mutants.md`, and generates from it
//! - the `Mutant` enum, `Mutant::ALL` and the names (`$OUT_DIR/mutants.rs`);
//! - the source they compile (`$OUT_DIR/src/`): `deque/src` with each logic
//!   mutant's `patch:` applied to a copy of the function it changes, and the
//!   original function calling that copy when the deque carries the mutant.
//!   The shipped source has no branch for a logic mutant; a mutant build is
//!   the shipped code plus, for one mutant at a time, one changed function.
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

// The loom mutant build's joint-relaxation mode (its own file, so that this
// one stays the builds' common part).
#[path = "joint.rs"]
mod joint;

fn main() {
    // The cfgs themselves are declared once, in the workspace's lints.
    let cfgs: &[&str] = match std::env::var("CARGO_PKG_NAME").as_deref() {
        Ok("chase-lev-loom") => &["chase_lev_loom", "chase_lev_hooks"],
        Ok("chase-lev-loom-mutants") => &["chase_lev_loom", "chase_lev_mutants", "chase_lev_hooks"],
        Ok("chase-lev-shuttle") => &["chase_lev_shuttle", "chase_lev_mutants", "chase_lev_hooks"],
        Ok("chase-lev-mutants") => &["chase_lev_mutants", "chase_lev_hooks"],
        // The builds that Miri's GenMC mode explores (model-tests/genmc/, a
        // workspace of their own).
        Ok("chase-lev-genmc") => &["chase_lev_genmc", "chase_lev_hooks"],
        Ok("chase-lev-genmc-mutants") => {
            &["chase_lev_genmc", "chase_lev_mutants", "chase_lev_hooks"]
        }
        other => panic!("model-tests/builds/build.rs used by an unexpected package: {other:?}"),
    };
    for cfg in cfgs {
        println!("cargo::rustc-cfg={cfg}");
    }
    if cfgs.contains(&"chase_lev_mutants") {
        let records = read_table();
        generate_mutant_enum(&records);
        generate_patched_source(&records);
    }
}

/// One record of the table, as far as the build needs it.
struct Record {
    name: String,
    variant: String,
    change: String,
    patches: Vec<Patch>,
    /// An ordering mutant's weakening: at each `site!(Variant, correct)`
    /// of its variant, `correct` becomes the paired text.
    weakens: Vec<(String, String)>,
}

/// A logic mutant's change to the source: in `file` (a path under
/// `deque/src`, such as `deque.rs` or `injector/mod.rs`), `find` becomes
/// `with`. A `find` written as a code span is a piece of one line, replaced
/// in place; a `find` written as a block (`find: |`) is whole lines,
/// compared without their indentation, and replaced by the lines of `with`
/// at the indentation of the first.
#[derive(Clone, Default)]
struct Patch {
    file: String,
    find: String,
    find_is_block: bool,
    with: String,
}

fn manifest_dir() -> PathBuf {
    PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
}

fn out_dir() -> PathBuf {
    PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"))
}

/// Reads `model-tests/mutants.md`: `## name` opens a record, `key: value`
/// lines follow, a value continued on lines indented by two spaces. A
/// `find:` or `with:` value is code: one span in backticks, or `|` and the
/// code on the continuation lines, kept line by line.
fn read_table() -> Vec<Record> {
    let table_path = manifest_dir().join("../../mutants.md");
    println!("cargo::rerun-if-changed={}", table_path.display());
    let table = std::fs::read_to_string(&table_path)
        .unwrap_or_else(|error| panic!("{}: {error}", table_path.display()));
    let mut records: Vec<Record> = Vec::new();
    let mut key = String::new();
    for line in table.lines() {
        if let Some(name) = line.strip_prefix("## ") {
            records.push(Record {
                name: name.trim().to_string(),
                variant: String::new(),
                change: String::new(),
                patches: Vec::new(),
                weakens: Vec::new(),
            });
            key.clear();
            continue;
        }
        let Some(record) = records.last_mut() else {
            continue; // the preamble
        };
        if line.trim().is_empty() {
            key.clear();
        } else if let Some(more) = line.strip_prefix("  ") {
            match key.as_str() {
                "change" => {
                    record.change.push(' ');
                    record.change.push_str(more.trim());
                }
                "find" | "with" => {
                    let patch = record.patches.last_mut().expect("a patch");
                    let code = if key == "find" {
                        &mut patch.find
                    } else {
                        &mut patch.with
                    };
                    if !code.is_empty() {
                        code.push('\n');
                    }
                    code.push_str(more);
                }
                _ => {}
            }
        } else if let Some((field, value)) = line.split_once(':') {
            key = field.to_string();
            let value = value.trim();
            match field {
                "variant" => record.variant = value.to_string(),
                "change" => record.change = value.to_string(),
                "weakens" => record.weakens = weakenings(&record.name, value),
                "patch" => record.patches.push(Patch {
                    file: value.to_string(),
                    ..Patch::default()
                }),
                "find" | "with" => {
                    let patch = record.patches.last_mut().unwrap_or_else(|| {
                        panic!("mutant {}: `{field}:` before its `patch:`", record.name)
                    });
                    let code = match value {
                        "|" => String::new(),
                        span => span
                            .strip_prefix('`')
                            .and_then(|span| span.strip_suffix('`'))
                            .unwrap_or_else(|| {
                                panic!(
                                    "mutant {}: `{field}:` is `|` or one `code span`",
                                    record.name
                                )
                            })
                            .to_string(),
                    };
                    if field == "find" {
                        patch.find_is_block = value == "|";
                        patch.find = code;
                    } else {
                        patch.with = code;
                    }
                }
                _ => {}
            }
        }
    }
    for record in &records {
        assert!(
            !record.variant.is_empty() && !record.change.is_empty(),
            "{}: mutant {} needs a `variant:` and a `change:` line",
            table_path.display(),
            record.name
        );
        for patch in &record.patches {
            assert!(
                !patch.find.is_empty(),
                "mutant {}: a patch of {} with nothing to find",
                record.name,
                patch.file
            );
        }
    }
    records
}

/// Writes `$OUT_DIR/mutants.rs` (included by `deque/src/policy.rs`): the
/// enum, `Mutant::ALL` and the names.
fn generate_mutant_enum(records: &[Record]) {
    let mut out = String::new();
    out.push_str(
        "/// One deliberate weakening of the algorithm, named as the fence lab and\n\
         /// the mutation matrix name it (generated from `model-tests/mutants.md`).\n\
         #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]\n\
         pub enum Mutant {\n",
    );
    for Record {
        variant, change, ..
    } in records
    {
        writeln!(
            out,
            "    #[doc = {:?}]\n    {variant},",
            capitalised(change)
        )
        .unwrap();
    }
    out.push_str(
        "}\n\nimpl Mutant {\n    /// Every mutant, in the order the matrix prints them.\n",
    );
    writeln!(out, "    pub const ALL: [Mutant; {}] = [", records.len()).unwrap();
    for Record { variant, .. } in records {
        writeln!(out, "        Mutant::{variant},").unwrap();
    }
    out.push_str(
        "    ];\n\n    /// The mutant's command-line name (`take-fence`, ...).\n    \
         pub fn name(self) -> &'static str {\n        match self {\n",
    );
    for Record { name, variant, .. } in records {
        writeln!(out, "            Mutant::{variant} => {name:?},").unwrap();
    }
    out.push_str(
        "        }\n    }\n\n    /// Looks a mutant up by its command-line name.\n    \
         pub fn from_name(name: &str) -> Option<Mutant> {\n        \
         Mutant::ALL.into_iter().find(|mutant| mutant.name() == name)\n    }\n}\n",
    );
    std::fs::write(out_dir().join("mutants.rs"), out).expect("write mutants.rs");
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect::<String>() + ".",
        None => String::new(),
    }
}

/// `text` with every `site!(..)` that rustfmt spread over several lines
/// joined into one, so that each site is a piece of one line (the mutant
/// builds' source need not be pretty).
fn sites_on_one_line(text: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut open_parens = 0i32;
    for line in text.lines() {
        if open_parens > 0 {
            let joined = out.last_mut().expect("a site's first line");
            joined.push(' ');
            joined.push_str(line.trim());
        } else {
            out.push(line.to_string());
        }
        let code = match line.find("//") {
            Some(comment) => &line[..comment],
            None => line,
        };
        if open_parens > 0 {
            open_parens += depth_change(code);
        } else if let Some(at) = code.find("site!(") {
            if !code.contains("($site:ident") {
                open_parens = depth_change(&code[at..]);
            }
        }
    }
    out.join("\n") + "\n"
}

/// The `(`s minus the `)`s of `code`.
fn depth_change(code: &str) -> i32 {
    code.chars().map(paren_step).sum()
}

/// What `c` does to the depth of parentheses.
fn paren_step(c: char) -> i32 {
    match c {
        '(' => 1,
        ')' => -1,
        _ => 0,
    }
}

/// Parses a `weakens:` value: `` `correct` to `weakened` `` pairs,
/// separated by commas (`` `()` `` for a fence removed).
fn weakenings(mutant: &str, value: &str) -> Vec<(String, String)> {
    value
        .split(", ")
        .map(|pair| {
            let spans: Vec<&str> = pair.split('`').collect();
            match spans.as_slice() {
                ["", correct, " to ", weakened, ""] => (correct.to_string(), weakened.to_string()),
                _ => {
                    panic!("mutant {mutant}: `weakens:` pairs are `correct` to `weakened`: {pair}")
                }
            }
        })
        .collect()
}

/// The ordering sites of one file: every `site!(Variant, correct)` outside
/// comments, each on one line, as (variant, site, the whole `site!(..)`
/// text, `correct`).
fn ordering_sites(file: &str, text: &str) -> Vec<(String, Site, String, String)> {
    let mut sites = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let code = match line.find("//") {
            Some(comment) => &line[..comment],
            None => line,
        };
        if code.trim_start().starts_with("macro_rules!") || code.contains("($site:ident") {
            continue;
        }
        for (at, _) in code.match_indices("site!(") {
            let open = at + "site!".len();
            let close = closing_paren(code, open).unwrap_or_else(|| {
                panic!(
                    "deque/src/{file}:{}: a `site!(` must close on its line",
                    index + 1
                )
            });
            let inside = &code[open + 1..close];
            let (variant, correct) = inside.split_once(',').unwrap_or_else(|| {
                panic!("deque/src/{file}:{}: `site!(Variant, correct)`", index + 1)
            });
            sites.push((
                variant.trim().to_string(),
                Site {
                    first: index,
                    last: index,
                    piece_at: Some(at),
                },
                code[at..=close].to_string(),
                correct.trim().to_string(),
            ));
        }
    }
    sites
}

/// Writes `$OUT_DIR/src/`: every file of `deque/src`, with the logic
/// mutants' patches applied (see the module's documentation), and a
/// `lib.rs` that `model-tests/builds/patched.rs` includes.
fn generate_patched_source(records: &[Record]) {
    let source_dir = manifest_dir().join("../../../deque/src");
    println!("cargo::rerun-if-changed={}", source_dir.display());
    let target_dir = out_dir().join("src");
    std::fs::create_dir_all(&target_dir).expect("create $OUT_DIR/src");
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    read_sources(&source_dir, "", &mut files);
    for record in records {
        for patch in &record.patches {
            assert!(
                files.contains_key(&patch.file),
                "mutant {}: a patch names {}, a file that is not in deque/src",
                record.name,
                patch.file
            );
        }
    }
    for record in records {
        assert!(
            record
                .patches
                .iter()
                .all(|patch| files.contains_key(&patch.file)),
            "mutant {}: a patch names a file that is not in deque/src",
            record.name
        );
    }
    let read_modify_write = joint::read_modify_write_sites(&files);
    let mut weakened_somewhere: Vec<&str> = Vec::new();
    for (name, text) in &mut files {
        *text = sites_on_one_line(text);
        let mut patches: Vec<Change> = records
            .iter()
            .flat_map(|record| {
                record.patches.iter().map(move |patch| Change {
                    record,
                    patch: patch.clone(),
                    site: None,
                })
            })
            .filter(|change| &change.patch.file == name)
            .collect();
        for (variant, site, whole, correct) in ordering_sites(name, text) {
            let record = records
                .iter()
                .find(|record| record.variant == variant)
                .unwrap_or_else(|| {
                    panic!(
                        "deque/src/{name}:{}: no mutant has the variant {variant}",
                        site.first + 1
                    )
                });
            // A site inside another site's `correct` counts as its own correct value.
            let plain = nested_sites_as_correct(&correct);
            let weakened = record
                .weakens
                .iter()
                .find(|(from, _)| *from == plain)
                .map(|(_, to)| to.clone())
                .unwrap_or_else(|| {
                    panic!(
                        "deque/src/{name}:{}: mutant {} has no `weakens:` pair for `{plain}`",
                        site.first + 1,
                        record.name
                    )
                });
            weakened_somewhere.push(&record.name);
            patches.push(Change {
                record,
                patch: Patch {
                    file: name.clone(),
                    find: whole,
                    find_is_block: false,
                    // Qualified: the file need not import the weaker ordering.
                    with: match weakened.as_str() {
                        "Relaxed" | "Release" | "Acquire" | "AcqRel" | "SeqCst" => {
                            format!("crate::sync::Ordering::{weakened}")
                        }
                        _ => weakened,
                    },
                },
                site: Some(site),
            });
        }
        if !patches.is_empty() {
            *text = patch_file(name, text, &patches);
        }
        if joint::enabled() {
            *text = joint::sites_as_runtime_choices(text);
        }
    }
    for record in records {
        assert!(
            record.weakens.is_empty() || weakened_somewhere.contains(&record.name.as_str()),
            "mutant {}: `weakens:` but no `site!({}, ..)` in deque/src",
            record.name,
            record.variant
        );
    }
    let modules: Vec<String> = files.keys().cloned().collect();
    let lib = files.get_mut("lib.rs").expect("deque/src/lib.rs");
    *lib = as_included_root(lib, &target_dir, &modules);
    if joint::enabled() {
        lib.push_str(&joint::module(records, &read_modify_write));
    }
    for (name, text) in &files {
        let path = target_dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).expect("create a folder of $OUT_DIR/src");
        std::fs::write(path, text).expect("write a patched source file");
    }
}

/// Reads every `.rs` file of `directory` and of its folders into `files`,
/// each under its path below `deque/src` (`prefix` is the path of
/// `directory` there, `""` or ending in `/`), such as `injector/mod.rs`.
fn read_sources(directory: &Path, prefix: &str, files: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(directory).expect("read a folder of deque/src") {
        let path = entry.expect("a file of deque/src").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            read_sources(&path, &format!("{prefix}{name}/"), files);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            files.insert(
                format!("{prefix}{name}"),
                std::fs::read_to_string(&path).expect("read a source file"),
            );
        }
    }
}

/// The crate root, made fit for `include!`: no inner attributes or inner
/// doc comments (`patched.rs` carries them), and every `mod name;` pointed
/// at the generated file (`name.rs`, or `name/mod.rs` for a module that is a
/// folder, among the paths `files`; a folder's own `mod`s then resolve
/// beside its `mod.rs`).
fn as_included_root(lib: &str, target_dir: &Path, files: &[String]) -> String {
    let mut out = String::new();
    for line in lib.lines() {
        let code = line.trim_start();
        if code.starts_with("//!") || code.starts_with("#![") {
            continue;
        }
        let module = code
            .strip_prefix("pub ")
            .unwrap_or(code)
            .strip_prefix("mod ")
            .and_then(|rest| rest.strip_suffix(';'));
        match module {
            Some(module) => {
                let file = format!("{module}.rs");
                let file = if files.contains(&file) {
                    file
                } else {
                    format!("{module}/mod.rs")
                };
                writeln!(
                    out,
                    "#[path = {:?}]\n{line}",
                    target_dir.join(file).display().to_string()
                )
            }
            None => writeln!(out, "{line}"),
        }
        .unwrap();
    }
    out
}

/// One change of a mutant build's source: a logic mutant's patch (found by
/// its text), or an ordering mutant's weakening of one site (found by the
/// scan of the `site!`s).
struct Change<'a> {
    record: &'a Record,
    patch: Patch,
    site: Option<Site>,
}

/// `correct` with every `site!(Variant, value)` in it replaced by `value`.
fn nested_sites_as_correct(correct: &str) -> String {
    let mut text = correct.to_string();
    while let Some(at) = text.find("site!(") {
        let comma = at + text[at..].find(',').expect("site!(Variant, value)");
        let close = closing_paren(&text, at + "site!".len()).expect("a closed site!");
        let value = text[comma + 1..close].trim().to_string();
        text.replace_range(at..=close, &value);
    }
    text
}

/// Where a patch applies: the lines `first..=last` of the file; for a
/// one-line `find`, the byte offset of the piece in line `first`.
#[derive(Clone)]
struct Site {
    first: usize,
    last: usize,
    piece_at: Option<usize>,
}

/// The one place in `lines` that `patch.find` matches.
fn locate(file: &str, lines: &[&str], record: &Record, patch: &Patch) -> Site {
    let wanted: Vec<&str> = patch.find.lines().map(str::trim).collect();
    let mut sites = Vec::new();
    if !patch.find_is_block {
        assert!(
            !patch.with.contains('\n'),
            "mutant {}: a one-line `find` needs a one-line `with`",
            record.name
        );
        for (index, line) in lines.iter().enumerate() {
            for (at, _) in line.match_indices(&*patch.find) {
                sites.push(Site {
                    first: index,
                    last: index,
                    piece_at: Some(at),
                });
            }
        }
    } else {
        for first in 0..lines.len().saturating_sub(wanted.len() - 1) {
            let here = &lines[first..first + wanted.len()];
            if here
                .iter()
                .map(|line| line.trim())
                .eq(wanted.iter().copied())
            {
                sites.push(Site {
                    first,
                    last: first + wanted.len() - 1,
                    piece_at: None,
                });
            }
        }
    }
    assert!(
        sites.len() == 1,
        "mutant {}: `find` must match exactly once in deque/src/{file}, matches {} times:\n{}",
        record.name,
        sites.len(),
        patch.find
    );
    sites.pop().unwrap()
}

/// The function around line `site`: the line of its `fn`, the line of the
/// `{` that opens its body, the line of the `}` that closes it (rustfmt's
/// layout: the closing brace alone, at the `fn`'s indentation).
struct Function {
    name: String,
    start: usize,
    body: usize,
    end: usize,
    /// The call that forwards the function's arguments to a copy named
    /// `{name}{suffix}`, with the suffix still to append to the name.
    arguments: String,
    /// `self.` for a method, `Self::` for an associated function that
    /// takes the policy as its `policy` argument.
    receiver: &'static str,
    returns_through_unsafe: bool,
    /// The name of its `Policy` parameter, if it has one.
    policy_argument: Option<String>,
    /// For a method of a trait impl: the header of an inherent impl of the
    /// same type, and the line that closes the trait impl.
    in_trait_impl: Option<(String, usize)>,
}

/// `code` without a leading `pub`, `pub(crate)` or `pub(super)`.
fn without_visibility(code: &str) -> &str {
    ["pub(crate) ", "pub(super) ", "pub "]
        .iter()
        .find_map(|visibility| code.strip_prefix(visibility))
        .unwrap_or(code)
}

fn indentation(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

fn enclosing_function(file: &str, lines: &[&str], site: usize, ordering: bool) -> Function {
    let fn_name = |line: &str| -> Option<String> {
        let code = without_visibility(line.trim_start());
        let code = code.strip_prefix("unsafe ").unwrap_or(code);
        let rest = code.strip_prefix("fn ")?;
        Some(
            rest.chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect(),
        )
    };
    let start = (0..=site)
        .rev()
        .find(|&index| {
            fn_name(lines[index]).is_some() && indentation(lines[index]) < indentation(lines[site])
        })
        .unwrap_or_else(|| panic!("deque/src/{file}:{}: a patch outside a function", site + 1));
    let name = fn_name(lines[start]).unwrap();
    let body = (start..lines.len())
        .find(|&index| lines[index].trim_end().ends_with('{'))
        .expect("a function body");
    let closing = format!("{}}}", " ".repeat(indentation(lines[start])));
    let end = (body..lines.len())
        .find(|&index| lines[index].trim_end() == closing)
        .expect("the end of a function");
    assert!(
        end >= site,
        "deque/src/{file}:{}: a patch outside a function",
        site + 1
    );
    let signature: String = lines[start..=body].join(" ");
    let after_name = &signature[signature.find(&format!("fn {name}")).unwrap() + 3 + name.len()..];
    let parameters = parenthesised(after_name);
    let mut arguments = Vec::new();
    let mut takes_self = false;
    for parameter in split_top_level(&parameters) {
        let parameter = parameter.trim();
        if parameter.is_empty() {
            continue;
        }
        let pattern = parameter.split(':').next().unwrap().trim();
        let pattern = pattern.strip_prefix("mut ").unwrap_or(pattern);
        if pattern.ends_with("self") {
            takes_self = true;
        } else {
            arguments.push(pattern.to_string());
        }
    }
    let policy_argument = split_top_level(&parameters).iter().find_map(|parameter| {
        let (pattern, kind) = parameter.split_once(':')?;
        (kind.trim() == "Policy").then(|| pattern.trim().to_string())
    });
    let takes_policy = arguments.iter().any(|argument| argument == "policy");
    assert!(
        ordering || takes_self || takes_policy,
        "deque/src/{file}: a logic mutant's patch must be in a method, or in an associated \
         function with a `policy` argument (fn {name} has neither): the copy is chosen by the \
         deque's policy"
    );
    Function {
        name,
        start,
        body,
        end,
        arguments: arguments.join(", "),
        receiver: if takes_self {
            "self."
        } else if indentation(lines[start]) == 0 {
            ""
        } else {
            "Self::"
        },
        returns_through_unsafe: lines[start].contains("unsafe fn"),
        policy_argument,
        in_trait_impl: trait_impl_around(lines, start),
    }
}

/// For a method of `impl<..> Trait for Type<..> {`: `impl<..> Type<..> {`
/// and the line of the `}` that closes the trait impl.
fn trait_impl_around(lines: &[&str], function_start: usize) -> Option<(String, usize)> {
    let fn_indent = indentation(lines[function_start]);
    if fn_indent == 0 {
        return None;
    }
    let header = (0..function_start).rev().find(|&index| {
        indentation(lines[index]) == fn_indent - 4 && lines[index].trim_start().starts_with("impl")
    })?;
    let code = lines[header].trim();
    let (before, type_part) = code.split_once(" for ")?;
    let generics = before.strip_prefix("impl").unwrap_or("");
    let generics = match generics.find('<') {
        Some(open) if generics.trim_start().starts_with('<') => {
            let close = generics.rfind('>').expect("closed generics");
            generics[open..=close].to_string()
        }
        _ => String::new(),
    };
    let closing = format!("{}}}", " ".repeat(fn_indent - 4));
    let end = (function_start..lines.len()).find(|&index| lines[index].trim_end() == closing)?;
    Some((format!("impl{generics} {type_part}"), end))
}

/// The text between the first `(` (after any generics) and its match.
fn parenthesised(text: &str) -> String {
    let open = text.find('(').expect("a parameter list");
    let close =
        closing_paren(text, open).unwrap_or_else(|| panic!("an unclosed parameter list: {text}"));
    text[open + 1..close].to_string()
}

/// The index of the `)` that closes the `(` at `open` in `text`, if any.
fn closing_paren(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0;
    for (offset, c) in text[open..].char_indices() {
        depth += paren_step(c);
        if depth == 0 {
            return Some(open + offset);
        }
    }
    None
}

/// Splits at the commas outside any brackets.
fn split_top_level(text: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut depth = 0i32;
    for c in text.chars() {
        match c {
            '(' | '<' | '[' => depth += 1,
            ')' | '>' | ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(String::new());
                continue;
            }
            _ => {}
        }
        parts.last_mut().unwrap().push(c);
    }
    parts
}

fn snake_case(variant: &str) -> String {
    let mut out = String::new();
    for c in variant.chars() {
        if c.is_uppercase() {
            if !out.is_empty() {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// One mutant's copy of one function: the function, the mutant, and the
/// sites of its patches there.
type FunctionCopy<'a> = (Function, &'a Record, Vec<(Site, &'a Patch)>, bool);

/// Applies one file's patches: for each (mutant, function) a copy of the
/// function with that mutant's patches, named `{name}_as_{mutant}`, placed
/// after the original; and at the top of the original's body, a call of the
/// copy when the deque's policy carries that mutant (`self.inner.policy`
/// on a worker or stealer, `self.policy` on the injector (`injector/`), the
/// registry's policy in the hazard records).
fn patch_file(file: &str, text: &str, patches: &[Change]) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let policy = match file {
        _ if file.starts_with("injector/") => "self.policy",
        // The hazard records belong to no deque: the registry's policy.
        "reclamation.rs" => "crate::policy::Policy::of_registry()",
        _ => "self.inner.policy",
    };
    // (function start, variant) -> (function, record, its sites there)
    let mut copies: BTreeMap<(usize, String), FunctionCopy> = BTreeMap::new();
    for change in patches {
        let (record, patch) = (change.record, &change.patch);
        let ordering = change.site.is_some();
        let site = match &change.site {
            Some(site) => site.clone(),
            None => locate(file, &lines, record, patch),
        };
        let function = enclosing_function(file, &lines, site.first, ordering);
        copies
            .entry((function.start, record.variant.clone()))
            .or_insert_with(|| (function, record, Vec::new(), ordering))
            .2
            .push((site, patch));
    }
    // What goes after a line of the original: dispatches after the line
    // that opens a body, copies after the line that closes it.
    let mut after: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for (function, record, sites, ordering) in copies.values() {
        let kind = if *ordering { "ordering" } else { "logic" };
        let suffix = format!("_as_{}", snake_case(&record.variant));
        let indent = " ".repeat(indentation(lines[function.start]) + 4);
        let call = format!(
            "{}{}{suffix}({})",
            function.receiver, function.name, function.arguments
        );
        // An associated function is told its policy by its argument; so is
        // any function with an ordering site that takes one (a hazard
        // record is told its steal's deque's policy).
        let policy = match &function.policy_argument {
            Some(argument) if *ordering || function.receiver == "Self::" => argument.as_str(),
            _ => policy,
        };
        let call = if function.returns_through_unsafe {
            format!("unsafe {{ {call} }}")
        } else {
            call
        };
        after.entry(function.body).or_default().push(format!(
            "{indent}if {policy}.mutant == Some(crate::policy::Mutant::{}) {{\n\
             {indent}    return {call}; // the {kind} mutant {}, model-tests/mutants.md\n\
             {indent}}}",
            record.variant, record.name
        ));
        let mut copy: Vec<String> = lines[function.start..=function.end]
            .iter()
            .map(|line| line.to_string())
            .collect();
        // The copy is private (the original is the one with the docs) and
        // carries the suffix.
        let head = without_visibility(copy[0].trim_start());
        copy[0] = format!(
            "{}{}",
            " ".repeat(indentation(lines[function.start])),
            head.replacen(
                &format!("fn {}", function.name),
                &format!("fn {}{suffix}", function.name),
                1,
            )
        );
        // Apply the sites from the last to the first, so that the earlier
        // ones keep their line numbers.
        let mut sites: Vec<&(Site, &Patch)> = sites.iter().collect();
        sites.sort_by_key(|(site, _)| std::cmp::Reverse((site.first, site.piece_at)));
        for (site, patch) in sites {
            let first = site.first - function.start;
            let last = site.last - function.start;
            match site.piece_at {
                Some(at) => {
                    let line = &copy[first];
                    copy[first] = format!(
                        "{}{}{}",
                        &line[..at],
                        patch.with,
                        &line[at + patch.find.len()..]
                    );
                }
                None => {
                    let indent = " ".repeat(indentation(&copy[first]));
                    let replacement: Vec<String> = patch
                        .with
                        .lines()
                        .map(|line| format!("{indent}{line}"))
                        .collect();
                    copy.splice(first..=last, replacement);
                }
            }
        }
        let mut block = vec![format!(
            "{}#[allow(unreachable_code, unused, clippy::all)] // the {kind} mutant {}",
            " ".repeat(indentation(lines[function.start])),
            record.name
        )];
        block.extend(copy);
        match &function.in_trait_impl {
            // A trait's impl takes no other methods: the copy goes into an
            // inherent impl of the same type after it.
            Some((inherent_header, impl_end)) => {
                let indent = " ".repeat(indentation(lines[function.start]) - 4);
                after.entry(*impl_end).or_default().push(format!(
                    "{indent}{inherent_header}\n{}\n{indent}}}",
                    block.join("\n")
                ));
            }
            None => after
                .entry(function.end)
                .or_default()
                .push(block.join("\n")),
        }
    }
    let mut out = String::new();
    for (index, line) in lines.iter().enumerate() {
        out.push_str(line);
        out.push('\n');
        for extra in after.get(&index).into_iter().flatten() {
            out.push_str(extra);
            out.push('\n');
        }
    }
    out
}
